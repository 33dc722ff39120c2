"""Where a GINE training step on QM9 (bench/gine.py's model, batch 4096)
leaves the device idle: per side, 8 steps under torch.profiler (which
inflates every host op 2-5x: the idle stretches it finds are the
profiler's too; gine_split.py measures without it); per step
the wall time, the device's busy time (the union of its kernels and
copies), and every idle stretch of the device with the host op running
when the kernel that ended it was launched (the innermost CPU ops around
that launch), summed over the steps by op.
    python bench/probes/host/gine_timeline.py QM9_DIR [--side gnnc|pyg|both]
Writes trace-<side>.json.gz (chrome traces) to $OUT (or /tmp)."""
import argparse, bisect, collections, gzip, json, os, pathlib, shutil, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G
from torch.profiler import profile, ProfilerActivity, record_function

STEPS = 8


def analyse(path, label):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    # (The host's annotation; the profiler also writes a device copy of it.)
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("name") == "probe_step" and
                   e.get("cat") == "user_annotation")
    device = sorted((e["ts"], e["ts"] + e["dur"], e.get("args", {}).get("correlation"))
                    for e in events if e.get("ph") == "X" and
                    e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    launches = {e.get("args", {}).get("correlation"): e for e in events
                if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"}
    ops = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                 if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "python_function")
                 and e.get("tid") is not None)
    op_starts = [o[0] for o in ops]

    def around(ts):
        """The innermost three CPU ops containing host time ts."""
        i = bisect.bisect_right(op_starts, ts)
        inside = [o for o in ops[max(0, i - 400):i] if o[1] >= ts]
        inside.sort(key=lambda o: o[1] - o[0])
        return " < ".join(o[2][:40] for o in inside[:3]) or "(none)"

    by_op = collections.Counter()
    print(f"### {label}")
    print("| step | wall us | device busy us | idle us | idle stretches > 5 us |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for s0, s1 in steps:
        ks = [d for d in device if d[0] >= s0 and d[0] <= s1 + 2000]
        busy, end, first = 0.0, None, None
        gaps = []
        for a, b, corr in ks:
            if end is None:
                first = a
            elif a > end:
                gaps.append((a - end, corr))
            if end is None or b > end:
                busy += b - max(a, end if end is not None else a)
                end = b
        last = end or s1
        n = 0
        for g, corr in gaps:
            if g <= 5:
                continue
            n += 1
            launch = launches.get(corr)
            by_op[around(launch["ts"]) if launch else "(no launch)"] += g
        lead = (first - s0) if first is not None else 0
        by_op["(before the step's first kernel)"] += lead
        wall = max(s1, last) - s0
        print(f"| | {wall:.0f} | {busy:.0f} | {wall - busy:.0f} | {n} |")
    total = sum(by_op.values())
    print(f"\nidle device time by the host op launching the next kernel "
          f"(sum over {len(steps)} steps, {total:.0f} us):")
    for op, g in by_op.most_common(25):
        print(f"  {g / len(steps):8.1f} us/step  {op}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", type=pathlib.Path)
    ap.add_argument("--side", default="both")
    args = ap.parse_args()
    out = pathlib.Path(os.environ.get("OUT", "/tmp"))
    dev = torch.device("cuda")
    pyg, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
    sides = [s for s in (("gnnc", ours), ("pyg", pyg)) if args.side in ("both", s[0])]
    for name, m in sides:
        params = list(m.parameters())

        def step():
            for p in params:
                p.grad = None
            m(x, ei, ea).square().mean().backward()
        times = []
        for i in range(60):
            torch.cuda.synchronize(); t0 = time.perf_counter()
            step()
            torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
        times = sorted(times[10:])
        print(f"{name}: step {times[len(times) // 2] * 1e3:.3f} ms median unprofiled")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(STEPS):
                torch.cuda.synchronize()
                with record_function("probe_step"):
                    step()
                torch.cuda.synchronize()
        path = f"/tmp/trace-{name}.json"
        prof.export_chrome_trace(path)
        analyse(path, name)
        with open(path, "rb") as f, gzip.open(out / f"trace-{name}.json.gz", "wb") as g:
            shutil.copyfileobj(f, g)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--analyse":
        analyse(sys.argv[2], sys.argv[2])
    else:
        main()
