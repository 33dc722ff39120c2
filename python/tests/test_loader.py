"""gnnc.loader.NeighborLoader: sampling semantics checked against a plain
Python reading of each batch (fan-outs, in-neighbours only, no duplicates
without replacement, relabelling in first-occurrence order), uniformity of
the sampled neighbours (chi-square under a fixed seed), the sample_hop
operator (CPU and CUDA draw alike), reproducibility, argument errors, a batch through gnnc.nn's
SAGEConv against PyG's, and a 2-process DDP run on CPU (gloo)."""

import os
import tempfile

import numpy as np
import pytest
import torch

gnnc = pytest.importorskip("gnnc")
from gnnc.loader import NeighborLoader  # noqa: E402

Data = pytest.importorskip("torch_geometric.data").Data

# 99.9% quantiles of chi-square (dof -> value): a uniform sampler fails one
# check in a thousand seeds; the seeds are fixed.
CHI2_999 = {1: 10.83, 3: 16.27, 5: 20.52, 9: 27.88, 14: 36.12, 19: 43.82, 99: 148.2}


class Plain:
    """A data object that is not a PyG Data."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def random_graph(n=40, e=300, f=5, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(n, (2, e), generator=g)
    return Data(x=torch.randn(n, f, generator=g), y=torch.randint(3, (n,), generator=g),
                edge_index=ei).to(device)


def in_neighbours(edge_index, v):
    """Edge ids of v's in-edges, in edge order."""
    return (edge_index[1] == v).nonzero().view(-1).tolist()


def check_batch(batch, data, seeds, num_neighbors, replace=False):
    """The batch against a plain Python reading of the semantics; returns
    the per-hop frontier lists (global ids)."""
    ei = data.edge_index.cpu()
    n_id = batch.n_id.cpu().tolist()
    e_id = batch.e_id.cpu().tolist()
    local = batch.edge_index.cpu()
    assert batch.batch_size == len(seeds)
    assert n_id[:len(seeds)] == list(seeds)
    assert len(batch.num_sampled_nodes) == len(num_neighbors) + 1
    assert len(batch.num_sampled_edges) == len(num_neighbors)
    assert sum(batch.num_sampled_nodes) == len(n_id) == batch.num_nodes
    assert sum(batch.num_sampled_edges) == local.size(1) == len(e_id)
    # Every local edge is the original edge e_id, neighbour -> frontier node.
    assert torch.equal(batch.n_id.cpu()[local], ei[:, e_id])
    # Hop by hop: each frontier node's in-edges, then the new nodes.
    seen = {}
    for i, s in enumerate(seeds):
        seen.setdefault(s, i)
    frontier_local = list(range(len(seeds)))
    start_e, start_n, frontiers = 0, len(seeds), []
    for hop, k in enumerate(num_neighbors):
        count = batch.num_sampled_edges[hop]
        cols = local[1, start_e:start_e + count].tolist()
        eids = e_id[start_e:start_e + count]
        frontiers.append([n_id[v] for v in frontier_local])
        for v in frontier_local:
            mine = [e for c, e in zip(cols, eids) if c == v]
            real = in_neighbours(ei, n_id[v])
            assert set(mine) <= set(real)
            if k == -1:
                assert sorted(mine) == sorted(real)
            elif replace:
                assert len(mine) == (k if real else 0)
            else:
                assert len(mine) == min(k, len(real))
                assert len(set(mine)) == len(mine), "a neighbour sampled twice"
        assert set(cols) <= set(frontier_local)
        # Relabelling: new nodes in first-occurrence order, after those seen.
        new = []
        for e in eids:
            u = int(ei[0, e])
            if u not in seen:
                seen[u] = start_n + len(new)
                new.append(u)
        assert n_id[start_n:start_n + len(new)] == new
        assert batch.num_sampled_nodes[hop + 1] == len(new)
        rows = local[0, start_e:start_e + count].tolist()
        assert rows == [seen[int(ei[0, e])] for e in eids]
        frontier_local = list(range(start_n, start_n + len(new)))
        start_e += count
        start_n += len(new)
    return frontiers


@pytest.mark.parametrize("num_neighbors", [[3, 2], [-1], [2, -1, 1], [0, 3], [40, 5], []])
@pytest.mark.parametrize("replace", [False, True])
def test_semantics_random_graph(num_neighbors, replace):
    data = random_graph()
    loader = NeighborLoader(data, num_neighbors, batch_size=7, replace=replace,
                            generator=torch.Generator().manual_seed(1))
    batches = list(loader)
    assert len(batches) == len(loader) == 6
    for i, batch in enumerate(batches):
        seeds = list(range(7 * i, min(7 * i + 7, 40)))
        check_batch(batch, data, seeds, num_neighbors, replace)
        assert torch.equal(batch.x, data.x[batch.n_id])
        assert torch.equal(batch.y, data.y[batch.n_id])
        assert torch.equal(batch.input_id, torch.tensor(seeds))


def test_dense_neighbourhoods_and_multi_edges():
    # Every node has ~60 in-edges, parallel edges included.
    data = random_graph(n=30, e=1800, seed=3)
    for nn in ([40, 35], [5, 3], [33]):
        loader = NeighborLoader(data, nn, batch_size=4, shuffle=True,
                                generator=torch.Generator().manual_seed(2))
        for batch in loader:
            check_batch(batch, data, batch.n_id[:batch.batch_size].tolist(), nn)


def test_isolated_nodes_and_hub():
    # Node 0: a hub with 500 in-edges from 1..500; 501..509 have no in-edges.
    n = 510
    ei = torch.stack([torch.arange(1, 501), torch.zeros(500, dtype=torch.long)])
    data = Data(x=torch.randn(n, 2), edge_index=ei)
    loader = NeighborLoader(data, [5, 5], batch_size=4,
                            input_nodes=torch.tensor([0, 501, 502, 503]))
    (batch,) = list(loader)
    check_batch(batch, data, [0, 501, 502, 503], [5, 5])
    assert batch.num_sampled_edges == [5, 0]
    assert batch.num_sampled_nodes == [4, 5, 0]
    assert len(set(batch.n_id[4:].tolist())) == 5


def test_directed_in_neighbours_only():
    # 0 -> 1 -> 2: node 0 has no in-neighbour; 2's 2-hop is 1 then 0.
    data = Plain(x=torch.randn(3, 2), edge_index=torch.tensor([[0, 1], [1, 2]]))
    loader = NeighborLoader(data, [-1, -1], batch_size=1)
    b0, b1, b2 = list(loader)
    assert b0.n_id.tolist() == [0] and b0.edge_index.size(1) == 0
    assert b1.n_id.tolist() == [1, 0] and b1.edge_index.tolist() == [[1], [0]]
    assert b2.n_id.tolist() == [2, 1, 0]
    assert b2.edge_index.tolist() == [[1, 2], [0, 1]]
    assert b2.e_id.tolist() == [1, 0]
    assert b2.num_sampled_nodes == [1, 1, 1]


def test_seeds_keep_positions_and_duplicates():
    # A seed that is also a neighbour keeps its position; a seed given twice
    # keeps both (other nodes refer to the first).
    data = Plain(x=torch.randn(4, 2),
                 edge_index=torch.tensor([[1, 2, 3, 0], [0, 0, 1, 3]]))
    loader = NeighborLoader(data, [-1], batch_size=4, input_nodes=torch.tensor([0, 1, 1, 3]))
    (batch,) = list(loader)
    assert batch.n_id.tolist() == [0, 1, 1, 3, 2]
    assert batch.edge_index.tolist() == [[1, 4, 3, 3, 0], [0, 0, 1, 2, 3]]
    assert batch.x.shape == (5, 2)


