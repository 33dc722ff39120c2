//===- Module.cpp - loaded kernels and launches ---------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Module.h"

using namespace gnn::runtime;

StatusOr<std::unique_ptr<Module>> Module::load(const Cubin &cubin) {
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver.ok())
    return driver.error();
  GNN_RETURN_IF_ERROR((*driver)->makeCurrent());
  std::unique_ptr<Module> m(new Module);
  m->driver = *driver;
  Status s = checkCu(**driver, "cuModuleLoadData",
                     (*driver)->fn().cuModuleLoadData(&m->module,
                                                      cubin.image.data()));
  if (!s.ok())
    return s.withContext("loading a cubin for " + cubin.arch + " on " +
                         (*driver)->deviceName() + " (sm_" +
                         std::to_string((*driver)->computeCapability()) + ")");
  return m;
}

Module::~Module() {
  if (module && driver)
    driver->fn().cuModuleUnload(module);
}

StatusOr<Kernel> Module::kernel(const std::string &name) const {
  Kernel k;
  k.entry = name;
  k.driver = driver;
  const DriverApi &f = driver->fn();
  Status s = checkCu(*driver, "cuModuleGetFunction",
                     f.cuModuleGetFunction(&k.fn, module, name.c_str()));
  if (!s.ok())
    return s.withContext("kernel '" + name + "'");
  f.cuFuncGetAttribute(&k.resources.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, k.fn);
  f.cuFuncGetAttribute(&k.resources.localBytes,
                       CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k.fn);
  f.cuFuncGetAttribute(&k.resources.staticSharedBytes,
                       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.fn);
  f.cuFuncGetAttribute(&k.resources.maxThreadsPerBlock,
                       CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.fn);
  return k;
}

Status Kernel::allowDynamicShared(int bytes) {
  if (bytes <= sharedAllowed)
    return Status();
  Status s = checkCu(*driver, "cuFuncSetAttribute",
                     driver->fn().cuFuncSetAttribute(
                         fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                         bytes));
  if (s.ok())
    sharedAllowed = bytes;
  return s.withContext("kernel '" + entry + "' asking for " +
                       std::to_string(bytes) + " bytes of dynamic shared memory");
}

Status Kernel::launch(unsigned gridX, unsigned gridY, unsigned gridZ,
                      unsigned blockX, unsigned blockY, unsigned blockZ,
                      unsigned sharedBytes, CUstream stream,
                      void **args) const {
  CUresult r = driver->fn().cuLaunchKernel(fn, gridX, gridY, gridZ, blockX,
                                           blockY, blockZ, sharedBytes, stream,
                                           args, nullptr);
  if (r == CUDA_SUCCESS)
    return Status();
  return Status::error(driver->errorText("cuLaunchKernel", r) + " for kernel '" +
                       entry + "' (grid " + std::to_string(gridX) + "x" +
                       std::to_string(gridY) + "x" + std::to_string(gridZ) +
                       ", block " + std::to_string(blockX) + "x" +
                       std::to_string(blockY) + "x" + std::to_string(blockZ) +
                       ", " + std::to_string(sharedBytes) + " B shared)");
}
