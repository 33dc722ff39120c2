//===- CUDAWriter.h - indented CUDA C++ text ----------------------*- C++ -*-===//
//
// Part of gnnc. Private to the CUDA target.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The structured emitter's output side: statements and scopes with
/// indentation managed here, so the kernel emitters only say what to write.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_TARGET_CUDA_CUDAWRITER_H
#define GNN_LIB_TARGET_CUDA_CUDAWRITER_H

#include "llvm/ADT/Twine.h"

#include <string>

namespace mlir {
namespace gnn {

class CUDAWriter {
public:
  /// Writes one line at the current indentation.
  void line(const llvm::Twine &text) {
    text_.append(2 * depth, ' ');
    text_ += text.str();
    text_ += '\n';
  }
  /// Writes `header {` and indents.
  void open(const llvm::Twine &header) {
    std::string h = header.str();
    line(h.empty() ? "{" : h + " {");
    ++depth;
  }
  /// Closes a scope opened with open().
  void close(const llvm::Twine &trailer = "") {
    --depth;
    line("}" + trailer);
  }
  void blank() { text_ += '\n'; }
  const std::string &str() const { return text_; }

private:
  std::string text_;
  int depth = 0;
};

} // namespace gnn
} // namespace mlir

#endif // GNN_LIB_TARGET_CUDA_CUDAWRITER_H
