"""Layer-wise inference of gnnc.nn's models (GCN, GraphSAGE, GIN, GAT):
PyG's `BasicGNN.inference_per_layer` / `inference` over gnnc's and PyG's
`NeighborLoader`, and PyG's `trim_to_layer` in `forward`.

`inference` over a one-hop loader (`num_neighbors=[-1]`) is the full-graph
forward in eval mode (GCN: with one batch; over several, each batch's GCN
normalisation uses the degrees of its subgraph, as PyG's) and PyG's
`inference` with the same weights on the same batches; PyG's loader runs
with its sampler's draw in PyTorch (`TorchSampler`: pyg-lib and torch-sparse
are not installable here). What PyG asserts is a clear error here, and so is
a loader whose batches would put other nodes' rows in the output. PyG's
models' attributes and repr; trimming keeps the seeds' outputs and matches
PyG's trimmed forward.
"""

import warnings

import pytest
import torch
import _parity
from _parity import tol

try:
    import gnnc.nn as gnn
    from gnnc import loader as gloader
except ImportError as e:  # the native core is not built here
    pytest.skip(f"gnnc is not importable: {e}", allow_module_level=True)
pyg_models = pytest.importorskip("torch_geometric.nn.models",
                                 reason="torch_geometric is not installed")
from torch_geometric.data import Data  # noqa: E402
from torch_geometric.loader import NeighborLoader as PyGNeighborLoader  # noqa: E402
from torch_geometric.sampler import NeighborSampler, SamplerOutput  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)
# PyG's loader without pyg-lib warns at every construction.
pytestmark = pytest.mark.filterwarnings("ignore:.*pyg-lib")

IN, HID, OUT, N = 4, 6, 3, 40
F64 = torch.float64


class TorchSampler(NeighborSampler):
    """PyG's NeighborSampler with its draw (pyg-lib's or torch-sparse's) in
    PyTorch, for full neighbourhoods: hop by hop every in-neighbour of the
    frontier from PyG's own CSC (`colptr`, `row`), nodes numbered seeds
    first, then in first-occurrence order, as torch-sparse's."""

    def _sample(self, seed, seed_time=None, **kwargs):
        fanouts = self.num_neighbors.get_mapped_values()
        assert all(k == -1 for k in fanouts), "TorchSampler: full neighbourhoods only"
        colptr, row = self.colptr.tolist(), self.row.tolist()
        nodes = seed.tolist()
        local = {v: i for i, v in enumerate(nodes)}
        rows, cols, edges = [], [], []
        num_nodes, num_edges, begin = [len(nodes)], [], 0
        for _ in fanouts:
            end, first_edge = len(nodes), len(edges)
            for t in range(begin, end):
                for p in range(colptr[nodes[t]], colptr[nodes[t] + 1]):
                    if row[p] not in local:
                        local[row[p]] = len(nodes)
                        nodes.append(row[p])
                    rows.append(local[row[p]])
                    cols.append(t)
                    edges.append(p)
            num_nodes.append(len(nodes) - end)
            num_edges.append(len(edges) - first_edge)
            begin = end
        ids = lambda v: torch.tensor(v, dtype=torch.long)  # noqa: E731
        return SamplerOutput(node=ids(nodes), row=ids(rows), col=ids(cols),
                             edge=ids(edges), batch=None, num_sampled_nodes=num_nodes,
                             num_sampled_edges=num_edges)


def pyg_loader(data, num_neighbors=(-1,), **kwargs):
    num_neighbors = list(num_neighbors)
    return PyGNeighborLoader(data, num_neighbors, **kwargs,
                             neighbor_sampler=TorchSampler(data, num_neighbors))


def graph(n=N, e=160, seed=0):
    """A random directed graph (multi-edges, self-loops, isolated nodes)
    with float64 features and 2-wide edge features."""
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(n - 3, (2, e), generator=g)  # the last 3 nodes isolated
    return Data(x=torch.randn(n, IN, generator=g, dtype=F64), edge_index=ei,
                edge_attr=torch.randn(e, 2, generator=g, dtype=F64))


