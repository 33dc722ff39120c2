#!/usr/bin/env python3
"""Compile-time guards on chains of gnn.spmm (compile-scaling*.test).

  compile-scaling.py chain N                 prints an N-op chain of gnn.spmm
  compile-scaling.py ratio N LIMIT -- CMD..  runs CMD (where '{}' stands for
      the input file) on chains of N and 2N ops, three times each, and fails
      unless the best time of 2N ops is at most LIMIT times the best of N

The times are the CPU time (user + system) of the command and its threads,
not the wall time, so that other tests running beside this one on a loaded
machine disturb them less; the runs alternate between the sizes and the best
of three drops the remaining noise. A
linear pass gives a ratio near 2 (a little below, the start-up being fixed);
a quadratic one 4.
"""

import os
import subprocess
import sys
import tempfile


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
    cmds, best = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for ops in (n, 2 * n):
            path = os.path.join(tmp, f"chain{ops}.mlir")
            with open(path, "w") as f:
                chain(ops, f)
            cmds[ops] = [path if a == "{}" else a for a in template]
        # Interleaved, so that both sizes meet the same changes of load.
        for _ in range(3):
            for ops in (n, 2 * n):
                t = cpu_seconds(cmds[ops])
                best[ops] = min(best.get(ops, t), t)
    ratio = best[2 * n] / max(best[n], 1e-9)
    print(f"{n} ops: {best[n]:.2f} s, {2 * n} ops: {best[2 * n]:.2f} s "
          f"(CPU, best of 3): ratio {ratio:.2f}, limit {limit}")
    if ratio > limit:
        print(f"error: compile time grows faster than linearly "
              f"({ratio:.2f} > {limit})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