def chi2(counts, expected):
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("deg,k", [(10, 3), (20, 19), (100, 40)])
def test_every_neighbour_equally_likely(deg, k):
    # 2000 copies of one seed in a batch: 2000 independent draws.
    ei = torch.stack([torch.arange(1, deg + 1), torch.zeros(deg, dtype=torch.long)])
    data = Plain(x=torch.zeros(deg + 1, 1), edge_index=ei)
    loader = NeighborLoader(data, [k], batch_size=2000,
                            input_nodes=torch.zeros(2000, dtype=torch.long),
                            generator=torch.Generator().manual_seed(deg))
    (batch,) = list(loader)
    assert batch.num_sampled_edges == [2000 * k]
    e = batch.e_id.view(2000, k)
    assert (e.sort(1).values.diff(1) > 0).all(), "a neighbour sampled twice"
    counts = torch.bincount(batch.e_id, minlength=deg).double()
    assert chi2(counts, 2000 * k / deg) < CHI2_999[deg - 1]


def test_every_subset_equally_likely():
    # 2 of 4: the 6 pairs, 6000 draws (6000 frontier copies of one node).
    indptr = torch.tensor([0, 4])
    pos, owner = torch.ops.gnnc.sample_hop(indptr, torch.zeros(6000, dtype=torch.long), 2,
                                           False, torch.tensor([5]))
    assert torch.equal(owner, torch.arange(6000).repeat_interleave(2))
    chosen = pos.view(6000, 2)
    assert ((chosen >= 0) & (chosen < 4)).all() and (chosen[:, 0] != chosen[:, 1]).all()
    pair = chosen.min(1).values * 4 + chosen.max(1).values
    counts = torch.bincount(pair, minlength=16)[[1, 2, 3, 6, 7, 11]].double()
    assert counts.sum() == 6000
    assert chi2(counts, 1000.0) < CHI2_999[5]


def test_with_replacement_draws_uniformly():
    ei = torch.stack([torch.arange(1, 5), torch.zeros(4, dtype=torch.long)])
    data = Plain(x=torch.zeros(5, 1), edge_index=ei)
    loader = NeighborLoader(data, [6], replace=True, batch_size=1000,
                            input_nodes=torch.zeros(1000, dtype=torch.long),
                            generator=torch.Generator().manual_seed(7))
    (batch,) = list(loader)
    e = batch.e_id.view(1000, 6)
    assert (e.sort(1).values.diff(1) == 0).any(1).all()  # 6 draws of 4: repeats
    counts = torch.bincount(batch.e_id, minlength=4).double()
    assert chi2(counts, 1500.0) < CHI2_999[3]


def test_reproducible_with_generator_and_global_rng():
    data = random_graph()

    def run(**kw):
        loader = NeighborLoader(data, [4, 3], batch_size=9, shuffle=True, **kw)
        return [(b.n_id, b.e_id, b.edge_index) for b in loader]

    def same(a, b):
        return all(torch.equal(x, y) for p, q in zip(a, b) for x, y in zip(p, q))

    a = run(generator=torch.Generator().manual_seed(3))
    b = run(generator=torch.Generator().manual_seed(3))
    c = run(generator=torch.Generator().manual_seed(4))
    assert same(a, b) and not same(a, c)
    torch.manual_seed(11)
    d = run()
    torch.manual_seed(11)
    assert same(d, run())
    # Shuffled: every node a seed exactly once.
    seeds = torch.cat([n_id[:9] for n_id, _, _ in a])[:40]
    assert sorted(seeds.tolist()) == list(range(40))


def _batches(loader):
    return [(b.n_id, b.e_id, b.edge_index, b.x) for b in loader]


def _same(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for p, q in zip(a, b)
                                    for x, y in zip(p, q))


def _loader_threads():
    import threading
    return [t for t in threading.enumerate() if t.name == "gnnc.loader"]


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_samples_as_the_loader_does(how):
    # copy.deepcopy and pickle failed (a threading.Lock); PyG's loaders
    # allow both. A copy taken before iterating gives the same batches
    # from the same generator state, and both keep working.
    import copy
    import pickle
    loader = NeighborLoader(random_graph(), [4, 3], batch_size=9, shuffle=True,
                            generator=torch.Generator().manual_seed(5))
    twin = copy.deepcopy(loader) if how == "deepcopy" else \
        pickle.loads(pickle.dumps(loader))
    assert twin.data is not loader.data and twin._lock is not loader._lock
    assert _same(_batches(loader), _batches(twin))
    assert _same(_batches(loader), _batches(twin))  # a second epoch as well
    twin.sample(torch.tensor([1, 2]))


@pytest.mark.parametrize("prefetch", [1, 3])
def test_prefetch_gives_the_same_batches(prefetch):
    data = random_graph(n=200, e=3000)

    def run(p, draws_between=False, **kw):
        loader = NeighborLoader(data, [4, 3], batch_size=9, shuffle=True, prefetch=p, **kw)
        out = []
        for b in loader:
            out.append((b.n_id, b.e_id, b.edge_index, b.x))
            if draws_between:  # what dropout does between batches
                torch.rand(100)
        return out

    want = run(0, generator=torch.Generator().manual_seed(5))
    assert len(want) == 23
    assert _same(run(prefetch, generator=torch.Generator().manual_seed(5)), want)
    # The global RNG: the batches depend on its state when the iteration
    # starts only, not on the training loop's draws while the loader samples
    # ahead of it.
    torch.manual_seed(12)
    plain = run(0)
    torch.manual_seed(12)
    assert _same(run(prefetch, draws_between=True), plain)
    torch.manual_seed(12)
    assert _same(run(0, draws_between=True), plain)
    assert not _loader_threads()


