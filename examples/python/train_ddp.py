#!/usr/bin/env python3
"""Trains GraphSAGE (mean) or GAT with gnnc's layers on neighbour-sampled
batches (gnnc.loader.NeighborLoader) under DistributedDataParallel.

    torchrun --nproc_per_node=N examples/python/train_ddp.py --graph cora
        [--model sage|gat] [--fanout 25,10] [--batch-size 1024] [--epochs 10]
    torchrun --nproc_per_node=8 examples/python/train_ddp.py \
        --graph synthetic:232965:114615892:128:41 --train-fraction 0.65

Every rank holds the whole graph and its features on its device (NCCL on
CUDA, one GPU per rank by LOCAL_RANK; gloo on the CPU), samples its share of
the training seeds (the loader's num_replicas/rank: every rank draws the same
permutation and takes every N-th seed, so all ranks run the same number of
steps) and DDP averages the gradients. Evaluation runs the unwrapped model on
each rank's share of the test seeds (no collective per batch, so unequal
shares cannot hang) and sums correct/total over the ranks with all_reduce.
Without torchrun (no WORLD_SIZE) it trains in one process, without DDP.

--graph cora / citeseer: the Planetoid sets shipped in data/ (loaded by
train_cora.py's loader; seeds: the train split, evaluation: val and test).
--graph synthetic:N:E:F:C: a random graph of N nodes and E edges whose
sources and destinations both follow a power law (weight ~ rank^-0.5 over a
random order of the nodes), F random features, C random labels (the same on
every rank: a fixed seed on the same device type); --train-fraction of the
nodes are the seeds, the rest the test set. The reddit-like benchmark is
synthetic:232965:114615892:128:41 with --train-fraction 0.65 (random labels:
the accuracy means nothing there, the throughput does).

--full-graph trains on the whole graph every step instead (the same model,
loss on this rank's share of the training nodes), the accuracy baseline.

Per epoch rank 0 prints the epoch time (the slowest rank), seeds/s (all
ranks' training seeds over that time), the mean training loss (over every
step of every rank: with N ranks of batch B it is comparable with one
process of batch N*B, the same global batch) and the fraction of rank 0's epoch
spent in the loader: the time the training loop waits in `next()` for a
batch (sampling, relabelling and gathering, with the loader's own read
backs; the loader samples on a CUDA stream of its own, so those wait for
its kernels, not for the training step). Nothing else synchronises per
step.
"""

import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_cora import find_dataset, load_planetoid  # noqa: E402


class Graph:
    """What the loader reads: x, y, edge_index, num_nodes; plus the splits."""

    def __init__(self, x, edge_index, y, num_classes, splits):
        self.x, self.edge_index, self.y = x, edge_index, y
        self.num_nodes = x.size(0)
        self.num_classes = num_classes
        self.splits = splits


def power_law_edges(n: int, e: int, g: torch.Generator, device) -> torch.Tensor:
    """e edges over n nodes whose sources and destinations both follow a
    power law (weight ~ rank^-0.5 over a random order of the nodes)."""
    weight = torch.arange(1, n + 1, device=device, dtype=torch.float64) ** -0.5
    cdf = torch.cumsum(weight, 0)
    cdf /= cdf[-1].clone()

    def ids():
        rank = torch.searchsorted(cdf, torch.rand(e, generator=g, device=device,
                                                  dtype=torch.float64))
        return torch.randperm(n, generator=g, device=device)[rank.clamp_max(n - 1)]

    return torch.stack([ids(), ids()])


def synthetic(spec: str, train_fraction: float, device) -> Graph:
    try:
        n, e, f, c = (int(v) for v in spec.split(":")[1:])
    except ValueError:
        sys.exit(f"train_ddp: --graph synthetic:N:E:F:C expected, got '{spec}'")
    g = torch.Generator(device).manual_seed(0)
    edge_index = power_law_edges(n, e, g, device)
    x = torch.randn(n, f, generator=g, device=device)
    y = torch.randint(c, (n,), generator=g, device=device)
    order = torch.randperm(n, generator=g, device=device)
    cut = int(train_fraction * n)
    splits = {"train": order[:cut], "test": order[cut:]}
    return Graph(x, edge_index, y, c, splits)


