"""One GINE layer's calls back to back, for a sampling profiler (py-spy
--native): bench/gine.py's model and QM9 batch (probe_setup), its layer 1
called on the layer's input for --seconds, in the mode given: `nograd`
(under torch.no_grad: the plain function's op), `grad` (autograd recording,
the output dropped: the training forward's op and its autograd node),
`step` (forward and backward of that layer alone: out.backward(dy), the
backward on the autograd engine's thread), `op` (the training forward's
op alone, torch.ops.gnnc.call on the layer's step target with the
arguments a planned call passes: no Python layer, no autograd), `alloc`
(two torch.empty of the op's outputs' sizes: the allocator's share). A
synchronisation every 50 calls keeps the queue short. Prints the calls
made and the mean host time a call (us).
    python bench/probes/host/gine_call_loop.py QM9_DIR MODE [--seconds 6]"""
import argparse, os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G

ap = argparse.ArgumentParser()
ap.add_argument("dataset", type=pathlib.Path)
ap.add_argument("mode", choices=("nograd", "grad", "step", "op", "alloc"))
ap.add_argument("--seconds", type=float, default=6.0)
ap.add_argument("--device", default="cuda", help="cpu: a smoke test")
args = ap.parse_args()
dev = torch.device(args.device)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
_, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
conv = ours.convs[1]
h = torch.relu(ours.encoder(x)).detach().requires_grad_(args.mode != "nograd")
if args.mode in ("op", "alloc"):
    sys.path.insert(0, os.path.dirname(__file__))
    from _cached import op_calls
    from gnnc import _core
    (fn, e_i, n, tensors, graph), = op_calls(lambda: conv(h, ei, ea))
    op_args = (fn._step, e_i, *_core._op_sizes(n), graph, list(tensors))
    sizes = [o.shape for o in torch.ops.gnnc.call(*op_args)]
dy = torch.randn(x.size(0), 64, device=dev)
for _ in range(20):  # compile, capture the replays
    if args.mode == "op":
        torch.ops.gnnc.call(*op_args)
        continue
    out = conv(h, ei, ea)
    if args.mode == "step":
        out.backward(dy)
sync()
calls, t0 = 0, time.perf_counter()
end = t0 + args.seconds
while time.perf_counter() < end:
    for _ in range(50):
        if args.mode == "nograd":
            with torch.no_grad():
                conv(h, ei, ea)
        elif args.mode == "grad":
            conv(h, ei, ea)
        elif args.mode == "op":
            torch.ops.gnnc.call(*op_args)
        elif args.mode == "alloc":
            for shape in sizes:
                torch.empty(shape, device=dev, dtype=torch.uint8 if len(shape) == 1 else None)
        else:
            conv(h, ei, ea).backward(dy)
    sync()
    calls += 50
dt = time.perf_counter() - t0
print(f"{args.mode}: {calls} calls, {dt / calls * 1e6:.1f} us a call "
      f"({torch.cuda.get_device_name() if dev.type == 'cuda' else 'cpu'})")
