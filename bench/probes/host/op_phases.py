"""Host time per phase of gnnc's C++ op calls (a module built with the
probe patch bench/results/checks-s72/host-timing.patch, which exposes
_gnnc.probe_times): GINE's model on QM9 (bench/gine.py's), the device kept
busy so that no call waits for it.
    python bench/probes/host/op_phases.py QM9_DIR"""
import os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import gine as G
import _cached
from gnnc import _gnnc

NAMES = {0: "fwd: targetOf+sizes+checkTensors(inputs)", 1: "fwd: graphOf",
         2: "fwd: allocate outputs", 3: "fwd: alignForVectors",
         4: "both: DeviceGuard + current stream", 5: "both: variantOf+staleFill+pendingCheck",
         6: "fwd: workspace size + alloc", 11: "fwd: after run (usedOn, return)",
         16: "bwd: targetOf+sizes+checkTensors(3 lists)", 18: "bwd: graphOf+allocate grads",
         19: "bwd: alignForVectors x3", 22: "bwd: workspace size + alloc",
         27: "bwd: after run (usedOn, return)",
         32: "run: checkGraph+driver current", 33: "run: scope+planFor+bind",
         34: "run: capturing check+runKey", 35: "run: lock+replay lookup",
         36: "run: cudaGraphLaunch"}


def report(label, calls):
    t = _gnnc.probe_times()
    print(f"### {label} (us per op call; {calls} op calls)")
    total = 0
    for i, (s, c) in enumerate(t):
        if c:
            total += s
            print(f"  {s / 1e3 / calls:7.2f}  {NAMES.get(i, i)}  (x{c / calls:.1f})")
    print(f"  {total / 1e3 / calls:7.2f}  total inside C++")
    _gnnc.probe_reset()


dev = torch.device("cuda")
pyg, m, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)
params = list(m.parameters())
N = 100
for _ in range(20):
    for p in params:
        p.grad = None
    m(x, ei, ea).square().mean().backward()
torch.cuda.synchronize()
print(f"device {torch.cuda.get_device_name()}")
for rnd in range(2):
    _gnnc.probe_reset()
    torch.cuda._sleep(200_000_000)
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(N):
            m(x, ei, ea)
    h = (time.perf_counter() - t0) / N * 1e6
    torch.cuda.synchronize()
    print(f"model forward no_grad: {h:.1f} us host per call")
    report("forward no_grad", 3 * N)
    torch.cuda._sleep(400_000_000)
    t0 = time.perf_counter()
    for _ in range(N // 2):
        for p in params:
            p.grad = None
        m(x, ei, ea).square().mean().backward()
    h = (time.perf_counter() - t0) / (N // 2) * 1e6
    torch.cuda.synchronize()
    print(f"training step: {h:.1f} us host per step")
    report("training steps (forward and backward op calls)", 3 * (N // 2))
    # The op alone, called directly with one layer's recorded arguments.
    with torch.no_grad():
        calls = _cached.op_calls(lambda: m.convs[1](x.new_zeros(x.size(0), 64), ei, ea))
    fn, e_i, n, tensors, graph = calls[0]
    from gnnc._core import _op_sizes
    args = (fn._target, e_i, *_op_sizes(n), graph, list(tensors))
    torch.cuda._sleep(200_000_000)
    t0 = time.perf_counter()
    for _ in range(N):
        torch.ops.gnnc.call(*args)
    h = (time.perf_counter() - t0) / N * 1e6
    torch.cuda.synchronize()
    print(f"torch.ops.gnnc.call direct: {h:.1f} us host per call")
    report("direct op calls", N)
    torch.cuda._sleep(100_000_000)
    t0 = time.perf_counter()
    for _ in range(N):
        for k in range(5):
            torch.empty((36000, 64), device=dev)
    h = (time.perf_counter() - t0) / N / 5 * 1e6
    torch.cuda.synchronize()
    print(f"torch.empty on the GPU: {h:.2f} us host each")
