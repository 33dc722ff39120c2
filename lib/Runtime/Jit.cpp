//===- Jit.cpp - compiling a Program's kernels in parallel ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Jit.h"
#include "gnn/Runtime/Environment.h"

#include <algorithm>
#include <atomic>
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

StatusOr<std::vector<CompileResult>>
gnn::runtime::compileProgram(const Program &program, Compiler &compiler,
                             const std::string &arch) {
  StatusOr<int> threads = jitThreads();
  if (!threads.ok())
    return threads.error();
  std::set<std::string> launched(program.kernels.begin(),
                                 program.kernels.end());
  std::vector<size_t> needed;
  for (size_t u = 0; u < program.units.size(); ++u)
    for (const std::string &k : program.units[u].kernels)
      if (launched.count(k)) {
        needed.push_back(u);
        break;
      }
  std::string base = program.name.empty() ? "program" : program.name;
  std::vector<CompileResult> results(program.units.size());
  std::vector<Status> errors(program.units.size());
  auto compileOne = [&](size_t i) {
    size_t u = needed[i];
    CompileRequest req;
    req.source = program.unitSource(u);
    req.name = base + "." + program.units[u].kernels.front();
    req.arch = arch;
    req.options = program.options;
    StatusOr<CompileResult> r = compiler.compile(req);
    if (r.ok())
      results[u] = std::move(*r);
    else
      errors[u] = r.error();
  };
  if (*threads == 1) {
    for (size_t i = 0; i < needed.size(); ++i)
      compileOne(i);
  } else {
    runOnJitPool(needed.size(), compileOne);
  }
  // Every failure, in unit order; one that every unit shares (an unusable
  // dump folder) once.
  std::vector<std::string> messages;
  size_t failed = 0;
  for (const Status &e : errors)
    if (!e.ok()) {
      ++failed;
      if (std::find(messages.begin(), messages.end(), e.message()) ==
          messages.end())
        messages.push_back(e.message());
    }
  if (!failed)
    return results;
  if (messages.size() == 1)
    return Status::error(messages.front());
  std::string message = std::to_string(failed) + " of " +
                        std::to_string(needed.size()) + " kernels of '" +
                        base + "' failed to compile:";
  for (const std::string &m : messages)
    message += "\n" + m;
  return Status::error(message);
}
