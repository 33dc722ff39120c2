//===- CompilerTest.cpp - NVRTC compilation and the kernel cache ----------===//
//
// Part of gnnc. Runs without a GPU: everything compiles for an explicit sm_90.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Compiler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gnn::runtime;
namespace fs = std::filesystem;

namespace {

const char *kSample = R"cuda(
#include "gnn_device.cuh"
extern "C" __global__ void scale(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + gnn_maximumf(0.0f, -1.0f);
}
)cuda";

CompileRequest sampleRequest(const std::string &tag = "") {
  CompileRequest r;
  r.source = std::string(kSample) + "// " + tag + "\n";
  r.name = "scale";
  r.arch = "sm_90";
  return r;
}

class CacheDir {
public:
  CacheDir() {
    path = fs::temp_directory_path() /
           ("gnnc-cache-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
  }
  ~CacheDir() { fs::remove_all(path); }
  size_t count(const std::string &suffix) const {
    size_t n = 0;
    if (fs::exists(path))
      for (auto &e : fs::directory_iterator(path))
        n += e.path().string().find(suffix) != std::string::npos;
    return n;
  }
  fs::path path;
};

bool isElf(const std::vector<char> &image) {
  return image.size() > 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
}

TEST(Compiler, CompilesForSm90WithoutAGpu) {
  Compiler compiler("");
  StatusOr<CompileResult> r = compiler.compile(sampleRequest());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->outcome, CacheOutcome::Compiled);
  EXPECT_EQ(r->cubin->arch, "sm_90");
  EXPECT_TRUE(isElf(r->cubin->image));
  EXPECT_GT(nvrtcVersionNumber(), 12000);
}

TEST(Compiler, MissMemoryHitDiskHit) {
  CacheDir dir;
  {
    Compiler compiler(dir.path.string());
    StatusOr<CompileResult> first = compiler.compile(sampleRequest());
    ASSERT_TRUE(first.ok()) << first.message();
    EXPECT_EQ(first->outcome, CacheOutcome::Compiled);
    StatusOr<CompileResult> second = compiler.compile(sampleRequest());
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->outcome, CacheOutcome::MemoryHit);
    EXPECT_EQ(second->cubin.get(), first->cubin.get()) << "shared, not copied";
    // A different source, options or architecture is a different key.
    EXPECT_EQ(compiler.compile(sampleRequest("other"))->outcome,
              CacheOutcome::Compiled);
    CompileRequest withOption = sampleRequest();
    withOption.options.push_back("-DVARIANT=1");
    EXPECT_EQ(compiler.compile(withOption)->outcome, CacheOutcome::Compiled);
    CompileRequest otherArch = sampleRequest();
    otherArch.arch = "sm_80";
    EXPECT_EQ(compiler.compile(otherArch)->outcome, CacheOutcome::Compiled);
  }
  EXPECT_EQ(dir.count(".cubin"), 4u);
  EXPECT_EQ(dir.count(".tmp."), 0u);
  Compiler fresh(dir.path.string());
  StatusOr<CompileResult> third = fresh.compile(sampleRequest());
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->outcome, CacheOutcome::DiskHit);
  EXPECT_TRUE(isElf(third->cubin->image));
}

/// Damages the one disk entry of `request` with `damage`, then checks that a
/// fresh compiler recompiles (never trusts it) and repairs the entry.
void expectRecompiled(const CacheDir &dir, void (*damage)(const fs::path &)) {
  CompileRequest request = sampleRequest();
  std::vector<char> good;
  {
    Compiler c(dir.path.string());
    StatusOr<CompileResult> r = c.compile(request);
    ASSERT_TRUE(r.ok()) << r.message();
    good = r->cubin->image;
  }
  StatusOr<std::string> path = Compiler(dir.path.string()).diskPath(request);
  ASSERT_TRUE(path.ok());
  ASSERT_TRUE(fs::exists(*path));
  damage(*path);
  Compiler c(dir.path.string());
  StatusOr<CompileResult> r = c.compile(request);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->outcome, CacheOutcome::Compiled);
  EXPECT_EQ(r->cubin->image, good);
  EXPECT_EQ(Compiler(dir.path.string()).compile(request)->outcome,
            CacheOutcome::DiskHit)
      << "the entry is rewritten";
}

TEST(Compiler, TruncatedEntryIsRecompiled) {
  CacheDir dir;
  expectRecompiled(dir, [](const fs::path &p) {
    fs::resize_file(p, fs::file_size(p) / 2);
  });
}

TEST(Compiler, CorruptEntryIsRecompiled) {
  CacheDir dir;
  expectRecompiled(dir, [](const fs::path &p) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(p) - 100));
    f.put('\x55').put('\x66');
  });
}

TEST(Compiler, GarbageAndEmptyEntriesAreRecompiled) {
  CacheDir dir;
  expectRecompiled(dir, [](const fs::path &p) { std::ofstream(p) << "garbage"; });
  expectRecompiled(dir, [](const fs::path &p) { std::ofstream(p).flush(); });
}

