//===- JitTest.cpp - a Program's kernels compiled in parallel -------------===//
//
// Part of gnnc. Runs without a GPU: everything compiles for an explicit sm_90.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Environment.h"
#include "gnn/Runtime/Jit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace gnn::runtime;
namespace fs = std::filesystem;

namespace {

class CacheDir {
public:
  CacheDir() {
    path = fs::temp_directory_path() /
           ("gnnc-jit-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
  }
  ~CacheDir() { fs::remove_all(path); }
  size_t entries() const {
    size_t n = 0;
    if (fs::exists(path))
      for (auto &e : fs::directory_iterator(path))
        n += e.path().extension() == ".cubin";
    return n;
  }
  fs::path path;
};

std::string kernel(const std::string &name, const std::string &body = "") {
  return "extern \"C\" __global__ void " + name +
         "(float *y) { y[threadIdx.x] = gnn_twice(1.0f)" + body + "; }\n";
}

/// A Program of one unit per kernel in `names`, sharing a prelude.
Program program(const std::string &name, const std::vector<std::string> &names) {
  Program p;
  p.name = name;
  p.prelude = "#include \"gnn_device.cuh\"\n"
              "__device__ float gnn_twice(float x) { return 2 * x; }\n";
  for (const std::string &k : names) {
    p.kernels.push_back(k);
    p.units.push_back(SourceUnit{{k}, kernel(k)});
  }
  return p;
}

TEST(Jit, OneCacheEntryPerKernelSharedBetweenPrograms) {
  CacheDir dir;
  Compiler compiler(dir.path.string());
  StatusOr<std::vector<CompileResult>> a =
      compileProgram(program("a", {"k1", "k2"}), compiler, "sm_90");
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].outcome, CacheOutcome::Compiled);
  EXPECT_EQ((*a)[1].outcome, CacheOutcome::Compiled);
  EXPECT_NE((*a)[0].cubin, (*a)[1].cubin);
  EXPECT_EQ(dir.entries(), 2u);
  // Another Program (another specialisation) with k1 unchanged: k1 is not
  // compiled again, in memory or (a new process) on disk.
  Program b = program("b", {"k1", "k3"});
  StatusOr<std::vector<CompileResult>> bOut = compileProgram(b, compiler, "sm_90");
  ASSERT_TRUE(bOut.ok()) << bOut.message();
  EXPECT_EQ((*bOut)[0].outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ((*bOut)[0].cubin, (*a)[0].cubin);
  EXPECT_EQ((*bOut)[1].outcome, CacheOutcome::Compiled);
  EXPECT_EQ(dir.entries(), 3u);
  Compiler fresh(dir.path.string());
  bOut = compileProgram(b, fresh, "sm_90");
  ASSERT_TRUE(bOut.ok()) << bOut.message();
  EXPECT_EQ((*bOut)[0].outcome, CacheOutcome::DiskHit);
  EXPECT_EQ((*bOut)[1].outcome, CacheOutcome::DiskHit);
}

TEST(Jit, UnitsWithoutALaunchedKernelAreNotCompiled) {
  Compiler compiler("");
  Program p = program("p", {"k1"});
  p.units.push_back(SourceUnit{{"other"}, "this is not CUDA"});
  StatusOr<std::vector<CompileResult>> r = compileProgram(p, compiler, "sm_90");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].cubin);
  EXPECT_FALSE((*r)[1].cubin);
}

TEST(Jit, EveryFailingKernelIsReportedByName) {
  Compiler compiler("");
  Program p = program("gat", {"spmm_0", "attention_0", "softmax_0"});
  p.units[0].text = kernel("spmm_0", " + undefined_a");
  p.units[2].text = kernel("softmax_0", " + undefined_b");
  StatusOr<std::vector<CompileResult>> r = compileProgram(p, compiler, "sm_90");
  ASSERT_FALSE(r.ok());
  const std::string &m = r.message();
  EXPECT_EQ(m.rfind("2 of 3 kernels of 'gat' failed to compile:\n", 0), 0u) << m;
  size_t first = m.find("NVRTC failed to compile 'gat.spmm_0.cu'");
  size_t second = m.find("NVRTC failed to compile 'gat.softmax_0.cu'");
  EXPECT_NE(first, std::string::npos) << m;
  EXPECT_NE(second, std::string::npos) << m;
  EXPECT_LT(first, second) << m;
  EXPECT_NE(m.find("undefined_a"), std::string::npos) << m;
  EXPECT_NE(m.find("undefined_b"), std::string::npos) << m;
  EXPECT_EQ(m.find("attention_0.cu"), std::string::npos) << m;
}

