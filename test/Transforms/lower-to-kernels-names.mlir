// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels | FileCheck %s

// Kernel groups are numbered per function and kernels are module symbols: a
// name used by groups of several functions (gnn-autodiff's @f, @f_fwd and
// @f_bwd) is prefixed with each function's name; a name used once is kept.
// CHECK: gnnk.kernel @f_spmm_0(
// CHECK-LABEL: func.func @f(
// CHECK: gnnk.launch @f_spmm_0
// CHECK: gnnk.kernel @f_bwd_spmm_0(
// CHECK: gnnk.kernel @degree_0(
// CHECK-LABEL: func.func @f_bwd(
// CHECK: gnnk.launch @f_bwd_spmm_0
// CHECK: gnnk.launch @degree_0
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func @f_bwd(%g: !gnn.graph, %dy: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?xf32>) {
  %dx = gnn.spmm sum %g, %dy reversed : tensor<?x8xf32> -> tensor<?x8xf32>
  %d = gnn.degree %g : tensor<?xf32>
  return %dx, %d : tensor<?x8xf32>, tensor<?xf32>
}
