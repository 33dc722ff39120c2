#!/usr/bin/env bash
# Call 2: the compile fix on CUDA (every test file that compiles), then the
# reduce-overhead recipes on Cora and Citeseer (GCN, GAT), gnnc and PyG.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 240 python3 -m pytest -q -p no:cacheprovider -k "compile or Compile" \
  test_autocast.py test_bipartite.py test_core.py test_gcn_model.py test_hgt.py test_message_passing.py \
  test_mp_layers.py test_nn.py test_nn_cuda.py test_rgcn.py > $R/pytest.txt 2>&1; cd ../..
P=bench/probes/compile/step_recipes.py
for ds in cora citeseer; do for m in gcn gat; do
  t "$ds $m"
  prof=""; [ $ds$m = coragcn ] && prof="--profile loss+opt"
  timeout 150 python3 $P --dataset $ds --model $m --seeds 2 $prof > $R/$ds-$m.txt 2>&1
done; done
t done
