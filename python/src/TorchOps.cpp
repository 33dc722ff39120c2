//===- TorchOps.cpp - gnnc's PyTorch operators (LibTorch stable ABI) ------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `torch.ops.gnnc.call` and `torch.ops.gnnc.call_backward`: a compiled
/// function's forward (plain, or a training step's) and backward as PyTorch
/// operators with CPU and CUDA kernels in C++, registered through PyTorch's
/// stable ABI
/// (`STABLE_TORCH_LIBRARY`): the module is built against PyTorch's headers
/// and loads into any PyTorch from the targeted version on (no link against
/// one libtorch version's C++ API).
///
/// A call names its function by a *target* (registered once per function,
/// register_target: a stable id the Python side derives from the function's
/// IR, so that a graph torch.compile caches on disk names the same function
/// in every process) and its graph by a *handle*, an integer (`SymInt`: under
/// torch.compile it is the value of the gnnc::graph op, which looks the
/// graph up on every call, and CUDA-graph trees record one graph per
/// value) naming a graph the Python graph cache built and registered
/// (register_graph); handles are never reused, so a stale one fails
/// clearly. The fake kernels (shapes only) are Python's (gnnc/_core.py):
/// the stable ABI hands a `SymInt` to C++ only as a concrete integer. The
/// compiled variant for the graph's statistics is chosen by the Python JIT
/// policy (gnnc/_jit.py) the first time a (target, schedule key) pair is
/// seen; after that a call touches no Python.
///
/// Errors are `std::runtime_error`s whose message starts with
/// `[TypeError]`, `[ValueError]` or `[CompileError]`: gnnc/_core.py raises
/// the matching Python exception (PyTorch turns them into RuntimeError).
///
//===----------------------------------------------------------------------===//

#include "Native.h"

#include "gnn/Runtime/Floyd.h"
#ifdef GNNC_HAVE_CUDA_RUNTIME
#include "gnn/Runtime/Sampling.h"
#endif

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <dlfcn.h>

#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace gnnc_py {
namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