def test_prefetch_thread_stops_and_errors_reach_the_loop():
    data = random_graph(n=200, e=3000)
    loader = NeighborLoader(data, [4, 3], batch_size=9, prefetch=2,
                            generator=torch.Generator().manual_seed(1))
    want = _batches(NeighborLoader(data, [4, 3], batch_size=9, prefetch=0,
                                   generator=torch.Generator().manual_seed(1)))
    it = iter(loader)
    next(it)
    assert len(_loader_threads()) == 1
    it.close()  # what `break` does
    assert not _loader_threads()
    # An iterator never closed: stopped when the interpreter exits.
    import gnnc.loader
    it = iter(loader)
    next(it)
    assert len(_loader_threads()) == 1 and len(gnnc.loader._LIVE) == 1
    gnnc.loader._stop_live_threads()
    assert not _loader_threads()
    it.close()
    assert not gnnc.loader._LIVE
    # An error while sampling batch 3 ahead: raised where the loop asks for
    # batch 3, with the batches before it intact; the scratch maps are clean
    # and the thread is gone.
    loader = NeighborLoader(data, [4, 3], batch_size=9, prefetch=2,
                            generator=torch.Generator().manual_seed(1))
    relabel, calls = loader._relabel, []

    def failing(*a):
        calls.append(1)
        if len(calls) == 7:  # two hops per batch: batch 3's first hop
            raise MemoryError("sampling failed")
        return relabel(*a)

    loader._relabel = failing
    got = []
    with pytest.raises(MemoryError, match="sampling failed"):
        for b in loader:
            got.append((b.n_id, b.e_id, b.edge_index, b.x))
    assert _same(got, want[:3])
    assert not _loader_threads()
    loader._relabel = relabel
    assert (loader._local == -1).all() and (loader._first == torch.iinfo(torch.long).max).all()
    # The next iteration: the second one of the same seed.
    again = NeighborLoader(data, [4, 3], batch_size=9, prefetch=0,
                           generator=torch.Generator().manual_seed(1))
    assert _same(_batches(again), want)
    assert _same(_batches(loader), _batches(again))


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _trimmed(convs, x, edge_index, nodes, edges, bipartite):
    """A 2-layer model on a batch, each layer only where the next reads:
    bipartite layers (train_ddp.py's --trim) or PyG trim_to_layer's graphs
    (homogeneous prefixes)."""
    hops = len(convs)
    for i, conv in enumerate(convs):
        nd, ne = sum(nodes[:hops - i]), sum(edges[:hops - i])
        if bipartite:
            x = conv((x, x[:nd]), edge_index[:, :ne], size=(x.size(0), nd))
        else:
            n = sum(nodes[:hops - i + 1])
            x = conv(x[:n], edge_index[:, :ne])
            x = x[:nd] if i + 1 == hops else x
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("model", ["whole", "bipartite", "prefixes"])
def test_prefetch_builds_the_graphs_the_model_asks_for_ahead(device, model, monkeypatch):
    import threading
    import gnnc.nn
    from gnnc import _core
    # Graphs built on the training loop's thread, by the tensor they were
    # built from (its base for a view).
    here, build = [], _core._GraphCache._build

    def spy(self, t, num_nodes):
        if threading.current_thread() is threading.main_thread():
            here.append(id(t if t._base is None else t._base))
        return build(self, t, num_nodes)

    monkeypatch.setattr(_core._GraphCache, "_build", spy)
    torch.manual_seed(0)
    data = random_graph(n=500, e=8000, f=8)
    convs = [gnnc.nn.SAGEConv(8, 6).to(device), gnnc.nn.SAGEConv(6, 3).to(device)]
    gen = torch.Generator(device).manual_seed(3)
    loader = NeighborLoader(data, [5, 10], batch_size=32, device=device, prefetch=1,
                            generator=gen)
    asked = 1 if model == "whole" else 2  # graphs the model asks of a batch

    def run(b, ei):
        if model == "whole":
            return convs[1](convs[0](b.x, ei).relu(), ei)
        args = (b.num_sampled_nodes, b.num_sampled_edges, model == "bipartite")
        return _trimmed(convs, b.x, ei, *args)[:b.batch_size]

    ahead = []
    for b in loader:
        ei = b.edge_index
        watched = _core._LOADER_BATCHES.get(id(ei))
        built = 0 if watched is None else len(watched.built)
        ahead.append(built == asked)
        here.clear()
        out = run(b, ei)
        # Built here: the batch's graphs that were not built ahead.
        assert here.count(id(ei)) == asked - built
        # The same layers on a copy of the indices: graphs built here.
        torch.testing.assert_close(out, run(b, ei.clone()))
    # The first batch's requests tell the loader; at most the two batches
    # made meanwhile were not built ahead, every later one was.
    assert len(ahead) == 16 and not ahead[0] and all(ahead[3:]), ahead
    assert loader._forms == ({(2, False)} if model == "whole" else
                             {(2, True), (1, True)} if model == "bipartite" else
                             {(2, False), (1, False)})

    def built_ahead():
        it = iter(loader)
        for _ in range(4):
            b = next(it)
        it.close()
        assert len(_core._LOADER_BATCHES[id(b.edge_index)].built) == asked
        return b, b.edge_index, b.num_sampled_edges[0]

    # A batch written in place (its version counter moves) is built anew
    # from what it holds now, not taken from what was built ahead. (Hop 1's
    # sources, permuted: in every layer's range.)
    b, ei, first = built_ahead()
    ei[0, :first] = ei[0, :first].flip(0)
    torch.testing.assert_close(run(b, ei), run(b, ei.clone()))
    if device == "cpu":
        # Behind the version counter: on the CPU the contents are compared
        # before a graph built ahead is taken (CUDA: the test below).
        b, ei, first = built_ahead()
        version = ei._version
        ei.data[0, :first] = ei[0, :first].flip(0)
        assert ei._version == version
        torch.testing.assert_close(run(b, ei), run(b, ei.clone()))
    del b, ei
    assert not _loader_threads()


@pytest.mark.parametrize("device", DEVICES)
def test_batches_built_ahead_are_freed(device):
    # The loader's table of batches whose graphs its thread builds ahead is
    # keyed by the batch and must not keep it: it held each prebuilt
    # graph's view, and the view its batch's edge_index, so every batch of
    # every epoch stayed alive with its graphs (host and device memory
    # growing per epoch with prefetch, the default on CUDA).
    import gc
    import weakref
    import gnnc.nn
    from gnnc import _core
    torch.manual_seed(0)
    data = random_graph(n=500, e=8000, f=8)
    conv = gnnc.nn.SAGEConv(8, 4).to(device)
    loader = NeighborLoader(data, [5], batch_size=64, device=device, prefetch=1,
                            generator=torch.Generator(device).manual_seed(3))
    refs, hits = [], 0
    for _ in range(2):
        for b in loader:
            watched = _core._LOADER_BATCHES.get(id(b.edge_index))
            hits += watched is not None and len(watched.built) == 1
            with torch.no_grad():
                conv(b.x, b.edge_index)
            refs.append(weakref.ref(b.edge_index))
        del b, watched
        gc.collect()
        # On CUDA the last graph compare is deferred to the thread's next
        # gnnc op and holds the last batch's edge_index until then
        # (_core._PENDING): one batch, not every batch.
        pending = getattr(_core._PENDING, "held", (None,))[0]
        alive = [r() for r in refs if r() is not None]
        assert all(t is pending for t in alive), len(alive)
        assert all(k == id(pending) for k in _core._LOADER_BATCHES)
        del alive, pending
    # (and the graphs were built ahead: the table did its work)
    assert hits >= len(refs) - 4, (hits, len(refs))
    del loader
    assert not _loader_threads()


def test_change_check_spans_of_a_column_prefix():
    # What the device-side change check compares for trim_to_layer's views
    # of a batch's edge_index: each row's run, or nothing it cannot read.
    from gnnc import _core
    ei = torch.arange(20).view(2, 10)
    c = torch.empty(2, 4, dtype=torch.long)
    view = ei[:, :4]
    assert _core._byte_spans(c, view) == [
        (c.data_ptr(), ei.data_ptr(), 32), (c.data_ptr() + 32, ei.data_ptr() + 80, 32)]
    copy = ei.clone()
    assert _core._byte_spans(copy, ei) == [(copy.data_ptr(), ei.data_ptr(), 160)]
    odd = ei.int()[:, :3]  # row 1 starts 12 bytes past a word
    assert _core._byte_spans(torch.empty(2, 3, dtype=torch.int32), odd) is None
    assert _core._byte_spans(c, ei[:, :8:2]) is None  # rows not contiguous


def test_prefetch_argument():
    data = random_graph()
    assert NeighborLoader(data, [2]).prefetch == 0  # the CPU's default
    assert "prefetch=2" in repr(NeighborLoader(data, [2], prefetch=2))
    with pytest.raises(ValueError, match="prefetch must be >= 0, got -1"):
        NeighborLoader(data, [2], prefetch=-1)
    for bad in (True, 1.0, "1"):
        with pytest.raises(TypeError, match="prefetch must be an int"):
            NeighborLoader(data, [2], prefetch=bad)


def test_input_nodes_mask_and_index():
    data = random_graph()
    mask = torch.zeros(40, dtype=torch.bool)
    mask[[3, 8, 9, 30]] = True
    by_mask = list(NeighborLoader(data, [2], batch_size=3, input_nodes=mask))
    assert [b.n_id[:b.batch_size].tolist() for b in by_mask] == [[3, 8, 9], [30]]
    # A mask's input_id is PyG's: the node ids of its true entries.
    assert [b.input_id.tolist() for b in by_mask] == [[3, 8, 9], [30]]
    # Ids (or a mask) as a list or a numpy array, as PyG takes them.
    for given in ([3, 8, 9, 30], np.array([3, 8, 9, 30]), mask.tolist(), mask.numpy()):
        got = list(NeighborLoader(data, [2], batch_size=3, input_nodes=given))
        assert [b.n_id[:b.batch_size].tolist() for b in got] == [[3, 8, 9], [30]]
    with pytest.raises(TypeError, match="input_nodes as a list"):
        NeighborLoader(data, [2], input_nodes=[[1], [2, 3]])
    # A tuple of ids, as PyG takes it (torch.tensor of it); gnnc took every
    # tuple for PyG's typed form of a heterogeneous graph and refused it.
    for given in ((3, 8, 9, 30), (30, 3)):
        got = list(NeighborLoader(data, [2], batch_size=3, input_nodes=given))
        assert [b.n_id[:b.batch_size].tolist() for b in got] == \
            [list(given[:3]), list(given[3:])][:len(got)]
    for typed in (("paper", torch.tensor([1])), ("paper", None), [None, [1, 2]], "paper"):
        with pytest.raises(NotImplementedError, match=r"typed input_nodes \(node_type, "
                                                      r"ids\) of a heterogeneous graph"):
            NeighborLoader(data, [2], input_nodes=typed)
    idx = torch.tensor([30, 3, 3])
    (b,) = list(NeighborLoader(data, [2], batch_size=3, input_nodes=idx))
    assert b.n_id[:3].tolist() == [30, 3, 3] and b.input_id.tolist() == [0, 1, 2]
    (b,) = list(NeighborLoader(data, [2], batch_size=8, input_nodes=idx, drop_last=False,
                               shuffle=True, generator=torch.Generator().manual_seed(0)))
    assert torch.equal(idx[b.input_id], b.n_id[:3])


