"""GINE's training step on QM9 (bench/gine.py's model, batch 4096) timed
segment by segment on the host, the way bench/gine.py times it (a
synchronisation before and after every step): perf_counter stamps between
the forward's module calls, and tensor hooks on each layer's output and
input that stamp when the backward reaches them (they run on the autograd
engine's thread). Segments (us, medians over --steps steps, per side):
  zero      p.grad = None over the parameters
  enc       the atom encoder (Linear)
  convI     GINE layer I's call (forward, autograd recording)
  reluI     the ReLU after layer I
  loss      square().mean()
  hooks     registering the hooks (not part of a real step)
  b_loss    backward() entered -> layer 2's output gradient ready
  b_convI   layer I's backward (its output's gradient -> its input's)
  b_reluI   ReLU I's backward
  b_rest    layer 0's input gradient -> backward() returned (the encoder's
            backward, the AccumulateGrads left)
  tail      backward() returned -> the synchronisation returned (device
            work still queued)
  step      the whole step without the hooks (separate steps, alternating)
    python bench/probes/host/gine_segments.py QM9_DIR [--steps 200]
    python bench/probes/host/gine_segments.py QM9_DIR --loop SECONDS --side gnnc
        (steps as bench/gine.py runs them for SECONDS, nothing stamped:
        for a sampling profiler)"""
import argparse, os, pathlib, statistics, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G

now = time.perf_counter_ns


def stamped_step(m, x, ei, ea, params):
    t = {}
    torch.cuda.synchronize()
    t["start"] = now()
    for p in params:
        p.grad = None
    t["zero"] = now()
    h = m.encoder(x)
    t["enc"] = now()
    acts = [h]
    for i, conv in enumerate(m.convs):
        a = conv(h, ei, ea)
        t[f"conv{i}"] = now()
        acts.append(a)
        if i < len(m.convs) - 1:
            h = torch.relu(a)
            t[f"relu{i}"] = now()
            acts.append(h)
    loss = a.square().mean()
    t["loss"] = now()
    stamps = {}
    for k, v in enumerate(acts):
        v.register_hook(lambda g, k=k: stamps.__setitem__(k, now()))
    t["hooks"] = now()
    loss.backward()
    t["bwd_end"] = now()
    torch.cuda.synchronize()
    t["sync"] = now()
    # acts: h0, a0, h1, a1, h2, a2 (k = 0..5 for 3 layers)
    n = len(m.convs)
    seg = {"zero": t["zero"] - t["start"], "enc": t["enc"] - t["zero"]}
    prev = t["enc"]
    for i in range(n):
        seg[f"conv{i}"] = t[f"conv{i}"] - prev
        prev = t[f"conv{i}"]
        if i < n - 1:
            seg[f"relu{i}"] = t[f"relu{i}"] - prev
            prev = t[f"relu{i}"]
    seg["loss"] = t["loss"] - prev
    seg["hooks"] = t["hooks"] - t["loss"]
    last = len(acts) - 1
    seg["b_loss"] = stamps[last] - t["hooks"]
    for i in reversed(range(n)):
        out_k, in_k = 2 * i + 1, 2 * i
        seg[f"b_conv{i}"] = stamps[in_k] - stamps[out_k]
        if i > 0:
            # ReLU i-1: h_i's gradient (k = 2i) -> a_{i-1}'s (k = 2i - 1)
            seg[f"b_relu{i - 1}"] = stamps[in_k - 1] - stamps[in_k]
    seg["b_rest"] = t["bwd_end"] - stamps[0]
    seg["tail"] = t["sync"] - t["bwd_end"]
    seg["total"] = t["sync"] - t["start"] - seg["hooks"]
    return {k: v / 1e3 for k, v in seg.items()}


def plain_step(m, x, ei, ea, params):
    torch.cuda.synchronize()
    t0 = now()
    for p in params:
        p.grad = None
    m(x, ei, ea).square().mean().backward()
    torch.cuda.synchronize()
    return (now() - t0) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", type=pathlib.Path)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--loop", type=float, default=0.0)
    ap.add_argument("--side", default="gnnc")
    args = ap.parse_args()
    dev = torch.device("cuda")
    pyg, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
    sides = {"pyg": pyg, "gnnc": ours}
    if args.loop:
        m = sides[args.side]
        params = list(m.parameters())
        for _ in range(20):
            plain_step(m, x, ei, ea, params)
        end = time.perf_counter() + args.loop
        n = 0
        while time.perf_counter() < end:
            plain_step(m, x, ei, ea, params)
            n += 1
        print(f"{args.side}: {n} steps in {args.loop} s")
        return
    rows = {name: [] for name in sides}
    plain = {name: [] for name in sides}
    params = {name: list(m.parameters()) for name, m in sides.items()}
    for name, m in sides.items():
        for _ in range(10):
            stamped_step(m, x, ei, ea, params[name])
            plain_step(m, x, ei, ea, params[name])
    for _ in range(args.steps):
        for name, m in sides.items():
            rows[name].append(stamped_step(m, x, ei, ea, params[name]))
            plain[name].append(plain_step(m, x, ei, ea, params[name]))
    print(f"device {torch.cuda.get_device_name()}; us, medians of {args.steps} steps")
    keys = list(rows["gnnc"][0])
    print("| segment | PyG | gnnc | PyG - gnnc |")
    print("| --- | ---: | ---: | ---: |")
    for k in keys:
        a = statistics.median(r[k] for r in rows["pyg"])
        b = statistics.median(r[k] for r in rows["gnnc"])
        print(f"| {k} | {a:.1f} | {b:.1f} | {a - b:.1f} |")
    a, b = statistics.median(plain["pyg"]), statistics.median(plain["gnnc"])
    print(f"| step (no hooks) | {a:.1f} | {b:.1f} | {a - b:.1f} |")
    print(f"plain step ratio PyG / gnnc {a / b:.2f}")


if __name__ == "__main__":
    main()
