//===- TensorTest.cpp - .npy files -----------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tensor/Tensor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace gnn;
namespace fs = std::filesystem;

namespace {

TEST(Npy, RoundTripFloat64) {
  Tensor t({2, 3});
  for (int i = 0; i < 6; ++i)
    t.data[i] = 0.1 * i - 0.25;
  fs::path p = fs::temp_directory_path() / "gnnc-npy-f64.npy";
  ASSERT_EQ(writeNpy(p.string(), t, NpyType::Float64), "");
  Tensor back;
  ASSERT_EQ(readNpy(p.string(), back), "");
  EXPECT_EQ(back.shape, t.shape);
  EXPECT_EQ(back.data, t.data);
  // The header is padded so the data starts on a 64-byte boundary.
  EXPECT_EQ(fs::file_size(p) % 8, 0u);
  EXPECT_EQ((fs::file_size(p) - 6 * sizeof(double)) % 64, 0u);
  fs::remove(p);
}

TEST(Npy, RoundTripFloat32AndVector) {
  Tensor t({5});
  for (int i = 0; i < 5; ++i)
    t.data[i] = static_cast<float>(1.0 / (i + 1));
  fs::path p = fs::temp_directory_path() / "gnnc-npy-f32.npy";
  ASSERT_EQ(writeNpy(p.string(), t, NpyType::Float32), "");
  Tensor back;
  ASSERT_EQ(readNpy(p.string(), back), "");
  EXPECT_EQ(back.shape, std::vector<int64_t>{5});
  EXPECT_EQ(back.data, t.data);
  fs::remove(p);
}

TEST(Npy, ScalarAndEmpty) {
  Tensor empty({0, 4});
  fs::path p = fs::temp_directory_path() / "gnnc-npy-empty.npy";
  ASSERT_EQ(writeNpy(p.string(), empty, NpyType::Float32), "");
  Tensor back;
  ASSERT_EQ(readNpy(p.string(), back), "");
  EXPECT_EQ(back.shape, (std::vector<int64_t>{0, 4}));
  fs::remove(p);
}

TEST(Npy, Errors) {
  fs::path p = fs::temp_directory_path() / "gnnc-npy-bad.npy";
  std::ofstream(p) << "not numpy";
  Tensor t;
  EXPECT_NE(readNpy(p.string(), t).find("is not a .npy file"), std::string::npos);
  EXPECT_NE(readNpy("/no/such.npy", t).find("cannot open"), std::string::npos);
  // Truncated data.
  Tensor big({100});
  ASSERT_EQ(writeNpy(p.string(), big, NpyType::Float64), "");
  fs::resize_file(p, fs::file_size(p) - 8);
  EXPECT_NE(readNpy(p.string(), t).find("data shorter than its shape [100]"),
            std::string::npos);
  fs::remove(p);
}

/// Writes a version-`version` `.npy` file with `header` (padded as numpy
/// does) and `payload` bytes, declaring `declaredLength` as the header
/// length when it is not 0.
static void writeRawNpy(const fs::path &p, const std::string &header,
                        size_t payload, int version = 1,
                        uint32_t declaredLength = 0) {
  std::string h = header;
  size_t lenBytes = version == 1 ? 2 : 4;
  while ((8 + lenBytes + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  uint32_t len = declaredLength ? declaredLength : h.size();
  std::ofstream os(p, std::ios::binary);
  os << "\x93NUMPY" << char(version) << char(0);
  for (size_t i = 0; i < lenBytes; ++i)
    os << char((len >> (8 * i)) & 0xff);
  os << h << std::string(payload, '\0');
}

TEST(Npy, HeaderChecksAgainstTheFile) {
  fs::path p = fs::temp_directory_path() / "gnnc-npy-lies.npy";
  Tensor t;
  // A shape whose element count overflows: refused before any allocation.
  writeRawNpy(p,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (6, "
              "9223372036854775807), }",
              1536);
  EXPECT_NE(readNpy(p.string(), t).find("shape [6, 9223372036854775807] of "
                                         "float32 holds more than 2^63 "
                                         "elements but the file has 1536 "
                                         "payload bytes"),
            std::string::npos)
      << readNpy(p.string(), t);
  // A shape far larger than the payload.
  writeRawNpy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 64), }", 16);
  EXPECT_NE(readNpy(p.string(), t).find("data shorter than its shape "
                                         "[1000000000000, 64]: "
                                         "256000000000000 payload bytes "
                                         "expected but 16 found"),
            std::string::npos)
      << readNpy(p.string(), t);
  // Trailing bytes beyond the shape.
  writeRawNpy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12);
  EXPECT_NE(readNpy(p.string(), t).find("12 payload bytes but its shape [2] "
                                         "of float32 holds 8"),
            std::string::npos)
      << readNpy(p.string(), t);
  // A version 2 header claiming 4 GiB: refused without reading it.
  writeRawNpy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8,
              2, 0xffffffffu);
  EXPECT_NE(readNpy(p.string(), t).find("truncated header (4294967295 bytes "
                                         "declared, "),
            std::string::npos)
      << readNpy(p.string(), t);
  fs::remove(p);
}

} // namespace
