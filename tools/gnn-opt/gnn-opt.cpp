//===- gnn-opt.cpp - the gnnc pass driver ---------------------------------===//
//
// Part of gnnc. Parses, verifies and transforms `gnn` IR, with the mlir-opt
// command line. Registers only the dialects gnnc understands and the generic
// passes useful on them; gnnc's own pipelines are registered here as they
// are written.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/InitGNN.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  gnn::registerGNNDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::gnn::registerCompilerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gnnc optimizer driver\n", registry));
}
