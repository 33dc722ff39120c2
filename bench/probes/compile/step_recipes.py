#!/usr/bin/env python3
"""Cora/Citeseer training step under torch.compile(mode="reduce-overhead"),
three ways a user may apply it, gnnc and PyG in one process:

  eager      no compile
  model      torch.compile(model, mode="reduce-overhead"); the loss, the
             backward and Adam eager (what train_cora.py --compile did before
             session 66)
  loss       the model and the loss in one compiled function
             (reduce-overhead); the backward and Adam eager
  loss+opt   as loss, and Adam's step compiled too (reduce-overhead;
             PyTorch's compiled-optimizer recipe)

    python bench/probes/compile/step_recipes.py [--dataset cora] [--model gcn]
        [--libs gnnc,pyg,mlp] [--recipes eager,model,loss,loss+opt] [--epochs 200]
        [--profile RECIPE]

Lib "mlp" (GCN only): the same model with each GCNConv replaced by its
Linear, no graph: the floor under every library's epoch in that recipe.

Per run: the median epoch (step synchronised, ms) after the first 10 and
the test accuracy at the best validation epoch (train_cora.fit)."""
import argparse, sys, time, statistics, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import torch, torch.nn.functional as F
import train_cora as tc

p = argparse.ArgumentParser()
p.add_argument("--dataset", default="cora")
p.add_argument("--model", default="gcn")
p.add_argument("--libs", default="gnnc,pyg")
p.add_argument("--recipes", default="eager,model,loss,loss+opt")
p.add_argument("--epochs", type=int, default=200)
p.add_argument("--seeds", type=int, default=3)
p.add_argument("--profile", default="")
p.add_argument("--device", default="cuda")
p.add_argument("--static", action="store_true",
               help="mark x, y, edge_index and the training rows static "
                    "(torch._dynamo.mark_static_address): the CUDA-graph trees "
                    "then do not copy them into their own buffers every step")
p.add_argument("--skip-module-guards", action="store_true",
               help="compile with guard_filter_fn="
                    "torch.compiler.skip_guard_on_all_nn_modules_unsafe")
a = p.parse_args()
dev = torch.device(a.device)
data = tc.load_planetoid(tc.find_dataset(a.dataset), dev)
x, ei, y, masks, classes = data
rows = masks["train"].nonzero().squeeze(1)
if a.static:
    for t in (x, ei, y, rows):
        torch._dynamo.mark_static_address(t)
# mode="reduce-overhead" is options={"triton.cudagraphs": True}; torch.compile
# takes one or the other.
MODE = {} if a.skip_module_guards else {"mode": "reduce-overhead"}
if a.skip_module_guards:
    MODE["options"] = {"triton.cudagraphs": True,
                       "guard_filter_fn": torch.compiler.skip_guard_on_all_nn_modules_unsafe}


class _NoGraph(torch.nn.Module):
    """A layer without its graph: the Linear a GCNConv holds, edge_index
    ignored. Lib "mlp" builds the models from it, so a recipe's epoch on it
    is the floor every graph library's epoch sits on (the same parameters,
    dropout, loss and optimiser; no propagation)."""

    def __init__(self, fin, fout, **kwargs):
        super().__init__()
        self.lin = torch.nn.Linear(fin, fout)

    def forward(self, x, edge_index):
        return self.lin(x)


def lib(name):
    if name == "mlp":
        import types
        return types.SimpleNamespace(GCNConv=_NoGraph)
    if name == "gnnc":
        import gnnc.nn
        return gnnc.nn
    import torch_geometric.nn
    return torch_geometric.nn


def build(nn, recipe, seed):
    torch.manual_seed(seed)
    cls, lr = tc.SETTINGS[a.model]
    model = cls(nn, x.shape[1], classes).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4,
                           capturable=(recipe == "loss+opt"))
    fwd = model
    if recipe == "model":
        fwd = torch.compile(model, fullgraph=True, **MODE)

    def loss_of():
        return F.cross_entropy(fwd(x, ei)[rows], y[rows])
    if recipe in ("loss", "loss+opt"):
        loss_of = torch.compile(loss_of, fullgraph=True, **MODE)
    opt_step = opt.step
    if recipe == "loss+opt":
        opt_step = torch.compile(opt.step, **MODE)

    def zero():
        opt.zero_grad(set_to_none=True)

    def epoch():
        if recipe != "eager":
            # A new step: the CUDA-graph trees may reuse the last one's
            # outputs (the optimiser's graph ran since the loss's).
            torch.compiler.cudagraph_mark_step_begin()
        opt.zero_grad(set_to_none=True)
        loss_of().backward()
        opt_step()
    epoch.zero, epoch.loss, epoch.opt = zero, loss_of, opt_step
    return model, epoch


for libname in a.libs.split(","):
    nn = lib(libname)
    for recipe in a.recipes.split(","):
        accs, times = [], []
        try:
            for seed in range(a.seeds):
                model, epoch = build(nn, recipe, seed)
                t0 = time.perf_counter()
                acc, ms = tc.fit(model, data, a.epochs, epoch, dev)
                accs.append(acc * 100); times.append(ms)
            print(f"{a.dataset} {a.model} {libname:5s} {recipe:9s} epoch {statistics.median(times):.3f} ms "
                  f"(seeds {' '.join(f'{t:.3f}' for t in times)}) acc {statistics.mean(accs):.1f}", flush=True)
        except Exception as e:  # report and go on with the next recipe
            print(f"{a.dataset} {a.model} {libname:5s} {recipe:9s} FAILED {type(e).__name__}: "
                  f"{str(e)[:600]}", flush=True)
            continue
        if a.profile == recipe:
            # fit() leaves the model in eval mode: back to training (else the
            # compiled code recompiles for it), warm steps, then the parts
            # timed apart (synchronised) and a torch.profiler table.
            model.train()
            for _ in range(30):
                epoch()
            parts = {"zero_grad": [], "forward+loss": [], "backward": [], "opt": [], "step": []}
            sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
            for _ in range(100):
                sync(); t0 = time.perf_counter()
                if recipe != "eager":
                    torch.compiler.cudagraph_mark_step_begin()
                epoch.zero()
                sync(); t1 = time.perf_counter()
                loss = epoch.loss()
                sync(); t2 = time.perf_counter()
                loss.backward()
                sync(); t3 = time.perf_counter()
                epoch.opt()
                sync(); t4 = time.perf_counter()
                for k, v in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
                    parts[k].append(v * 1e3)
            print("parts (synchronised, median ms): " + ", ".join(
                f"{k} {statistics.median(v):.3f}" for k, v in parts.items()), flush=True)
            from torch.profiler import profile, ProfilerActivity, schedule
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                         schedule=schedule(wait=2, warmup=3, active=20)) as prof:
                for _ in range(25):
                    epoch()
                    prof.step()
                sync()
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40,
                                            max_name_column_width=70), flush=True)
