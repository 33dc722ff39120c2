#!/usr/bin/env bash
# Call 4 (final code): the compile tests on CUDA (SymInt node counts,
# dynamic shapes), the reduce-overhead recipes on Cora with 3 seeds, and
# compiled training over sampled subgraphs.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 300 python3 -m pytest -q -p no:cacheprovider \
  -k "compile or Compile or dynamic or recompiling" \
  test_nn.py test_rgcn.py test_core.py test_gcn_model.py test_hgt.py test_message_passing.py \
  test_mp_layers.py test_bipartite.py test_autocast.py test_nn_cuda.py > $R/pytest.txt 2>&1; cd ../..
P=bench/probes/compile
for ds in cora citeseer; do
  t "sampled $ds"
  timeout 60 python3 $P/sampled_steps.py --dataset $ds --model gcn >> $R/sampled.txt 2>&1
done
timeout 60 python3 $P/sampled_steps.py --dataset cora --model gat >> $R/sampled.txt 2>&1
for m in gcn gat; do
  t "recipes $m"
  timeout 130 python3 $P/step_recipes.py --model $m --seeds 3 --recipes eager,model,loss+opt > $R/cora-$m.txt 2>&1
done
t done
