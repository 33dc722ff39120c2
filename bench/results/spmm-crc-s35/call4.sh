# Session 35 call 4: gnn-run's forward at forced heavy-row thresholds
# (--split; -1 = the model's choice) on the three scoreboard graphs with
# heavy rows, f32 and bf16: does a warp per row up to a larger threshold
# beat the block-per-row path of the final kernel?
source bench/gpu_setup.sh .carry "$OUT"
for g in arxiv-like musae-github blogcatalog; do
  python3 $B/peers/dump_graph.py $g $D /tmp/$g.npy > /dev/null
  t $g
  for s in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum max gt; do for sp in -1 0 64 128 256 512; do
    $B/bin/gnn-run $B/peers/$s/$op.mlir --graph=/tmp/$g.npy --backend=cuda --reps=20 --warmup=5 --no-check --split=$sp --profile-steps > /tmp/o.json 2>/tmp/e.txt
    python3 -c "
import json; d=json.load(open('/tmp/o.json'))['cuda']
print(json.dumps({'graph':'$g','set':'$s','op':'$op','split':$sp,'ms':d['median_ms'],'steps':[(x['step'],round(x['median_ms'],4)) for x in d['step_ms']]}))" >> $R/split.jsonl || { echo "$g $s $op $sp"; cat /tmp/e.txt; } >> $R/errors.txt
  done; done; done
done
t done
