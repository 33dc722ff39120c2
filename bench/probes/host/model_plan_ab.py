"""models.GCN's call plan (models._GcnModelPlan) measured in one process, so
that the host's drift between processes does not decide (issue 28): the
plan kept ("plan") against the plan never kept ("walk": every call takes
the full path, _one_function's walk over the model), rounds interleaved.
  host   host us per call of models.GCN on Cora (1433 -> 16 -> 7): forward
         under no_grad, and forward+backward (`.sum().backward()`)
  epoch  train_cora.py's epoch with the whole-model classes (input dropout,
         the model with dropout 0.5, cross-entropy on the training rows,
         backward, Adam), synchronised per epoch, median ms: gnnc with and
         without the plan and PyG's models.GCN, interleaved per round
    python bench/probes/host/model_plan_ab.py [--rounds 5] [--fused-adam]
        [--backward-on-calling-thread]"""
import argparse, os, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "examples", "python"))
os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import train_cora  # noqa: E402
from _cached import per_call, print_medians  # noqa: E402
import gnnc.nn  # noqa: E402
from gnnc.nn import models  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--calls", type=int, default=200)
ap.add_argument("--epochs", type=int, default=100)
ap.add_argument("--dataset", default="cora")
ap.add_argument("--fused-adam", action="store_true")
ap.add_argument("--backward-on-calling-thread", action="store_true")
ap.add_argument("--device", default="cuda")
args = ap.parse_args()
if args.backward_on_calling_thread:
    torch.autograd.set_multithreading_enabled(False)
dev = torch.device(args.device)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
x, edge_index, y, masks, classes = train_cora.load_planetoid(
    train_cora.find_dataset(args.dataset), dev)
rows = masks["train"].nonzero().squeeze(1)
keep = models._GcnModelPlan.keep


def plan(on: bool, model) -> None:
    models._GcnModelPlan.keep = keep if on else staticmethod(lambda *a, **k: None)
    model.__dict__.pop("_gnnc_plan", None)


def host_us(f, k):
    return per_call(f, k, warmup=10)


torch.manual_seed(0)
m = gnnc.nn.models.GCN(x.size(1), 16, 2, classes).to(dev)
res = {}
for _ in range(args.rounds):
    for on in (True, False):
        plan(on, m)
        tag = "plan" if on else "walk"

        def fwd():
            with torch.no_grad():
                m(x, edge_index)
        res.setdefault(("fwd", tag), []).append(host_us(fwd, args.calls))
        res.setdefault(("fwd+bwd", tag), []).append(
            host_us(lambda: m(x, edge_index).sum().backward(), args.calls // 2))
print_medians(res)


def trainer(lib):
    torch.manual_seed(0)
    model = train_cora.GCNModel(lib, x.size(1), classes).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4,
                           fused=args.fused_adam or None)
    model.train()

    def epoch():
        opt.zero_grad()
        out = model(x, edge_index)
        F.cross_entropy(out[rows], y[rows]).backward()
        opt.step()
    return model, epoch


import torch_geometric.nn as pyg_nn  # noqa: E402
sides = {"gnnc plan": trainer(gnnc.nn), "gnnc walk": trainer(gnnc.nn),
         "pyg": trainer(pyg_nn)}
times = {k: [] for k in sides}
for _ in range(args.rounds):
    for name, (model, epoch) in sides.items():
        if name.startswith("gnnc"):
            plan(name == "gnnc plan", model.gcn)
        for i in range(args.epochs):
            sync()
            t = time.perf_counter()
            epoch()
            sync()
            if i >= 5:
                times[name].append((time.perf_counter() - t) * 1e3)
plan(True, sides["gnnc plan"][0].gcn)
med = {k: statistics.median(v) for k, v in times.items()}
print(f"epoch ({args.dataset}, fused Adam {args.fused_adam}, backward on the calling "
      f"thread {args.backward_on_calling_thread}; {torch.cuda.get_device_name() if dev.type == 'cuda' else 'cpu'}): " +
      ", ".join(f"{k} {v:.3f} ms" for k, v in med.items()) +
      f"; PyG / gnnc plan {med['pyg'] / med['gnnc plan']:.2f}x, "
      f"PyG / gnnc walk {med['pyg'] / med['gnnc walk']:.2f}x")
