"""Where one GINEConv layer's forward+backward (bench/gine.py --layer-only,
QM9 batch, hidden 64, edge_dim 4) spends its time on the device: per
side, 5 iterations of `(layer(h, edge_index, edge_attr) * dy).sum()
.backward()` under torch.profiler, and for each iteration every kernel
(stream, start relative to the iteration's start, duration), the host's
launches of gnnc's runs (cudaGraphLaunch / cuGraphLaunch) and the
iteration's end. The profiler slows the host 2-5x, so host offsets are
not the unprofiled ones; the kernels' own durations and their overlap
inside one replayed run are.
    python bench/probes/host/gine_layer_timeline.py QM9_DIR [--batch 4096]
        [--side gnnc|pyg|both]"""
import argparse, json, os, pathlib, sys, tempfile
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G
from torch.profiler import profile, ProfilerActivity, record_function

ITERS = 5


def report(trace, label):
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    iters = sorted((e["ts"], e["ts"] + e["dur"]) for e in xs
                   if e.get("name") == "probe_iter" and e.get("cat") == "user_annotation")
    kernels = sorted((e["ts"], e["dur"], e.get("tid"), e["name"]) for e in xs
                     if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    launches = sorted((e["ts"], e["name"]) for e in xs if e.get("cat") == "cuda_runtime"
                      and "GraphLaunch" in e["name"])
    for n, (t0, t1) in enumerate(iters):
        # A kernel belongs to the iteration whose host span began before it
        # started (the device lags the host).
        nxt = iters[n + 1][0] if n + 1 < len(iters) else float("inf")
        ks = [k for k in kernels if t0 <= k[0] < nxt]
        ls = [l for l in launches if t0 <= l[0] < t1]
        print(f"{label} iteration {n}: host {t1 - t0:.1f} us; graph launches at "
              + ", ".join(f"{l[0] - t0:.1f}" for l in ls))
        busy = 0.0
        last = t0
        for ts, dur, tid, name in ks:
            busy += max(0.0, ts + dur - max(ts, last))
            last = max(last, ts + dur)
            print(f"  {ts - t0:8.1f} {dur:7.1f} s{tid} {name[:70]}")
        if ks:
            print(f"  device: first kernel {ks[0][0] - t0:.1f}, last ends "
                  f"{max(k[0] + k[1] for k in ks) - t0:.1f} us; busy {busy:.1f} us; "
                  f"kernels {sum(k[1] for k in ks):.1f} us summed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", type=pathlib.Path)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--side", default="both", choices=("gnnc", "pyg", "both"))
    args = ap.parse_args()
    dev = torch.device("cuda")
    pyg, ours, x, ei, ea = G.probe_setup(args.dataset, dev, args.batch)
    with torch.no_grad():
        h = torch.relu(pyg.encoder(x))
    h.requires_grad_()
    dy = torch.randn(x.size(0), 64, device=dev,
                     generator=torch.Generator(device=dev).manual_seed(0))
    print(f"{torch.cuda.get_device_name(dev)}; batch {args.batch}: nodes {x.size(0)}, "
          f"edges {ei.size(1)}")
    sides = {"pyg": pyg.convs[1], "gnnc": ours.convs[1]}
    for name in (("pyg", "gnnc") if args.side == "both" else (args.side,)):
        layer = sides[name]
        params = list(layer.parameters())

        def step():
            for p in params:
                p.grad = None
            h.grad = None
            (layer(h, ei, ea) * dy).sum().backward()
        for _ in range(30):
            step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(ITERS):
                with record_function("probe_iter"):
                    step()
                    torch.cuda.synchronize()
        path = os.path.join(tempfile.mkdtemp(), f"{name}.json")
        prof.export_chrome_trace(path)
        report(path, name)


if __name__ == "__main__":
    main()
