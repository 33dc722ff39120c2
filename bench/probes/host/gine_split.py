"""A GINE training step on QM9 (bench/gine.py's model, batch 4096) split
into host and device time, without a profiler: the device is first kept
busy (torch.cuda._sleep), so the step's host calls never wait for it and
its kernels queue up; the host time of the forward (autograd recording)
and of backward() is then pure host time, and CUDA events around them
time the device's work alone. Also the plain step (synchronised before
and after) for each side, and each side's with the calling-thread backward
(torch.autograd.set_multithreading_enabled(False)).
    python bench/probes/host/gine_split.py QM9_DIR [--rounds 40]"""
import argparse, os, pathlib, statistics, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G


def split(m, x, ei, ea, rounds, sleep_cycles):
    params = list(m.parameters())
    rows = {k: [] for k in ("step", "host_fwd", "host_bwd", "dev_fwd", "dev_bwd",
                            "host_fwd_nograd", "dev_fwd_nograd")}
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    for r in range(rounds + 5):
        for p in params:
            p.grad = None
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        m(x, ei, ea).square().mean().backward()
        torch.cuda.synchronize()
        step = time.perf_counter() - t0
        for p in params:
            p.grad = None
        torch.cuda._sleep(sleep_cycles)
        ev[0].record()
        t0 = time.perf_counter()
        loss = m(x, ei, ea).square().mean()
        t1 = time.perf_counter()
        ev[1].record()
        loss.backward()
        t2 = time.perf_counter()
        ev[2].record()
        torch.cuda.synchronize()
        busy = ev[0].elapsed_time(ev[1]) * 1e3, ev[1].elapsed_time(ev[2]) * 1e3
        torch.cuda._sleep(sleep_cycles)
        ev[0].record()
        t3 = time.perf_counter()
        with torch.no_grad():
            m(x, ei, ea)
        t4 = time.perf_counter()
        ev[1].record()
        torch.cuda.synchronize()
        if r >= 5:
            rows["step"].append(step * 1e6)
            rows["host_fwd"].append((t1 - t0) * 1e6)
            rows["host_bwd"].append((t2 - t1) * 1e6)
            rows["dev_fwd"].append(busy[0])
            rows["dev_bwd"].append(busy[1])
            rows["host_fwd_nograd"].append((t4 - t3) * 1e6)
            rows["dev_fwd_nograd"].append(ev[0].elapsed_time(ev[1]) * 1e3)
    return {k: statistics.median(v) for k, v in rows.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", type=pathlib.Path)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--sleep", type=int, default=20_000_000,
                    help="cycles the device sleeps before each timed part")
    args = ap.parse_args()
    dev = torch.device("cuda")
    pyg, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
    print(f"device {torch.cuda.get_device_name()}; us, medians of {args.rounds}")
    keys = None
    for rnd in range(2):
        for name, m, threads in (("pyg", pyg, True), ("gnnc", ours, True),
                                 ("pyg calling-thread", pyg, False),
                                 ("gnnc calling-thread", ours, False)):
            torch.autograd.set_multithreading_enabled(threads)
            try:
                res = split(m, x, ei, ea, args.rounds, args.sleep)
            finally:
                torch.autograd.set_multithreading_enabled(True)
            if keys is None:
                keys = list(res)
                print("| side | round | " + " | ".join(keys) + " |")
                print("| --- | --- | " + " | ".join("---:" for _ in keys) + " |")
            print(f"| {name} | {rnd} | " + " | ".join(f"{res[k]:.0f}" for k in keys) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
