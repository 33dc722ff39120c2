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
#include "gnn/Tools/OutputFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"

#include <cstdio>
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

/// MlirOptMain on `input`, with the output file opened, written and closed
/// here (gnn/Tools/OutputFile.h) rather than by MLIR, so that one that
/// cannot be written is `gnn-opt: error: cannot write 'PATH': REASON`.
static int optimize(int argc, char **argv, llvm::StringRef input,
                    llvm::StringRef output, mlir::DialectRegistry &registry) {
  llvm::InitLLVM init(argc, argv);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings write no output file: MLIR prints them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));
  if (input == "-" &&
      llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  // The test crashes come before anything is allocated: a contained crash
  // abandons the stack, and the sanitizer build's leak check would report
  // what it held (exit 1, not the crash's 3).
  if (crashForTesting == "main")
    crash();
  if (crashForTesting == "worker")
    std::thread(crash).join();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      gnn::readInputFile(input, gnn::maxInputBytes(), error);
  if (!buffer) {
    llvm::errs() << "gnn-opt: error: " << error << "\n";
    return 1;
  }
  // Input that would crash the parser is refused first.
  if (!gnn::precheckBuffer(*buffer))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> file =
      gnn::openOutputFile("gnn-opt", output);
  if (!file)
    return 1;
  // A pass option LLVM's parser refuses (`--gnn-autodiff=flag=maybe`) is
  // reported by that parser on stderr, and MLIR then emits its own error
  // with the parser's (empty) text: `<unknown>:0: error: ` and nothing
  // else. That empty one is dropped; the setup still fails (exit 1).
  mlir::MlirOptMainConfig setup = config;
  config.setPassPipelineSetupFn([setup](mlir::PassManager &pm) {
    mlir::ScopedDiagnosticHandler dropEmpty(
        pm.getContext(), [](mlir::Diagnostic &d) {
          return mlir::success(d.getSeverity() ==
                                   mlir::DiagnosticSeverity::Error &&
                               d.str().empty());
        });
    return setup.setupPassPipeline(pm);
  });
  bool ok = mlir::succeeded(
      mlir::MlirOptMain(file->os(), std::move(buffer), registry, config));
  // A failed write is reported even when the passes failed too.
  if (gnn::closeOutputFile("gnn-opt", *file, /*keep=*/ok))
    return 1;
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  gnn::registerGNNDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::gnn::registerCompilerPipelines();
  gnn::registerInputLimitOption();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "gnnc optimizer driver\n", registry);
  // Reading, parsing, verification and every pass run on a large stack with
  // crashes contained.
  return gnn::runContained("gnn-opt", input, argc, argv, [&] {
    return optimize(argc, argv, input, output, registry);
  });
}
