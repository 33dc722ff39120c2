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
#include "gnn/Tools/InputGuard.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/FileSystem.h"

/// The input file named on the command line: the first argument that is
/// not an option (nor the value of `-o`) and names a file, else stdin. An
/// option's value given as a separate argument (`--gnn-stats nodes:10,edges:40`) is
/// skipped because it names no file.
static llvm::StringRef inputOf(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o" || arg == "--o") {
      ++i;
      continue;
    }
    if (arg == "-")
      return arg;
    if (!arg.starts_with("-") && llvm::sys::fs::exists(arg))
      return arg;
  }
  return "-";
}

int main(int argc, char **argv) {
  mlir::gnn::registerGNNTranslations();
  mlir::gnn::registerGNNKToCUDATranslation();
  llvm::StringRef input = inputOf(argc, argv);
  // Parsing, verification, lowering and printing run on a large stack with
  // crashes contained; input that would crash the parser is refused first.
  return gnn::runContained("gnn-translate", input, argc, argv, [&] {
    if (!gnn::precheckFile(input))
      return 1;
    return mlir::failed(
               mlir::mlirTranslateMain(argc, argv, "gnnc translations\n"))
               ? 1
               : 0;
  });
}
