# Sourced by this session's call scripts (factored out after they ran; the
# steps are the ones they ran): the package set up (bench/gpu_setup.sh:
# B, R, D, t, the new package under /tmp/pkg), the session start's under
# /tmp/old, and the A/B steps. pkg_path old|new gives a package's path.
source bench/gpu_setup.sh .carry /tmp/r
mkdir -p /tmp/old && tar xJf .carry/old/oldpkg.tar.xz -C /tmp/old
cat $R/device.txt
pkg_path() { [ "$1" = old ] && echo /tmp/old || echo /tmp/pkg; }

# speed_ab LAYERS TIMEOUT ROWS: nn_layers.py's steps under autocast(bf16),
# old then new, 128 channels; prints the last ROWS table lines of each.
speed_ab() {
  for pkg in old new; do
    t "speed $pkg"
    PYTHONPATH=$(pkg_path $pkg) timeout $2 python3 bench/nn_layers.py --datasets $D \
      --parts speed --layers $1 --channels 128 --autocast bf16 --reps 15 \
      > $R/layers-$pkg-bf16.txt 2>&1
    echo "-- $pkg bf16"; grep -E "^\|" $R/layers-$pkg-bf16.txt | tail -$3
  done
}

# speed_f32 LAYERS TIMEOUT ROWS: the same in float32, the new package only.
speed_f32() {
  t "speed new f32"
  timeout $2 python3 bench/nn_layers.py --datasets $D --parts speed --layers $1 \
    --channels 128 --reps 15 > $R/layers-new-f32.txt 2>&1
  echo "-- new f32"; grep -E "^\|" $R/layers-new-f32.txt | tail -$3
}

# train_ab: autocast_accuracy.py (3 seeds), old then new (with gnnc fp32).
train_ab() {
  for pkg in old new; do
    t "train $pkg"
    F=""; [ $pkg = new ] && F=--fp32-gnnc
    PYTHONPATH=$(pkg_path $pkg) timeout 110 python3 bench/autocast_accuracy.py --seeds 3 $F \
      > $R/train-$pkg.txt 2>&1
    echo "-- train $pkg"; grep -E "gnnc|within" $R/train-$pkg.txt | grep -v '^{'
  done
}
