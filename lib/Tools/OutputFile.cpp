//===- OutputFile.cpp - a tool's output file, written with checks ---------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tools/OutputFile.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

/// Prints the write error of `path` and returns the exit code 1.
static int cannotWrite(StringRef tool, StringRef path, std::error_code ec) {
  errs() << tool << ": error: cannot write '" << gnn::outputName(path)
         << "': " << ec.message() << "\n";
  return 1;
}

/// Flushes `os` (and closes it unless it is stdout) and returns the error
/// of any write or of the close, which it clears: a raw_fd_ostream destroyed with an
/// error aborts.
static std::error_code finish(raw_fd_ostream &os, bool isStdout) {
  if (isStdout)
    os.flush();
  else
    os.close();
  std::error_code ec = os.error();
  os.clear_error();
  return ec;
}

StringRef gnn::outputName(StringRef path) {
  return path == "-" ? "<stdout>" : path;
}

std::unique_ptr<ToolOutputFile> gnn::openOutputFile(StringRef tool,
                                                    StringRef path) {
  std::error_code ec;
  auto file = std::make_unique<ToolOutputFile>(path, ec, sys::fs::OF_None);
  if (ec) {
    cannotWrite(tool, path, ec);
    return nullptr;
  }
  return file;
}

int gnn::closeOutputFile(StringRef tool, ToolOutputFile &file, bool keep) {
  if (std::error_code ec = finish(file.os(), file.getFilename() == "-"))
    return cannotWrite(tool, file.getFilename(), ec);
  if (keep)
    file.keep();
  return 0;
}

int gnn::flushStdout(StringRef tool) {
  if (std::error_code ec = finish(outs(), /*isStdout=*/true))
    return cannotWrite(tool, "-", ec);
  return 0;
}
