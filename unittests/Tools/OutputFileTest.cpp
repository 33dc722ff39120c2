//===- OutputFileTest.cpp - the tools' output file, written with checks ---===//
//
// Part of gnnc. What lit cannot produce: a close that fails (the descriptor
// is closed behind the stream's back), and a write that fails only when the
// buffer is flushed at the end.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tools/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace llvm;

namespace {

/// A fresh path in a fresh temporary directory, removed afterwards.
class OutputFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("gnnc-output", dir));
    path = (dir + "/out.txt").str();
  }
  void TearDown() override {
    sys::fs::remove(path);
    sys::fs::remove(dir);
  }

  /// A ToolOutputFile on `path` whose descriptor is already closed. Nothing
  /// may open a file after this (it would get the descriptor's number) until
  /// the stream is closed: stderr is captured first.
  std::unique_ptr<ToolOutputFile> withClosedDescriptor() {
    int fd = -1;
    EXPECT_FALSE(sys::fs::openFileForWrite(path, fd));
    auto file = std::make_unique<ToolOutputFile>(path, fd);
    ::close(fd);
    return file;
  }

  SmallString<128> dir;
  std::string path;
};

TEST_F(OutputFileTest, WrittenAndKept) {
  std::unique_ptr<ToolOutputFile> file = gnn::openOutputFile("tool", path);
  ASSERT_TRUE(file);
  file->os() << "text";
  EXPECT_EQ(gnn::closeOutputFile("tool", *file, /*keep=*/true), 0);
  file.reset();
  uint64_t size = 0;
  EXPECT_FALSE(sys::fs::file_size(path, size));
  EXPECT_EQ(size, 4u);
}

TEST_F(OutputFileTest, NotKeptIsRemoved) {
  std::unique_ptr<ToolOutputFile> file = gnn::openOutputFile("tool", path);
  ASSERT_TRUE(file);
  file->os() << "text";
  EXPECT_EQ(gnn::closeOutputFile("tool", *file, /*keep=*/false), 0);
  file.reset();
  EXPECT_FALSE(sys::fs::exists(path));
}

TEST_F(OutputFileTest, OpenFailure) {
  std::string missing = (dir + "/missing/out.txt").str();
  testing::internal::CaptureStderr();
  EXPECT_FALSE(gnn::openOutputFile("tool", missing));
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tool: error: cannot write '" + missing +
                "': No such file or directory\n");
}

TEST_F(OutputFileTest, CloseFailure) {
  testing::internal::CaptureStderr();
  std::unique_ptr<ToolOutputFile> file = withClosedDescriptor();
  EXPECT_EQ(gnn::closeOutputFile("tool", *file, /*keep=*/true), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tool: error: cannot write '" + path +
                "': Bad file descriptor\n");
  // The error is cleared: destroying the stream does not abort, and the
  // file, not written whole, is removed.
  EXPECT_FALSE(file->os().has_error());
  file.reset();
  EXPECT_FALSE(sys::fs::exists(path));
}

TEST_F(OutputFileTest, BufferedWriteFailure) {
  testing::internal::CaptureStderr();
  std::unique_ptr<ToolOutputFile> file = withClosedDescriptor();
  file->os() << "buffered until the close";
  EXPECT_EQ(gnn::closeOutputFile("tool", *file, /*keep=*/true), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tool: error: cannot write '" + path +
                "': Bad file descriptor\n");
  file.reset();
  EXPECT_FALSE(sys::fs::exists(path));
}

TEST(OutputName, Stdout) {
  EXPECT_EQ(gnn::outputName("-"), "<stdout>");
  EXPECT_EQ(gnn::outputName("a.mlir"), "a.mlir");
}

} // namespace
