//===- Environment.cpp - the runtime's environment knobs ------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Environment.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <unistd.h>

using namespace gnn::runtime;

static std::string get(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

Environment gnn::runtime::readEnvironment() {
  Environment env;
  std::string cache = get("GNNC_CACHE_DIR");
  if (cache == "off" || cache == "0")
    env.cacheDir.clear();
  else if (!cache.empty())
    env.cacheDir = cache;
  else if (!get("XDG_CACHE_HOME").empty())
    env.cacheDir = get("XDG_CACHE_HOME") + "/gnnc";
  else if (!get("HOME").empty())
    env.cacheDir = get("HOME") + "/.cache/gnnc";
  else // Per user: another user's folder would not be trusted (CacheEntry.h).
    env.cacheDir = "/tmp/gnnc-cache-" + std::to_string(geteuid());
  std::string always = get("GNNC_ALWAYS_COMPILE");
  env.alwaysCompile = !always.empty() && always != "0";
  env.dumpDir = get("GNNC_DUMP_DIR");
  std::string dev = get("GNNC_DEVICE");
  env.deviceOrdinal = dev.empty() ? -1 : std::max(0, std::atoi(dev.c_str()));
  std::string poison = get("GNNC_POISON_WORKSPACE");
  env.poisonWorkspace = !poison.empty() && poison != "0";
  env.cudaGraphs = get("GNNC_CUDA_GRAPHS") != "0";
  env.concurrentLaunches = get("GNNC_CONCURRENT_LAUNCHES") != "0";
  std::string threads = get("GNNC_JIT_THREADS");
  if (!threads.empty()) {
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(threads.c_str(), &end, 10);
    if (*end || errno || n < 1 || n > 1024)
      env.jitThreadsError = "GNNC_JIT_THREADS: expected a number of threads "
                            "from 1 to 1024 but got '" + threads + "'";
    else
      env.jitThreads = static_cast<int>(n);
  }
  return env;
}

const Environment &gnn::runtime::environment() {
  static Environment env = readEnvironment();
  return env;
}
