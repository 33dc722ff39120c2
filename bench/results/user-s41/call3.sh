#!/usr/bin/env bash
# Call 3: the wide-dot change (8e7f27e: GAT's and AGNN's backward write
# their wide sddmm dots once, on a team of lanes, instead of recomputing
# them per lane in the reductions). new = HEAD's gnn-run and module, old =
# 02fa423's gnn-run (no C++ changed between them but this).
# 1. checks: gnn-run --grad against the reference for every example and the
#    layer IR of ir/ on cora, pubmed and a power-law graph (new binary);
# 2. compute-sanitizer memcheck and racecheck of GAT's and AGNN's --grad;
# 3. A/B forward+backward, old against new, interleaved, on four graphs;
# 4. the layers through PyTorch (nn_layers, gat/gatv2/agnn) and GAT training
#    epochs on ego-twitter (train_large) with the new module.
# Outputs: summary.txt and out.tgz (everything).
set -u
for v in gnn-run gnn-run-old; do xz -dc .carry/bin/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
cp -r data/cora $D/cora
pl="powerlaw:nodes=20000,edges=400000,seed=1,alpha=1.2"
t checks
for f in examples/*.mlir bench/results/user-s41/ir/*.mlir; do
  for g in $D/cora $D/pubmed "$pl"; do
    if timeout 60 /tmp/gnn-run $f --graph=$g --backend=cuda --grad > $W/chk.json 2> $W/chk.err; then r=pass; else r="FAIL rc=$?"; fi
    echo "check $(basename $f) $(basename "$g") $r" >> $W/checks.txt
  done
done
grep -c pass $W/checks.txt | sed 's/^/checks passed: /' >> $S; grep FAIL $W/checks.txt >> $S
t sanitize
for f in bench/results/user-s41/ir/gat_128.mlir examples/gat.mlir examples/agnn.mlir; do for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/gnn-run $f --graph=$D/cora --backend=cuda --grad --reps=1 --warmup=0 --no-check > $W/san.txt 2>&1
  echo "sanitize $tool $(basename $f) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san.txt | tail -1)" >> $S
done; done
t ab
for r in 1 2; do for g in ego-twitter blogcatalog musae-github pubmed; do for f in gat_128 gatv2_128; do for b in gnn-run-old gnn-run; do
  timeout 60 /tmp/$b bench/results/user-s41/ir/$f.mlir --graph=$D/$g --backend=cuda --grad --no-check --reps=10 --warmup=3 > $W/ab.json 2>>$W/ab.err
  python3 -c "import json,sys; c=json.load(open('$W/ab.json'))['cuda']; print('ab $r $g $f $b', round(c.get('fwdbwd_median_ms', -1), 4), round(c.get('median_ms', -1), 4))" >> $S 2>>$W/ab.err
done; done; done; done
for g in ego-twitter blogcatalog; do for f in examples/agnn.mlir; do for b in gnn-run-old gnn-run; do
  timeout 60 /tmp/$b $f --graph=$D/$g --backend=cuda --grad --no-check --reps=10 --warmup=3 > $W/ab.json 2>>$W/ab.err
  python3 -c "import json,sys; c=json.load(open('$W/ab.json'))['cuda']; print('ab 1 $g agnn64 $b', round(c.get('fwdbwd_median_ms', -1), 4), round(c.get('median_ms', -1), 4))" >> $S 2>>$W/ab.err
done; done; done
t layers
timeout 150 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog ego-twitter --layers gat gatv2 agnn --parts speed --reps 10 > $W/layers.txt 2>&1
grep "^|" $W/layers.txt >> $S
t train
timeout 80 python3 bench/train_large.py --datasets $D --graphs ego-twitter --models gat > $W/train.txt 2>&1
grep "^|" $W/train.txt >> $S
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
