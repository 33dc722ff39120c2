//===- CudaDriver.h - the CUDA driver API, loaded lazily ----------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The CUDA driver (libcuda.so.1) is opened with dlopen on first use, so every
/// gnnc tool starts on a machine without a GPU and reports "no CUDA driver" or
/// "no CUDA device" as an error value. The runtime works in the device's
/// primary context, the one PyTorch and the CUDA runtime API use, so it
/// cooperates with them inside one process.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_CUDADRIVER_H
#define GNN_RUNTIME_CUDADRIVER_H

#include "gnn/Runtime/Status.h"

#include <cuda.h>

#include <string>

namespace gnn {
namespace runtime {

/// Function pointers of the driver entry points gnnc uses.
struct DriverApi {
#define GNN_DRIVER_FN(name) decltype(&::name) name = nullptr;
#include "gnn/Runtime/CudaDriverFunctions.def"
};

/// The loaded driver and the device gnnc runs on: one device per process
/// (the compiled modules, the tuner's figures and the graph builds' memory
/// pool are that device's), as PyTorch's DistributedDataParallel runs one
/// process per GPU.
class CudaDriver {
public:
  /// Loads the driver and initialises gnnc's device in its primary context,
  /// once per process: GNNC_DEVICE if set, else the device select() named
  /// first, else 0. Fails with "no CUDA driver: ..." or "no CUDA device: ...".
  static StatusOr<CudaDriver *> get();

  /// Makes `ordinal` gnnc's device when it has none yet (then get()), or
  /// checks that it is the one it has: the Python binding calls it with the
  /// device of the first CUDA tensor it is given, so a process that works
  /// on cuda:1 does not initialise (or load kernels on) cuda:0. Fails with
  /// the two devices named where they differ.
  static Status select(int ordinal);

  /// Whether a driver and a device are there, without choosing the device
  /// (gnnc.cuda_available()): "no CUDA driver: ..." / "no CUDA device: ...".
  static Status probe();

  /// Only loads the driver library (no device needed): for version queries.
  static StatusOr<const DriverApi *> api();

  const DriverApi &fn() const { return *calls; }
  CUdevice device() const { return dev; }
  /// The device's ordinal (cuda:N).
  int ordinal() const { return index; }
  CUcontext context() const { return ctx; }
  /// Compute capability as 10 * major + minor (90 for an H100).
  int computeCapability() const { return cc; }
  /// Driver version as reported by cuDriverGetVersion (13000 = 13.0).
  int driverVersion() const { return version; }
  std::string deviceName() const { return name; }
  int multiprocessors() const { return sms; }

  /// Makes the primary context current on the calling thread.
  Status makeCurrent() const;

  /// Formats a driver error: "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE
  /// (device kernel image is invalid)".
  std::string errorText(const char *call, CUresult result) const;

private:
  CudaDriver() = default;
  const DriverApi *calls = nullptr;
  CUdevice dev = 0;
  int index = 0;
  CUcontext ctx = nullptr;
  int cc = 0, version = 0, sms = 0;
  std::string name;
};

/// Turns a CUresult into a Status naming the call.
Status checkCu(const CudaDriver &driver, const char *call, CUresult result);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_CUDADRIVER_H
