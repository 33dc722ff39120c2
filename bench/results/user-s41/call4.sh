#!/usr/bin/env bash
# Call 4: the session's merged code on CUDA (the helpers' fixes, the wide-dot
# change), then GAT's forward+backward A/B (gnn-run old = 02fa423, new =
# HEAD: call 3 lost it to the summary's non-JSON NaN, fixed since) and
# issue 28's per-layer table on its three graphs with every layer.
# Outputs: summary.txt and out.tgz.
set -u
for v in gnn-run gnn-run-old; do xz -dc .carry/bin/$v.xz > /tmp/$v; chmod +x /tmp/$v; done
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider --maxfail=20 \
  test_nn_cuda.py test_reliability.py test_typed.py test_inference.py test_message_passing.py test_mp_layers.py > $W/pytest1.txt 2>&1)
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider --maxfail=20 \
  test_nn.py test_bipartite.py -k "gat or agnn or coo or bias or hetero" > $W/pytest2.txt 2>&1)
{ echo "pytest1: $(tail -1 $W/pytest1.txt)"; echo "pytest2: $(tail -1 $W/pytest2.txt)"; grep -E "^FAILED|^ERROR" $W/pytest1.txt $W/pytest2.txt | head -20; } >> $S
t ab
for r in 1; do for g in ego-twitter blogcatalog musae-github pubmed; do for b in gnn-run-old gnn-run; do
  timeout 60 /tmp/$b bench/results/user-s41/ir/gat_128.mlir --graph=$D/$g --backend=cuda --grad --no-check --reps=10 --warmup=3 > $W/ab.json 2>>$W/ab.err
  python3 -c "import json; c=json.load(open('$W/ab.json'))['cuda']; print('ab $r $g gat_128 $b', round(c.get('fwdbwd_median_ms', -1), 4))" >> $S 2>>$W/ab.err
done; done; done
t layers
timeout 110 python3 bench/nn_layers.py --datasets $D --graphs pubmed musae-github blogcatalog --parts speed --reps 10 > $W/layers.txt 2>&1
grep "^|" $W/layers.txt >> $S
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
