// RUN: gnn-translate --gnn-to-cuda --gnn-mean-degree=30 %s | FileCheck %s
// RUN: gnn-translate --gnn-to-cuda --gnn-index-bits=64 %s | FileCheck %s --check-prefix=WIDE
// RUN: gnn-opt %s --gnn-codegen-pipeline='mean-degree=13 max-degree=185099' | gnn-translate --gnn-to-cuda | FileCheck %s --check-prefix=SPLIT

// Structure of the emitted kernels: one per group, shapes as constants,
// consumers inlined into the producer's kernel, graph arrays as parameters.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: // function mean_bias
// CHECK: typedef int idx_t;
// WIDE: typedef long long idx_t;
// CHECK: #include "gnn_device.cuh"
// CHECK: extern "C" __global__ void gnn_edges_to_slots(
// CHECK: extern "C" __global__ void gnn_slots_to_edges(

// The spmm group with its bias epilogue: a warp per row, float4 loads, two
// edge groups of 16 lanes, double accumulation, the bias added before the
// store.
// CHECK: // spmm_0: gnn.spmm, row_parallel, lanes 32, block 256, vector 4
// CHECK: extern "C" __global__ void __launch_bounds__(256) spmm_0(
// CHECK-DAG: long long rows
// CHECK-DAG: const idx_t *__restrict__ csr_row_ptr
// CHECK-DAG: const idx_t *__restrict__ csr_col
// CHECK-DAG: float *__restrict__ out0
// CHECK: const int g = lane / 16, fl = lane % 16;
// CHECK: double acc[4];
// CHECK: gnn::load4(
// CHECK: __shfl_xor_sync(mask, acc[0], o, 32)
// CHECK: (count == 0 ? 0.0f : (float)((double)(acc[0]) / (double)count))
// CHECK: const float v{{[0-9]+}} = (a + in{{[0-9]}}[e{{[0-9]+}}]);
// CHECK: out0[r * 64LL + k] =
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
// CHECK-LABEL: // function attention
// CHECK: // sddmm_0: gnn.sddmm, edge_parallel
// CHECK: const long long s = csr_col[i], d = csr_dst[i];
// CHECK: for (int f = 0; f < 8; ++f) acc = fmaf(pa[f], pb[f], acc);
// CHECK: // edge_softmax_0: gnn.edge_softmax, row_parallel, lanes 32
// CHECK: for (int h = 0; h < 4; ++h) {
// CHECK: __shfl_xor_sync(0xffffffffu, m, o, 32)
// CHECK: double sum = 0.0;
// CHECK: // spmm_0: gnn.spmm, row_parallel
// CHECK: fma((double)in{{[0-9]}}[slot0 * 4LL + (c + 0) / 8]
func.func @attention(%g: !gnn.graph, %q: tensor<?x4x8xf32>, %k: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return %o : tensor<?x4x8xf32>
}

// Reversed traversals go through the CSC and map its slots to CSR slots.
// CHECK-LABEL: // function reversed
// CHECK: // reduce_0: gnn.reduce, row_parallel
// CHECK: csc_col_ptr
// CHECK: csc_to_csr
// CHECK: // degree_0: gnn.degree, element_parallel
// CHECK: (float)(csc_col_ptr[t + 1] - csc_col_ptr[t])
func.func @reversed(%g: !gnn.graph, %e: tensor<?x2xf32> {gnn.domain = "edge"}) -> (tensor<?x2xf32>, tensor<?xf32>) {
  %r = gnn.reduce max %g, %e reversed : tensor<?x2xf32> -> tensor<?x2xf32>
  %d = gnn.degree %g reversed : tensor<?xf32>
  return %r, %d : tensor<?x2xf32>, tensor<?xf32>
}

// With long rows (largest in-degree above 1024), aggregations split heavy rows:
// the main kernel skips them, a partial kernel per chunk of edges and a final
// kernel per heavy row finish them.

// SPLIT-LABEL: // function mean_bias
// SPLIT: // spmm_0: gnn.spmm, row_parallel, lanes 32, block 256, vector 4, split 512
// SPLIT: if (end - begin > 512) return;
// SPLIT: // spmm_0_partial:
// SPLIT: __shared__ double part[8][64];
// SPLIT: partials[((long long)blockIdx.x * 2 + which) * 64LL + c0 + q] = (float)total;
// SPLIT: // spmm_0_final:
// SPLIT: const long long which = (cc == first && begin != cc * 512) ? 1 : 0;
// SPLIT: out0[r * 64LL + k] =
