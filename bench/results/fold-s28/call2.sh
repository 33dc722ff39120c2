#!/usr/bin/env bash
# Session 28, call 2. A = HEAD 9c03c9d, B = this tree (as call 1). The new
# whole-layer functions under compute-sanitizer (memcheck, racecheck)
# against the CPU; host time per call (split.py, A and B alternated);
# nn_layers for the changed layers again, B first this time; gine.py A/B
# alternated.
set -u
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkgA; cp -r .carry/pyA/python/gnnc /tmp/pkgA/; cp $B/py312-A/_gnnc*.so /tmp/pkgA/gnnc/
run() { s=$1; shift; if [ $s = A ]; then PYTHONPATH=/tmp/pkgA "$@"; else PYTHONPATH=/tmp/pkg "$@"; fi; }
t sanitize
for tool in memcheck racecheck; do
  echo "== $tool" >> $R/sanitize.txt
  timeout 150 compute-sanitizer --tool $tool python3 bench/probes/fold/layers_cuda.py >> $R/sanitize.txt 2>&1
done
grep -E "==|passed|ERROR SUMMARY|RACECHECK SUMMARY" $R/sanitize.txt
t split
for s in A B A B; do
  echo "== $s" >> $R/split.txt
  run $s timeout 60 python3 bench/probes/hostsplit/split.py --layers gin,tr,sage,gcn --calls 1000 >> $R/split.txt 2>&1
done
grep -v "^ " $R/split.txt | head -60
t layers
for s in B A; do
  run $s timeout 100 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --reps 30 --layers gin transformer sage_mean > $R/layers-$s.txt 2>&1
done
for s in B A; do tail -7 $R/layers-$s.txt; done
t gine
for s in A B A B; do
  echo "== $s" >> $R/gine.txt
  run $s timeout 60 python3 bench/gine.py $D/qm9 --batch 4096 >> $R/gine.txt 2>&1
done
grep -E "==|forward" $R/gine.txt
t end
