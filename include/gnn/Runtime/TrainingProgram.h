//===- TrainingProgram.h - one training step's Programs -----------*- C++ -*-===//
//
// Part of gnnc. No CUDA: the compiler produces these anywhere.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A training step of a function `@f` is two Programs, `@f_fwd` and `@f_bwd`
/// (gnn-autodiff), and how the backward's buffers are bound to what the
/// forward left on the device. The caller binds the buffers of the whole step
/// by these names:
///
///   arg<i>      f's tensor argument i (the forward's input, the same name)
///   result<k>   the forward's output k: f's results first, then the
///               residuals that are no argument or result of f
///   dresult<k>  the gradient of f's result k (k < numResults)
///   grad<i>     the gradient of f's argument i
///
/// The backward reads its residuals from `arg<i>` and `result<k>` where the
/// forward left them: nothing is copied or uploaded between the two
/// (Training.h runs them).
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_TRAININGPROGRAM_H
#define GNN_RUNTIME_TRAININGPROGRAM_H

#include "gnn/Runtime/Program.h"

#include <map>
#include <string>
#include <vector>

namespace gnn {
namespace runtime {

struct TrainingProgram {
  Program forward, backward;
  /// f's results: the forward's outputs `result0` .. `result<numResults-1>`.
  unsigned numResults = 0;
  /// Each input and output buffer of `backward` -> the step's buffer it is
  /// (`arg<i>`, `result<k>` or `dresult<k>` for inputs, `grad<i>` for
  /// outputs).
  std::map<std::string, std::string> backwardBindings;

  /// Checks both Programs and the bindings: every backward input and output
  /// bound, to a buffer of the step of the same element type; inputs read
  /// forward buffers or output gradients, outputs write gradients of forward
  /// inputs, each gradient written once.
  Status verify() const;

  /// The buffers a caller binds for a whole step, in a fixed order: the
  /// forward's inputs (`arg<i>`) and outputs (`result<k>`), the output
  /// gradients (`dresult<k>`, sized like `result<k>`) and the gradients
  /// (`grad<i>`, sized like `arg<i>`). Inputs are what the caller fills,
  /// outputs what the step writes; each says what it holds in `use` (the
  /// forward's outputs past f's results as BufferUse::Residual).
  std::vector<BufferDecl> stepBuffers() const;
};

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_TRAININGPROGRAM_H