[[noreturn]] void fail(const char *type, const std::string &message) {
  throw std::runtime_error(std::string("[") + type + "] gnnc: " + message);
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> shapeOf(const Tensor &t) {
  auto sizes = t.sizes();
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

const char *dtypeName(ScalarType t) {
  return t == ScalarType::Float      ? "torch.float32"
         : t == ScalarType::Double   ? "torch.float64"
         : t == ScalarType::BFloat16 ? "torch.bfloat16"
         : t == ScalarType::Half     ? "torch.float16"
         : t == ScalarType::Long     ? "torch.int64"
         : t == ScalarType::Int      ? "torch.int32"
                                     : "another dtype";
}

/// The signature's dtype name of a float ScalarType, and back.
const char *signatureDtype(ScalarType t) {
  return t == ScalarType::Double     ? "float64"
         : t == ScalarType::BFloat16 ? "bfloat16"
         : t == ScalarType::Half     ? "float16"
                                     : "float32";
}
ScalarType scalarTypeOf(const std::string &dtype) {
  return dtype == "float64"    ? ScalarType::Double
         : dtype == "bfloat16" ? ScalarType::BFloat16
         : dtype == "float16"  ? ScalarType::Half
                               : ScalarType::Float;
}

/// A call's graph sizes: the nodes (a bipartite graph's larger side), the
/// edges, and the sources and destinations (both the nodes on a graph of one
/// node set).
struct Sizes {
  int64_t nodes = 0, edges = 0, src = 0, dst = 0;
};

/// One argument or result of a function: its row domain, static shape (the
/// leading size -1 when it is the nodes', the edges' or a side's) and dtype.
struct Spec {
  enum Kind { Dense, Node, Edge, Src, Dst } kind = Dense;
  std::vector<int64_t> shape;
  ScalarType dtype = ScalarType::Float;

  std::vector<int64_t> concrete(const Sizes &n) const {
    std::vector<int64_t> s = shape;
    if (kind == Node)
      s[0] = n.nodes;
    else if (kind == Edge)
      s[0] = n.edges;
    else if (kind == Src)
      s[0] = n.src;
    else if (kind == Dst)
      s[0] = n.dst;
    return s;
  }
};

Spec specOf(nb::handle d) {
  Spec s;
  std::string kind = nb::cast<std::string>(d["kind"]);
  s.kind = kind == "node"   ? Spec::Node
           : kind == "edge" ? Spec::Edge
           : kind == "src"  ? Spec::Src
           : kind == "dst"  ? Spec::Dst
                            : Spec::Dense;
  s.shape = nb::cast<std::vector<int64_t>>(d["shape"]);
  s.dtype = scalarTypeOf(nb::cast<std::string>(d["dtype"]));
  return s;
}

std::vector<Spec> specsOf(nb::handle list) {
  std::vector<Spec> out;
  for (nb::handle d : list)
    out.push_back(specOf(d));
  return out;
}

/// A function callable through the ops: plain (`@f` on its own) or the
/// forward of a training step (`@f_fwd`, whose backward call_backward runs).
struct Target {
  Module *module = nullptr;
  std::string function;
  std::string base;     ///< the differentiated function (training targets)
  std::string backward; ///< `@f_bwd` (training targets)
  std::vector<Spec> args, results;
  /// What the output gradients look like. A training target's outputs:
  /// its first baseResults.size() results, each a tensor of its own, then
  /// its residuals packed in one byte tensor (residualLayout).
  std::vector<Spec> baseResults;
  std::vector<Spec> grads;       ///< @f_bwd's results
  /// @f_bwd's residual arguments: (from an argument?, index).
  std::vector<std::pair<bool, int64_t>> residuals;
  /// Per argument (0-based, after the graph): whether @f_bwd reads it. An
  /// argument it does not read may be passed to call_backward as any
  /// tensor (the autograd step saves an empty one: gnnc/_core.py _Step).
  std::vector<bool> backwardReads;
  std::vector<int64_t> gradArgs; ///< which arguments get a gradient (1-based)
  /// Compiled variants by the graph's schedule bucket (owned references to
  /// CudaFunction / CudaTraining objects, kept for the process's life).
  std::unordered_map<int64_t, PyObject *> ready;
};

/// A graph the Python cache built, by handle.
struct GraphRef {
  ::gnn::HostGraph *host = nullptr;
#ifdef GNNC_HAVE_CUDA_RUNTIME
  DeviceGraph *device = nullptr;
#endif
  int64_t nodes = 0, edges = 0;
  /// A bipartite graph's sides (both `nodes` on a graph of one node set).
  int64_t src = 0, dst = 0;
  int32_t deviceIndex = -1; ///< -1: a CPU graph
  int64_t bucket = 0; ///< what selects the compiled variant (bucketId)
  PyObject *owner = nullptr; ///< the bound graph object (a reference)
  /// The change flag of the tensor the graph was built from (CUDA graphs of
  /// tensors gnnc does not own; null otherwise): where a check found the
  /// tensor changed, the call's results become NaN (rt::poisonIfFlagged).
  const unsigned *flag = nullptr;
};

std::mutex &registryMutex() {
  static std::mutex *m = new std::mutex;
  return *m;
}
/// Targets by id (nodes: references stay valid as the table grows).
std::unordered_map<int64_t, Target> &targets() {
  static auto *t = new std::unordered_map<int64_t, Target>;
  return *t;
}
std::unordered_map<int64_t, GraphRef> &graphs() {
  static auto *g = new std::unordered_map<int64_t, GraphRef>;
  return *g;
}
/// The Python JIT policy: resolve(target, graph) -> (variant, final).
PyObject *&resolver() {
  static PyObject *r = nullptr;
  return r;
}

/// A small id per distinct schedule bucket string (graphs register theirs;
/// a call compares ids, copying no string). Called with the registry lock.
int64_t bucketId(const std::string &bucket) {
  static auto *ids = new std::unordered_map<std::string, int64_t>;
  return ids->emplace(bucket, int64_t(ids->size())).first->second;
}

Target &targetOf(int64_t id) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto it = targets().find(id);
  if (it == targets().end())
    fail("ValueError", "no compiled function with handle " + std::to_string(id));
  return it->second;
}

GraphRef graphOf(int64_t handle, const Tensor &edgeIndex, const Sizes &sizes) {
  GraphRef g;
  {
    std::lock_guard<std::mutex> lock(registryMutex());
    auto it = graphs().find(handle);
    if (it == graphs().end())
      fail("ValueError", "graph handle " + std::to_string(handle) +
                             " names no live graph (its edge_index was freed)");
    g = it->second;
  }
  int32_t device = edgeIndex.is_cuda() ? edgeIndex.get_device_index() : -1;
  auto sides = [](int64_t nodes, int64_t src, int64_t dst) {
    return src == dst ? std::to_string(nodes) + " nodes"
                      : std::to_string(src) + " source and " +
                            std::to_string(dst) + " destination nodes";
  };
  if (g.nodes != sizes.nodes || g.src != sizes.src || g.dst != sizes.dst ||
      g.edges != edgeIndex.size(1) || g.deviceIndex != device)
    fail("ValueError",
         "graph handle " + std::to_string(handle) + " names a graph of " +
             sides(g.nodes, g.src, g.dst) + " and " + std::to_string(g.edges) +
             " edges on device " + std::to_string(g.deviceIndex) +
             ", the call passes " + sides(sizes.nodes, sizes.src, sizes.dst) +
             " and " + std::to_string(edgeIndex.size(1)) +
             " edges on device " + std::to_string(device));
  return g;
}

/// The call's sizes: `nodes` nodes, or (numDst >= 0) a bipartite graph of
/// `nodes` sources and numDst destinations; checks edge_index's shape.
Sizes sizesOf(const Tensor &edgeIndex, int64_t nodes, int64_t numDst) {
  if (edgeIndex.dim() != 2 || edgeIndex.size(0) != 2)
    fail("ValueError", "edge_index must have shape [2, E], got " +
                           shapeString(shapeOf(edgeIndex)));
  if (nodes < 0)
    fail("ValueError", "num_nodes must be in [0, 2^63 - 1], got " +
                           std::to_string(nodes));
  if (numDst < -1)
    fail("ValueError", "num_dst must be -1 (one node set) or in [0, 2^63 - 1], "
                       "got " + std::to_string(numDst));
  Sizes n;
  n.edges = edgeIndex.size(1);
  n.src = nodes;
  n.dst = numDst < 0 ? nodes : numDst;
  n.nodes = std::max(n.src, n.dst);
  return n;
}

/// `tensors` against `specs`: count, dtype, shape, device and layout. The
/// message (`@function role #k`) is built only for a refusal.
void checkTensors(const std::string &function, const char *role,
                  const std::vector<Tensor> &tensors,
                  const std::vector<Spec> &specs, const Sizes &sizes,
                  const Tensor &edgeIndex,
                  const std::vector<bool> *checked = nullptr) {
  auto what = [&] { return "@" + function + " " + role; };
  if (tensors.size() != specs.size())
    fail("TypeError", what() + ": expected " + std::to_string(specs.size()) +
                          " tensors, got " + std::to_string(tensors.size()));
  torch::stable::Device device = edgeIndex.device();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (checked && !(*checked)[i])
      continue;
    const Tensor &t = tensors[i];
    const Spec &s = specs[i];
    auto name = [&] { return what() + " #" + std::to_string(i + 1); };
    if (t.scalar_type() != s.dtype)
      fail("TypeError", name() + " must be " + dtypeName(s.dtype) + ", got " +
                            dtypeName(t.scalar_type()));
    std::vector<int64_t> want = s.concrete(sizes), got = shapeOf(t);
    if (got != want)
      fail("ValueError",
           name() + " must have shape " + shapeString(want) +
               (s.kind == Spec::Node   ? " (nodes first)"
                : s.kind == Spec::Edge ? " (edges first)"
                : s.kind == Spec::Src  ? " (source nodes first)"
                : s.kind == Spec::Dst  ? " (destination nodes first)"
                                       : "") +
               ", got " + shapeString(got));
    if (!(t.device() == device))
      fail("ValueError", name() + " is not on the graph's device");
    if (!t.is_contiguous())
      fail("ValueError", name() + " must be contiguous (call .contiguous())");
  }
}

/// An uninitialised contiguous tensor on `like`'s device, from PyTorch's
/// allocator (the AOTInductor shim's empty_strided: one C call, not a
/// boxed dispatcher call).
Tensor emptyOn(const std::vector<int64_t> &shape, ScalarType dtype,
               const Tensor &like) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  int32_t type = 0, index = 0;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(like.get(), &type));
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_index(like.get(), &index));
  int32_t code = dtype == ScalarType::Double     ? aoti_torch_dtype_float64()
                 : dtype == ScalarType::BFloat16 ? aoti_torch_dtype_bfloat16()
                 : dtype == ScalarType::Half     ? aoti_torch_dtype_float16()
                 : dtype == ScalarType::Byte     ? aoti_torch_dtype_uint8()
                 : dtype == ScalarType::Long     ? aoti_torch_dtype_int64()
                 : dtype == ScalarType::Int      ? aoti_torch_dtype_int32()
                                                 : aoti_torch_dtype_float32();
  AtenTensorHandle handle = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(
      int64_t(shape.size()), shape.data(), strides.data(), code, type, index,
      &handle));
  return Tensor(handle);
}

