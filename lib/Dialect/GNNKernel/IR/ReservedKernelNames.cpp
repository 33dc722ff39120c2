//===- ReservedKernelNames.cpp - names a kernel cannot take ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// A kernel's name is printed into the CUDA source as an `extern "C"
// __global__` function at file scope, after what NVRTC declares without any
// #include (the CUDA math API, atomics, vector types, printf, malloc, ...)
// and after the prelude the printer writes (`idx_t`, gnn_device.cuh, the
// gnn_* boundary kernels). A name declared there failed inside NVRTC,
// without a location in the .mlir file: `more than one instance of
// overloaded function "sqrt" has "C" linkage`, `"std" has already been
// declared`, a macro expanded (`NULL`, `assert`), or a vector type that later
// kernels use (`float4`) hidden by the function, on which NVRTC 13.0 even
// crashes. Overloaded C++ names (atomicAdd, the vector types' make_*) were
// accepted only as long as no later call picked the kernel as an overload;
// they are refused too.
//
// The lists were checked against NVRTC 13.0 (sm_90, -std=c++17): every name
// of the CUDA headers that it rejects as a kernel name in a module of gnnc's
// kernels is refused here, each under the family it belongs to.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

/// C++20's keywords and alternative tokens (C's are among them but
/// `restrict`). CUDA's own keywords (__global__, __device__, ...) start with
/// "__".
static bool isKeyword(StringRef name) {
  static const llvm::StringSet<> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not",
      "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "register", "reinterpret_cast", "requires", "restrict",
      "return", "short", "signed", "sizeof", "static", "static_assert",
      "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union",
      "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while",
      "xor", "xor_eq"};
  return keywords.contains(name);
}

/// The CUDA math API's functions (crt/math_functions.h), by their
/// double-precision names: each is refused with and without the `f` suffix
/// of its single-precision twin (`sqrt`, `sqrtf`). Their `__` intrinsics
/// (`__expf`) are refused as reserved names.
static bool isMathFunction(StringRef name) {
  static const llvm::StringSet<> functions = {
      "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt",
      "ceil", "copysign", "cos", "cosh", "cospi", "cyl_bessel_i0",
      "cyl_bessel_i1", "erf", "erfc", "erfcinv", "erfcx", "erfinv", "exp",
      "exp10", "exp2", "expm1", "fabs", "fdim", "fdivide", "floor", "fma",
      "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "isfinite", "isinf",
      "isnan", "j0", "j1", "jn", "ldexp", "lgamma", "llrint", "llround", "log",
      "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan",
      "nearbyint", "nextafter", "norm", "norm3d", "norm4d", "normcdf",
      "normcdfinv", "pow", "rcbrt", "remainder", "remquo", "rhypot", "rint",
      "rnorm", "rnorm3d", "rnorm4d", "round", "rsqrt", "scalbln", "scalbn",
      "signbit", "sin", "sincos", "sincospi", "sinh", "sinpi", "sqrt", "tan",
      "tanh", "tgamma", "trunc", "y0", "y1", "yn"};
  return functions.contains(name) ||
         (name.ends_with("f") && functions.contains(name.drop_back()));
}

/// The CUDA integer functions without a `__` prefix
/// (crt/device_functions.h, crt/math_functions.h).
static bool isIntegerFunction(StringRef name) {
  static const llvm::StringSet<> functions = {
      "abs",  "labs",   "llabs",  "min",    "max",      "umin",
      "umax", "llmin",  "llmax",  "ullmin", "ullmax",   "mul24",
      "umul24", "mulhi", "umulhi", "mul64hi", "umul64hi", "saturate"};
  return functions.contains(name);
}

/// A CUDA vector type (`float4`, `uint2`, `longlong3`, CUDA 13's aligned
/// `double4_16a`, `dim3`) or its constructor function (`make_float4`).
static bool isVectorType(StringRef name) {
  if (name == "dim3")
    return true;
  name.consume_front("make_");
  if (!name.consume_back("_16a"))
    name.consume_back("_32a");
  if (name.size() < 2 || name.back() < '1' || name.back() > '4')
    return false;
  static const llvm::StringSet<> scalars = {
      "char",  "uchar", "short",    "ushort",    "int",   "uint",
      "long",  "ulong", "longlong", "ulonglong", "float", "double"};
  return scalars.contains(name.drop_back());
}

/// Whether `name` is `prefix` followed by an upper-case letter.
static bool startsWithWord(StringRef name, StringRef prefix) {
  return name.size() > prefix.size() && name.starts_with(prefix) &&
         llvm::isUpper(name[prefix.size()]);
}

std::string mlir::gnnk::reservedKernelName(StringRef name) {
  static const llvm::StringSet<> builtins = {"threadIdx", "blockIdx",
                                             "blockDim", "gridDim", "warpSize"};
  // What CUDA code sees of the C and C++ libraries: the device-side
  // functions and the assert macro, and the types and namespace NVRTC
  // declares.
  static const llvm::StringSet<> library = {
      "printf", "vprintf", "malloc", "free", "memcpy", "memset", "assert",
      "clock",  "clock64"};
  static const llvm::StringSet<> libraryNames = {"std", "size_t", "ptrdiff_t",
                                                 "clock_t", "NULL"};
  if (isKeyword(name))
    return "a C++ keyword";
  if (name.starts_with("__"))
    return "a name reserved to the compiler (it starts with '__')";
  if (name.size() > 1 && name[0] == '_' && llvm::isUpper(name[1]))
    return "a name reserved to the compiler (it starts with '_' and a "
           "capital letter)";
  if (name == "main")
    return "the program's entry point";
  if (builtins.contains(name))
    return "a CUDA built-in variable";
  if (isMathFunction(name))
    return "a function of the CUDA math API";
  if (isIntegerFunction(name))
    return "a CUDA integer function";
  if (startsWithWord(name, "atomic"))
    return "a CUDA atomic function (atomicAdd, atomicCAS, ...)";
  if (isVectorType(name))
    return "a CUDA vector type or its make_ function";
  if (name.starts_with("tex") || name.starts_with("surf")) {
    StringRef rest = name.drop_front(name.starts_with("tex") ? 3 : 4);
    if (!rest.empty() && (llvm::isDigit(rest[0]) || rest.starts_with("Cubemap")))
      return "a CUDA texture or surface function";
  }
  if (startsWithWord(name, "cuda"))
    return "a name of the CUDA runtime API (it starts with 'cuda' and a "
           "capital letter)";
  if (name.starts_with("CUDART"))
    return "a macro of the CUDA runtime headers (it starts with 'CUDART')";
  if (library.contains(name))
    return "a function or macro that CUDA device code calls (printf, "
           "malloc, memcpy, assert, clock, ...)";
  if (libraryNames.contains(name))
    return "a type, macro or namespace of the C or C++ library";
  if (name == "idx_t")
    return "the index type the emitted code defines";
  if (name.starts_with(kReservedKernelPrefix))
    return ("a name with the runtime's prefix '" + kReservedKernelPrefix +
            "' (its own kernels and device helpers)")
        .str();
  return "";
}
