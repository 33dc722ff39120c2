//===- Tensor.h - dense host tensors and .npy files ---------------*- C++ -*-===//
//
// Part of gnnc. No MLIR: shared by the reference evaluator, the tools and
// tests.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A dense row-major tensor of doubles, the value type of the reference
/// evaluator, and reading/writing it as NumPy `.npy` files (float32 or
/// float64, C order), so inputs and outputs can be exchanged with PyTorch.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_TENSOR_TENSOR_H
#define GNN_TENSOR_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <istream>
#include <memory>
#include <streambuf>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gnn {

/// Host memory for tensors' data (HostAllocator). Blocks of at least
/// kHostReuseMinBytes are made in size classes (a sixteenth of the size's
/// power of two apart, so at most 1/16 more than asked); those freed are
/// kept, the most recently freed first, and handed out again for the next
/// request of the same class; smaller requests go to the system. A
/// training loop on the CPU path evaluates functions of the same shapes
/// step after step: without this, each step's large tensors were fresh
/// memory from the system, and faulting its pages in cost more than the
/// arithmetic (a GCNConv forward on Cora: 5 ms of 10; a GINEConv step on
/// 200,000 edges: a fifth of it).
/// At most hostReuseLimit() bytes are kept: what the blocks in use leave
/// of the most the process has had in such blocks at once (that peak at
/// most a quarter of the machine's memory; the limit at least
/// kHostReuseBytes), also when a request finds no block of its class and
/// older kept blocks go back to the system first: a step's freed blocks
/// cover the next one's, and kept and used blocks together do not raise the
/// process's peak by more than kHostReuseBytes (sizes that change from
/// step to step included). At the end of the last step that much stays
/// with the process; releaseHostBlocks() gives it back. Thread-safe, also
/// across fork(). Off under AddressSanitizer, so that it still finds uses
/// of a freed tensor's memory.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kHostReuse = false;
#else
constexpr bool kHostReuse = true;
#endif
constexpr size_t kHostReuseMinBytes = size_t(1) << 20;
constexpr size_t kHostReuseBytes = size_t(256) << 20;
void *allocateHostBlock(size_t bytes);
void freeHostBlock(void *p, size_t bytes);
/// The bytes a request of `bytes` is given (its size class; `bytes` itself
/// below kHostReuseMinBytes).
size_t hostBlockBytes(size_t bytes);
/// The most bytes kept for reuse now (see allocateHostBlock).
size_t hostReuseLimit();
/// Gives every kept block back to the system; returns their bytes.
size_t releaseHostBlocks();
/// The bytes kept for reuse now (for tests).
size_t hostBytesKept();

/// The allocator of Tensor::data: allocateHostBlock / freeHostBlock.
template <typename T> struct HostAllocator {
  using value_type = T;
  using is_always_equal = std::true_type;
  HostAllocator() = default;
  template <typename U> HostAllocator(const HostAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(allocateHostBlock(n * sizeof(T)));
  }
  void deallocate(T *p, size_t n) { freeHostBlock(p, n * sizeof(T)); }
  /// Elements made without a value are left unset (a default-initialised
  /// double), not zeroed: `resize(n)` and `HostDoubles(n)` cost no pass
  /// over the memory, for buffers written whole next (Tensor::uninitialized).
  /// `assign(n, v)`, `Tensor(shape)` and copies set every element.
  template <typename U> void construct(U *p) noexcept {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U> bool operator==(const HostAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const HostAllocator<U> &) const {
    return false;
  }
};

/// A tensor's values.
using HostDoubles = std::vector<double, HostAllocator<double>>;

/// A dense row-major tensor of doubles.
struct Tensor {
  std::vector<int64_t> shape;
  HostDoubles data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> shape, double fill = 0.0)
      : shape(std::move(shape)) {
    data.assign(numElements(), fill);
  }
  /// A tensor of `shape` whose values are unset: for one that is written
  /// whole before anything reads it (no pass over fresh memory to zero it).
  static Tensor uninitialized(std::vector<int64_t> shape) {
    Tensor t;
    t.shape = std::move(shape);
    t.data.resize(t.numElements());
    return t;
  }

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  /// Number of elements of one leading-index row (product of trailing dims).
  int64_t rowSize() const {
    int64_t n = 1;
    for (size_t i = 1; i < shape.size(); ++i)
      n *= shape[i];
    return n;
  }
  /// `[2708, 16]`.
  std::string shapeString() const;
  /// `[2708, 16]` for `shape`.
  static std::string shapeString(const std::vector<int64_t> &shape);
  /// Bytes a tensor of `shape` holds on the host (doubles), or -1 when a
  /// dimension is negative or the count overflows int64. Check it before
  /// constructing a tensor whose shape comes from outside.
  static int64_t hostBytes(const std::vector<int64_t> &shape);
};

