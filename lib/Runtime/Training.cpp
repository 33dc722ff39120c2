//===- Training.cpp - running a training step -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Training.h"
#include "gnn/Runtime/Jit.h"


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
  // The forward's and the backward's kernels compile in one batch on the
  // JIT pool (the units they share once), then each is loaded.
  StatusOr<std::vector<std::vector<CompileResult>>> compiled =
      compilePrograms({&program.forward, &program.backward}, compiler, arch);
  if (!compiled.ok())
    return compiled.error();
  StatusOr<std::unique_ptr<Executable>> fwd =
      Executable::load(program.forward, (*compiled)[0]);
  if (!fwd.ok())
    return fwd.error();
  StatusOr<std::unique_ptr<Executable>> bwd =
      Executable::load(program.backward, (*compiled)[1]);
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
                                   cudaStream_t stream, void *workspace,
                                   const RunGuard *guard) {
  StatusOr<std::map<std::string, void *>> own = forwardBindings(bindings);
  if (!own.ok())
    return own.error();
  return fwd->run(graph, *own, stream, workspace, guard);
}

Status TrainingExecutable::backward(const Graph &graph,
                                    const std::map<std::string, void *> &bindings,
                                    cudaStream_t stream, void *workspace,
                                    const RunGuard *guard) {
  StatusOr<std::map<std::string, void *>> own = backwardBindings(bindings);
  if (!own.ok())
    return own.error();
  return bwd->run(graph, *own, stream, workspace, guard);
}

StatusOr<size_t>
TrainingExecutable::forwardWorkspaceBytes(const Graph &graph) const {
  return fwd->workspaceBytes(graph);
}

StatusOr<size_t>
TrainingExecutable::backwardWorkspaceBytes(const Graph &graph) const {
  return bwd->workspaceBytes(graph);
}
