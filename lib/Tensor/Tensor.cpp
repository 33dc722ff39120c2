//===- Tensor.cpp - dense host tensors and .npy files ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tensor/Tensor.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace gnn;

std::string Tensor::shapeString() const {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
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

std::string gnn::readNpy(const std::string &path, Tensor &t) {
  std::ifstream is(path, std::ios::binary);
  if (!is)
    return "cannot open '" + path + "'";
  char magic[8];
  if (!is.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return "'" + path + "' is not a .npy file";
  size_t len;
  if (magic[6] == 1) {
    unsigned char l[2];
    is.read(reinterpret_cast<char *>(l), 2);
    len = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    is.read(reinterpret_cast<char *>(l), 4);
    len = l[0] | (l[1] << 8) | (l[2] << 16) | (size_t(l[3]) << 24);
  }
  std::string header(len, '\0');
  if (!is.read(header.data(), len))
    return "'" + path + "': truncated header";
  auto field = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return "";
    size_t colon = header.find(':', k);
    return colon == std::string::npos ? "" : header.substr(colon + 1);
  };
  std::string descr = field("descr");
  bool f32 = descr.find("'<f4'") != std::string::npos;
  bool f64 = descr.find("'<f8'") != std::string::npos;
  if (!f32 && !f64)
    return "'" + path + "': expected float32 or float64 data (<f4 or <f8)";
  if (field("fortran_order").find("True") < field("fortran_order").find(','))
    return "'" + path + "': expected C order but the file is Fortran order";
  std::string shape = field("shape");
  size_t open = shape.find('('), close = shape.find(')');
  if (open == std::string::npos || close == std::string::npos)
    return "'" + path + "': malformed shape in header";
  t.shape.clear();
  std::istringstream ss(shape.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos)
      continue;
    t.shape.push_back(std::stoll(item));
  }
  int64_t n = t.numElements();
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