def test_int32_edge_index_and_recovery_after_an_error():
    data = random_graph()
    plain = Plain(x=data.x, edge_index=data.edge_index.int())
    loader = NeighborLoader(plain, [3, 2], batch_size=7,
                            generator=torch.Generator().manual_seed(1))
    want = [b.n_id for b in NeighborLoader(data, [3, 2], batch_size=7,
                                           generator=torch.Generator().manual_seed(1))]
    assert all(torch.equal(b.n_id, w) for b, w in zip(loader, want))
    with pytest.raises(ValueError, match="seeds"):
        loader.sample(torch.tensor([1, 2, 99]))  # 99: not a node
    # An error in the middle of a batch (out of memory, an interrupt) leaves
    # the scratch maps clean for the next one.
    relabel = loader._relabel
    loader._relabel = lambda *a: (_ for _ in ()).throw(MemoryError())
    with pytest.raises(MemoryError):
        next(iter(loader))
    loader._relabel = relabel
    assert (loader._local == -1).all()
    for i, batch in enumerate(loader):
        check_batch(batch, data, list(range(7 * i, min(7 * i + 7, 40))), [3, 2])
    # A tensor refused is named by its shape, not printed whole.
    with pytest.raises(NotImplementedError,
                       match=r"input_time=a tensor of shape \[40\] is not supported"):
        NeighborLoader(data, [2], input_time=torch.zeros(40))
    # filter_per_worker (where batches are filtered with worker processes,
    # which this loader has none of) takes PyG's values.
    for value in (None, True, False):
        assert len(NeighborLoader(data, [2], batch_size=8, filter_per_worker=value)) == 5
    with pytest.raises(NotImplementedError, match="filter_per_worker='yes'"):
        NeighborLoader(data, [2], filter_per_worker="yes")


def test_batches_keep_the_datas_class():
    # As PyG's loader (a shallow copy of data per batch): a Data subclass's
    # methods and properties reach the batches (they were plain Data).
    class Molecules(Data):
        @property
        def atoms(self):
            return self.x.size(0)

        def label(self):
            return "molecules"
    base = random_graph()
    data = Molecules(x=base.x, y=base.y, edge_index=base.edge_index, name="set")
    for b in NeighborLoader(data, [2], batch_size=8):
        assert type(b) is Molecules and b.label() == "molecules"
        assert b.atoms == b.n_id.numel() and b.name == "set"
        assert set(b.keys()) == {"x", "y", "edge_index", "name", "n_id", "e_id",
                                 "input_id", "batch_size", "num_sampled_nodes",
                                 "num_sampled_edges", "num_nodes"}
    assert "n_id" not in data and data.x is base.x  # (the data untouched)


def test_pygs_call_forms():
    # PyG's third positional argument is input_nodes (gnnc's was
    # batch_size: NeighborLoader(data, [2], idx) refused idx as a batch
    # size); DataLoader's and PyG's arguments at their defaults are taken.
    data = random_graph()
    idx = torch.tensor([5, 1, 7])
    loader = NeighborLoader(data, [2], idx, batch_size=2)
    assert [b.n_id[:b.batch_size].tolist() for b in loader] == [[5, 1], [7]]
    with pytest.raises(TypeError):
        NeighborLoader(data, [2], idx, 2)  # (the rest are keywords)
    assert len(NeighborLoader(data, [2], batch_size=8, transform_sampler_output=None,
                              timeout=0, pin_memory_device="", in_order=True,
                              multiprocessing_context=None)) == 5
    with pytest.raises(NotImplementedError, match=r"timeout=5 is not supported"):
        NeighborLoader(data, [2], timeout=5)
    # A list of bools is a mask (PyG reads it as the ids 0 and 1).
    mask = [i % 10 == 3 for i in range(40)]
    assert NeighborLoader(data, [2], mask, batch_size=8).input_nodes.tolist() == \
        [3, 13, 23, 33]


@pytest.mark.parametrize("prefetch", [0, 1])
def test_attributes_are_read_when_an_iteration_starts(prefetch):
    # PyG reads `data` for every batch: an attribute assigned, added or
    # deleted after the loader was made shows in later batches. They were
    # taken once, in __init__, and such changes were silently ignored (stale
    # features or labels, a mask added later missing). `loader.data` is the
    # data, as PyG's (its layer-wise inference recipes edit it).
    data = random_graph()
    loader = NeighborLoader(data, [3], batch_size=8, prefetch=prefetch,
                            generator=torch.Generator().manual_seed(1))
    assert loader.data is data
    b = next(iter(loader))
    torch.testing.assert_close(b.x, data.x[b.n_id])
    data.x = torch.ones(40, 5)
    data.y = torch.full((40,), 7)
    data.train_mask = torch.arange(40) % 2 == 0
    data.edge_weight = torch.rand(data.edge_index.size(1))
    for b in loader:
        torch.testing.assert_close(b.x, torch.ones(b.n_id.numel(), 5))
        assert (b.y == 7).all()
        assert torch.equal(b.train_mask, b.n_id % 2 == 0)
        torch.testing.assert_close(b.edge_weight, data.edge_weight[b.e_id])
    del loader.data.train_mask, loader.data.y
    b = loader.sample(torch.tensor([3, 4]))
    assert "train_mask" not in b and "y" not in b
    # An in-place write to the same tensor is seen too (the CPU loader
    # gathers from it).
    data.x.mul_(3)
    torch.testing.assert_close(next(iter(loader)).x[:1], torch.full((1, 5), 3.0))


@pytest.mark.parametrize("prefetch", [0, 1])
def test_batches_follow_the_callers_autograd_mode(prefetch):
    # A learnable x gathered under the caller's no_grad / inference_mode has
    # no autograd history, with or without prefetch (the thread sampling
    # ahead took its own, default grad mode).
    data = random_graph()
    data.x = torch.nn.Parameter(data.x)
    loader = NeighborLoader(data, [3], batch_size=8, prefetch=prefetch)
    assert next(iter(loader)).x.grad_fn is not None
    with torch.no_grad():
        assert all(b.x.grad_fn is None and not b.x.requires_grad for b in loader)
    with torch.inference_mode():
        assert all(b.x.is_inference() for b in loader)
    assert next(iter(loader)).x.grad_fn is not None


def test_drop_last_and_transform():
    data = random_graph()
    loader = NeighborLoader(data, [1], batch_size=16, drop_last=True,
                            transform=lambda b: b.batch_size)
    assert len(loader) == 2 and list(loader) == [16, 16]


def test_other_attributes():
    data = random_graph()
    data.edge_attr = torch.randn(300, 2)
    data.train_mask = torch.rand(40) < 0.5
    data.name = "g"
    data.titles = [f"n{i}" for i in range(40)]   # a list per node (PyG refuses)
    data.score = np.arange(40) * 0.5            # a numpy array per node
    data.num_nodes = 40                         # stored: the batch gets its own
    (b,) = list(NeighborLoader(data, [3], batch_size=40))
    assert torch.equal(b.edge_attr, data.edge_attr[b.e_id])
    assert torch.equal(b.train_mask, data.train_mask[b.n_id])
    assert b.name == "g"
    assert b.titles == [f"n{i}" for i in b.n_id.tolist()]
    assert (b.score == b.n_id.numpy() * 0.5).all()
    small = next(iter(NeighborLoader(data, [1], batch_size=1)))
    assert small.num_nodes == small.n_id.numel() < 40
    assert small.titles == [f"n{i}" for i in small.n_id.tolist()]
    plain = Plain(x=data.x, y=data.y, edge_index=data.edge_index, edge_attr=data.edge_attr)
    (c,) = list(NeighborLoader(plain, [3], batch_size=40))
    assert torch.equal(c.edge_attr, data.edge_attr[c.e_id])


