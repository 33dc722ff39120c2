#!/usr/bin/env bash
# Session 56, calls 2 and 3 (one GPU each), the same steps on two builds:
# call 2 with the shares kept in f32 in the VJP rule (g = dy / c an f32
# tensor, the edge terms and the sum f32, one conversion to bf16 at the end:
# call 1's bf16 g failed test_extremum_ties_in_long_rows by 1.2
# tolerances); call 3 with the pull as a codegen pass
# (gnn-pull-extremum-grads, the sums stored as bf16 directly; the CPU and
# the reference evaluate gnn.extremum_grad as before). Call 1's checks and
# A/B (common.sh), the new backward's kernels (--profile-steps),
# compute-sanitizer memcheck and racecheck on the bf16/f16 max backward, the
# CUDA Python tests of max/min.
set -u
mkdir -p /tmp/bin
for v in gnn-run gnn-run-old; do
  xz -dc .carry/bin/$v.xz > /tmp/bin/$v; chmod +x /tmp/bin/$v
done
source bench/results/maxpull-s56/common.sh
for g in blogcatalog arxiv-like; do
  gnn-run .carry/peers/gnnc_ops_bf16/max.mlir --graph=/tmp/g/$g.npy --backend=cuda --no-check --reps=20 --warmup=5 --grad --profile-steps > $R/profile-$g.json 2>>$R/err.txt
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))["cuda"]
for p in ("fwd","bwd"): print(sys.argv[2], p, "%.4f" % d[p]["median_ms"], " ".join("%s=%.4f" % (s["step"], s["median_ms"]) for s in d[p]["step_ms"]))' $R/profile-$g.json $g
done
t sanitize
for ty in bf16 f16; do for tool in memcheck racecheck; do
  for spec in "powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2" $D/cora; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 gnn-run $W/ops-$ty.mlir --function=spmm_max --graph=$spec --backend=cuda --grad --reps=1 --warmup=0 --no-check > /tmp/san.txt 2>&1
    echo "$tool $ty $spec rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san.txt | tail -1)" >> $R/sanitize.txt
  done
done; done
cat $R/sanitize.txt
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider test_core.py test_half.py test_autocast.py test_nan.py test_nn.py -k "max or min or extremum" > $R/pytest.txt 2>&1)
tail -3 $R/pytest.txt; grep -E "^FAILED" $R/pytest.txt | head
t done
tar czf $OUT/r.tgz -C /tmp r
