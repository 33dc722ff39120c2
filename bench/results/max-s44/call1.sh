#!/usr/bin/env bash
# Call 1: where the max aggregation's training step goes (issue 29: every
# bf16 forward+backward case below 1.5x is max). gnn-run --profile-steps of
# the plain forward and of --grad, bf16 and f32, on four graphs; --grad
# with the split off and at 32; ncu sections of the blogcatalog and
# musae-github bf16 training kernels; bench/gine.py (issue 31) as it stands.
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
P=$B/peers; G=/tmp/graphs; mkdir -p $G
t dump
for g in musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > $R/log.txt 2>&1
sed 's/bf16/f32/g' $P/gnnc_ops_bf16/max.mlir > /tmp/max-f32.mlir
run() { timeout 60 $B/bin/gnn-run "$@" --backend=cuda --no-check --reps=20 --warmup=5 --profile-steps; }
t steps
for g in musae-github blogcatalog arxiv-like qm9-batch4096; do
  for dt in bf16 f32; do
    f=$P/gnnc_ops_bf16/max.mlir; [ $dt = f32 ] && f=/tmp/max-f32.mlir
    echo "== $g $dt plain" >> $R/steps.txt; run $f --graph=$G/$g.npy >> $R/steps.txt 2>&1
    echo "== $g $dt grad" >> $R/steps.txt; run $f --graph=$G/$g.npy --grad >> $R/steps.txt 2>&1
  done
done
for g in musae-github blogcatalog; do
  for s in 0 32; do
    echo "== $g bf16 grad split=$s" >> $R/steps.txt; run $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --grad --split=$s >> $R/steps.txt 2>&1
  done
done
t ncu
for g in blogcatalog musae-github; do
  timeout 150 ncu --kernel-name regex:"spmm_0|extremum_grad_0" --launch-count 8 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis $B/bin/gnn-run $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda --grad --no-check --reps=1 --warmup=0 > $R/ncu-$g.txt 2>&1
done
t gine
timeout 150 python3 bench/gine.py $D/qm9 --out $R/gine.json > $R/gine.txt 2>&1
t done