@pytest.mark.parametrize("case", ["node_pair_index", "edge_pair_index", "numpy",
                                  "own_ids"])
def test_attributes_gathered_as_pyg_gathers_them(case):
    # As PyG's filter_data: along Data.__cat_dim__ (the last dimension for a
    # key naming an index), numpy arrays into CPU tensors, and the data's own
    # n_id / e_id gathered and kept (the batch's ids only where it has none).
    data = random_graph()
    if case == "node_pair_index":
        data.pair_index = torch.arange(80).view(2, 40)
    elif case == "edge_pair_index":
        data.edge_pair_index = torch.arange(600).view(2, 300)
    elif case == "numpy":
        data.score = np.arange(80.0).reshape(40, 2)
    else:
        data.n_id = torch.arange(40) + 1000
        data.e_id = torch.arange(300) + 5000
    loader = NeighborLoader(data, [3, 2], batch_size=8)
    for i, b in enumerate(loader):
        n_id = (b.n_id - 1000) if case == "own_ids" else b.n_id
        e_id = (b.e_id - 5000) if case == "own_ids" else b.e_id
        ids = Plain(**{k: b[k] for k in b.keys()})
        ids.n_id, ids.e_id = n_id, e_id
        check_batch(ids, data, list(range(8 * i, min(8 * i + 8, 40))), [3, 2])
        if case == "node_pair_index":
            assert torch.equal(b.pair_index, data.pair_index[:, n_id])
        elif case == "edge_pair_index":
            assert torch.equal(b.edge_pair_index, data.edge_pair_index[:, e_id])
        elif case == "numpy":
            assert isinstance(b.score, torch.Tensor)
            assert torch.equal(b.score, torch.from_numpy(data.score)[n_id])
        else:
            assert torch.equal(b.n_id, data.n_id[n_id])
            assert torch.equal(b.e_id, data.e_id[e_id])


def test_empty_graph_and_no_edges():
    empty = Plain(x=torch.zeros(0, 3), edge_index=torch.zeros(2, 0, dtype=torch.long))
    loader = NeighborLoader(empty, [2, 2], batch_size=4)
    assert len(loader) == 0 and list(loader) == []
    edgeless = Plain(x=torch.randn(5, 3), y=torch.arange(5),
                     edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=5)
    batches = list(NeighborLoader(edgeless, [2, -1], batch_size=2))
    assert [b.n_id.tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    for b in batches:
        assert b.edge_index.shape == (2, 0) and b.num_sampled_edges == [0, 0]
        assert b.num_sampled_nodes == [b.batch_size, 0, 0]
        assert torch.equal(b.x, edgeless.x[b.n_id])


def test_bad_arguments():
    data = random_graph()
    with pytest.raises(ValueError, match="num_neighbors"):
        NeighborLoader(data, [2, -2])
    # A fan-out whose draws with replacement would overflow the sampler's
    # counts (it wrote past its buffer) or int64 itself.
    for huge in (2**31, 2**62 + 1, 2**64):
        with pytest.raises(ValueError, match="from 0 to 2147483647"):
            NeighborLoader(data, [huge], replace=True)
    with pytest.raises(TypeError, match="num_neighbors"):
        NeighborLoader(data, 3)
    with pytest.raises(TypeError, match="num_neighbors"):
        NeighborLoader(data, [2.0])
    with pytest.raises(ValueError, match="batch_size"):
        NeighborLoader(data, [2], batch_size=0)
    with pytest.raises(TypeError, match="batch_size"):
        NeighborLoader(data, [2], batch_size=2.5)
    with pytest.raises(ValueError, match="input_nodes"):
        NeighborLoader(data, [2], input_nodes=torch.tensor([0, 40]))
    with pytest.raises(ValueError, match="input_nodes"):
        NeighborLoader(data, [2], input_nodes=torch.tensor([-1]))
    with pytest.raises(ValueError, match="input_nodes"):
        NeighborLoader(data, [2], input_nodes=torch.ones(39, dtype=torch.bool))
    with pytest.raises(TypeError, match="input_nodes"):
        NeighborLoader(data, [2], input_nodes=torch.tensor([0.0]))
    with pytest.raises(ValueError, match="edge_index"):
        NeighborLoader(Plain(x=data.x, edge_index=data.edge_index.t()), [2])
    with pytest.raises(TypeError, match="edge_index"):
        NeighborLoader(Plain(x=data.x, edge_index=data.edge_index.float()), [2])
    with pytest.raises(TypeError, match="edge_index"):
        NeighborLoader(Plain(x=data.x), [2])
    with pytest.raises(ValueError, match="edge_index"):
        NeighborLoader(Plain(x=data.x, edge_index=torch.tensor([[0], [40]])), [2])
    with pytest.raises(NotImplementedError, match="num_workers"):
        NeighborLoader(data, [2], num_workers=2)
    with pytest.raises(TypeError, match="frobnicate"):
        NeighborLoader(data, [2], frobnicate=1)
    with pytest.raises(ValueError, match="rank"):
        NeighborLoader(data, [2], num_replicas=2, rank=2)
    with pytest.raises(TypeError, match="subset_sampler"):  # removed: one sampler
        NeighborLoader(data, [2], subset_sampler="sort")
    with pytest.raises(ValueError, match="feature_memory"):
        NeighborLoader(data, [2], feature_memory="uva")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="pinned"):
            NeighborLoader(data, [2], feature_memory="pinned")


def _num_neighbors_forms():
    """num_neighbors [2, 3] in the forms PyG's NeighborLoader takes."""
    from torch_geometric.sampler import NumNeighbors
    return {"numpy-ints": [np.int64(2), np.int32(3)], "numpy-array": np.array([2, 3]),
            "tensor": torch.tensor([2, 3]),
            "int32-tensor": torch.tensor([2, 3], dtype=torch.int32),
            "0-d-tensors": [torch.tensor(2), torch.tensor(3)],
            "NumNeighbors": NumNeighbors([2, 3]),
            "NumNeighbors-tensor": NumNeighbors(torch.tensor([2, 3]))}


@pytest.mark.parametrize("form", ["numpy-ints", "numpy-array", "tensor", "int32-tensor",
                                  "0-d-tensors", "NumNeighbors",
                                  "NumNeighbors-tensor"])
def test_num_neighbors_in_pygs_forms(form):
    """num_neighbors as numpy ints, a 1-D integer tensor or array, or PyG's
    NumNeighbors holding a list: taken as PyG takes them, the batches those
    of the list of Python ints. gnnc raised TypeError for each."""
    data = random_graph()
    loader = NeighborLoader(data, _num_neighbors_forms()[form], batch_size=8,
                            generator=torch.Generator().manual_seed(4))
    assert loader.num_neighbors == [2, 3]
    assert all(type(k) is int for k in loader.num_neighbors)
    plain = NeighborLoader(data, [2, 3], batch_size=8,
                           generator=torch.Generator().manual_seed(4))
    for got, want in zip(loader, plain, strict=True):
        assert torch.equal(got.n_id, want.n_id)
        assert torch.equal(got.edge_index, want.edge_index)


