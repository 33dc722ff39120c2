//===- Tensor.cpp - dense host tensors and .npy files ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tensor/Tensor.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <new>
#include <sstream>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gnn;

namespace {
/// The blocks kept for reuse (allocateHostBlock): (class bytes, block), the
/// most recently freed last; and the bytes of large blocks in use.
struct HostReuse {
  std::mutex mutex;
  std::vector<std::pair<size_t, void *>> blocks;
  size_t bytes = 0;
  /// Bytes of the blocks handed out and not yet freed, and the most they
  /// have been (the limit on `bytes`, limitOf).
  size_t live = 0, peak = 0;
};
HostReuse &hostReuse();

/// fork() while another thread holds the lock would leave it held in the
/// child, whose first large tensor would then wait for ever (a DataLoader's
/// workers are forked): the forking thread takes the lock around fork, and
/// both processes release it.
void lockForFork() { hostReuse().mutex.lock(); }
void unlockAfterFork() { hostReuse().mutex.unlock(); }

/// (Never destroyed: tensors freed by other static destructors at exit
/// still find it.)
HostReuse &hostReuse() {
  static HostReuse *reuse = [] {
    auto *r = new HostReuse;
    pthread_atfork(lockForFork, unlockAfterFork, unlockAfterFork);
    return r;
  }();
  return *reuse;
}

/// Made while the library loads, before the program's threads can be in
/// the middle of making it: a fork() while another thread ran the static's
/// initialiser left its guard taken in the child, whose first large tensor
/// then waited in __cxa_guard_acquire for ever (and the fork handlers were
/// not registered yet). HostMemory.ForkWhileAnotherThreadAllocates... hung
/// so when its busy thread made the first large block.
[[maybe_unused]] const bool kHostReuseMade = (hostReuse(), true);

/// A quarter of the machine's memory (0 where it cannot be read).
size_t quarterOfMemory() {
  static const size_t quarter = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0
               ? static_cast<size_t>(pages) / 4 * static_cast<size_t>(page)
               : size_t(0);
  }();
  return quarter;
}

/// The most bytes kept now: what the blocks in use leave of their peak (at
/// most a quarter of the memory), so that kept and used blocks together
/// stay within the peak; at least kHostReuseBytes. Called with the lock
/// held.
size_t limitOf(const HostReuse &r) {
  size_t peak = r.peak;
  if (size_t quarter = quarterOfMemory())
    peak = std::min(peak, quarter);
  return std::max(kHostReuseBytes, peak > r.live ? peak - r.live : 0);
}

/// Takes the oldest kept blocks out of `r` until `more` bytes fit within
/// `limit`; appends them to `released` (freed outside the lock).
void dropOldest(HostReuse &r, size_t more, size_t limit,
                std::vector<void *> &released) {
  size_t drop = 0;
  while (drop < r.blocks.size() && r.bytes + more > limit) {
    released.push_back(r.blocks[drop].second);
    r.bytes -= r.blocks[drop].first;
    ++drop;
  }
  r.blocks.erase(r.blocks.begin(), r.blocks.begin() + drop);
}
} // namespace

size_t gnn::hostBlockBytes(size_t bytes) {
  if (bytes < kHostReuseMinBytes)
    return bytes;
  // A sixteenth of the largest power of two not above `bytes`.
  size_t granule = (size_t(1) << (63 - __builtin_clzll(bytes))) / 16;
  if (bytes > std::numeric_limits<size_t>::max() - granule)
    return bytes;
  return (bytes + granule - 1) / granule * granule;
}

