"""Writes a graph's CSR (by destination) for spmm_hot.cu: OUT/meta.txt (n e),
OUT/ptr.i32 (n+1), OUT/col.i32 (e), OUT/w.f32 (e), OUT/outdeg.i32 (n).
    python gen.py PEERS_DIR GRAPH OUT [DATASETS]   (GRAPH: a graphs.py name
or a shared/datasets name)"""
import os, sys
import numpy as np
import torch
sys.path.insert(0, sys.argv[1])
import graphs  # noqa: E402

name, out = sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
ei, n = graphs.load(name, sys.argv[4] if len(sys.argv) > 4 else None)
src, dst = ei[0], ei[1]
order = torch.argsort(dst * n + src)
src, dst = src[order], dst[order]
ptr = torch.zeros(n + 1, dtype=torch.int64, device=src.device)
ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
g = torch.Generator(device=src.device); g.manual_seed(1)
w = torch.rand(src.numel(), device=src.device, generator=g)
outdeg = torch.bincount(src, minlength=n)
with open(os.path.join(out, "meta.txt"), "w") as f:
    f.write(f"{n} {src.numel()}\n")
ptr.int().cpu().numpy().tofile(os.path.join(out, "ptr.i32"))
src.int().cpu().numpy().tofile(os.path.join(out, "col.i32"))
w.float().cpu().numpy().tofile(os.path.join(out, "w.f32"))
outdeg.int().cpu().numpy().tofile(os.path.join(out, "outdeg.i32"))
print(name, "nodes", n, "edges", src.numel(), "max in", int((ptr[1:] - ptr[:-1]).max()),
      "max out", int(outdeg.max()))
