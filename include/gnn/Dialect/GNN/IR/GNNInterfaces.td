//===- GNNInterfaces.td - gnn dialect interfaces -----------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNINTERFACES_TD
#define GNN_DIALECT_GNN_IR_GNNINTERFACES_TD

include "mlir/IR/OpBase.td"

def GNN_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let description = [{
    The vector-Jacobian product of an op: given the gradients of its results
    (the adjoints; a null value stands for a zero gradient), builds at the
    builder's insertion point the ops computing the gradients of its
    operands, in the same dialects (`gnn`, `linalg`, `tensor`, `arith`,
    `math`), reading the op's operands and results as they are. `gnn-autodiff`
    calls it on every op between a function's differentiable arguments and
    its results, in reverse order. An op without the interface, or whose
    rule cannot handle it (a diagnostic at the op says why), stops the pass:
    a gradient is never silently zero.

    Rules for the `gnn` ops and for the upstream ops the examples use
    (`linalg.generic` through per-scalar-op derivatives of its body,
    `linalg.matmul`, `linalg.fill`, `tensor` reshapes) are attached as
    external models by `mlir::gnn::registerVJPModels`.
  }];
  let cppNamespace = "::mlir::gnn";
  let methods = [
    InterfaceMethod<[{
        Sets `operandGrads` to one value per operand: its gradient, or null
        when it has none (graph operands, sizes, operands the result does not
        depend on smoothly). `resultGrads` has one entry per result, null for
        a zero gradient; at least one is not null.
      }],
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

def GNN_GraphOpInterface : OpInterface<"GraphOpInterface"> {
  let description = [{
    An op over the edges of a graph (`gnn.gather`, `gnn.sddmm`,
    `gnn.edge_softmax`, `gnn.spmm`, `gnn.reduce`, `gnn.extremum_grad`,
    `gnn.degree`): what kernel grouping, the kernel-group verifier, the
    recomputation in `gnn-autodiff` and the lowerings ask when they need to
    know whether an op is a graph op and which graph it reads. A new graph op
    declares it and is recognised everywhere.
  }];
  let cppNamespace = "::mlir::gnn";
  let methods = [
    InterfaceMethod<"The graph whose edges the op works over.",
      "::mlir::Value", "getGraphOperand", (ins), [{
        return $_op.getGraph();
      }]>,
  ];
}

#endif // GNN_DIALECT_GNN_IR_GNNINTERFACES_TD
