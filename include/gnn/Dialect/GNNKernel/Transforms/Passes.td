//===- Passes.td - gnnk passes ----------------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_TRANSFORMS_PASSES_TD
#define GNN_DIALECT_GNNKERNEL_TRANSFORMS_PASSES_TD

include "gnn/Dialect/GNN/Transforms/MaxChunksOption.td"
include "mlir/Pass/PassBase.td"

def GNNLowerToKernels : Pass<"gnn-lower-to-kernels", "ModuleOp"> {
  let summary = "lowers scheduled kernel groups to gnnk kernels and launches";
  let description = [{
    Every `gnn.kernel_group` (with a `#gnn.schedule`) becomes a `gnnk.kernel`
    placed before its function and a `gnnk.launch` in its place. One pattern
    per family builds the kernel: dense elementwise/reduction groups and
    degrees (a thread per element), edge maps (gather, sddmm: a team per
    element of the edge result, whose lanes split an sddmm's dot product in
    16-byte vectors and add their sums by a `gnnk.team_reduce`; a thread
    when there is no dot product, per 16-byte run of the row in a gather's
    group), edge softmax and aggregations (a team of
    lanes per row, a `gnnk.for_edges` with the accumulators carried and a
    merge region, a `gnnk.team_reduce` across edge groups), and fused
    attention (one kernel with an online softmax: no edge-sized buffer).
    Fused edge producers (gather, sddmm and elementwise ops feeding a reduce
    or an spmm's weights) are evaluated inside the edge loop; elementwise
    consumers are applied before each store. A schedule's `split` is recorded
    as `gnnk.split` on the kernel for `gnn-split-heavy-rows`. What is the
    same on every edge (side-effect-free ops of values from outside the
    loop, loads at such indices of buffers the kernel never writes: a row's
    own features, attention parameters) is read once per row, before the
    `gnnk.for_edges`.

    Kernels compute in the function's arithmetic type, f32 or f64
    (accumulators too): f32 for f32, bf16 and f16 tensors (bf16 and f16
    loads widen to f32, stores round to the storage type; fused attention's
    online-softmax exponentials are `fastmath<afn>` for bf16 and f16
    values, printed as the hardware's `__expf`), f64 for f64 ones;
    a function whose tensors mix f64 with the others is rejected with an
    error on the first tensor of the other arithmetic type.

    Before:
    ```mlir
    %agg = gnn.kernel_group "spmm_0" family = aggregation
        schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 0>
        -> tensor<?x64xf32> {
      %s = gnn.spmm sum %g, %h : tensor<?x64xf32> -> tensor<?x64xf32>
      gnn.yield %s : tensor<?x64xf32>
    }
    ```
    After:
    ```mlir
    gnnk.kernel @spmm_0(%in0: memref<?xf32> {gnnk.operand = 0 : i64}, ...)
        attributes {block = 64 : i64, grid = ...} {
      gnnk.for_rows %n lanes 32 { ... gnnk.for_edges ... gnnk.team_reduce ... }
      gnnk.return
    }
    func.func @f(...) {
      %agg = gnnk.launch @spmm_0[%g](%h) rows [...] : (tensor<?x64xf32>) -> tensor<?x64xf32>
    }
    ```
  }];
  let options = [
    Option<"indexBits", "index-bits", "int", "32",
           "width of the graph's index arrays (32 or 64)">,
    Option<"shareKernels", "share-kernels", "bool", "false",
           "give a group whose kernel is identical to one lowered before "
           "that kernel (as gnn-dedup-kernels does afterwards), so that the "
           "duplicates never accumulate">,
  ];
  let dependentDialects = ["::mlir::gnnk::GNNKDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GNNSplitHeavyRows : Pass<"gnn-split-heavy-rows", "ModuleOp"> {
  let summary = "spreads the edges of heavy rows over the GPU";
  let description = [{
    For every `gnnk.kernel` with `gnnk.split = N` whose `gnnk.for_rows` body
    is a row prologue, one `gnnk.for_edges` with a merge region over the
    row's CSR/CSC range, an optional `gnnk.team_reduce` of its results and an
    epilogue, rows of more than N edges are taken out of the row kernel and
    handled by two more kernels over chunks of `L = max(N, ceil(edges /
    max-chunks))` consecutive edge positions (so there are at most
    `max-chunks` chunks, whatever the graph's size):
    - `<name>_partial`, a block of teams per chunk, reduces the piece of the
      heavy row at the chunk's first position when that row crosses the
      chunk's boundaries (with its piece in the previous chunk when it starts
      strictly inside that one: at most `2L - 1` positions) with the loop's
      merge region (team, then block reductions) and writes the chunk's
      partial result;
    - `<name>_final`, a block per chunk: heavy rows lying wholly inside its
      chunk (only when `L > N`) it reduces whole with the block's teams and
      finishes itself (the chunk's rows probed a team width at a time, a
      team reduction gathering the marks of such rows into a mask); then a
      team per chunk (chunk `block * teams + team`) merges the partial
      results of the heavy row that starts in that chunk and crosses its end
      in chunk order with the same region (eight chunks' loads in flight) and
      runs the epilogue.
    Works for any loop with a merge region: sums, maxima and the online
    softmax of fused attention alike. Results are deterministic: every merge
    runs in a fixed order.

    The partial and final kernels have blocks of 256 threads (eight teams
    per chunk) whatever the row kernel's block.

    The partial results are a buffer of their own, `min(ceil(edges / N),
    max-chunks) * lanes * carried` floats, a second result of the partial
    kernel passed to the final kernel. The three kernels write disjoint
    parts (the row kernel light rows, the other two heavy rows and the
    states), so the row kernel's launch, after the other two and updating
    the same results in place, carries `overlaps = 2`: the runtime may run
    it beside them.

    ```mlir
    // before: a row kernel marked for splitting
    gnnk.kernel @spmm_0(...) attributes {block = 64 : i64, grid = #g, gnnk.split = 512 : i64} {
      gnnk.for_rows %n lanes 32 { ... gnnk.for_edges ... merge {...} ... }
    }
    // after: the row kernel keeps rows of at most 512 edges, and
    gnnk.kernel @spmm_0_partial(...) attributes {block = 256 : i64,
        grid = affine_map<()[s0, s1, s2, s3, s4] -> (s1 ceildiv 512, 8192)>} {...}
    gnnk.kernel @spmm_0_final(...) attributes {...} {...}
    %p = gnnk.launch @spmm_0_partial[%g] (%x) rows [#nodes] : ...
    %f = gnnk.launch @spmm_0_final[%g] (%x, %p) rows [#nodes] {tied = array<i64: 1>} : ...
    %r = gnnk.launch @spmm_0[%g] (%x, %f) rows [#nodes] {tied = array<i64: 1>} : ...
    ```
  }];
  let options = [
    GNN_MaxChunksOption,
  ];
  let dependentDialects = ["::mlir::gnnk::GNNKDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def GNNDedupKernels : Pass<"gnn-dedup-kernels", "ModuleOp"> {
  let summary = "shares one gnnk.kernel between launches of identical kernels";
  let description = [{
    Kernel lowering gives every kernel group its own `gnnk.kernel`, so a
    chain of N identical graph ops has N identical kernels (and, with heavy
    rows, 3N after `gnn-split-heavy-rows`): the CUDA source, the Program and
    the compile time grow with the ops instead of the distinct kernels. This
    pass finds the kernels that are identical but for their name (the same
    parameters and parameter attributes, `block`, `grid`, other attributes
    such as `gnnk.split`, and the same body op for op, locations aside),
    rewrites every `gnnk.launch` of such a kernel to the first of them in
    the module and erases the others. Linear in the size of the kernels: a
    structural hash of each kernel, then an exact comparison within a hash
    class.

    A kernel with `gnnk.split` is shared only between kernels whose launches
    have the same result types, `rows` and `tied` (the split rewrites all
    launches of the kernel alike), so that the split of the shared kernel
    is the one each kernel would have had.

    ```mlir
    // before
    gnnk.kernel @spmm_0(...) attributes {block = 64 : i64, grid = #g} {...}
    gnnk.kernel @spmm_1(...) attributes {block = 64 : i64, grid = #g} {...}  // same body
    %a = gnnk.launch @spmm_0[%g](%x) rows [#nodes] : ...
    %b = gnnk.launch @spmm_1[%g](%a) rows [#nodes] : ...
    // after
    gnnk.kernel @spmm_0(...) attributes {block = 64 : i64, grid = #g} {...}
    %a = gnnk.launch @spmm_0[%g](%x) rows [#nodes] : ...
    %b = gnnk.launch @spmm_0[%g](%a) rows [#nodes] : ...
    ```
  }];
  let dependentDialects = ["::mlir::gnnk::GNNKDialect"];
}

#endif // GNN_DIALECT_GNNKERNEL_TRANSFORMS_PASSES_TD