TEST(Compiler, FifoEntryIsNotReadAndIsReplaced) {
  // Opening a FIFO in place of an entry would block forever.
  CacheDir dir;
  expectRecompiled(dir, [](const fs::path &p) {
    fs::remove(p);
    ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  });
}

TEST(Compiler, EntryDeclaringAHugePayloadIsNotAllocated) {
  // The header claims 2^31 payload bytes the file does not have: refused by
  // the file size, before the payload is allocated.
  CacheDir dir;
  expectRecompiled(dir, [](const fs::path &p) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    uint64_t huge = uint64_t(1) << 31;
    f.seekp(8 + 3 * sizeof(uint64_t)); // magic, keyA, keyB, keySize
    f.write(reinterpret_cast<const char *>(&huge), sizeof(huge));
  });
}

TEST(Compiler, UnusableCacheDirectoryWarnsOnce) {
  CacheDir dir;
  fs::create_directories(dir.path);
  fs::path notADir = dir.path / "file";
  std::ofstream(notADir) << "x";
  Compiler c((notADir / "cache").string());
  testing::internal::CaptureStderr();
  StatusOr<CompileResult> a = c.compile(sampleRequest());
  CompileRequest other = sampleRequest();
  other.source += "\n// another kernel\n";
  StatusOr<CompileResult> b = c.compile(other);
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_NE(err.find("gnnc: warning: the cache '" +
                     (notADir / "cache").string() + "' cannot be written"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("warning", err.find("warning") + 1), std::string::npos)
      << "warned more than once: " << err;
}

TEST(Compiler, FourProcessesRacingOnOneKey) {
  CacheDir dir;
  CompileRequest request = sampleRequest("race");
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Compiler c(dir.path.string());
      StatusOr<CompileResult> r = c.compile(request);
      _exit(r.ok() && isElf(r->cubin->image) ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(dir.count(".cubin"), 1u);
  EXPECT_EQ(dir.count(".tmp."), 0u) << "no temporary file left behind";
  Compiler c(dir.path.string());
  StatusOr<CompileResult> r = c.compile(request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, CacheOutcome::DiskHit);
}

TEST(Compiler, EightProcessesSameAndDifferentKeys) {
  // 8 processes at once into one cache: each compiles a key shared by all
  // of them and a key of its pair (4 keys shared by 2). Every process
  // succeeds, and the cache holds exactly one valid entry per key (5) and no
  // temporary file; a new compiler finds every key on disk.
  CacheDir dir;
  auto pairKey = [](int i) { return sampleRequest("pair" + std::to_string(i / 2)); };
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Compiler c(dir.path.string());
      StatusOr<CompileResult> shared = c.compile(sampleRequest("all"));
      StatusOr<CompileResult> own = c.compile(pairKey(i));
      _exit(shared.ok() && own.ok() && isElf(shared->cubin->image) &&
                    isElf(own->cubin->image)
                ? 0
                : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(dir.count(".cubin"), 5u);
  EXPECT_EQ(dir.count(".tmp."), 0u) << "no temporary file left behind";
  Compiler c(dir.path.string());
  for (int i = 0; i < 8; i += 2) {
    StatusOr<CompileResult> r = c.compile(pairKey(i));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, CacheOutcome::DiskHit);
    EXPECT_TRUE(isElf(r->cubin->image));
  }
  StatusOr<CompileResult> r = c.compile(sampleRequest("all"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, CacheOutcome::DiskHit);
}

TEST(Compiler, ErrorsCarryLogOptionsAndSourceLine) {
  Compiler compiler("");
  CompileRequest r;
  r.name = "broken";
  r.arch = "sm_90";
  r.options = {"-DWIDTH=4"};
  r.source = "extern \"C\" __global__ void k(float *p) {\n"
             "  p[0] = undefined_name;\n"
             "}\n";
  StatusOr<CompileResult> out = compiler.compile(r);
  ASSERT_FALSE(out.ok());
  const std::string &m = out.message();
  EXPECT_NE(m.find("NVRTC failed to compile 'broken.cu' for sm_90"), std::string::npos) << m;
  EXPECT_NE(m.find("-arch=sm_90"), std::string::npos) << m;
  EXPECT_NE(m.find("-DWIDTH=4"), std::string::npos) << m;
  EXPECT_NE(m.find("undefined_name"), std::string::npos) << m;
  EXPECT_NE(m.find("broken.cu:2:   p[0] = undefined_name;"), std::string::npos) << m;
}

TEST(Compiler, BadArchitecture) {
  Compiler compiler("");
  CompileRequest r = sampleRequest();
  r.arch = "hopper";
  StatusOr<CompileResult> out = compiler.compile(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("expected an architecture like 'sm_90'"),
            std::string::npos);
}

TEST(Compiler, DeviceHeaderIsAvailable) {
  // The helpers the printed kernels call (their one copy).
  EXPECT_NE(deviceHeaderSource().find("float gnn_maximumf(float a, float b)"),
            std::string::npos);
  EXPECT_NE(deviceHeaderSource().find("unsigned gnn_segment_mask(unsigned width)"),
            std::string::npos);
  std::string id = buildId();
  EXPECT_EQ(id.rfind("gnnc-", 0), 0u);
}

} // namespace