/// Contiguous uninitialised tensors of `specs` on `like`'s device, each an
/// allocation of its own: a custom op's outputs must not share storage with
/// each other (torch.compile's AOT autograd checks it, and PyTorch 2.12 makes
/// it an error; python/tests/test_core.py
/// test_every_output_is_an_allocation_of_its_own).
std::vector<Tensor> allocate(const std::vector<Spec> &specs,
                             const Sizes &sizes, const Tensor &like) {
  std::vector<Tensor> out;
  out.reserve(specs.size());
  for (const Spec &s : specs)
    out.push_back(emptyOn(s.concrete(sizes), s.dtype, like));
  return out;
}

size_t elementBytes(ScalarType t) {
  return t == ScalarType::Double ? 8
         : t == ScalarType::BFloat16 || t == ScalarType::Half ? 2
                                                              : 4;
}

/// Where a training forward's residuals (its results past the base
/// function's) lie in the one byte tensor that holds them: each at a
/// 256-byte boundary (the kernels' vector loads need 16), in order; the
/// last entry is the tensor's size. One allocation, not one per residual:
/// a training call's host time on small graphs is largely allocator calls.
/// (Not views of one storage as outputs of their own: torch.compile's AOT
/// autograd refuses outputs that share storage. gnnc/_core.py
/// _residual_bytes computes the size for the fake kernel alike.)
std::vector<int64_t> residualLayout(const Target &t, const Sizes &sizes) {
  std::vector<int64_t> at;
  int64_t offset = 0;
  for (size_t i = t.baseResults.size(); i < t.results.size(); ++i) {
    at.push_back(offset);
    int64_t bytes = int64_t(elementBytes(t.results[i].dtype));
    for (int64_t d : t.results[i].concrete(sizes))
      bytes *= d;
    offset += (bytes + 255) / 256 * 256;
  }
  at.push_back(offset);
  return at;
}

/// A training forward's outputs: its results, then the residuals' byte
/// tensor (residualLayout); a plain function's results.
std::vector<Tensor> allocateOutputs(const Target &t, const Sizes &sizes,
                                    const Tensor &like) {
  if (t.base.empty())
    return allocate(t.results, sizes, like);
  std::vector<Spec> own(t.results.begin(),
                        t.results.begin() + t.baseResults.size());
  std::vector<Tensor> out = allocate(own, sizes, like);
  out.push_back(
      emptyOn({residualLayout(t, sizes).back()}, ScalarType::Byte, like));
  return out;
}

/// Where every output of the function `t` runs (results, then residuals)
/// lies in `outputs` (allocateOutputs' tensors).
std::vector<uintptr_t> outputPointers(const Target &t, const Sizes &sizes,
                                      const std::vector<Tensor> &outputs) {
  std::vector<uintptr_t> p;
  size_t own = t.base.empty() ? t.results.size() : t.baseResults.size();
  for (size_t i = 0; i < own; ++i)
    p.push_back(reinterpret_cast<uintptr_t>(outputs[i].data_ptr()));
  if (t.base.empty())
    return p;
  std::vector<int64_t> at = residualLayout(t, sizes);
  auto base = reinterpret_cast<uintptr_t>(outputs[own].data_ptr());
  for (size_t i = own; i < t.results.size(); ++i)
    p.push_back(base + uintptr_t(at[i - own]));
  return p;
}

/// outputPointers with each output's shape and dtype (the reference
/// evaluator's).
std::vector<TensorRef> outputRefs(const Target &t, const Sizes &sizes,
                                  const std::vector<Tensor> &outputs) {
  std::vector<uintptr_t> at = outputPointers(t, sizes, outputs);
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < at.size(); ++i)
    refs.push_back(TensorRef{at[i], t.results[i].concrete(sizes),
                             signatureDtype(t.results[i].dtype)});
  return refs;
}

std::vector<TensorRef> refsOf(const std::vector<Tensor> &tensors) {
  std::vector<TensorRef> refs;
  for (const Tensor &t : tensors)
    refs.push_back(TensorRef{reinterpret_cast<uintptr_t>(t.data_ptr()),
                             shapeOf(t), signatureDtype(t.scalar_type())});
  return refs;
}

std::vector<uintptr_t> pointersOf(const std::vector<Tensor> &tensors) {
  std::vector<uintptr_t> p;
  for (const Tensor &t : tensors)
    p.push_back(reinterpret_cast<uintptr_t>(t.data_ptr()));
  return p;
}

/// `tensors` with each one that starts off a `boundary`-byte boundary (a
/// view into another tensor's storage, e.g. `buf[1:].view(n, c)`) replaced
/// by a copy in fresh memory: the kernels read rows as 16-byte vectors
/// wherever a row's width allows, which assumes the tensor's start is
/// aligned as PyTorch's allocator aligns it (and the residuals' bytes are
/// laid out from a 256-byte boundary). A copy only for such views.
void alignForVectors(std::vector<Tensor> &tensors, uintptr_t boundary = 16) {
  for (Tensor &t : tensors) {
    if (t.numel() == 0 ||
        reinterpret_cast<uintptr_t>(t.data_ptr()) % boundary == 0)
      continue;
    Tensor copy = emptyOn(shapeOf(t), t.scalar_type(), t);
    torch::stable::copy_(copy, t);
    t = copy;
  }
}

/// Runs `body` and rethrows a CompileError as the tagged runtime error.
template <typename Body> auto tagged(Body body) -> decltype(body()) {
  try {
    return body();
  } catch (const CompileError &e) {
    fail("CompileError", e.what());
  } catch (const std::invalid_argument &e) {
    fail("ValueError", e.what());
  }
}

//===----------------------------------------------------------------------===//
// CUDA.
//===----------------------------------------------------------------------===//

#ifdef GNNC_HAVE_CUDA_RUNTIME
/// PyTorch's current CUDA stream of `device`: the AOTInductor shim's
/// `aoti_torch_get_current_cuda_stream`, looked up in the already loaded
/// libtorch_cuda (a CPU-only PyTorch has none, and no CUDA tensors).
void *currentStream(int32_t device) {
  using Fn = int32_t (*)(int32_t, void **);
  static Fn fn = [] {
    void *lib = dlopen("libtorch_cuda.so", RTLD_NOW | RTLD_NOLOAD);
    return lib ? reinterpret_cast<Fn>(
                     dlsym(lib, "aoti_torch_get_current_cuda_stream"))
               : nullptr;
  }();
  if (!fn)
    fail("RuntimeError", "PyTorch's current CUDA stream is not available "
                         "(libtorch_cuda.so is not loaded)");
  void *stream = nullptr;
  if (fn(device, &stream) != 0)
    fail("RuntimeError", "cannot read PyTorch's current CUDA stream of device " +
                             std::to_string(device));
  return stream;
}

