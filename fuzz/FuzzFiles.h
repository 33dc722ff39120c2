//===- FuzzFiles.h - scratch files for the fuzz targets ----------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The readers under test take paths: each fuzz input is written to a file
/// in one scratch folder per process, removed at exit.
///
//===----------------------------------------------------------------------===//

#ifndef GNNC_FUZZ_FUZZFILES_H
#define GNNC_FUZZ_FUZZFILES_H

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gnn {
namespace fuzz {

/// The process's scratch folder (created on first use, removed at exit).
inline const std::filesystem::path &scratchDir() {
  static std::filesystem::path dir = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gnnc-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratchDir(), ec);
    });
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

/// Writes `size` bytes to `path`, replacing it.
inline void writeFile(const std::filesystem::path &path, const void *data,
                      size_t size) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os.write(static_cast<const char *>(data), size);
  if (!os)
    std::abort();
}

/// Writes `size` bytes gzip-compressed to `path`, replacing it.
inline void writeGzip(const std::filesystem::path &path, const void *data,
                      size_t size) {
  gzFile f = gzopen(path.c_str(), "wb1");
  if (!f || (size && gzwrite(f, data, unsigned(size)) != int(size)) ||
      gzclose(f) != Z_OK)
    std::abort();
}

} // namespace fuzz
} // namespace gnn

#endif // GNNC_FUZZ_FUZZFILES_H
