// An edge op on an argument bound with one row per node was accepted and
// read a nodes x 64 buffer as edges x 64 (out of bounds on the GPU). The
// verifier now rejects it, in every tool.
// RUN: not gnn-opt %s 2>&1 | FileCheck %s
// RUN: not gnn-opt %s '--gnn-codegen-pipeline=stats=mean-degree:4.0,max-in:2000' 2>&1 | FileCheck %s
// RUN: not gnn-translate --gnn-to-program %s 2>&1 | FileCheck %s
// CHECK: edge-op-on-node-tensor.mlir:[[@LINE+4]]:8: error: 'gnn.edge_softmax' op expects input to be an edge tensor but got a node tensor
// CHECK: edge-op-on-node-tensor.mlir:[[@LINE+2]]:30: note: a function argument with a dynamic leading dimension and no `gnn.domain` is a node tensor; declare `{gnn.domain = "edge"}` if it has one row per edge

func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = gnn.edge_softmax %g, %x : tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
