//===- CacheEntryFuzzer.cpp - the kernel-cache entry reader -----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// readCacheEntry on the input as an entry file. The key is the one the file
// claims (its hash from the header, its text from the bytes after it), as if
// the file had been found under that key's name, so that the fuzzer reaches
// the key and payload checks. An entry read back must be written again to the
// same bytes.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/CacheEntry.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace gnn::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string file(reinterpret_cast<const char *>(data), size);
  CacheKey key;
  constexpr size_t kHeader = 48;
  if (size >= kHeader) {
    uint64_t keySize = 0;
    std::memcpy(&key.a, data + 8, 8);
    std::memcpy(&key.b, data + 16, 8);
    std::memcpy(&keySize, data + 24, 8);
    key.text = file.substr(kHeader, keySize);
  }
  std::istringstream is(file);
  std::vector<char> image;
  if (!readCacheEntry(is, size, key, image))
    return 0;
  std::ostringstream os;
  writeCacheEntry(os, key, image);
  if (os.str() != file) {
    std::fprintf(stderr, "an entry read back is not written the same\n");
    std::abort();
  }
  return 0;
}
