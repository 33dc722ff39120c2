#!/usr/bin/env python3
"""Puts NaN and infinities into gnn-run's dumped inputs (DIR/arg<K>.npy, as
--dump-inputs writes them) for run-nan.sh: in every node or edge argument
(more than 128 rows: the examples' dense weights have at most 64), one NaN,
one +inf and one -inf at fixed spots, a whole row of NaN and a whole row of
-inf (rows 3 and 7).
usage: poison-inputs.py DIR"""
import glob
import os
import sys

import numpy as np

for path in sorted(glob.glob(os.path.join(sys.argv[1], "arg*.npy"))):
    a = np.load(path)
    if a.dtype.kind != "f" or a.ndim == 0 or a.shape[0] <= 128:
        continue
    flat = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)
    n = flat.shape[0]
    for row, value in ((1, np.nan), (5, np.inf), (11, -np.inf)):
        if row < n:
            flat[row, row % flat.shape[1]] = value
    if n > 3:
        flat[3, :] = np.nan
    if n > 7:
        flat[7, :] = -np.inf
    np.save(path, flat.reshape(a.shape))
