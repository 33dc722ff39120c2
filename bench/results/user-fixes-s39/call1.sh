#!/usr/bin/env bash
# Call 1: this session's Python fixes on CUDA (autocast output dtypes, SAGE's
# non-finite weights, sparse COO adjacencies, hetero/bipartite messages), and
# what reduce-overhead's input copies and module guards cost on Cora.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 270 python3 -m pytest -q -p no:cacheprovider -x \
  test_autocast.py test_nan.py test_bipartite.py test_hgt.py test_typed.py test_nn.py \
  test_message_passing.py test_rgcn.py test_nn_cuda.py > $R/pytest.txt 2>&1; cd ../..
P=bench/probes/compile
for m in gcn gat; do
  t "recipes $m"
  timeout 85 python3 $P/step_recipes.py --model $m --seeds 2 --recipes eager,loss+opt > $R/cora-$m.txt 2>&1
  timeout 60 python3 $P/step_recipes.py --model $m --seeds 2 --libs gnnc --recipes loss+opt --static --skip-module-guards >> $R/cora-$m.txt 2>&1
done
t done
