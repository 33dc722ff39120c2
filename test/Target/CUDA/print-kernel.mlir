// RUN: gnn-translate --gnnk-to-cuda %s | FileCheck %s

// The prelude: index type, the device header (the helpers' one copy, not
// pasted again), boundary kernels.
// CHECK: typedef int idx_t;
// CHECK-NEXT: #include "gnn_device.cuh"
// CHECK-NOT: gnn_maximumf(float a, float b)
// CHECK: extern "C" __global__ void gnn_edges_to_slots(float *__restrict__ out,
// CHECK-NEXT: const float *__restrict__ in, const idx_t *__restrict__ csr_edge,
// CHECK-NEXT: long long rows, long long width)
// CHECK: extern "C" __global__ void gnn_slots_to_edges(float *__restrict__ out,
// CHECK-NEXT: const float *__restrict__ in, const idx_t *__restrict__ csr_edge,
// CHECK-NEXT: long long rows, long long width)

// The kernel of test/Dialect/GNNKernel/ops.mlir: a warp per row, two lanes
// per feature, an unrolled f64 edge loop and a butterfly sum.
// CHECK-LABEL: // spmm_0: block 256, grid (nodes * 32) ceildiv 256
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256) spmm_0(
// CHECK-NEXT:     const float *__restrict__ in0,
// CHECK-NEXT:     float *__restrict__ out0,
// CHECK-NEXT:     const idx_t *__restrict__ csr_row_ptr,
// CHECK-NEXT:     const idx_t *__restrict__ csr_col,
// CHECK-NEXT:     long long nodes) {
// CHECK-NEXT:   const long long [[N:[a-z0-9]+]] = (long long)nodes;
// CHECK-NEXT:   const long long [[T:[a-z0-9]+]] = blockIdx.x * (long long)blockDim.x + threadIdx.x;
// CHECK-NEXT:   const long long [[ROW:row[0-9]+]] = [[T]] / 32;
// CHECK-NEXT:   const long long [[LANE:lane[0-9]+]] = [[T]] % 32;
// CHECK-NEXT:   if ([[ROW]] < [[N]]) {
// CHECK-NEXT:     const long long [[G:v[0-9]+]] = (long long)((unsigned long long)[[LANE]] / 2ull);
// CHECK-NEXT:     const long long [[FL:v[0-9]+]] = (long long)((unsigned long long)[[LANE]] % 2ull);
// CHECK-NEXT:     const int [[B32:v[0-9]+]] = __ldg(csr_row_ptr + [[ROW]]);
// CHECK-NEXT:     const long long [[R1:v[0-9]+]] = [[ROW]] + 1LL;
// CHECK-NEXT:     const int [[E32:v[0-9]+]] = __ldg(csr_row_ptr + [[R1]]);
// CHECK-NEXT:     const long long [[B0:v[0-9]+]] = (long long)[[B32]];
// CHECK-NEXT:     const long long [[E:v[0-9]+]] = (long long)[[E32]];
// CHECK-NEXT:     const long long [[B:v[0-9]+]] = [[B0]] + [[G]];
// CHECK-NEXT:     double [[ACC:acc[0-9]+]] = 0.0;
// CHECK-NEXT:     #pragma unroll 4
// CHECK-NEXT:     for (long long [[P:p[0-9]+]] = [[B]]; [[P]] < [[E]]; [[P]] += 2LL) {
// CHECK-NEXT:       const long long [[SRC:nbr[0-9]+]] = (long long)__ldg(csr_col + [[P]]);
// CHECK-NEXT:       const long long [[BASE:v[0-9]+]] = [[SRC]] * 64LL;
// CHECK-NEXT:       const long long [[I:v[0-9]+]] = [[BASE]] + [[FL]];
// CHECK-NEXT:       const float [[V:v[0-9]+]] = __ldg(in0 + [[I]]);
// CHECK-NEXT:       const double [[VD:v[0-9]+]] = (double)[[V]];
// CHECK-NEXT:       const double [[S:v[0-9]+]] = [[ACC]] + [[VD]];
// CHECK-NEXT:       [[ACC]] = [[S]];
// CHECK-NEXT:     }
// CHECK-NEXT:     double [[RED:acc[0-9]+]] = [[ACC]];
// CHECK-NEXT:     const unsigned [[MASK:mask[0-9]+]] = gnn_segment_mask(32);
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int [[O:o[0-9]+]] = 1; [[O]] < 32; [[O]] <<= 1) {
// CHECK-NEXT:       const double [[PARTNER:v[0-9]+]] = __shfl_xor_sync([[MASK]], [[RED]], [[O]]);
// CHECK-NEXT:       const double [[SUM:v[0-9]+]] = [[RED]] + [[PARTNER]];
// CHECK-NEXT:       [[RED]] = [[SUM]];
// CHECK-NEXT:     }
// CHECK-NEXT:     const float [[F:v[0-9]+]] = (float)[[RED]];
// CHECK-NEXT:     const long long [[OFF:v[0-9]+]] = [[ROW]] * 64LL;
// CHECK-NEXT:     const long long [[OI:v[0-9]+]] = [[OFF]] + [[FL]];
// CHECK-NEXT:     out0[[[OI]]] = [[F]];
// CHECK-NEXT:   }
// CHECK-NEXT: }
gnnk.kernel @spmm_0(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                    %out: memref<?xf32> {gnnk.result = 0 : i64},
                    %ptr: memref<?xi32> {gnnk.graph = "csr_row_ptr"},
                    %col: memref<?xi32> {gnnk.graph = "csr_col"},
                    %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> ((s0 * 32) ceildiv 256)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_rows %n lanes 32 {
  ^bb0(%row: index, %lane: index):
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f64
    %g = arith.divui %lane, %c2 : index
    %fl = arith.remui %lane, %c2 : index
    %b32 = gnnk.load %ptr[%row] : memref<?xi32> -> i32
    %r1 = arith.addi %row, %c1 : index
    %e32 = gnnk.load %ptr[%r1] : memref<?xi32> -> i32
    %b0 = arith.index_cast %b32 : i32 to index
    %e = arith.index_cast %e32 : i32 to index
    %b = arith.addi %b0, %g : index
    %acc = gnnk.for_edges %b to %e step %c2 nbrs(%col : memref<?xi32>) iter_args(%zero : f64) -> f64 attributes {unroll = 4 : i64} {
    ^bb0(%slot: index, %src: index, %a: f64):
      %base = arith.muli %src, %c64 : index
      %i = arith.addi %base, %fl : index
      %v = gnnk.load %x[%i] : memref<?xf32> -> f32
      %vd = arith.extf %v : f32 to f64
      %s = arith.addf %a, %vd : f64
      gnnk.yield %s : f64
    }
    %t = gnnk.team_reduce %acc stride 1 width 32 : f64 {
    ^bb0(%p: f64, %q: f64):
      %s = arith.addf %p, %q : f64
      gnnk.yield %s : f64
    }
    %f = arith.truncf %t : f64 to f32
    %o = arith.muli %row, %c64 : index
    %oi = arith.addi %o, %fl : index
    gnnk.store %f to %out[%oi] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// Host functions beside the kernels are not printed.
// CHECK-NOT: host
func.func @host(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = gnnk.launch @spmm_0[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0)>] : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
