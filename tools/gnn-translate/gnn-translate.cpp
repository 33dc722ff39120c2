//===- gnn-translate.cpp - gnnc translations ------------------------------===//
//
// Part of gnnc. `--gnn-to-cuda` prints the CUDA C++ of each function's kernel
// groups; `--gnn-to-program` prints its runtime Program. Functions with graph
// ops outside kernel groups go through gnn-codegen-pipeline first.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/CUDA/TranslateToCUDA.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::gnn::registerGNNTranslations();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "gnnc translations\n"));
}
