"""Does a gnnc call queued on a side stream race with the default stream's
reuse of the memory it reads (session 16)? Timings with events, the
addresses handed out, and the result against the reference.
    python bench/probes/streams/side_stream.py"""
import time, torch, gnnc
import gnnc._core as core

src = """func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %r = gnn.spmm sum %g, %x : tensor<?x3xf32> -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}"""
fn = gnnc.compile(src)
n, e = 4096, 65536
gen = torch.Generator().manual_seed(5)
ei_cpu = torch.randint(0, n, (2, e), generator=gen)
x = torch.randn(n, 3, generator=gen).cuda()
ei = ei_cpu.cuda()
fn(ei, x, num_nodes=n)
torch.cuda.synchronize()
side = torch.cuda.Stream()
s0, s1, d1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
s0.record(side)
t0 = time.perf_counter()
with torch.cuda.stream(side):
    torch.cuda._sleep(400_000_000)
    y = fn(ei, x, num_nodes=n)
    s1.record(side)
old_ptr = ei.data_ptr()
del ei
ptrs = []
for _ in range(6):
    other = torch.randint(0, n, (2, e), generator=gen).cuda()
    ptrs.append(other.data_ptr() == old_ptr)
    fn(other, x, num_nodes=n)
d1.record()
t1 = time.perf_counter()
print("side still running when the host finished the loop:", not s1.query(),
      f"host loop {1e3 * (t1 - t0):.1f} ms")
side.synchronize(); torch.cuda.synchronize()
print(f"side stream sleep+call {s0.elapsed_time(s1):.1f} ms")
print("an `other` got the dropped tensor's block:", ptrs)
want = torch.zeros(n, 3, device="cuda").index_add(0, ei_cpu[1].cuda(), x[ei_cpu[0].cuda()])
print("y matches:", torch.allclose(y, want, atol=1e-4), "nan:", bool(y.isnan().any()),
      "max diff", float((y - want).abs().max()))
print("retired graphs", len(core._graphs._retired), "entries", len(core._graphs._entries))
