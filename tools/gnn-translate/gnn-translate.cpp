//===- gnn-translate.cpp - gnnc translations ------------------------------===//
//
// Part of gnnc. `--gnn-to-cuda` prints the CUDA C++ of a module's kernels;
// `--gnn-to-program` prints each function's runtime Program (both lower the
// module through gnn-cuda-pipeline first when needed); `--gnnk-to-cuda`
// prints a module of gnnk kernels as it is.
//
// The driver is gnnc's own rather than mlirTranslateMain so that the output
// file is opened, written and closed with checks (gnn/Tools/OutputFile.h);
// it takes the same options.
//
//===----------------------------------------------------------------------===//

#include "gnn/Compiler/Driver.h"
#include "gnn/Target/CUDA/CUDAPrinter.h"
#include "gnn/Tools/InputGuard.h"
#include "gnn/Tools/OutputFile.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

namespace cl = llvm::cl;
using Level = mlir::SourceMgrDiagnosticVerifierHandler::Level;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input file>"),
                                          cl::init("-"));
static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                           cl::value_desc("filename"),
                                           cl::init("-"));
static cl::opt<bool> allowUnregisteredDialects(
    "allow-unregistered-dialect",
    cl::desc("Allow operation with no registered dialects (testing only)"));
static cl::opt<std::string> inputSplitMarker(
    "split-input-file", cl::ValueOptional,
    cl::callback([](const std::string &marker) {
      if (marker.empty())
        inputSplitMarker.setValue(mlir::kDefaultSplitMarker);
    }),
    cl::desc("Split the input at the given marker (default `// -----`) and "
             "translate each chunk on its own"),
    cl::init(""));
static cl::opt<std::string> outputSplitMarker(
    "output-split-marker",
    cl::desc("Marker printed between the outputs of split chunks"),
    cl::init(""));
static cl::opt<Level> verifyDiagnostics(
    "verify-diagnostics", cl::ValueOptional,
    cl::desc("Check the diagnostics against the expected-* comments"),
    cl::values(clEnumValN(Level::All, "all", "every diagnostic"),
               clEnumValN(Level::All, "", "every diagnostic"),
               clEnumValN(Level::OnlyExpected, "only-expected",
                          "only the expected diagnostics")));
static cl::opt<bool> errorDiagnosticsOnly(
    "error-diagnostics-only",
    cl::desc("Print only error diagnostics (testing only)"));

/// One chunk through `translations` in turn, each reading what the one
/// before printed; the last prints into `os`.
static mlir::LogicalResult
translateChunk(llvm::ArrayRef<const mlir::Translation *> translations,
               std::unique_ptr<llvm::MemoryBuffer> buffer,
               llvm::raw_ostream &os, mlir::TimingScope &timing) {
  std::string text;
  for (auto [i, translation] : llvm::enumerate(translations)) {
    mlir::TimingScope scope = timing.nest(translation->getDescription());
    // Chunks of a split input are not null-terminated; the parsers expect it.
    if (!buffer->getBuffer().ends_with('\0'))
      buffer = llvm::MemoryBuffer::getMemBufferCopy(
          buffer->getBuffer(), buffer->getBufferIdentifier());
    mlir::MLIRContext context;
    context.allowUnregisteredDialects(allowUnregisteredDialects);
    bool verifying = verifyDiagnostics.getNumOccurrences() > 0;
    // Expected diagnostics carry no dump of the op; otherwise the context
    // keeps --mlir-print-op-on-diagnostic (on unless given =false), which
    // was overridden here.
    if (verifying)
      context.printOpOnDiagnostic(false);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    std::string next;
    llvm::raw_string_ostream nextOs(next);
    bool last = i + 1 == translations.size();
    llvm::raw_ostream &out = last ? os : nextOs;
    if (verifying) {
      // The translation is expected to fail; the diagnostics are the result.
      mlir::SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context,
                                                       verifyDiagnostics);
      (void)(*translation)(sourceMgr, os, &context);
      return handler.verify();
    }
    mlir::SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    std::optional<mlir::ScopedDiagnosticHandler> errorsOnly;
    if (errorDiagnosticsOnly)
      errorsOnly.emplace(&context, [](mlir::Diagnostic &diag) {
        // Handled (dropped) unless it is an error.
        return mlir::success(diag.getSeverity() !=
                             mlir::DiagnosticSeverity::Error);
      });
    if (mlir::failed((*translation)(sourceMgr, out, &context)))
      return mlir::failure();
    if (last)
      break;
    text = std::move(next);
    buffer = llvm::MemoryBuffer::getMemBuffer(text);
  }
  return mlir::success();
}

/// Translates each chunk of `input` into `os`.
static mlir::LogicalResult
translate(llvm::ArrayRef<const mlir::Translation *> translations,
          std::unique_ptr<llvm::MemoryBuffer> input, llvm::raw_ostream &os) {
  mlir::DefaultTimingManager timingManager;
  mlir::applyDefaultTimingManagerCLOptions(timingManager);
  mlir::TimingScope timing = timingManager.getRootScope();
  auto chunk = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                   llvm::raw_ostream &os) {
    return translateChunk(translations, std::move(buffer), os, timing);
  };
  return mlir::splitAndProcessBuffer(std::move(input), chunk, os,
                                     inputSplitMarker, outputSplitMarker);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::gnn::registerGNNTranslations();
  mlir::gnn::registerGNNKToCUDATranslation();
  // After the translations are registered: the parser lists them.
  cl::list<const mlir::Translation *, bool, mlir::TranslationParser>
      translations(cl::desc("Translations to perform"), cl::Required);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerTranslationCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  gnn::registerInputLimitOption();
  cl::ParseCommandLineOptions(argc, argv, "gnnc translations\n");
  // Parsing, verification, lowering and printing run on a large stack with
  // crashes contained; input that would crash the parser is refused first.
  return gnn::runContained("gnn-translate", inputFilename, argc, argv, [&] {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> input =
        gnn::readInputFile(inputFilename, gnn::maxInputBytes(), error,
                           translations[0]->getInputAlignment());
    if (!input) {
      llvm::errs() << "gnn-translate: error: " << error << "\n";
      return 1;
    }
    if (!gnn::precheckBuffer(*input))
      return 1;
    std::unique_ptr<llvm::ToolOutputFile> output =
        gnn::openOutputFile("gnn-translate", outputFilename);
    if (!output)
      return 1;
    bool ok = mlir::succeeded(
        translate(translations, std::move(input), output->os()));
    // A failed write is reported even when the translation failed too.
    if (gnn::closeOutputFile("gnn-translate", *output, /*keep=*/ok))
      return 1;
    return ok ? 0 : 1;
  });
}
