//===- GNNOps.td - gnn dialect operations -----------------*- tablegen -*-===//
//
// Part of gnnc. The graph-level operations: the generalised SpMM / SDDMM family
// (gather, sddmm, edge_softmax, spmm, reduce) and graph processing (degree).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNN_IR_GNNOPS_TD
#define GNN_DIALECT_GNN_IR_GNNOPS_TD

include "gnn/Dialect/GNN/IR/GNNBase.td"
include "gnn/Dialect/GNN/IR/GNNTypes.td"
include "gnn/Dialect/GNN/IR/GNNAttrs.td"
include "gnn/Dialect/GNN/IR/GNNInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// gnn.gather
//===----------------------------------------------------------------------===//

def GNN_GatherOp : GNN_Op<"gather", [Pure, GNN_GraphOpInterface]> {
  let summary = "copies a node tensor onto the edges, from their source or destination";
  let description = [{
    `result[e] = input[src(e)]` (with `src`) or `result[e] = input[dst(e)]`
    (with `dst`) for every edge `e`. The trailing dimensions are unchanged.

    With `relation` (on a typed graph) the input has a row per node and
    relation, `nodes x R x ...`, and each edge reads the row of its own
    relation: `result[e] = input[src(e), type(e)]` (`dst(e)` with `dst`); the
    result drops the relation dimension. A relation id outside `[0, R)` is
    an error.

    ```mlir
    %xe = gnn.gather src %g, %x : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    %xr = gnn.gather src %g, %h relation
        : !gnn.graph<typed>, tensor<?x3x8xf32> -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins GNN_EdgeEnd:$end, GNN_GraphType:$graph,
                       GNN_FloatTensor:$input, UnitAttr:$relation);
  let results = (outs GNN_FloatTensor:$result);
  let assemblyFormat = [{
    $end $graph `,` $input (`relation` $relation^)? attr-dict `:`
    custom<GraphType>(type($graph), type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.sddmm
//===----------------------------------------------------------------------===//

def GNN_SddmmOp : GNN_Op<"sddmm", [Pure, GNN_GraphOpInterface]> {
  let summary = "combines the source and destination rows of every edge";
  let description = [{
    For every edge `e` from `s` to `d`: `result[e] = lhs[s] (op) rhs[d]`.
    With `dot`, the last dimension is contracted (a per-head dot product:
    `nodes x heads x F` operands give an `edges x heads` result, `nodes x F`
    operands an `edges` result); with `add`, `sub` and `mul` the result keeps the
    operands' trailing shape. With `reversed`, `s` and `d` swap roles: `lhs` is
    read at the destination and `rhs` at the source.

    ```mlir
    %score = gnn.sddmm dot %g, %k, %q : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
    %sum = gnn.sddmm add %g, %a, %b : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins GNN_SddmmKind:$kind, GNN_GraphType:$graph,
                       GNN_FloatTensor:$lhs, GNN_FloatTensor:$rhs,
                       UnitAttr:$reversed);
  let results = (outs GNN_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $graph `,` $lhs `,` $rhs (`reversed` $reversed^)? attr-dict `:`
    custom<GraphType>(type($graph), type($lhs)) `,` type($rhs) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.edge_softmax
//===----------------------------------------------------------------------===//

def GNN_EdgeSoftmaxOp : GNN_Op<"edge_softmax",
    [Pure, GNN_GraphOpInterface, AllTypesMatch<["input", "result"]>]> {
  let summary = "softmax of edge values over the edges entering each node";
  let description = [{
    For every edge `e` entering node `d` and every trailing index `h` (a head):
    `result[e, h] = exp(input[e, h] - m) / sum_{e' -> d} exp(input[e', h] - m)`
    with `m = max_{e' -> d} input[e', h]` (numerically stable). A node with no
    incoming edge contributes nothing. With `reversed`, the normalisation runs
    over the edges leaving each node.

    An optional second result `lse` is the log-sum-exp of each node's group,
    a node tensor with the input's trailing dimensions and the input's
    arithmetic type (f32 for bf16 and f16 scores, see GNNFloatTypes.h):
    `lse[d, h] = m + log(sum_{e' -> d} exp(input[e', h] - m))`, `-inf` for a
    node with no incoming edge (or only `-inf` values). It is what a backward
    pass needs to recompute the weights (`result = exp(input - lse[d])`), and
    a fused attention kernel writes it beside its output at no extra pass.

    ```mlir
    %alpha = gnn.edge_softmax %g, %score : tensor<?x4xf32>
    %alpha2, %lse = gnn.edge_softmax %g, %score : tensor<?x4xf32>, tensor<?x4xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_FloatTensor:$input,
                       UnitAttr:$reversed);
  let results = (outs GNN_FloatTensor:$result,
                      Optional<GNN_FloatTensor>:$lse);
  let assemblyFormat = [{
    $graph `,` $input (`reversed` $reversed^)? attr-dict `:`
    custom<GraphType>(type($graph), type($input)) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.spmm
//===----------------------------------------------------------------------===//

def GNN_SpmmOp : GNN_Op<"spmm", [Pure, GNN_GraphOpInterface]> {
  let summary = "aggregates (optionally weighted) source rows into destination rows";
  let description = [{
    For every node `d`: `result[d] = R_{e: s -> d} w[e] * input[s]`, where `R` is
    `sum`, `mean` (the sum divided by the in-degree), `max` or `min`, taken
    elementwise. Without `weights`, `w[e] = 1`. The weights have one dimension
    less than `input`: `nodes x F` features take `edges` weights, `nodes x heads
    x F` features take `edges x heads` weights (one weight per edge and head).
    A node with no incoming edge gets 0 for every reduction. With `reversed`,
    rows of destinations are aggregated into their sources.

    `max` and `min` may have a second result `winner`, of the result's
    shape and arithmetic type (f32 for a bf16 or f16 result):
    per element, a code telling which incoming edges attain the extremum
    (those whose value `w[e] * input[s]` equals `result[d]`), found as the
    extremum is: `-1` where none does (a node with no incoming edge), NaN
    for a NaN extremum, else `-(c + 1)` for the `c` edges attaining it;
    without weights, a single such edge is named instead by its source's id
    when the extremum is not the reduction's identity (`-inf` for max,
    `+inf` for min) and the id is below `2^p` (`p` the arithmetic type's
    significand bits: 24 for f32, 53 for f64, so the code is exact). A
    duplicate edge counts as an edge of its own (two edges from one source
    attaining it: `-3`). With `counted`, no edge is named: a single one is
    `-2`, as with weights (what a gradient pulled along the edges needs, and
    cheaper to find than an id). The codes do not depend on how a kernel
    splits a row's edges. It is what a backward pass keeps to route the
    gradient: to the winning source (`gnn.extremum_grad`), or `dy / c` to
    each edge attaining the extremum.

    ```mlir
    %agg = gnn.spmm sum %g, %h weights(%alpha : tensor<?x4xf32>)
        : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    %mean = gnn.spmm mean %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
    %max, %winner = gnn.spmm max %g, %x
        : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
    %m, %count = gnn.spmm max %g, %h counted
        : tensor<?x16xbf16> -> tensor<?x16xbf16>, tensor<?x16xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceKind:$reduce, GNN_GraphType:$graph,
                       GNN_FloatTensor:$input,
                       Optional<GNN_FloatTensor>:$weights,
                       UnitAttr:$reversed, UnitAttr:$counted);
  let results = (outs GNN_FloatTensor:$result,
                      Optional<GNN_FloatTensor>:$winner);
  let assemblyFormat = [{
    $reduce $graph `,` $input (`weights` `(` $weights^ `:` type($weights) `)`)?
    (`reversed` $reversed^)? (`counted` $counted^)? attr-dict `:`
    custom<GraphType>(type($graph), type($input)) `->` type($result)
    (`,` type($winner)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.reduce
//===----------------------------------------------------------------------===//

def GNN_ReduceOp : GNN_Op<"reduce", [Pure, GNN_GraphOpInterface]> {
  let summary = "reduces edge values into the node the edges enter";
  let description = [{
    For every node `d`: `result[d] = R_{e -> d} input[e]` with `R` one of
    `sum`, `mean`, `max`, `min`, elementwise over the trailing dimensions.
    A node with no incoming edge gets 0. With `reversed`, the reduction runs
    over the edges leaving each node.

    `max` and `min` may have a second result `winner`, as a weighted
    `gnn.spmm`'s: per element, `-(c + 1)` for the `c` edges whose value
    equals the extremum (`-1`: none).

    With `relation` (on a typed graph, `sum` only, the gradient of a
    `relation` gather) each edge adds into the row of its own relation:
    `result[d, r] = sum_{e -> d, type(e) = r} input[e]`, a `nodes x R x ...`
    result (`R` static); a (node, relation) pair without an edge gets 0.

    ```mlir
    %s = gnn.reduce sum %g, %e : tensor<?x4xf32> -> tensor<?x4xf32>
    %t = gnn.reduce sum %g, %e reversed relation
        : !gnn.graph<typed>, tensor<?x4xf32> -> tensor<?x3x4xf32>
    %m, %t = gnn.reduce max %g, %e
        : tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceKind:$kind, GNN_GraphType:$graph,
                       GNN_FloatTensor:$input, UnitAttr:$reversed,
                       UnitAttr:$relation);
  let results = (outs GNN_FloatTensor:$result,
                      Optional<GNN_FloatTensor>:$winner);
  let assemblyFormat = [{
    $kind $graph `,` $input (`reversed` $reversed^)? (`relation` $relation^)?
    attr-dict `:`
    custom<GraphType>(type($graph), type($input)) `->` type($result)
    (`,` type($winner)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.extremum_grad
//===----------------------------------------------------------------------===//

def GNN_ExtremumGradOp : GNN_Op<"extremum_grad", [Pure, GNN_GraphOpInterface,
    AllTypesMatch<["input", "extremum", "grad"]>,
    TypesMatchWith<"winner is of the input's arithmetic type", "input",
                   "winner", "::mlir::gnn::withArithmeticElements("
                             "::llvm::cast<::mlir::RankedTensorType>($_self))">,
    TypesMatchWith<"result is of the input's arithmetic type", "input",
                   "result", "::mlir::gnn::withArithmeticElements("
                             "::llvm::cast<::mlir::RankedTensorType>($_self))">]> {
  let summary = "routes an unweighted spmm max/min's gradient to its winning edges";
  let description = [{
    The input gradient of `%y, %winner = gnn.spmm max|min %g, %x` (without
    weights, reversed as it is) for the output gradient `%dy`: for every
    node `d` and element `i`, `dy[d, i]` goes to the source that
    `winner[d, i]` names (a node id), or, for a tie code `-(c + 1)` (below
    `-1`), goes as `dy[d, i] / c` to each of the edges `e: s -> d` whose
    `input[s, i]` equals `extremum[d, i]`, which the code must count (the
    reference evaluator checks it); a code of `-1` routes nothing. `result[s, i]` sums
    what the edges leaving `s` get (0 for a node that wins nothing). With
    `reversed`, rows are the nodes' outgoing edges (the CSC) and the
    gradient goes to destinations.

    Every operand and the result are node tensors of one shape; `input`,
    `extremum` and `grad` have one type, `winner` and the result its
    arithmetic type (f32 for bf16 and f16, so that the sums are f32). The
    CUDA kernel has a thread per element of `grad` and adds into the result
    atomically (the ties of rows far longer than the mean, a thread per
    edge): the order of the additions, and so the rounding of a node's sum
    of three or more terms, may differ from run to run.

    ```mlir
    %dx = gnn.extremum_grad %g, %x, %y, %winner, %dy : tensor<?x16xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_FloatTensor:$input,
                       GNN_FloatTensor:$extremum, GNN_FloatTensor:$winner,
                       GNN_FloatTensor:$grad, UnitAttr:$reversed);
  let results = (outs GNN_FloatTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input `,` $extremum `,` $winner `,` $grad
    (`reversed` $reversed^)? attr-dict `:`
    custom<GraphType>(type($graph), type($input))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.degree
//===----------------------------------------------------------------------===//

def GNN_DegreeOp : GNN_Op<"degree", [Pure, GNN_GraphOpInterface]> {
  let summary = "the number of edges entering (or, reversed, leaving) each node";
  let description = [{
    `result[n]` is the in-degree of node `n` (the out-degree with `reversed`) as
    a floating-point value. Self-loops count once, duplicate edges count every
    time they appear.

    ```mlir
    %deg = gnn.degree %g : tensor<?xf32>
    %out = gnn.degree %g reversed : tensor<?xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, UnitAttr:$reversed);
  let results = (outs GNN_FloatTensor:$result);
  let assemblyFormat = [{
    $graph (`reversed` $reversed^)? attr-dict `:`
    custom<GraphType>(type($graph), type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnn.kernel_group and gnn.yield
//===----------------------------------------------------------------------===//

def GNN_KernelGroupOp : GNN_Op<"kernel_group", [
    RecursiveMemoryEffects, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "the ops that become one GPU kernel";
  let description = [{
    A region of graph-level and elementwise ops that code generation turns
    into one kernel. Values defined above are used directly (the region is not
    isolated, like a dispatch region); the values the kernel writes are
    yielded. An unfused pipeline has one graph op per group, with neighbouring
    elementwise work absorbed; fusion makes bigger groups (a whole attention
    or gather-apply-reduce pipeline). `family` says which kind of kernel the
    group is: it is checked against the graph ops the group holds and the
    thread mapping of its schedule, and it alone decides how the group is
    scheduled and lowered (see `GNN_GroupFamily` and
    `gnn/Dialect/GNN/IR/KernelFamily.h`); `gnn-form-kernel-groups` sets it.
    `schedule` is set by `gnn-select-schedules`.

    ```mlir
    %agg = gnn.kernel_group "spmm_0" family = aggregation
        schedule = #gnn.schedule<mapping = row_parallel, lanes = 16, block = 256, vector = 4, split = 0>
        -> tensor<?x64xf32> {
      %s = gnn.spmm sum %g, %h : tensor<?x64xf32> -> tensor<?x64xf32>
      gnn.yield %s : tensor<?x64xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kernel, GNN_GroupFamily:$family,
                       OptionalAttr<GNN_ScheduleAttr>:$schedule);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kernel `family` `=` $family (`schedule` `=` $schedule^)?
    (`->` type($results)^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The terminator of the body.
    YieldOp getYield();
  }];
}

def GNN_YieldOp : GNN_Op<"yield", [
    Pure, ReturnLike, Terminator, HasParent<"KernelGroupOp">]> {
  let summary = "the values a kernel group produces";
  let description = [{
    ```mlir
    gnn.yield %a, %b : tensor<?x4xf32>, tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* empty yield */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // GNN_DIALECT_GNN_IR_GNNOPS_TD
