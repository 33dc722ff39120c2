//===- InitGNN.cpp - dialects gnnc tools understand -----------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/InitGNN.h"
#include "gnn/Dialect/GNN/IR/GNNDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void gnn::registerGNNDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::gnn::GNNDialect, mlir::func::FuncDialect,
                  mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect>();
}
