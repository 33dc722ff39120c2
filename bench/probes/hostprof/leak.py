"""Device memory a gnnc.nn layer keeps across calls (session 16: none; a
probe that recorded every call's arguments had made GCNConv look as if it
kept one output per call): per layer and mode,
memory_allocated() and the allocator's segment count over a loop, and the
Python stacks of the blocks still live after it (memory history).
    python bench/probes/hostprof/leak.py [layers...]"""
import collections, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "host"))
from _cached import graph  # noqa: E402  (sets GNNC_JIT, sys.path)
import torch  # noqa: E402
import nn_layers as B  # noqa: E402

dev = "cuda"
n, c, ei, x = graph(dev)


def growth(tag, f, k=2000):
    for _ in range(20):
        f()
    torch.cuda.synchronize()
    a0 = torch.cuda.memory_allocated()
    s0 = torch.cuda.memory_stats().get("num_device_alloc", 0)
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    for _ in range(k):
        f()
    torch.cuda.synchronize()
    a1 = torch.cuda.memory_allocated()
    s1 = torch.cuda.memory_stats().get("num_device_alloc", 0)
    print(f"{tag}: +{(a1 - a0) / k:.0f} bytes/call allocated, "
          f"+{s1 - s0} device allocations over {k} calls", flush=True)
    if a1 - a0 > k * 1000:
        snap = torch.cuda.memory._snapshot()
        live = collections.Counter()
        size = {}
        for seg in snap["segments"]:
            for b in seg["blocks"]:
                if b["state"] != "active_allocated":
                    continue
                fr = b.get("frames") or []
                key = " <- ".join(f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}"
                                  for f in fr[:6])
                live[key] += 1
                size[key] = b["size"]
        for key, cnt in live.most_common(4):
            print(f"   {cnt} live blocks of {size[key]} bytes: {key}", flush=True)
    torch.cuda.memory._record_memory_history(enabled=None)


for name in sys.argv[1:] or ["gcn", "sage_mean", "gin", "gat"]:
    ours, _ = B.pair(name, c, dev)
    with torch.no_grad():
        growth(f"{name} no_grad", lambda: ours(x, ei))
    with torch.inference_mode():
        growth(f"{name} inference_mode", lambda: ours(x, ei))
    growth(f"{name} grad enabled, no backward", lambda: ours(x, ei))
    ours.eval()
    with torch.no_grad():
        growth(f"{name} eval no_grad", lambda: ours(x, ei))
