//===- KernelFamilyTest.cpp - the kernel-family records -------------------===//
//
// Part of gnnc. The records of gnn/Dialect/GNN/IR/KernelFamily.h are the
// single description of each family: one per GroupFamily case and one per
// planned FusionFamily, complete, and every mapping a record lists has a
// lowering pattern (and no pattern lowers a mapping its record does not
// list, which the verifier would never let a schedule use).
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/KernelFamily.h"
#include "GroupLowering.h"
#include "gnn/InitGNN.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;
using namespace mlir::gnn;

namespace {

TEST(KernelFamily, OneCompleteRecordPerFamilyInEnumOrder) {
  ArrayRef<KernelFamily> records = kernelFamilies();
  ASSERT_EQ(records.size(), getMaxEnumValForGroupFamily() + 1);
  for (auto [i, record] : llvm::enumerate(records)) {
    SCOPED_TRACE(stringifyGroupFamily(record.family).str());
    EXPECT_EQ(static_cast<size_t>(record.family), i);
    EXPECT_EQ(&kernelFamily(record.family), &record);
    EXPECT_FALSE(record.shape.empty());
    EXPECT_NE(record.accepts, nullptr);
    EXPECT_NE(record.schedule, nullptr);
    EXPECT_FALSE(record.mappings.empty());
    // A whole-function rule has a name and a former, or neither.
    EXPECT_EQ(record.wholeFunctionRule.empty(), record.formWhole == nullptr);
    // Rule names are `fuse` list entries: not the planner's own.
    for (StringRef planner : {"attention", "aggregation", "prologue", "none"})
      EXPECT_NE(record.wholeFunctionRule, planner);
  }
}

TEST(KernelFamily, EveryPlannedFamilyHasARecord) {
  using ::gnn::FusionFamily;
  for (FusionFamily planned :
       {FusionFamily::Attention, FusionFamily::Aggregation,
        FusionFamily::EdgeMap, FusionFamily::EdgeSoftmax, FusionFamily::Degree,
        FusionFamily::Elementwise})
    EXPECT_EQ(kernelFamily(planned).planned, planned);
}

TEST(KernelFamily, LoweringsCoverExactlyTheRecordsMappings) {
  DialectRegistry registry;
  ::gnn::registerGNNDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  RewritePatternSet patterns(&ctx);
  gnnk::populateGroupLoweringPatterns(patterns, 32);
  std::set<std::string> lowered;
  for (const std::unique_ptr<RewritePattern> &p : patterns.getNativePatterns())
    EXPECT_TRUE(lowered.insert(p->getDebugName().str()).second)
        << "two patterns named " << p->getDebugName().str();
  std::set<std::string> listed;
  for (const KernelFamily &record : kernelFamilies())
    for (Mapping mapping : record.mappings)
      listed.insert(("lower-" + stringifyGroupFamily(record.family) + "-" +
                     stringifyMapping(mapping))
                        .str());
  EXPECT_EQ(lowered, listed);
}

} // namespace