def planetoid(name: str, device) -> Graph:
    x, edge_index, y, masks, classes = load_planetoid(find_dataset(name), device)
    splits = {k: m.nonzero().view(-1) for k, m in masks.items()}
    return Graph(x, edge_index, y, classes, splits)


class Stack(torch.nn.Module):
    """Layers with an activation and dropout between them.

    Given a sampled batch's per-hop counts (the loader numbers nodes and
    lists edges hop by hop), a model whose layers take bipartite input
    (`trims`: SAGE) runs layer i only where the layers after it read: its
    destinations are the nodes of the first L - i hops and its edges those
    that enter them, as DGL's blocks do (PyG's `trim_to_layer` trims the
    same way from the second layer on). The seeds' outputs are the same as
    without trimming."""

    act = staticmethod(F.relu)
    trims = False

    def forward(self, x, edge_index, num_sampled_nodes=None, num_sampled_edges=None):
        hops = len(self.convs)
        trim = self.trims and num_sampled_nodes is not None
        for i, conv in enumerate(self.convs):
            if trim:
                nd = sum(num_sampled_nodes[:hops - i])
                ne = sum(num_sampled_edges[:hops - i])
                x = conv((x, x[:nd]), edge_index[:, :ne], size=(x.size(0), nd))
            else:
                x = conv(x, edge_index)
            if i + 1 < len(self.convs):
                x = F.dropout(self.act(x), self.dropout, self.training)
        return x


class SAGE(Stack):
    trims = True

    def __init__(self, nn, fin, hidden, classes, layers, dropout):
        super().__init__()
        dims = [fin] + [hidden] * (layers - 1) + [classes]
        self.convs = torch.nn.ModuleList(
            nn.SAGEConv(a, b, aggr="mean") for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout


class GAT(Stack):
    act = staticmethod(F.elu)

    def __init__(self, nn, fin, hidden, classes, layers, dropout, heads=4):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for i in range(layers):
            last = i + 1 == layers
            self.convs.append(nn.GATConv(fin if i == 0 else hidden,
                                         classes if last else hidden // heads,
                                         heads=1 if last else heads, concat=not last))
        self.dropout = dropout


def setup():
    """(rank, world size, device); the process group when under torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if torch.cuda.is_available():
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return rank, world, device


def all_sum(values, device, distributed):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    if distributed:
        dist.all_reduce(t)
    return t.tolist()


def all_max(value, device, distributed):
    t = torch.tensor([value], dtype=torch.float64, device=device)
    if distributed:
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def hop_counts(batch, args):
    """The batch's per-hop node and edge counts for a trimming model (Stack)
    with --trim, else nothing."""
    if not args.trim:
        return ()
    return batch.num_sampled_nodes, batch.num_sampled_edges


@torch.no_grad()
def evaluate(model, loader, full, args):
    """(correct, total) of this rank's seeds."""
    model.eval()
    correct = total = 0
    if args.full_graph:
        out = model(full.x, full.edge_index)
        idx = loader  # the rank's seed ids
        pred = out[idx].argmax(1)
        return [float((pred == full.y[idx]).sum()), float(idx.numel())]
    for batch in loader:
        out = model(batch.x, batch.edge_index, *hop_counts(batch, args))[:batch.batch_size]
        correct += int((out.argmax(1) == batch.y[:batch.batch_size]).sum())
        total += batch.batch_size
    return [float(correct), float(total)]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", default="cora",
                   help="cora, citeseer or synthetic:N:E:F:C")
    p.add_argument("--model", choices=["sage", "gat"], default="sage")
    p.add_argument("--fanout", default="25,10",
                   help="per hop, -1 = all (write --fanout=-1,5 when it starts with -1)")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-fraction", type=float, default=0.65,
                   help="synthetic graphs: the share of nodes that are seeds")
    p.add_argument("--feature-memory", choices=["device", "pinned"], default="device",
                   help="x on the device, or in pinned host memory read by the GPU "
                        "(docs/Python-loader.md)")
    p.add_argument("--graph-memory", choices=["device", "pinned"], default="device",
                   help="the sampled graph's CSC on the device, or in pinned host "
                        "memory read by the GPU (with --feature-memory pinned: a "
                        "graph whose structure and features stay in host memory)")
    p.add_argument("--trim", action=argparse.BooleanOptionalAction, default=True,
                   help="SAGE: run layer i only where later layers read (bipartite "
                        "layers, DGL's blocks; half the GPU time of --no-trim). "
                        "Reddit-like on an H200 with the loader's default prefetch, "
                        "which builds the layers' graphs on its thread: 528 against "
                        "569 ms untrimmed, and 651 ms with --prefetch 0 "
                        "(bench/results/loader-thread-s31)")
    p.add_argument("--ddp", choices=["static", "default"], default="static",
                   help="static: DistributedDataParallel(static_graph=True, "
                        "gradient_as_bucket_view=True), the same autograd graph every "
                        "step and the gradients kept in the all-reduce buckets (2 "
                        "H200s, reddit-like: 395-407 ms per epoch against 405-433 "
                        "with DDP's defaults); default: DDP's defaults")
    p.add_argument("--adam", choices=["fused", "foreach"], default="fused",
                   help="Adam's implementation: fused (default: one kernel for all "
                        "parameters on CUDA; foreach on the CPU) or foreach "
                        "(PyTorch's default). The same update; the trimmed step is "
                        "bound by host work, of which foreach Adam took a third: "
                        "reddit-like on an H200, 502 against 528 ms per epoch "
                        "(bench/results/loader-thread-s31)")
    p.add_argument("--prefetch", type=int, default=None,
                   help="training batches the loader samples ahead on its own thread "
                        "(default: the loader's, 1 on CUDA and 0 on the CPU; 0: when "
                        "the loop asks, docs/Python-loader.md)")
    p.add_argument("--full-graph", action="store_true",
                   help="train on the whole graph each step (the accuracy baseline)")
    p.add_argument("--eval-every", type=int, default=0,
                   help="evaluate every K epochs (default: after the last one only)")
    return p.parse_args(argv)


