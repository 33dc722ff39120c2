# Session 35 call 3: the light-row kernel's knobs (unroll, rows per warp) in
# the probe, and ncu on gnn-run's three spmm_sum kernels (arxiv-like and
# musae-github, f32 and bf16): what limits them.
source bench/gpu_setup.sh .carry "$OUT"
P=bench/probes/spmm-crc; G=/tmp/csr; W=/tmp/w; mkdir -p $W
t build; nvcc -O3 -arch=sm_90 -o /tmp/spmm_crc $P/spmm_crc.cu -lcusparse 2> $W/nvcc.txt
t csr; python3 $P/graphs_to_csr.py $B/peers $D $G pubmed musae-github blogcatalog arxiv-like qm9-batch4096 > $W/graphs.txt 2>&1
t probe; /tmp/spmm_crc $G pubmed musae-github blogcatalog arxiv-like qm9-batch4096 > $R/probe.jsonl 2> $W/probe.err
t ncu
for g in arxiv-like musae-github; do
  python3 $B/peers/dump_graph.py $g $D /tmp/$g.npy > /dev/null
  for s in gnnc_ops gnnc_ops_bf16; do
    $B/bin/gnn-run $B/peers/$s/spmm_sum.mlir --graph=/tmp/$g.npy --backend=cuda --reps=20 --warmup=5 --no-check --profile-steps > $W/steps-$g-$s.json
    timeout 150 ncu --set full -k regex:spmm_0 -c 3 --print-details all $B/bin/gnn-run $B/peers/$s/spmm_sum.mlir --graph=/tmp/$g.npy --backend=cuda --reps=1 --warmup=0 --no-check > $W/ncu-$g-$s.txt 2>&1
  done
done
t done
tar czf $R/w.tgz -C $W .
