// RUN: gnn-translate --gnn-to-program %s | FileCheck %s --check-prefix=PROGRAM
// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:8 %s | FileCheck %s --check-prefix=CUDA
// RUN: gnn-translate --gnn-to-cuda --gnn-stats=mean-degree:8 %s | sed -n '/: block [0-9]*, grid/,$p' | FileCheck %s --check-prefix=NOFLOAT

// Functions of f64 tensors compile to f64 kernels and Programs: buffers of
// dtype f64, double loads, stores, constants, shuffles and math functions,
// the f64 edge-order conversion kernels at the boundary, f64 fills and a
// cuBLAS GEMM (cublasDgemm) in double.

// PROGRAM-LABEL: "name": "layer"
// PROGRAM-NOT: "dtype": "f32"
// PROGRAM: "name": "arg1"
// PROGRAM-NEXT: "role": "input"
// PROGRAM-NEXT: "dtype": "f64"
// PROGRAM-NEXT: "size": "nodes * 16"
// PROGRAM: "name": "result0"
// PROGRAM-NEXT: "role": "output"
// PROGRAM-NEXT: "dtype": "f64"
// The matmul's init, filled with 0.1 exactly (in double), copied, then beta = 1.
// PROGRAM: "op": "fill"
// PROGRAM-NEXT: "buffer": "[[FILL:t[0-9]+]]"
// PROGRAM-NEXT: "value": 0.1
// PROGRAM: "op": "copy"
// PROGRAM-NEXT: "src": "[[FILL]]"
// PROGRAM: "op": "gemm"
// PROGRAM: "beta": 1.0
// PROGRAM: "kernel": "spmm_0"
func.func @layer(%g: !gnn.graph, %x: tensor<?x16xf64>, %w: tensor<16x8xf64>) -> tensor<?x8xf64> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.1 : f64
  %n = tensor.dim %x, %c0 : tensor<?x16xf64>
  %e = tensor.empty(%n) : tensor<?x8xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<?x8xf64>) -> tensor<?x8xf64>
  %h = linalg.matmul ins(%x, %w : tensor<?x16xf64>, tensor<16x8xf64>) outs(%f : tensor<?x8xf64>) -> tensor<?x8xf64>
  %o = gnn.spmm max %g, %h : tensor<?x8xf64> -> tensor<?x8xf64>
  return %o : tensor<?x8xf64>
}

// Edge tensors cross the boundary through the f64 conversion kernels, which
// join the Program's kernel list.
// PROGRAM-LABEL: "name": "edges"
// PROGRAM: "kernels": [
// PROGRAM-NEXT: "gnn_edges_to_slots",
// PROGRAM-NEXT: "gnn_slots_to_edges",
// PROGRAM-NEXT: "gnn_edges_to_slots_f64",
// PROGRAM-NEXT: "gnn_slots_to_edges_f64",
// PROGRAM: "name": "arg1_slots"
// PROGRAM-NEXT: "role": "temp"
// PROGRAM-NEXT: "dtype": "f64"
// PROGRAM: "kernel": "gnn_edges_to_slots_f64"
// PROGRAM: "kernel": "edge_softmax_0"
// PROGRAM: "kernel": "gnn_slots_to_edges_f64"
func.func @edges(%g: !gnn.graph, %s: tensor<?x2xf64> {gnn.domain = "edge"}) -> tensor<?x2xf64> {
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf64>
  return %a : tensor<?x2xf64>
}

// Means and dot products.
// PROGRAM-LABEL: "name": "mean_dot"
// PROGRAM-NOT: "dtype": "f32"
// PROGRAM: "dtype": "f64"
func.func @mean_dot(%g: !gnn.graph, %x: tensor<?x4xf64>) -> tensor<?x4xf64> {
  %d = gnn.sddmm dot %g, %x, %x : tensor<?x4xf64>, tensor<?x4xf64> -> tensor<?xf64>
  %m = gnn.spmm mean %g, %x weights(%d : tensor<?xf64>) : tensor<?x4xf64> -> tensor<?x4xf64>
  return %m : tensor<?x4xf64>
}

// The prelude's f64 conversion kernels.
// CUDA: extern "C" __global__ void gnn_edges_to_slots_f64(double *__restrict__ out,
// CUDA-NEXT: const double *__restrict__ in, const idx_t *__restrict__ csr_edge,
// CUDA: extern "C" __global__ void gnn_slots_to_edges_f64(double *__restrict__ out,

// The max aggregation: -inf as a double's bits, fmax, double shuffles, two
// double2 stores per lane (one vector access per 16 bytes).
// CUDA-LABEL: void __launch_bounds__(64) spmm_0(
// CUDA: const double *__restrict__ in0,
// CUDA: double *__restrict__ out0) {
// CUDA: double acc{{[0-9]+}} = __longlong_as_double((long long)0xfff0000000000000ull);
// CUDA: const double2 [[V:v[0-9]+]] = __ldg(reinterpret_cast<const double2 *>(in0 + [[I:v[0-9]+]]));
// CUDA: __ldg(reinterpret_cast<const double2 *>(in0 + [[I]] + 2));
// CUDA: gnn_maximumf(acc{{[0-9]+}}, [[V]].x);
// CUDA: const double v{{[0-9]+}} = __shfl_xor_sync(mask{{[0-9]+}}, acc{{[0-9]+}}, o{{[0-9]+}});
// CUDA: *reinterpret_cast<double2 *>(out0 + [[O:v[0-9]+]]) = make_double2(
// CUDA: *reinterpret_cast<double2 *>(out0 + [[O]] + 2) = make_double2(

// The edge softmax: max, sum (in double, as for f32) and weights, exp in
// double precision.
// CUDA-LABEL: void __launch_bounds__(256) edge_softmax_0(
// CUDA: double acc{{[0-9]+}} = __longlong_as_double((long long)0xfff0000000000000ull);
// CUDA: = exp(
// CUDA: const double v{{[0-9]+}} = 1.0 / acc{{[0-9]+}};

// The mean: the dot product with fma, the count as a double.
// CUDA-LABEL: void __launch_bounds__(64) aggregation_0(
// CUDA: = fma(
// CUDA: const double v{{[0-9]+}} = (double)v{{[0-9]+}};

// After the prelude no float is left.
// NOFLOAT: __global__
// NOFLOAT-NOT: float
