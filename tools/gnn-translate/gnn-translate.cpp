//===- gnn-translate.cpp - gnnc translations ------------------------------===//
//
// Part of gnnc. `--gnn-to-cuda` prints the CUDA C++ of a module's kernels;
// `--gnn-to-program` prints each function's runtime Program (both lower the
// module through gnn-cuda-pipeline first when needed); `--gnnk-to-cuda`
// prints a module of gnnk kernels as it is.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/Target/CUDA/CUDAPrinter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::gnn::registerGNNTranslations();
  mlir::gnn::registerGNNKToCUDATranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "gnnc translations\n"));
}
