//===- Passes.td - gnn dialect passes ---------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_TRANSFORMS_PASSES_TD
#define GNN_DIALECT_GNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GNNEdgeSumsToNodeSums : Pass<"gnn-edge-sums-to-node-sums", "func::FuncOp"> {
  let summary = "turns sums over all edges into per-node reduces and node sums";
  let description = [{
    A `linalg.generic` whose one reduction loop runs over the rows of edge
    tensors (read at `[edge, ...]`) and whose result is small and static, a
    parameter gradient such as GATv2's `d att = sum_e ...`, becomes the
    per-edge terms (an all-parallel generic), a `gnn.reduce sum` of them per
    destination on the graph of the graph op producing an edge operand, and a
    sum over the nodes. Every edge has exactly one destination, so the total
    is the same (nodes without in-edges add zero). gnn-form-kernel-groups then
    fuses the terms' edge DAG into the reduce, so nothing edge-sized is
    written; both sums stay deterministic (no atomics). The body must be
    `out + term` with `out` read once; the result is written at each
    parallel loop once, and at 0 in dimensions of size 1 (AGNN's
    `d beta`, a `tensor<1xf32>` at `(d0) -> (0)`). For a bf16 or f16 result
    the terms and the per-node sums are f32 (a term the body rounded only to
    add it is taken unrounded): the per-node sums cross kernels, and their
    sum over the nodes cancels, so rounding each to the storage type would
    cost the result its digits. A column sum from zero of edge values that
    a weight gradient's f32 GEMM reads as its transposed operand (a bias
    gradient beside its weight's, `gemmRowSumsOf` in GemmBias.h) stays: the
    CUDA backend sums it in that GEMM's row split, a pass over the edge
    values it makes anyway.

    ```mlir
    %r = linalg.generic {indexing_maps = [(d0, d1, d2) -> (d2, d0, d1), ...],
        iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%e, ...) outs(%zero : tensor<4x32xf32>) { out + term }
    // after:
    %t = linalg.generic {... all parallel} ins(%e, ...)
        outs(%empty : tensor<?x4x32xf32>) { term }
    %n = gnn.reduce sum %g, %t : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
    %r = linalg.generic {indexing_maps = [(d0, d1, d2) -> (d2, d0, d1),
        (d0, d1, d2) -> (d0, d1)], iterator_types = ["parallel", "parallel",
        "reduction"]} ins(%n) outs(%zero : tensor<4x32xf32>) { out + in }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::gnn::GNNDialect"];
}

def GNNPullExtremumGrads : Pass<"gnn-pull-extremum-grads", "func::FuncOp"> {
  let summary = "pulls the gradient of a bf16/f16 max/min along the edges";
  let description = [{
    A `gnn.extremum_grad` of bf16 or f16 rows (the input gradient of an
    unweighted `gnn.spmm max|min`) becomes an aggregation at the other end
    of the edges: each node's share of its extremum's gradient, `g = dy`
    where the winner code names a node, `dy / c` for a tie code `-(c + 1)`
    and NaN for a NaN extremum (a node tensor of the rows' type: a single
    winner's share is `dy` exactly, a tie's is rounded once; an f32 share
    would make the aggregation gather half as many bytes again per edge),
    and then per node `n`
    the sum over its edges `n -> d` of `x[n] == y[d] ? g[d] : 0` (unordered:
    a NaN extremum's share reaches every edge), a `gnn.reduce sum` that
    gnn-form-kernel-groups fuses with its gathers into one row kernel. Where
    the sums' one user only rounds them to the rows' type, the reduce stores
    that type directly, its terms f32 in registers (`gnn.rounds_on_store`):
    the values are `gnn.extremum_grad`'s (f32 sums, one rounding) up to the
    order of the additions and the tie shares' rounding, without the
    conversion kernel.

    Routing the gradient by the codes (gnn.extremum_grad's kernel: an
    atomic addition per element, a walk of the row per tied element) suits
    f32 and f64 rows, whose ties are rare. The coarse values of bf16 and f16
    rows tie often, and the routed bf16 backward was slower than the f32 one
    on every scoreboard graph; f32 and f64 rows are left to it. The share
    reads only the counts, so gnn-autodiff gives the forward's spmm of
    such rows `counted` codes (the same predicate, `pullsExtremumGrads`).

    ```mlir
    %s = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x64xbf16>
    %dx = linalg.generic {...} ins(%s : tensor<?x64xf32>) { truncf }
    // after:
    %share = linalg.generic {...} ins(%dy, %w) { w >= 0 ? dy : -dy / (w + 1) }
    %xe = gnn.gather src %g, %x
    %ye = gnn.gather dst %g, %y
    %se = gnn.gather dst %g, %share
    %t = linalg.generic {...} ins(%xe, %ye, %se) { xe == ye ? se : 0 }
    %dx = gnn.reduce sum %g, %t reversed : tensor<?x64xbf16> -> tensor<?x64xbf16>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::gnn::GNNDialect"];
}

def GNNExpandNarrowMatmuls : Pass<"gnn-expand-narrow-matmuls", "func::FuncOp"> {
  let summary = "turns matmuls over the edges with a short contraction into elementwise maps";
  let description = [{
    A narrow edge product (`C = init + A B` or `init + A Bᵀ` of f32 or f64
    tensors whose rows are edges, with a static contraction of at most 8,
    GINE's `lin(edge_attr)`) that the function does not return becomes one
    all-parallel `linalg.generic` over `C`: A read at `(d0, k)` and B at
    `(k, d1)` (`(d1, k)` transposed) for each `k`, the `k` products summed
    in order, then the init added: a bias broadcast to every row as its
    vector at `(d1)`, a zero fill not at all, any other init at `(d0, d1)`.
    The start, read by nothing else then, is erased. A GEMM would write the
    `[E, C]` values for the edge pass to read back; the edge pass that reads
    the map computes them where it reads them, from the edge's `k` values.
    A product the function returns (a result, or a training forward's
    residual: gnn-autodiff keeps matmuls over the edges) is written either
    way and stays a GEMM. GINE's layer without gradients on an H100
    (`bench/results/checks-s83/`, call 3): a QM9 batch of 4,096 molecules
    63.0-63.2 -> 55.2-57.7 us, Cora 54.9 -> 46.5, PubMed 75.0 -> 57.9.

    ```mlir
    %r = linalg.matmul indexing_maps = [(i, j, k) -> (i, k), (i, j, k) -> (j, k),
        (i, j, k) -> (i, j)] ins(%e, %w : tensor<?x4xf32>, tensor<64x4xf32>)
        outs(%bias_rows : tensor<?x64xf32>)
    // after:
    %r = linalg.generic {indexing_maps = [(d0, d1) -> (d0, 0), ...,
        (d0, d1) -> (d1, 0), ..., (d0, d1) -> (d1), (d0, d1) -> (d0, d1)]}
        ins(%e, %e, %e, %e, %w, %w, %w, %w, %b ...) outs(%empty ...)
        { e0 * w0 + e1 * w1 + e2 * w2 + e3 * w3 + b }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GNNFuseElementwise : Pass<"gnn-fuse-elementwise", "func::FuncOp"> {
  let summary = "merges an elementwise generic into its one elementwise consumer";
  let description = [{
    An all-parallel `linalg.generic` that reads no graph op's value and
    whose one result has one user, an all-parallel `linalg.generic` that
    also reads a `gnn.spmm` or `gnn.reduce` result (an aggregation's
    epilogue), through a map linalg's elementwise fusion takes, is merged
    into that user (linalg's `fuseElementwiseOps`): the value is computed
    where it is read instead of written to memory by a kernel of its own and
    read back. Kernel groups absorb an elementwise consumer of a graph op,
    not a producer of that consumer; after this pass the consumer computes
    it. Elementwise chains on edge values are left as they are: the group
    former's edge pipelines recompute their links where they are read, and
    would write a merged one. GIN's backward:
    `(1 + eps) * dh` moves into the epilogue of the reversed aggregation that
    adds it (one kernel, one node-sized tensor fewer per step).

    Only f32 and f64 producers merge: a bf16 or f16 one is rounded to its
    storage type when written (`gnn.rounds_on_store`), which the merged value
    would skip. Each merge computes the same operations on the same values;
    the merged op keeps the consumer's attributes. Size queries of the
    producer's result (`tensor.dim`) ask its init instead.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GNNFormKernelGroups : Pass<"gnn-form-kernel-groups", "func::FuncOp"> {
  let summary = "fuses graph ops and their elementwise neighbours into kernel groups";
  let description = [{
    Describes the ops of the function as a fusion problem and wraps the groups
    planned by `gnn/Analysis/Fusion.h` into `gnn.kernel_group` regions, each
    tagged with its `family`. Graph ops are visited in program order; the
    first rule that applies starts a group:

    - `attention` (rule `attention`): a `gnn.sddmm`, a chain of elementwise
      `linalg.generic` ops on its edge values (each the previous link's only
      user besides size queries; reductions over trailing dimensions, such as
      GATv2's `sum_d att * leaky_relu(e)`, are allowed), a `gnn.edge_softmax`,
      a chain of elementwise ops scaling the softmax weights (each the
      previous link's only user, its result that link times a factor
      independent of it, such as attention dropout's `alpha * mask`; possibly
      none) and the `gnn.spmm sum` that takes the chain's result as its
      weights become one group "attention_N". None of them may be reversed;
      all run on one graph.
    - `aggregation` (rule `aggregation`, gather-apply-reduce, after the
      attention groups): every `gnn.reduce` and weighted `gnn.spmm`
      (reversed or not) takes the whole edge DAG producing the edge values
      it aggregates (its input, its weights) into its group "aggregation_N":
      `gnn.gather` and `gnn.sddmm` ops on its graph (any kind, reversed or
      not) and elementwise `linalg.generic` ops with an edge result that an
      edge loop evaluates per edge (parallel loops then reductions over
      trailing dimensions, a constant-filled init if read), each read by an
      op of the DAG at the reader's own edge: with the identity map, or
      broadcast, as GATv2's backward reads a per-head value for every
      feature of its head (`(d0, d1, d2) -> (d0, d1)`). The DAG stops at
      values from outside: arguments, node tensors, materialised edge
      tensors. An edge value read by several aggregations is recomputed in
      each of their groups (cloned into each) rather than written to memory;
      it is materialised, as the result of a group "edge_map_N" holding its
      own DAG, only when some reader cannot recompute it (a use outside the
      function's ops, an `edge_softmax`, a matmul, the return, a read other
      than at its own edge). So GATv2's backward keeps no edge-sized
      temporary.
    - Otherwise the graph op forms a group of its own, named after it
      ("spmm_0", "sddmm_1", ...; family `aggregation` for `spmm` and
      `reduce`, `edge_map` for `sddmm` and `gather`).

    Before these, the node prologue (rule `prologue`, opt-in: not in the
    default `fuse` list) is planned for every
    `gnn.spmm` (any reduction, reversed or not; not `gnn.reduce`): when its
    features are computed by an elementwise op with parallel loops only and a
    node result, that op and, recursively, the producers of the prologue's
    operands that are such ops or `gnn.degree` ops of the spmm's graph
    (reversed or not) join the spmm's group "aggregation_N", before the spmm
    and the edge DAG of its weights, if the `aggregation` rule makes one.
    Anything else (a matmul, a function argument) stays outside as an input
    of the kernel. The rule applies only when the prologue's values are used
    by nothing but the prologue, the spmm and the consumers the spmm's group
    absorbs; it comes first, so a `gnn.degree` it takes does not form a group
    "degree_N". GCN's `deg = gnn.degree; dinv = rsqrt(deg + 1);
    hs = h * dinv[row]; agg = spmm sum(hs); out = dinv * (agg + hs) + b` is
    one group.

    Every group then absorbs the elementwise consumers of its result while
    each is the only user (all loops parallel, the result read with the
    identity map; its unread init is replaced by the result). Remaining
    elementwise and reduction `linalg` ops (not matmuls, which become cuBLAS
    calls, nor fills) become groups "elementwise_N" of their own.

    A rule applies only when the intermediates it fuses (the scores, the
    attention weights, the edge values) have no user outside the group;
    otherwise smaller groups form (for instance, when the attention weights
    are also returned). Size queries on intermediates (`tensor.dim`, the
    `tensor.empty` it sizes, a `linalg.fill` of it with a constant) move into
    the group. `fuse=none` turns all rules off: one graph op per group.

    Before:
    ```mlir
    %s = gnn.sddmm dot %g, %k, %q : ... -> tensor<?x4xf32>
    %alpha = gnn.edge_softmax %g, %s : tensor<?x4xf32>
    %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>)
        : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
    ```
    After:
    ```mlir
    %agg = gnn.kernel_group "attention_0" family = attention -> tensor<?x4x16xf32> {
      %s = gnn.sddmm dot %g, %k, %q : ... -> tensor<?x4xf32>
      %alpha = gnn.edge_softmax %g, %s : tensor<?x4xf32>
      %0 = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>)
          : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
      gnn.yield %0 : tensor<?x4x16xf32>
    }
    ```
    With `fuse=none`, the same IR gives groups "sddmm_0" (`edge_map`),
    "edge_softmax_0" (`edge_softmax`) and "spmm_0" (`aggregation`).

    Before all these, the families' whole-function rules (a family's record,
    `gnn/Dialect/GNN/IR/KernelFamily.h`; the table in docs/Codegen.md): when
    the module's `gnn.graph_stats` allow it, one may make the whole body one
    group of its family. Today: `graph_block`, when every graph of the batch
    has at most 128 nodes and every op of the function is one a block per
    graph can run, gives one group "graph_block_0" (with
    `gnn.max_graph_nodes` = the nodes per graph its kernel holds); see
    `gnn/Dialect/GNN/IR/GraphBlock.h`.
  }];
  let options = [
    ListOption<"fuse", "fuse", "std::string",
               "fusion rules to apply (the families' whole-function rules such "
               "as graph_block, attention, aggregation, prologue), or none; "
               "default (empty): every whole-function rule, attention and "
               "aggregation (prologue is opt-in: recomputing the prologue per "
               "edge is slower than writing it once on the graphs measured, "
               "bench/results/gcn-prologue-h100.txt)">,
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GNNSelectSchedules : Pass<"gnn-select-schedules", "func::FuncOp"> {
  let summary = "chooses a #gnn.schedule for every kernel group";
  let description = [{
    Builds a ScheduleProblem (gnn/Analysis/Schedule.h) from each kernel group
    (its kind and row width) and the graph statistics, and records the
    chosen schedule on the group. The statistics are the enclosing module's
    `gnn.graph_stats` attribute (`#gnn.graph_stats<...>`, which the compile
    driver sets), or, taking precedence, the `stats` option: statistics
    written by hand (gnn/Analysis/GraphStats.h's text form; `gnn-run` prints
    the statistics of its graph in this form). The kind is the group's first
    op, except for the fused families: an `attention` group is scheduled as
    attention over its `spmm`'s row (with the feature width of one head), an
    `aggregation` group like its `spmm` or `reduce`.

    Before (`--gnn-select-schedules='stats=nodes:1000,edges:13000,max-in:5000'`):
    ```mlir
    %a = gnn.kernel_group "spmm_0" family = aggregation -> tensor<?x64xf32> {
      %s = gnn.spmm sum %g, %h : tensor<?x64xf32> -> tensor<?x64xf32>
      gnn.yield %s : tensor<?x64xf32>
    }
    ```
    After: a warp per row (mean degree >= 4), float4 loads (64 % 4 == 0),
    rows above 128 edges split because the largest in-degree exceeds 256
    (gnn::chooseSplit):
    ```mlir
    %a = gnn.kernel_group "spmm_0" family = aggregation
        schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 128>
        -> tensor<?x64xf32> {
      %s = gnn.spmm sum %g, %h : tensor<?x64xf32> -> tensor<?x64xf32>
      gnn.yield %s : tensor<?x64xf32>
    }
    ```
  }];
  let options = [
    Option<"stats", "stats", "std::string", "\"\"",
           "graph statistics written by hand, gnn::GraphStats::toOption's "
           "form (`nodes:N,edges:E,max-in:D,...`); they take precedence over "
           "the module's gnn.graph_stats; neither: 1000 nodes of in-degree "
           "16">,
    Option<"split", "split", "int64_t", "-1",
           "the heavy-row threshold of every aggregation and attention group "
           "(0: no split, at least 32: rows above it are split), instead of "
           "gnn::chooseSplit's; -1: chosen from the statistics. For "
           "measurements (bench/split_sweep.sh) and tuning">,
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNAutodiff : Pass<"gnn-autodiff", "ModuleOp"> {
  let summary = "derives forward and backward functions from gnn functions";
  let description = [{
    For every function `@f` with arguments marked `gnn.differentiable` (a unit
    argument attribute on float tensors), adds after it

    - `@f_fwd`: `@f`'s body returning `@f`'s results and then the residuals,
      the forward values (arguments included) the backward reads;
    - `@f_bwd`: arguments `@f`'s graphs, the residuals and one gradient per
      result of `@f` (edge tensors marked `gnn.domain = "edge"`), returning
      the gradient of each differentiable argument, in order.

    Both are in the `gnn` dialect with `linalg`, `tensor`, `arith` and `math`,
    and go through the same pipelines as any function. The backward applies
    each op's derivative rule (`VJPOpInterface`, see GNNInterfaces.td and
    docs/Autodiff.md) in reverse program order to the ops that depend on a
    differentiable argument; gradients of values used several times are
    summed; an argument no result depends on gets zeros. An op on that path
    without a rule is an error at the op. `@f` stays as it is.

    Residuals: by default nothing edge-sized that the forward computes is
    kept. The ops producing edge values the backward reads (scores, edge
    messages, attention weights) run again in `@f_bwd` from node-sized
    residuals, and each `gnn.edge_softmax` on the way gets its log-sum-exp
    result in `@f_fwd` (which the fused attention kernel writes beside its
    output), from which `@f_bwd` recomputes the weights as
    `exp(s - lse[dst])` without a softmax pass. `store-edge-values` keeps
    them instead (for measurement). The function's own edge arguments are
    residuals either way.

    ```mlir
    func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable})
        -> tensor<?x8xf32> {
      %y = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
      return %y : tensor<?x8xf32>
    }
    // after: @f, and
    func.func @f_fwd(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable})
        -> tensor<?x8xf32> { ... }
    func.func @f_bwd(%g: !gnn.graph, %dy: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %dx = gnn.spmm sum %g, %dy reversed : tensor<?x8xf32> -> tensor<?x8xf32>
      return %dx : tensor<?x8xf32>
    }
    ```
  }];
  let options = [
    Option<"storeEdgeValues", "store-edge-values", "bool", /*default=*/"false",
           "keep the edge-sized forward values the backward reads as "
           "residuals instead of recomputing them">,
  ];
}

#endif // GNN_DIALECT_GNN_TRANSFORMS_PASSES_TD
