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

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace gnn {

/// A dense row-major tensor of doubles.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> shape, double fill = 0.0)
      : shape(std::move(shape)) {
    data.assign(numElements(), fill);
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

/// Reads and parses the header of the `.npy` file open at the start of `is`,
/// leaving `is` at the first payload byte. Returns an empty string on
/// success, else an error naming `path` and the problem.
std::string readNpyHeader(std::istream &is, const std::string &path,
                          NpyHeader &header);

/// Reads a `.npy` file of float32 or float64 in C order. Returns an empty
/// string on success, else an error naming the file and the problem.
std::string readNpy(const std::string &path, Tensor &tensor);

} // namespace gnn

#endif // GNN_TENSOR_TENSOR_H
