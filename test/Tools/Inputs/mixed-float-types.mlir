// A function with an f32 and an f64 argument: the reference evaluates it;
// the CUDA backend computes a function in one arithmetic type and refuses it.

func.func @mixed(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf64>) -> (tensor<?x8xf32>, tensor<?x8xf64>) {
  %a = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %b = gnn.spmm sum %g, %y : tensor<?x8xf64> -> tensor<?x8xf64>
  return %a, %b : tensor<?x8xf32>, tensor<?x8xf64>
}