/// The compiled variant of `t` for graph `g`: the one in `t.ready`, else the
/// Python JIT policy's answer (kept when it is the bucket's own variant).
PyObject *variantOf(Target &t, int64_t targetId, const GraphRef &g,
                    int64_t graphHandle) {
  {
    std::lock_guard<std::mutex> lock(registryMutex());
    auto it = t.ready.find(g.bucket);
    if (it != t.ready.end())
      return it->second;
  }
  nb::gil_scoped_acquire gil;
  if (!resolver())
    fail("RuntimeError", "internal: no JIT resolver registered");
  nb::tuple result;
  try {
    result = nb::cast<nb::tuple>(
        nb::borrow(resolver())(targetId, graphHandle));
  } catch (nb::python_error &e) {
    std::string type =
        nb::cast<std::string>(nb::handle(e.type()).attr("__name__"));
    std::string message = nb::cast<std::string>(nb::str(e.value()));
    if (type != "CompileError" && type != "ValueError" && type != "TypeError")
      type = "RuntimeError";
    fail(type.c_str(), message.rfind("gnnc: ", 0) == 0 ? message.substr(6)
                                                       : message);
  }
  nb::object fn = result[0];
  bool final = nb::cast<bool>(result[1]);
  PyObject *raw = fn.ptr();
  if (final) {
    std::lock_guard<std::mutex> lock(registryMutex());
    auto [it, inserted] = t.ready.emplace(g.bucket, raw);
    if (inserted)
      fn.release(); // kept for the process's life
    return it->second;
  }
  // A fallback variant (GNNC_JIT=async): the Python side keeps it alive.
  return raw;
}

/// A call's device and PyTorch's current stream there.
struct CudaCall {
  int32_t device;
  void *stream;
  explicit CudaCall(const Tensor &edgeIndex)
      : device(edgeIndex.get_device_index()), stream(currentStream(device)) {}
  Tensor workspace(size_t bytes, const Tensor &like) const {
    return emptyOn({int64_t(std::max<size_t>(bytes, 1))}, ScalarType::Byte,
                   like);
  }
};

/// The stale-graph fill of a call on `g`: `results` NaN where the graph's
/// change check failed (none where the graph has no flag: gnnc's own
/// tensors). Part of the run (rt::RunGuard): no launch of its own.
rt::RunGuard staleFill(const GraphRef &g, const std::vector<Tensor> &results) {
  rt::RunGuard guard;
  if (!g.flag)
    return guard;
  guard.flag = const_cast<unsigned *>(g.flag);
  for (const Tensor &t : results)
    guard.poison.push_back(
        {t.data_ptr(), t.numel(),
         t.scalar_type() == ScalarType::Double     ? rt::DType::F64
         : t.scalar_type() == ScalarType::BFloat16 ? rt::DType::BF16
         : t.scalar_type() == ScalarType::Half     ? rt::DType::F16
                                                   : rt::DType::F32});
  return guard;
}

/// A graph lookup's change check not launched yet (deferCompare: the
/// Python graph cache's compare of a user's edge_index with the copy its
/// graph was built from, gnnc/_core.py _Snapshot._compare_on_device): the
/// op that follows on a graph of the same flag, stream and device runs it
/// inside its own run (rt::RunGuard), so that a call on a cached graph
/// launches nothing on the host for it. Per host thread (a lookup and its
/// op run on one); anything else launches it on its own first: an op on
/// another graph, stream or device, and the thread's next lookup. The
/// Python side keeps the compared tensors alive until then.
struct PendingCheck {
  unsigned *flag = nullptr;
  int32_t device = -1;
  void *stream = nullptr;
  std::vector<rt::RunGuard::Span> spans;
};
thread_local PendingCheck pendingCheck;

/// Launches the thread's pending check on its own stream and device.
void launchPendingCheck() {
  PendingCheck p = std::exchange(pendingCheck, PendingCheck());
  if (!p.flag)
    return;
  torch::stable::accelerator::DeviceGuard guard(p.device);
  for (const rt::RunGuard::Span &s : p.spans)
    check(rt::compareAsync(s.a, s.b, s.bytes, p.flag,
                           static_cast<cudaStream_t>(p.stream)));
}

/// The thread's pending check into `fill` where it is the check of `g`'s
/// flag on the call's stream and device; else launched on its own.
void takePendingCheck(const GraphRef &g, const CudaCall &call,
                      rt::RunGuard &fill) {
  if (!pendingCheck.flag)
    return;
  if (pendingCheck.flag != g.flag || pendingCheck.device != call.device ||
      pendingCheck.stream != call.stream) {
    launchPendingCheck();
    return;
  }
  fill.compare = std::exchange(pendingCheck, PendingCheck()).spans;
}

/// `enqueue(variant, graph, call, guard)` for target `t` on graph `g` on
/// PyTorch's current stream of the graph's device, `guard` the stale-graph
/// fill of `results` (their NaN where the graph's change check failed),
/// after the lookup's change check where it is pending (PendingCheck).
template <typename Enqueue>
void onCuda(Target &t, int64_t targetId, const Tensor &edgeIndex,
            int64_t handle, const GraphRef &g,
            const std::vector<Tensor> &results, Enqueue enqueue) {
  torch::stable::accelerator::DeviceGuard guard(edgeIndex.get_device_index());
  CudaCall call(edgeIndex);
  PyObject *variant = variantOf(t, targetId, g, handle);
  rt::RunGuard fill = staleFill(g, results);
  tagged([&] {
    takePendingCheck(g, call, fill);
    // (a guard without a flag is none: Executable::runSteps)
    enqueue(variant, *g.device->graph, call, &fill);
  });
}
#endif

//===----------------------------------------------------------------------===//
// The kernels.
//===----------------------------------------------------------------------===//

/// The outputs of a training forward given back to call_backward
/// (allocateOutputs' tensors): its results against their specs, the
/// residuals' byte tensor against their layout.
void checkOutputs(const Target &t, const std::vector<Tensor> &outputs,
                  const Sizes &sizes, const Tensor &edgeIndex) {
  size_t own = t.baseResults.size();
  if (outputs.size() != own + 1)
    fail("TypeError", "@" + t.function + " output: expected " +
                          std::to_string(own + 1) + " tensors (" +
                          std::to_string(own) +
                          " results and the residuals' bytes), got " +
                          std::to_string(outputs.size()));
  std::vector<Tensor> results(outputs.begin(), outputs.begin() + own);
  std::vector<Spec> specs(t.results.begin(), t.results.begin() + own);
  checkTensors(t.function, "output", results, specs, sizes, edgeIndex);
  const Tensor &bytes = outputs[own];
  int64_t want = residualLayout(t, sizes).back();
  std::string name = "@" + t.function + " output #" + std::to_string(own + 1);
  if (bytes.scalar_type() != ScalarType::Byte || bytes.dim() != 1 ||
      bytes.size(0) != want)
    fail("ValueError", name + " (the residuals) must be a torch.uint8 tensor "
                       "of shape [" + std::to_string(want) + "], got " +
                       dtypeName(bytes.scalar_type()) + " " +
                       shapeString(shapeOf(bytes)));
  if (!(bytes.device() == edgeIndex.device()))
    fail("ValueError", name + " is not on the graph's device");
  if (!bytes.is_contiguous())
    fail("ValueError", name + " must be contiguous (call .contiguous())");
}

