//===- CacheEntryTest.cpp - the kernel cache's disk format ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/CacheEntry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

using namespace gnn::runtime;

namespace {

CacheKey makeKey(std::string text) {
  CacheKey key;
  key.text = std::move(text);
  key.hash();
  return key;
}

std::string entry(const CacheKey &key, const std::vector<char> &image) {
  std::ostringstream os;
  writeCacheEntry(os, key, image);
  return os.str();
}

bool read(const std::string &file, const CacheKey &key,
          std::vector<char> &image) {
  std::istringstream is(file);
  return readCacheEntry(is, file.size(), key, image);
}

} // namespace

TEST(CacheEntry, RoundTrip) {
  CacheKey key = makeKey("arch=sm_90\nsource=\nk");
  EXPECT_EQ(key.hex().size(), 32u);
  std::vector<char> image = {'\x7f', 'E', 'L', 'F', '\0', 'x'}, out;
  std::string file = entry(key, image);
  EXPECT_EQ(file.size(), 48 + key.text.size() + image.size());
  ASSERT_TRUE(read(file, key, out));
  EXPECT_EQ(out, image);
  ASSERT_TRUE(read(entry(key, {}), key, out));
  EXPECT_TRUE(out.empty());
}

TEST(CacheEntry, RejectsEveryCorruption) {
  CacheKey key = makeKey("arch=sm_90\nsource=\nk");
  std::vector<char> image(100, 'c'), out;
  std::string file = entry(key, image);
  // Another key, even of the same hash, is not this entry.
  CacheKey other = key;
  other.text.back() = 'q';
  EXPECT_FALSE(read(file, other, out));
  // Truncated anywhere, one byte longer, or any byte flipped.
  for (size_t n = 0; n < file.size(); ++n)
    EXPECT_FALSE(read(file.substr(0, n), key, out)) << n;
  EXPECT_FALSE(read(file + "x", key, out));
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] ^= 1;
    EXPECT_FALSE(read(bad, key, out)) << i;
  }
  // A declared payload beyond the limit is refused before allocating.
  std::string huge = file;
  uint64_t size = kMaxCacheEntryPayload + 1;
  std::memcpy(huge.data() + 32, &size, 8);
  EXPECT_FALSE(read(huge, key, out));
}
