//===- InitGNN.cpp - dialects gnnc tools understand -----------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/InitGNN.h"
#include "gnn/Dialect/GNN/IR/GNNDialect.h"
#include "gnn/Dialect/GNNKernel/IR/GNNKernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void gnn::registerGNNDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::gnn::GNNDialect, mlir::func::FuncDialect,
                  mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::gnnk::GNNKDialect, mlir::scf::SCFDialect,
                  mlir::memref::MemRefDialect>();
}
