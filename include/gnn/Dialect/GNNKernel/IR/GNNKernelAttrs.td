//===- GNNKernelAttrs.td - gnnk dialect attributes --------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT_GNNKERNEL_IR_GNNKERNELATTRS_TD
#define GNN_DIALECT_GNNKERNEL_IR_GNNKERNELATTRS_TD

include "gnn/Dialect/GNNKernel/IR/GNNKernelBase.td"
include "mlir/IR/AttrTypeBase.td"

class GNNK_Attr<string name, string attrMnemonic>
    : AttrDef<GNNK_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def GNNK_FormulaAttr : GNNK_Attr<"Formula", "formula"> {
  let summary = "an integer formula of the graph's sizes";
  let description = [{
    A formula the runtime evaluates once per launch (`Formula.h` in the
    runtime): a tree whose leaves are integers and the graph's sizes
    (`nodes`, `edges`, `graphs`, `src_nodes`, `dst_nodes`,
    `max_in_degree`, `max_out_degree`, `largest_graph`) and whose nodes are
    `add`, `sub`, `mul`, `div` and `mod` (truncating, like C), `ceil_div`,
    `min` and `max` of two formulas, written prefix:

    ```mlir
    // max(1, edges * 64 / max_in_degree)
    #gnnk.formula<max(1, div(mul(edges, 64), max_in_degree))>
    ```

    The CUDA backend converts it to the runtime's formula as it is, operator
    by operator (nothing is printed and parsed back).
  }];
  let parameters = (ins "::mlir::gnnk::FormulaKind":$kind, "int64_t":$value,
                        "::mlir::StringAttr":$name,
                        ArrayRefParameter<"::mlir::gnnk::FormulaAttr",
                                          "operands">:$operands);
  let builders = [
    AttrBuilder<(ins "int64_t":$value), [{
      return $_get($_ctxt, ::mlir::gnnk::FormulaKind::Constant, value,
                   ::mlir::StringAttr(),
                   ::llvm::ArrayRef<::mlir::gnnk::FormulaAttr>());
    }]>,
    AttrBuilder<(ins "::llvm::StringRef":$name), [{
      return $_get($_ctxt, ::mlir::gnnk::FormulaKind::Name, 0,
                   ::mlir::StringAttr::get($_ctxt, name),
                   ::llvm::ArrayRef<::mlir::gnnk::FormulaAttr>());
    }]>,
    AttrBuilderWithInferredContext<(ins "::mlir::gnnk::FormulaKind":$kind,
                                        "::mlir::gnnk::FormulaAttr":$lhs,
                                        "::mlir::gnnk::FormulaAttr":$rhs), [{
      ::mlir::gnnk::FormulaAttr operands[] = {lhs, rhs};
      return $_get(lhs.getContext(), kind, 0, ::mlir::StringAttr(),
                   ::llvm::ArrayRef<::mlir::gnnk::FormulaAttr>(operands));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
}

#endif // GNN_DIALECT_GNNKERNEL_IR_GNNKERNELATTRS_TD
