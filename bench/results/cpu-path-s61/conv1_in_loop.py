"""The first GCNConv of train_cora.py's GCN on Cora (1,433 -> 16) inside a
training loop on the CPU (dropout before it, the second layer, the loss and
the backward after it): median time of the layer's forward and of gnnc's
op call inside it over 30 steps after 10.
    PYTHONPATH=build/python python bench/results/cpu-path-s61/conv1_in_loop.py"""
import pathlib, statistics, sys, time
import torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import train_cora as T  # noqa: E402
import gnnc.nn  # noqa: E402

x, ei, y, masks, classes = T.load_planetoid(T.find_dataset("cora"), torch.device("cpu"))
rows = masks["train"].nonzero().squeeze(1)
torch.manual_seed(0)
m = T.GCN(gnnc.nn, x.shape[1], classes)
real = torch.ops.gnnc.call
op_ms = []


def timed(*args):
    t = time.perf_counter()
    r = real(*args)
    op_ms.append((time.perf_counter() - t) * 1e3)
    return r


torch.ops.gnnc.call = timed
layer, op = [], []
for it in range(40):
    h = F.dropout(x, 0.5, training=True)
    op_ms.clear()
    t = time.perf_counter()
    h = m.conv1(h, ei)
    layer.append((time.perf_counter() - t) * 1e3)
    op.append(sum(op_ms))
    out = m.conv2(F.dropout(h.relu(), 0.5), ei)
    F.cross_entropy(out[rows], y[rows]).backward()
print("conv1 forward %.2f ms, of which the op %.2f" % (statistics.median(layer[10:]),
                                                      statistics.median(op[10:])))
