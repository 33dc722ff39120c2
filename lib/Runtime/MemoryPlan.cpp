//===- MemoryPlan.cpp - temporaries placed in one arena by liveness -------===//
//
// Part of gnnc. See MemoryPlan.h for the rules. The placements are greedy
// heuristics of offline buffer-sharing planners (TFLite's GreedyBySize and
// first-fit in program order): few blocks per Program, so the quadratic
// loops are cheap.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/MemoryPlan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

using namespace gnn::runtime;
using Json = nlohmann::ordered_json;

size_t gnn::runtime::elementBytes(DType t) {
  // 8 for i64, f64 and for any wider type added later: too much, never too
  // little.
  if (isHalf(t))
    return 2;
  return t == DType::F32 || t == DType::I32 ? 4 : 8;
}

StatusOr<int64_t> gnn::runtime::bufferElements(const BufferDecl &b,
                                               const FormulaScope &scope) {
  StatusOr<int64_t> n = b.size.evaluate(scope);
  if (!n.ok())
    return Status(n.error()).withContext("size of buffer '" + b.name + "'");
  if (*n < 0)
    return Status::error("buffer '" + b.name + "' has negative size " +
                         std::to_string(*n));
  return *n;
}

StatusOr<int64_t> gnn::runtime::bufferBytes(const BufferDecl &b,
                                            const FormulaScope &scope) {
  StatusOr<int64_t> n = bufferElements(b, scope);
  if (!n.ok())
    return n;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(*n, static_cast<int64_t>(elementBytes(b.dtype)),
                             &bytes))
    return Status::error("buffer '" + b.name + "' of " + std::to_string(*n) +
                         " elements needs more than 2^63 bytes");
  return bytes;
}

static size_t alignUp(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

static bool overlapInTime(const MemoryBlock &a, const MemoryBlock &b) {
  return !(a.last < b.first || b.last < a.first);
}

Status gnn::runtime::checkMemoryBlocks(const std::vector<MemoryBlock> &blocks,
                                       size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    return Status::error("memory plan: the alignment " +
                         std::to_string(alignment) + " is not a power of two");
  size_t total = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const MemoryBlock &b = blocks[i];
    if (b.first > b.last)
      return Status::error("memory plan: block " + std::to_string(i) +
                           " is live from step " + std::to_string(b.first) +
                           " to the earlier step " + std::to_string(b.last));
    // The arena is at most the sum of the rounded sizes: that must fit.
    if (b.bytes > std::numeric_limits<size_t>::max() - (alignment - 1) ||
        __builtin_add_overflow(total, alignUp(b.bytes, alignment), &total))
      return Status::error("memory plan: the blocks need more than 2^64 bytes "
                           "(block " +
                           std::to_string(i) + " has " +
                           std::to_string(b.bytes) + ")");
  }
  return Status();
}

using Gap = std::pair<size_t, size_t>; // [begin, end)

/// The gaps under `top` between the `placed` blocks (at `offsets`, of
/// `size` bytes) that are live with `block`, where `bytes` fit, lowest
/// first. `busy` is scratch.
static void fittingGaps(const MemoryBlock &block, size_t bytes,
                        const std::vector<MemoryBlock> &blocks,
                        const std::vector<size_t> &placed,
                        const std::vector<size_t> &offsets,
                        const std::vector<size_t> &size, size_t top,
                        std::vector<Gap> &busy, std::vector<Gap> &gaps) {
  busy.clear();
  for (size_t j : placed)
    if (overlapInTime(block, blocks[j]))
      busy.push_back({offsets[j], offsets[j] + size[j]});
  std::sort(busy.begin(), busy.end());
  gaps.clear();
  size_t cursor = 0;
  for (auto [begin, end] : busy) {
    if (begin > cursor && begin - cursor >= bytes)
      gaps.push_back({cursor, begin});
    cursor = std::max(cursor, end);
  }
  if (cursor <= top && top - cursor >= bytes)
    gaps.push_back({cursor, top});
}

