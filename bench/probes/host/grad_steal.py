"""Whether autograd's AccumulateGrad keeps the gradients a gnnc layer's
backward op returns (the parameters' and the input's `.grad` are then the
op's tensors) or copies each one (a kernel and an allocation per parameter
per step): bench/gine.py's GINE layer (layer 1 of its model) on a QM9
batch, four forward+backward calls, counting the gradients whose storage is
the one `torch.ops.gnnc.call_backward` returned. The recorder keeps only
data pointers: a reference to the returned tensors would itself make
AccumulateGrad copy them (as the memoised tensors of _cached.StubbedOps do).

    python bench/probes/host/grad_steal.py QM9_DIR [--device cuda] [--batch 8]"""
import argparse
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch  # noqa: E402
import gine as G  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("dataset", type=pathlib.Path)
ap.add_argument("--device", default="cpu")
ap.add_argument("--batch", type=int, default=8)
args = ap.parse_args()
dev = torch.device(args.device)
_, model, x, ei, ea = G.probe_setup(args.dataset, dev, args.batch)
conv = model.convs[1]
h = torch.randn(x.size(0), 64, requires_grad=True, device=dev)
g = torch.ones(x.size(0), 64, device=dev)
params = list(conv.parameters())
real = torch.ops.gnnc.call_backward
returned = []


def recording(*a, **k):
    out = real(*a, **k)
    returned.append([t.data_ptr() for t in out if isinstance(t, torch.Tensor)])
    return out


kept_all = True
for i in range(4):
    returned.clear()
    for p in params:
        p.grad = None
    h.grad = None
    torch.ops.gnnc.call_backward = recording
    try:
        conv(h, ei, ea).backward(g)
    finally:
        torch.ops.gnnc.call_backward = real
    ptrs = {p for call in returned for p in call}
    kept = sum(p.grad.data_ptr() in ptrs for p in params)
    kept_all &= kept == len(params) and h.grad.data_ptr() in ptrs
    print(f"call {i}: {len(returned)} backward op call(s); parameter gradients kept "
          f"{kept} of {len(params)}, input gradient kept {h.grad.data_ptr() in ptrs}")
print(f"{'every gradient kept' if kept_all else 'COPIED'} "
      f"({torch.cuda.get_device_name(dev) if dev.type == 'cuda' else 'cpu'})")
