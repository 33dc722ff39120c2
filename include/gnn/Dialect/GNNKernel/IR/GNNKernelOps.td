//===- GNNKernelOps.td - gnnk dialect operations ----------*- tablegen -*-===//
//
// Part of gnnc. Kernels, launches, thread mappings, edge loops, reductions
// with combine regions, and memory access.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_IR_GNNKERNELOPS_TD
#define GNN_DIALECT_GNNKERNEL_IR_GNNKERNELOPS_TD

include "gnn/Dialect/GNNKernel/IR/GNNKernelAttrs.td"
include "gnn/Dialect/GNNKernel/IR/GNNKernelBase.td"
include "gnn/Dialect/GNN/IR/GNNTypes.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Buffers of kernel parameters: f32 and f64 values, bf16 and f16 storage
// (read as f32, written from f32), graph indices.
def GNNK_Buffer : MemRefRankOf<[BF16, F16, F32, F64, I32, I64], [1]>;
// Shared memory holds values of the kernels' arithmetic (f32, f64).
def GNNK_SharedBuffer : MemRefRankOf<[F32, F64, I32, I64], [1]>;
def GNNK_AffineMapArray : TypedArrayAttrBase<AffineMapAttr, "affine map array">;

//===----------------------------------------------------------------------===//
// gnnk.kernel, gnnk.return, gnnk.launch
//===----------------------------------------------------------------------===//

def GNNK_KernelOp : GNNK_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove, AutomaticAllocationScope]> {
  let summary = "a GPU kernel with typed parameters and its launch shape";
  let description = [{
    One `__global__` function, named by its symbol: a C identifier that
    nothing NVRTC or the printed prelude declares already (C++ keywords,
    `main`, CUDA's built-in variables, the CUDA math API in single and
    double precision, CUDA's integer, atomic, texture and surface functions,
    vector types and their `make_` functions, names of the CUDA runtime API,
    `printf`, `malloc`, `free`, `memcpy`, `memset`, `assert`, `clock`, `std`,
    `size_t`, `NULL`, `idx_t`), and none starting with `__`, `_` and a
    capital letter, or `gnn_` (`reservedKernelName` says which it is).
    Every parameter carries exactly one binding attribute saying what the
    runtime passes:
    - `gnnk.operand = K`: the K-th tensor operand of the `gnnk.launch`;
    - `gnnk.result = K`: the buffer of the launch's K-th result;
    - `gnnk.graph = "csr_row_ptr"`: an index array of the runtime graph
      (`csr_row_ptr`, `csr_col`, `csr_dst`, `csr_edge`, `csc_col_ptr`,
      `csc_row`, `csc_to_csr`, `csr_rows_by_degree`, `csc_cols_by_degree`:
      the node ids in increasing in- and out-degree, ties by id);
    - `gnnk.size = "nodes" | "edges" | "graphs" | "src_nodes" |
      "dst_nodes"`: a graph size (`i64`; the last two a bipartite graph's
      sides, both the nodes on a graph of one node set). With
      `gnnk.formula = F` (a `#gnnk.formula`) beside it, the size parameter
      is the runtime's value of the integer formula F of the graph's sizes,
      evaluated once per launch, and `gnnk.size` only names it (a C
      identifier).

    A result parameter may also carry `gnnk.accumulate` (a unit attribute):
    the runtime zeroes the result's buffer before the launch and the kernel
    adds into it (`gnnk.atomic_add`).

    `block` is the number of threads per block; `min_blocks`, where set, the
    number of blocks an SM must be able to hold at once (the second argument
    of `__launch_bounds__`: the compiler then keeps the registers per thread
    within 65536 / (block * min_blocks), spilling if it must); `grid` the
    number of blocks,
    an affine map of the symbols `s0` = nodes, `s1` = edges, `s2` = graphs,
    `s3` = source nodes, `s4` = destination nodes;
    with several results it is their minimum (like `affine.min`), e.g.
    `()[s0, s1, s2, s3, s4] -> (s1 ceildiv 512, 8192)` for a capped grid.
    The body's ops are thread mappings (`gnnk.for_elements`, `gnnk.for_rows`,
    `gnnk.for_blocks`), index arithmetic and constants, then `gnnk.return`.

    ```mlir
    gnnk.kernel @degree_0(%out: memref<?xf32> {gnnk.result = 0 : i64},
                          %ptr: memref<?xi32> {gnnk.graph = "csr_row_ptr"},
                          %nodes: i64 {gnnk.size = "nodes"})
        attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 256)>} {
      %n = arith.index_cast %nodes : i64 to index
      gnnk.for_elements %n {
      ^bb0(%i: index):
        ...
        gnnk.yield
      }
      gnnk.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       I64Attr:$block, AffineMapAttr:$grid,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$min_blocks);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// FunctionOpInterface: the body.
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    /// FunctionOpInterface: parameter types.
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    /// FunctionOpInterface: result types (none).
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The attribute names of the four parameter bindings.
    static constexpr ::llvm::StringLiteral kOperand = "gnnk.operand";
    static constexpr ::llvm::StringLiteral kResult = "gnnk.result";
    static constexpr ::llvm::StringLiteral kGraph = "gnnk.graph";
    static constexpr ::llvm::StringLiteral kSize = "gnnk.size";
    /// A result zeroed before the launch, added into by the kernel.
    static constexpr ::llvm::StringLiteral kAccumulate = "gnnk.accumulate";
    /// With kSize: the formula of the graph's sizes giving the value (a
    /// FormulaAttr).
    static constexpr ::llvm::StringLiteral kFormula = "gnnk.formula";
  }];
}

def GNNK_ReturnOp : GNNK_Op<"return", [
    Pure, ReturnLike, Terminator, HasParent<"KernelOp">]> {
  let summary = "the end of a kernel";
  let description = [{
    ```mlir
    gnnk.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def GNNK_LaunchOp : GNNK_Op<"launch", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs a gnnk.kernel on tensors, producing new tensors";
  let description = [{
    Host-side call of the kernel `kernel` (on the graph `graph`, absent for
    dense kernels of a function without one): the tensor
    operands are bound to the kernel's `gnnk.operand` parameters in order and
    a fresh buffer per result to its `gnnk.result` parameters. `rows` gives
    the row count of each result as an affine map of nodes (`s0`), edges
    (`s1`), graphs (`s2`) and a bipartite graph's source and destination
    nodes (`s3`, `s4`; both the nodes on a graph of one node set); a
    result's size is its rows times the product of its trailing dimensions.
    A bipartite graph's type follows the function type: `... -> tensor<?x4xf32>
    on !gnn.graph<bipartite>`. Edge tensors are in CSR slot order. With
    `tied`, result `i` is not a fresh buffer but operand `tied[i]`'s (-1:
    fresh), updated in place: the kernel writes some of its rows and the
    others keep the operand's values (the heavy rows of a split row kernel).
    With `overlaps = k`, the launch may run at the same time as the `k`
    launches right before it (they neither read nor write what it writes,
    and it reads nothing they write): every result is tied, and the rows it
    writes are not theirs (a split row kernel's light rows beside its
    partial and final kernels). The runtime may then start it on a second
    stream once the steps before those `k` are done.

    ```mlir
    %agg = gnnk.launch @spmm_0[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0)>]
        : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Optional<GNN_GraphType>:$graph,
                       Variadic<AnyRankedTensor>:$args,
                       GNNK_AffineMapArray:$rows,
                       OptionalAttr<DenseI64ArrayAttr>:$tied,
                       OptionalAttr<I64Attr>:$overlaps);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel (`[` $graph^ `]`)? `(` $args `)` `rows` $rows attr-dict `:`
    functional-type($args, $results)
    custom<LaunchGraphType>(ref($graph), type($graph))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Thread mappings
//===----------------------------------------------------------------------===//

def GNNK_ForElementsOp : GNNK_Op<"for_elements", [
    SingleBlock, RecursiveMemoryEffects, HasParent<"KernelOp">]> {
  let summary = "one thread per element index in [0, count)";
  let description = [{
    The body runs once per index `i` in `[0, count)`, each on its own thread
    (`i` = global thread index); the entry block argument is `i`. Threads
    past `count` skip the body.

    ```mlir
    gnnk.for_elements %n {
    ^bb0(%i: index):
      gnnk.yield
    }
    ```
  }];
  let arguments = (ins Index:$count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def GNNK_ForRowsOp : GNNK_Op<"for_rows", [
    SingleBlock, RecursiveMemoryEffects, HasParent<"KernelOp">]> {
  let summary = "a team of lanes per row index in [0, count)";
  let description = [{
    Consecutive threads form teams of `lanes` (a power of two, at most 32,
    inside one warp); team `r` handles row `r` for `r` in `[0, count)`. The
    entry block arguments are the row and the lane in `[0, lanes)`. Teams
    past `count` skip the body as a whole, so team reductions inside it see
    every lane of the team.

    ```mlir
    gnnk.for_rows %n lanes 32 {
    ^bb0(%row: index, %lane: index):
      gnnk.yield
    }
    ```
  }];
  let arguments = (ins Index:$count, I64Attr:$lanes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count `lanes` $lanes attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def GNNK_ForBlocksOp : GNNK_Op<"for_blocks", [
    SingleBlock, RecursiveMemoryEffects, HasParent<"KernelOp">]> {
  let summary = "a block of teams per index in [0, count)";
  let description = [{
    Block `b` handles index `b` for `b` in `[0, count)`; its threads form
    `block / lanes` teams of `lanes`. The entry block arguments are the
    index, the team and the lane. Control flow that decides whether a team
    reduction or block reduction runs must be uniform across the block.

    ```mlir
    gnnk.for_blocks %chunks lanes 32 {
    ^bb0(%b: index, %team: index, %lane: index):
      gnnk.yield
    }
    ```
  }];
  let arguments = (ins Index:$count, I64Attr:$lanes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count `lanes` $lanes attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory and barriers (gnnk.for_blocks)
//===----------------------------------------------------------------------===//

def GNNK_SharedOp : GNNK_Op<"shared", [HasParent<"ForBlocksOp">]> {
  let summary = "an array in the block's shared memory";
  let description = [{
    `size` elements of the result's element type that the threads of one
    block share (CUDA `__shared__`), not initialised, alive until the kernel
    ends. A write by one thread is seen by the others after a
    `gnnk.barrier`. The kernel's arrays together must fit the 48 KiB of
    static shared memory a block may have.

    ```mlir
    %h = gnnk.shared 1024 : memref<?xf32>
    ```
  }];
  let arguments = (ins I64Attr:$size);
  let results = (outs GNNK_SharedBuffer:$buffer);
  let assemblyFormat = "$size attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def GNNK_BarrierOp : GNNK_Op<"barrier", [HasParent<"ForBlocksOp">]> {
  let summary = "waits for every thread of the block";
  let description = [{
    CUDA's `__syncthreads()`: no thread of the block passes it before all
    have reached it, and what they wrote to shared and global memory before
    it is visible to all of them after it. Every thread of the block must
    reach it (it sits directly in the `gnnk.for_blocks` body, whose guard is
    uniform across the block).

    ```mlir
    gnnk.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// gnnk.for_edges
//===----------------------------------------------------------------------===//

def GNNK_ForEdgesOp : GNNK_Op<"for_edges", [
    SingleBlock, RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "a loop over edge positions of a row, with loop-carried values";
  let description = [{
    Runs the body for positions `p = begin, begin + step, ... < end` of the
    graph's traversal order: the CSR (edges by destination) or, reversed, the
    CSC (edges by source). The entry block arguments are the edge's CSR slot
    (`p`, or `perm[p]` when `perm`, the CSC-to-CSR permutation, is given), its
    other end `nbrs[p]` (the source in the CSR, the destination in the CSC),
    then the loop-carried values, initialised from `inits` and updated by the
    `gnnk.yield` of the body; the results are their final values. `unroll`
    asks the printer to unroll the loop by that factor.

    With `group` K > 1 the body takes K edges a step: its arguments are the
    slot and neighbour of positions `p, p + step, ..., p + (K - 1) step`
    (pairs, in that order), then the carried values, and the loop advances
    by `K step`; it runs while all K positions are below `end`. The `rest`
    region, whose block takes one edge as a body of group 1 does, then runs
    the remaining positions (fewer than K) one at a time. So the body can
    request all K edges' data before it combines any (an attention's online
    softmax updated once per K edges), and the results are those of the
    positions in order, K at a time.

    The optional `merge` region says how the results of two such loops over
    disjoint sets of edges of one row combine (it takes one set of carried
    values then the other and yields the combination): with it, a row's
    edges may be split among several teams or blocks whose partial results
    are merged afterwards (`gnn-split-heavy-rows`).

    ```mlir
    %acc = gnnk.for_edges %b to %e step %c1 nbrs(%col : memref<?xi32>)
        iter_args(%zero : f32) -> f32 {
    ^bb0(%slot: index, %src: index, %a: f32):
      %v = gnnk.load %x[%src] : memref<?xf32> -> f32
      %s = arith.addf %a, %v : f32
      gnnk.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Index:$begin, Index:$end, Index:$step,
                       GNNK_Buffer:$nbrs, Optional<GNNK_Buffer>:$perm,
                       Variadic<AnyType>:$inits,
                       OptionalAttr<I64Attr>:$unroll,
                       OptionalAttr<I64Attr>:$group);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body, AnyRegion:$rest,
                 AnyRegion:$merge);
  let assemblyFormat = [{
    $begin `to` $end `step` $step `nbrs` `(` $nbrs `:` type($nbrs) `)`
    (`perm` `(` $perm^ `:` type($perm) `)`)?
    (`iter_args` `(` $inits^ `:` type($inits) `)`)? (`->` type($results)^)?
    attr-dict-with-keyword $body (`rest` $rest^)? (`merge` $merge^)?
  }];
  let extraClassDeclaration = [{
    /// Edges a step of the body (the `group` attribute, 1 without it).
    int64_t getEdgesPerStep() { return getGroup() ? *getGroup() : 1; }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions across threads
//===----------------------------------------------------------------------===//

def GNNK_TeamReduceOp : GNNK_Op<"team_reduce", [
    RecursiveMemoryEffects, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "combines values across lanes of a team by butterfly shuffles";
  let description = [{
    Lanes whose indices differ only in the bits `stride, 2 stride, ...,
    width / 2` exchange their values and combine them with the region, whose
    block takes this lane's values then the partner's and yields the
    combination; afterwards every such segment of `width` lanes holds the
    same result. `stride` and `width` are powers of two, `stride < width <=
    lanes` of the enclosing `gnnk.for_rows` or `gnnk.for_blocks`. The
    segment's lanes must all reach the op. The rule must be associative and
    commutative up to rounding.

    ```mlir
    %s = gnnk.team_reduce %v stride 1 width 8 : f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gnnk.yield %c : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values, I64Attr:$stride,
                       I64Attr:$width);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = [{
    $values `stride` $stride `width` $width attr-dict `:` type($values) $combine
  }];
  let hasVerifier = 1;
}

def GNNK_BlockReduceOp : GNNK_Op<"block_reduce", [
    RecursiveMemoryEffects, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "combines the values of every team's lane, keeping team order";
  let description = [{
    In a `gnnk.for_blocks`, the values of lane `l` of every team are combined
    with the region, and the result is given to lane `l` of every team. The
    combines form a fixed tree (pairs of neighbouring teams, then pairs of
    those, ...) whose left operands always hold the lower teams: the same
    result on every run, and for an associative region what combining in
    team order (team 0 first) gives, a float sum up to its rounding. All
    threads of the block must reach the op.

    ```mlir
    %t = gnnk.block_reduce %v : f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gnnk.yield %c : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = "$values attr-dict `:` type($values) $combine";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def GNNK_LoadOp : GNNK_Op<"load", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "reads one or several consecutive elements of a buffer";
  let description = [{
    Reads `buffer[index]`, `buffer[index + 1]`, ... (one per result, 1, 2,
    4 or 8 of them; the printer uses one vector access per 16 bytes, so
    `index` must then be a multiple of the count). The results are of the
    buffer's element type, or f32 for a bf16 or f16 buffer: a widening load
    (kernels compute half-precision storage in f32).

    ```mlir
    %a, %b, %c, %d = gnnk.load %x[%i] : memref<?xf32> -> f32, f32, f32, f32
    %h:8 = gnnk.load %y[%i] : memref<?xbf16> -> f32, f32, f32, f32, f32, f32, f32, f32
    ```
  }];
  let arguments = (ins GNNK_Buffer:$buffer, Index:$index);
  let results = (outs Variadic<AnyType>:$values);
  let assemblyFormat = [{
    $buffer `[` $index `]` attr-dict `:` type($buffer) `->` type($values)
  }];
  let hasVerifier = 1;
}

def GNNK_StoreOp : GNNK_Op<"store", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "writes one or several consecutive elements of a buffer";
  let description = [{
    Writes `values` to `buffer[index]`, `buffer[index + 1]`, ... (1, 2, 4
    or 8 of them), of the buffer's element type, or f32 values rounded to
    nearest even into a bf16 or f16 buffer.

    ```mlir
    gnnk.store %v to %out[%i] : f32 into memref<?xf32>
    gnnk.store %v to %half[%i] : f32 into memref<?xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values, GNNK_Buffer:$buffer,
                       Index:$index);
  let assemblyFormat = [{
    $values `to` $buffer `[` $index `]` attr-dict `:` type($values) `into`
    type($buffer)
  }];
  let hasVerifier = 1;
}

def GNNK_AtomicAddOp : GNNK_Op<"atomic_add", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "adds a value to an element of a buffer, atomically";
  let description = [{
    `buffer[index] += value` as one atomic read-modify-write (CUDA's
    `atomicAdd`), for results that many threads add into: a result parameter
    marked `gnnk.accumulate`, which the runtime zeroes before the launch. The
    order of the additions is the hardware's: sums of three or more terms may
    round differently from run to run. Sums are of f32 or f64 (a bf16 or f16
    sum would round every addition).

    ```mlir
    gnnk.atomic_add %v to %out[%i] : f32 into memref<?xf32>
    ```
  }];
  let arguments = (ins AnyFloat:$value, GNNK_Buffer:$buffer, Index:$index);
  let assemblyFormat = [{
    $value `to` $buffer `[` $index `]` attr-dict `:` type($value) `into`
    type($buffer)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gnnk.yield
//===----------------------------------------------------------------------===//

def GNNK_YieldOp : GNNK_Op<"yield", [
    Pure, ReturnLike, Terminator,
    ParentOneOf<["ForElementsOp", "ForRowsOp", "ForBlocksOp", "ForEdgesOp",
                 "TeamReduceOp", "BlockReduceOp"]>]> {
  let summary = "ends a gnnk region, passing values on";
  let description = [{
    The loop-carried values of a `gnnk.for_edges` iteration, the combination
    of a reduction, or nothing at the end of a thread mapping.

    ```mlir
    gnnk.yield %s : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing yielded */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // GNN_DIALECT_GNNKERNEL_IR_GNNKERNELOPS_TD
