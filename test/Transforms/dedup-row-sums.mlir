// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels='share-kernels=1' | FileCheck %s
// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels --gnn-dedup-kernels | FileCheck %s
// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels | FileCheck %s --check-prefix=APART

// A sum over rows into few elements is two kernels (`<name>` writing the
// chunks' partial sums, `<name>_final` adding them): two identical sums
// share both, as they are lowered (share-kernels) or afterwards
// (gnn-dedup-kernels).
#in = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: gnnk.kernel @elementwise_0(
// CHECK-LABEL: gnnk.kernel @elementwise_0_final(
// CHECK-NOT: gnnk.kernel
// CHECK-LABEL: func.func @two_bias_grads
// CHECK: %[[P0:.*]] = gnnk.launch @elementwise_0[%arg0] (%arg1)
// CHECK-NEXT: gnnk.launch @elementwise_0_final[%arg0] (%[[P0]])
// CHECK: %[[P1:.*]] = gnnk.launch @elementwise_0[%arg0] (%arg2)
// CHECK-NEXT: gnnk.launch @elementwise_0_final[%arg0] (%[[P1]])

// APART: gnnk.kernel @elementwise_0(
// APART: gnnk.kernel @elementwise_0_final(
// APART: gnnk.kernel @elementwise_1(
// APART: gnnk.kernel @elementwise_1_final(
func.func @two_bias_grads(%g: !gnn.graph, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %da = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<?x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %db = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<?x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %da, %db : tensor<8xf32>, tensor<8xf32>
}
