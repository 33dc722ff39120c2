//===- SelectSchedules.cpp - a schedule for every kernel group ------------===//
//
// Part of gnnc. The choice is made by gnn/Analysis/Schedule.h; the problem
// comes from the group's family (gnn/Dialect/GNN/IR/KernelFamily.h); this
// pass adds the graph's statistics and records the answer.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"
#include "gnn/Dialect/GNN/IR/KernelFamily.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

#include <limits>

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNSELECTSCHEDULES
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

static Mapping toAttr(::gnn::ThreadMapping m) {
  switch (m) {
  case ::gnn::ThreadMapping::RowParallel: return Mapping::row_parallel;
  case ::gnn::ThreadMapping::EdgeParallel: return Mapping::edge_parallel;
  case ::gnn::ThreadMapping::ElementParallel: return Mapping::element_parallel;
  case ::gnn::ThreadMapping::BlockPerGraph:
    return Mapping::block_per_graph;
  }
  return Mapping::element_parallel;
}

namespace {
struct SelectSchedules
    : public mlir::gnn::impl::GNNSelectSchedulesBase<SelectSchedules> {
  using GNNSelectSchedulesBase::GNNSelectSchedulesBase;

  void runOnOperation() override {
    if (std::string bad = ::mlir::gnn::checkMaxChunks(maxChunks);
        !bad.empty()) {
      getOperation().emitError() << bad;
      return signalPassFailure();
    }
    if (split != -1 && (split < 0 || (split > 0 && split < 32))) {
      getOperation().emitError()
          << "expects split -1 (from the statistics), 0 or at least 32 but got "
          << static_cast<int64_t>(split);
      return signalPassFailure();
    }
    // The enclosing module's `gnn.graph_stats` (the compile driver sets
    // it); the `stats` option, statistics written by hand (gnn-opt), takes
    // precedence; without either, ScheduleProblem's defaults.
    ::gnn::GraphStats graph = ::gnn::ScheduleProblem::defaultStats();
    Operation *root = getOperation();
    auto module = root->getParentOfType<ModuleOp>();
    if (!stats.empty()) {
      if (std::string bad = ::gnn::GraphStats::parseOption(stats, graph);
          !bad.empty()) {
        root->emitError() << "gnn-select-schedules: bad `stats` '" << stats
                          << "': " << bad;
        return signalPassFailure();
      }
    } else if (Attribute a = module ? module->getAttr(kGraphStatsAttr)
                                    : Attribute()) {
      auto attr = dyn_cast<GraphStatsAttr>(a);
      if (!attr) {
        module->emitError() << "expects `" << kGraphStatsAttr
                            << "` to be a #gnn.graph_stats but got " << a;
        return signalPassFailure();
      }
      graph = statsOf(attr);
      if (std::string bad = graph.check(); !bad.empty()) {
        module->emitError() << "inconsistent `" << kGraphStatsAttr
                            << "`: " << bad;
        return signalPassFailure();
      }
    }
    WalkResult r = getOperation().walk([&](KernelGroupOp group) {
      ::gnn::ScheduleProblem p = scheduleProblem(group);
      p.graph = graph;
      p.maxChunks = maxChunks;
      if (std::string bad = p.check(); !bad.empty()) {
        group.emitOpError() << "cannot be scheduled: " << bad;
        return WalkResult::interrupt();
      }
      ::gnn::Schedule s = ::gnn::chooseSchedule(p);
      if (split >= 0 && (p.kind == ::gnn::GroupKind::Spmm ||
                         p.kind == ::gnn::GroupKind::Reduce ||
                         p.kind == ::gnn::GroupKind::Attention))
        s.split = split;
      // chooseSchedule answers a problem that passes check() with a valid
      // schedule: lanes a power of two up to 32 dividing the block of 256, a
      // vector of 1, 2 or 4 dividing the row (and for attention the head
      // width, through their gcd), a split of 0 or at least 32 only for row
      // kinds,
      // and the row-parallel mapping exactly for the row kinds.
      assert(s.verify(p).empty() &&
             "chooseSchedule returns valid schedules for checked problems, "
             "and a split checked above keeps them valid");
      group.setScheduleAttr(ScheduleAttr::get(&getContext(), toAttr(s.mapping),
                                              s.lanes, s.block, s.vector,
                                              s.split));
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
