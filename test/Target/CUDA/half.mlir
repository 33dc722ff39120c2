// RUN: gnn-translate --gnn-to-program %s | FileCheck %s --check-prefix=PROGRAM
// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:8 %s | FileCheck %s --check-prefix=CUDA

// bf16 and f16 are storage types: kernels widen loads to f32 (16-byte
// vector loads of 8 values where a row allows), keep sums, extrema and the
// online softmax's state in f32 (or f64 for row sums, as for f32), and round
// stores to the storage type. The log-sum-exp and winner codes stay f32.
// Programs carry bf16/f16 buffers, the matching edge-order conversion
// kernels, and GEMMs computed in f32 (cublasGemmEx).

// An spmm sum of 64 bf16 features: 8 lanes each read one 16-byte vector of 8
// values, widened pair by pair, summed in f32 and stored rounded, 8 at once.
// PROGRAM-LABEL: "name": "spmm_bf16"
// PROGRAM-NOT: "dtype": "f32"
// PROGRAM: "name": "arg1"
// PROGRAM-NEXT: "role": "input"
// PROGRAM-NEXT: "dtype": "bf16"
// PROGRAM: "name": "result0"
// PROGRAM-NEXT: "role": "output"
// PROGRAM-NEXT: "dtype": "bf16"
// CUDA-LABEL: // spmm_bf16_spmm_0: block 64
// CUDA: const gnn_bf16 *__restrict__ in0,
// CUDA-NEXT: gnn_bf16 *__restrict__ out0
// CUDA: float [[ACC:acc[0-9]+]] =
// CUDA: const uint4 [[V:v[0-9]+]] = __ldg(reinterpret_cast<const uint4 *>(in0 + {{v[0-9]+}}));
// CUDA-NEXT: const float2 [[P0:v[0-9]+]] = gnn_widen2_bf16([[V]].x);
// CUDA-NEXT: const float2 {{v[0-9]+}} = gnn_widen2_bf16([[V]].y);
// CUDA-NEXT: const float2 {{v[0-9]+}} = gnn_widen2_bf16([[V]].z);
// CUDA-NEXT: const float2 {{v[0-9]+}} = gnn_widen2_bf16([[V]].w);
// CUDA: const float {{v[0-9]+}} = [[ACC]] + [[P0]].x;
// CUDA: *reinterpret_cast<uint4 *>(out0 + {{v[0-9]+}}) = make_uint4(gnn_round2_bf16({{.*}}), gnn_round2_bf16({{.*}}), gnn_round2_bf16({{.*}}), gnn_round2_bf16({{.*}}));
func.func @spmm_bf16(%g: !gnn.graph, %x: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  %o = gnn.spmm sum %g, %x : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// f16 rows of 4: one 8-byte access (uint2), a max in f32, a rounding store
// of two words.
// PROGRAM-LABEL: "name": "max_f16"
// PROGRAM: "dtype": "f16"
// CUDA-LABEL: // max_f16_spmm_0: block 64
// CUDA: const gnn_f16 *__restrict__ in0,
// CUDA: const uint2 [[W:v[0-9]+]] = __ldg(reinterpret_cast<const uint2 *>(in0 + {{v[0-9]+}}));
// CUDA-NEXT: const float2 {{v[0-9]+}} = gnn_widen2_f16([[W]].x);
// CUDA-NEXT: const float2 {{v[0-9]+}} = gnn_widen2_f16([[W]].y);
// CUDA: gnn_maximumf(
// CUDA: *reinterpret_cast<uint2 *>(out0 + {{v[0-9]+}}) = make_uint2(gnn_round2_f16({{.*}}), gnn_round2_f16({{.*}}));
func.func @max_f16(%g: !gnn.graph, %x: tensor<?x4xf16>) -> tensor<?x4xf16> {
  %o = gnn.spmm max %g, %x : tensor<?x4xf16> -> tensor<?x4xf16>
  return %o : tensor<?x4xf16>
}

// Attention on bf16 rows with an f32 attention vector mixed in by explicit
// casts, returning its f32 log-sum-exp: the fused kernel's online-softmax
// state is f32, the output row is rounded to bf16, the log-sum-exp written
// as f32. The score's explicit truncf to bf16 rounds it in the kernel
// (below, the same marked gnn.rounds_on_store does not).
// PROGRAM-LABEL: "name": "attention_bf16"
// PROGRAM: "name": "arg2"
// PROGRAM-NEXT: "role": "input"
// PROGRAM-NEXT: "dtype": "f32"
// PROGRAM: "name": "result0"
// PROGRAM-NEXT: "role": "output"
// PROGRAM-NEXT: "dtype": "bf16"
// PROGRAM: "name": "result1"
// PROGRAM-NEXT: "role": "output"
// PROGRAM-NEXT: "dtype": "f32"
// CUDA-LABEL: // attention_bf16_attention_0: block 64
// CUDA: const gnn_bf16 *__restrict__ in0,
// CUDA: const float *__restrict__ in1,
// CUDA: gnn_bf16 *__restrict__ out0,
// CUDA-NEXT: float *__restrict__ out1
// CUDA: float [[M:acc[0-9]+]] = __int_as_float((int)0xff800000u);
// CUDA: __ldg(reinterpret_cast<const uint4 *>(in0
// CUDA: gnn_widen2_bf16(
// CUDA: gnn_round_bf16(
// CUDA: expf(
// CUDA: gnn_round2_bf16(
// CUDA: out1[{{.*}}] = {{v[0-9]+}};
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#head = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @attention_bf16(%g: !gnn.graph, %x: tensor<?x4x16xbf16>, %att: tensor<4xf32>) -> (tensor<?x4x16xbf16>, tensor<?x4xf32>) {
  %s = gnn.sddmm dot %g, %x, %x : tensor<?x4x16xbf16>, tensor<?x4x16xbf16> -> tensor<?x4xbf16>
  %c0 = arith.constant 0 : index
  %e = tensor.dim %s, %c0 : tensor<?x4xbf16>
  %init = tensor.empty(%e) : tensor<?x4xbf16>
  %scaled = linalg.generic {indexing_maps = [#id2, #head, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %att : tensor<?x4xbf16>, tensor<4xf32>) outs(%init : tensor<?x4xbf16>) {
  ^bb0(%a: bf16, %b: f32, %o: bf16):
    %w = arith.extf %a : bf16 to f32
    %p = arith.mulf %w, %b : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x4xbf16>
  %alpha, %lse = gnn.edge_softmax %g, %scaled : tensor<?x4xbf16>, tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %x weights(%alpha : tensor<?x4xbf16>) : tensor<?x4x16xbf16> -> tensor<?x4x16xbf16>
  return %agg, %lse : tensor<?x4x16xbf16>, tensor<?x4xf32>
}

// The same attention with the score's generic marked gnn.rounds_on_store
// (as gnn-autodiff marks the backward's arithmetic): its truncf at the yield
// is the score's conversion to its storage type, so the fused softmax reads
// the f32 score, not rounded (only the output row is rounded, by its store).
// CUDA-LABEL: // attention_kept_f32_attention_0: block 64
// CUDA: gnn_widen2_bf16(
// CUDA-NOT: gnn_round_bf16(
// CUDA: expf(
// CUDA: gnn_round2_bf16(
func.func @attention_kept_f32(%g: !gnn.graph, %x: tensor<?x4x16xbf16>, %att: tensor<4xf32>) -> tensor<?x4x16xbf16> {
  %s = gnn.sddmm dot %g, %x, %x : tensor<?x4x16xbf16>, tensor<?x4x16xbf16> -> tensor<?x4xbf16>
  %c0 = arith.constant 0 : index
  %e = tensor.dim %s, %c0 : tensor<?x4xbf16>
  %init = tensor.empty(%e) : tensor<?x4xbf16>
  %scaled = linalg.generic {indexing_maps = [#id2, #head, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %att : tensor<?x4xbf16>, tensor<4xf32>) outs(%init : tensor<?x4xbf16>) attrs = {gnn.rounds_on_store} {
  ^bb0(%a: bf16, %b: f32, %o: bf16):
    %w = arith.extf %a : bf16 to f32
    %p = arith.mulf %w, %b : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x4xbf16>
  %alpha = gnn.edge_softmax %g, %scaled : tensor<?x4xbf16>
  %agg = gnn.spmm sum %g, %x weights(%alpha : tensor<?x4xbf16>) : tensor<?x4x16xbf16> -> tensor<?x4x16xbf16>
  return %agg : tensor<?x4x16xbf16>
}

// Edge tensors cross the boundary through the bf16 conversion kernels; a
// matmul of bf16 operands is a GEMM in bf16 storage.
// PROGRAM-LABEL: "name": "edges_gemm_bf16"
// PROGRAM: "kernels": [
// PROGRAM-NEXT: "gnn_edges_to_slots",
// PROGRAM-NEXT: "gnn_slots_to_edges",
// PROGRAM-NEXT: "gnn_edges_to_slots_bf16",
// PROGRAM-NOT: "gnn_slots_to_edges_bf16"
// PROGRAM: "name": "arg3_slots"
// PROGRAM-NEXT: "role": "temp"
// PROGRAM-NEXT: "dtype": "bf16"
// PROGRAM: "kernel": "gnn_edges_to_slots_bf16"
// PROGRAM: "op": "gemm"
func.func @edges_gemm_bf16(%g: !gnn.graph, %x: tensor<?x16xbf16>, %w: tensor<16x8xbf16>, %ew: tensor<?xbf16> {gnn.domain = "edge"}) -> tensor<?x8xbf16> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : bf16
  %n = tensor.dim %x, %c0 : tensor<?x16xbf16>
  %e = tensor.empty(%n) : tensor<?x8xbf16>
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %h = linalg.matmul ins(%x, %w : tensor<?x16xbf16>, tensor<16x8xbf16>) outs(%f : tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %o = gnn.spmm sum %g, %h weights(%ew : tensor<?xbf16>) : tensor<?x8xbf16> -> tensor<?x8xbf16>
  return %o : tensor<?x8xbf16>
}

// A linalg body's explicit rounding to bf16 rounds in the kernel too: the
// f32 value is rounded to bf16 and widened back before it is used.
// CUDA-LABEL: // elementwise_0: block 256
// CUDA: const gnn_bf16 [[R:v[0-9]+]] = gnn_round_bf16(
// CUDA-NEXT: const float {{v[0-9]+}} = (float)gnn_widen([[R]]);
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @round_in_body(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %o = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.truncf %a : f32 to bf16
    %w = arith.extf %r : bf16 to f32
    %s = arith.mulf %w, %w : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}
