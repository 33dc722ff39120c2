"""Write the peer bench's graphs as CSR by destination (OUT/NAME.rowptr.i32,
OUT/NAME.col.i32) for spmm_crc.cu: graphs_to_csr.py PEERS_DIR DATASETS OUT NAME..."""
import os
import sys

import torch

peers, datasets, out = sys.argv[1:4]
sys.path.insert(0, peers)
import graphs  # noqa: E402

os.makedirs(out, exist_ok=True)
for name in sys.argv[4:]:
    ei, n = graphs.load(name, datasets)
    src, dst = ei[0].long(), ei[1].long()
    order = torch.argsort(dst * n + src)
    src, dst = src[order], dst[order]
    rowptr = torch.zeros(n + 1, dtype=torch.int64, device=dst.device)
    rowptr[1:] = torch.bincount(dst, minlength=n).cumsum(0)
    rowptr.int().cpu().numpy().tofile(os.path.join(out, name + ".rowptr.i32"))
    src.int().cpu().numpy().tofile(os.path.join(out, name + ".col.i32"))
    print(name, n, src.numel(), int((rowptr[1:] - rowptr[:-1]).max()), flush=True)
