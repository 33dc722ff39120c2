"""GIN layers whose `nn` is PyG's MLP (gnnc.nn.GIN's layers; GINConv(MLP(...)))
with their call plan (conv._GinPlan over conv._mlp_state) against the same
layers deciding anew on every call (the plan never kept: "walk"), in one
process, rounds interleaved, and PyG's models.GIN beside them: host us per
call of gnnc.nn.GIN(64, 64, 2, 64) on a 1,000-node, 10,000-edge graph,
forward under no_grad and forward+backward.
    python bench/probes/host/gin_mlp_plan_ab.py [--rounds 5] [--device cuda]"""
import argparse, os, sys
os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402
import gnnc.nn  # noqa: E402
from _cached import per_call, print_medians  # noqa: E402
from gnnc.nn import conv  # noqa: E402
from torch_geometric.nn import models as pyg_models  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--calls", type=int, default=200)
ap.add_argument("--device", default="cuda")
args = ap.parse_args()
dev = torch.device(args.device)
gen = torch.Generator().manual_seed(3)
n, e, c = 1000, 10000, 64
ei = torch.randint(0, n, (2, e), generator=gen).to(dev)
x = torch.randn(n, c, generator=gen).to(dev)
xg = x.clone().requires_grad_()
state = conv._mlp_state


def plan(on: bool, model) -> None:
    conv._mlp_state = state if on else (lambda mlp: None)
    for layer in model.convs:
        layer.__dict__.pop("_gnnc_plan", None)


def host_us(f, k):
    return per_call(f, k, warmup=10)


torch.manual_seed(0)
pyg = pyg_models.GIN(c, c, 2, c).to(dev)
ours = gnnc.nn.GIN(c, c, 2, c).to(dev)
ours.load_state_dict(pyg.state_dict())
res = {}
for _ in range(args.rounds):
    for tag, m in (("plan", ours), ("walk", ours), ("pyg", pyg)):
        if m is ours:
            plan(tag == "plan", ours)

        def fwd():
            with torch.no_grad():
                m(x, ei)
        res.setdefault(("fwd", tag), []).append(host_us(fwd, args.calls))
        res.setdefault(("fwd+bwd", tag), []).append(
            host_us(lambda: m(xg, ei).sum().backward(), args.calls // 2))
plan(True, ours)
print(f"gnnc.nn.GIN(64, 64, 2, 64), {n} nodes, {e} edges, "
      f"{torch.cuda.get_device_name() if dev.type == 'cuda' else 'cpu'}")
print_medians(res)
