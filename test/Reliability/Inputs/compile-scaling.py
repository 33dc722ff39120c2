#!/usr/bin/env python3
"""Compile-time guards on chains of gnn.spmm (compile-scaling*.test).

  compile-scaling.py chain N                 prints an N-op chain of gnn.spmm
  compile-scaling.py ratio N LIMIT -- CMD..  runs CMD (where '{}' stands for
      the input file) on chains of N and 2N ops, seven pairs of runs, and fails
      unless the median ratio of a pair's times is at most LIMIT

The times are the CPU time (user + system) of the command and its threads,
not the wall time, so that other processes disturb them less. On the 2-core
build machine (a VM) one command's CPU time still varies by 20-40% from run
to run, in spells: so the runs come in pairs, N and 2N back to back, and the
figure is the median of the pairs' ratios (the best time of each size, taken
apart, gave ratios from 1.5 to 2.7 for the same build). A
linear pass gives a ratio near 2 (a little below, the start-up being fixed);
a quadratic one 4.
"""

import os
import statistics
import subprocess
import sys
import tempfile


ROUNDS = 7


def chain(n, out):
    out.write("func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>) -> "
              "tensor<?x64xf32> {\n")
    out.write("%r0 = gnn.spmm sum %g, %x : tensor<?x64xf32> -> "
              "tensor<?x64xf32>\n")
    for i in range(1, n):
        out.write(f"%r{i} = gnn.spmm sum %g, %r{i - 1} : tensor<?x64xf32> -> "
                  "tensor<?x64xf32>\n")
    out.write(f"return %r{n - 1} : tensor<?x64xf32>\n}}\n")


def cpu_seconds(cmd):
    """The CPU time of one run of `cmd`; fails the test if it fails."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"error: {' '.join(cmd)} exited with {code}")
    return usage.ru_utime + usage.ru_stime


def main(argv):
    if len(argv) == 3 and argv[1] == "chain":
        chain(int(argv[2]), sys.stdout)
        return 0
    if len(argv) < 6 or argv[1] != "ratio" or argv[4] != "--":
        sys.exit(__doc__)
    n, limit, template = int(argv[2]), float(argv[3]), argv[5:]
    cmds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ops in (n, 2 * n):
            path = os.path.join(tmp, f"chain{ops}.mlir")
            with open(path, "w") as f:
                chain(ops, f)
            cmds[ops] = [path if a == "{}" else a for a in template]
        # Pairs of runs back to back (N then 2N, then the other way round),
        # so that both sizes of a pair meet the same load; the median of the
        # pairs' ratios then drops a pair that a slow spell split.
        ratios, times = [], {n: [], 2 * n: []}
        # A batch of ROUNDS pairs; while the median is over the limit, up to
        # two more batches join it (a slow spell can still tip one batch:
        # once in a clean CI run, 2.3x; a superlinear pass stays over).
        for r in range(ROUNDS * 3):
            if r and r % ROUNDS == 0 and statistics.median(ratios) <= limit:
                break
            pair = (n, 2 * n) if r % 2 == 0 else (2 * n, n)
            t = {ops: cpu_seconds(cmds[ops]) for ops in pair}
            ratios.append(t[2 * n] / max(t[n], 1e-9))
            for ops in pair:
                times[ops].append(t[ops])
    ratio = statistics.median(ratios)
    print(f"{n} ops: {statistics.median(times[n]):.2f} s, {2 * n} ops: "
          f"{statistics.median(times[2 * n]):.2f} s (CPU, median of {len(ratios)} pairs): "
          f"ratio {ratio:.2f}, limit {limit}; pairs: "
          + " ".join(f"{x:.2f}" for x in ratios))
    if ratio > limit:
        print(f"error: compile time grows faster than linearly "
              f"({ratio:.2f} > {limit})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
