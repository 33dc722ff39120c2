# Session 36 call 4 (after 7473c47): sanitize.sh's racecheck verdict with
# hazards inside cuBLAS's nvjet kernels marked (the half-precision GAT
# --grad cases that failed in call 2), and the CUDA tests of what this
# session changed in Python (the loader, sparse adjacency checks, lazy
# initialisation, PyG's to_hetero on gnnc layers, GINE, message passing
# copies and operators, GAT self-loop features; test_message_passing.py and
# test_nan.py whole).
source bench/gpu_setup.sh .carry "$OUT"
pl="powerlaw:nodes=5000,edges=100000,seed=1,alpha=1.2"
t start
( TYPES="bf16 f16" TOOLS=racecheck CASES="/gat-(bf16|f16)-(fwd|grad)[.]mlir$" timeout 300 bash test/Integration/sanitize.sh $B/bin/gnn-run $D "$pl" > $R/racecheck-gat.txt 2>&1; echo "rc=$?" >> $R/racecheck-gat.txt ) &
p1=$!
( cd python/tests && GNNC_TEST_DEVICE=cuda timeout 330 python3 -m pytest -q -p no:cacheprovider -rf test_loader.py test_bipartite.py "test_nn.py" test_message_passing.py test_nan.py -k "not test_nn.py or lazy or sparse or gine or hetero" > $R/pytest-cuda.txt 2>&1; echo "rc=$?" >> $R/pytest-cuda.txt ) &
p2=$!
wait $p1 $p2
t done
cat $R/racecheck-gat.txt; tail -4 $R/pytest-cuda.txt
