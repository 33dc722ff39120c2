#!/usr/bin/env bash
# Call 2: every merge of session 40 on CUDA (the typed graph's edge types
# written in place, GIN's fold of PyG's MLP, the models, mixed dtypes, COO
# caching, the layers' host-time cuts), then A/B of the layers' host time:
# A = the session's starting package (3566a61's python/gnnc, same native
# module: no C++ the Python module uses changed), B = the working tree.
set -u
source bench/gpu_setup.sh .carry "$OUT"   # B in /tmp/pkg
mkdir -p /tmp/pkgA; cp -r .carry/pyA/python/gnnc /tmp/pkgA/; cp $B/py312/_gnnc*.so /tmp/pkgA/gnnc/
t pytest
(cd python/tests && GNNC_TEST_DEVICE=cuda timeout 300 python3 -m pytest -q -p no:cacheprovider --maxfail=30 \
  test_typed.py test_nn_cuda.py test_reliability.py test_core.py test_models.py test_loader.py test_utils.py test_autocast.py test_nn.py \
  > $R/pytest.txt 2>&1); tail -3 $R/pytest.txt
t host
for s in A B A B; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  echo "== $s" >> $R/host.txt
  PYTHONPATH=$pp timeout 45 python3 bench/nn_layers.py --datasets $D --parts host >> $R/host.txt 2>&1
done
t cora
for s in A B A B; do
  if [ $s = A ]; then pp=/tmp/pkgA; else pp=/tmp/pkg; fi
  for m in gcn gat; do
    echo "== $s $m" >> $R/cora.txt
    PYTHONPATH=$pp timeout 40 python3 bench/probes/compile/step_recipes.py --model $m --seeds 2 --recipes eager >> $R/cora.txt 2>&1
  done
done
t layers
PYTHONPATH=/tmp/pkg timeout 150 python3 bench/nn_layers.py --datasets $D --parts speed --reps 20 > $R/layers-B.txt 2>&1
t done
