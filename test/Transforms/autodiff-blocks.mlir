// RUN: gnn-opt %s --allow-unregistered-dialect --gnn-autodiff -verify-diagnostics

// expected-error @+1 {{'func.func' op cannot be differentiated: expects one block}}
func.func @two_blocks(%x: tensor<4xf32> {gnn.differentiable}) -> tensor<4xf32> {
  "test.br"()[^bb1] : () -> ()
^bb1:
  return %x : tensor<4xf32>
}
