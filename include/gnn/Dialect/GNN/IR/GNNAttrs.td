//===- GNNAttrs.td - gnn dialect attributes ---------------*- tablegen -*-===//
//
// Part of gnnc. Enumerations selecting what a graph op combines or reduces.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNATTRS_TD
#define GNN_DIALECT_GNN_IR_GNNATTRS_TD

include "gnn/Dialect/GNN/IR/GNNBase.td"
include "mlir/IR/EnumAttr.td"

def GNN_EdgeEnd : I32EnumAttr<"EdgeEnd", "an end of an edge", [
    I32EnumAttrCase<"src", 0>,
    I32EnumAttrCase<"dst", 1>
  ]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_SddmmKind : I32EnumAttr<"SddmmKind",
    "how gnn.sddmm combines the source and destination rows", [
    I32EnumAttrCase<"dot", 0>,
    I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"sub", 2>,
    I32EnumAttrCase<"mul", 3>
  ]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_ReduceKind : I32EnumAttr<"ReduceKind",
    "how values arriving at one node are combined", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"min", 3>
  ]> {
  let cppNamespace = "::mlir::gnn";
}

#endif // GNN_DIALECT_GNN_IR_GNNATTRS_TD