class Run:
    """A training run on this rank: the data, the (DDP-wrapped) model, its
    optimiser and the loaders."""

    def __init__(self, args, rank: int, world: int, device):
        import gnnc.nn
        from gnnc.loader import NeighborLoader

        self.args, self.rank, self.world, self.device = args, rank, world, device
        self.distributed = dist.is_initialized()
        if args.graph.startswith("synthetic:"):
            self.data = synthetic(args.graph, args.train_fraction, device)
        else:
            self.data = planetoid(args.graph, device)
        data = self.data
        self.fanout = [int(v) for v in args.fanout.split(",")]
        torch.manual_seed(args.seed)  # the same initial model on every rank
        cls = SAGE if args.model == "sage" else GAT
        self.model = cls(gnnc.nn, data.x.size(1), args.hidden, data.num_classes,
                         len(self.fanout), args.dropout).to(device)
        ddp = ({"static_graph": True, "gradient_as_bucket_view": True}
               if args.ddp == "static" else {})
        self.net = (torch.nn.parallel.DistributedDataParallel(self.model, **ddp)
                    if self.distributed else self.model)
        fused = args.adam == "fused" and device.type == "cuda"
        self.opt = torch.optim.Adam(self.net.parameters(), lr=args.lr,
                                    **({"fused": True} if fused else {}))
        # Sampling differs per rank (its own RNG stream); the seed split is
        # the loader's (num_replicas/rank), the same permutation on every rank.
        torch.manual_seed(args.seed * 1000 + 1 + rank)
        share = {"num_replicas": world, "rank": rank} if self.distributed else {}
        self.train_loader = NeighborLoader(
            data, self.fanout, batch_size=args.batch_size, shuffle=True,
            input_nodes=data.splits["train"], seed=args.seed,
            feature_memory=args.feature_memory, graph_memory=args.graph_memory,
            prefetch=args.prefetch, **share)
        eval_sets = {k: v for k, v in data.splits.items() if k != "train"}
        if args.full_graph:
            self.eval_loaders = {k: v[rank::world] for k, v in eval_sets.items()}
            self.train_share = data.splits["train"][rank::world]
        else:
            self.eval_loaders = {k: NeighborLoader(data, self.fanout,
                                                   batch_size=args.batch_size,
                                                   input_nodes=v[rank::world],
                                                   feature_memory=args.feature_memory,
                                                   graph_memory=args.graph_memory)
                                 for k, v in eval_sets.items()}
            if device.type == "cuda":
                # What the loaders keep in host memory leaves the device.
                if args.graph_memory == "pinned":
                    data.edge_index = data.edge_index.cpu()
                if args.feature_memory == "pinned":
                    data.x = data.x.cpu()
                torch.cuda.empty_cache()
        self.sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def describe(self) -> str:
        a, d = self.args, self.data
        return (f"{a.model} on {a.graph}: {d.num_nodes} nodes, {d.edge_index.size(1)} "
                f"edges, {d.x.size(1)} features, {d.num_classes} classes; "
                f"{d.splits['train'].numel()} training seeds; fan-out {self.fanout}, "
                f"batch {a.batch_size}; {self.world} rank(s) on {self.device.type}"
                + (" (full graph)" if a.full_graph else "")
                + (f"; graph {a.graph_memory}, features {a.feature_memory}, "
                   f"{torch.cuda.memory_allocated(self.device) / 2**20:.0f} MiB on the "
                   f"device after setup" if self.device.type == "cuda" else ""))

    def train_epoch(self, epoch: int):
        """(seconds, seconds in the loader, training seeds, the sum of the
        steps' losses, steps) of one epoch. The losses stay on the device
        until the epoch ends (no read back per step)."""
        self.net.train()
        self.train_loader.set_epoch(epoch)
        self.sync()
        t0 = time.perf_counter()
        in_loader, seeds, losses = 0.0, 0, []
        if self.args.full_graph:
            self.opt.zero_grad()
            out = self.net(self.data.x, self.data.edge_index)
            loss = F.cross_entropy(out[self.train_share], self.data.y[self.train_share])
            loss.backward()
            self.opt.step()
            seeds = self.train_share.numel()
            losses.append(loss.detach())
        else:
            it = iter(self.train_loader)
            while True:
                t1 = time.perf_counter()
                batch = next(it, None)
                in_loader += time.perf_counter() - t1
                if batch is None:
                    break
                self.opt.zero_grad()
                out = self.net(batch.x, batch.edge_index,
                               *hop_counts(batch, self.args))[:batch.batch_size]
                loss = F.cross_entropy(out, batch.y[:batch.batch_size])
                loss.backward()
                self.opt.step()
                seeds += batch.batch_size
                losses.append(loss.detach())
        self.sync()
        elapsed = time.perf_counter() - t0
        loss_sum = float(torch.stack(losses).sum()) if losses else 0.0
        return elapsed, in_loader, seeds, loss_sum, len(losses)

    def accuracies(self) -> dict:
        """Accuracy per evaluation set, over every rank's share."""
        results = {}
        for name, loader in self.eval_loaders.items():
            correct, total = all_sum(evaluate(self.model, loader, self.data, self.args),
                                     self.device, self.distributed)
            results[name] = correct / max(total, 1)
        return results


