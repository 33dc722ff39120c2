// RUN: gnn-translate --gnn-to-program %s | FileCheck %s

// A function returning a fill directly: the fill is produced into its output
// buffer once (it used to be declared twice).
// CHECK: "name": "result0",
// CHECK-NEXT: "role": "output",
// CHECK-NOT: "name": "result0"
// CHECK: "op": "fill",
// CHECK-NEXT: "buffer": "result0"
func.func @zeros(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %f : tensor<?x8xf32>
}
