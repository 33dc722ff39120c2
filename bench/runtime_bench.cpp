//===- runtime_bench.cpp - runtime figures on the GPU ---------------------===//
//
// Part of gnnc. Measures, on the current GPU:
//  - graph build time (CSR + CSC + permutation + degrees, with and without
//    statistics) for synthetic power-law graphs given on the command line;
//  - NVRTC cold compile, disk-cache hit and memory-cache hit for a typical
//    fused attention kernel;
//  - host time per kernel launch (raw Kernel::launch and Executable::run).
// Prints one JSON object. Median of repeated CUDA-event timings after warm-up.
//
//   gnn-runtime-bench [--graph NAME=powerlaw:nodes=N,edges=E,seed=S]...
//                     [--dump-dir DIR] [--reps R]
//   gnn-runtime-bench --jit-units PROGRAM.json [--arch sm_90]
//   gnn-runtime-bench --gemm-row-split K,M,N[,CHUNKS...]
// --jit-units (no GPU needed) compiles each source unit of a Program (gnn-run
// --dump-program) on its own with no cache, one after another, then all of
// them on the JIT pool (GNNC_JIT_THREADS), and prints a table of the times.
// --gemm-row-split times the weight gradient's Aᵀ B (A: K x M, B: K x N, f32)
// as gemmRowSplit (double sums on the FP64 tensor cores) at the given slice
// counts (default: the compiler's) against cuBLAS's SGEMM, and prints the
// worst difference of each from a double-precision sum on the host.
// --dump-dir writes each graph's COO as NAME.src.npy / NAME.dst.npy (int32)
// so bench/graph_build_torch.py can time PyTorch on the very same edges.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Graph.h"
#include "gnn/Runtime/Module.h"
#include "gnn/Runtime/Executor.h"
#include "gnn/Runtime/Jit.h"
#include "gnn/Runtime/Library.h"
#include "gnn/Runtime/Timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gnn::runtime;

[[noreturn]] static void die(const std::string &m) {
  std::cerr << "gnn-runtime-bench: error: " << m << "\n";
  std::exit(1);
}

static void writeNpyInt32(const std::string &path, const std::vector<int64_t> &v) {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (" +
                       std::to_string(v.size()) + ",), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream os(path, std::ios::binary);
  os.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  os.put(char(len & 0xff)).put(char(len >> 8));
  os.write(header.data(), header.size());
  std::vector<int32_t> narrow(v.begin(), v.end());
  os.write(reinterpret_cast<const char *>(narrow.data()), narrow.size() * 4);
}

/// Times `fn` with CUDA events: `warm` untimed runs, then `reps` timed ones.
template <typename F> static double timeMs(int warm, int reps, F fn) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < warm; ++i)
    fn();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a);
    fn();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(ms);
}

/// A kernel of the size gnnc generates: warp-per-destination attention with
/// an online softmax (GAT-like, 4 heads x 16 features).
static const char *kTypicalKernel = R"cuda(
#include "gnn_device.cuh"
constexpr int H = 4, F = 16;
namespace gnn {
// Running maximum and normaliser of a softmax over a stream of scores.
struct OnlineSoftmax {
  float max = -__int_as_float(0x7f800000);
  float sum = 0.0f;
  __device__ __forceinline__ float add(float s) {
    float m = gnn_maximumf(max, s);
    float scale = (max == m) ? 1.0f : __expf(max - m);
    sum = sum * scale + __expf(s - m);
    max = m;
    return scale;
  }
  __device__ __forceinline__ float logSumExp() const { return max + __logf(sum); }
};
} // namespace gnn
extern "C" __global__ void gat_fused(const int *row_ptr, const int *col,
                                     const float *h, const float *a_src,
                                     const float *a_dst, float *out,
                                     float *lse, int n) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (warp >= n) return;
  int begin = row_ptr[warp], end = row_ptr[warp + 1];
  for (int head = 0; head < H; ++head) {
    gnn::OnlineSoftmax sm;
    float acc = 0.0f;
    float ad = a_dst[warp * H + head];
    for (int e = begin; e < end; ++e) {
      int s = col[e];
      float score = a_src[s * H + head] + ad;
      score = score > 0.0f ? score : 0.2f * score;
      float scale = sm.add(score);
      float w = __expf(score - sm.max);
      if (lane < F)
        acc = acc * scale + w * h[(s * H + head) * F + lane];
    }
    if (lane < F)
      out[(warp * H + head) * F + lane] = end > begin ? acc / sm.sum : 0.0f;
    if (lane == 0)
      lse[warp * H + head] = sm.logSumExp();
  }
}
extern "C" __global__ void empty_kernel(float *p, int n) {
  if (n < 0) p[0] = 0.0f;
}
)cuda";

