//===- CudaDriver.cpp - the CUDA driver API, loaded lazily ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Environment.h"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>

using namespace gnn::runtime;

#define GNN_STRINGIFY_IMPL(x) #x
#define GNN_STRINGIFY(x) GNN_STRINGIFY_IMPL(x)

namespace {
struct Loaded {
  DriverApi api;
  Status status;
};
} // namespace

static const Loaded &loadDriver() {
  static Loaded loaded = [] {
    Loaded l;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      l.status = Status::error(std::string("no CUDA driver: cannot load "
                                           "libcuda.so.1 (") +
                               (why ? why : "unknown reason") + ")");
      return l;
    }
    std::string missing;
#define GNN_DRIVER_FN(name)                                                    \
  l.api.name = reinterpret_cast<decltype(l.api.name)>(                         \
      dlsym(lib, GNN_STRINGIFY(name)));                                        \
  if (!l.api.name)                                                             \
    missing += std::string(missing.empty() ? "" : ", ") + GNN_STRINGIFY(name);
#include "gnn/Runtime/CudaDriverFunctions.def"
    if (!missing.empty())
      l.status = Status::error("no CUDA driver: libcuda.so.1 lacks " + missing +
                               " (driver too old?)");
    return l;
  }();
  return loaded;
}

StatusOr<const DriverApi *> CudaDriver::api() {
  const Loaded &l = loadDriver();
  if (!l.status.ok())
    return l.status;
  return &l.api;
}

/// "call: NAME (description)" for a driver call's failure, from `calls`
/// (null, or a function missing: the number alone).
static std::string driverErrorText(const DriverApi *calls, const char *call,
                                   CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (calls && calls->cuGetErrorName)
    calls->cuGetErrorName(result, &name);
  if (calls && calls->cuGetErrorString)
    calls->cuGetErrorString(result, &text);
  return std::string(call) + ": " + (name ? name : "CUDA error " + std::to_string(result)) +
         " (" + (text ? text : "no description") + ")";
}

std::string CudaDriver::errorText(const char *call, CUresult result) const {
  return driverErrorText(calls, call, result);
}

Status gnn::runtime::checkCu(const CudaDriver &driver, const char *call,
                             CUresult result) {
  if (result == CUDA_SUCCESS)
    return Status();
  return Status::error(driver.errorText(call, result));
}

Status CudaDriver::makeCurrent() const {
  CUcontext current = nullptr;
  calls->cuCtxGetCurrent(&current);
  if (current == ctx)
    return Status();
  return checkCu(*this, "cuCtxSetCurrent", calls->cuCtxSetCurrent(ctx));
}

namespace {
/// The device select() asked for before the driver was initialised (-1:
/// none), read once by get()'s initialisation.
std::mutex &selectMutex() {
  static auto *m = new std::mutex;
  return *m;
}
int &selected() {
  static int ordinal = -1;
  return ordinal;
}

/// The driver loaded and initialised, and its device count: what get() and
/// probe() share.
Status initDriver(const DriverApi *&calls, int &count, int &version) {
  StatusOr<const DriverApi *> api = CudaDriver::api();
  if (!api.ok())
    return api.error();
  calls = *api;
  CUresult r = calls->cuInit(0);
  if (r != CUDA_SUCCESS)
    return Status::error("no CUDA device: " +
                         driverErrorText(calls, "cuInit", r));
  calls->cuDriverGetVersion(&version);
  calls->cuDeviceGetCount(&count);
  if (count == 0)
    return Status::error("no CUDA device: the driver reports 0 devices");
  return Status();
}
} // namespace

Status CudaDriver::probe() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    const DriverApi *calls = nullptr;
    int count = 0, version = 0;
    status = initDriver(calls, count, version);
  });
  return status;
}

Status CudaDriver::select(int ordinal) {
  {
    std::lock_guard<std::mutex> lock(selectMutex());
    if (selected() < 0)
      selected() = ordinal;
  }
  StatusOr<CudaDriver *> driver = get();
  if (!driver.ok())
    return driver.error();
  if ((*driver)->ordinal() == ordinal)
    return Status();
  return Status::error(
      "gnnc runs on one CUDA device per process and this process's is cuda:" +
      std::to_string((*driver)->ordinal()) +
      (environment().deviceOrdinal >= 0 ? " (GNNC_DEVICE)"
                                        : " (the first one it was given)") +
      ", but these tensors are on cuda:" + std::to_string(ordinal) +
      ". Run one process per GPU (torchrun --nproc_per_node=N, each calling "
      "torch.cuda.set_device(local_rank)), or move the tensors to cuda:" +
      std::to_string((*driver)->ordinal()));
}

StatusOr<CudaDriver *> CudaDriver::get() {
  static std::once_flag once;
  static CudaDriver driver;
  static Status status;
  std::call_once(once, [] {
    int count = 0;
    if (!(status = initDriver(driver.calls, count, driver.version)).ok())
      return;
    const DriverApi &f = *driver.calls;
    int ordinal = environment().deviceOrdinal;
    if (ordinal < 0) {
      std::lock_guard<std::mutex> lock(selectMutex());
      ordinal = std::max(selected(), 0);
    }
    if (ordinal >= count) {
      status = Status::error("no CUDA device: the driver reports " +
                             std::to_string(count) + " device(s), device " +
                             std::to_string(ordinal) + " requested");
      return;
    }
    driver.index = ordinal;
    if ((status = checkCu(driver, "cuDeviceGet",
                          f.cuDeviceGet(&driver.dev, ordinal)))
            .ok() == false)
      return;
    int major = 0, minor = 0;
    f.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           driver.dev);
    f.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           driver.dev);
    f.cuDeviceGetAttribute(&driver.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                           driver.dev);
    driver.cc = 10 * major + minor;
    char buf[256] = {0};
    f.cuDeviceGetName(buf, sizeof(buf) - 1, driver.dev);
    driver.name = buf;
    status = checkCu(driver, "cuDevicePrimaryCtxRetain",
                     f.cuDevicePrimaryCtxRetain(&driver.ctx, driver.dev));
    if (status.ok())
      status = driver.makeCurrent();
  });
  if (!status.ok())
    return status;
  return &driver;
}
