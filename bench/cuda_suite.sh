#!/usr/bin/env bash
# The whole Python suite on CUDA in N processes spread over the machine's
# GPUs (bench/pytest_shard.py: GNNC_SHARD=i/N), for the one-call GPU scripts:
#   bench/cuda_suite.sh LOGS SUMMARY [N] [TIMEOUT_S]
# Each shard's output goes to LOGS/pytest-<i>.txt; SUMMARY gets each shard's
# closing line, the failures and the skip reasons counted. Run from the
# repository root with the package on PYTHONPATH (bench/gpu_setup.sh).
set -u
W=$1; S=$2; N=${3:-8}; limit=${4:-500}
export PYTHONPATH=$PYTHONPATH:$PWD/bench
NG=$(nvidia-smi -L | wc -l)
for i in $(seq 0 $((N - 1))); do
  (cd python/tests && CUDA_VISIBLE_DEVICES=$((i % NG)) GNNC_SHARD=$i/$N GNNC_TEST_DEVICE=cuda \
    timeout "$limit" python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rs \
    -o faulthandler_timeout=300 > "$W/pytest-$i.txt" 2>&1
   echo $? > "$W/exit-$i.txt") &
done
wait
# Each shard's closing line and its exit status: 0 only when every test
# passed and the interpreter ended cleanly (a crash at exit, after the
# closing line, shows only there; 124: the time limit).
for i in $(seq 0 $((N - 1))); do
  echo "shard $i: $(tail -1 "$W/pytest-$i.txt") (exit $(cat "$W/exit-$i.txt"))" >> "$S"
done
grep -h -E "^FAILED|^ERROR" "$W"/pytest-*.txt | head -60 >> "$S"
grep -h "^SKIPPED" "$W"/pytest-*.txt | sed 's/^SKIPPED \[[0-9]*\] //' | sort | uniq -c |
  sort -rn | head -20 >> "$S"
