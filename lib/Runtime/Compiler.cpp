//===- Compiler.cpp - NVRTC compilation with a persistent cache -----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Compiler.h"
#include "gnn/Runtime/CacheEntry.h"
#include "gnn/Runtime/CudaDriver.h"
#include "gnn/Runtime/Environment.h"

#include <nvrtc.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

using namespace gnn::runtime;
namespace fs = std::filesystem;

int gnn::runtime::nvrtcVersionNumber() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return 1000 * major + 10 * minor;
}

const char *gnn::runtime::buildId() { return GNNC_BUILD_ID; }

//===----------------------------------------------------------------------===//
// Hashing and the disk format
//===----------------------------------------------------------------------===//

namespace {
/// Hashes 8 bytes at a time: the in-memory lookup must stay well under 5 us
/// for sources of tens of kilobytes.
struct FastStringHash {
  size_t operator()(const std::string &s) const {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, s.data() + i, s.size() - i);
    h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
  }
};

using Key = CacheKey;
} // namespace

struct Compiler::Impl {
  std::string cacheDir;
  /// Guards `memory` and `inFlight`; never held while compiling, so that
  /// several threads compile different sources at once.
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const Cubin>, FastStringHash>
      memory;
  /// Sources being compiled by some thread: a second request for one waits
  /// for that compile instead of running NVRTC again.
  std::unordered_map<std::string,
                     std::shared_future<StatusOr<std::shared_ptr<const Cubin>>>,
                     FastStringHash>
      inFlight;
  /// Per-process constants of the key, computed once.
  std::once_flag keyPrefixOnce;
  std::string keyPrefix;

  StatusOr<std::string> resolveArch(const std::string &arch);
  StatusOr<Key> makeKey(const CompileRequest &request, const std::string &arch);
  bool readDisk(const Key &key, Cubin &out);
  void writeDisk(const Key &key, const Cubin &cubin);
  StatusOr<Cubin> runNvrtc(const CompileRequest &request,
                           const std::string &arch);
};

StatusOr<std::string> Compiler::Impl::resolveArch(const std::string &arch) {
  if (!arch.empty()) {
    if (arch.rfind("sm_", 0) != 0 || arch.size() < 5)
      return Status::error("expected an architecture like 'sm_90' but got '" +
                           arch + "'");
    return arch;
  }
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver.ok())
    return Status(driver.error()).withContext(
        "compiling for the current device");
  return "sm_" + std::to_string((*driver)->computeCapability());
}

StatusOr<Key> Compiler::Impl::makeKey(const CompileRequest &request,
                                      const std::string &arch) {
  std::call_once(keyPrefixOnce, [&] {
    int driverVersion = 0;
    if (StatusOr<const DriverApi *> api = CudaDriver::api(); api.ok())
      (*api)->cuDriverGetVersion(&driverVersion);
    keyPrefix = std::string("gnnc-kernel-key-1\n") + buildId() +
                "\nnvrtc=" + std::to_string(nvrtcVersionNumber()) +
                "\ndriver=" + std::to_string(driverVersion) + "\nheader=" +
                std::to_string(cacheHash(deviceHeaderSource().data(),
                                     deviceHeaderSource().size(), 0)) +
                "\narch=";
  });
  Key key;
  std::string &k = key.text;
  k.reserve(keyPrefix.size() + request.source.size() + 64);
  k += keyPrefix;
  k += arch;
  for (const std::string &o : request.options) {
    k += "\noption=";
    k += o;
  }
  k += "\nsource=\n";
  k += request.source;
  return key;
}

bool Compiler::Impl::readDisk(const Key &key, Cubin &out) {
  return !cacheDir.empty() && readCacheFile(cacheDir, ".cubin", key, out.image);
}

void Compiler::Impl::writeDisk(const Key &key, const Cubin &cubin) {
  if (!cacheDir.empty())
    writeCacheFile(cacheDir, ".cubin", key, cubin.image);
}

/// The source lines an NVRTC log refers to ("name.cu(12): error ...").
static std::string quoteSourceLines(const std::string &log,
                                    const std::string &file,
                                    const std::string &source) {
  std::vector<std::string> lines;
  std::istringstream ss(source);
  for (std::string l; std::getline(ss, l);)
    lines.push_back(l);
  std::ostringstream out;
  std::string needle = file + "(";
  size_t pos = 0;
  int quoted = 0;
  while ((pos = log.find(needle, pos)) != std::string::npos && quoted < 10) {
    pos += needle.size();
    size_t end = log.find(')', pos);
    if (end == std::string::npos)
      break;
    int line = std::atoi(log.substr(pos, end - pos).c_str());
    if (line >= 1 && line <= static_cast<int>(lines.size())) {
      out << "  " << file << ":" << line << ": " << lines[line - 1] << "\n";
      ++quoted;
    }
  }
  return out.str();
}

/// Writes `text` to the new or truncated file `path`; the error names the
/// file and the reason.
static Status writeDumpFile(const std::string &path, const std::string &text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = 0;
  if (fd < 0) {
    err = errno;
  } else {
    const char *p = text.data();
    size_t left = text.size();
    while (left > 0 && !err) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        err = n < 0 ? errno : EIO;
      else
        p += n, left -= static_cast<size_t>(n);
    }
    if (::close(fd) != 0 && !err)
      err = errno;
  }
  if (err)
    return Status::error("cannot write '" + path + "' (GNNC_DUMP_DIR): " +
                         std::strerror(err));
  return Status();
}

