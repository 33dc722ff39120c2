#!/usr/bin/env bash
# Session 27, call 2: the op's host time by phase (a probe build of the
# module with timers, .carry/py312-probe; not merged), per layer and mode.
set -u
source bench/gpu_setup.sh .carry "$OUT"
cp .carry/py312-probe/_gnnc*.so /tmp/pkg/gnnc/
for l in gcn sage gin; do for m in fwd fwdbwd; do
  echo "== $l $m" >> $R/probe.txt
  timeout 60 python3 bench/probes/host/probe_run.py $l $m >> $R/probe.txt 2>&1
done; done
