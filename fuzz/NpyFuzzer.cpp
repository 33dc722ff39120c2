//===- NpyFuzzer.cpp - the .npy tensor reader -------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// readNpy (gnn-run's `--input` files) on the input as a `.npy` file; a tensor
// it accepts must hold exactly the elements its shape says.
//
//===----------------------------------------------------------------------===//

#include "FuzzFiles.h"

#include "gnn/Tensor/Tensor.h"

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::filesystem::path path = gnn::fuzz::scratchDir() / "t.npy";
  gnn::fuzz::writeFile(path, data, size);
  gnn::Tensor tensor;
  if (!gnn::readNpy(path.string(), tensor).empty())
    return 0;
  size_t elements = 1;
  for (int64_t d : tensor.shape)
    elements *= static_cast<size_t>(d);
  if (elements != tensor.data.size()) {
    std::fprintf(stderr, "shape holds %zu elements but the tensor %zu\n",
                 elements, tensor.data.size());
    std::abort();
  }
  return 0;
}
