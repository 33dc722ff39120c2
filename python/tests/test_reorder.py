"""Locality orders (gnnc.utils.locality_order, gnnc.Graph.reorder).

The reverse Cuthill-McKee order is checked against the textbook sequential
algorithm with the same tie rules; a reordered graph gives a compiled
function's results (values and gradients) in the caller's node order.
Runs on the CPU; with GNNC_TEST_DEVICE=cuda the functions run on CUDA.
"""

import os

import pytest
import torch

gnnc = pytest.importorskip("gnnc")

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)


def sequential_rcm(edge_index, n):
    """Cuthill-McKee on the undirected simple graph, reversed: components
    in the order of their smallest (degree, id) node, which starts them;
    breadth first, a node's unvisited neighbours by (degree, id)."""
    adj = [set() for _ in range(n)]
    for s, d in edge_index.t().tolist():
        if s != d:
            adj[s].add(d)
            adj[d].add(s)
    deg = [len(a) for a in adj]
    seen = [False] * n
    order = []
    for start in sorted(range(n), key=lambda v: (deg[v], v)):
        if seen[start]:
            continue
        seen[start] = True
        queue = [start]
        i = 0
        while i < len(queue):
            v = queue[i]
            i += 1
            for u in sorted((u for u in adj[v] if not seen[u]), key=lambda u: (deg[u], u)):
                seen[u] = True
                queue.append(u)
        order += queue
    return order[::-1]


def random_graph(gen, n, e):
    if n == 0:
        return torch.zeros(2, 0, dtype=torch.int64)
    # Duplicates, self-loops, isolated nodes and several components occur.
    return torch.randint(0, n, (2, e), generator=gen)


@pytest.mark.parametrize("seed", range(8))
def test_rcm_matches_the_sequential_algorithm(seed):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(25):
        n = int(torch.randint(0, 60, (1,), generator=gen))
        e = int(torch.randint(0, 2 * n + 1, (1,), generator=gen))
        ei = random_graph(gen, n, e)
        got = gnnc.utils.locality_order(ei, n, "rcm")
        assert got.tolist() == sequential_rcm(ei, n), (n, ei.tolist())


def test_rcm_of_batched_small_graphs():
    # Many components (a batch of molecules): every one contiguous.
    gen = torch.Generator().manual_seed(1)
    parts, offset, sizes = [], 0, []
    for _ in range(50):
        k = int(torch.randint(1, 9, (1,), generator=gen))
        src = torch.arange(k - 1) + offset
        parts.append(torch.stack([src, src + 1]))
        sizes.append(k)
        offset += k
    ei = torch.cat(parts, 1)
    order = gnnc.utils.locality_order(ei, offset, "rcm")
    assert order.tolist() == sequential_rcm(ei, offset)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(offset)
    assert (rank[ei[0]] - rank[ei[1]]).abs().max().item() == 1


def test_rcm_gives_a_shuffled_path_bandwidth_one():
    gen = torch.Generator().manual_seed(2)
    n = 500
    p = torch.randperm(n, generator=gen)
    ei = torch.stack([p[:-1], p[1:]])
    order = gnnc.utils.locality_order(ei, n)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(n)
    assert sorted(order.tolist()) == list(range(n))
    assert (rank[ei[0]] - rank[ei[1]]).abs().max().item() == 1


def test_degree_order_is_highest_degree_first_then_id():
    ei = torch.tensor([[0, 1, 2, 3, 3, 4, 4, 4],
                       [3, 3, 3, 0, 4, 1, 2, 4]])
    deg = torch.bincount(ei.reshape(-1), minlength=6).tolist()
    want = sorted(range(6), key=lambda v: (-deg[v], v))
    assert gnnc.utils.locality_order(ei, 6, "degree").tolist() == want


def test_orders_of_empty_graphs():
    none = torch.zeros(2, 0, dtype=torch.int64)
    for method in ("rcm", "degree"):
        assert gnnc.utils.locality_order(none, 0, method).tolist() == []
    # Isolated nodes: components of one node in id order, reversed (rcm).
    assert gnnc.utils.locality_order(none, 4, "rcm").tolist() == [3, 2, 1, 0]
    assert gnnc.utils.locality_order(none, 4, "degree").tolist() == [0, 1, 2, 3]


