#!/usr/bin/env python3
"""CPU emulation of the weight gradient's precision, Aᵀ B over k rows in f32:
one f32 GEMM over all rows against one f32 GEMM per slice of rows added in
double (cublas-row-split.patch's scheme), both against the double-precision
product, as max |got - want| / (1 + |want|) (gnn-run's tolerance is 1e-4 of
that). NumPy's f32 matmul (OpenBLAS, blocked like cuBLAS) stands in for
cuBLAS: a proxy, not the GPU's bits.

    python row_split_error.py
"""
import numpy as np


def case(rng, k, m, n, chunks, scale_b=1.0, centred=True):
    a = rng.random((k, m)) - (0.5 if centred else 0.0)
    b = (rng.random((k, n)) - 0.5) * scale_b
    a, b = a.astype(np.float32), b.astype(np.float32)
    want = a.astype(np.float64).T @ b.astype(np.float64)
    rows = -(-k // chunks)
    sliced = np.zeros((m, n))
    for z in range(0, k, rows):
        sliced += (a[z:z + rows].T @ b[z:z + rows]).astype(np.float64)
    one = (a.T @ b).astype(np.float64)

    def rel(got):
        return float(np.max(np.abs(got - want) / (1 + np.abs(want))))
    print(f"k {k:8d} m {m:4d} n {n:4d} slices {chunks:4d} a {'centred' if centred else 'positive'}"
          f" b x{scale_b:g}: one f32 GEMM {rel(one):.2e}, sliced {rel(sliced):.2e}")


def main():
    rng = np.random.default_rng(11)
    case(rng, 300000, 64, 64, 256)
    case(rng, 40000, 128, 256, 32)
    case(rng, 300000, 64, 64, 256, centred=False)
    case(rng, 1048777, 64, 64, 256, centred=False)
    case(rng, 1048777, 64, 64, 256, scale_b=1e-3)


if __name__ == "__main__":
    main()
