#!/usr/bin/env bash
# Session 56, call 4 (one GPU), the final build (d773918 and the
# nn_layers.py --autocast option): (1) both op-level scoreboards
# (bench/scoreboard_both.sh, gnnc --no-check); (2) f32 max --grad against
# the reference (the routing kernel lost its bf16 branch) and bf16 again;
# (3) SAGEConv max and mean through PyTorch under torch.autocast(bf16) and
# in f32, gnnc against PyG (bench/nn_layers.py); (4) the CUDA Python tests
# of max/min and the runtime's GPU gtests.
set -u
export GNNC_OPS_FLAGS=--no-check
timeout 330 bash bench/scoreboard_both.sh .carry /tmp/sb
grep -E "^forward|^##" /tmp/sb/tables.md
unset GNNC_OPS_FLAGS
mkdir -p /tmp/bin; for v in GNNRuntimeTests; do xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v; done
cp .carry/bin/gnn-run /tmp/bin/
export PATH=/tmp/bin:$PATH
source bench/gpu_setup.sh .carry /tmp/r
t checks
chk() { local what=$1; shift
  out=$("$@" --backend=cuda --grad --reps=3 --warmup=1 2>&1); rc=$?
  ratio=$(printf '%s\n' "$out" | sed -n 's/.*"worst_ratio_to_tolerance": \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
  if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"match": true' && ! printf '%s' "$out" | grep -q '"match": false'; then
    echo "PASS $what $ratio"; else echo "FAIL $what rc=$rc $ratio"; fi >> $R/checks.txt; }
for g in pubmed musae-github blogcatalog qm9-batch4096; do
  for set in gnnc_ops gnnc_ops_bf16; do
    chk "scoreboard max $set $g" gnn-run .carry/peers/$set/max.mlir --graph=/tmp/graphs/$g.npy
  done
done
PL="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
for ty in f32 bf16; do
  sed -e "s/f32/$ty/g" test/Integration/Inputs/half_ops.mlir > /tmp/ops-$ty.mlir
  chk "spmm_max $ty powerlaw" gnn-run /tmp/ops-$ty.mlir --function=spmm_max --graph=$PL
  chk "spmm_max $ty powerlaw chunks=4" gnn-run /tmp/ops-$ty.mlir --function=spmm_max --graph=$PL --max-chunks=4
done
cat $R/checks.txt
t layers
timeout 150 python3 bench/nn_layers.py --datasets $D --parts speed --layers sage_max sage_mean --channels 128 --autocast bf16 > $R/layers-bf16.txt 2>&1
timeout 100 python3 bench/nn_layers.py --datasets $D --parts speed --layers sage_max --channels 128 > $R/layers-f32.txt 2>&1
grep -E "^\|" $R/layers-bf16.txt $R/layers-f32.txt
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider test_core.py test_half.py test_autocast.py test_nan.py test_nn.py -k "max or min or extremum" > $R/pytest.txt 2>&1)
tail -1 $R/pytest.txt; grep -E "^FAILED" $R/pytest.txt | head
t gtest
GNNC_DATASETS=$D timeout 120 GNNRuntimeTests --gtest_filter='Gpu*' > $R/gtest.txt 2>&1; echo "rc=$?" >> $R/gtest.txt
tail -2 $R/gtest.txt
t done
cp -r /tmp/sb /tmp/r/; tar czf $OUT/r.tgz -C /tmp r
