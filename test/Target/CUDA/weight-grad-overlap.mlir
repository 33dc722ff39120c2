// A weight gradient (a row-split Aᵀ B, the runtime's own kernels) runs
// beside the steps around it that neither write what it reads nor touch
// what it writes: its gemm carries "overlaps": k and follows those k steps
// (Program::overlapWindows), back to the step its operands come from and on
// to the first that reads its result, over other weight gradients' windows
// too. In GIN's backward dW₂ and dW₁ run beside the rest of the chain.
// RUN: gnn-translate --gnn-to-program %s > %t.json
// RUN: python3 %S/Inputs/program-steps.py %t.json | FileCheck %s
// RUN: gnn-opt --gnn-autodiff %examples/gin.mlir | gnn-translate --gnn-to-program > %t.gin.json
// RUN: python3 %S/Inputs/program-steps.py %t.gin.json | FileCheck %s --check-prefix=GIN

// %t (the ReLU) produces dW's operand, %y reads dW: dW runs beside %dx only.
// CHECK: weight_grad_window elementwise_0 0
// CHECK-NEXT: weight_grad_window gemm 0
// CHECK-NEXT: weight_grad_window gemm 1
// CHECK-NEXT: weight_grad_window gemm 0
func.func @weight_grad_window(%g: !gnn.graph, %x: tensor<?x16xf32>, %dy: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %dy, %c0 : tensor<?x8xf32>
  %et = tensor.empty(%n) : tensor<?x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy : tensor<?x8xf32>) outs(%et : tensor<?x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.maximumf %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %ex = tensor.empty(%n) : tensor<?x16xf32>
  %fx = linalg.fill ins(%z : f32) outs(%ex : tensor<?x16xf32>) -> tensor<?x16xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%t, %w : tensor<?x8xf32>, tensor<16x8xf32>) outs(%fx : tensor<?x16xf32>) -> tensor<?x16xf32>
  %ew = tensor.empty() : tensor<16x8xf32>
  %fw = linalg.fill ins(%z : f32) outs(%ew : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %t : tensor<?x16xf32>, tensor<?x8xf32>) outs(%fw : tensor<16x8xf32>) -> tensor<16x8xf32>
  %fy = linalg.fill ins(%z : f32) outs(%ex : tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%t, %dw : tensor<?x8xf32>, tensor<16x8xf32>) outs(%fy : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %dx, %y : tensor<?x16xf32>, tensor<?x16xf32>
}

// In GIN's backward, dW₂ (dYᵀ h₁) needs only its inputs and nothing reads
// it: beside the ten steps before it (the whole chain: db₂'s sum, dX₂ =
// dY W₂, the ReLU mask, dε's sums, dX₁'s GEMM, the aggregation's
// backward); dW₁ needs the mask's output: beside the seven steps after the
// mask, dW₂ among them. Both run on the second stream until the end; the
// forward has none.
// GIN-NOT: gin_fwd gemm {{[1-9]}}
// GIN: gin_bwd gin_bwd_elementwise_0 0
// GIN-NEXT: gin_bwd gin_bwd_elementwise_0_final 0
// GIN-NEXT: gin_bwd gemm 0
// GIN-NEXT: gin_bwd gin_bwd_elementwise_1 0
// GIN-NEXT: gin_bwd elementwise_2 0
// GIN-NEXT: gin_bwd gin_bwd_elementwise_0_final 0
// GIN-NEXT: gin_bwd gemm 0
// GIN-NEXT: gin_bwd elementwise_3 0
// GIN-NEXT: gin_bwd elementwise_3_final 0
// GIN-NEXT: gin_bwd gin_bwd_spmm_0 0
// GIN-NEXT: gin_bwd gemm 10
// GIN-NEXT: gin_bwd gemm 7