def test_num_neighbors_refused_clearly():
    from torch_geometric.sampler import NumNeighbors
    data = random_graph()
    with pytest.raises(NotImplementedError, match="dict.*heterogeneous"):
        NeighborLoader(data, {("a", "to", "a"): [2]})
    with pytest.raises(NotImplementedError, match=r"dict \(held by a NumNeighbors\).*"
                                                  r"heterogeneous.*list of ints"):
        NeighborLoader(data, NumNeighbors({("a", "to", "a"): [2]}))
    for bad, what in ((torch.tensor([2.0]), "float32"), ([np.float64(2)], "float64"),
                      ([True], "bool"), (torch.tensor([True]), "bool"),
                      (np.array([True]), "bool"), (NumNeighbors([2.5]), "float")):
        with pytest.raises(TypeError, match=f"num_neighbors must hold ints.*{what}"):
            NeighborLoader(data, bad)
    for bad in (torch.tensor([[2, 3]]), np.array(2)):
        with pytest.raises(ValueError, match="num_neighbors as a .* must be 1-D"):
            NeighborLoader(data, bad)
    with pytest.raises(ValueError, match="from 0 to 2147483647, got -2"):
        NeighborLoader(data, torch.tensor([2, -2]))


def test_sparse_adjacency_refused_naming_adj_t():
    """A Data holding its graph as a sparse adj_t (PyG's ToSparseTensor):
    refused naming adj_t and edge_index. It said 'data.edge_index must be a
    torch.Tensor, got NoneType'."""
    data = random_graph()
    n = data.num_nodes
    adj_t = torch.sparse_coo_tensor(data.edge_index.flip(0), torch.ones(data.num_edges),
                                    (n, n))
    with pytest.raises(NotImplementedError, match=r"sparse adjacency \(data.adj_t\) is "
                                                  r"not supported.*data.edge_index"):
        NeighborLoader(Data(x=data.x, adj_t=adj_t), [2])
    with pytest.raises(NotImplementedError, match="adj_t"):
        NeighborLoader(Plain(x=data.x, adj_t=adj_t.to_sparse_csr()), [2])


def test_hetero_data_refused_by_name():
    """PyG's HeteroData (or a subclass) is refused naming it and what to pass
    instead, whatever num_neighbors and input_nodes come with it. It said
    'data.edge_index must be a torch.Tensor, got NoneType' (a HeteroData has
    no edge_index of its own)."""
    HeteroData = pytest.importorskip("torch_geometric.data").HeteroData
    data = HeteroData()
    data["paper"].x = torch.randn(6, 3)
    data["paper", "cites", "paper"].edge_index = torch.tensor([[0, 1], [1, 2]])

    class Sub(HeteroData):
        pass

    for hetero, nn, nodes in ((data, [2], None), (data, [2], ("paper", None)),
                              (data, {("paper", "cites", "paper"): [2]}, "paper"),
                              (Sub(), [2], None)):
        with pytest.raises(NotImplementedError, match=r"data is a HeteroData \(a "
                                                      r"heterogeneous graph\).*homogeneous "
                                                      r"Data.*to_homogeneous"):
            NeighborLoader(hetero, nn, input_nodes=nodes)


def test_distributed_split_is_disjoint_and_even():
    data = random_graph()
    idx = torch.arange(5, 38)  # 33 seeds over 4 ranks: padded to 36
    shares = []
    for rank in range(4):
        loader = NeighborLoader(data, [2], batch_size=4, input_nodes=idx, shuffle=True,
                                num_replicas=4, rank=rank, seed=3)
        loader.set_epoch(1)
        assert len(loader) == 3
        shares.append(torch.cat([b.n_id[:b.batch_size] for b in loader]))
    assert all(s.numel() == 9 for s in shares)
    assert set(torch.cat(shares).tolist()) == set(idx.tolist())


def test_batch_through_gnnc_sage_matches_pyg():
    pyg_nn = pytest.importorskip("torch_geometric.nn")
    import gnnc.nn
    torch.manual_seed(0)
    data = random_graph(n=200, e=2000, f=16)
    theirs = pyg_nn.SAGEConv(16, 8)
    ours = gnnc.nn.SAGEConv(16, 8)
    ours.load_state_dict(theirs.state_dict())
    for batch in NeighborLoader(data, [10, 5], batch_size=64):
        want = theirs(batch.x, batch.edge_index)
        have = ours(batch.x, batch.edge_index)
        torch.testing.assert_close(have, want, rtol=1e-5, atol=1e-5)


def test_trim_to_layer_keeps_the_seeds_outputs():
    # Hops in order: trimming the outer hop before the last layer leaves the
    # seeds' outputs as they were.
    trim = pytest.importorskip("torch_geometric.utils").trim_to_layer
    import gnnc.nn
    torch.manual_seed(0)
    data = random_graph(n=200, e=2000, f=16)
    convs = [gnnc.nn.SAGEConv(16, 16), gnnc.nn.SAGEConv(16, 4)]
    batch = next(iter(NeighborLoader(data, [6, 4], batch_size=32)))
    x, ei = batch.x, batch.edge_index
    full = convs[1](convs[0](x, ei).relu(), ei)[:32]
    for i, conv in enumerate(convs):
        x, ei, _ = trim(i, batch.num_sampled_nodes, batch.num_sampled_edges, x, ei)
        x = conv(x, ei)
        if i == 0:
            x = x.relu()
    torch.testing.assert_close(x[:32], full)


def test_sample_hop_operator():
    # Node degrees 3, 50, 1000, 0, 7 (CSC offsets); the frontier repeats and
    # reorders them. pos: CSC positions grouped by frontier position (owner).
    indptr = torch.tensor([0, 3, 53, 1053, 1053, 1060])
    frontier = torch.tensor([2, 0, 3, 1, 4, 2])
    seed = torch.tensor([123456789])
    deg = indptr[frontier + 1] - indptr[frontier]
    lo = indptr[frontier]

    def hop(k, replace=False, s=seed, f=frontier, ptr=indptr):
        return torch.ops.gnnc.sample_hop(ptr, f, k, replace, s)

    for k, replace in ((-1, False), (0, False), (2, False), (5, False), (40, False),
                       (4, True)):
        pos, owner = hop(k, replace)
        want = deg if k < 0 else torch.where(deg > 0, k, 0) if replace else deg.clamp_max(k)
        assert torch.equal(torch.bincount(owner, minlength=6), want)
        assert torch.equal(owner, owner.sort().values)
        assert ((pos >= lo[owner]) & (pos < lo[owner] + deg[owner])).all()
        if not replace:  # distinct edges per frontier position
            key = owner * 10**6 + pos
            assert key.unique().numel() == key.numel()
        if not replace:  # rows of at most k (every row for k = -1): all, in order
            for i in range(6):
                d = int(deg[i])
                if k < 0 or d <= k:
                    assert torch.equal(pos[owner == i] - lo[i], torch.arange(d))
        pos2, owner2 = hop(k, replace)
        assert torch.equal(pos, pos2) and torch.equal(owner, owner2)
    # A function of (seed, frontier position, degree, k): a prefix samples alike.
    pos, owner = hop(2)
    p3, o3 = hop(2, f=frontier[:3])
    assert torch.equal(p3, pos[:o3.numel()])
    assert not torch.equal(pos, hop(2, s=seed + 1)[0])
    # Floyd's large-k path on the host (a hash set) draws as the small one.
    wide = torch.tensor([0, 5000])
    big, _ = hop(1000, f=torch.zeros(30, dtype=torch.long), ptr=wide)
    ordered = big.view(30, 1000).sort(1).values
    assert (ordered[:, 1:] != ordered[:, :-1]).all() and ((big >= 0) & (big < 5000)).all()
    assert hop(3, f=frontier[:0])[0].shape == (0,)
    with pytest.raises(RuntimeError, match=r"frontier\[1\] = 5 is outside \[0, 5\)"):
        hop(2, f=torch.tensor([0, 5]))
    with pytest.raises(RuntimeError, match=r"indptr decreases at node 1 \(indptr\[1\] = 3, "
                                           r"indptr\[2\] = 2\)"):
        hop(2, f=torch.tensor([0, 1]), ptr=torch.tensor([0, 3, 2]))
    with pytest.raises(RuntimeError, match="k must be -1"):
        hop(-2)
    with pytest.raises(RuntimeError, match="from 0 to 2147483647, got 4611686018427387905"):
        hop(2**62 + 1, replace=True)
    with pytest.raises(RuntimeError, match="int64 vector of node ids"):
        hop(2, f=frontier.int())
    with pytest.raises(RuntimeError, match="seed as one int64"):
        hop(2, s=torch.tensor([1, 2]))
    if torch.cuda.is_available():  # the kernels draw what the CPU draws
        for k, replace in ((-1, False), (2, False), (40, False), (4, True), (1000, False)):
            ptr = wide if k == 1000 else indptr
            f = torch.zeros(30, dtype=torch.long) if k == 1000 else frontier
            a = hop(k, replace, f=f, ptr=ptr)
            c = hop(k, replace, s=seed.cuda(), f=f.cuda(), ptr=ptr.cuda())
            assert all(torch.equal(x, y.cpu()) for x, y in zip(a, c))
            pinned = hop(k, replace, s=seed.cuda(), f=f.cuda(), ptr=ptr.pin_memory())
            assert all(torch.equal(x, y.cpu()) for x, y in zip(a, pinned))
        with pytest.raises(RuntimeError, match=r"frontier\[1\] = 5 is outside"):
            hop(2, s=seed.cuda(), f=torch.tensor([0, 5], device="cuda"), ptr=indptr.cuda())
        with pytest.raises(RuntimeError, match="indptr decreases at node 1"):
            hop(2, s=seed.cuda(), f=torch.tensor([0, 1], device="cuda"),
                ptr=torch.tensor([0, 3, 2], device="cuda"))
        n = 20000
        degs = torch.randint(0, 300, (n,))
        ptr = torch.cat([torch.zeros(1, dtype=torch.long), degs.cumsum(0)])
        f = torch.randint(0, n, (5000,))
        for k, replace in ((25, False), (10, True), (-1, False)):
            a = hop(k, replace, f=f, ptr=ptr)
            c = hop(k, replace, s=seed.cuda(), f=f.cuda(), ptr=ptr.cuda())
            assert all(torch.equal(x, y.cpu()) for x, y in zip(a, c))


