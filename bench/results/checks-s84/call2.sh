#!/usr/bin/env bash
# Session 84, call 2 (the warm machine of call 1, one NVIDIA H100): did s84c
# (the ReLU in the GEMM's epilogue) make bench/gine.py's model step slower?
# Call 1 ran s84a s84c s84a s84c and the s84c runs were slower, on a host
# whose PyG step moved 3.3-4.3 ms; this call alternates the other way round,
# three runs each, --rounds 2. (Run as one command line; kept here.)
set -u; mkdir -p .carry/py312; xz -dc .carry/s84a/so.xz > .carry/py312/_gnnc.cpython-312-x86_64-linux-gnu.so
source bench/gpu_setup.sh .carry "$OUT"
mkdir -p /tmp/pkg-s84c; cp -r python/gnnc /tmp/pkg-s84c/; xz -dc .carry/s84c/so.xz > /tmp/pkg-s84c/gnnc/_gnnc.cpython-312-x86_64-linux-gnu.so
S0=$(date +%s)
for v in s84c s84a s84c s84a s84c s84a; do
  [ $(( $(date +%s) - S0 )) -gt 170 ] && break
  P=/tmp/pkg; [ $v = s84c ] && P=/tmp/pkg-s84c
  echo "== $v" >> $R/ab.txt
  PYTHONPATH=$P timeout 35 python3 bench/gine.py "$D/qm9" --batch 4096 --rounds 2 2>&1 | grep forward_backward >> $R/ab.txt
done
cat $R/ab.txt
