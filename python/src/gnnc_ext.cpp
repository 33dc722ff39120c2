//===- gnnc_ext.cpp - the native part of the Python package ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `gnnc._gnnc`'s Python bindings of the classes in Native.h; the PyTorch
/// ops live in TorchOps.cpp.
///
//===----------------------------------------------------------------------===//

#include "Native.h"

using namespace gnnc_py;

// TorchOps.cpp: the registries behind torch.ops.gnnc.call/call_backward.
namespace gnnc_py {
int64_t registerTarget(Module &module, const std::string &function,
                       const std::string &base, int64_t id);
void registerGraph(int64_t handle, nb::object graph, int64_t nodes,
                   int64_t edges, int32_t device, const std::string &bucket,
                   uintptr_t flag);
void forgetGraph(int64_t handle);
void setResolver(nb::object fn);
#ifdef GNNC_HAVE_CUDA_RUNTIME
void deferCompare(uintptr_t flag,
                  const std::vector<std::tuple<uintptr_t, uintptr_t, size_t>> &spans,
                  uintptr_t stream, int32_t device);
#endif
// IRBuilder.cpp: gnnc.ir's FunctionBuilder.
void bindIRBuilder(nb::module_ &m);
} // namespace gnnc_py

NB_MODULE(_gnnc, m) {
  m.doc() = "gnnc's native core (see gnnc/_core.py)";
  // Compiled modules and graphs live in the package's caches until the
  // interpreter exits; that is not a leak worth a warning at exit.
  nb::set_leak_warnings(false);
  nb::exception<CompileError>(m, "CompileError");

  nb::class_<TensorRef>(m, "TensorRef")
      .def(nb::init<>())
      .def("__init__",
           [](TensorRef *t, uintptr_t data, std::vector<int64_t> shape,
              std::string dtype) {
             new (t) TensorRef{data, std::move(shape), std::move(dtype)};
           });

  nb::class_<Module>(m, "Module")
      .def_static("parse", &Module::parse, nb::arg("source"),
                  nb::arg("name") = "<string>")
      .def("functions", &Module::functions)
      .def("signature", &Module::signature)
      .def("differentiate", &Module::differentiate)
      .def("text", &Module::text, nb::arg("names") = false)
      .def("explain", &Module::explain, nb::arg("functions"),
           nb::arg("stats") = "")
      .def("run_reference", &Module::runReference);
  bindIRBuilder(m);

  // Whether two host buffers hold the same bytes: the graph cache's
  // per-call check of an edge_index against its copy (gnnc/_core.py).
  m.def(
      "same_bytes",
      [](uintptr_t a, uintptr_t b, size_t bytes) {
        if (bytes == 0 || a == b)
          return true;
        nb::gil_scoped_release release;
        return std::memcmp(reinterpret_cast<const void *>(a),
                           reinterpret_cast<const void *>(b), bytes) == 0;
      },
      nb::arg("a"), nb::arg("b"), nb::arg("bytes"));

  // The CPU path's kept host blocks given back to the system
  // (gnnc.release_host_memory).
  m.def("release_host_memory", [] { return ::gnn::releaseHostBlocks(); });
  m.def("host_memory_kept", [] { return ::gnn::hostBytesKept(); });

  // The PyTorch ops' registries (TorchOps.cpp): functions by target handle,
  // graphs by the handle their token holds, and the JIT policy.
  m.def("register_target", &registerTarget, nb::arg("module"),
        nb::arg("function"), nb::arg("base"), nb::arg("id"));
  m.def("register_graph", &registerGraph, nb::arg("handle"), nb::arg("graph"),
        nb::arg("num_nodes"), nb::arg("num_edges"), nb::arg("device"),
        nb::arg("bucket"), nb::arg("flag") = 0);
  m.def("forget_graph", &forgetGraph, nb::arg("handle"));
  m.def("set_resolver", &setResolver, nb::arg("resolve"));

  // A renumbering of the nodes for locality into `out` (int64, num_nodes
  // entries): gnnc/_reorder.py checks the ids and the method's name first.
  m.def(
      "locality_order",
      [](uintptr_t src, uintptr_t dst, int64_t numEdges, int64_t numNodes,
         const std::string &method, uintptr_t out) {
        std::optional<::gnn::NodeOrder> order = ::gnn::parseNodeOrder(method);
        if (!order)
          throw std::invalid_argument("method must be one of " +
                                      std::string(::gnn::nodeOrderNames()) +
                                      ", got '" + method + "'");
        std::vector<int64_t> result;
        {
          nb::gil_scoped_release release;
          result = ::gnn::localityOrder(
              numNodes, reinterpret_cast<const int64_t *>(src),
              reinterpret_cast<const int64_t *>(dst), numEdges, *order);
        }
        std::memcpy(reinterpret_cast<void *>(out), result.data(),
                    result.size() * sizeof(int64_t));
      },
      nb::arg("src"), nb::arg("dst"), nb::arg("num_edges"),
      nb::arg("num_nodes"), nb::arg("method"), nb::arg("out"));

  nb::class_<::gnn::HostGraph>(m, "HostGraph")
      .def_static("from_arrays", &makeHostGraph, nb::arg("src"),
                  nb::arg("dst"), nb::arg("num_edges"), nb::arg("num_nodes"),
                  nb::arg("num_src") = -1, nb::arg("num_dst") = -1,
                  nb::arg("typed") = false, nb::arg("types") = 0)
      .def_prop_ro("num_nodes",
                   [](const ::gnn::HostGraph &g) { return g.numNodes; })
      .def_prop_ro("num_edges",
                   [](const ::gnn::HostGraph &g) { return g.numEdges(); });

  // A graph's statistics as the compiler takes them (DeviceGraph's
  // statistics()["stats"]); printed in gnn-select-schedules' option form.
  nb::class_<::gnn::GraphStats>(m, "GraphStats")
      .def("__repr__", [](const ::gnn::GraphStats &s) {
        return "GraphStats(" + s.toOption() + ")";
      });

#ifdef GNNC_HAVE_CUDA_RUNTIME
  m.attr("has_cuda") = true;
  nb::class_<DeviceGraph>(m, "DeviceGraph")
      .def(nb::init<uintptr_t, uintptr_t, int64_t, int64_t, uintptr_t, bool,
                    int64_t, int64_t>(),
           nb::arg("src"), nb::arg("dst"), nb::arg("num_edges"),
           nb::arg("num_nodes"), nb::arg("stream"),
           nb::arg("dst_sorted") = false, nb::arg("num_src") = -1,
           nb::arg("num_dst") = -1)
      .def("set_edge_types", &DeviceGraph::setEdgeTypes, nb::arg("types"),
           nb::arg("stream"))
      .def("statistics", &DeviceGraph::statistics);
  nb::class_<CudaFunction>(m, "CudaFunction")
      .def(nb::init<Module &, const std::string &, const ::gnn::GraphStats &,
                    int>(),
           nb::arg("module"), nb::arg("function"), nb::arg("stats"),
           nb::arg("index_bits"))
      .def("source", &CudaFunction::source)
      .def("program_json", &CudaFunction::json);
  nb::class_<CudaTraining>(m, "CudaTraining")
      .def(nb::init<Module &, const std::string &, const ::gnn::GraphStats &,
                    int>(),
           nb::arg("module"), nb::arg("function"), nb::arg("stats"),
           nb::arg("index_bits"));
  // The sync-free change check of a cached graph's edge_index (gnnc/_core.py
  // _Snapshot): a flag in mapped pinned memory, set by a comparison kernel
  // on the caller's stream and read by a later call.
  struct HostFlag {
    std::unique_ptr<rt::HostFlag> flag;
  };
  nb::class_<HostFlag>(m, "HostFlag")
      .def("__init__",
           [](HostFlag *f) { new (f) HostFlag{check(rt::HostFlag::create())}; })
      .def_prop_ro("word",
                   [](const HostFlag &f) {
                     return reinterpret_cast<uintptr_t>(f.flag->word());
                   })
      .def("read", [](const HostFlag &f) { return f.flag->read(); });
  // The compare is deferred to the gnnc op that follows on this thread
  // (TorchOps.cpp PendingCheck: inside that op's run), else launched on
  // its own by the thread's next op or lookup.
  m.def("defer_compare", &deferCompare, nb::arg("flag"), nb::arg("spans"),
        nb::arg("stream"), nb::arg("device"));
  // Whether CUDA works, without choosing gnnc's device (cuda_select does:
  // the first CUDA tensor's, gnnc/_core.py _require_cuda).
  m.def("cuda_available", [] { return rt::CudaDriver::probe().ok(); });
  m.def("cuda_error", [] {
    rt::Status s = rt::CudaDriver::probe();
    return s.ok() ? std::string() : s.message();
  });
  m.def(
      "cuda_select",
      [](int ordinal) {
        rt::Status s = rt::CudaDriver::select(ordinal);
        return s.ok() ? std::string() : s.message();
      },
      nb::arg("ordinal"));
#else
  m.attr("has_cuda") = false;
  m.def("cuda_available", [] { return false; });
  m.def("cuda_error",
        [] { return std::string("gnnc was built without the CUDA runtime"); });
#endif
}