def test_bad_arguments_are_named():
    ei = torch.tensor([[0, 1], [1, 5]])
    with pytest.raises(ValueError, match=r"locality_order: method must be one of "
                                         r"'rcm', 'degree', got 'metis'"):
        gnnc.utils.locality_order(ei, 6, "metis")
    with pytest.raises(ValueError, match=r"node ids must lie in \[0, 4\) .*got ids from 0 to 5"):
        gnnc.utils.locality_order(ei, 4)
    with pytest.raises(ValueError, match=r"Graph.reorder: node ids must lie in \[0, 3\)"):
        gnnc.Graph(ei, 3).reorder()
    with pytest.raises(TypeError, match="edge_index must be a torch.Tensor"):
        gnnc.utils.locality_order([[0], [1]], 2)


SOURCE = """
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf64>, %w: tensor<?xf64> {gnn.domain = "edge"})
    -> (tensor<?x8xf64>, tensor<?xf64>, tensor<?x8xf64>) {
  %a = gnn.spmm sum %g, %x weights(%w : tensor<?xf64>) : tensor<?x8xf64> -> tensor<?x8xf64>
  %s = gnn.sddmm dot %g, %x, %a : tensor<?x8xf64>, tensor<?x8xf64> -> tensor<?xf64>
  %m = gnn.spmm max %g, %x : tensor<?x8xf64> -> tensor<?x8xf64>
  return %a, %s, %m : tensor<?x8xf64>, tensor<?xf64>, tensor<?x8xf64>
}
"""


@pytest.mark.parametrize("method", ["rcm", "degree", "degree,rcm", "rcm,rcm"])
@pytest.mark.parametrize("shape", [(30, 90), (12, 0), (0, 0)])
def test_reordered_graph_gives_results_in_the_callers_order(method, shape):
    # "a,b": reordered twice (the second order is of the first graph's ids:
    # the calls kept the first graph's order, silently wrong, before).
    n, e = shape
    gen = torch.Generator().manual_seed(n + e)
    ei = random_graph(gen, n, e).to(DEVICE)
    fn = gnnc.compile(SOURCE)
    g = gnnc.Graph(ei, n)
    r = g
    for m in method.split(","):
        r = r.reorder(m)
    assert r.num_nodes == n and r.num_edges == e
    assert sorted(r.node_order.tolist()) == list(range(n))
    # The same edges, in the same order, renumbered.
    assert torch.equal(r.node_order[r.edge_index], ei)
    x = torch.randn(n, 8, generator=gen, dtype=torch.float64).to(DEVICE)
    w = torch.rand(e, generator=gen, dtype=torch.float64).to(DEVICE)
    xa, wa = x.clone().requires_grad_(), w.clone().requires_grad_()
    xb, wb = x.clone().requires_grad_(), w.clone().requires_grad_()
    want = fn(g, xa, wa)
    got = fn(r, xb, wb)
    for a, b in zip(want, got):
        assert a.shape == b.shape
        torch.testing.assert_close(b, a, rtol=1e-12, atol=1e-12)
    seeds = [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(DEVICE)
             for t in want]
    torch.autograd.backward(want, seeds)
    torch.autograd.backward(got, seeds)
    torch.testing.assert_close(xb.grad, xa.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(wb.grad, wa.grad, rtol=1e-12, atol=1e-12)


def test_reordered_graph_refuses_another_node_count():
    ei = torch.tensor([[0, 1], [1, 2]], device=DEVICE)
    fn = gnnc.compile(SOURCE)
    r = gnnc.Graph(ei, 3).reorder()
    x = torch.randn(4, 8, dtype=torch.float64, device=DEVICE)
    with pytest.raises(ValueError, match=r"num_nodes=4 with a reordered graph of 3 nodes"):
        fn(r, x, torch.ones(2, dtype=torch.float64, device=DEVICE), num_nodes=4)
