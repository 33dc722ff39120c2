// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:30 %s | FileCheck %s
// RUN: gnn-translate --gnn-to-cuda --gnn-index-bits=64 %s | FileCheck %s --check-prefix=WIDE
// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:13,max-in:185099 %s | FileCheck %s --check-prefix=SPLIT

// Structure of the printed kernels (gnn-cuda-pipeline, then the printer):
// one kernel per group, shapes as constants, consumers inlined before the
// store, graph arrays and sizes as parameters.

// CHECK: typedef int idx_t;
// WIDE: typedef long long idx_t;
// CHECK: #include "gnn_device.cuh"
// CHECK: extern "C" __global__ void gnn_edges_to_slots(
// CHECK: extern "C" __global__ void gnn_slots_to_edges(

// The spmm mean with its bias epilogue: a warp per row, float4 loads, two
// edge groups of 16 lanes merged by shuffles, float accumulation, the mean
// and the bias before one float4 store.
// CHECK-LABEL: // spmm_0: block 64, grid (nodes * 32) ceildiv 64
// CHECK: extern "C" __global__ void __launch_bounds__(64) spmm_0(
// CHECK-DAG: long long nodes
// CHECK-DAG: const idx_t *__restrict__ csr_row_ptr
// CHECK-DAG: const idx_t *__restrict__ csr_col
// CHECK-DAG: float *__restrict__ out0
// CHECK: #pragma unroll 4
// CHECK: for (long long [[P:p[0-9]+]] = {{.*}}; [[P]] < {{.*}}; [[P]] += 2LL) {
// CHECK: __ldg(reinterpret_cast<const float4 *>(
// CHECK-NOT: double
// CHECK: __shfl_xor_sync(
// CHECK: / {{v[0-9]+}};
// CHECK: *reinterpret_cast<float4 *>(out0 +

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>


// The spmm group with its bias epilogue: a warp per row, float4 loads, two
// edge groups of 16 lanes, float accumulation, the bias added before the
// store.
func.func @mean_bias(%g: !gnn.graph, %x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %m = gnn.spmm mean %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %o = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<?x64xf32>, tensor<64xf32>) outs(%e : tensor<?x64xf32>) {
  ^bb0(%v: f32, %c: f32, %out: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

// Attention: an edge-parallel sddmm with a dot over 8 features per head, a
// softmax team per row with the lanes over edges, weights read per head.
// Attention (sddmm dot, softmax, weighted spmm): ONE kernel with an online
// softmax, the per-head dot reduced over the head's lanes inside the edge
// loop (two edges a step), no edge-sized output.
// CHECK-LABEL: // attention_0: block 64
// CHECK: extern "C" __global__ void __launch_bounds__(64) attention_0(
// CHECK: for (; ([[P:p[0-9]+]] +
// CHECK: fmaf(
// CHECK: = gnn_segment_mask(2);
// CHECK: __shfl_xor_sync(
// CHECK: gnn_maximumf(
// CHECK: expf(
// CHECK-NOT: __global__
// CHECK: *reinterpret_cast<float4 *>(out0 +
func.func @attention(%g: !gnn.graph, %q: tensor<?x4x8xf32>, %k: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return %o : tensor<?x4x8xf32>
}

// Reversed traversals go through the CSC and map its slots to CSR slots.
// CHECK-LABEL: // reduce_0:
// CHECK: csc_col_ptr
// CHECK: __ldg(csc_to_csr +
// CHECK-LABEL: // degree_0:
// CHECK: csc_col_ptr
func.func @reversed(%g: !gnn.graph, %e: tensor<?x2xf32> {gnn.domain = "edge"}) -> (tensor<?x2xf32>, tensor<?xf32>) {
  %r = gnn.reduce max %g, %e reversed : tensor<?x2xf32> -> tensor<?x2xf32>
  %d = gnn.degree %g reversed : tensor<?xf32>
  return %r, %d : tensor<?x2xf32>, tensor<?xf32>
}

// With long rows (largest in-degree above 1024), row kernels split heavy
// rows: the main kernel skips them, a partial kernel per chunk of 128 edge
// positions (team and block reductions) and a final kernel per heavy row
// (the chunks merged in order, then the epilogue) finish them.
// SPLIT-LABEL: // spmm_0: block 64
// SPLIT-NOT: split_threshold
// SPLIT: <= 128LL;
// SPLIT-LABEL: // spmm_0_partial: block 256, grid min(edges ceildiv 128, 8192)
// SPLIT: __shared__ float
// SPLIT: __syncthreads();
// SPLIT-LABEL: // spmm_0_final: block 256, grid min(edges ceildiv 128, 8192)
// SPLIT: for (long long
// SPLIT: out0
// SPLIT-LABEL: // attention_0: block 64
// SPLIT-LABEL: // attention_0_partial:
// SPLIT-LABEL: // attention_0_final:
