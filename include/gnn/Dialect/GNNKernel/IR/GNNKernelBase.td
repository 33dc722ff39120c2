//===- GNNKernelBase.td - gnnk dialect definition ---------*- tablegen -*-===//
//
// Part of gnnc. The kernel-level IR between scheduled kernel groups and CUDA
// C++ text.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_IR_GNNKERNELBASE_TD
#define GNN_DIALECT_GNNKERNEL_IR_GNNKERNELBASE_TD

include "mlir/IR/OpBase.td"

def GNNK_Dialect : Dialect {
  let name = "gnnk";
  let cppNamespace = "::mlir::gnnk";
  let useDefaultAttributePrinterParser = 1;
  // A launch's graph operand is a `!gnn.graph` (parseLaunchGraphType makes
  // one when the text names none): the gnn dialect is loaded with gnnk, or a
  // file whose only gnn type went missing crashed the parser
  // (test/Dialect/GNNKernel/launch-without-gnn-types.mlir).
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
  let extraClassDeclaration = [{
    /// Registers the attributes (GNNKernelAttrs.cpp, where their storage is).
    void registerAttributes();
  }];
  let summary = "GPU kernels of graph neural network layers, before CUDA text";
  let description = [{
    The `gnnk` dialect is what a scheduled `gnn.kernel_group` is lowered to,
    and what the CUDA printer turns into text, one print function per op.

    A `gnnk.kernel` is an isolated function whose parameters are flat buffers
    (`memref<?xf32>`, graph index arrays `memref<?xi32>` / `memref<?xi64>`) and
    graph sizes (`i64`); each parameter says what the runtime binds to it
    (`gnnk.operand`, `gnnk.result`, `gnnk.graph`, `gnnk.size`). Its launch
    shape is data: `block` threads per block and `grid`, an affine map of the
    graph's sizes (`s0` = nodes, `s1` = edges, `s2` = graphs). The host side
    calls it with `gnnk.launch`, which maps tensors to the operand and result
    parameters and gives the row count of every result.

    Inside a kernel, iteration ops map threads onto the work:
    `gnnk.for_elements` (a thread per element), `gnnk.for_rows` (a team of
    lanes per destination row), `gnnk.for_blocks` (a block of teams per
    chunk); `gnnk.for_edges` walks the edges of a row (forward through the
    CSR, or reversed through the CSC) with loop-carried values. Team and block
    reductions carry their combine rule as a region, so a sum, a maximum and
    the online softmax `(m, s, acc)` are all the same op. Memory is read and
    written with `gnnk.load` / `gnnk.store` (several consecutive elements at
    once when the op has several values); scalar work is `arith`, `math` and
    `scf`.
  }];
}

class GNNK_Op<string mnemonic, list<Trait> traits = []>
    : Op<GNNK_Dialect, mnemonic, traits>;

#endif // GNN_DIALECT_GNNKERNEL_IR_GNNKERNELBASE_TD
