# Session 35 call 5: gnn-run's forward at more chunks (--max-chunks; smaller
# chunks, so medium rows cross chunks and take the partial path instead of
# the final kernel's block-per-row walk) and forced thresholds (--split).
source bench/gpu_setup.sh .carry "$OUT"
for g in arxiv-like musae-github blogcatalog; do
  python3 $B/peers/dump_graph.py $g $D /tmp/$g.npy > /dev/null
  t $g
  for s in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum gt; do for mc in 8192 32768 131072; do for sp in -1 32 64 128; do
    $B/bin/gnn-run $B/peers/$s/$op.mlir --graph=/tmp/$g.npy --backend=cuda --reps=20 --warmup=5 --no-check --split=$sp --max-chunks=$mc --profile-steps > /tmp/o.json 2>/tmp/e.txt
    python3 -c "
import json; d=json.load(open('/tmp/o.json'))['cuda']
print(json.dumps({'graph':'$g','set':'$s','op':'$op','mc':$mc,'split':$sp,'ms':d['median_ms'],'mib':d.get('peak_device_bytes',0)/2**20,'steps':[(x['step'],round(x['median_ms'],4)) for x in d['step_ms']]}))" >> $R/mc.jsonl || { echo "$g $s $op $mc $sp"; cat /tmp/e.txt; } >> $R/errors.txt
  done; done; done; done
done
t done
