//===- GNNBase.td - gnn dialect definition ----------------*- tablegen -*-===//
//
// Part of gnnc. The `gnn` dialect: graph-level operations of graph neural
// network layers.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNBASE_TD
#define GNN_DIALECT_GNN_IR_GNNBASE_TD

include "mlir/IR/OpBase.td"

def GNN_Dialect : Dialect {
  let name = "gnn";
  let cppNamespace = "::mlir::gnn";
  let summary = "Graph-level operations of graph neural network layers";
  let description = [{
    The `gnn` dialect describes the sparse half of a GNN layer: moving values
    between the nodes and the edges of a graph (`gnn.gather`, `gnn.sddmm`),
    normalising and aggregating over the edges that enter (or leave) a node
    (`gnn.edge_softmax`, `gnn.spmm`, `gnn.reduce`) and graph processing
    (`gnn.degree`). The dense half (linear layers, activations) is written with
    upstream `linalg`, `tensor`, `arith` and `math`.

    Values are ranked tensors whose leading dimension is indexed either by node
    (a *node tensor*, `tensor<?x...>` with one row per node) or by edge (an
    *edge tensor*, one row per edge, in the order of the graph's edge list).
    Multi-head shapes are first-class: node features `nodes x heads x features`,
    attention scores `edges x heads`.

    Every traversal op takes a `!gnn.graph` operand and an optional `reversed`
    flag, which runs it on the graph with every edge turned around (aggregate
    over outgoing instead of incoming edges); backward passes need it.

    The exact meaning of every op, including isolated nodes, empty softmax rows,
    self-loops and duplicate edges, is given by the CPU reference evaluator and
    stated in `docs/Semantics.md`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // Checks `gnn.domain` on function arguments.
  let hasRegionArgAttrVerify = 1;
}

class GNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<GNN_Dialect, mnemonic, traits>;

#endif // GNN_DIALECT_GNN_IR_GNNBASE_TD
