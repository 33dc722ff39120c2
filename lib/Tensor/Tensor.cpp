//===- Tensor.cpp - dense host tensors and .npy files ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tensor/Tensor.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace gnn;

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
  std::ofstream os(path, std::ios::binary);
  if (!os)
    return "cannot write '" + path + "'";
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
  return os ? "" : "cannot write '" + path + "'";
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
  auto field = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return "";
    size_t colon = header.find(':', k);
    size_t value = colon == std::string::npos
                       ? std::string::npos
                       : header.find_first_not_of(" ", colon + 1);
    return value == std::string::npos ? "" : header.substr(value);
  };
  auto malformed = [&](const std::string &what) {
    return "'" + path + "': malformed " + what + " in header";
  };
  std::string descr = field("descr");
  size_t close = descr.empty() ? std::string::npos : descr.find(descr[0], 1);
  if (close == std::string::npos || (descr[0] != '\'' && descr[0] != '"'))
    return malformed("descr");
  h.descr = descr.substr(1, close - 1);
  std::string order = field("fortran_order");
  if (order.rfind("True", 0) != 0 && order.rfind("False", 0) != 0)
    return malformed("fortran_order");
  h.fortranOrder = order[0] == 'T';
  std::string shape = field("shape");
  close = shape.find(')');
  if (shape.empty() || shape[0] != '(' || close == std::string::npos)
    return malformed("shape");
  h.shape.clear();
  std::istringstream ss(shape.substr(1, close - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t first = item.find_first_not_of(" ");
    if (first == std::string::npos)
      continue;
    char *end = nullptr;
    errno = 0;
    long long d = std::strtoll(item.c_str() + first, &end, 10);
    if (errno || end == item.c_str() + first || d < 0 ||
        item.find_first_not_of(" L", end - item.c_str()) != std::string::npos)
      return malformed("shape");
    h.shape.push_back(d);
  }
  return "";
}

std::string gnn::readNpy(const std::string &path, Tensor &t) {
  std::ifstream is(path, std::ios::binary);
  if (!is)
    return "cannot open '" + path + "'";
  NpyHeader h;
  std::string error = readNpyHeader(is, path, h);
  if (!error.empty())
    return error;
  bool f32 = h.descr == "<f4";
  bool f64 = h.descr == "<f8";
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