/// Places the blocks one by one in `order`, each in a gap between the placed
/// blocks whose live ranges overlap its own: the smallest gap that fits (the
/// lowest on ties), or, with `alternate`, the lowest fitting offset for the
/// 1st, 3rd, ... block and the highest for the 2nd, 4th, ... Gaps end at
/// `bound` (no bound when 0); nothing when a block does not fit under it.
static std::optional<ArenaPlan>
placeInOrder(const std::vector<MemoryBlock> &blocks,
             const std::vector<size_t> &size, const std::vector<size_t> &order,
             size_t bound, bool alternate) {
  const size_t top = bound ? bound : std::numeric_limits<size_t>::max();
  ArenaPlan plan;
  plan.offsets.assign(blocks.size(), 0);
  std::vector<size_t> placed;
  std::vector<Gap> busy, gaps;
  size_t n = 0;
  for (size_t i : order) {
    if (size[i] == 0)
      continue;
    fittingGaps(blocks[i], size[i], blocks, placed, plan.offsets, size, top,
                busy, gaps);
    if (gaps.empty())
      return std::nullopt;
    size_t offset;
    if (alternate) {
      offset = n % 2 == 0 ? gaps.front().first : gaps.back().second - size[i];
    } else {
      auto best =
          std::min_element(gaps.begin(), gaps.end(), [](auto a, auto b) {
            return a.second - a.first < b.second - b.first;
          });
      offset = best->first;
    }
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size[i]);
    placed.push_back(i);
    ++n;
  }
  return plan;
}

ArenaPlan gnn::runtime::planArena(const std::vector<MemoryBlock> &blocks,
                                  size_t alignment) {
  std::vector<size_t> size(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i)
    size[i] = alignUp(blocks[i].bytes, alignment);
  std::vector<size_t> bySize(blocks.size());
  std::iota(bySize.begin(), bySize.end(), 0);
  std::vector<size_t> byFirst = bySize;
  std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    if (size[a] != size[b])
      return size[a] > size[b];
    return blocks[a].first < blocks[b].first;
  });
  std::stable_sort(byFirst.begin(), byFirst.end(), [&](size_t a, size_t b) {
    return blocks[a].first < blocks[b].first;
  });
  // Three candidates, the smallest arena wins (the earlier one on ties).
  ArenaPlan best = *placeInOrder(blocks, size, bySize, 0, false);
  size_t lowerBound = maxLiveBytes(blocks, alignment);
  for (std::optional<ArenaPlan> other :
       {placeInOrder(blocks, size, byFirst, 0, false),
        lowerBound ? placeInOrder(blocks, size, byFirst, lowerBound, true)
                   : std::nullopt})
    if (other && other->arenaBytes < best.arenaBytes)
      best = std::move(*other);
  return best;
}

Status gnn::runtime::verifyArenaPlan(const std::vector<MemoryBlock> &blocks,
                                     const ArenaPlan &plan, size_t alignment) {
  if (plan.offsets.size() != blocks.size())
    return Status::error("memory plan: " + std::to_string(plan.offsets.size()) +
                         " offsets for " + std::to_string(blocks.size()) +
                         " blocks");
  if (plan.arenaBytes % alignment)
    return Status::error("memory plan: the arena size " +
                         std::to_string(plan.arenaBytes) +
                         " is not a multiple of " + std::to_string(alignment));
  for (size_t i = 0; i < blocks.size(); ++i) {
    size_t off = plan.offsets[i], bytes = blocks[i].bytes;
    if (off % alignment)
      return Status::error("memory plan: block " + std::to_string(i) +
                           " at offset " + std::to_string(off) +
                           " is not aligned to " + std::to_string(alignment));
    if (bytes && (off > plan.arenaBytes || bytes > plan.arenaBytes - off))
      return Status::error("memory plan: block " + std::to_string(i) + " [" +
                           std::to_string(off) + ", +" + std::to_string(bytes) +
                           ") ends beyond the arena of " +
                           std::to_string(plan.arenaBytes) + " bytes");
    for (size_t j = 0; j < i; ++j) {
      size_t off2 = plan.offsets[j], bytes2 = blocks[j].bytes;
      if (!bytes || !bytes2 || !overlapInTime(blocks[i], blocks[j]))
        continue;
      if (off < off2 + bytes2 && off2 < off + bytes)
        return Status::error(
            "memory plan: blocks " + std::to_string(j) + " and " +
            std::to_string(i) + " are live together (steps " +
            std::to_string(std::max(blocks[i].first, blocks[j].first)) +
            " to " + std::to_string(std::min(blocks[i].last, blocks[j].last)) +
            ") but overlap in the arena");
    }
  }
  return Status();
}