def main(argv=None):
    args = parse_args(argv)
    rank, world, device = setup()
    run = Run(args, rank, world, device)
    if rank == 0:
        print(run.describe(), flush=True)
    times = []
    for epoch in range(args.epochs):
        elapsed, in_loader, seeds, loss_sum, steps = run.train_epoch(epoch)
        slowest = all_max(elapsed, device, run.distributed)
        total_seeds, total_loss, total_steps = all_sum([seeds, loss_sum, steps], device,
                                                       run.distributed)
        times.append(slowest)
        if rank == 0:
            print(f"epoch {epoch:3d}  {slowest * 1e3:9.1f} ms  "
                  f"{total_seeds / slowest:10.0f} seeds/s  "
                  f"loss {total_loss / max(total_steps, 1):.4f}  "
                  f"loader {100 * in_loader / elapsed:5.1f} % of rank 0's time", flush=True)
        last = epoch + 1 == args.epochs
        if last or (args.eval_every and (epoch + 1) % args.eval_every == 0):
            results = run.accuracies()
            if rank == 0:
                print("  " + "  ".join(f"{k} accuracy {100 * v:.1f} %"
                                       for k, v in results.items()), flush=True)
    if rank == 0 and times:
        steady = times[1:] or times
        print(f"median epoch {statistics.median(steady) * 1e3:.1f} ms (after the first)")
    if run.distributed:
        # Every rank reaches the end before any tears gloo down: a rank
        # whose peer had already closed its connections aborted at exit
        # ("terminate called without an active exception", once in about
        # 30 two-process CPU runs).
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