TEST(Jit, ProgramsCompiledTogetherShareTheirUnits) {
  // A training step: the forward and the backward hold the same kernels.
  Compiler compiler("");
  Program fwd = program("f_fwd", {"k1", "k2"});
  Program bwd = program("f_bwd", {"k1", "k2", "k3"});
  bwd.kernels = {"k2", "k3"}; // k1 is not launched: not compiled for it
  StatusOr<std::vector<std::vector<CompileResult>>> r =
      compilePrograms({&fwd, &bwd}, compiler, "sm_90");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->size(), 2u);
  const std::vector<CompileResult> &f = (*r)[0], &b = (*r)[1];
  ASSERT_EQ(f.size(), 2u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(f[0].outcome, CacheOutcome::Compiled);
  EXPECT_EQ(f[1].outcome, CacheOutcome::Compiled);
  EXPECT_FALSE(b[0].cubin);
  EXPECT_EQ(b[1].cubin, f[1].cubin);
  EXPECT_EQ(b[2].outcome, CacheOutcome::Compiled);

  bwd.units[2].text = kernel("k3", " + undefined_c");
  fwd.units[0].text = kernel("k1", " + undefined_d");
  Compiler fresh("");
  r = compilePrograms({&fwd, &bwd}, fresh, "sm_90");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().rfind("2 of 3 kernels of 'f_fwd', 'f_bwd' failed to "
                              "compile:\n",
                              0),
            0u)
      << r.message();
  EXPECT_NE(r.message().find("'f_fwd.k1.cu'"), std::string::npos);
  EXPECT_NE(r.message().find("'f_bwd.k3.cu'"), std::string::npos);
}

TEST(Jit, ConcurrentRequestsForOneSourceCompileItOnce) {
  Compiler compiler("");
  CompileRequest req;
  req.source = "__device__ float gnn_twice(float x) { return x; }\n" +
               kernel("once");
  req.arch = "sm_90";
  std::atomic<int> compiled{0}, hits{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      StatusOr<CompileResult> r = compiler.compile(req);
      if (!r.ok())
        ++failed;
      else if (r->outcome == CacheOutcome::Compiled)
        ++compiled;
      else
        ++hits;
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(compiled.load(), 1);
  EXPECT_EQ(hits.load(), 3);
}

TEST(Jit, PoolRunsEveryTaskOnceForConcurrentCallers) {
  std::vector<std::atomic<int>> runs(200);
  auto call = [&](size_t from) {
    runOnJitPool(100, [&](size_t i) { ++runs[from + i]; });
  };
  std::thread other(call, 100);
  call(0);
  other.join();
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(runs[i].load(), 1) << i;
}

TEST(Jit, ThreadCountFromTheEnvironment) {
  const char *saved = std::getenv("GNNC_JIT_THREADS");
  std::string keep = saved ? saved : "";
  setenv("GNNC_JIT_THREADS", "3", 1);
  EXPECT_EQ(readEnvironment().jitThreads, 3);
  EXPECT_TRUE(readEnvironment().jitThreadsError.empty());
  for (const char *bad : {"0", "-2", "many", "4x", "100000"}) {
    setenv("GNNC_JIT_THREADS", bad, 1);
    EXPECT_EQ(readEnvironment().jitThreadsError,
              std::string("GNNC_JIT_THREADS: expected a number of threads from "
                          "1 to 1024 but got '") +
                  bad + "'");
  }
  unsetenv("GNNC_JIT_THREADS");
  EXPECT_EQ(readEnvironment().jitThreads, 0);
  if (saved)
    setenv("GNNC_JIT_THREADS", keep.c_str(), 1);
}

} // namespace
