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

/// `<prefix><n>` -> n; -1 when `name` is not of that form.
static long indexAfter(const std::string &name, const std::string &prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix))
    return -1;
  long n = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || n > (1L << 30))
      return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

std::vector<BufferDecl> TrainingProgram::stepBuffers() const {
  std::vector<BufferDecl> step;
  for (BufferRole role : {BufferRole::Input, BufferRole::Output})
    for (const BufferDecl &b : forward.buffers)
      if (b.role == role)
        step.push_back(b);
  for (const BufferDecl &b : forward.buffers) {
    long k = indexAfter(b.name, "result");
    if (b.role == BufferRole::Output && k >= 0 && k < long(numResults))
      step.push_back({"d" + b.name, BufferRole::Input, b.dtype, b.size});
  }
  std::set<std::string> grads;
  for (const auto &[bwd, name] : backwardBindings)
    if (indexAfter(name, "grad") >= 0)
      grads.insert(name);
  for (const BufferDecl &b : forward.buffers)
    if (b.role == BufferRole::Input && grads.count("grad" + b.name.substr(3)))
      step.push_back({"grad" + b.name.substr(3), BufferRole::Output, b.dtype,
                      b.size});
  return step;
}

Status TrainingProgram::verify() const {
  GNN_RETURN_IF_ERROR(forward.verify().withContext("the forward"));
  GNN_RETURN_IF_ERROR(backward.verify().withContext("the backward"));
  auto fwd = boundaryOf(forward), bwd = boundaryOf(backward);
  unsigned outputs = 0;
  for (const auto &[name, decl] : fwd) {
    bool input = decl->role == BufferRole::Input;
    if (indexAfter(name, input ? "arg" : "result") < 0)
      return Status::error("the forward's " +
                           std::string(input ? "input" : "output") + " '" +
                           name + "' is not named " +
                           (input ? "arg<i>" : "result<k>"));
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
  std::set<std::string> written;
  for (const auto &[name, to] : backwardBindings) {
    auto it = bwd.find(name);
    std::string what = "the backward's buffer '" + name + "' bound to '" + to +
                       "'";
    if (it == bwd.end())
      return Status::error(what + ": the backward has no such input or output");
    bool input = it->second->role == BufferRole::Input;
    // The step buffer's declaration: forward buffers as they are, an output
    // gradient like its result, a gradient like its argument.
    const BufferDecl *like = nullptr;
    if (long k = indexAfter(to, "dresult"); k >= 0) {
      if (!input || k >= long(numResults))
        return Status::error(what + ": " +
                             (input ? "the function has " +
                                          std::to_string(numResults) +
                                          " results"
                                    : std::string("an output gradient is "
                                                  "read, not written")));
      like = fwd.count("result" + std::to_string(k))
                 ? fwd["result" + std::to_string(k)]
                 : nullptr;
    } else if (long i = indexAfter(to, "grad"); i >= 0) {
      if (input)
        return Status::error(what + ": a gradient is written, not read");
      if (!written.insert(to).second)
        return Status::error(what + ": another output writes it too");
      auto arg = fwd.find("arg" + std::to_string(i));
      if (arg == fwd.end() || arg->second->role != BufferRole::Input)
        return Status::error(what + ": the forward has no input 'arg" +
                             std::to_string(i) + "'");
      like = arg->second;
    } else {
      if (!input)
        return Status::error(what + ": a backward output must write a "
                                    "gradient 'grad<i>'");
      auto f = fwd.find(to);
      if (f == fwd.end())
        return Status::error(what +
                             ": the forward has no input or output of "
                             "that name");
      like = f->second;
    }
    if (!like)
      return Status::error(what + ": the forward has no output 'result" +
                           to.substr(8) + "'");
    if (like->dtype != it->second->dtype)
      return Status::error(what + ": element types differ");
  }
  return Status();
}