void *gnn::allocateHostBlock(size_t bytes) {
  if (!kHostReuse || bytes < kHostReuseMinBytes)
    return ::operator new(bytes);
  size_t size = hostBlockBytes(bytes);
  HostReuse &r = hostReuse();
  std::vector<void *> released;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.live += size;
    r.peak = std::max(r.peak, r.live);
    for (size_t i = r.blocks.size(); i-- > 0;)
      if (r.blocks[i].first == size) {
        void *p = r.blocks[i].second;
        r.blocks.erase(r.blocks.begin() + i);
        r.bytes -= size;
        return p;
      }
    // None of this class: kept blocks of other sizes beyond what the
    // blocks in use now leave of the peak go back first (sizes that
    // change step to step do not pile up above the peak).
    dropOldest(r, 0, limitOf(r), released);
  }
  for (void *q : released)
    ::operator delete(q);
  try {
    return ::operator new(size);
  } catch (const std::bad_alloc &) {
    // The system refused: every kept block goes back to it, and the
    // request is tried once more.
    releaseHostBlocks();
    try {
      return ::operator new(size);
    } catch (const std::bad_alloc &) {
      std::lock_guard<std::mutex> lock(r.mutex);
      r.live -= size;
      throw;
    }
  }
}

void gnn::freeHostBlock(void *p, size_t bytes) {
  if (!kHostReuse || !p || bytes < kHostReuseMinBytes) {
    ::operator delete(p);
    return;
  }
  size_t size = hostBlockBytes(bytes);
  HostReuse &r = hostReuse();
  std::vector<void *> released;
  bool keep;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.live -= size;
    size_t limit = limitOf(r);
    keep = size <= limit;
    if (keep) {
      dropOldest(r, size, limit, released);
      r.blocks.emplace_back(size, p);
      r.bytes += size;
    }
  }
  for (void *q : released)
    ::operator delete(q);
  if (!keep)
    ::operator delete(p);
}

size_t gnn::hostReuseLimit() {
  HostReuse &r = hostReuse();
  std::lock_guard<std::mutex> lock(r.mutex);
  return limitOf(r);
}

size_t gnn::releaseHostBlocks() {
  HostReuse &r = hostReuse();
  std::vector<std::pair<size_t, void *>> all;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    all.swap(r.blocks);
    r.bytes = 0;
  }
  size_t bytes = 0;
  for (auto &[size, p] : all) {
    bytes += size;
    ::operator delete(p);
  }
  return bytes;
}

size_t gnn::hostBytesKept() {
  HostReuse &r = hostReuse();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.bytes;
}

std::string Tensor::shapeString() const { return shapeString(shape); }

std::string Tensor::shapeString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

int64_t Tensor::hostBytes(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return -1;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(sizeof(double)), &bytes))
    return -1;
  return bytes;
}

std::string gnn::writeNpy(const std::string &path, const Tensor &t,
                          NpyType type) {
  std::ostringstream dict;
  dict << "{'descr': '"
       << (type == NpyType::Float32   ? "<f4"
           : type == NpyType::Float64 ? "<f8"
                                      : "<i8")
       << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i)
    dict << t.shape[i] << (t.shape.size() == 1 || i + 1 < t.shape.size() ? "," : "");
  dict << "), }";
  std::string header = dict.str();
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  errno = 0;
  std::ofstream os(path, std::ios::binary);
  if (!os)
    return "cannot write '" + path + "': " +
           (errno ? std::strerror(errno) : "cannot open it");
  os.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  os.put(static_cast<char>(len & 0xff)).put(static_cast<char>(len >> 8));
  os.write(header.data(), header.size());
  if (type == NpyType::Float64) {
    os.write(reinterpret_cast<const char *>(t.data.data()),
             t.data.size() * sizeof(double));
  } else if (type == NpyType::Int64) {
    std::vector<int64_t> v(t.data.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<int64_t>(std::llround(t.data[i]));
    os.write(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(int64_t));
  } else {
    std::vector<float> f(t.data.begin(), t.data.end());
    os.write(reinterpret_cast<const char *>(f.data()), f.size() * sizeof(float));
  }
  return closeWrittenFile(os, path);
}

std::string gnn::closeWrittenFile(std::ofstream &os, const std::string &path) {
  // The data may sit in the stream's buffer until it is closed: a full disk
  // (or /dev/full) shows up only then.
  errno = 0;
  os.close();
  if (os)
    return "";
  std::string reason = errno ? std::strerror(errno) : "the write failed";
  // A file that was not written whole is removed (not a device or a FIFO).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    std::remove(path.c_str());
  return "cannot write '" + path + "': " + reason;
}

