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

    A bipartite graph (`!gnn.graph<bipartite>`) has two node sets: its edges
    go from a source set to a destination set of another size (PyG's
    `(x_src, x_dst)` layers, DGL's blocks, the relations of a heterogeneous
    graph). Its node tensors live on one side, source (`src`) or destination
    (`dst`): an aggregation reads source rows and writes destination rows
    (the other way round `reversed`), and a tensor of one side where the
    other is expected is an error, as an edge tensor where a node tensor is
    expected. Function arguments say their side with `{gnn.domain = "src"}`
    or `{gnn.domain = "dst"}`. A homogeneous graph is the bipartite graph
    whose two sides are one node set.

    A typed graph (`!gnn.graph<typed>`, `!gnn.graph<bipartite, typed>`)
    carries a relation id per edge (an edge-type array given with the graph,
    ids from 0): the `relation` forms of `gnn.gather` and `gnn.reduce` read
    and write a node row per (node, relation) pair, so that every relation of
    a relational layer (RGCN) runs in one pass over the edges. Every other op
    ignores the types: a function of an untyped graph runs on a typed one.

    ```mlir
    func.func @f(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32>
    func.func @b(%g: !gnn.graph<bipartite>,
                 %x: tensor<?x16xf32> {gnn.domain = "src"}) -> tensor<?x16xf32>
    ```
  }];
  let parameters = (ins "bool":$bipartite, "bool":$typed);
  let builders = [
    TypeBuilder<(ins), [{ return $_get($_ctxt, false, false); }]>
  ];
  // The parser rejects other parameters (`!gnn.graph<1, 2>`) rather than
  // dropping them.
  let hasCustomAssemblyFormat = 1;
}

// Tensor constraints used by the ops: f32 and f64, and bf16 and f16 as
// storage types computed in f32 (GNNFloatTypes.h).
def GNN_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;

#endif // GNN_DIALECT_GNN_IR_GNNTYPES_TD