def test_relabel_operator():
    # Nodes 4 and 9 are in the batch already (local ids 0 and 1); the others
    # get 2, 3, ... in order of first occurrence and enter the map.
    n, big = 12, torch.iinfo(torch.int64).max
    src = torch.tensor([7, 4, 7, 3, 9, 3, 11, 7])

    def run(device, s=src):
        local_map = torch.full((n,), -1, device=device)
        local_map[torch.tensor([4, 9])] = torch.tensor([0, 1], device=device)
        first = torch.full((n,), big, device=device)
        local, new = torch.ops.gnnc.relabel(local_map, first, s.to(device), 2)
        return local.cpu(), new.cpu(), local_map.cpu(), first.cpu()

    local, new, local_map, first = run("cpu")
    assert local.tolist() == [2, 0, 2, 3, 1, 3, 4, 2] and new.tolist() == [7, 3, 11]
    assert local_map[[7, 3, 11, 4, 9]].tolist() == [2, 3, 4, 0, 1]
    assert (local_map[[0, 1, 2, 5, 6, 8, 10]] == -1).all() and (first == big).all()
    empty = run("cpu", src[:0])
    assert empty[0].numel() == 0 and empty[1].numel() == 0
    with pytest.raises(RuntimeError, match=r"src\[0\] = 12 is outside \[0, 12\)"):
        run("cpu", torch.tensor([12]))
    with pytest.raises(RuntimeError, match="int64 vectors"):
        torch.ops.gnnc.relabel(torch.zeros(3, dtype=torch.long), torch.zeros(2, dtype=torch.long),
                               src, 0)
    if torch.cuda.is_available():  # the kernels relabel as the CPU does
        for got, want in zip(run("cuda"), (local, new, local_map, first)):
            assert torch.equal(got, want)
        with pytest.raises(RuntimeError, match=r"src\[1\] = 12 is outside \[0, 12\)"):
            run("cuda", torch.tensor([3, 12, -1]))
        assert all(t.numel() == 0 for t in run("cuda", src[:0])[:2])
        g = torch.Generator().manual_seed(0)
        many = torch.randint(0, n, (5000,), generator=g)
        for got, want in zip(run("cuda", many), run("cpu", many)):
            assert torch.equal(got, want)


def test_gather_rows_operator():
    ids = torch.tensor([2, 0, 2, 1])
    for table in (torch.randn(3, 5), torch.arange(3), torch.randn(3, 2, 3).double(),
                  torch.randn(3, 7).bfloat16(), torch.arange(6, dtype=torch.int32).view(3, 2)):
        assert torch.equal(torch.ops.gnnc.gather_rows(table, ids), table[ids])
    assert torch.ops.gnnc.gather_rows(torch.randn(3, 4), ids[:0]).shape == (0, 4)
    with pytest.raises(RuntimeError, match="id 3 outside"):
        torch.ops.gnnc.gather_rows(torch.randn(3, 4), torch.tensor([3]))
    with pytest.raises(RuntimeError, match="int64 vector of ids"):
        torch.ops.gnnc.gather_rows(torch.randn(3, 4), ids.int())
    with pytest.raises(RuntimeError, match="contiguous table"):
        torch.ops.gnnc.gather_rows(torch.randn(4, 3).t(), ids)
    if torch.cuda.is_available():  # pinned host memory read by the GPU
        table = torch.randn(1000, 33).pin_memory()
        idx = torch.randint(0, 1000, (5000,), device="cuda")
        assert torch.equal(torch.ops.gnnc.gather_rows(table, idx).cpu(), table[idx.cpu()])
        odd = torch.randint(0, 100, (100, 3), dtype=torch.int32).pin_memory()
        assert torch.equal(torch.ops.gnnc.gather_rows(odd, idx % 100).cpu(),
                           odd[(idx % 100).cpu()])
        with pytest.raises(RuntimeError, match="pinned"):
            torch.ops.gnnc.gather_rows(torch.randn(10, 4), idx % 10)


