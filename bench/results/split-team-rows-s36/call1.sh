# Session 36 call 1: the split's final kernel with each in-chunk heavy row
# taken by one team (GNNC_SPLIT_TEAM_ROWS=1) against the block-wide walk
# (unset). First the team variant's checks against the reference (--grad,
# every scoreboard op in f32 and bf16 and the attention/max examples, on
# graphs whose chunks hold heavy rows: --max-chunks=256 on pubmed and a
# power-law graph), then the A/B: forward and forward+backward on the three
# scoreboard graphs with in-chunk heavy rows, variants interleaved.
set -u
source bench/gpu_setup.sh .carry "$OUT"
pl="powerlaw:nodes=20000,edges=200000,seed=1,alpha=1.2"
t check
mkdir -p $R/runs
E=(examples/gat.mlir examples/gatv2.mlir examples/transformer.mlir examples/sage_max.mlir examples/agnn.mlir)
for s in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum spmm_unweighted max gatv2 gt; do E+=($B/peers/$s/$op.mlir); done; done
for g in "$D/pubmed|256" "$pl|256" "$pl|8192"; do for e in "${E[@]}"; do echo "$g|$e"; done; done | xargs -P 8 -I{} bash -c '
  IFS="|" read -r g mc f <<< "$1"
  tag=$(basename "$g" | tr ":=," "___")_mc${mc}__$(basename "$(dirname "$f")")_$(basename "$f" .mlir)
  GNNC_SPLIT_TEAM_ROWS=1 timeout 300 '"$B"'/bin/gnn-run "$f" --grad --graph="$g" --max-chunks=$mc --backend=cuda --reps=1 --warmup=0 > '"$R"'/runs/$tag.json 2> '"$R"'/runs/$tag.err
  echo $? > '"$R"'/runs/$tag.rc' _ {}
python3 - $R/runs > $R/checks.txt <<'PY'
import glob, json, os, sys
ok = bad = 0
for rc in sorted(glob.glob(sys.argv[1] + "/*.rc")):
    base = rc[:-3]; code = int(open(rc).read())
    try:
        c = json.load(open(base + ".json"))["cuda"]
        line = f"{os.path.basename(base):70s} rc={code} match={c.get('match')}"
    except Exception:
        line = f"{os.path.basename(base):70s} rc={code} no summary ({open(base + '.err').read().strip()[-300:]})"
    good = code == 0 and "match=True" in line
    ok += good; bad += not good
    print(line)
print(f"{ok} passed, {bad} failed")
PY
tail -1 $R/checks.txt > $R/progress-checks.txt
t ab
run() { # variant set op graph mode
  local v=$1 s=$2 op=$3 g=$4 m=$5 fl=(); [ $m = grad ] && fl=(--grad)
  if [ $v = 1 ]; then export GNNC_SPLIT_TEAM_ROWS=1; else unset GNNC_SPLIT_TEAM_ROWS; fi
  $B/bin/gnn-run $B/peers/$s/$op.mlir --graph=/tmp/$g.npy --backend=cuda --reps=20 --warmup=5 --no-check "${fl[@]}" > /tmp/o.json 2>/tmp/e.txt
  python3 -c "
import json; d=json.load(open('/tmp/o.json'))['cuda']
print(json.dumps({'graph':'$g','set':'$s','op':'$op','mode':'$m','v':$v,'ms':d['median_ms'],'fwdbwd_ms':d.get('fwdbwd_median_ms')}))" >> $R/ab.jsonl || { echo "$v $s $op $g $m"; cat /tmp/e.txt; } >> $R/errors.txt
}
for g in arxiv-like musae-github blogcatalog; do python3 $B/peers/dump_graph.py $g $D /tmp/$g.npy > /dev/null; done
for g in arxiv-like musae-github blogcatalog; do t $g; for s in gnnc_ops gnnc_ops_bf16; do for op in spmm_sum spmm_unweighted max gatv2 gt; do
  for v in 0 1 0 1; do run $v $s $op $g fwd; done
  for v in 0 1; do run $v $s $op $g grad; done
done; done; done
t done