std::vector<Tensor> callImpl(int64_t targetId, Tensor edgeIndex, int64_t nodes,
                             int64_t numDst, int64_t handle,
                             std::vector<Tensor> inputs) {
  Target &t = targetOf(targetId);
  Sizes sizes = sizesOf(edgeIndex, nodes, numDst);
  checkTensors(t.function, "argument", inputs, t.args, sizes, edgeIndex);
  GraphRef g = graphOf(handle, edgeIndex, sizes);
  std::vector<Tensor> outputs = allocateOutputs(t, sizes, edgeIndex);
  if (!edgeIndex.is_cuda()) {
    tagged([&] {
      t.module->evaluate(t.function, *g.host, refsOf(inputs),
                         outputRefs(t, sizes, outputs));
    });
    return outputs;
  }
#ifdef GNNC_HAVE_CUDA_RUNTIME
  alignForVectors(inputs);
  onCuda(t, targetId, edgeIndex, handle, g, outputs,
         [&](PyObject *variant, const rt::Graph &graph, const CudaCall &call,
             const rt::RunGuard *fill) {
           std::optional<Tensor> kept; // (the workspace, until enqueued)
           auto ws = [&](size_t bytes) -> uintptr_t {
             if (!bytes)
               return 0; // (no temporaries in the arena: no allocation)
             kept = call.workspace(bytes, edgeIndex);
             return reinterpret_cast<uintptr_t>(kept->data_ptr());
           };
           auto stream = reinterpret_cast<uintptr_t>(call.stream);
           if (!t.base.empty()) {
             auto *step = nb::inst_ptr<CudaTraining>(variant);
             step->enqueueForward(graph, pointersOf(inputs),
                                  outputPointers(t, sizes, outputs),
                                  ws(step->forwardWorkspaceBytesOn(graph)),
                                  stream, fill);
           } else {
             auto *fn = nb::inst_ptr<CudaFunction>(variant);
             fn->enqueueRun(graph, pointersOf(inputs),
                            outputPointers(t, sizes, outputs),
                            ws(fn->workspaceBytesOn(graph)), stream, fill);
           }
         });
  return outputs;
#else
  fail("RuntimeError", "gnnc was built without the CUDA runtime");
#endif
}

std::vector<Tensor> callBackwardImpl(int64_t targetId, Tensor edgeIndex,
                                     int64_t nodes, int64_t numDst,
                                     int64_t handle,
                                     std::vector<Tensor> inputs,
                                     std::vector<Tensor> outputs,
                                     std::vector<Tensor> outputGrads) {
  Target &t = targetOf(targetId);
  if (t.base.empty())
    fail("ValueError", "@" + t.function + " is not the forward of a training "
                       "step (no backward)");
  Sizes sizes = sizesOf(edgeIndex, nodes, numDst);
  checkTensors(t.base, "argument", inputs, t.args, sizes, edgeIndex,
               &t.backwardReads);
  checkOutputs(t, outputs, sizes, edgeIndex);
  checkTensors(t.base, "output gradient", outputGrads, t.baseResults, sizes,
               edgeIndex);
  GraphRef g = graphOf(handle, edgeIndex, sizes);
  std::vector<Tensor> grads =
      allocate(t.grads, sizes, edgeIndex);
  if (!edgeIndex.is_cuda()) {
    // The reference evaluator takes @f_bwd's arguments in order: the
    // residuals (from the forward's arguments and outputs), then the
    // output gradients.
    std::vector<TensorRef> ins = refsOf(inputs),
                           outs = outputRefs(t, sizes, outputs), args;
    for (auto [fromArg, i] : t.residuals)
      args.push_back(fromArg ? ins[i - 1] : outs[i]);
    for (const TensorRef &r : refsOf(outputGrads))
      args.push_back(r);
    tagged([&] {
      t.module->evaluate(t.backward, *g.host, args, refsOf(grads));
    });
    return grads;
  }
#ifdef GNNC_HAVE_CUDA_RUNTIME
  alignForVectors(inputs);
  // (The residuals' bytes: copied where a caller's view starts off the
  // 256-byte boundary its layout assumes.)
  alignForVectors(outputs, 256);
  alignForVectors(outputGrads);
  onCuda(t, targetId, edgeIndex, handle, g, grads,
         [&](PyObject *variant, const rt::Graph &graph, const CudaCall &call,
             const rt::RunGuard *fill) {
           auto *step = nb::inst_ptr<CudaTraining>(variant);
           size_t bytes = step->backwardWorkspaceBytesOn(graph);
           std::optional<Tensor> ws;
           if (bytes)
             ws = call.workspace(bytes, edgeIndex);
           step->enqueueBackward(graph, pointersOf(inputs),
                                 outputPointers(t, sizes, outputs),
                                 pointersOf(outputGrads), pointersOf(grads),
                                 ws ? reinterpret_cast<uintptr_t>(ws->data_ptr()) : 0,
                                 reinterpret_cast<uintptr_t>(call.stream), fill);
         });
  return grads;
#else
  fail("RuntimeError", "gnnc was built without the CUDA runtime");
#endif
}

} // namespace

//===----------------------------------------------------------------------===//
// Registration from Python (gnnc_ext.cpp binds these).
//===----------------------------------------------------------------------===//

int64_t registerTarget(Module &module, const std::string &function,
                       const std::string &base, int64_t id) {
  {
    // Python registers each (module, function, base) once; an id taken by
    // another function (a 62-bit hash collision) is refused, never shared.
    std::lock_guard<std::mutex> lock(registryMutex());
    auto it = targets().find(id);
    if (it != targets().end()) {
      const Target &t = it->second;
      if (t.module == &module && t.function == function && t.base == base)
        return id;
      fail("ValueError", "compiled function handle " + std::to_string(id) +
                             " of @" + function + " is taken by @" + t.function);
    }
  }
  Target t;
  t.module = &module;
  t.function = function;
  nb::dict sig = module.signature(function);
  nb::list args = nb::cast<nb::list>(sig["args"]);
  for (size_t i = 1; i < nb::len(args); ++i)
    t.args.push_back(specOf(args[i]));
  t.results = specsOf(sig["results"]);
  if (!base.empty()) {
    nb::dict info = module.differentiate(base);
    t.base = base;
    t.backward = nb::cast<std::string>(info["backward"]);
    t.baseResults = specsOf(module.signature(base)["results"]);
    t.grads = specsOf(module.signature(t.backward)["results"]);
    for (auto [kind, i] : nb::cast<std::vector<std::pair<std::string, int64_t>>>(
             info["residuals"]))
      t.residuals.push_back({kind == "arg", i});
    t.backwardReads.assign(t.args.size(), false);
    for (auto [fromArg, i] : t.residuals)
      if (fromArg && i >= 1 && i <= int64_t(t.args.size()))
        t.backwardReads[i - 1] = true;
    t.gradArgs = nb::cast<std::vector<int64_t>>(info["grads"]);
  }
  std::lock_guard<std::mutex> lock(registryMutex());
  targets().emplace(id, std::move(t));
  return id;
}

