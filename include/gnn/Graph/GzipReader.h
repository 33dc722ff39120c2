//===- GzipReader.h - gzip or plain text, decompressed as a stream -*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reads a file that is either gzip-compressed or plain, as a stream of
/// bytes, and accepts exactly the compressed files `gzip -t` accepts without
/// a warning: any number of concatenated gzip members, optionally followed
/// by zero bytes (padding). Anything else after the last member is an error
/// naming the file and the byte offset where it starts (zlib's `gzread`
/// ignores such trailing garbage, and a truncated member after it, without
/// a word). A file that does not start with the gzip magic bytes is read as
/// it is.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_GRAPH_GZIPREADER_H
#define GNN_GRAPH_GZIPREADER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gnn {

/// A gzip-compressed or plain file read as a stream (see the file comment).
class GzipReader {
public:
  GzipReader();
  ~GzipReader();
  GzipReader(const GzipReader &) = delete;
  GzipReader &operator=(const GzipReader &) = delete;

  /// Takes `fd` (open for reading at the first byte to read; closed by the
  /// reader); `path` names it in messages.
  void open(int fd, const std::string &path);

  /// Reads up to `size` bytes (decompressed) into `out`. Returns the number
  /// read, 0 at the end of the data, or -1 on an error, then in `error`:
  /// `cannot read 'PATH': REASON`, e.g. `unexpected end of file` (a
  /// truncated member), zlib's reason for damaged data (`invalid block
  /// type`) with the byte offset, or `trailing garbage after the gzip data
  /// at byte K (not gzip data and not zero padding)`.
  int64_t read(char *out, size_t size, std::string &error);

private:
  class Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace gnn

#endif // GNN_GRAPH_GZIPREADER_H
