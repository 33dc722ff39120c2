//===- Jit.cpp - compiling a Program's kernels in parallel ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Jit.h"
#include "gnn/Runtime/Environment.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

using namespace gnn::runtime;

namespace {
/// One runOnJitPool call: tasks are taken by index by whoever comes first.
struct Batch {
  size_t count = 0;
  const std::function<void(size_t)> *task = nullptr;
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable finished;
  size_t done = 0;

  /// Runs tasks until none is left; false when there was none to take.
  bool work() {
    bool any = false;
    for (size_t i; (i = next.fetch_add(1)) < count;) {
      any = true;
      (*task)(i);
      std::lock_guard<std::mutex> lock(mutex);
      if (++done == count)
        finished.notify_all();
    }
    return any;
  }
};

/// Worker threads waiting for batches. Never destroyed: the workers are
/// detached and idle at exit (every batch's caller waits for it).
class Pool {
public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i)
      std::thread([this] { loop(); }).detach();
    workers = threads - 1;
  }

  void run(size_t count, const std::function<void(size_t)> &task) {
    auto batch = std::make_shared<Batch>();
    batch->count = count;
    batch->task = &task;
    if (workers > 0 && count > 1) {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(batch);
      wake.notify_all();
    }
    batch->work();
    std::unique_lock<std::mutex> lock(batch->mutex);
    batch->finished.wait(lock, [&] { return batch->done == batch->count; });
  }

private:
  void loop() {
    for (;;) {
      std::shared_ptr<Batch> batch;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return !queue.empty(); });
        batch = queue.front();
        if (batch->next.load() >= batch->count) {
          // Every task of it is taken: off the queue.
          queue.pop_front();
          continue;
        }
      }
      batch->work();
    }
  }

  int workers = 0;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Batch>> queue;
};

Pool &pool() {
  static Pool *p = new Pool(jitThreads().ok() ? *jitThreads() : 1);
  return *p;
}
} // namespace

StatusOr<int> gnn::runtime::jitThreads() {
  const Environment &env = environment();
  if (!env.jitThreadsError.empty())
    return Status::error(env.jitThreadsError);
  if (env.jitThreads > 0)
    return env.jitThreads;
  unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 16u));
}

void gnn::runtime::runOnJitPool(size_t count,
                                const std::function<void(size_t)> &task) {
  if (count == 0)
    return;
  pool().run(count, task);
}

StatusOr<std::vector<std::vector<CompileResult>>>
gnn::runtime::compilePrograms(const std::vector<const Program *> &programs,
                              Compiler &compiler, const std::string &arch) {
  StatusOr<int> threads = jitThreads();
  if (!threads.ok())
    return threads.error();
  // The distinct sources to compile, each with the first (program, unit)
  // that needs it; every (program, unit) that needs one points at it.
  struct Job {
    std::string source, name;
    const Program *program;
  };
  std::vector<Job> jobs;
  std::map<std::string, size_t> jobOf;
  std::vector<std::vector<size_t>> use(programs.size());
  std::vector<std::string> names;
  for (size_t p = 0; p < programs.size(); ++p) {
    const Program &program = *programs[p];
    std::string base = program.name.empty() ? "program" : program.name;
    names.push_back(base);
    std::set<std::string> launched(program.kernels.begin(),
                                   program.kernels.end());
    use[p].assign(program.units.size(), SIZE_MAX);
    for (size_t u = 0; u < program.units.size(); ++u) {
      const SourceUnit &unit = program.units[u];
      if (std::none_of(unit.kernels.begin(), unit.kernels.end(),
                       [&](const std::string &k) { return launched.count(k); }))
        continue;
      std::string source = program.unitSource(u);
      auto [it, added] = jobOf.emplace(source, jobs.size());
      if (added)
        jobs.push_back({std::move(source), base + "." + unit.kernels.front(),
                        &program});
      use[p][u] = it->second;
    }
  }
  std::vector<CompileResult> results(jobs.size());
  std::vector<Status> errors(jobs.size());
  auto compileOne = [&](size_t j) {
    CompileRequest req;
    req.source = jobs[j].source;
    req.name = jobs[j].name;
    req.arch = arch;
    req.options = jobs[j].program->options;
    StatusOr<CompileResult> r = compiler.compile(req);
    if (r.ok())
      results[j] = std::move(*r);
    else
      errors[j] = r.error();
  };
  if (*threads == 1) {
    for (size_t j = 0; j < jobs.size(); ++j)
      compileOne(j);
  } else {
    runOnJitPool(jobs.size(), compileOne);
  }
  // Every failure, in order; one that every unit shares (an unusable dump
  // folder) once.
  std::vector<std::string> messages;
  size_t failed = 0;
  for (const Status &e : errors)
    if (!e.ok()) {
      ++failed;
      if (std::find(messages.begin(), messages.end(), e.message()) ==
          messages.end())
        messages.push_back(e.message());
    }
  if (failed) {
    if (messages.size() == 1)
      return Status::error(messages.front());
    std::string of;
    for (const std::string &n : names)
      of += (of.empty() ? "'" : ", '") + n + "'";
    std::string message = std::to_string(failed) + " of " +
                          std::to_string(jobs.size()) + " kernels of " + of +
                          " failed to compile:";
    for (const std::string &m : messages)
      message += "\n" + m;
    return Status::error(message);
  }
  std::vector<std::vector<CompileResult>> out(programs.size());
  for (size_t p = 0; p < programs.size(); ++p) {
    out[p].resize(use[p].size());
    for (size_t u = 0; u < use[p].size(); ++u)
      if (use[p][u] != SIZE_MAX)
        out[p][u] = results[use[p][u]];
  }
  return out;
}

StatusOr<std::vector<CompileResult>>
gnn::runtime::compileProgram(const Program &program, Compiler &compiler,
                             const std::string &arch) {
  StatusOr<std::vector<std::vector<CompileResult>>> r =
      compilePrograms({&program}, compiler, arch);
  if (!r.ok())
    return r.error();
  return std::move(r->front());
}