def make(model, args, kwargs, seed=0):
    """(gnnc model, PyG model), PyG's weights (biases, norm affines and
    running statistics drawn away from 0 and 1) in both, float64, eval."""
    torch.manual_seed(seed)
    pyg = getattr(pyg_models, model)(*args, **kwargs)
    ours = getattr(gnn, model)(*args, **kwargs)
    with torch.no_grad():
        for k, b in pyg.named_buffers():
            if k.endswith(("running_mean", "running_var")):
                b.uniform_(0.5, 1.5)
    return _parity.same_weights(ours, pyg, F64,
                                randomise=lambda name: not name.endswith("weight")
                                or ".norms." in name or name.startswith("norms."))


# (model, args, kwargs): norms whose eval-mode output is per node (so that
# inference is the full forward), act_first, jk 'last', out_channels set or
# not, GAT's heads and v2.
CONFIGS = [
    ("GraphSAGE", (IN, HID, 2), {}),
    ("GraphSAGE", (IN, HID, 3, OUT), dict(norm="batch_norm", act_first=True)),
    ("GraphSAGE", (IN, HID, 2, OUT), dict(jk="last", act="elu")),
    ("GIN", (IN, HID, 2, OUT), dict(norm="batch_norm")),
    ("GIN", (IN, HID, 3), dict(jk="last", act_first=True, norm="batch_norm")),
    ("GAT", (IN, HID, 3, OUT), dict(heads=2, norm="batch_norm")),
    ("GAT", (IN, HID, 2, OUT), dict(heads=2, v2=True, jk="last", norm="batch_norm",
                                    act_first=True)),
    ("GCN", (IN, HID, 3, OUT), {}),
    ("GCN", (IN, HID, 2), dict(act=None)),
]
# layer_norm normalises each batch as a whole (PyG's inference calls the
# norm without `batch`): PyG's answer, not the full forward's.
PYG_ONLY = [("GIN", (IN, HID, 2, OUT), dict(norm="layer_norm", jk="last")),
            ("GraphSAGE", (IN, HID, 3), dict(norm="layer_norm"))]


def config_id(config):
    model, args, kwargs = config
    return f"{model}-L{args[2]}-out{args[3] if len(args) > 3 else None}" + \
        "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("config", CONFIGS, ids=[config_id(c) for c in CONFIGS])
def test_inference_is_the_full_forward(config):
    model, args, kwargs = config
    ours, _ = make(model, args, kwargs)
    data = graph()
    want = ours(data.x, data.edge_index)
    # GCN normalises by the batch's subgraph's degrees: one batch of all.
    batch_size = N if model == "GCN" else 7
    for loader in (gloader.NeighborLoader(data, [-1], batch_size=batch_size),
                   pyg_loader(data, batch_size=batch_size)):
        for cache in (False, True):
            out = ours.inference(loader, cache=cache)
            assert out.shape == want.shape and out.dtype == F64
            torch.testing.assert_close(out, want, **tol(F64))
    assert want.abs().sum() > 0


@pytest.mark.parametrize("config", CONFIGS + PYG_ONLY,
                         ids=[config_id(c) for c in CONFIGS + PYG_ONLY])
def test_inference_matches_pygs(config):
    """On the same batches (PyG's loader), layer by layer and as a whole;
    over gnnc's loader (the same subgraphs, other local ids) the same."""
    model, args, kwargs = config
    ours, pyg = make(model, args, kwargs)
    data = graph()
    loader = pyg_loader(data, batch_size=9)
    want = pyg.inference(loader)
    torch.testing.assert_close(ours.inference(loader), want, **tol(F64))
    torch.testing.assert_close(
        ours.inference(gloader.NeighborLoader(data, [-1], batch_size=9)), want, **tol(F64))
    if model == "GCN":  # several batches: not the full forward, as in PyG
        assert not torch.allclose(want, pyg(data.x, data.edge_index))
    x = data.x
    for layer in range(args[2]):
        for batch in loader:
            a = ours.inference_per_layer(layer, x[batch.n_id], batch.edge_index,
                                         batch.batch_size)
            b = pyg.inference_per_layer(layer, x[batch.n_id], batch.edge_index,
                                        batch.batch_size)
            assert a.shape == b.shape and not a.requires_grad
            torch.testing.assert_close(a, b, **tol(F64))
        x = pyg.inference_per_layer(layer, x, data.edge_index, N)


