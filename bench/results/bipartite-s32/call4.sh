#!/usr/bin/env bash
# Session 32, call 4: the attention layers' bipartite form moved to bipartite
# gnn functions (GATConv, GATv2Conv, TransformerConv, GINEConv, HGTConv):
# their CUDA tests against PyG; the probe once more (fused against padded
# SAGE) with the final tree.
set -u
source bench/gpu_setup.sh .carry "$OUT"
t pytest
( cd python/tests
  GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider -rf \
    test_bipartite.py > $R/pytest-bipartite.txt 2>&1
  tail -2 $R/pytest-bipartite.txt
  GNNC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider -rf \
    test_hgt.py test_rgcn.py > $R/pytest-hgt-rgcn.txt 2>&1
  tail -2 $R/pytest-hgt-rgcn.txt )
t probe
ROUNDS=5 PHASES=1 VARIANTS=p1tf,p1tfP timeout 200 python3 bench/probes/loader/prefetch.py > $R/prefetch.txt 2>&1
grep -E "==|^p[01]|Error|error" $R/prefetch.txt | head -30
t done
