#!/usr/bin/env bash
# Session 80, call 4 (one GPU, short): compute-sanitizer on the committed
# tree's changed kernels (.carry/final): GINE's layer (the vectorized edge
# map, the unrolled eps sum, the shuffled block reduction) and gin, gat
# training steps on cora (block reductions: gin's eps sum, gat's row sums),
# memcheck and racecheck, each run also checked against the reference.
set -u
S0=$(date +%s)
left() { echo $(( 200 - ($(date +%s) - S0) )); }
xz -dc .carry/final/gnn-run.xz > /tmp/run-final; chmod +x /tmp/run-final
export PATH=/usr/local/cuda/bin:$PATH
R=$(realpath -m "$OUT"); mkdir -p $R; D=$(realpath .carry/datasets)
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
export GNNC_CACHE_DIR=/tmp/gnnc-kernels; mkdir -p -m 700 /tmp/gnnc-kernels
for c in "memcheck .carry/gine_layer.mlir" "racecheck .carry/gine_layer.mlir" \
         "racecheck examples/gin.mlir" "racecheck examples/gat.mlir" \
         "memcheck examples/gin.mlir" "memcheck examples/gat.mlir"; do
  set -- $c
  [ $(left) -gt 15 ] || { echo "$1 $2: not run (time)" >> $R/san.txt; continue; }
  rm -f /tmp/san.log
  timeout $(( $(left) - 5 )) compute-sanitizer --tool $1 --error-exitcode 9 --log-file /tmp/san.log \
    /tmp/run-final $2 --graph=$D/cora --grad --backend=cuda --reps=1 --warmup=0 > /tmp/o.json 2> /tmp/o.err
  rc=$?
  m=$(python3 -c "import json; print(json.load(open('/tmp/o.json'))['cuda'].get('match'))" 2>/dev/null)
  echo "$1 $2: rc $rc match $m; $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $R/san.txt
  grep -h -E "Race reported|Invalid" /tmp/san.log | sort | uniq -c | head -5 >> $R/san.txt
done
cat $R/san.txt
