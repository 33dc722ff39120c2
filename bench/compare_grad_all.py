#!/usr/bin/env python3
"""Compares two outputs of bench/autodiff_all.sh (A, then B): per (graph,
example) the forward+backward ms of each, A/B, and whether the peak device
memory changed; the geometric mean of A/B. Run both on the same card.

    bench/compare_grad_all.py A.txt [A2.txt ...] -- B.txt [B2.txt ...]
"""
import math
import sys


def load(paths):
    rows = {}
    for path in paths:
        for line in open(path):
            f = line.split()
            if len(f) >= 7 and f[-1] in ("PASS", "FAIL") and f[0] != "graph":
                rows[(f[0], f[1])] = (float(f[2]), float(f[3]), f[-1])
    return rows


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    cut = sys.argv.index("--")
    a, b = load(sys.argv[1:cut]), load(sys.argv[cut + 1:])
    both = sorted(k for k in a if k in b)
    if not both:
        sys.exit("no (graph, example) in both")
    print("| graph | example | A fwd+bwd ms | B fwd+bwd ms | A/B | peak MiB A | peak MiB B | B |")
    print("|---|---|---|---|---|---|---|---|")
    logs = []
    for k in both:
        (ta, ma, _), (tb, mb, rb) = a[k], b[k]
        logs.append(math.log(ta / tb))
        print(f"| {k[0]} | {k[1]} | {ta:.4f} | {tb:.4f} | {ta / tb:.2f} | "
              f"{ma:.2f} | {mb:.2f} | {rb} |")
    ratios = [math.exp(x) for x in logs]
    print(f"\n{len(both)} cases: A/B geomean {math.exp(sum(logs) / len(logs)):.2f}, "
          f"min {min(ratios):.2f}, max {max(ratios):.2f}; peak changed in "
          f"{sum(1 for k in both if abs(a[k][1] - b[k][1]) > 0.005)}")


if __name__ == "__main__":
    main()
