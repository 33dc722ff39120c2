//===- Passes.td - gnn dialect passes ---------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_PASSES_TD
#define GNN_DIALECT_GNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GNNFormKernelGroups : Pass<"gnn-form-kernel-groups", "func::FuncOp"> {
  let summary = "wraps graph ops and their elementwise consumers into kernel groups";
  let description = [{
    Every graph-level op (`gnn.gather`, `gnn.sddmm`, `gnn.edge_softmax`,
    `gnn.spmm`, `gnn.reduce`, `gnn.degree`) becomes a `gnn.kernel_group` of its
    own. Elementwise `linalg.generic` ops that consume the group's result (and
    are its only user) are absorbed into the group, so their work happens in
    the same kernel and the intermediate never reaches memory; the chain goes
    on while each link has a single use. Remaining elementwise and reduction
    `linalg` ops (not matmuls, which become cuBLAS calls, nor fills) become
    groups of their own.

    Before:
    ```mlir
    %s = gnn.sddmm add %g, %a, %b : ... -> tensor<?x4xf32>
    %l = linalg.generic {...} ins(%s : tensor<?x4xf32>) ... // leaky relu
    ```
    After:
    ```mlir
    %l = gnn.kernel_group "sddmm_0" -> tensor<?x4xf32> {
      %s = gnn.sddmm add %g, %a, %b : ...
      %l = linalg.generic {...} ins(%s : tensor<?x4xf32>) ...
      gnn.yield %l : tensor<?x4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GNNSelectSchedules : Pass<"gnn-select-schedules", "func::FuncOp"> {
  let summary = "chooses a #gnn.schedule for every kernel group";
  let description = [{
    Builds a ScheduleProblem (gnn/Analysis/Schedule.h) from each kernel group
    (its kind and row width) and the graph statistics given as options, and
    records the chosen schedule on the group.
  }];
  let options = [
    Option<"meanDegree", "mean-degree", "double", "16.0",
           "mean in-degree of the graph (edges / nodes)">,
    Option<"maxDegree", "max-degree", "int64_t", "0",
           "largest in-degree of the graph (0: unknown)">,
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

#endif // GNN_DIALECT_GNN_TRANSFORMS_PASSES_TD
