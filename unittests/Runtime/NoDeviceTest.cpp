//===- NoDeviceTest.cpp - the runtime without a GPU -----------------------===//
//
// Part of gnnc. On a machine without a CUDA driver or device every entry point
// returns a clear error instead of crashing. Skipped where a GPU is present.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Graph.h"
#include "gnn/Runtime/Compiler.h"
#include "gnn/Runtime/Program.h"

#include <gtest/gtest.h>

using namespace gnn::runtime;

namespace {

bool haveDevice() { return CudaDriver::get().ok(); }

bool mentionsMissing(const std::string &m) {
  return m.find("no CUDA driver") != std::string::npos ||
         m.find("no CUDA device") != std::string::npos;
}

TEST(NoDevice, DriverReportsClearly) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  StatusOr<CudaDriver *> d = CudaDriver::get();
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(mentionsMissing(d.message())) << d.message();
}

TEST(NoDevice, GraphBuildReportsClearly) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  gnn::HostGraph g = gnn::generatePowerLaw(10, 20, 1);
  StatusOr<std::unique_ptr<Graph>> built = Graph::fromHost(g);
  ASSERT_FALSE(built.ok());
  EXPECT_TRUE(mentionsMissing(built.message())) << built.message();
}

TEST(NoDevice, CompilingForTheCurrentDeviceReportsClearly) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  Compiler c("");
  CompileRequest r;
  r.source = "extern \"C\" __global__ void k() {}";
  StatusOr<CompileResult> out = c.compile(r);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(mentionsMissing(out.message())) << out.message();
  EXPECT_NE(out.message().find("compiling for the current device"),
            std::string::npos);
}

TEST(NoDevice, DeviceMemoryInfoReportsClearly) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  StatusOr<DeviceMemoryInfo> info = deviceMemoryInfo();
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(mentionsMissing(info.message())) << info.message();
}

TEST(Graph, HostSideValidation) {
  // These checks happen before any device work, with or without a GPU.
  gnn::HostGraph g;
  g.numNodes = 3;
  g.src = {0, 5};
  g.dst = {1, 2};
  StatusOr<std::unique_ptr<Graph>> built = Graph::fromHost(g);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("edge 1 (5 -> 2) has a node id outside [0, 3)"),
            std::string::npos)
      << built.message();
  built = Graph::build(nullptr, nullptr, 4, 3, IndexType::Int32);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("null source or destination"), std::string::npos);
  built = Graph::build(nullptr, nullptr, -1, 3, IndexType::Int32);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("expected nonnegative sizes"), std::string::npos);
  built = Graph::build(nullptr, nullptr, 0, int64_t(1) << 31, IndexType::Int32);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("2^31 nodes"), std::string::npos);
}

} // namespace
