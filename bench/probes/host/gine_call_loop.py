"""One GINE layer's calls back to back, for a sampling profiler (py-spy
--native): bench/gine.py's model and QM9 batch (probe_setup), its layer 1
called on the layer's input for --seconds, in the mode given: `nograd`
(under torch.no_grad: the plain function's op), `grad` (autograd recording,
the output dropped: the training forward's op and its autograd node), or
`step` (forward and backward of that layer alone: out.backward(dy), the
backward on the autograd engine's thread). A synchronisation every 50
calls keeps the queue short. Prints the calls made and the mean host time
a call (us).
    python bench/probes/host/gine_call_loop.py QM9_DIR {nograd,grad,step} [--seconds 6]"""
import argparse, os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G

ap = argparse.ArgumentParser()
ap.add_argument("dataset", type=pathlib.Path)
ap.add_argument("mode", choices=("nograd", "grad", "step"))
ap.add_argument("--seconds", type=float, default=6.0)
args = ap.parse_args()
dev = torch.device("cuda")
_, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
conv = ours.convs[1]
h = torch.relu(ours.encoder(x)).detach().requires_grad_(args.mode != "nograd")
dy = torch.randn(x.size(0), 64, device=dev)
for _ in range(20):  # compile, capture the replays
    out = conv(h, ei, ea)
    if args.mode == "step":
        out.backward(dy)
torch.cuda.synchronize()
calls, t0 = 0, time.perf_counter()
end = t0 + args.seconds
while time.perf_counter() < end:
    for _ in range(50):
        if args.mode == "nograd":
            with torch.no_grad():
                conv(h, ei, ea)
        elif args.mode == "grad":
            conv(h, ei, ea)
        else:
            conv(h, ei, ea).backward(dy)
    torch.cuda.synchronize()
    calls += 50
dt = time.perf_counter() - t0
print(f"{args.mode}: {calls} calls, {dt / calls * 1e6:.1f} us a call "
      f"({torch.cuda.get_device_name()})")