size_t gnn::runtime::maxLiveBytes(const std::vector<MemoryBlock> &blocks,
                                  size_t alignment) {
  // +size at `first`, -size after `last`; the running sum's maximum.
  std::map<size_t, std::pair<size_t, size_t>> events; // step -> (add, remove)
  for (const MemoryBlock &b : blocks) {
    size_t s = alignUp(b.bytes, alignment);
    events[b.first].first += s;
    events[b.last + 1].second += s;
  }
  size_t live = 0, most = 0;
  for (auto &[step, e] : events) {
    live = live - e.second + e.first;
    most = std::max(most, live);
  }
  return most;
}

std::vector<LiveRange> gnn::runtime::bufferLiveRanges(const Program &program) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < program.buffers.size(); ++i)
    index[program.buffers[i].name] = i;
  std::vector<LiveRange> ranges(program.buffers.size());
  // A step that overlaps the k steps before it (overlapsOf: a launch or a
  // row-split gemm) may run at any time between the first of them and
  // itself: a buffer it uses lives over its whole window [lo, hi], so that
  // no step of the window shares its memory. The steps of the window run in
  // order on the caller's stream, as anywhere else.
  size_t steps = program.steps.size();
  std::vector<size_t> lo(steps), hi(steps);
  for (size_t s = 0; s < steps; ++s)
    lo[s] = hi[s] = s;
  for (const Program::OverlapWindow &w : program.overlapWindows())
    lo[w.last] = w.first;
  for (size_t s = 0; s < steps; ++s) {
    auto use = [&](const std::string &name) {
      auto it = index.find(name);
      if (name.empty() || it == index.end())
        return; // no weights; or a Program that does not verify
      LiveRange &r = ranges[it->second];
      if (!r.used || lo[s] < r.first)
        r.first = lo[s];
      r.last = r.used ? std::max(r.last, hi[s]) : hi[s];
      r.used = true;
    };
    const Step &step = program.steps[s];
    if (auto *l = std::get_if<LaunchStep>(&step)) {
      for (const KernelArg &a : l->args)
        if (a.kind == KernelArg::Kind::Buffer)
          use(a.name);
    } else if (auto *sp = std::get_if<SpmmStep>(&step)) {
      use(sp->input);
      use(sp->output);
      use(sp->weights);
    } else if (auto *g = std::get_if<GemmStep>(&step)) {
      use(g->a);
      use(g->b);
      use(g->c);
      use(g->partials);
      use(g->bias);
      use(g->rowSums);
    } else if (auto *f = std::get_if<FillStep>(&step)) {
      use(f->buffer);
    } else if (auto *c = std::get_if<CopyStep>(&step)) {
      use(c->src);
      use(c->dst);
    }
  }
  return ranges;
}

namespace {
/// An output that can hold temps before its first step: the temps placed
/// in it so far, as blocks (rounded sizes) at their offsets.
struct Host {
  size_t buffer = 0, bytes = 0, first = 0;
  std::vector<MemoryBlock> blocks;
  std::vector<size_t> offsets, sizes, placed;

  /// The lowest offset where `t` fits beside the temps live with it
  /// (fittingGaps, under the output's size), or SIZE_MAX: also when `t`
  /// is live at the output's first step.
  size_t fit(const MemoryPlan::Temp &t, std::vector<Gap> &busy,
             std::vector<Gap> &gaps) const {
    if (t.range.last >= first)
      return SIZE_MAX;
    // (Its own bytes, not rounded up: the output's end need not be
    // aligned; the placed temps' rounded sizes keep offsets aligned.)
    fittingGaps({t.bytes, t.range.first, t.range.last}, t.bytes, blocks,
                placed, offsets, sizes, bytes, busy, gaps);
    return gaps.empty() ? SIZE_MAX : gaps.front().first;
  }
  void add(const MemoryPlan::Temp &t) {
    placed.push_back(blocks.size());
    blocks.push_back({t.bytes, t.range.first, t.range.last});
    offsets.push_back(t.offset);
    sizes.push_back(alignUp(t.bytes, kArenaAlignment));
  }
};
} // namespace