uint64_t NpyHeader::itemSize() const {
  size_t digits = descr.find_first_of("0123456789");
  return digits == std::string::npos
             ? 0
             : std::strtoull(descr.c_str() + digits, nullptr, 10);
}

std::string NpyHeader::dtypeName() const {
  if (descr.size() < 3)
    return descr;
  uint64_t bits = itemSize() * 8;
  switch (descr[1]) {
  case 'f':
    return "float" + std::to_string(bits);
  case 'i':
    return "int" + std::to_string(bits);
  case 'u':
    return "uint" + std::to_string(bits);
  case 'b':
    return "bool";
  case 'c':
    return "complex" + std::to_string(bits);
  default:
    return descr;
  }
}

//===----------------------------------------------------------------------===//
// Regular files, opened without blocking
//===----------------------------------------------------------------------===//

std::string gnn::describeFileType(unsigned mode) {
  switch (mode & S_IFMT) {
  case S_IFREG:
    return "a regular file";
  case S_IFDIR:
    return "a folder";
  case S_IFIFO:
    return "a FIFO";
  case S_IFSOCK:
    return "a socket";
  case S_IFCHR:
    return "a character device";
  case S_IFBLK:
    return "a block device";
  case S_IFLNK:
    return "a symbolic link";
  default:
    return "an entry of unknown type";
  }
}

/// A read buffer over a file descriptor, seekable (for tellg/seekg).
class ReadableFile::Buffer : public std::streambuf {
public:
  explicit Buffer(int fd) : fd(fd), data(1 << 16) {}

protected:
  int_type underflow() override {
    if (gptr() < egptr())
      return traits_type::to_int_type(*gptr());
    ssize_t n = readSome(data.data(), data.size());
    if (n <= 0)
      return traits_type::eof();
    setg(data.data(), data.data(), data.data() + n);
    return traits_type::to_int_type(*gptr());
  }

  std::streamsize xsgetn(char *out, std::streamsize count) override {
    // What is buffered, then large reads straight into `out`.
    std::streamsize done = std::min<std::streamsize>(count, egptr() - gptr());
    if (done > 0) { // before the first read the get area is null
      std::memcpy(out, gptr(), done);
      gbump(static_cast<int>(done));
    }
    while (done < count) {
      ssize_t n = readSome(out + done, static_cast<size_t>(count - done));
      if (n <= 0)
        break;
      done += n;
    }
    return done;
  }

  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode) override {
    off_t target;
    if (dir == std::ios_base::cur) {
      off_t here = ::lseek(fd, 0, SEEK_CUR);
      if (here < 0)
        return pos_type(off_type(-1));
      target = here - (egptr() - gptr()) + off;
      dir = std::ios_base::beg;
      off = target;
    }
    off_t r = ::lseek(fd, off, dir == std::ios_base::beg ? SEEK_SET : SEEK_END);
    setg(data.data(), data.data(), data.data());
    return r < 0 ? pos_type(off_type(-1)) : pos_type(off_type(r));
  }

  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }

private:
  ssize_t readSome(char *out, size_t count) {
    ssize_t n;
    do
      n = ::read(fd, out, std::min<size_t>(count, size_t(1) << 30));
    while (n < 0 && errno == EINTR);
    return n;
  }

  int fd;
  std::vector<char> data;
};

ReadableFile::ReadableFile() = default;

ReadableFile::~ReadableFile() {
  input.reset();
  buffer.reset();
  if (descriptor >= 0)
    ::close(descriptor);
}

