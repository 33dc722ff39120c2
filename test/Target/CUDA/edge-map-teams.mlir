// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:8 %s | FileCheck %s
// RUN: gnn-translate --gnn-to-program --gnn-stats=mean-degree:8 %s | FileCheck %s --check-prefix=PROGRAM

// An sddmm's dot products are split among a team of lanes per element of
// the edge result: each lane reads 16-byte vectors of both rows (8 bf16, 4
// f32) and fmas them, butterfly shuffles add the lanes' sums, and the
// team's first lane stores. (A thread per element would read 2 x 128
// scalars alone, each warp's load touching 32 rows.) The weighted spmm's
// edge-weight gradient dw[e] = dy[dst] . x[src] is this kernel.

// CHECK-LABEL: void __launch_bounds__(256) sddmm_0(
// CHECK: const long long [[ROW:row[0-9]+]] = [[T:t[0-9]+]] / 16;
// CHECK-NEXT: const long long [[LANE:lane[0-9]+]] = [[T]] % 16;
// CHECK: for (long long [[IV:iv[0-9]+]] = [[LANE]]; [[IV]] < 16LL; [[IV]] += 16LL) {
// CHECK: = __ldg(reinterpret_cast<const uint4 *>(in0 +
// CHECK: = __ldg(reinterpret_cast<const uint4 *>(in1 +
// CHECK-COUNT-8: fmaf(
// CHECK: = gnn_segment_mask(16);
// CHECK: __shfl_xor_sync(
// CHECK: if ({{v[0-9]+}}) {
// CHECK-NEXT: out0[[[ROW]]] = gnn_round_bf16(

// f32 rows of 128: 32 lanes of float4. Two heads of 3 (no vector divides
// 3): 4 lanes, scalars, per (edge, head) element.
// CHECK-LABEL: void __launch_bounds__(256) sddmm_1(
// CHECK: / 32;
// CHECK: __ldg(reinterpret_cast<const float4 *>(in0 +
// CHECK: = gnn_segment_mask(32);
// CHECK-LABEL: void __launch_bounds__(256) sddmm_2(
// CHECK: / 4;
// CHECK-NOT: float4
// CHECK: = gnn_segment_mask(4);
// CHECK-LABEL: void __launch_bounds__(256) sddmm_3(
// CHECK-NOT: __shfl_xor_sync
// CHECK: }

// The grid covers a team per element: edges x 16 threads, edges x 32, edges
// x 2 x 4.
// PROGRAM: "kernel": "sddmm_0",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 16), 256)"
// PROGRAM: "kernel": "sddmm_1",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 32), 256)"
// PROGRAM: "kernel": "sddmm_2",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 8), 256)"
// PROGRAM: "kernel": "sddmm_3",
// PROGRAM-NEXT: "grid": [
// PROGRAM-NEXT: "ceil_div((edges * 128), 256)"
func.func @edge_maps(%g: !gnn.graph, %h: tensor<?x128xbf16>, %dy: tensor<?x128xbf16>, %x: tensor<?x128xf32>, %o: tensor<?x2x3xf32>)
    -> (tensor<?xbf16>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x128xf32>) {
  %a = gnn.sddmm dot %g, %h, %dy : tensor<?x128xbf16>, tensor<?x128xbf16> -> tensor<?xbf16>
  %b = gnn.sddmm dot %g, %x, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?xf32>
  %c = gnn.sddmm dot %g, %o, %o : tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2xf32>
  %d = gnn.sddmm mul %g, %x, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  return %a, %b, %c, %d : tensor<?xbf16>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x128xf32>
}
