//===- InputGuard.h - what the tools do before and around MLIR ----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Keeps hostile `.mlir` input from crashing or stalling the tools. Three
/// layers:
///  - readInputFile: reads the input whole, at most kDefaultMaxInputBytes
///    (or `--max-input-bytes`), so that an endless or enormous input is
///    refused with a message instead of being read until memory runs out.
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
#include "llvm/Support/Alignment.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace llvm {
class MemoryBuffer;
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

/// precheckSource on `buffer` alone (not taken: the caller keeps it).
bool precheckBuffer(const llvm::MemoryBuffer &buffer);

/// The most bytes of `.mlir` text the tools read by default: 256 MiB, about
/// eight times the largest IR of the tests (a 100,000-op function of 34 MB,
/// which takes about 1 GB to compile). A tool's input beyond it is refused
/// before it is parsed (`--max-input-bytes=N` raises it): an endless input
/// (`/dev/zero`, `/dev/urandom`, a pipe that never closes) is read up to the
/// limit, not until memory runs out.
constexpr uint64_t kDefaultMaxInputBytes = uint64_t(256) << 20;

/// Registers the tools' `--max-input-bytes=N` option (default
/// kDefaultMaxInputBytes); call it before the command line is parsed.
void registerInputLimitOption();

/// The limit `--max-input-bytes` sets, else kDefaultMaxInputBytes.
uint64_t maxInputBytes();

/// Reads the whole input `path` ("-": standard input) into a buffer named
/// `path` (null-terminated; aligned to `alignment` when given), reading at
/// most `limit` bytes: a regular file larger than that is refused before it
/// is read, any other file (a device, a FIFO, standard input) once it has
/// given more. Returns null with `error` set:
///   cannot open input file 'PATH': REASON
///   'PATH' holds N bytes, more than the limit of L bytes of input
///   (--max-input-bytes=N raises it)
///   'PATH' (a character device) gave more than the limit of L bytes of
///   input; reading stopped there (--max-input-bytes=N raises it)
std::unique_ptr<llvm::MemoryBuffer>
readInputFile(llvm::StringRef path, uint64_t limit, std::string &error,
              std::optional<llvm::Align> alignment = std::nullopt);

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
