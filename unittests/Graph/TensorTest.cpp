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

} // namespace
