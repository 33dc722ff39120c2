#!/usr/bin/env bash
# Call 2 (every fix of the session merged): the Python suite on CUDA (the
# files in order, as far as 430 s go), then which of reduce-overhead's two
# knobs (static inputs, module guards) made GAT's step faster in call 1.
source bench/gpu_setup.sh .carry "$OUT"
t pytest
cd python/tests && GNNC_TEST_DEVICE=cuda timeout 430 python3 -m pytest -q -p no:cacheprovider --maxfail=40 \
  test_autocast.py test_nan.py test_typed.py test_bipartite.py test_hgt.py test_rgcn.py test_nn.py \
  test_message_passing.py test_nn_cuda.py test_core.py test_gcn_model.py test_half.py > $R/pytest.txt 2>&1; cd ../..
P=bench/probes/compile
t "recipes gat"
timeout 50 python3 $P/step_recipes.py --model gat --seeds 2 --libs gnnc --recipes loss+opt --static > $R/cora-gat.txt 2>&1
timeout 50 python3 $P/step_recipes.py --model gat --seeds 2 --libs gnnc --recipes loss+opt --skip-module-guards >> $R/cora-gat.txt 2>&1
t done
