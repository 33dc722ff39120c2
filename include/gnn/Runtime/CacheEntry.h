//===- CacheEntry.h - the kernel cache's disk format -------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One kernel-cache entry on disk: a fixed header (magic, the 128-bit key
/// hash, the key and payload sizes, the payload hash), the full key text, then
/// the cubin. Split from the compiler so that the reader, which sees whatever
/// is on disk, can be tested and fuzzed without CUDA.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_CACHEENTRY_H
#define GNN_RUNTIME_CACHEENTRY_H

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace gnn {
namespace runtime {

/// FNV-1a, 64 bits, with a seed: two seeds give the 128-bit key hash.
uint64_t cacheHash(const char *data, size_t size, uint64_t seed);

/// The largest payload an entry may declare (2 GiB).
constexpr uint64_t kMaxCacheEntryPayload = uint64_t(1) << 31;

/// A cache key: its full text and its 128-bit hash.
struct CacheKey {
  std::string text;
  uint64_t a = 0, b = 0;
  /// Computes `a` and `b` from `text`.
  void hash();
  /// The 32 hex digits of the hash (the entry's file name).
  std::string hex() const;
};

/// Reads the entry for `key` open at the start of `is`, a file of `fileSize`
/// bytes, into `image`. False (and `image` unspecified) unless the magic, the
/// hash, the sizes (checked against `fileSize` before anything is allocated),
/// the key text and the payload hash all match.
bool readCacheEntry(std::istream &is, uint64_t fileSize, const CacheKey &key,
                    std::vector<char> &image);

/// Writes the entry for `key` holding `image` to `os`.
void writeCacheEntry(std::ostream &os, const CacheKey &key,
                     const std::vector<char> &image);

/// Why a cache directory (`directory`) or entry described by `st` (from
/// fstat on the open file) is not to be trusted, or empty when it is: it must
/// be a directory (an entry: a regular file) owned by the effective user and
/// not writable by group or others. Anyone else who can write it could plant
/// an entry, and an entry's checksum detects accidents, not writers.
std::string untrustedCacheFile(const struct stat &st, bool directory);

/// Reads the entry `dir/<key hex><suffix>` into `image`; false when there is
/// none or it does not match (readCacheEntry's checks). `dir` is opened
/// without following a symbolic link and must pass untrustedCacheFile; the
/// entry is opened without following a symbolic link or blocking, and must
/// be a regular file that passes untrustedCacheFile. A directory or entry
/// that fails is reported on stderr (once per process and directory) and
/// not used.
bool readCacheFile(const std::string &dir, const std::string &suffix,
                   const CacheKey &key, std::vector<char> &image);
/// Writes the entry `dir/<key hex><suffix>` atomically: a new private
/// temporary (O_EXCL, mode 0600) renamed into place, so concurrent processes
/// see the old entry or the new one, never a part. `dir` is created with mode
/// 0700 when missing and must then pass untrustedCacheFile. A directory that
/// cannot be written or is not trusted is reported once per process (and
/// directory) on stderr with the reason and otherwise ignored: a cache that
/// cannot be used is only a slower cache.
void writeCacheFile(const std::string &dir, const std::string &suffix,
                    const CacheKey &key, const std::vector<char> &image);

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_CACHEENTRY_H