void registerGraph(int64_t handle, nb::object graph, int64_t nodes,
                   int64_t edges, int32_t device, const std::string &bucket,
                   uintptr_t flag) {
  GraphRef g;
  g.flag = reinterpret_cast<const unsigned *>(flag);
  g.nodes = nodes;
  g.edges = edges;
  g.deviceIndex = device;
  if (device < 0) {
    g.host = nb::inst_ptr<::gnn::HostGraph>(graph);
    g.src = g.host->srcNodes();
    g.dst = g.host->dstNodes();
  } else {
#ifdef GNNC_HAVE_CUDA_RUNTIME
    g.device = nb::inst_ptr<DeviceGraph>(graph);
    g.src = g.device->graph->numSrc();
    g.dst = g.device->graph->numDst();
#else
    throw std::invalid_argument("gnnc was built without the CUDA runtime");
#endif
  }
  g.owner = graph.release().ptr();
  std::lock_guard<std::mutex> lock(registryMutex());
  g.bucket = bucketId(bucket);
  if (!graphs().emplace(handle, g).second) {
    Py_DECREF(g.owner);
    throw std::invalid_argument("internal: graph handle " +
                                std::to_string(handle) + " is taken");
  }
}

void forgetGraph(int64_t handle) {
  PyObject *owner = nullptr;
  {
    std::lock_guard<std::mutex> lock(registryMutex());
    auto it = graphs().find(handle);
    if (it == graphs().end())
      return;
    owner = it->second.owner;
    graphs().erase(it);
  }
  Py_XDECREF(owner);
}

#ifdef GNNC_HAVE_CUDA_RUNTIME
void deferCompare(uintptr_t flag,
                  const std::vector<std::tuple<uintptr_t, uintptr_t, size_t>> &spans,
                  uintptr_t stream, int32_t device) {
  launchPendingCheck();
  PendingCheck p;
  p.flag = reinterpret_cast<unsigned *>(flag);
  p.device = device;
  p.stream = reinterpret_cast<void *>(stream);
  for (auto [a, b, bytes] : spans)
    p.spans.push_back({reinterpret_cast<const void *>(a),
                       reinterpret_cast<const void *>(b), bytes});
  pendingCheck = std::move(p);
}
#endif

void setResolver(nb::object fn) {
  PyObject *&r = resolver();
  Py_XDECREF(r);
  r = fn.release().ptr();
}

/// A contiguous int64 vector (the sampling operators' index arguments).
bool isLongVector(const Tensor &t) {
  return t.scalar_type() == ScalarType::Long && t.dim() == 1 &&
         t.is_contiguous();
}

/// Floyd's k distinct offsets in [0, d) for frontier position r, as
/// floyd::chooseRow draws them (the same draws, so the same result), with a
/// hash set for the "taken" test where k is large: O(k), not O(k^2).
void chooseRowOnHost(uint64_t seed, int64_t r, int64_t d, int64_t k,
                     int64_t *chosen) {
  if (k <= 32) {
    ::gnn::runtime::floyd::chooseRow(seed, r, d, k, chosen);
    return;
  }
  std::unordered_set<int64_t> taken;
  taken.reserve(static_cast<size_t>(2 * k));
  for (int64_t j = 0; j < k; ++j) {
    int64_t top = d - k + j;
    int64_t t = ::gnn::runtime::floyd::draw(seed, r, j, top);
    chosen[j] = taken.insert(t).second ? t : top;
    if (chosen[j] == top)
      taken.insert(top);
  }
}

/// `gnnc::sample_hop(indptr, frontier, k, replace, seed) -> [pos, owner]`:
/// one hop of the neighbour loader (python/gnnc/loader.py). For each
/// frontier node f (position i), of in-edges indptr[f] .. indptr[f + 1]: all
/// of them (k = -1), k uniform draws with replacement (`replace`), or k
/// distinct ones by Floyd's algorithm (all where there are at most k).
/// Returns their CSC positions `pos` and frontier positions `owner`,
/// grouped by i. The draws (gnn/Runtime/Floyd.h) are keyed by `seed` (one
/// int64 on the frontier's device, so that a CUDA generator draws it without
/// a synchronisation) and i: the CPU and the GPU sample the same edges. On
/// CUDA `indptr` may stay in pinned host memory; the one synchronisation
/// reads back the sample count (and the range check of the frontier).
std::vector<Tensor> sampleHopImpl(Tensor indptr, Tensor frontier, int64_t k,
                                  bool replace, Tensor seed) {
  if (!isLongVector(indptr) || indptr.numel() < 1)
    fail("TypeError", "sample_hop: expected indptr as a contiguous int64 "
                      "vector of num_nodes + 1 offsets");
  if (!isLongVector(frontier))
    fail("TypeError", "sample_hop: expected the frontier as a contiguous "
                      "int64 vector of node ids");
  if (seed.scalar_type() != ScalarType::Long || seed.numel() != 1 ||
      seed.is_cuda() != frontier.is_cuda())
    fail("TypeError", "sample_hop: expected the seed as one int64 on the "
                      "frontier's device");
  // Bounded so that a frontier's draws with replacement (frontier size x
  // k) cannot overflow int64 (it wrapped to a small count, and the sampler
  // wrote past the buffer sized by it).
  if (k < -1 || k > std::numeric_limits<int32_t>::max())
    fail("ValueError", "sample_hop: k must be -1 (all) or from 0 to " +
                           std::to_string(std::numeric_limits<int32_t>::max()) +
                           ", got " + std::to_string(k));
  int64_t numNodes = indptr.numel() - 1, rows = frontier.numel();
  const auto *ids = static_cast<const int64_t *>(frontier.data_ptr());
  auto outOfRange = [&](int64_t i, int64_t id) {
    fail("ValueError", "sample_hop: frontier[" + std::to_string(i) +
                           "] = " + std::to_string(id) + " is outside [0, " +
                           std::to_string(numNodes) + ")");
  };
  auto decreasing = [&](int64_t id, int64_t lo, int64_t hi) {
    fail("ValueError", "sample_hop: indptr decreases at node " +
                           std::to_string(id) + " (indptr[" +
                           std::to_string(id) + "] = " + std::to_string(lo) +
                           ", indptr[" + std::to_string(id + 1) +
                           "] = " + std::to_string(hi) + ")");
  };
  if (!frontier.is_cuda()) {
    if (indptr.is_cuda())
      fail("ValueError", "sample_hop: the frontier is on the CPU but indptr on "
                         "a GPU");
    const auto *ptr = static_cast<const int64_t *>(indptr.data_ptr());
    uint64_t key =
        static_cast<uint64_t>(*static_cast<const int64_t *>(seed.data_ptr()));
    std::vector<int64_t> counts(static_cast<size_t>(rows));
    int64_t total = 0;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t f = ids[i];
      if (f < 0 || f >= numNodes)
        outOfRange(i, f);
      int64_t d = ptr[f + 1] - ptr[f];
      if (d < 0)
        decreasing(f, ptr[f], ptr[f + 1]);
      counts[i] = k < 0 ? d : replace ? (d > 0 ? k : 0) : std::min(d, k);
      total += counts[i];
    }
    Tensor pos = emptyOn({total}, ScalarType::Long, frontier);
    Tensor owner = emptyOn({total}, ScalarType::Long, frontier);
    auto *p = static_cast<int64_t *>(pos.data_ptr());
    auto *o = static_cast<int64_t *>(owner.data_ptr());
    for (int64_t i = 0, at = 0; i < rows; at += counts[i], ++i) {
      int64_t lo = ptr[ids[i]], d = ptr[ids[i] + 1] - lo, c = counts[i];
      std::fill(o + at, o + at + c, i);
      if (k < 0 || (!replace && d <= k)) {
        for (int64_t j = 0; j < c; ++j)
          p[at + j] = lo + j;
      } else if (replace) {
        for (int64_t j = 0; j < c; ++j)
          p[at + j] = lo + ::gnn::runtime::floyd::draw(key, i, j, d - 1);
      } else {
        chooseRowOnHost(key, i, d, k, p + at);
        for (int64_t j = 0; j < c; ++j)
          p[at + j] += lo;
      }
    }
    return {pos, owner};
  }
