#!/usr/bin/env bash
# Session 69, call 1 (one GPU). Part 1 is session 68's call3.sh unchanged
# (the chunk rule of chooseSplit, A = e0be1a5's gnn-run, B = with
# checks-s68/chunk-rule.patch; the scoreboard ops on arxiv-like whose kernels
# the rule changes, medians of 20 after 5, A B A B). Part 2: why the bf16 max
# is no faster than f32 on the small graphs (session 68: blogcatalog bf16
# 0.167 ms forward+backward, f32 0.131): per-step medians of both types on
# blogcatalog, musae-github and pubmed. Part 3: ncu (speed of light,
# occupancy, warp states, scheduler) of the bf16 and f32 max kernels on
# blogcatalog, forward and backward. C = gnn-run built with
# the working tree of session 69 (spmm `counted`: an unweighted bf16/f16 max's codes count the edges
# attaining the extremum instead of naming a single one by id: 31.5 SASS
# instructions per edge in the heavy-row loop instead of 43, the four
# gathers issued together): checked against the reference, then timed in
# part 2 beside A.
set -u
bash bench/results/checks-s68/call3.sh > /dev/null 2>&1
echo "== part1 done $(date +%T)" >> "$OUT"/progress.txt
P=.carry/peers; G=/tmp/graphs; mkdir -p $G
export PATH=/usr/local/cuda/bin:$PATH GNNC_CACHE_DIR=/tmp/gnnc-kernels
for g in blogcatalog musae-github pubmed; do python3 $P/dump_graph.py $g .carry/datasets $G/$g.npy; done > /tmp/dump.log 2>&1
xz -dc .carry/bin/gnn-run-C.xz > /tmp/bin/C; chmod +x /tmp/bin/C
for g in blogcatalog musae-github; do
  timeout 120 /tmp/bin/C $P/gnnc_ops_bf16/max.mlir --graph=$G/$g.npy --backend=cuda --grad --reps=3 --warmup=1 \
    > /tmp/c.json 2>&1; echo "C check $g rc=$? $(grep -o '"match": [a-z]*' /tmp/c.json | sort | uniq -c | tr '\n' ' ')" >> "$OUT"/profile.txt
  cp /tmp/c.json "$OUT"/check-C-$g.json
done
python3 $P/dump_graph.py arxiv-like /tmp $G/arxiv-like.npy > /dev/null 2>&1
for g in blogcatalog musae-github pubmed arxiv-like; do
  for v in A C A C A:f32; do
    set=gnnc_ops_bf16; [ $v = A:f32 ] && set=gnnc_ops; v=${v%:*}
    timeout 60 /tmp/bin/$v $P/$set/max.mlir --graph=$G/$g.npy --backend=cuda \
      --grad --no-check --reps=30 --warmup=5 --profile-steps > /tmp/p.json 2> /tmp/p.err
    python3 - $g $set $v <<'PY' >> "$OUT"/profile.txt
import json, sys
try:
    c = json.load(open("/tmp/p.json"))["cuda"]
    f = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["fwd"]["step_ms"])
    b = " ".join("%s=%.4f" % (x["step"], x["median_ms"]) for x in c["bwd"]["step_ms"])
    print(*sys.argv[1:], "fwdbwd %.4f" % c["fwdbwd_median_ms"], "| fwd %.4f:" % c["fwd"]["median_ms"], f,
          "| bwd %.4f:" % c["bwd"]["median_ms"], b)
except Exception as e:
    print(*sys.argv[1:], "error", e, open("/tmp/p.err").read()[:300])
PY
  done
done
echo "== part2 done $(date +%T)" >> "$OUT"/progress.txt
for set in gnnc_ops_bf16 gnnc_ops; do
  timeout 240 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section MemoryWorkloadAnalysis \
    --kernel-name regex:'spmm_0|aggregation_0|elementwise_0|extremum_grad_0' \
    /tmp/bin/A $P/$set/max.mlir --graph=$G/blogcatalog.npy --backend=cuda --grad --no-check --reps=1 --warmup=0 \
    > "$OUT"/ncu-$set.txt 2>&1
done
echo "== part3 done $(date +%T)" >> "$OUT"/progress.txt
cat "$OUT"/ab.txt "$OUT"/profile.txt