/// --jit-units: NVRTC time per unit (serial, no cache) and of the pool.
static int jitUnits(const std::string &path, const std::string &arch) {
  std::ifstream in(path);
  if (!in)
    die("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<Program> program = Program::parse(text.str());
  if (!program.ok())
    die(path + ": " + program.message());
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  std::printf("%-40s %10s\n", "unit (serial, no cache)", "ms");
  double serial = 0, longest = 0;
  for (size_t u = 0; u < program->units.size(); ++u) {
    Compiler compiler("");
    CompileRequest req;
    req.source = program->unitSource(u);
    req.name = program->units[u].kernels.front();
    req.arch = arch;
    req.options = program->options;
    auto t0 = Clock::now();
    StatusOr<CompileResult> r = compiler.compile(req);
    if (!r.ok())
      die(r.message());
    double t = ms(t0);
    serial += t;
    longest = std::max(longest, t);
    std::printf("%-40s %10.1f\n", req.name.c_str(), t);
  }
  Compiler whole("");
  CompileRequest all;
  all.source = program->source();
  all.arch = arch;
  all.options = program->options;
  auto t0 = Clock::now();
  if (StatusOr<CompileResult> r = whole.compile(all); !r.ok())
    die(r.message());
  double one = ms(t0);
  Compiler pooled("");
  t0 = Clock::now();
  if (auto r = compileProgram(*program, pooled, arch); !r.ok())
    die(r.message());
  double pool = ms(t0);
  StatusOr<int> threads = jitThreads();
  std::printf("%-40s %10.1f\n", "sum of units (serial)", serial);
  std::printf("%-40s %10.1f\n", "longest unit", longest);
  std::printf("%-40s %10.1f\n", "whole source, one NVRTC call", one);
  std::printf("%-40s %10.1f\n",
              ("pool of " + std::to_string(threads.ok() ? *threads : 0) +
               " threads (compileProgram)")
                  .c_str(),
              pool);
  return 0;
}

/// --gemm-row-split K,M,N[,CHUNKS...]: see the file comment.
static int gemmRowSplitBench(const std::string &spec) {
  std::vector<int64_t> v;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');)
    v.push_back(std::atoll(item.c_str()));
  if (v.size() < 3 || v[0] < 1 || v[1] < 1 || v[2] < 1)
    die("--gemm-row-split expects K,M,N[,CHUNKS...] (positive), got '" + spec +
        "'");
  int64_t k = v[0], m = v[1], n = v[2];
  std::vector<int64_t> chunkList(v.begin() + 3, v.end());
  if (chunkList.empty()) // ProgramLowering's formula (tiles of 64 x 64)
    chunkList.push_back(std::max<int64_t>(
        1, std::min<int64_t>((k + 255) / 256,
                             std::max<int64_t>(1, 256 / (((m + 63) / 64) *
                                                         ((n + 63) / 64))))));
  std::vector<float> a(k * m), b(k * n);
  gnn::SplitMix64 rng(7);
  for (float &x : a) x = static_cast<float>(rng.uniform()); // positive: the
  for (float &x : b) x = static_cast<float>(rng.uniform()); // worst case
  std::vector<double> ref(m * n, 0.0);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t i = 0; i < m; ++i) {
      double x = a[r * m + i];
      for (int64_t j = 0; j < n; ++j)
        ref[i * n + j] += x * double(b[r * n + j]);
    }
  int64_t maxChunks = *std::max_element(chunkList.begin(), chunkList.end());
  DeviceBuffer da = std::move(*DeviceBuffer::allocate(a.size() * 4));
  DeviceBuffer db = std::move(*DeviceBuffer::allocate(b.size() * 4));
  DeviceBuffer dc = std::move(*DeviceBuffer::allocate(m * n * 4));
  DeviceBuffer dp = std::move(*DeviceBuffer::allocate(maxChunks * m * n * 8));
  if (!da.upload(a.data(), a.size() * 4).ok() ||
      !db.upload(b.data(), b.size() * 4).ok())
    die("upload failed");
  auto worst = [&] {
    std::vector<float> c(m * n);
    if (!dc.download(c.data(), c.size() * 4).ok())
      die("download failed");
    double w = 0;
    for (int64_t i = 0; i < m * n; ++i)
      w = std::max(w, std::abs(double(c[i]) - ref[i]) /
                          std::max(1.0, std::abs(ref[i])));
    return w;
  };
  auto check = [](const Status &s) {
    if (!s.ok())
      die(s.message());
  };
  std::printf("gemm row split %lld x %lld x %lld\n", (long long)k,
              (long long)m, (long long)n);
  for (int64_t chunks : chunkList) {
    auto run = [&] {
      check(gemmRowSplit(m, n, k, chunks, 1.0, (const float *)da.data(),
                         (const float *)db.data(), 0.0, (float *)dc.data(),
                         (double *)dp.data(), nullptr));
    };
    double ms = timeMs(3, 20, run);
    run();
    cudaDeviceSynchronize();
    std::printf("  row split, %5lld slices: %8.4f ms  worst rel %.3g\n",
                (long long)chunks, ms, worst());
  }
  auto sgemm = [&] {
    check(gemm(DType::F32, true, false, m, n, k, 1.0, da.data(), db.data(),
               0.0, dc.data(), nullptr));
  };
  double ms = timeMs(3, 20, sgemm);
  sgemm();
  cudaDeviceSynchronize();
  std::printf("  cuBLAS SGEMM:              %8.4f ms  worst rel %.3g\n", ms,
              worst());
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && std::string(argv[1]) == "--gemm-row-split")
    return gemmRowSplitBench(argv[2]);
  if (argc >= 3 && std::string(argv[1]) == "--jit-units")
    return jitUnits(argv[2], argc >= 5 && std::string(argv[3]) == "--arch"
                                 ? argv[4]
                                 : "sm_90");
  std::vector<std::pair<std::string, std::string>> graphs;
  std::string dumpDir;
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--graph" && i + 1 < argc) {
      std::string v = argv[++i];
      size_t eq = v.find('=');
      if (eq == std::string::npos)
        die("--graph expects NAME=SPEC");
      graphs.push_back({v.substr(0, eq), v.substr(eq + 1)});
    } else if (a == "--dump-dir" && i + 1 < argc) {
      dumpDir = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      die("unknown argument '" + a + "'");
    }
  }
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver.ok())
    die(driver.message());
  std::ostringstream json;
  json << "{\n  \"device\": \"" << (*driver)->deviceName() << "\",\n"
       << "  \"driver_version\": " << (*driver)->driverVersion() << ",\n"
       << "  \"nvrtc_version\": " << nvrtcVersionNumber() << ",\n"
       << "  \"graphs\": [";

  // Graph builds.
  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    auto t0 = std::chrono::steady_clock::now();
    gnn::GraphOrError host = gnn::loadGraph(graphs[gi].second);
    if (!host.ok())
      die(host.error);
    double genS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const gnn::HostGraph &g = host.graph;
    int64_t e = g.numEdges(), n = g.numNodes;
    if (!dumpDir.empty()) {
      std::filesystem::create_directories(dumpDir);
      writeNpyInt32(dumpDir + "/" + graphs[gi].first + ".src.npy", g.src);
      writeNpyInt32(dumpDir + "/" + graphs[gi].first + ".dst.npy", g.dst);
    }
    // Device COO in both index widths.
    std::vector<int32_t> s32(g.src.begin(), g.src.end()), d32(g.dst.begin(), g.dst.end());
    DeviceBuffer src64 = std::move(*DeviceBuffer::allocate(e * 8));
    DeviceBuffer dst64 = std::move(*DeviceBuffer::allocate(e * 8));
    DeviceBuffer src32 = std::move(*DeviceBuffer::allocate(e * 4));
    DeviceBuffer dst32 = std::move(*DeviceBuffer::allocate(e * 4));
    if (!src64.upload(g.src.data(), e * 8).ok() || !dst64.upload(g.dst.data(), e * 8).ok() ||
        !src32.upload(s32.data(), e * 4).ok() || !dst32.upload(d32.data(), e * 4).ok())
      die("upload failed");
    std::unique_ptr<Graph> last;
    auto build = [&](const DeviceBuffer &s, const DeviceBuffer &d, IndexType t,
                     bool stats) {
      GraphBuildOptions o;
      o.statistics = stats;
      StatusOr<std::unique_ptr<Graph>> r =
          Graph::build(s.data(), d.data(), e, n, t, nullptr, nullptr, o);
      if (!r.ok())
        die(r.message());
      last = std::move(*r);
    };
    double msStats64 = timeMs(2, reps, [&] { build(src64, dst64, IndexType::Int64, true); });
    double msPlain64 = timeMs(2, reps, [&] { build(src64, dst64, IndexType::Int64, false); });
    double msStats32 = timeMs(2, reps, [&] { build(src32, dst32, IndexType::Int32, true); });
    build(src64, dst64, IndexType::Int64, true);
    size_t freeB = 0, totalB = 0;
    cudaMemGetInfo(&freeB, &totalB);
    json << (gi ? "," : "") << "\n    {\"name\": \"" << graphs[gi].first
         << "\", \"spec\": \"" << graphs[gi].second << "\", \"nodes\": " << n
         << ", \"edges\": " << e << ", \"host_generate_s\": " << genS
         << ", \"build_ms_int64_input\": " << msStats64
         << ", \"build_ms_int64_input_no_stats\": " << msPlain64
         << ", \"build_ms_int32_input\": " << msStats32
         << ", \"statistics\": " << last->statistics().toJson() << "}";
    std::cerr << "graph " << graphs[gi].first << ": " << msStats64 << " ms\n";
  }
  json << "\n  ],\n";

  // NVRTC: cold, disk hit, memory hit.
  std::string cacheDir = "/tmp/gnnc-bench-cache-" + std::to_string(getpid());
  std::filesystem::remove_all(cacheDir);
  CompileRequest req;
  req.source = kTypicalKernel;
  req.name = "gat_fused";
  std::vector<double> cold, disk, mem;
  for (int i = 0; i < 5; ++i) {
    CompileRequest r = req;
    r.source += "// variant " + std::to_string(i) + "\n"; // a new key each time
    Compiler c(cacheDir);
    auto t0 = std::chrono::steady_clock::now();
    StatusOr<CompileResult> out = c.compile(r);
    auto t1 = std::chrono::steady_clock::now();
    if (!out.ok())
      die(out.message());
    cold.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    Compiler fresh(cacheDir);
    t0 = std::chrono::steady_clock::now();
    out = fresh.compile(r);
    t1 = std::chrono::steady_clock::now();
    if (!out.ok() || out->outcome != CacheOutcome::DiskHit)
      die("expected a disk hit");
    disk.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (int k = 0; k < 2000; ++k) {
      t0 = std::chrono::steady_clock::now();
      out = fresh.compile(r);
      t1 = std::chrono::steady_clock::now();
      if (out->outcome != CacheOutcome::MemoryHit)
        die("expected a memory hit");
      mem.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  std::filesystem::remove_all(cacheDir);
  json << "  \"nvrtc\": {\"kernel_source_bytes\": " << req.source.size()
       << ", \"cold_compile_ms\": " << median(cold)
       << ", \"disk_hit_ms\": " << median(disk)
       << ", \"memory_hit_us\": " << median(mem) << "},\n";

  // Host time per launch.
  Compiler c("");
  StatusOr<CompileResult> compiled = c.compile(req);
  if (!compiled.ok())
    die(compiled.message());
  StatusOr<std::unique_ptr<Module>> module = Module::load(*compiled->cubin);
  if (!module.ok())
    die(module.message());
  StatusOr<Kernel> empty = (*module)->kernel("empty_kernel");
  StatusOr<Kernel> fused = (*module)->kernel("gat_fused");
  if (!empty.ok() || !fused.ok())
    die("kernel lookup failed");
  DeviceBuffer scratch = std::move(*DeviceBuffer::allocate(1024));
  void *p = scratch.data();
  int nArg = 1;
  void *args[] = {&p, &nArg};
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const int launches = 2000;
  std::vector<double> perLaunch;
  for (int round = 0; round < 7; ++round) {
    cudaStreamSynchronize(stream);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
      if (!empty->launch(1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(stream), args).ok())
        die("launch failed");
    auto t1 = std::chrono::steady_clock::now();
    perLaunch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / launches);
  }
  // The same through an Executable with one launch step (formulas, bindings).
  Program prog;
  prog.name = "one_launch";
  prog.units = {{{"empty_kernel"}, kTypicalKernel}};
  prog.kernels = {"empty_kernel"};
  prog.buffers = {{"p", BufferRole::Output, DType::F32, *Formula::parse("nodes")}};
  LaunchStep l;
  l.kernel = "empty_kernel";
  l.grid[0] = *Formula::parse("ceil_div(nodes, 256)");
  l.grid[1] = l.grid[2] = Formula::constant(1);
  l.block[0] = 256;
  l.sharedBytes = Formula::constant(0);
  KernelArg ka;
  ka.kind = KernelArg::Kind::Buffer;
  ka.name = "p";
  l.args.push_back(ka);
  ka.kind = KernelArg::Kind::I32;
  ka.integer = *Formula::parse("nodes");
  l.args.push_back(ka);
  prog.steps.push_back(l);
  StatusOr<std::unique_ptr<Executable>> ex = Executable::create(prog, c);
  if (!ex.ok())
    die(ex.message());
  gnn::HostGraph small = gnn::generatePowerLaw(200, 1000, 1);
  std::unique_ptr<Graph> sg = std::move(*Graph::fromHost(small));
  std::map<std::string, void *> bind = {{"p", scratch.data()}};
  std::vector<double> perRun;
  for (int round = 0; round < 7; ++round) {
    cudaStreamSynchronize(stream);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
      if (!(*ex)->run(*sg, bind, stream).ok())
        die("run failed");
    auto t1 = std::chrono::steady_clock::now();
    perRun.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / launches);
  }
  cudaStreamSynchronize(stream);
  const KernelInfo &fi = fused->info();
  json << "  \"launch\": {\"host_us_per_kernel_launch\": " << median(perLaunch)
       << ", \"host_us_per_executable_run_1_launch\": " << median(perRun)
       << ", \"gat_fused_registers\": " << fi.registers
       << ", \"gat_fused_local_bytes\": " << fi.localBytes << "}\n}\n";
  std::cout << json.str();
  return 0;
}
