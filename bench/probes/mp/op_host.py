# Inside gnnc's ops on the GPU machine's host (session 15): per forward+
# backward step, the CPU time of gnnc::call / gnnc::call_backward and of the
# autograd nodes around them, and the CUDA API calls they make (count, time).
#   GNNC_JIT=sync python3 bench/probes/mp/op_host.py DATASETS musae-github ResGatedGraphConv,TAGConv
import collections, sys, pathlib
import torch
import _layers
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
D = pathlib.Path(sys.argv[1])
c = 64
K = 20
for gname in sys.argv[2].split(","):
    ei, n = _layers.graph(D, gname, dev)
    x = torch.randn(n, c, device=dev)
    for name in sys.argv[3].split(","):
        call, pair = _layers.sides(name, c, ei, n, x, dev)
        layer = pair[0][1] if name in _layers.bench.LAYERS else pair[1][1]  # gnnc's / built-in
        xx = x.clone().requires_grad_()
        dy = torch.randn_like(call(layer, xx))

        def step():
            for p in layer.parameters(): p.grad = None
            xx.grad = None
            (call(layer, xx) * dy).sum().backward()
        for _ in range(10): step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(K): step()
            torch.cuda.synchronize()
        tot = collections.Counter(); cnt = collections.Counter()
        inner = collections.defaultdict(collections.Counter)
        inner_n = collections.defaultdict(collections.Counter)
        for e in p.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                continue
            nm = e.name
            if nm.startswith("gnnc::") or nm in ("_Step",) or nm.endswith("_StepBackward"):
                tot[nm] += e.cpu_time_total; cnt[nm] += 1
                stack = list(e.cpu_children)
                while stack:
                    ch = stack.pop()
                    if ch.name.startswith(("cuda", "cu")) and not ch.name.startswith("cudnn"):
                        inner[nm][ch.name] += ch.cpu_time_total; inner_n[nm][ch.name] += 1
                    else:
                        stack.extend(ch.cpu_children)
                        if ch.name.startswith("aten::"):
                            inner[nm][ch.name] += 0; inner_n[nm][ch.name] += 1
        print(f"== {gname} {name}", flush=True)
        for nm in tot:
            print(f"  {nm}: {cnt[nm] / K:.1f}x/step {tot[nm] / K:8.1f} us/step")
            for api, us in inner[nm].most_common():
                print(f"      {inner_n[nm][api] / K:5.1f}x {us / K:8.1f} us  {api}")
        print(flush=True)
