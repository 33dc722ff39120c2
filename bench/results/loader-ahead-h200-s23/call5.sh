source bench/gpu_setup.sh .carry "$OUT"
G=synthetic:232965:114615892:128:41
run() { # ranks ahead name
  if [ "$1" = 1 ]; then
    GNNC_AHEAD=$2 timeout 200 python3 examples/python/train_ddp.py --graph $G --epochs 5 > "$R/$3" 2>&1
  else
    GNNC_AHEAD=$2 timeout 200 python3 -m torch.distributed.run --standalone --nproc_per_node=$1 examples/python/train_ddp.py --graph $G --epochs 5 > "$R/$3" 2>&1
  fi
  echo "exit $?" >> "$R/$3"; echo "== $3"; grep -iE "epoch|exit" "$R/$3" | tail -6
}
run 2 0 a-2gpu-off.txt
run 2 1 b-2gpu-ahead.txt
run 1 0 c-1gpu-off.txt
run 1 1 d-1gpu-ahead.txt
run 2 0 e-2gpu-off.txt
run 2 1 f-2gpu-ahead.txt