std::string ReadableFile::open(const std::string &path) {
  if (descriptor >= 0) {
    input.reset();
    buffer.reset();
    ::close(descriptor);
  }
  descriptor = -1;
  // O_NONBLOCK: opening a FIFO without a writer would wait forever. It does
  // nothing for regular files, and is cleared once the type is known.
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return "cannot open '" + path + "': " + std::strerror(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string reason = std::strerror(errno);
    ::close(fd);
    return "cannot open '" + path + "': " + reason;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return "'" + path + "' is " + describeFileType(st.st_mode) +
           ", not a regular file";
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  descriptor = fd;
  bytes = static_cast<uint64_t>(st.st_size);
  return "";
}

std::istream &ReadableFile::stream() {
  if (!input) {
    buffer = std::make_unique<Buffer>(descriptor);
    input = std::make_unique<std::istream>(buffer.get());
  }
  return *input;
}

int ReadableFile::release() {
  input.reset();
  buffer.reset();
  int fd = descriptor;
  descriptor = -1;
  return fd;
}

//===----------------------------------------------------------------------===//
// .npy headers
//===----------------------------------------------------------------------===//

namespace {
/// A strict parser of the Python dict literal of a `.npy` header (see
/// parseNpyHeaderDict). Offsets in messages are `base` plus the position in
/// `text`.
class HeaderDict {
public:
  HeaderDict(const std::string &text, uint64_t base) : text(text), base(base) {}

  std::string parse(NpyHeader &h) {
    size_t keyAt[3] = {npos, npos, npos};
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    skipSpace();
    if (!take('{'))
      return expected("malformed header", "'{'");
    skipSpace();
    while (!peek('}')) {
      size_t at = pos;
      std::string key;
      if (!quoted(key))
        return expected("malformed header", "a key ('descr', 'fortran_order' "
                                            "or 'shape') or '}'");
      int k = key == keys[0] ? 0 : key == keys[1] ? 1 : key == keys[2] ? 2 : -1;
      if (k < 0)
        return problem(at, "malformed header",
                       "unknown key '" + printable(key) +
                           "' (expected 'descr', 'fortran_order' or 'shape')");
      if (keyAt[k] != npos)
        return problem(at, "malformed header",
                       "the key '" + key + "' is repeated (first at byte " +
                          std::to_string(base + keyAt[k]) + ")");
      keyAt[k] = at;
      skipSpace();
      if (!take(':'))
        return expected("malformed header", "':' after '" + key + "'");
      skipSpace();
      if (k == 0 && !quoted(h.descr))
        return expected("malformed descr in header",
                        "a dtype string such as '<f4'");
      if (k == 1 && !boolean(h.fortranOrder))
        return expected("malformed fortran_order in header", "True or False");
      if (k == 2) {
        std::string error = shape(h.shape);
        if (!error.empty())
          return error;
      }
      skipSpace();
      if (take(',')) {
        skipSpace();
        continue;
      }
      if (!peek('}'))
        return expected("malformed header", "',' or '}'");
    }
    ++pos;
    for (int k = 0; k < 3; ++k)
      if (keyAt[k] == npos)
        return problem(pos - 1, "malformed header",
                       "the key '" + std::string(keys[k]) + "' is missing");
    skipSpace();
    if (pos != text.size())
      return expected("malformed header",
                      "only spaces and a newline after the dict");
    return "";
  }

private:
  static constexpr size_t npos = std::string::npos;

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool peek(char c) const { return pos < text.size() && text[pos] == c; }
  bool take(char c) {
    if (!peek(c))
      return false;
    ++pos;
    return true;
  }
  /// A string in single or double quotes, without escapes.
  bool quoted(std::string &out) {
    if (!peek('\'') && !peek('"'))
      return false;
    char q = text[pos];
    size_t close = pos + 1;
    while (close < text.size() && text[close] != q && text[close] != '\\' &&
           text[close] != '\n')
      ++close;
    if (close == text.size() || text[close] != q)
      return false;
    out = text.substr(pos + 1, close - pos - 1);
    pos = close + 1;
    return true;
  }
  bool boolean(bool &out) {
    for (const char *word : {"True", "False"}) {
      size_t n = std::strlen(word);
      if (text.compare(pos, n, word) == 0 &&
          (pos + n == text.size() ||
           !(std::isalnum(static_cast<unsigned char>(text[pos + n])) ||
             text[pos + n] == '_'))) {
        out = word[0] == 'T';
        pos += n;
        return true;
      }
    }
    return false;
  }
  /// `(3, 4)`, `(3,)` or `()`: a Python tuple of nonnegative integers.
  std::string shape(std::vector<int64_t> &out) {
    const char *what = "malformed shape in header";
    out.clear();
    if (!take('('))
      return expected(what, "a tuple such as (3, 4)");
    skipSpace();
    bool trailingComma = false;
    while (!take(')')) {
      size_t at = pos;
      size_t digits = pos;
      while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
      if (digits == pos)
        return expected(what, out.empty() ? "a nonnegative integer or ')'"
                                          : "a nonnegative integer");
      if (text[pos] == '0' && digits - pos > 1)
        return expected(what, "an integer without leading zeros");
      uint64_t d = 0;
      for (size_t i = pos; i < digits; ++i) {
        if (d > (uint64_t(std::numeric_limits<int64_t>::max()) - (text[i] - '0')) / 10)
          return problem(at, what,
                         "expected a dimension below 2^63 but found '" +
                             text.substr(pos, digits - pos) + "'");
        d = d * 10 + (text[i] - '0');
      }
      pos = digits;
      take('L'); // Python 2's long suffix, as NumPy still reads.
      out.push_back(static_cast<int64_t>(d));
      skipSpace();
      trailingComma = take(',');
      skipSpace();
      if (!trailingComma && !peek(')'))
        return expected(what, "',' or ')'");
    }
    // `(3)` is the integer 3 in Python, not a tuple.
    if (out.size() == 1 && !trailingComma)
      return problem(pos - 1, what,
                     "expected a tuple such as (3,) but found an integer in "
                     "parentheses");
    return "";
  }

  /// A short, printable excerpt of the text at `at`.
  std::string foundAt(size_t at) const {
    if (at >= text.size())
      return "the end of the header";
    return "'" + printable(text.substr(at, 16)) +
           (text.size() - at > 16 ? "...'" : "'");
  }
  static std::string printable(const std::string &s) {
    std::string out;
    for (unsigned char c : s) {
      if (c >= 0x20 && c < 0x7f && c != '\\') {
        out += static_cast<char>(c);
      } else {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "\\x%02x", c);
        out += hex;
      }
    }
    return out;
  }
  /// `WHAT at byte K: expected EXPECTATION but found '...'`, at `pos`.
  std::string expected(const std::string &what,
                       const std::string &expectation) const {
    return problem(pos, what,
                   "expected " + expectation + " but found " + foundAt(pos));
  }
  /// `WHAT at byte K: MESSAGE`.
  std::string problem(size_t at, const std::string &what,
                      const std::string &message) const {
    return what + " at byte " + std::to_string(base + at) + ": " + message;
  }

  const std::string &text;
  uint64_t base;
  size_t pos = 0;
};
} // namespace

