// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:8 %s | FileCheck %s
// RUN: gnn-translate --gnn-to-program --gnn-stats=mean-degree:8 %s | FileCheck %s --check-prefix=PROGRAM

// An sddmm's dot products are split among a team of lanes per element of
// the edge result: each lane reads 16-byte vectors of both rows (8 bf16, 4
// f32), up to 4 of them, and fmas them; butterfly shuffles add the lanes'
// sums, and the team's first lane stores. (A thread per element would read
// 2 x 128 scalars alone, each warp's load touching 32 rows.) The weighted
// spmm's edge-weight gradient dw[e] = dy[dst] . x[src] is this kernel.

// 128 bf16: 16 vectors, 4 lanes.
// CHECK-LABEL: void __launch_bounds__(256) sddmm_0(
// CHECK: const long long [[ROW:row[0-9]+]] = [[T:t[0-9]+]] / 4;
// CHECK-NEXT: const long long [[LANE:lane[0-9]+]] = [[T]] % 4;
// CHECK: for (long long [[IV:iv[0-9]+]] = [[LANE]]; [[IV]] < 16LL; [[IV]] += 4LL) {
// CHECK: = __ldg(reinterpret_cast<const uint4 *>(in0 +
// CHECK: = __ldg(reinterpret_cast<const uint4 *>(in1 +
// CHECK-COUNT-8: fmaf(
// CHECK: = gnn_segment_mask(4);
// CHECK: __shfl_xor_sync(
// CHECK: if ({{v[0-9]+}}) {
// CHECK-NEXT: out0[[[ROW]]] = gnn_round_bf16(

// 128 f32: 32 float4, 8 lanes.
// CHECK-LABEL: void __launch_bounds__(256) sddmm_1(
// CHECK: / 8;
// CHECK: iv{{[0-9]+}} < 32LL; iv{{[0-9]+}} += 8LL
// CHECK: __ldg(reinterpret_cast<const float4 *>(in0 +
// CHECK: = gnn_segment_mask(8);

// Two heads of 16 f32: 4 float4 per (edge, head) element, one thread each.
// CHECK-LABEL: void __launch_bounds__(256) sddmm_2(
// CHECK-NOT: lane
// CHECK: iv{{[0-9]+}} = 0LL; iv{{[0-9]+}} < 4LL; iv{{[0-9]+}} += 1LL
// CHECK: __ldg(reinterpret_cast<const float4 *>(in0 +
// CHECK-NOT: __shfl_xor_sync
// CHECK: }

// Two heads of 3 (no vector divides 3): scalars, one thread per element.
// CHECK-LABEL: void __launch_bounds__(256) sddmm_3(
// CHECK-NOT: float4
// CHECK-NOT: __shfl_xor_sync
// CHECK: }

// An element-wise sddmm: a thread per element.
// CHECK-LABEL: void __launch_bounds__(256) sddmm_4(
// CHECK-NOT: __shfl_xor_sync
// CHECK: }

// The grid covers a team per element: edges x 4 threads, edges x 8, one per
// (edge, head) element, one per element.
// PROGRAM: "kernel": "sddmm_0",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 4), 256)"
// PROGRAM: "kernel": "sddmm_1",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 8), 256)"
// PROGRAM: "kernel": "sddmm_2",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 2), 256)"
// PROGRAM: "kernel": "sddmm_3",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 2), 256)"
// PROGRAM: "kernel": "sddmm_4",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 128), 256)"
func.func @edge_maps(%g: !gnn.graph, %h: tensor<?x128xbf16>, %dy: tensor<?x128xbf16>, %x: tensor<?x128xf32>, %p: tensor<?x2x16xf32>, %o: tensor<?x2x3xf32>)
    -> (tensor<?xbf16>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x128xf32>) {
  %a = gnn.sddmm dot %g, %h, %dy : tensor<?x128xbf16>, tensor<?x128xbf16> -> tensor<?xbf16>
  %b = gnn.sddmm dot %g, %x, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?xf32>
  %c = gnn.sddmm dot %g, %p, %p : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x2xf32>
  %d = gnn.sddmm dot %g, %o, %o : tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2xf32>
  %e = gnn.sddmm mul %g, %x, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  return %a, %b, %c, %d, %e : tensor<?xbf16>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x128xf32>
}
