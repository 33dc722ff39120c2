//===- GNNAttrs.td - gnn dialect attributes ---------------*- tablegen -*-===//
//
// Part of gnnc. Enumerations selecting what a graph op combines or reduces,
// the family of a kernel group and the schedule attribute.
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

def GNN_Mapping : I32EnumAttr<"Mapping",
    "how the threads of a kernel group are mapped onto the work", [
    I32EnumAttrCase<"row_parallel", 0>,
    I32EnumAttrCase<"edge_parallel", 1>,
    I32EnumAttrCase<"element_parallel", 2>,
    I32EnumAttrCase<"block_per_graph", 3>
  ]> {
  let cppNamespace = "::mlir::gnn";
  let genSpecializedAttr = 0;
}

def GNN_GroupFamily : I32EnumAttr<"GroupFamily",
    "which kind of kernel a gnn.kernel_group becomes", [
    I32EnumAttrCase<"attention", 0>,
    I32EnumAttrCase<"aggregation", 1>,
    I32EnumAttrCase<"edge_map", 2>,
    I32EnumAttrCase<"edge_softmax", 3>,
    I32EnumAttrCase<"degree", 4>,
    I32EnumAttrCase<"elementwise", 5>,
    I32EnumAttrCase<"extremum_grad", 6>,
    I32EnumAttrCase<"graph_block", 7>
  ]> {
  let cppNamespace = "::mlir::gnn";
  let description = [{
    Set by `gnn-form-kernel-groups` (see `gnn/Analysis/Fusion.h`); the graph
    ops a group of each family holds, in program order:

    - `attention`: `gnn.sddmm`, `gnn.edge_softmax`, `gnn.spmm` (the score's
      elementwise chain between the first two);
    - `aggregation`: a `gnn.spmm` or a `gnn.reduce` (reversed or not),
      preceded by the edge DAG computing the edge values it aggregates (any
      number of `gnn.gather` and `gnn.sddmm` ops on its graph and the
      elementwise ops on their values; ops of it that other groups compute
      too are recomputed here) and, for an `spmm`, by the `gnn.degree` ops of
      its node prologue;
    - `edge_map`: an edge value written to memory: one `gnn.gather` or
      `gnn.sddmm`, or the edge DAG (gathers, sddmms, elementwise ops)
      computing it;
    - `edge_softmax`: one `gnn.edge_softmax`;
    - `degree`: one `gnn.degree`;
    - `elementwise`: no graph op, only dense `linalg` work;
    - `extremum_grad`: one `gnn.extremum_grad` (never fused);
    - `graph_block`: a whole function on a batch of small graphs (degrees,
      unweighted or argument-weighted `spmm` sum or mean, `linalg.matmul`
      with a dense right operand, elementwise ops on node tensors), one block
      per graph with the graph's values in shared memory (see
      `gnn/Dialect/GNN/IR/GraphBlock.h`).
  }];
}

include "mlir/IR/AttrTypeBase.td"

def GNN_ScheduleAttr : AttrDef<GNN_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "how a kernel group is mapped onto the GPU";
  let description = [{
    Chosen per kernel group from the graph's statistics and the shapes by the
    `gnn-select-schedules` pass (see `gnn/Analysis/Schedule.h`).

    - `mapping`: `row_parallel` (a team of `lanes` threads per destination
      row, lanes over features or over the row's edges: the warp-per-row
      schedule when `lanes = 32`), `edge_parallel` (a team of `lanes`
      threads per element of an edge tensor, its lanes splitting an sddmm's
      dot product; one thread when `lanes = 1`), `element_parallel` (one
      thread per output element),
      `block_per_graph` (one block per graph of a batch of small graphs,
      its `block` threads striding over each step's elements; `graph_block`
      groups only).
    - `lanes`: threads per row (a power of two, 1 to 32).
    - `block`: threads per block.
    - `vector`: elements each lane loads at once (1, 2 or 4; 8 for 2-byte
      elements).
    - `split`: for aggregations, rows with more edges than this are heavy:
      the row-parallel kernel skips them and two more kernels process them in
      chunks of `split` edges spread over the whole GPU (0: no split).

    ```mlir
    #gnn.schedule<mapping = row_parallel, lanes = 16, block = 256, vector = 4, split = 0>
    ```
  }];
  let parameters = (ins EnumParameter<GNN_Mapping>:$mapping,
                        "int64_t":$lanes, "int64_t":$block, "int64_t":$vector,
                        "int64_t":$split);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GNN_GraphStatsAttr : AttrDef<GNN_Dialect, "GraphStats"> {
  let mnemonic = "graph_stats";
  let summary = "the statistics of the graph a module is compiled for";
  let description = [{
    `gnn::GraphStats` as an attribute: set on the module (`gnn.graph_stats`)
    by the compile driver, or from the `stats` option of
    `gnn-select-schedules`, and read by the passes that choose schedules
    from it. The fields are those of `gnn/Analysis/GraphStats.h`; the degree
    histograms are empty when unknown (statistics given by hand).

    ```mlir
    module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 1000,
        edges = 13000, max_in = 5000, max_out = 13, p50 = 13, p90 = 13,
        p99 = 13, p999 = 13, rows_by_degree = [], edges_by_degree = [],
        isolated = 0, self_loops = 0, directed = false, graphs = 1,
        smallest_graph = 1000, largest_graph = 1000, csr_order = false>} {}
    ```
  }];
  let parameters = (ins "int64_t":$nodes, "int64_t":$edges,
                        "int64_t":$max_in, "int64_t":$max_out,
                        "int64_t":$p50, "int64_t":$p90, "int64_t":$p99,
                        "int64_t":$p999,
                        "::mlir::DenseI64ArrayAttr":$rows_by_degree,
                        "::mlir::DenseI64ArrayAttr":$edges_by_degree,
                        "int64_t":$isolated, "int64_t":$self_loops,
                        "bool":$directed, "int64_t":$graphs,
                        "int64_t":$smallest_graph, "int64_t":$largest_graph,
                        "bool":$csr_order);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // GNN_DIALECT_GNN_IR_GNNATTRS_TD