/// GNNC_DUMP_DIR: the source and NVRTC's log of a compiled kernel.
static Status writeDumps(const std::string &dir, const std::string &source,
                         const std::string &sourceText, const std::string &log,
                         const std::string &logText) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::error("cannot create '" + dir +
                         "' (GNNC_DUMP_DIR): " + ec.message());
  Status s = writeDumpFile(dir + "/" + source, sourceText);
  if (!s.ok())
    return s;
  return writeDumpFile(dir + "/" + log, logText);
}

StatusOr<Cubin> Compiler::Impl::runNvrtc(const CompileRequest &request,
                                         const std::string &arch) {
  std::string file = request.name + ".cu";
  const char *headers[] = {deviceHeaderSource().c_str()};
  const char *headerNames[] = {"gnn_device.cuh"};
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, request.source.c_str(),
                                     file.c_str(), 1, headers, headerNames);
  if (r != NVRTC_SUCCESS)
    return Status::error(std::string("nvrtcCreateProgram: ") +
                         nvrtcGetErrorString(r));
  std::vector<std::string> options = {"-arch=" + arch, "-std=c++17",
                                      "-default-device"};
  options.insert(options.end(), request.options.begin(), request.options.end());
  std::vector<const char *> argv;
  for (const std::string &o : options)
    argv.push_back(o.c_str());
  r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  const Environment &env = environment();
  if (!env.dumpDir.empty()) {
    // Dumps were asked for: one that cannot be written is an error, not a
    // file silently missing when it is looked for.
    Status dumped = writeDumps(env.dumpDir, file, request.source,
                               request.name + ".log", log + "\n");
    if (!dumped.ok()) {
      nvrtcDestroyProgram(&prog);
      return dumped;
    }
  }
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    std::ostringstream msg;
    msg << "NVRTC failed to compile '" << file << "' for " << arch << " ("
        << nvrtcGetErrorString(r) << ")\noptions:";
    for (const std::string &o : options)
      msg << " " << o;
    msg << "\nlog:\n" << log << "\n";
    std::string quoted = quoteSourceLines(log, file, request.source);
    if (!quoted.empty())
      msg << "source lines:\n" << quoted;
    return Status::error(msg.str());
  }
  size_t size = 0;
  r = nvrtcGetCUBINSize(prog, &size);
  Cubin cubin;
  cubin.image.resize(size);
  if (r == NVRTC_SUCCESS)
    r = nvrtcGetCUBIN(prog, cubin.image.data());
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS)
    return Status::error(std::string("nvrtcGetCUBIN: ") + nvrtcGetErrorString(r));
  cubin.arch = arch;
  cubin.log = log;
  return cubin;
}

//===----------------------------------------------------------------------===//
// Compiler
//===----------------------------------------------------------------------===//

Compiler::Compiler(std::string cacheDir) : impl(new Impl) {
  impl->cacheDir = std::move(cacheDir);
}

Compiler::~Compiler() { delete impl; }

Compiler &Compiler::instance() {
  static Compiler compiler(environment().cacheDir);
  return compiler;
}

void Compiler::clearMemory() {
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->memory.clear();
}

StatusOr<std::string> Compiler::diskPath(const CompileRequest &request) {
  StatusOr<std::string> arch = impl->resolveArch(request.arch);
  if (!arch.ok())
    return arch.error();
  StatusOr<Key> key = impl->makeKey(request, *arch);
  key->hash();
  return impl->cacheDir + "/" + key->hex() + ".cubin";
}

StatusOr<CompileResult> Compiler::compile(const CompileRequest &request) {
  StatusOr<std::string> arch = impl->resolveArch(request.arch);
  if (!arch.ok())
    return arch.error();
  StatusOr<Key> key = impl->makeKey(request, *arch);
  bool always = environment().alwaysCompile;
  using Shared = StatusOr<std::shared_ptr<const Cubin>>;
  std::promise<Shared> promise;
  std::shared_future<Shared> other;
  if (!always) {
    std::lock_guard<std::mutex> lock(impl->mutex);
    auto it = impl->memory.find(key->text);
    if (it != impl->memory.end())
      return CompileResult{it->second, CacheOutcome::MemoryHit};
    auto running = impl->inFlight.find(key->text);
    if (running != impl->inFlight.end())
      other = running->second;
    else
      impl->inFlight.emplace(key->text, promise.get_future().share());
  }
  if (other.valid()) {
    // Another thread compiles the same source: its result, or its error.
    const Shared &done = other.get();
    if (!done.ok())
      return done.error();
    return CompileResult{*done, CacheOutcome::MemoryHit};
  }
  // This thread compiles (or reads the disk entry); the lock is not held.
  key->hash();
  auto cubin = std::make_shared<Cubin>();
  CacheOutcome outcome = CacheOutcome::Compiled;
  Status failure;
  if (!always && impl->readDisk(*key, *cubin)) {
    cubin->arch = *arch;
    outcome = CacheOutcome::DiskHit;
  } else {
    StatusOr<Cubin> compiled = impl->runNvrtc(request, *arch);
    if (compiled.ok()) {
      *cubin = std::move(*compiled);
      impl->writeDisk(*key, *cubin);
    } else {
      failure = compiled.error();
    }
  }
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (!always) {
    impl->inFlight.erase(key->text);
    if (failure.ok())
      promise.set_value(std::shared_ptr<const Cubin>(cubin));
    else
      promise.set_value(failure);
  }
  if (!failure.ok())
    return failure;
  impl->memory[key->text] = cubin;
  return CompileResult{cubin, outcome};
}
