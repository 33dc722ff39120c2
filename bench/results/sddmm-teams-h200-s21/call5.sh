#!/usr/bin/env bash
# Session 21 call 5 (final code): compute-sanitizer on the sddmm teams of
# the final rule (half_ops spmm_weighted and sddmm_dot --grad in f32, bf16,
# f16, memcheck and racecheck, short and long chunks) with the CUDA tests
# (test_core, test_half, and the edge-weight tests of test_nn,
# test_gcn_model, test_autocast) in parallel; then GCNConv with learnable
# edge weights against PyG (bench/nn_layers.py --layers gcn_ew gcn).
set -u
xz -dc .carry/bin/gnn-run.xz > .carry/bin/gnn-run; chmod +x .carry/bin/gnn-run
source bench/gpu_setup.sh .carry "$OUT"
S=/tmp/san; mkdir -p $S
t tests
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
for ty in f32 bf16 f16; do sed "s/f32/$ty/g" test/Integration/Inputs/half_ops.mlir > /tmp/ops-$ty.mlir; done
export B pl
( for ty in f32 bf16 f16; do for tool in memcheck racecheck; do for fn in spmm_weighted sddmm_dot; do for ch in 8192 4; do
    echo "$ty $tool $fn $ch"; done; done; done; done ) | xargs -P 8 -L 1 bash -c '
    out=$(timeout 150 compute-sanitizer --tool $1 --error-exitcode 9 $B/bin/gnn-run /tmp/ops-$0.mlir --function=$2 --graph="$pl" --backend=cuda --grad --max-chunks=$3 --reps=1 --warmup=0 2>&1); rc=$?
    m=$(printf "%s" "$out" | grep -c "\"match\": true"); s=$(printf "%s\n" "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    echo "$0 $1 $3 $2 rc=$rc match_lines=$m $s"' > $S/sanitize.txt 2>&1 &
san=$!
( GNNC_TEST_DEVICE=cuda timeout 330 python -m pytest -q -p no:cacheprovider python/tests/test_core.py python/tests/test_half.py > /tmp/pytest1.txt 2>&1; echo "rc=$?" >> /tmp/pytest1.txt ) &
py1=$!
( GNNC_TEST_DEVICE=cuda timeout 330 python -m pytest -q -p no:cacheprovider python/tests/test_nn.py python/tests/test_gcn_model.py python/tests/test_autocast.py -k "edge_weight or weighted" > /tmp/pytest2.txt 2>&1; echo "rc=$?" >> /tmp/pytest2.txt ) &
py2=$!
wait $san $py1 $py2
{ sort $S/sanitize.txt; echo "== test_core test_half"; tail -4 /tmp/pytest1.txt; echo "== edge weights"; tail -4 /tmp/pytest2.txt; } > $R/tests.txt
t layers
timeout 200 python bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --channels 64 128 --parts speed --layers gcn_ew gcn > $R/layers.txt 2> $R/log.txt
t done
