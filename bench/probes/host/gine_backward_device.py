"""Device time of a GINE model's backward (bench/gine.py's model, batch
4096, 3 layers, hidden 64): K backward passes of one forward's graph
(``torch.autograd.grad`` with ``retain_graph``) queued without a
synchronisation, timed with CUDA events, so the figure is the device's
whenever the host queues faster than the kernels run (gnnc's backward:
about 90 us of host against 160 of kernels a layer on an H100, session
75); and K whole steps (forward + backward) queued the same way. For A/B
of runtime changes in alternating processes (GNNC_CONCURRENT_LAUNCHES=0:
the windows of steps beside others in order).
    python bench/probes/host/gine_backward_device.py QM9_DIR [K]"""
import json, os, pathlib, sys
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G

dev = torch.device("cuda")
K = int(sys.argv[2]) if len(sys.argv) > 2 else 100
pyg, ours, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)


def timed(fn, k):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(k):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / k * 1e3  # us


result = {"device": torch.cuda.get_device_name(),
          "concurrent": os.environ.get("GNNC_CONCURRENT_LAUNCHES", "1")}
for name, m in (("pyg", pyg), ("gnnc", ours)):
    params = list(m.parameters())
    loss = m(x, ei, ea).square().mean()
    result[f"{name}_backward_us"] = round(timed(
        lambda: torch.autograd.grad(loss, params, retain_graph=True), K), 1)

    def step():
        for p in params:
            p.grad = None
        m(x, ei, ea).square().mean().backward()
    result[f"{name}_step_us"] = round(timed(step, K), 1)
print(json.dumps(result))
