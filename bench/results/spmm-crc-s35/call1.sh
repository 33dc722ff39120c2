# Session 35 calls 1 and 2: the low-degree SpMM with a coalesced read of each row's
# column indices (bench/probes/spmm-crc/) against the emitted kernel and
# cuSPARSE, f32 and bf16, the five scoreboard graphs; gnn-run's own figures
# for spmm_sum beside them.
source bench/gpu_setup.sh .carry "$OUT"
P=bench/probes/spmm-crc; G=/tmp/csr
t build; nvcc -O3 -arch=sm_90 -o /tmp/spmm_crc $P/spmm_crc.cu -lcusparse 2> $R/nvcc.txt
t csr; python3 $P/graphs_to_csr.py $B/peers $D $G pubmed musae-github blogcatalog arxiv-like qm9-batch4096 > $R/graphs.txt 2>&1
t probe; /tmp/spmm_crc $G pubmed musae-github blogcatalog arxiv-like qm9-batch4096 > $R/probe.jsonl 2> $R/probe.err
t gnnrun
for g in pubmed musae-github blogcatalog arxiv-like qm9-batch4096; do
  python3 $B/peers/dump_graph.py $g $D /tmp/$g.npy > /dev/null
  for s in gnnc_ops gnnc_ops_bf16; do
    $B/bin/gnn-run $B/peers/$s/spmm_sum.mlir --graph=/tmp/$g.npy --backend=cuda --reps=20 --warmup=5 --no-check \
      | python3 -c "import json,sys; d=json.load(sys.stdin)['cuda']; print(json.dumps({'graph':'$g','set':'$s','ms':d['median_ms']}))" >> $R/gnnrun.jsonl
  done
done
t steps
for g in musae-github arxiv-like; do for s in gnnc_ops gnnc_ops_bf16; do
  $B/bin/gnn-run $B/peers/$s/spmm_sum.mlir --graph=/tmp/$g.npy --backend=cuda --reps=20 --warmup=5 --no-check --profile-steps > $R/steps-$g-$s.json; done; done
t done
