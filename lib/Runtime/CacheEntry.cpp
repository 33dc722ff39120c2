//===- CacheEntry.cpp - the kernel cache's disk format ----------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/CacheEntry.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

using namespace gnn::runtime;

uint64_t gnn::runtime::cacheHash(const char *data, size_t size,
                                 uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

void CacheKey::hash() {
  a = cacheHash(text.data(), text.size(), 0);
  b = cacheHash(text.data(), text.size(), 0x9e3779b97f4a7c15ull);
}

std::string CacheKey::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

namespace {
constexpr char kMagic[8] = {'G', 'N', 'N', 'C', 'C', 'U', 'B', '1'};

/// The fixed-size header in front of every entry.
struct EntryHeader {
  char magic[8];
  uint64_t keyA, keyB, keySize, payloadSize, payloadHash;
};
} // namespace

bool gnn::runtime::readCacheEntry(std::istream &is, uint64_t fileSize,
                                  const CacheKey &key,
                                  std::vector<char> &image) {
  EntryHeader h;
  if (!is.read(reinterpret_cast<char *>(&h), sizeof(h)) ||
      std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.keyA != key.a ||
      h.keyB != key.b || h.keySize != key.text.size() ||
      h.payloadSize > kMaxCacheEntryPayload ||
      fileSize != sizeof(h) + h.keySize + h.payloadSize)
    return false;
  // The full key text follows the header: compare it, no hash collisions.
  std::string stored(h.keySize, '\0');
  if (!is.read(stored.data(), h.keySize) || stored != key.text)
    return false;
  image.resize(h.payloadSize);
  if (!is.read(image.data(), h.payloadSize) ||
      is.peek() != std::char_traits<char>::eof())
    return false;
  return cacheHash(image.data(), image.size(), 0) == h.payloadHash;
}

void gnn::runtime::writeCacheEntry(std::ostream &os, const CacheKey &key,
                                   const std::vector<char> &image) {
  EntryHeader h;
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.keyA = key.a;
  h.keyB = key.b;
  h.keySize = key.text.size();
  h.payloadSize = image.size();
  h.payloadHash = cacheHash(image.data(), image.size(), 0);
  os.write(reinterpret_cast<const char *>(&h), sizeof(h));
  os.write(key.text.data(), key.text.size());
  os.write(image.data(), image.size());
}

bool gnn::runtime::readCacheFile(const std::string &dir,
                                 const std::string &suffix,
                                 const CacheKey &key, std::vector<char> &image) {
  namespace fs = std::filesystem;
  std::string path = dir + "/" + key.hex() + suffix;
  // Only a regular file is read (opening a FIFO would block forever), and
  // its sizes are checked against the file before anything is allocated.
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return false;
  uint64_t fileSize = fs::file_size(path, ec);
  if (ec)
    return false;
  std::ifstream is(path, std::ios::binary);
  return is && readCacheEntry(is, fileSize, key, image);
}

/// Says once per process that the cache directory cannot be written: the
/// work is still done, every time, which the user should know.
static void warnUnusableCache(const std::string &dir, const std::string &why) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true))
    return;
  std::fprintf(stderr,
               "gnnc: warning: the cache '%s' cannot be written (%s); "
               "kernels are compiled and schedules tuned every time (set "
               "GNNC_CACHE_DIR)\n",
               dir.c_str(), why.c_str());
}

void gnn::runtime::writeCacheFile(const std::string &dir,
                                  const std::string &suffix,
                                  const CacheKey &key,
                                  const std::vector<char> &image) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    warnUnusableCache(dir, ec ? ec.message() : "not a directory");
    return;
  }
  std::string path = dir + "/" + key.hex() + suffix;
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." +
                    std::to_string(rd());
  {
    std::ofstream os(tmp, std::ios::binary);
    writeCacheEntry(os, key, image);
    if (!os) {
      fs::remove(tmp, ec);
      warnUnusableCache(dir, std::strerror(errno));
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    warnUnusableCache(dir, std::strerror(errno));
    fs::remove(tmp, ec);
  }
}