def test_pinned_memory_needs_cuda():
    data = random_graph(n=20, e=60)
    for arg in ("graph_memory", "feature_memory"):
        with pytest.raises(ValueError, match=f"{arg}='pinned' needs a CUDA"):
            NeighborLoader(data, [2], device="cpu", **{arg: "pinned"})
        with pytest.raises(ValueError, match=arg):
            NeighborLoader(data, [2], **{arg: "host"})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_prefetch_gives_the_same_batches():
    data = random_graph(n=500, e=8000)
    runs = {}
    for prefetch in (0, None, 3):
        loader = NeighborLoader(data, [5, 10], batch_size=64, shuffle=True, device="cuda",
                                generator=torch.Generator("cuda").manual_seed(7),
                                prefetch=prefetch)
        assert loader.prefetch == {0: 0, None: 1, 3: 3}[prefetch]
        # Named, so that the loader's thread (which starts on device 0)
        # samples on the caller's current device.
        assert loader.device == torch.device("cuda", torch.cuda.current_device())
        out = []
        for b in loader:  # the loop's own work on its stream, between batches
            torch.cuda._sleep(100000)
            out.append((b.n_id, b.e_id, b.edge_index, b.x, b.x.sum(1)))
        runs[prefetch] = out
    assert len(runs[0]) == 8
    assert _same(runs[None], runs[0]) and _same(runs[3], runs[0])
    assert not _loader_threads()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_batch_written_behind_the_version_counter_after_its_graphs_were_built_ahead():
    import gnnc.nn
    from gnnc import _core
    torch.manual_seed(0)
    data = random_graph(n=500, e=8000, f=8)
    convs = [gnnc.nn.SAGEConv(8, 6).cuda(), gnnc.nn.SAGEConv(6, 3).cuda()]
    loader = NeighborLoader(data, [5, 10], batch_size=32, device="cuda", prefetch=1,
                            generator=torch.Generator("cuda").manual_seed(3))
    checked = 0
    for b in loader:
        ei, args = b.edge_index, (b.num_sampled_nodes, b.num_sampled_edges, True)
        watched = _core._LOADER_BATCHES.get(id(ei))
        if watched is None or len(watched.built) < 2:
            _trimmed(convs, b.x, ei, *args)  # teaches the loader
            continue
        want = _trimmed(convs, b.x, ei.clone(), *args)
        first = b.num_sampled_edges[0]
        version = ei._version
        ei.data[0, :first] = ei[0, :first].flip(0)  # unseen by the counter
        assert ei._version == version
        # Built ahead from the old indices: the first call's results are NaN
        # (the device's row-by-row check of the views), or it raises.
        try:
            out = _trimmed(convs, b.x, ei, *args)
            assert torch.isnan(out).all()
        except RuntimeError as e:
            assert "version counter" in str(e)
        torch.cuda.synchronize()
        with pytest.raises(RuntimeError, match="version counter"):
            _trimmed(convs, b.x, ei, *args)
        torch.testing.assert_close(_trimmed(convs, b.x, ei, *args),
                                   _trimmed(convs, b.x, ei.clone(), *args))
        assert not torch.equal(want, _trimmed(convs, b.x, ei.clone(), *args))
        checked += 1
    assert checked >= 10


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_pinned_graph_and_features_give_the_same_batches():
    data = random_graph(n=500, e=8000)
    batches = {}
    for where in ("device", "pinned"):
        loader = NeighborLoader(data, [5, 10], batch_size=64, shuffle=True, device="cuda",
                                generator=torch.Generator("cuda").manual_seed(7),
                                graph_memory=where, feature_memory=where)
        batches[where] = list(loader)
    assert len(batches["device"]) == len(batches["pinned"])
    for a, b in zip(batches["device"], batches["pinned"]):
        for key in ("x", "y", "edge_index", "n_id", "e_id"):
            assert torch.equal(getattr(a, key), getattr(b, key)), key
        assert a.num_sampled_nodes == b.num_sampled_nodes


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("feature_memory", ["device", "pinned"])
def test_cuda(feature_memory):
    data = random_graph(n=300, e=6000)
    gen = torch.Generator("cuda").manual_seed(0)
    loader = NeighborLoader(data, [5, 40, -1], batch_size=50, shuffle=True, generator=gen,
                            device="cuda", feature_memory=feature_memory)
    for batch in loader:
        for t in (batch.x, batch.y, batch.edge_index, batch.n_id, batch.e_id,
                  batch.input_id):
            assert t.is_cuda
        torch.testing.assert_close(batch.x.cpu(), data.x[batch.n_id.cpu()])
        check_batch(batch, data, batch.n_id[:batch.batch_size].tolist(), [5, 40, -1])
    # Graph on the GPU: the loader samples there; uniform per neighbour
    # (Floyd's draw for 10 and 40 of 100).
    ei = torch.stack([torch.arange(1, 101), torch.zeros(100, dtype=torch.long)])
    hub = Plain(x=torch.zeros(101, 1, device="cuda"), edge_index=ei.cuda())
    for k in (10, 40):
        loader = NeighborLoader(hub, [k], batch_size=3000,
                                input_nodes=torch.zeros(3000, dtype=torch.long, device="cuda"),
                                generator=torch.Generator("cuda").manual_seed(k))
        (batch,) = list(loader)
        assert batch.edge_index.is_cuda and batch.e_id.is_cuda
        e = batch.e_id.view(3000, k).cpu()
        assert (e.sort(1).values.diff(1) > 0).all(), "a neighbour sampled twice"
        counts = torch.bincount(e.view(-1), minlength=100).double()
        assert chi2(counts, 3000 * k / 100) < CHI2_999[99]


class TwoLayerSAGE(torch.nn.Module):
    def __init__(self, fin, hidden, classes):
        super().__init__()
        import gnnc.nn
        self.conv1 = gnnc.nn.SAGEConv(fin, hidden)
        self.conv2 = gnnc.nn.SAGEConv(hidden, classes)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


def _ddp_worker(rank, world, init_file, out_dir):
    import torch.distributed as dist
    import torch.nn.functional as F
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    data = random_graph(n=120, e=900, f=8)
    torch.manual_seed(0)  # the same initial model on both ranks
    model = TwoLayerSAGE(8, 16, 3)
    start = torch.cat([p.detach().clone().view(-1) for p in model.parameters()])
    net = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    # Each rank its own share of the seeds, and its own sampling RNG; both
    # sample ahead on a thread (and build the batches' graphs there).
    loader = NeighborLoader(data, [5, 5], batch_size=16, shuffle=True, num_replicas=world,
                            rank=rank, generator=torch.Generator().manual_seed(1 + rank),
                            prefetch=1 + rank)
    steps, seeds = 0, []
    for epoch in range(2):
        loader.set_epoch(epoch)
        for batch in loader:
            opt.zero_grad()
            out = net(batch.x, batch.edge_index)[:batch.batch_size]
            F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
            opt.step()
            steps += 1
            seeds.append(batch.n_id[:batch.batch_size])
    params = torch.cat([p.detach().view(-1) for p in model.parameters()])
    torch.save({"steps": steps, "params": params, "start": start,
                "seeds": torch.cat(seeds)}, os.path.join(out_dir, f"{rank}.pt"))
    dist.destroy_process_group()


@pytest.mark.skipif(not (torch.distributed.is_available() and
                         torch.distributed.is_gloo_available()),
                    reason="torch.distributed with gloo is not available")
def test_ddp_two_processes_on_cpu():
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_ddp_worker, args=(2, os.path.join(tmp, "init"), tmp), nprocs=2)
        r0, r1 = (torch.load(os.path.join(tmp, f"{r}.pt")) for r in range(2))
    assert r0["steps"] == r1["steps"] == 8  # 120 seeds / 2 ranks / 16, 2 epochs
    assert torch.equal(r0["start"], r1["start"])
    assert not torch.equal(r0["params"], r0["start"])
    assert torch.equal(r0["params"], r1["params"])
    # Per epoch the ranks' seeds are disjoint and cover every node.
    for epoch in range(2):
        s0, s1 = (r["seeds"][epoch * 60:(epoch + 1) * 60] for r in (r0, r1))
        assert sorted(torch.cat([s0, s1]).tolist()) == list(range(120))


_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "examples", "python", "train_ddp.py")


@pytest.mark.skipif(not os.path.isfile(_EXAMPLE), reason="examples/ not beside the tests")
def test_train_ddp_example_runs():
    """examples/python/train_ddp.py on Cora (data/), in one process. (Two
    gloo ranks under torch.distributed.run passed in 7 runs, loaded or not,
    but in one CI run a rank aborted with "terminate called without an
    active exception", cause not found (gnnc's own threads are detached):
    left out of CI. test_ddp_two_processes_on_cpu covers DDP.)"""
    import subprocess
    import sys
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=os.pathsep.join(filter(None, [
                   os.path.dirname(os.path.dirname(gnnc.__file__)),
                   os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, _EXAMPLE, "--graph", "cora", "--epochs", "2",
                          "--hidden", "16", "--batch-size", "64"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "1 rank(s) on cpu" in out.stdout
    assert out.stdout.count("seeds/s") == 2 and out.stdout.count(" loss ") == 2
    assert "test accuracy" in out.stdout and "median epoch" in out.stdout


def test_batch_edge_index_is_marked_sorted_by_target():
    """A batch's targets are frontier positions, hop after hop: its
    edge_index (and every column prefix of it, trim_to_layer's views) is
    marked sorted by target, so gnnc builds its graph without the CSR sort.
    The mark must be true: checked here on every batch."""
    from gnnc import _core
    torch.manual_seed(0)
    data = random_graph(n=300, e=3000, f=4)
    for batch in NeighborLoader(data, [5, 3], batch_size=40, shuffle=True):
        ei = batch.edge_index
        assert _core._is_dst_sorted(ei)
        assert bool((ei[1, 1:] >= ei[1, :-1]).all())
        k = batch.num_sampled_edges[0]
        assert _core._is_dst_sorted(ei[:, :k])
        assert not _core._is_dst_sorted(ei[:, 1:])  # not a prefix
        assert not _core._is_dst_sorted(ei.flip(0))
