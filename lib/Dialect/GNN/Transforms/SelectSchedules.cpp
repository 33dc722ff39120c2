//===- SelectSchedules.cpp - a schedule for every kernel group ------------===//
//
// Part of gnnc. The choice is the group's family's (gnn/Dialect/GNN/IR/
// KernelFamily.h; most families ask gnn/Analysis/Schedule.h); this pass
// gathers the graph's statistics and records the answer.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/IR/GraphStatsAttr.h"
#include "gnn/Dialect/GNN/IR/KernelFamily.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNSELECTSCHEDULES
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

namespace {
struct SelectSchedules
    : public mlir::gnn::impl::GNNSelectSchedulesBase<SelectSchedules> {
  using GNNSelectSchedulesBase::GNNSelectSchedulesBase;

  void runOnOperation() override {
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
    ScheduleInputs inputs;
    inputs.graph = graph;
    inputs.split = split;
    WalkResult r = getOperation().walk([&](KernelGroupOp group) {
      FailureOr<ScheduleAttr> schedule =
          kernelFamily(group.getFamily()).schedule(group, inputs);
      if (failed(schedule))
        return WalkResult::interrupt();
      group.setScheduleAttr(*schedule);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