StatusOr<MemoryPlan> gnn::runtime::planMemory(const Program &program,
                                              const FormulaScope &scope) {
  MemoryPlan plan;
  std::vector<LiveRange> ranges = bufferLiveRanges(program);
  std::vector<Host> hosts;
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const BufferDecl &b = program.buffers[i];
    if (b.role == BufferRole::Input)
      continue;
    StatusOr<int64_t> bytesOr = bufferBytes(b, scope);
    if (!bytesOr.ok())
      return Status(bytesOr.error());
    size_t bytes = static_cast<size_t>(*bytesOr);
    if (b.role == BufferRole::Output) {
      if (ranges[i].used && bytes)
        hosts.push_back({i, bytes, ranges[i].first, {}, {}, {}, {}});
      continue;
    }
    if (b.role != BufferRole::Temp)
      continue;
    MemoryPlan::Temp t;
    t.buffer = i;
    t.bytes = bytes;
    t.range = ranges[i];
    if (t.range.used &&
        __builtin_add_overflow(plan.unplannedBytes, t.bytes,
                               &plan.unplannedBytes))
      return Status::error("the temps of program '" + program.name +
                           "' need more than 2^64 bytes");
    plan.temps.push_back(t);
  }
  // The arena of the used temps not in `hosted`: the blocks placed, which
  // temps they are, and the plan.
  struct Arena {
    std::vector<MemoryBlock> blocks;
    std::vector<size_t> temps;
    ArenaPlan plan;
  };
  auto placeInArena = [&](const std::vector<bool> &hosted) -> StatusOr<Arena> {
    Arena a;
    for (size_t t = 0; t < plan.temps.size(); ++t) {
      const MemoryPlan::Temp &temp = plan.temps[t];
      if (temp.range.used && !hosted[t]) {
        a.temps.push_back(t);
        a.blocks.push_back({temp.bytes, temp.range.first, temp.range.last});
      }
    }
    Status checked = checkMemoryBlocks(a.blocks);
    if (!checked.ok())
      return checked.withContext("program '" + program.name + "'");
    a.plan = planArena(a.blocks);
    Status verified = verifyArenaPlan(a.blocks, a.plan);
    if (!verified.ok())
      return verified.withContext("internal error: program '" +
                                  program.name + "'");
    return a;
  };
  std::vector<bool> none(plan.temps.size(), false);
  StatusOr<Arena> all = placeInArena(none);
  if (!all.ok())
    return all.error();
  plan.maxLiveBytes = maxLiveBytes(all->blocks);

  // Temps into outputs not yet written: largest first (then earlier, then
  // in buffer order), each into the first output where it fits.
  std::vector<size_t> order;
  for (size_t t = 0; t < plan.temps.size(); ++t)
    if (plan.temps[t].range.used && plan.temps[t].bytes)
      order.push_back(t);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const MemoryPlan::Temp &x = plan.temps[a], &y = plan.temps[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    return x.range.first < y.range.first;
  });
  std::vector<bool> hosted(plan.temps.size(), false);
  std::vector<Gap> busy, gaps;
  for (size_t t : order)
    for (Host &host : hosts) {
      size_t offset = host.fit(plan.temps[t], busy, gaps);
      if (offset == SIZE_MAX)
        continue;
      plan.temps[t].offset = offset;
      plan.temps[t].host = host.buffer;
      host.add(plan.temps[t]);
      hosted[t] = true;
      break;
    }
  StatusOr<Arena> arena = placeInArena(hosted);
  if (!arena.ok())
    return arena.error();
  if (arena->plan.arenaBytes > all->plan.arenaBytes) {
    // (Greedy placement is not monotonic: never worse than no hosting.)
    for (MemoryPlan::Temp &t : plan.temps)
      t.host = MemoryPlan::Temp::kArena;
    arena = std::move(all);
  }
  for (size_t k = 0; k < arena->temps.size(); ++k)
    plan.temps[arena->temps[k]].offset = arena->plan.offsets[k];
  plan.arenaBytes = arena->plan.arenaBytes;
  return plan;
}

std::string MemoryPlan::toJson(const Program &program) const {
  Json list = Json::array();
  for (const Temp &t : temps) {
    Json j{{"name", program.buffers[t.buffer].name}, {"bytes", t.bytes}};
    if (t.range.used) {
      j["first_step"] = t.range.first;
      j["last_step"] = t.range.last;
      j["offset"] = t.offset;
      j["in"] = t.host == Temp::kArena ? std::string("arena")
                                       : program.buffers[t.host].name;
    } else {
      j["first_step"] = nullptr;
      j["last_step"] = nullptr;
      j["offset"] = nullptr;
      j["in"] = nullptr;
    }
    list.push_back(std::move(j));
  }
  Json out{{"arena_bytes", arenaBytes},
           {"unplanned_bytes", unplannedBytes},
           {"max_live_bytes", maxLiveBytes},
           {"alignment", kArenaAlignment},
           {"temps", std::move(list)}};
  return out.dump(2) + "\n";
}
