//===- SelectSchedules.cpp - a schedule for every kernel group ------------===//
//
// Part of gnnc. The choice is made by gnn/Analysis/Schedule.h; this pass only
// builds the problem from the IR and records the answer.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/Schedule.h"
#include "gnn/Dialect/GNN/Transforms/Passes.h"

namespace mlir {
namespace gnn {
#define GEN_PASS_DEF_GNNSELECTSCHEDULES
#include "gnn/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnn
} // namespace mlir

using namespace mlir;
using namespace mlir::gnn;

/// The group's kind and the row width of the value its anchor op produces.
static ::gnn::ScheduleProblem problemFor(KernelGroupOp group) {
  ::gnn::ScheduleProblem p;
  p.kind = ::gnn::GroupKind::Elementwise;
  Operation *anchor = &group.getBody().front().front();
  using K = ::gnn::GroupKind;
  if (isa<SpmmOp>(anchor)) p.kind = K::Spmm;
  else if (isa<ReduceOp>(anchor)) p.kind = K::Reduce;
  else if (isa<EdgeSoftmaxOp>(anchor)) p.kind = K::EdgeSoftmax;
  else if (isa<SddmmOp>(anchor)) p.kind = K::Sddmm;
  else if (isa<GatherOp>(anchor)) p.kind = K::Gather;
  else if (isa<DegreeOp>(anchor)) p.kind = K::Degree;
  if (anchor->getNumResults() == 1)
    if (auto t = dyn_cast<RankedTensorType>(anchor->getResult(0).getType())) {
      int64_t row = 1;
      for (int64_t d : t.getShape().drop_front())
        row *= ShapedType::isDynamic(d) ? 1 : d;
      p.rowElements = row;
    }
  return p;
}

static Mapping toAttr(::gnn::ThreadMapping m) {
  switch (m) {
  case ::gnn::ThreadMapping::RowParallel: return Mapping::row_parallel;
  case ::gnn::ThreadMapping::EdgeParallel: return Mapping::edge_parallel;
  case ::gnn::ThreadMapping::ElementParallel: return Mapping::element_parallel;
  }
  return Mapping::element_parallel;
}

namespace {
struct SelectSchedules
    : public mlir::gnn::impl::GNNSelectSchedulesBase<SelectSchedules> {
  using GNNSelectSchedulesBase::GNNSelectSchedulesBase;

  void runOnOperation() override {
    WalkResult r = getOperation().walk([&](KernelGroupOp group) {
      ::gnn::ScheduleProblem p = problemFor(group);
      p.graph.meanDegree = meanDegree;
      p.graph.maxDegree = maxDegree;
      if (std::string bad = p.check(); !bad.empty()) {
        group.emitOpError() << "cannot be scheduled: " << bad;
        return WalkResult::interrupt();
      }
      ::gnn::Schedule s = ::gnn::chooseSchedule(p);
      if (std::string bad = s.verify(p); !bad.empty()) {
        group.emitOpError() << "got an invalid schedule: " << bad;
        return WalkResult::interrupt();
      }
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