#ifdef GNNC_HAVE_CUDA_RUNTIME
  if (indptr.is_cuda() &&
      indptr.get_device_index() != frontier.get_device_index())
    fail("ValueError",
         "sample_hop: indptr and the frontier are on different GPUs");
  torch::stable::accelerator::DeviceGuard guard(frontier.get_device_index());
  CudaCall call(frontier);
  auto stream = static_cast<cudaStream_t>(call.stream);
  const auto *ptr = static_cast<const int64_t *>(
      check(rt::deviceView(indptr.data_ptr(), "sample_hop: indptr")));
  // counts, inclusive ends, the range flag, then cub's scratch (256-byte
  // aligned).
  size_t head = (8 * size_t(2 * rows + 1) + 255) / 256 * 256;
  Tensor ws = call.workspace(head + rt::sampleHopTempBytes(rows), frontier);
  auto *counts = static_cast<int64_t *>(ws.data_ptr());
  int64_t *ends = counts + rows, *flag = ends + rows;
  check(rt::sampleHopCount(ptr, numNodes, ids, rows, k, replace, counts, ends,
                           flag, static_cast<char *>(ws.data_ptr()) + head,
                           stream));
  // The total (ends[rows - 1]) and the flag beside it: one read back.
  int64_t back[2] = {0, 0};
  if (rows > 0)
    check(rt::readBack(back, ends + rows - 1, 2 * sizeof(int64_t), stream));
  if (back[1] >= 0 && back[1] < rows) { // the error path: more read backs
    int64_t bad = 0;
    check(rt::readBack(&bad, ids + back[1], sizeof(int64_t), stream));
    if (bad < 0 || bad >= numNodes)
      outOfRange(back[1], bad);
    int64_t offsets[2] = {0, 0};
    check(rt::readBack(offsets, ptr + bad, 2 * sizeof(int64_t), stream));
    decreasing(bad, offsets[0], offsets[1]);
  }
  Tensor pos = emptyOn({back[0]}, ScalarType::Long, frontier);
  Tensor owner = emptyOn({back[0]}, ScalarType::Long, frontier);
  check(rt::sampleHopFill(ptr, ids, rows, k, replace,
                          static_cast<const int64_t *>(seed.data_ptr()), counts,
                          ends, back[0], static_cast<int64_t *>(pos.data_ptr()),
                          static_cast<int64_t *>(owner.data_ptr()), stream));
  return {pos, owner};
#else
  fail("RuntimeError", "sample_hop: gnnc was built without the CUDA runtime");
#endif
}

/// `gnnc::relabel(local_map, first_map, src, num_local) -> [local, new]`:
/// the neighbour loader's relabelling of one hop's sampled sources `src`
/// (global ids). `local_map` (global id -> local id in the batch, -1: not
/// in it) and `first_map` (scratch, int64 max between calls; the CPU does
/// not use it) cover every node and are updated in place: the nodes not in
/// the batch yet get the local ids num_local, num_local + 1, ... in order of
/// first occurrence and enter `local_map`. Returns every source's local id
/// and the new nodes' global ids. On CUDA one synchronisation (the new node
/// count and the ids' range check). An id out of range raises ValueError
/// (the maps may then hold entries of this call).
std::vector<Tensor> relabelImpl(Tensor localMap, Tensor firstMap, Tensor src,
                                int64_t numLocal) {
  if (!isLongVector(localMap) || !isLongVector(firstMap) ||
      !isLongVector(src) || firstMap.numel() != localMap.numel())
    fail("TypeError", "relabel: expected contiguous int64 vectors: two maps of "
                      "num_nodes entries and the sources");
  if (localMap.is_cuda() != src.is_cuda() ||
      firstMap.is_cuda() != src.is_cuda())
    fail("ValueError", "relabel: the maps and the sources are on different "
                       "devices");
  int64_t count = src.numel(), nodes = localMap.numel();
  const auto *ids = static_cast<const int64_t *>(src.data_ptr());
  auto *lmap = static_cast<int64_t *>(localMap.data_ptr());
  Tensor local = emptyOn({count}, ScalarType::Long, src);
  auto *loc = static_cast<int64_t *>(local.data_ptr());
  auto outOfRange = [&](int64_t s, int64_t v) {
    fail("ValueError", "relabel: src[" + std::to_string(s) + "] = " +
                           std::to_string(v) + " is outside [0, " +
                           std::to_string(nodes) + ")");
  };
  if (!src.is_cuda()) {
    std::vector<int64_t> added;
    for (int64_t s = 0; s < count; ++s) {
      int64_t v = ids[s];
      if (v < 0 || v >= nodes)
        outOfRange(s, v);
      if (lmap[v] < 0) {
        lmap[v] = numLocal + int64_t(added.size());
        added.push_back(v);
      }
      loc[s] = lmap[v];
    }
    Tensor fresh = emptyOn({int64_t(added.size())}, ScalarType::Long, src);
    std::copy(added.begin(), added.end(),
              static_cast<int64_t *>(fresh.data_ptr()));
    return {local, fresh};
  }
#ifdef GNNC_HAVE_CUDA_RUNTIME
  if (localMap.get_device_index() != src.get_device_index() ||
      firstMap.get_device_index() != src.get_device_index())
    fail("ValueError",
         "relabel: the maps and the sources are on different GPUs");
  torch::stable::accelerator::DeviceGuard guard(src.get_device_index());
  CudaCall call(src);
  auto stream = static_cast<cudaStream_t>(call.stream);
  auto *fmap = static_cast<int64_t *>(firstMap.data_ptr());
  // flags (count + 1) and ranks (count + 1: ranks[count] is the new node
  // count), the range flag beside it, then cub's scratch (256-byte aligned).
  size_t head = (8 * size_t(2 * count + 3) + 255) / 256 * 256;
  Tensor ws = call.workspace(head + rt::relabelTempBytes(count + 1), src);
  auto *flags = static_cast<int64_t *>(ws.data_ptr());
  int64_t *ranks = flags + count + 1, *bad = ranks + count + 1;
  check(rt::relabelMark(ids, count, nodes, lmap, fmap, flags, ranks, bad,
                        static_cast<char *>(ws.data_ptr()) + head, stream));
  int64_t numNew = 0;
  if (count > 0) {
    int64_t back[2] = {0, 0}; // ranks[count], then the range flag
    check(rt::readBack(back, ranks + count, 2 * sizeof(int64_t), stream));
    if (back[1] >= 0 && back[1] < count) {
      // The maps may hold first positions of this call: the caller (the
      // loader) resets them on any error.
      int64_t v = 0;
      check(rt::readBack(&v, ids + back[1], sizeof(int64_t), stream));
      outOfRange(back[1], v);
    }
    numNew = back[0];
  }
  Tensor fresh = emptyOn({numNew}, ScalarType::Long, src);
  check(rt::relabelAssign(ids, count, numLocal, flags, ranks, numNew, lmap,
                          fmap, loc, static_cast<int64_t *>(fresh.data_ptr()),
                          stream));
  return {local, fresh};
#else
  fail("RuntimeError", "relabel: gnnc was built without the CUDA runtime");
#endif
}

