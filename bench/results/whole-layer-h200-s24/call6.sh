#!/usr/bin/env bash
# Session 24 call 6 (run inline): the row split's kernel of HEAD (D: the
# working tree's whole-layer package with HEAD's module) against the 4 x 4
# tiled one (C), twice each, on bench/probes/hostsplit/large.py.
source bench/gpu_setup.sh .carry "$OUT"; mkdir -p /tmp/pkgD; cp -r python/gnnc /tmp/pkgD/; cp .carry/py312-old/_gnnc*.so /tmp/pkgD/gnnc/
for s in D C D C; do if [ $s = D ]; then pp=/tmp/pkgD; else pp=/tmp/pkg; fi
  echo "== $s (.so $([ $s = D ] && echo HEAD || echo tiled))" >> $OUT/large2.txt
  PYTHONPATH=$pp timeout 60 python3 bench/probes/hostsplit/large.py --profile 2>&1 | grep -E "fwd\+bwd|atbSlices" | cut -c1-60,100-200 >> $OUT/large2.txt
done
