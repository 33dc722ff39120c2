//===- IRFuzzer.cpp - the parser, verifier and CUDA pipeline ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// What `gnn-translate --gnn-to-cuda` and `--gnn-to-program` do with a `.mlir`
// file, without the crash containment (a crash must reach the fuzzer): the
// lexical pre-checks, parsing and verification, the gnn-cuda-pipeline, the
// CUDA printer and the Program builder. Nothing is compiled or run.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/InitGNN.h"
#include "gnn/Target/CUDA/CUDAPrinter.h"
#include "gnn/Target/CUDA/TranslateToCUDA.h"
#include "gnn/Tools/InputGuard.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <cstdint>
#include <cstdlib>
#include <optional>

using namespace mlir;

static void compile(llvm::StringRef text, const DialectRegistry &registry) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.setDiagHandler([](const llvm::SMDiagnostic &, void *) {});
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
  if (!::gnn::precheckSource(sourceMgr))
    return;
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return;
  mlir::gnn::CompileOptions options;
  if (failed(mlir::gnn::lowerForCUDA(*module, options)))
    return;
  std::string cuda;
  llvm::raw_string_ostream os(cuda);
  (void)mlir::gnn::printKernelsAsCUDA(*module, os, options.indexBits);
  for (auto f : module->getOps<func::FuncOp>())
    if (!f.isExternal())
      (void)mlir::gnn::buildProgram(f, options.indexBits);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    ::gnn::registerGNNDialects(*r);
    return r;
  }();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // The tools' stack: the pre-checks bound the nesting for it.
  llvm::thread worker(std::optional<unsigned>(::gnn::kToolStackBytes),
                      [&] { compile(text, *registry); });
  worker.join();
  return 0;
}