std::string gnn::parseNpyHeaderDict(const std::string &text, NpyHeader &h) {
  return HeaderDict(text, 0).parse(h);
}

std::string gnn::readNpyHeader(std::istream &is, const std::string &path,
                               NpyHeader &h) {
  char magic[8];
  if (!is.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return "'" + path + "' is not a .npy file";
  int version = static_cast<unsigned char>(magic[6]);
  if (version < 1 || version > 3)
    return "'" + path + "': unsupported .npy format version " +
           std::to_string(version);
  // Version 1 stores the header length in 2 bytes, later versions in 4.
  unsigned char l[4] = {0, 0, 0, 0};
  size_t lenBytes = version == 1 ? 2 : 4;
  if (!is.read(reinterpret_cast<char *>(l), lenBytes))
    return "'" + path + "': truncated header";
  size_t len = l[0] | (l[1] << 8) | (l[2] << 16) | (size_t(l[3]) << 24);
  // The length is checked before anything is allocated for it: against what
  // is left of the stream, and against a bound far above any real header
  // (numpy writes a few hundred bytes and reads at most 10,000 by default).
  std::streampos here = is.tellg();
  is.seekg(0, std::ios::end);
  std::streampos end = is.tellg();
  is.seekg(here);
  if (here < 0 || end < here || !is)
    return "'" + path + "': cannot tell the size of the file";
  uint64_t left = static_cast<uint64_t>(end - here);
  if (len > kMaxNpyHeaderBytes || len > left)
    return "'" + path + "': truncated header (" + std::to_string(len) +
           " bytes declared, " + std::to_string(left) + " left in the file" +
           (len > kMaxNpyHeaderBytes
                ? ", at most " + std::to_string(kMaxNpyHeaderBytes) + " read"
                : std::string()) +
           ")";
  std::string header(len, '\0');
  if (!is.read(header.data(), len))
    return "'" + path + "': truncated header (" + std::to_string(len) +
           " bytes declared)";
  h.dataOffset = 8 + lenBytes + len;

  // The header is a Python dict literal:
  //   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
  // parsed strictly: NumPy would read another array from a header with a
  // repeated key (it keeps the last one).
  std::string error = HeaderDict(header, h.dataOffset - len).parse(h);
  if (!error.empty())
    return "'" + path + "': " + error;
  return "";
}

std::string gnn::readNpy(
    const std::string &path, Tensor &t,
    const std::function<std::string(const std::vector<int64_t> &)>
        &checkShape) {
  // A FIFO or a device is refused, not waited on.
  ReadableFile file;
  if (std::string error = file.open(path); !error.empty())
    return error;
  std::istream &is = file.stream();
  NpyHeader h;
  std::string error = readNpyHeader(is, path, h);
  if (!error.empty())
    return error;
  bool f32 = h.descr == "<f4";
  bool f64 = h.descr == "<f8";
  // A big-endian float is named as such: its dtype name alone (float32)
  // would read as what was expected.
  if (h.descr == ">f4" || h.descr == ">f8")
    return "'" + path + "': expected little-endian float32 or float64 data " +
           "('<f4' or '<f8') but the dtype is '" + h.descr + "' (big-endian)";
  if (!f32 && !f64)
    return "'" + path + "': expected float32 or float64 data but found " +
           h.dtypeName() + " ('" + h.descr + "')";
  if (h.fortranOrder)
    return "'" + path + "': expected C order but the file is Fortran order";
  // The payload must be exactly what the shape says, before anything is
  // allocated for it: a header may claim any shape.
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : h.shape)
    overflow |= __builtin_mul_overflow(n, d, &n);
  uint64_t itemBytes = f32 ? sizeof(float) : sizeof(double);
  uint64_t expected = 0;
  overflow |= __builtin_mul_overflow(static_cast<uint64_t>(n), itemBytes,
                                     &expected);
  is.seekg(0, std::ios::end);
  std::streampos end = is.tellg();
  is.seekg(static_cast<std::streamoff>(h.dataOffset));
  if (end < 0 || !is)
    return "'" + path + "': cannot tell the size of the file";
  uint64_t found = static_cast<uint64_t>(end) - h.dataOffset;
  std::string shape = Tensor::shapeString(h.shape);
  if (overflow)
    return "'" + path + "': shape " + shape + " of " + h.dtypeName() +
           " holds more than 2^63 elements but the file has " +
           std::to_string(found) + " payload bytes";
  if (found < expected)
    return "'" + path + "': data shorter than its shape " + shape + ": " +
           std::to_string(expected) + " payload bytes expected but " +
           std::to_string(found) + " found";
  if (found > expected)
    return "'" + path + "': " + std::to_string(found) +
           " payload bytes but its shape " + shape + " of " + h.dtypeName() +
           " holds " + std::to_string(expected);
  if (checkShape)
    if (std::string error = checkShape(h.shape); !error.empty())
      return error;
  t.shape = h.shape;
  t.data.resize(n);
  if (f64) {
    is.read(reinterpret_cast<char *>(t.data.data()), n * sizeof(double));
  } else {
    std::vector<float> f(n);
    is.read(reinterpret_cast<char *>(f.data()), n * sizeof(float));
    t.data.assign(f.begin(), f.end());
  }
  if (!is)
    return "'" + path + "': data shorter than its shape " + t.shapeString();
  return "";
}
