//===- GNNTypes.td - gnn dialect types --------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNTYPES_TD
#define GNN_DIALECT_GNN_IR_GNNTYPES_TD

include "gnn/Dialect/GNN/IR/GNNBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"

def GNN_GraphType : TypeDef<GNN_Dialect, "Graph"> {
  let mnemonic = "graph";
  let summary = "the sparse structure of a graph or of a batch of small graphs";
  let description = [{
    A directed multigraph with `nodes` nodes and `edges` edges, each edge going
    from a source node to a destination node. An undirected graph is stored
    with both directions. Self-loops and duplicate edges are allowed and count
    like any other edge. A batch of small graphs is one graph whose nodes are
    numbered graph after graph; no edge crosses two graphs.

    The sizes are known only at run time: node tensors and edge tensors use a
    dynamic leading dimension.

    ```mlir
    func.func @f(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32>
    ```
  }];
  // The parser rejects parameters (`!gnn.graph<1, 2>`) rather than dropping
  // them.
  let hasCustomAssemblyFormat = 1;
}

// Tensor constraints used by the ops: f32 and f64, and bf16 and f16 as
// storage types computed in f32 (GNNFloatTypes.h).
def GNN_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;

#endif // GNN_DIALECT_GNN_IR_GNNTYPES_TD
