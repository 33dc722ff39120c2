//===- OutputFile.h - a tool's output file, written with checks -*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The tools' `-o` file (or stdout) opened, written and closed with checks.
/// MLIR's own drivers print `cannot open output file ...` for a path that
/// cannot be opened, and a failed write or close ends the tool in the
/// stream's destructor (`LLVM ERROR: IO failure on output stream`, no path).
/// Here each of the three is `TOOL: error: cannot write 'PATH': REASON`
/// (`'<stdout>'` for stdout), the stream's error is cleared once reported so
/// nothing aborts later, and a file that was not written whole is removed.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_OUTPUTFILE_H
#define GNN_TOOLS_OUTPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>

namespace gnn {

/// How `path` is named in messages: `<stdout>` for "-", else itself.
llvm::StringRef outputName(llvm::StringRef path);

/// Opens `path` for writing ("-" is stdout). Prints
/// "TOOL: error: cannot write 'PATH': REASON" and returns null when it cannot
/// be opened (a missing directory, a path under a regular file, no
/// permission). The file is removed when the result is destroyed unless
/// closeOutputFile keeps it.
std::unique_ptr<llvm::ToolOutputFile> openOutputFile(llvm::StringRef tool,
                                                     llvm::StringRef path);

/// Flushes and closes `file` (stdout is only flushed) and checks that every
/// write and the close succeeded. Returns 0, and keeps the file when `keep`;
/// else prints "TOOL: error: cannot write 'PATH': REASON" (the stream's error),
/// clears the stream's error and returns 1, and the file is removed.
int closeOutputFile(llvm::StringRef tool, llvm::ToolOutputFile &file,
                    bool keep);

/// Flushes llvm::outs() and checks that what was written to it reached
/// stdout: 0, else prints "TOOL: error: cannot write '<stdout>': REASON",
/// clears the error (llvm::outs() would abort at exit) and returns 1.
int flushStdout(llvm::StringRef tool);

} // namespace gnn

#endif // GNN_TOOLS_OUTPUTFILE_H