/// `gnnc::gather_rows(table, index)`: `table[index]` along dim 0, on
/// index's device. On CUDA `table` may stay in pinned host memory (read
/// through unified addressing, no copy of the table): the neighbour
/// loader's gathers from a graph or features kept in host memory. Its ids
/// are in range by construction; on CUDA an id outside gives a zero row, on
/// the CPU an error.
Tensor gatherRowsImpl(Tensor table, Tensor index) {
  if (index.scalar_type() != ScalarType::Long || index.dim() != 1 ||
      !index.is_contiguous())
    fail("TypeError", "gather_rows: expected a contiguous int64 vector of ids");
  ScalarType type = table.scalar_type();
  bool known = type == ScalarType::Float || type == ScalarType::Double ||
               type == ScalarType::BFloat16 || type == ScalarType::Half ||
               type == ScalarType::Long || type == ScalarType::Int;
  if (!known || table.dim() < 1 || !table.is_contiguous())
    fail("TypeError", "gather_rows: expected a contiguous table of float32, "
                      "float64, bfloat16, float16, int64 or int32, got " +
                          std::string(dtypeName(type)));
  std::vector<int64_t> shape = shapeOf(table);
  int64_t rows = shape[0];
  int64_t rowBytes = static_cast<int64_t>(table.element_size());
  for (size_t i = 1; i < shape.size(); ++i)
    rowBytes *= shape[i];
  shape[0] = index.numel();
  Tensor out = emptyOn(shape, type, index);
  const auto *ids = static_cast<const int64_t *>(index.data_ptr());
  if (!index.is_cuda()) {
    if (table.is_cuda())
      fail("ValueError", "gather_rows: the ids are on the CPU but the table on "
                         "a GPU");
    const auto *from = static_cast<const unsigned char *>(table.data_ptr());
    auto *to = static_cast<unsigned char *>(out.data_ptr());
    for (int64_t i = 0; i < shape[0]; ++i) {
      if (ids[i] < 0 || ids[i] >= rows)
        fail("ValueError", "gather_rows: id " + std::to_string(ids[i]) +
                               " outside [0, " + std::to_string(rows) + ")");
      std::memcpy(to + i * rowBytes, from + ids[i] * rowBytes, rowBytes);
    }
    return out;
  }
#ifdef GNNC_HAVE_CUDA_RUNTIME
  if (table.is_cuda() && table.get_device_index() != index.get_device_index())
    fail("ValueError",
         "gather_rows: the table and the ids are on different GPUs");
  torch::stable::accelerator::DeviceGuard guard(index.get_device_index());
  CudaCall call(index);
  check(rt::gatherRows(table.data_ptr(), rows, rowBytes, ids, shape[0],
                       out.data_ptr(), static_cast<cudaStream_t>(call.stream)));
  return out;
#else
  fail("RuntimeError", "gather_rows: gnnc was built without the CUDA runtime");
#endif
}

} // namespace gnnc_py

STABLE_TORCH_LIBRARY(gnnc, m) {
  m.def("call(int target, Tensor edge_index, SymInt num_nodes, SymInt num_dst, "
        "SymInt graph, Tensor[] inputs) -> Tensor[]");
  m.def("call_backward(int target, Tensor edge_index, SymInt num_nodes, "
        "SymInt num_dst, SymInt graph, Tensor[] inputs, Tensor[] outputs, "
        "Tensor[] output_grads) -> Tensor[]");
  m.def("sample_hop(Tensor indptr, Tensor frontier, int k, bool replace, "
        "Tensor seed) -> Tensor[]");
  m.def("gather_rows(Tensor table, Tensor index) -> Tensor");
  m.def("relabel(Tensor(a!) local_map, Tensor(b!) first_map, Tensor src, "
        "int num_local) -> Tensor[]");
}

STABLE_TORCH_LIBRARY_IMPL(gnnc, CPU, m) {
  m.impl("call", TORCH_BOX(&gnnc_py::callImpl));
  m.impl("call_backward", TORCH_BOX(&gnnc_py::callBackwardImpl));
  m.impl("sample_hop", TORCH_BOX(&gnnc_py::sampleHopImpl));
  m.impl("gather_rows", TORCH_BOX(&gnnc_py::gatherRowsImpl));
  m.impl("relabel", TORCH_BOX(&gnnc_py::relabelImpl));
}

STABLE_TORCH_LIBRARY_IMPL(gnnc, CUDA, m) {
  m.impl("call", TORCH_BOX(&gnnc_py::callImpl));
  m.impl("call_backward", TORCH_BOX(&gnnc_py::callBackwardImpl));
  m.impl("sample_hop", TORCH_BOX(&gnnc_py::sampleHopImpl));
  m.impl("gather_rows", TORCH_BOX(&gnnc_py::gatherRowsImpl));
  m.impl("relabel", TORCH_BOX(&gnnc_py::relabelImpl));
}
