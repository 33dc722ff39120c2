"""gnnc.utils: PyG's self-loop helpers, cached per input edge_index."""

import os

import pytest
import torch

gnnc = pytest.importorskip("gnnc")
pyg_utils = pytest.importorskip("torch_geometric.utils",
                                reason="torch_geometric is not installed")

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)


def _graph():
    # A self-loop (2 -> 2, 3 -> 3 twice), a duplicate, an isolated node 4.
    return torch.tensor([[0, 1, 2, 2, 3, 3, 0], [1, 2, 2, 0, 3, 3, 1]], device=DEVICE)


def test_remove_self_loops_matches_pyg():
    ei = _graph()
    ea = torch.randn(ei.size(1), 3, device=DEVICE)
    got, want = gnnc.utils.remove_self_loops(ei, ea), pyg_utils.remove_self_loops(ei, ea)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert gnnc.utils.remove_self_loops(ei)[1] is None


@pytest.mark.parametrize("fill", [None, 0.5, "tensor"])
@pytest.mark.parametrize("num_nodes", [None, 6])
def test_add_self_loops_matches_pyg(fill, num_nodes):
    ei = _graph()
    ea = torch.randn(ei.size(1), 3, device=DEVICE)
    fv = torch.tensor([1.0, 2.0, 3.0], device=DEVICE) if fill == "tensor" else fill
    got = gnnc.utils.add_self_loops(ei, ea, fill_value=fv, num_nodes=num_nodes)
    want = pyg_utils.add_self_loops(ei, ea, fill_value=fv, num_nodes=num_nodes)
    assert torch.equal(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    assert torch.equal(gnnc.utils.add_self_loops(ei, num_nodes=num_nodes)[0], want[0])


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_index_dtype_as_pyg(dtype):
    """An int32 edge_index: PyG's add_self_loops returns int64 (its loops
    are int64), remove_self_loops keeps int32; gnnc's the same."""
    ei = _graph().to(dtype)
    for name in ("add_self_loops", "remove_self_loops"):
        got = getattr(gnnc.utils, name)(ei)[0]
        want = getattr(pyg_utils, name)(ei)[0]
        assert got.dtype == want.dtype, name
        assert torch.equal(got, want)


def test_same_tensor_while_the_input_holds_its_indices():
    ei = _graph()
    a = gnnc.utils.add_self_loops(ei, num_nodes=5)[0]
    assert gnnc.utils.add_self_loops(ei, num_nodes=5)[0] is a
    # Another node count, another result.
    assert gnnc.utils.add_self_loops(ei, num_nodes=6)[0].size(1) == ei.size(1) + 6
    # The input changed in place: derived anew.
    ei[0, 0] = 4
    b = gnnc.utils.add_self_loops(ei, num_nodes=5)[0]
    assert b is not a and torch.equal(b, pyg_utils.add_self_loops(ei, num_nodes=5)[0])
    # The result written through PyTorch: derived anew, not handed out again.
    b[0, 0] = 1
    c = gnnc.utils.add_self_loops(ei, num_nodes=5)[0]
    assert c is not b and torch.equal(c, pyg_utils.add_self_loops(ei, num_nodes=5)[0])


def test_empty_graph_and_errors():
    ei = torch.zeros(2, 0, dtype=torch.long, device=DEVICE)
    assert gnnc.utils.add_self_loops(ei)[0].shape == (2, 0)
    assert torch.equal(gnnc.utils.add_self_loops(ei, num_nodes=3)[0],
                       torch.arange(3, device=DEVICE).repeat(2, 1))
    assert gnnc.utils.remove_self_loops(ei)[0].shape == (2, 0)
    with pytest.raises(ValueError, match=r"shape \[2, E\]"):
        gnnc.utils.add_self_loops(torch.zeros(3, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="int64"):
        gnnc.utils.remove_self_loops(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="one per edge"):
        gnnc.utils.add_self_loops(_graph(), torch.randn(3, 2, device=DEVICE))
    with pytest.raises(NotImplementedError, match="fill_value='mean'"):
        gnnc.utils.add_self_loops(_graph(), torch.randn(7, 2, device=DEVICE),
                                  fill_value="mean")
    with pytest.raises(ValueError, match="num_nodes"):
        gnnc.utils.add_self_loops(_graph(), num_nodes=-1)


@pytest.mark.parametrize("num_nodes", [(5, 3), [3, 6], (4, 0)], ids=["5-3", "3-6", "4-0"])
def test_add_self_loops_bipartite_num_nodes_as_pyg(num_nodes):
    """A (num_src, num_dst) num_nodes (PyG's bipartite form): loops on the
    nodes of the smaller side, edge_attr filled for them, as PyG's. gnnc
    refused it ('gnnc: num_nodes must be an int', naming no function)."""
    ei = _graph()
    ea = torch.randn(ei.size(1), 3, device=DEVICE)
    got = gnnc.utils.add_self_loops(ei, ea, fill_value=0.5, num_nodes=num_nodes)
    want = pyg_utils.add_self_loops(ei, ea, fill_value=0.5, num_nodes=num_nodes)
    assert torch.equal(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    assert torch.equal(gnnc.utils.add_self_loops(ei, num_nodes=num_nodes)[0], want[0])


def test_num_nodes_errors_name_the_function():
    """A bad num_nodes names the gnnc.utils function, as its other errors
    do (it said 'gnnc: num_nodes must be an int')."""
    ei = _graph()
    with pytest.raises(TypeError, match=r"^gnnc.utils.add_self_loops: num_nodes must be "
                                        r"an int, got str"):
        gnnc.utils.add_self_loops(ei, num_nodes="5")
    with pytest.raises(TypeError, match=r"^gnnc.utils.add_self_loops: num_nodes\[1\] "
                                        r"must be an int, got float"):
        gnnc.utils.add_self_loops(ei, num_nodes=(5, 2.5))
    with pytest.raises(ValueError, match=r"^gnnc.utils.add_self_loops: num_nodes\[0\] "
                                         r"must be in \[0, 2\^63 - 1\]"):
        gnnc.utils.add_self_loops(ei, num_nodes=(-1, 5))
    with pytest.raises(ValueError, match=r"^gnnc.utils.add_self_loops: expected num_nodes "
                                         r"as an int or a \(num_src, num_dst\) pair, got 3"):
        gnnc.utils.add_self_loops(ei, num_nodes=(5, 5, 5))
    with pytest.raises(ValueError, match=r"^gnnc.utils.add_self_loops: num_nodes must be in"):
        gnnc.utils.add_self_loops(ei, num_nodes=-1)
    with pytest.raises(TypeError, match=r"^gnnc.utils.locality_order: num_nodes must be "
                                        r"an int, got tuple"):
        gnnc.utils.locality_order(ei, num_nodes=(5, 5))


@pytest.mark.parametrize("call", ["add_then_remove", "remove_twice", "gcn_twice",
                                  "write_noticed"])
def test_pyg_edge_index_subclass(call):
    # PyG's EdgeIndex is a tensor subclass without storage of its own (its
    # data_ptr() is 0): the second call on one compared the cached copy with
    # that null pointer (a segmentation fault on the CPU).
    EdgeIndex = pytest.importorskip("torch_geometric").EdgeIndex
    plain = _graph()
    ei = EdgeIndex(plain.clone(), sparse_size=(5, 5))
    if call == "gcn_twice":
        x = torch.randn(5, 3, device=DEVICE)
        conv = pytest.importorskip("gnnc.nn").GCNConv(3, 2).to(DEVICE)
        torch.testing.assert_close(conv(x, ei), conv(x, ei))
        torch.testing.assert_close(conv(x, ei), conv(x, plain))
        return
    first = "remove_self_loops" if call == "remove_twice" else "add_self_loops"
    getattr(gnnc.utils, first)(ei)
    if call == "write_noticed":
        ei.as_tensor()[0, 0] = 4  # its indices, written behind the wrapper
        plain[0, 0] = 4
        got = gnnc.utils.add_self_loops(ei)[0]
        assert torch.equal(got, pyg_utils.add_self_loops(plain)[0])
        return
    got = gnnc.utils.remove_self_loops(ei)[0]
    assert torch.equal(got, pyg_utils.remove_self_loops(plain)[0])
