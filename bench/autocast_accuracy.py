#!/usr/bin/env python3
"""Accuracy and epoch time of gnnc.nn under torch.autocast (issue 29 item 3's
acceptance): Cora and Citeseer, 2-layer GCN and GAT (PyG's example models and
hyper-parameters, examples/python/train_cora.py), trained over several seeds
with

* ``gnnc-amp``: gnnc's layers under torch.autocast(--dtype), the graph part
  in that dtype (docs/Python.md, "Mixed precision");
* ``pyg-fp32``: PyG's layers in float32 (the reference of the acceptance:
  gnnc-amp's mean test accuracy within 1 point of it);
* ``pyg-amp``: PyG's layers under the same autocast;
* ``gnnc-fp32`` (with --fp32-gnnc): gnnc's layers in float32.

Every run trains 200 epochs (Adam, weight decay 5e-4), the test accuracy
taken at the epoch of best validation accuracy (evaluated under the run's
precision); float16 runs scale the loss with torch.amp.GradScaler. The epoch
time is the median over the epochs after the first 10 of forward, loss,
backward and optimiser step (CUDA-synchronised on a GPU), then the median
over seeds.

    python bench/autocast_accuracy.py [--datasets cora citeseer] [--models gcn gat]
        [--seeds 10] [--epochs 200] [--dtype bfloat16|float16] [--device cuda|cpu]
        [--fp32-gnnc]

Prints one JSON line per (data set, model, run), then a table with each
run's accuracy minus pyg-fp32's and the acceptance line per (data set,
model). Runs with GNNC_JIT=sync unless set. `--device cpu --epochs 5
--seeds 2` checks that it runs (the CPU path is the reference evaluator:
slow, not a speed figure).
"""

import argparse
import json
import os
import pathlib
import statistics
import sys

os.environ.setdefault("GNNC_JIT", "sync")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "python"))
import train_cora  # noqa: E402

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def train(nn, model_name, data, seed, device, epochs, amp_dtype):
    """(test accuracy at the best validation epoch, median epoch ms)."""
    x, edge_index, y, masks, classes = data
    torch.manual_seed(seed)
    model_cls, lr = train_cora.SETTINGS[model_name]
    model = model_cls(nn, x.shape[1], classes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    train_rows = masks["train"].nonzero().squeeze(1)

    def autocast():
        return torch.autocast(device.type, dtype=amp_dtype or torch.float32,
                              enabled=amp_dtype is not None)

    def epoch():
        opt.zero_grad()
        with autocast():
            out = model(x, edge_index)
            loss = F.cross_entropy(out[train_rows], y[train_rows])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return train_cora.fit(model, data, epochs, epoch, device, autocast)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    p.add_argument("--models", nargs="+", choices=sorted(train_cora.SETTINGS),
                   default=["gcn", "gat"])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bfloat16")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--fp32-gnnc", action="store_true", help="also train gnnc in float32")
    args = p.parse_args()
    device = torch.device(args.device)
    amp = DTYPES[args.dtype]

    import gnnc.nn
    import torch_geometric.nn
    runs = [("gnnc-amp", gnnc.nn, amp), ("pyg-fp32", torch_geometric.nn, None),
            ("pyg-amp", torch_geometric.nn, amp)]
    if args.fp32_gnnc:
        runs.append(("gnnc-fp32", gnnc.nn, None))
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"# autocast({args.dtype}) accuracy, {args.epochs} epochs, {args.seeds} seeds, "
          f"{name}, torch {torch.__version__}", flush=True)
    table = []
    for dataset in args.datasets:
        data = train_cora.load_planetoid(train_cora.find_dataset(dataset), device)
        for model in args.models:
            result = {}
            for run, nn, dtype in runs:
                accs, times = [], []
                for seed in range(args.seeds):
                    acc, ms = train(nn, model, data, seed, device, args.epochs, dtype)
                    accs.append(acc * 100)
                    times.append(ms)
                mean = statistics.mean(accs)
                std = statistics.stdev(accs) if len(accs) > 1 else 0.0
                result[run] = (mean, std, statistics.median(times))
                print(json.dumps(dict(dataset=dataset, model=model, run=run,
                                      dtype=args.dtype if dtype else "float32",
                                      accuracy=round(mean, 2), std=round(std, 2),
                                      accuracies=[round(a, 1) for a in accs],
                                      epoch_ms=round(statistics.median(times), 3))),
                      flush=True)
            table.append((dataset, model, result))

    print(f"\n{'data set':10s} {'model':5s} {'run':10s} {'test acc. %':>14s} "
          f"{'- pyg-fp32':>10s} {'epoch ms':>9s}")
    verdicts = []
    for dataset, model, result in table:
        ref = result["pyg-fp32"][0]
        for run, (mean, std, ms) in result.items():
            print(f"{dataset:10s} {model:5s} {run:10s} {mean:8.1f} +- {std:3.1f} "
                  f"{mean - ref:+10.1f} {ms:9.2f}")
        gap = result["gnnc-amp"][0] - ref
        verdicts.append(f"{dataset} {model}: gnnc-amp {gap:+.1f} points from pyg-fp32 "
                        f"({'within' if abs(gap) <= 1.0 else 'NOT within'} 1 point)")
    print()
    for v in verdicts:
        print(v)


if __name__ == "__main__":
    main()
