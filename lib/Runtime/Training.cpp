//===- Training.cpp - running a training step -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Training.h"
#include "gnn/Runtime/Jit.h"

#include <future>

using namespace gnn::runtime;

StatusOr<std::unique_ptr<TrainingExecutable>>
TrainingExecutable::create(const TrainingProgram &program, Compiler &compiler,
                           const std::string &arch) {
  GNN_RETURN_IF_ERROR(
      program.verify().withContext("training program of '" +
                                   program.forward.name + "'"));
  std::unique_ptr<TrainingExecutable> t(new TrainingExecutable());
  t->training = program;
  for (const BufferDecl &b : program.stepBuffers())
    t->stepNames[b.name] = b.role;
  // The forward and the backward compile at once (their kernels share the
  // JIT pool); both are waited for, so neither outlives this call.
  // GNNC_JIT_THREADS=1: one after the other, on this thread.
  StatusOr<int> threads = jitThreads();
  std::future<StatusOr<std::unique_ptr<Executable>>> backward = std::async(
      threads.ok() && *threads == 1 ? std::launch::deferred
                                    : std::launch::async,
      [&] {
        return Executable::create(program.backward, compiler, arch);
      });
  StatusOr<std::unique_ptr<Executable>> fwd =
      Executable::create(program.forward, compiler, arch);
  StatusOr<std::unique_ptr<Executable>> bwd = backward.get();
  if (!fwd.ok() && !bwd.ok())
    return Status::error(fwd.message() + "\n" + bwd.message());
  if (!fwd.ok())
    return fwd.error();
  if (!bwd.ok())
    return bwd.error();
  t->fwd = std::move(*fwd);
  t->bwd = std::move(*bwd);
  return t;
}

Status TrainingExecutable::checkNames(
    const std::map<std::string, void *> &bindings) const {
  for (const auto &[name, ptr] : bindings)
    if (!stepNames.count(name))
      return Status::error("binding '" + name +
                           "' is no buffer of the training step of '" +
                           training.forward.name + "'");
  return Status();
}

StatusOr<std::map<std::string, void *>> TrainingExecutable::forwardBindings(
    const std::map<std::string, void *> &bindings) const {
  GNN_RETURN_IF_ERROR(checkNames(bindings));
  std::map<std::string, void *> own;
  for (const BufferDecl &b : training.forward.buffers) {
    auto it = bindings.find(b.name);
    if (b.role != BufferRole::Temp && it != bindings.end())
      own[b.name] = it->second;
  }
  return own;
}

StatusOr<std::map<std::string, void *>> TrainingExecutable::backwardBindings(
    const std::map<std::string, void *> &bindings) const {
  GNN_RETURN_IF_ERROR(checkNames(bindings));
  std::map<std::string, void *> own;
  for (const auto &[name, step] : training.backwardBindings) {
    auto it = bindings.find(step);
    if (it == bindings.end())
      return Status::error("the backward of '" + training.forward.name +
                           "' reads or writes '" + step +
                           "', which is not bound");
    own[name] = it->second;
  }
  return own;
}

Status TrainingExecutable::forward(const Graph &graph,
                                   const std::map<std::string, void *> &bindings,
                                   cudaStream_t stream, void *workspace) {
  StatusOr<std::map<std::string, void *>> own = forwardBindings(bindings);
  if (!own.ok())
    return own.error();
  return fwd->run(graph, *own, stream, workspace);
}

Status TrainingExecutable::backward(const Graph &graph,
                                    const std::map<std::string, void *> &bindings,
                                    cudaStream_t stream, void *workspace) {
  StatusOr<std::map<std::string, void *>> own = backwardBindings(bindings);
  if (!own.ok())
    return own.error();
  return bwd->run(graph, *own, stream, workspace);
}

StatusOr<size_t>
TrainingExecutable::forwardWorkspaceBytes(const Graph &graph) const {
  return fwd->workspaceBytes(graph);
}

StatusOr<size_t>
TrainingExecutable::backwardWorkspaceBytes(const Graph &graph) const {
  return bwd->workspaceBytes(graph);
}
