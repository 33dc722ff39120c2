#!/usr/bin/env bash
# Session 68, call 1 (one GPU), binaries and module of e0be1a5 (the bf16
# share of session 67): the committed max's gradients against the reference
# (bf16, f16) and under memcheck; the heavy-row split threshold of the max
# (bench/split_sweep.sh: the model's choice, none, and fixed thresholds) on
# the training step and the forward, bf16 and f32; the host time of a layer
# call as it stands (bench/probes/host/breakdown.py); first, would an L2
# kept for the hottest source rows pay on reddit-like's f32 SpMM
# (bench/probes/l2hot), beside gnnc's own kernel there.
set -u
xz -dc .carry/py312/_gnnc.so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
mkdir -p /tmp/bin
for v in gnn-run gnn-opt; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
source bench/gpu_setup.sh .carry "$OUT"
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do python3 $P/dump_graph.py $g $D $G/$g.npy; done > /tmp/dump.log 2>&1
t l2hot
nvcc -O3 -arch=sm_90 bench/probes/l2hot/spmm_hot.cu -lcusparse -o /tmp/spmm_hot > "$OUT"/l2hot.txt 2>&1
timeout 60 python3 bench/probes/l2hot/gen.py $P reddit-like /tmp/rl $D >> "$OUT"/l2hot.txt 2>&1
timeout 120 /tmp/spmm_hot /tmp/rl 10 >> "$OUT"/l2hot.txt 2>&1
python3 $P/dump_graph.py reddit-like $D /tmp/rl.npy > /dev/null 2>&1
timeout 90 /tmp/bin/gnn-run $P/gnnc_ops/spmm_sum.mlir --graph=/tmp/rl.npy --backend=cuda --no-check \
  --reps=10 --warmup=3 > /tmp/o.json 2> /tmp/o.err
python3 -c "import json; print('gnnc f32 spmm_sum reddit-like median ms', json.load(open('/tmp/o.json'))['cuda']['median_ms'])" >> "$OUT"/l2hot.txt 2>&1 || tail -3 /tmp/o.err >> "$OUT"/l2hot.txt
rm -f /tmp/rl.npy; rm -rf /tmp/rl
cat "$OUT"/l2hot.txt
t check
sed 's/bf16/f16/g' $P/gnnc_ops_bf16/max.mlir > /tmp/max_f16.mlir
for f in $P/gnnc_ops_bf16/max.mlir /tmp/max_f16.mlir; do
  for g in pubmed musae-github blogcatalog qm9-batch4096; do
    timeout 90 /tmp/bin/gnn-run $f --graph=$G/$g.npy --backend=cuda --grad --reps=3 > /tmp/o.json 2> /tmp/o.err
    echo "== $f $g rc=$?" >> "$OUT"/check.txt
    python3 -c "
import json; c=json.load(open('/tmp/o.json'))
print({k: v for k, v in c.get('cuda', {}).items() if 'match' in k or 'err' in k or 'tol' in k})" >> "$OUT"/check.txt 2>&1
    grep -i error /tmp/o.err | head -3 >> "$OUT"/check.txt
  done
done
t memcheck
for f in $P/gnnc_ops_bf16/max.mlir /tmp/max_f16.mlir; do
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bin/gnn-run $f \
    --graph=$G/musae-github.npy --backend=cuda --grad --no-check --reps=1 --warmup=0 > /tmp/m.out 2>&1
  echo "memcheck $f rc=$?" >> "$OUT"/check.txt; tail -2 /tmp/m.out >> "$OUT"/check.txt
done
cat "$OUT"/check.txt
t split
S="arxiv-like musae-github blogcatalog"
{ echo "# bf16 max, forward+backward (fwdbwd median ms)"
  OPS=max OPS_DIR=$P/gnnc_ops_bf16 GRAD=1 THRESHOLDS="chosen 0 64 128 256 512 1024 2048" \
    timeout 150 bash bench/split_sweep.sh /tmp/bin/gnn-run $(for g in $S; do echo $G/$g.npy; done)
  echo "# bf16 max, forward (median ms)"
  OPS=max OPS_DIR=$P/gnnc_ops_bf16 THRESHOLDS="chosen 0 256 1024" \
    timeout 60 bash bench/split_sweep.sh /tmp/bin/gnn-run $G/arxiv-like.npy $G/musae-github.npy
  echo "# f32 max, forward+backward"
  OPS=max OPS_DIR=$P/gnnc_ops GRAD=1 THRESHOLDS="chosen 0 256 1024" \
    timeout 60 bash bench/split_sweep.sh /tmp/bin/gnn-run $(for g in $S; do echo $G/$g.npy; done)
} > "$OUT"/split.txt 2> "$OUT"/split.err
cat "$OUT"/split.txt
t host
timeout 60 python3 bench/probes/host/breakdown.py gcn gin gat sage_mean > "$OUT"/host.txt 2>&1
tail -60 "$OUT"/host.txt
t done
