"""Where a sampled-training epoch's host time goes (issue 30): runs
examples/python/train_ddp.py in one process under sampler.c, sampling the
epochs after the first (the JIT's), with Python's perf trampolines on
(3.12: Python functions appear as native frames, named in
/tmp/perf-PID.map, which is copied beside the samples).
    python bench/probes/hostprof/sample_epoch.py LIBSAMPLER OUTDIR -- ARGS..."""
import ctypes, os, shutil, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "python"))
import train_ddp

lib = ctypes.CDLL(sys.argv[1])
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
argv = sys.argv[sys.argv.index("--") + 1:]
if hasattr(sys, "activate_stack_trampoline"):
    sys.activate_stack_trampoline("perf")
orig = train_ddp.Run.train_epoch


def train_epoch(self, epoch):
    if epoch >= 1:
        lib.sampler_start(100)
    try:
        return orig(self, epoch)
    finally:
        if epoch >= 1:
            lib.sampler_stop()


train_ddp.Run.train_epoch = train_epoch
train_ddp.main(argv)
lib.sampler_dump(os.path.join(out, "samples.txt").encode())
pm = f"/tmp/perf-{os.getpid()}.map"
if os.path.exists(pm):
    shutil.copy(pm, os.path.join(out, "perf.map"))
