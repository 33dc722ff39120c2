"""gnnc.nn layers on CUDA fed a contiguous view that starts off a 16-byte
boundary (x = buf[1:].view(N, C), or edge_index likewise): output and
gradients against the same call on aligned copies. Each test_nn.py case and
variant runs in its own process (a misaligned vector access is a sticky
CUDA error).
    python bench/probes/align/views.py [case ...]"""
import os, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python", "tests"))

CHILD = r"""
import sys, torch
sys.path.insert(0, %r)
import test_nn as base
case, variant = sys.argv[1], sys.argv[2]
ours, _ = base.make(base.BY_ID[case], torch.float32)
ours = ours.cuda()
edge_index, n = base.GRAPHS["random"]()
edge_index = edge_index.cuda()
x = base.features(n, torch.float32).cuda()
def run(xx, ei):
    xx = xx.detach().requires_grad_()
    for p in ours.parameters():
        p.grad = None
    y = ours(xx, ei)
    y = y[0] if isinstance(y, tuple) else y
    y.square().sum().backward()
    return y.detach().clone(), xx.grad.clone(), [p.grad.clone() for p in ours.parameters() if p.grad is not None]
want = run(x.clone(), edge_index.clone())
def off(t):
    buf = torch.empty(t.numel() + 1, dtype=t.dtype, device="cuda")
    view = buf[1:].view(t.shape)
    view.copy_(t)
    assert view.data_ptr() %% 16 != 0 and view.is_contiguous()
    return view
got = run(off(x), edge_index) if variant == "x" else run(x, off(edge_index))
torch.cuda.synchronize()
ok = torch.allclose(got[0], want[0], atol=1e-5, rtol=1e-4) and torch.allclose(got[1], want[1], atol=1e-5, rtol=1e-4) \
    and all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in zip(got[2], want[2]))
print("PASS" if ok else "MISMATCH")
"""

import test_nn as base  # noqa: E402
cases = sys.argv[1:] or base.IDS
bad = 0
runs = [(c, v) for c in cases for v in ("x", "edge_index")]
for case, variant in runs:
    p = subprocess.run([sys.executable, "-c", CHILD % os.path.join(HERE, "..", "..", "..", "python", "tests"),
                        case, variant], capture_output=True, text=True, timeout=120)
    out = (p.stdout.strip().splitlines() or [""])[-1]
    err = [l for l in p.stderr.strip().splitlines() if "error" in l.lower()] or p.stderr.strip().splitlines() or ["?"]
    status = out if p.returncode == 0 else "CRASH: " + err[0][:200]
    bad += status != "PASS"
    print(f"{case:28s} {variant:10s} {status}", flush=True)
print(f"{len(runs) - bad} passed, {bad} failed")
