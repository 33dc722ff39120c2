#!/usr/bin/env bash
# Call 1: the whole Python suite on CUDA, 8 shards over the machine's GPUs (
# bench/pytest_shard.py), test_nn_cuda.py included. Outputs:
# summary.txt (each shard's closing line, the failures) and out.tgz.
set -u
source bench/gpu_setup.sh .carry "$OUT"
W=/tmp/w; mkdir -p $W; S=$R/summary.txt
nvidia-smi -L >> $S
t pytest
export PYTHONPATH=$PYTHONPATH:$PWD/bench
N=8; NG=$(nvidia-smi -L | wc -l)
for i in $(seq 0 $((N - 1))); do
  (cd python/tests && CUDA_VISIBLE_DEVICES=$((i % NG)) GNNC_SHARD=$i/$N GNNC_TEST_DEVICE=cuda \
    timeout 500 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rs -o faulthandler_timeout=300 \
    > $W/pytest-$i.txt 2>&1) &
done
wait
for i in $(seq 0 $((N - 1))); do echo "shard $i: $(tail -1 $W/pytest-$i.txt)" >> $S; done
grep -h -E "^FAILED|^ERROR" $W/pytest-*.txt | head -60 >> $S
t done
cp $R/progress.txt $W/; tar czf $R/out.tgz -C $W .
