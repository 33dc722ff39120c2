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
#include "gnn/Tools/InputGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

#include <thread>

/// Makes the tool crash inside the contained work, for the test of the
/// containment itself (there is no input known to crash it).
static llvm::cl::opt<std::string> crashForTesting(
    "gnnc-crash-for-testing", llvm::cl::Hidden,
    llvm::cl::desc("crash after the input is read, on the tool's thread "
                   "(=main) or on another one (=worker), to test the "
                   "internal-error path"));

/// A null write the compiler cannot drop.
static void crash() { *static_cast<volatile int *>(nullptr) = 0; }

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  gnn::registerGNNDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::gnn::registerCompilerPipelines();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "gnnc optimizer driver\n", registry);
  // Parsing, verification and every pass run on a large stack with crashes
  // contained; input that would crash the parser is refused first.
  return gnn::runContained("gnn-opt", input, argc, argv, [&] {
    if (!gnn::precheckFile(input))
      return 1;
    if (crashForTesting == "main")
      crash();
    if (crashForTesting == "worker")
      std::thread(crash).join();
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));
  });
}