/// The longest `.npy` header read: 1 MiB, far above what numpy writes (a few
/// hundred bytes) or reads by default (10,000).
constexpr uint64_t kMaxNpyHeaderBytes = uint64_t(1) << 20;

/// Element type stored in a `.npy` file.
enum class NpyType { Float32, Float64, Int64 };

/// Writes `tensor` to `path` as a `.npy` file of `type` (Int64 rounds each
/// value to the nearest integer). Returns an empty
/// string on success, else the error.
std::string writeNpy(const std::string &path, const Tensor &tensor,
                     NpyType type);

/// Closes `os`, a file written to `path`, and says whether all of it was
/// written: an empty string, else the error (a full disk shows up only when
/// the buffer is flushed); a regular file not written whole is removed.
std::string closeWrittenFile(std::ofstream &os, const std::string &path);

/// The header of a `.npy` file (format versions 1 to 3).
struct NpyHeader {
  /// The dtype as written, e.g. `<f4` or `<i8`.
  std::string descr;
  /// Whether the payload is in Fortran (column-major) order.
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  /// Byte offset of the payload from the start of the file.
  uint64_t dataOffset = 0;

  /// Bytes per element (the digits of `descr`), or 0 when there are none.
  uint64_t itemSize() const;
  /// A readable name for `descr`: `float32`, `int64`, `bool`, else `descr`.
  std::string dtypeName() const;
};

/// Parses the text of a `.npy` header (the Python dict literal after the
/// length field) as strictly as NumPy, and stricter where NumPy is lenient:
///   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
/// Exactly the keys `descr` (a string), `fortran_order` (`True` or `False`)
/// and `shape` (a tuple of nonnegative decimal integers, `(3,)` for rank 1
/// and `()` for rank 0; an `L` suffix, as Python 2 wrote, is accepted), each
/// once, in any order; only whitespace after the closing brace. A repeated
/// key is refused (NumPy keeps the last one), as are unknown and missing
/// keys. Fills `descr`, `fortranOrder` and `shape` of `header`; returns an
/// empty string on success, else the problem and the byte offset in `text`
/// where it is (`at byte K: ...`).
std::string parseNpyHeaderDict(const std::string &text, NpyHeader &header);

/// Reads and parses the header of the `.npy` file open at the start of `is`,
/// leaving `is` at the first payload byte. Returns an empty string on
/// success, else an error naming `path` and the problem (for the dict, the
/// byte offset in the file).
std::string readNpyHeader(std::istream &is, const std::string &path,
                          NpyHeader &header);

/// A file opened for reading that is known to be a regular file. It is opened
/// without blocking (`O_NONBLOCK`, so a FIFO without a writer or a device is
/// not waited on) and its type is checked on the open descriptor (`fstat`),
/// so that it cannot be swapped between the check and the reads: a FIFO, a
/// socket, a device or a folder is refused with a message naming the path and
/// what it is.
class ReadableFile {
public:
  ReadableFile();
  ~ReadableFile();
  ReadableFile(const ReadableFile &) = delete;
  ReadableFile &operator=(const ReadableFile &) = delete;

  /// Opens `path`. Returns an empty string on success, else
  /// `cannot open 'PATH': REASON` or `'PATH' is a FIFO, not a regular file`
  /// (a folder, a socket, a character or block device likewise).
  std::string open(const std::string &path);
  /// The descriptor, or -1 when not open (or released).
  int fd() const { return descriptor; }
  /// The file's size in bytes when it was opened.
  uint64_t size() const { return bytes; }
  /// A buffered stream over the descriptor from its current offset
  /// (seekable; `tellg` and `seekg` work as on a `std::ifstream`).
  std::istream &stream();
  /// Gives up the descriptor to the caller (e.g. for `gzdopen`), who then
  /// closes it; the stream must not be used afterwards.
  int release();

private:
  class Buffer;
  int descriptor = -1;
  uint64_t bytes = 0;
  std::unique_ptr<Buffer> buffer;
  std::unique_ptr<std::istream> input;
};

/// What a file-system entry is, in words, from its `st_mode`: "a regular
/// file", "a folder", "a FIFO", "a socket", "a character device", "a block
/// device", "a symbolic link" or "an entry of unknown type".
std::string describeFileType(unsigned mode);

/// Reads a `.npy` file of float32 or float64 in C order. Returns an empty
/// string on success, else an error naming the file and the problem.
/// `checkShape`, when given, is called with the header's shape before the
/// payload is read or anything is allocated for it (a header may claim any
/// shape its file's size matches, a sparse file terabytes); what it returns,
/// when not empty, is the error.
std::string readNpy(
    const std::string &path, Tensor &tensor,
    const std::function<std::string(const std::vector<int64_t> &)>
        &checkShape = nullptr);

} // namespace gnn

#endif // GNN_TENSOR_TENSOR_H
