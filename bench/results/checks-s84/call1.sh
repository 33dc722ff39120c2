#!/usr/bin/env bash
# Session 84, call 1 (one GPU). Builds: s84a (523f302, the session's base),
# s84b (d0ce78a: gnn-autodiff reads a ReLU's mask from its result), s84c
# (85e63d1 + a biased GEMM's ReLU in cuBLASLt's RELU_BIAS epilogue, not
# committed before this call).
#  1. bench/probes/gemm/relu_epilogue.cu: does RELU_BIAS keep torch.relu's
#     values (NaN kept?), and its time against gemm + relu kernel.
#  2. The runtime gtests (s84c; GpuLibrary.GemmBiasReluIsTorchReluOfTheSum).
#  3. s84c against the reference: GINE, GIN and the examples' training steps
#     and forwards; GINE's and GIN's step times s84a / s84b / s84c.
#  4. bench/gine.py, model and layer (s84a, s84c alternating).
#  5. test_nn_cuda.py (s84c).
#  6. Issue 28's host-time and compiled-epoch targets beside PyTorch's own
#     floor on the same host (bench/probes/host/issue28_floors.py;
#     step_recipes.py with lib "mlp": the model without its graph, eager and
#     loss+opt under mode="reduce-overhead"). s84a.
set -u
S0=$(date +%s)
LIMIT=${LIMIT:-570}
left() { echo $(( LIMIT - ($(date +%s) - S0) )); }
mkdir -p .carry/py312; xz -dc .carry/s84a/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
for v in s84a s84b s84c; do xz -dc .carry/$v/gnn-run.xz > /tmp/run-$v; chmod +x /tmp/run-$v; done
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-s84c; cp -r python/gnnc /tmp/pkg-s84c/; xz -dc .carry/s84c/so.xz > /tmp/pkg-s84c/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
pkg() { [ $1 = s84a ] && echo /tmp/pkg || echo /tmp/pkg-$1; }
A=$R/all.txt
t relu
timeout 60 .carry/relu_epilogue >> $A 2>&1; echo "relu_epilogue rc $?" >> $A
t gtest
xz -dc .carry/s84c/rt.xz > /tmp/rt; chmod +x /tmp/rt
timeout 120 /tmp/rt > /tmp/rt.txt 2>&1; echo "gtest rc $?" >> $A
grep -E "PASSED|FAILED|GemmBiasRelu" /tmp/rt.txt | head -20 >> $A
t refs
for f in .carry/gine_nodiff.mlir .carry/gine_layer.mlir examples/gin.mlir examples/gcn.mlir examples/gcn3.mlir examples/sage_mean.mlir examples/gat.mlir; do
  for g in .carry/qm9b4096 $D/pubmed; do
    for mode in "" "--grad"; do
      [ $(left) -lt 330 ] && break
      timeout 40 /tmp/run-s84c $f --graph=$g $mode --backend=cuda --reps=2 --warmup=1 > /tmp/j 2>/tmp/j.err
      python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('ref s84c $(basename $f) $(basename $g) ${mode:-fwd} match', c.get('match'))" >> $A 2>&1 || { echo "$f $g $mode failed"; tail -3 /tmp/j.err; } >> $A
    done
  done
done
echo "refs matched: $(grep -c ' match True' $A)" >> $A
t ab
G="--graph=.carry/qm9b4096 --backend=cuda"
for v in s84a s84b s84c s84a s84b s84c; do
  [ $(left) -lt 250 ] && break
  timeout 30 /tmp/run-$v .carry/gine_nodiff.mlir $G --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine @f', c['median_ms'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
  timeout 30 /tmp/run-$v .carry/gine_nodiff.mlir $G --grad --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gine training fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'], 'fwd out bytes', c['fwd']['memory']['output_bytes'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
  timeout 30 /tmp/run-$v examples/gin.mlir --graph=$D/pubmed --grad --backend=cuda --reps=50 --warmup=10 --no-check > /tmp/j 2>/tmp/j.err
  python3 -c "import json; c=json.load(open('/tmp/j'))['cuda']; print('$v gin pubmed fwd', c['fwd']['median_ms'], 'bwd', c['bwd']['median_ms'], 'fwd out bytes', c['fwd']['memory']['output_bytes'])" >> $A 2>&1 || tail -3 /tmp/j.err >> $A
done
t gine
for v in s84a s84c s84a s84c; do
  [ $(left) -lt 150 ] && break
  echo "== $v gine model 4096" >> $A
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 2>&1 | tail -4 >> $A
done
for v in s84a s84c; do
  [ $(left) -lt 120 ] && break
  echo "== $v gine layer-only 4096" >> $A
  PYTHONPATH=$(pkg $v) timeout 40 python3 bench/gine.py "$D/qm9" --batch 4096 --layer-only 2>&1 | tail -3 >> $A
done
t pytest
[ $(left) -gt 90 ] && PYTHONPATH=/tmp/pkg-s84c timeout $(( $(left) - 10 < 100 ? $(left) - 10 : 100 )) python3 -m pytest -q -x -p no:cacheprovider python/tests/test_nn_cuda.py 2>&1 | tail -3 >> $A
t floors
[ $(left) -gt 60 ] && timeout $(( $(left) - 40 < 100 ? $(left) - 40 : 100 )) python3 bench/probes/host/issue28_floors.py --calls 1000 >> $A 2>&1; echo "floors rc $?" >> $A
t recipes
[ $(left) -gt 40 ] && timeout $(( $(left) - 10 )) python3 bench/probes/compile/step_recipes.py --model gcn \
  --libs mlp,gnnc,pyg --recipes eager,loss+opt --seeds 1 --epochs 150 2>&1 \
  | grep -v -i warn >> $A; echo "recipes rc $?" >> $A
t end
