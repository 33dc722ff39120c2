//===- InputGuard.h - what the tools do before and around MLIR ----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Keeps hostile `.mlir` input from crashing the tools. Two layers:
///  - precheckSource: cheap lexical checks of the text before MLIR parses it,
///    for inputs that would otherwise overflow the parser's stack (nesting
///    deeper than kMaxNesting) or crash inside upstream MLIR 22 (integer
///    `iterator_types` in linalg.generic's parser, empty reassociation groups
///    in tensor.expand_shape's verifier). Each gives a located error.
///  - runContained: runs a tool's work on a thread with a large stack under
///    llvm::CrashRecoveryContext, so a crash that gets past the checks (in
///    gnnc or upstream) becomes an internal-error message naming the input
///    and a reproducer command, with exit code 3, instead of a signal (on
///    MLIR's worker threads too, through LLVM's signal handler).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_INPUTGUARD_H
#define GNN_TOOLS_INPUTGUARD_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace gnn {

/// The deepest nesting of (), [], {} and <> accepted, far beyond real IR.
/// The MLIR parser and printer recurse once per level.
constexpr int kMaxNesting = 1000;

/// The stack of the thread runContained runs a tool on: 512 MiB (reserved,
/// not committed), enough for kMaxNesting levels in any recursive walk.
constexpr unsigned kToolStackBytes = 512u << 20;

/// The exit code of a tool that contained a crash.
constexpr int kInternalErrorExitCode = 3;

/// Checks the main buffer of `sourceMgr` as above; reports each problem as a
/// located error through `sourceMgr` (SourceMgr::PrintMessage: to the handler
/// the caller set with setDiagHandler, else to llvm::errs()) and returns
/// false if there was any. Nothing is written anywhere else. Printed, each
/// reads `name:line:col: error: ...` with its source line and a caret; on a
/// line over 400 characters (a 100,000-bracket line) the line is shown as an
/// excerpt of 40 characters on each side, and the SMDiagnostic has the
/// location in its file name (`name:line:col`, line and column -1: print()
/// would put the caret at the column) and the excerpt and caret in its
/// message; its getLoc() points at the offending character either way.
bool precheckSource(llvm::SourceMgr &sourceMgr);

/// Reads `path` ("-" is skipped: stdin can be read only once) and
/// precheckSource's it. Returns false after printing errors; a file that
/// cannot be read is left to the tool to report.
bool precheckFile(llvm::StringRef path);

/// Runs `body` on a thread with kToolStackBytes of stack, containing crashes.
/// Returns body's exit code; after a crash prints an internal error naming
/// `tool`, `input` and the command line (`argc`, `argv`) and returns
/// kInternalErrorExitCode. A crash on another thread (MLIR's workers) cannot
/// be recovered from: LLVM's signal handler prints the stack and the same
/// message, and the process exits with kInternalErrorExitCode.
int runContained(llvm::StringRef tool, llvm::StringRef input, int argc,
                 char **argv, llvm::function_ref<int()> body);

} // namespace gnn

#endif // GNN_TOOLS_INPUTGUARD_H
