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
///  - runContained: runs a tool's work on a thread with a large stack and
///    handles the crash signals of every thread, so that a crash that gets
///    past the checks (in gnnc or upstream, on the tool's thread or on
///    MLIR's worker threads) becomes a stack dump and an internal-error
///    message naming the input and a reproducer command, with exit code 3,
///    promptly: never a signal, never a hang.
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

/// Runs `body` on a thread with kToolStackBytes of stack and returns its exit
/// code. A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT or SIGTRAP) on any
/// thread of the process, during or after `body`, is reported by the first
/// thread that crashes: the stack dump of LLVM's signal handlers (given up
/// after 10 s: it runs llvm-symbolizer, and it is not async-signal-safe),
/// then an internal error naming `tool`, `input` and the command line
/// (`argc`, `argv`); the process then ends with kInternalErrorExitCode
/// without returning (no exit-time destructors, which could wait on a lock
/// the crash left held). Threads that crash meanwhile wait for that end.
/// Call it once per process, after llvm::InitLLVM (which installs the stack
/// dump; the crash signals are taken over from its handler).
int runContained(llvm::StringRef tool, llvm::StringRef input, int argc,
                 char **argv, llvm::function_ref<int()> body);

/// Crashes the process on purpose, for the tests of runContained (no input
/// is known to crash the tools): `how` is "main" (a null write on the
/// calling thread), "worker" (on another thread) or "workers" (on two
/// threads at once, as when MLIR's worker threads run a broken pass on
/// several functions). Does nothing for "" and returns false, doing
/// nothing, for any other value. Reached only through the tools' hidden
/// `--gnnc-crash-for-testing` option.
bool crashForTesting(llvm::StringRef how);

} // namespace gnn

#endif // GNN_TOOLS_INPUTGUARD_H
