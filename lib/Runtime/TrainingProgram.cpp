//===- TrainingProgram.cpp - one training step's Programs ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/TrainingProgram.h"

#include <set>

using namespace gnn::runtime;

/// The non-temporary buffers of `p` by name.
static std::map<std::string, const BufferDecl *> boundaryOf(const Program &p) {
  std::map<std::string, const BufferDecl *> byName;
  for (const BufferDecl &b : p.buffers)
    if (b.role != BufferRole::Temp)
      byName[b.name] = &b;
  return byName;
}

std::vector<BufferDecl> TrainingProgram::stepBuffers() const {
  std::vector<BufferDecl> step;
  for (BufferRole role : {BufferRole::Input, BufferRole::Output})
    for (BufferDecl b : forward.buffers)
      if (b.role == role) {
        if (b.use == BufferUse::Result && b.index >= int64_t(numResults))
          b.use = BufferUse::Residual;
        step.push_back(b);
      }
  for (const BufferDecl &b : forward.buffers)
    if (b.use == BufferUse::Result && b.index < int64_t(numResults))
      step.push_back({"dresult" + std::to_string(b.index), BufferRole::Input,
                      b.dtype, b.size, BufferUse::OutputGradient, b.index});
  std::set<std::string> bound;
  for (const auto &[bwd, name] : backwardBindings)
    bound.insert(name);
  for (const BufferDecl &b : forward.buffers) {
    std::string grad = "grad" + std::to_string(b.index);
    if (b.use == BufferUse::Argument && bound.count(grad))
      step.push_back({grad, BufferRole::Output, b.dtype, b.size,
                      BufferUse::Gradient, b.index});
  }
  return step;
}

Status TrainingProgram::verify() const {
  GNN_RETURN_IF_ERROR(forward.verify().withContext("the forward"));
  GNN_RETURN_IF_ERROR(backward.verify().withContext("the backward"));
  auto fwd = boundaryOf(forward), bwd = boundaryOf(backward);
  unsigned outputs = 0;
  for (const auto &[name, decl] : fwd) {
    bool input = decl->role == BufferRole::Input;
    // The step binds the forward's buffers by these names.
    std::string expected =
        std::string(input ? "arg" : "result") + std::to_string(decl->index);
    if (decl->use != (input ? BufferUse::Argument : BufferUse::Result) ||
        name != expected)
      return Status::error(
          "the forward's " + std::string(input ? "input" : "output") + " '" +
          name + "' is not " +
          (input ? "argument <i> named arg<i>" : "result <k> named result<k>"));
    outputs += !input;
  }
  if (outputs < numResults)
    return Status::error("the forward has " + std::to_string(outputs) +
                         " outputs, fewer than the function's " +
                         std::to_string(numResults) + " results");
  for (const auto &[name, decl] : bwd)
    if (!backwardBindings.count(name))
      return Status::error("the backward's " +
                           std::string(decl->role == BufferRole::Input
                                           ? "input"
                                           : "output") +
                           " '" + name + "' is not bound");
  // Every buffer a binding may name: the forward's, an output gradient per
  // result of f, a gradient per argument.
  std::map<std::string, BufferDecl> step;
  for (BufferDecl b : forward.buffers) {
    if (b.use == BufferUse::Result && b.index >= int64_t(numResults))
      b.use = BufferUse::Residual;
    std::string dy = "dresult" + std::to_string(b.index),
                grad = "grad" + std::to_string(b.index);
    if (b.use == BufferUse::Result)
      step[dy] = {dy,     BufferRole::Input,         b.dtype,
                  b.size, BufferUse::OutputGradient, b.index};
    if (b.use == BufferUse::Argument)
      step[grad] = {grad,   BufferRole::Output,  b.dtype,
                    b.size, BufferUse::Gradient, b.index};
    if (b.use != BufferUse::None)
      step[b.name] = b;
  }
  std::set<std::string> written;
  for (const auto &[name, to] : backwardBindings) {
    auto it = bwd.find(name);
    std::string what = "the backward's buffer '" + name + "' bound to '" + to +
                       "'";
    if (it == bwd.end())
      return Status::error(what + ": the backward has no such input or output");
    bool input = it->second->role == BufferRole::Input;
    auto like = step.find(to);
    if (like == step.end())
      return Status::error(
          what +
          ": the step has no buffer of that name (arg<i> and grad<i> "
          "for the forward's inputs, result<k> for its outputs, "
          "dresult<k> for the function's " +
          std::to_string(numResults) + " results)");
    BufferUse use = like->second.use;
    if (input && use == BufferUse::Gradient)
      return Status::error(what + ": a gradient is written, not read");
    if (!input && use != BufferUse::Gradient)
      return Status::error(what + ": a backward output must write a "
                                  "gradient 'grad<i>'");
    if (!input && !written.insert(to).second)
      return Status::error(what + ": another output writes it too");
    if (like->second.dtype != it->second->dtype)
      return Status::error(what + ": element types differ");
  }
  return Status();
}
