//===- Status.h - errors as values in the runtime -----------------*- C++ -*-===//
//
// Part of gnnc. The runtime depends on neither MLIR nor LLVM: errors are this
// small value type instead of llvm::Error.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `Status` carries success or an error message (which names the failing API
/// call and the CUDA / NVRTC error); `StatusOr<T>` carries a value or an error.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_STATUS_H
#define GNN_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace gnn {
namespace runtime {

/// Success, or an error with a message.
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  /// An error with `message`.
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return text; }

  /// Prefixes the message with context ("building the CSR: ...").
  Status &withContext(const std::string &context) {
    if (failed)
      text = context + ": " + text;
    return *this;
  }

private:
  explicit Status(std::string m) : failed(true), text(std::move(m)) {}
  bool failed = false;
  std::string text;
};

/// A value of type T, or an error.
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(T v) : val(std::move(v)) {}
  StatusOr(Status s) : status(std::move(s)) {
    assert(!status.ok() && "a StatusOr built from a Status must be an error");
  }
  bool ok() const { return status.ok(); }
  explicit operator bool() const { return ok(); }
  const Status &error() const { return status; }
  const std::string &message() const { return status.message(); }
  T &value() {
    assert(ok() && "value() of an error");
    return *val;
  }
  const T &value() const {
    assert(ok() && "value() of an error");
    return *val;
  }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  Status status;
  std::optional<T> val;
};

} // namespace runtime
} // namespace gnn

/// Returns from the enclosing function when the expression (a Status) failed.
/// Variadic so that template arguments with commas need no parentheses.
#define GNN_RETURN_IF_ERROR(...)                                               \
  do {                                                                         \
    ::gnn::runtime::Status _gnn_status = (__VA_ARGS__);                        \
    if (!_gnn_status.ok())                                                     \
      return _gnn_status;                                                      \
  } while (false)

#endif // GNN_RUNTIME_STATUS_H