def test_inference_options():
    """device / embedding_device / progress_bar as PyG's; cache samples
    once (a loader iteration for the first layer only)."""
    ours, _ = make("GraphSAGE", (IN, HID, 3, OUT), dict(norm="batch_norm"))
    data = graph()
    want = ours(data.x, data.edge_index)
    loader = gloader.NeighborLoader(data, [-1], batch_size=8)
    iterations = []
    plain_iter = gloader.NeighborLoader.__iter__

    def counted(self):
        iterations.append(1)
        return plain_iter(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(gloader.NeighborLoader, "__iter__", counted)
        for cache, expected in ((False, 3), (True, 1)):
            iterations.clear()
            out = ours.inference(loader, device="cpu", embedding_device="cpu",
                                 progress_bar=True, cache=cache)
            torch.testing.assert_close(out, want, **tol(F64))
            assert len(iterations) == expected


def test_inference_over_batches_without_pyg_data(monkeypatch):
    """gnnc's loader without PyG makes plain batches (attributes only)."""
    monkeypatch.setattr(gloader, "_make_batch",
                        lambda attrs, n, data=None: gloader._Batch(num_nodes=n, **attrs))
    ours, _ = make("GAT", (IN, HID, 2, OUT), dict(heads=2))
    data = graph()
    loader = gloader.NeighborLoader(data, [-1], batch_size=6)
    assert not isinstance(next(iter(loader)), Data)
    torch.testing.assert_close(ours.inference(loader), ours(data.x, data.edge_index),
                               **tol(F64))


@pytest.mark.parametrize("model", ["GCN", "GraphSAGE", "GIN", "GAT"])
def test_inference_errors(model):
    data = graph()
    ok = dict(batch_size=8)
    ours, _ = make(model, (IN, HID, 2, OUT), {})
    if model != "GCN":
        for jk in ("cat", "max", "lstm"):
            jk_model, _ = make(model, (IN, HID, 2, OUT), dict(jk=jk))
            with pytest.raises(ValueError, match=f"expects jk None or 'last'.*jk='{jk}'"):
                jk_model.inference(gloader.NeighborLoader(data, [-1], **ok))
    bad = {
        "one hop.*num_neighbors=\\[-1, -1\\]": dict(num_neighbors=[-1, -1]),
        "shuffle=False": dict(shuffle=True),
        "seeds are every node.*20 seeds for 40 nodes": dict(input_nodes=torch.arange(20)),
        "nodes in order 0, 1, ..., 39": dict(input_nodes=torch.arange(N).flip(0)),
        "drop_last=True with 40 nodes in batches of 16": dict(drop_last=True,
                                                              batch_size=16),
    }
    for match, kw in bad.items():
        kw = dict(ok, **kw)
        hops = kw.pop("num_neighbors", [-1])
        for loader in (gloader.NeighborLoader(data, hops, **kw),
                       pyg_loader(data, hops, **kw)):
            with pytest.raises(ValueError, match=match):
                ours.inference(loader)
    with pytest.raises(ValueError, match="rank 1's share of 2"):
        ours.inference(gloader.NeighborLoader(data, [-1], num_replicas=2, rank=1, **ok))
    no_x = Data(edge_index=data.edge_index, num_nodes=N)
    with pytest.raises(ValueError, match="node features x, got NoneType"):
        ours.inference(gloader.NeighborLoader(no_x, [-1], **ok))
    with pytest.raises(TypeError, match="expects a NeighborLoader.*got list"):
        ours.inference(list(gloader.NeighborLoader(data, [-1], **ok)))
    ours.train()
    with pytest.raises(RuntimeError, match="eval mode.*training mode"):
        ours.inference(gloader.NeighborLoader(data, [-1], **ok))
    with pytest.raises(IndexError, match="layer must be an int in \\[0, 2\\), got -1"):
        ours.inference_per_layer(-1, data.x, data.edge_index, N)


# --------------------------------------------------------------------------
# PyG's BasicGNN interface.


@pytest.mark.parametrize("model,kwargs", [("GCN", {}), ("GraphSAGE", dict(norm="layer_norm")),
                                          ("GIN", {}), ("GAT", dict(jk="last"))])
def test_attributes_and_repr_are_pygs(model, kwargs):
    for out in (None, OUT):
        ours, pyg = make(model, (IN, HID, 3, out), kwargs)
        assert repr(ours) == repr(pyg)
        for name in ("in_channels", "hidden_channels", "out_channels", "num_layers",
                     "supports_edge_weight", "supports_edge_attr", "supports_norm_batch",
                     "jk_mode", "act_first", "norm", "norm_kwargs"):
            assert getattr(ours, name) == getattr(pyg, name), name
        assert len(ours.norms) == len(pyg.norms)


# --------------------------------------------------------------------------
# trim_to_layer.


@pytest.mark.parametrize("model,kwargs", [("GraphSAGE", dict(norm="batch_norm")),
                                          ("GIN", dict(jk="last")),
                                          ("GAT", dict(heads=2, edge_dim=2))])
def test_trimmed_forward_keeps_the_seeds_outputs(model, kwargs):
    ours, pyg = make(model, (IN, HID, 3, OUT), kwargs)
    data = graph()
    loader = gloader.NeighborLoader(data, [3, 2, 2], batch_size=5,
                                    generator=torch.Generator().manual_seed(0))
    for batch in loader:
        args = (batch.x, batch.edge_index)
        kw = dict(edge_attr=batch.edge_attr)
        trim = dict(num_sampled_nodes_per_hop=batch.num_sampled_nodes,
                    num_sampled_edges_per_hop=batch.num_sampled_edges)
        out = ours(*args, **kw, **trim)
        assert out.size(0) == batch.num_nodes - sum(batch.num_sampled_nodes[-2:])
        torch.testing.assert_close(out, pyg(*args, **kw, **trim), **tol(F64))
        b = batch.batch_size
        torch.testing.assert_close(out[:b], ours(*args, **kw)[:b], **tol(F64))


def test_trim_arguments_checked():
    ours, _ = make("GAT", (IN, HID, 3, OUT), dict(edge_dim=2))
    data = graph()
    batch = next(iter(gloader.NeighborLoader(data, [3, 2], batch_size=5)))
    nodes, edges = batch.num_sampled_nodes, batch.num_sampled_edges
    args = (batch.x, batch.edge_index)
    with pytest.raises(ValueError, match="'num_sampled_edges_per_hop' needs to be given"):
        ours(*args, num_sampled_nodes_per_hop=nodes)
    with pytest.raises(ValueError, match="'num_sampled_nodes_per_hop' needs to be given"):
        ours(*args, num_sampled_edges_per_hop=edges)
    with pytest.raises(ValueError, match=f"add up to {sum(nodes) + 1} nodes"):
        ours(*args, num_sampled_nodes_per_hop=nodes[:-1] + [nodes[-1] + 1],
             num_sampled_edges_per_hop=edges)
    with pytest.raises(ValueError, match="at least num_layers - 1 = 2"):
        ours(*args, num_sampled_nodes_per_hop=[batch.num_nodes],
             num_sampled_edges_per_hop=edges)
    with pytest.raises(TypeError, match="list of ints"):
        ours(*args, num_sampled_nodes_per_hop=torch.tensor(nodes),
             num_sampled_edges_per_hop=edges)
    with pytest.raises(NotImplementedError, match="both 'edge_weight' and 'edge_attr'"):
        ours(*args, edge_weight=torch.ones(batch.edge_index.size(1)),
             edge_attr=batch.edge_attr, num_sampled_nodes_per_hop=nodes,
             num_sampled_edges_per_hop=edges)
