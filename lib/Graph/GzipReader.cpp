//===- GzipReader.cpp - gzip or plain text, decompressed as a stream ------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/GzipReader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include <unistd.h>

using namespace gnn;

/// The bytes read from the file at a time.
constexpr size_t kInputBlockBytes = size_t(1) << 16;

class GzipReader::Impl {
public:
  Impl() : input(kInputBlockBytes) {}
  ~Impl() {
    if (inflating)
      inflateEnd(&stream);
    if (fd >= 0)
      ::close(fd);
  }

  void open(int descriptor, const std::string &name) {
    fd = descriptor;
    path = name;
  }

  int64_t read(char *out, size_t size, std::string &error) {
    for (;;) {
      switch (state) {
      case State::Start:
        // Compressed when the file starts with gzip's magic bytes.
        if (!fill(2, error))
          return -1;
        if (available() >= 2 && startsMember()) {
          if (!beginMember(error))
            return -1;
        } else {
          state = State::Plain;
        }
        break;
      case State::Plain: {
        if (available() == 0 && !fill(1, error))
          return -1;
        size_t n = std::min(size, available());
        std::memcpy(out, input.data() + begin, n);
        begin += n;
        return static_cast<int64_t>(n);
      }
      case State::Member: {
        if (available() == 0 && !fill(1, error))
          return -1;
        int64_t n = inflateSome(out, size, error);
        if (n != 0)
          return n;
        break;
      }
      case State::Between:
        // Another member, zero padding to the end, or nothing: the end.
        if (!fill(2, error))
          return -1;
        if (available() == 0) {
          state = State::Done;
          return 0;
        }
        if (input[begin] == 0x1f &&
            (available() == 1 || input[begin + 1] == 0x8b)) {
          // A lone 0x1f at the end is a truncated member, as for gzip.
          if (!beginMember(error))
            return -1;
          break;
        }
        if (!skipZeroPadding(error))
          return -1;
        state = State::Done;
        return 0;
      case State::Done:
        return 0;
      }
    }
  }

private:
  enum class State { Start, Plain, Member, Between, Done };

  size_t available() const { return end - begin; }
  /// The offset in the file of the next byte to decode.
  uint64_t offset() const { return base + begin; }
  bool startsMember() const {
    return input[begin] == 0x1f && input[begin + 1] == 0x8b;
  }

  /// Reads until `want` bytes are buffered or the file ends.
  bool fill(size_t want, std::string &error) {
    while (available() < want && !atEnd) {
      if (begin > 0) {
        std::memmove(input.data(), input.data() + begin, available());
        base += begin;
        end -= begin;
        begin = 0;
      }
      ssize_t n;
      do
        n = ::read(fd, input.data() + end, input.size() - end);
      while (n < 0 && errno == EINTR);
      if (n < 0) {
        error = "cannot read '" + path + "': " + std::strerror(errno);
        return false;
      }
      atEnd = n == 0;
      end += static_cast<size_t>(n);
    }
    return true;
  }

  bool beginMember(std::string &error) {
    memberStart = offset();
    int status = inflating ? inflateReset(&stream)
                           : inflateInit2(&stream, 16 + MAX_WBITS);
    if (status != Z_OK) {
      error = "cannot read '" + path + "': out of memory";
      return false;
    }
    inflating = true;
    state = State::Member;
    return true;
  }

  /// Decompresses what is buffered into `out`: the bytes produced (0 when
  /// more input is needed, or the member ended), or -1 on an error.
  int64_t inflateSome(char *out, size_t size, std::string &error) {
    size_t had = available();
    stream.next_in = input.data() + begin;
    stream.avail_in = static_cast<uInt>(had);
    stream.next_out = reinterpret_cast<Bytef *>(out);
    stream.avail_out = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    uInt room = stream.avail_out;
    int status = inflate(&stream, Z_NO_FLUSH);
    begin += had - stream.avail_in;
    int64_t produced = room - stream.avail_out;
    if (status == Z_STREAM_END) {
      state = State::Between;
      return produced;
    }
    if (status == Z_OK || status == Z_BUF_ERROR) {
      if (produced == 0 && available() == 0 && atEnd) {
        error = "cannot read '" + path + "': unexpected end of file";
        return -1;
      }
      return produced;
    }
    error = "cannot read '" + path + "': " +
            (stream.msg ? stream.msg : "damaged compressed data") +
            " (in the gzip member at byte " + std::to_string(memberStart) +
            ")";
    return -1;
  }

  /// Skips the zero bytes to the end of the file; anything else is an
  /// error naming where the data after the last member starts.
  bool skipZeroPadding(std::string &error) {
    uint64_t trailing = offset();
    for (;;) {
      for (; begin < end; ++begin)
        if (input[begin] != 0) {
          error = "cannot read '" + path + "': trailing garbage at byte " +
                  std::to_string(trailing) +
                  " after the gzip data (neither another gzip member nor " +
                  "zero padding; the first nonzero byte is at byte " +
                  std::to_string(offset()) + ")";
          return false;
        }
      if (atEnd)
        return true;
      if (!fill(1, error))
        return false;
    }
  }

  int fd = -1;
  std::string path;
  std::vector<unsigned char> input;
  /// The buffered bytes are input[begin, end); input[0] is at `base` in the
  /// file.
  size_t begin = 0, end = 0;
  uint64_t base = 0;
  bool atEnd = false;
  State state = State::Start;
  z_stream stream{};
  bool inflating = false;
  uint64_t memberStart = 0;
};

GzipReader::GzipReader() : impl(std::make_unique<Impl>()) {}
GzipReader::~GzipReader() = default;

void GzipReader::open(int fd, const std::string &path) { impl->open(fd, path); }

int64_t GzipReader::read(char *out, size_t size, std::string &error) {
  return impl->read(out, size, error);
}
