//===- EvaluatorTest.cpp - exact semantics of the reference evaluator -----===//
//
// Part of gnnc. Every expected value here is computed by hand from the small
// graph below, so these tests pin down what each op means, edge cases
// included.
//
//===----------------------------------------------------------------------===//

#include "gnn/Reference/Evaluator.h"
#include "gnn/InitGNN.h"
#include "gnn/Tensor/HalfFloat.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using ::gnn::HostGraph;
using ::gnn::Tensor;

namespace {

/// 6 nodes, 7 edges: a duplicate edge (e0, e1), a self-loop (e3), node 3 has
/// no incoming edge, node 5 has no edge at all.
///   e0: 0->1  e1: 0->1  e2: 1->2  e3: 2->2  e4: 3->0  e5: 4->1  e6: 1->4
/// in-degrees  {1, 3, 2, 0, 1, 0}, out-degrees {2, 2, 1, 1, 1, 0}.
HostGraph tinyGraph() {
  HostGraph g;
  g.name = "tiny";
  g.numNodes = 6;
  g.src = {0, 0, 1, 2, 3, 4, 1};
  g.dst = {1, 1, 2, 2, 0, 1, 4};
  return g;
}

Tensor make(std::vector<int64_t> shape, std::vector<double> values) {
  Tensor t(std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numElements()), values.size());
  t.data.assign(values.begin(), values.end());
  return t;
}

/// x[n] = {n - 3, 3 - n}: negative values catch max/min clamped at zero.
Tensor signedNodes() {
  return make({6, 2}, {-3, 3, -2, 2, -1, 1, 0, 0, 1, -1, 2, -2});
}

class Evaluator : public ::testing::Test {
protected:
  Evaluator() {
    DialectRegistry registry;
    ::gnn::registerGNNDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source` (one function) and evaluates it; on failure records the
  /// diagnostics in `errors` and returns an empty vector.
  std::vector<Tensor> run(StringRef source, const HostGraph &graph,
                          std::vector<Tensor> inputs,
                          ::gnn::Storage storage = ::gnn::Storage::Double) {
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return {};
    auto func = *module->getOps<func::FuncOp>().begin();
    FailureOr<std::vector<Tensor>> out =
        ::gnn::evaluateReference(func, graph, inputs, storage);
    if (failed(out))
      return {};
    return *out;
  }

  /// Parses `source` (one function) into `module` and resolves its
  /// arguments against the tiny graph (resolveArguments).
  FailureOr<std::vector<::gnn::ArgumentSpec>> specsOf(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    return ::gnn::resolveArguments(*module->getOps<func::FuncOp>().begin(),
                                   tinyGraph());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string errors;
};

void expectTensor(const Tensor &t, std::vector<int64_t> shape,
                  std::vector<double> values, double tol = 1e-12) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.data.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(t.data[i], values[i], tol) << "at flat index " << i;
}

/// The elements of `t` (rows x cols, row-major) that differ from the point
/// by point sums `init(i, j)` plus `term(i, j, k)` for k = 0 .. terms-1,
/// added one at a time: bit for bit (zeros of both signs apart), NaN for
/// NaN (which NaN an addition of two keeps depends on the compiler's
/// operand order).
template <typename Init, typename Term>
int64_t notPointByPoint(const Tensor &t, int64_t rows, int64_t cols,
                        Init init, Term term, int64_t terms) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double acc = init(i, j);
      for (int64_t k = 0; k < terms; ++k)
        acc += term(i, j, k);
      double got = t.data[i * cols + j];
      if (!(std::isnan(got) && std::isnan(acc)) &&
          std::memcmp(&got, &acc, sizeof got) != 0)
        ++wrong;
    }
  return wrong;
}

/// notPointByPoint's init of a result that starts at zero.
double zeroInit(int64_t, int64_t) { return 0.0; }

const char *kSpmm = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = gnn.spmm KIND %g, %x REV : tensor<?x2xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
})mlir";

std::string spmmSource(StringRef kind, bool reversed = false) {
  std::string s = kSpmm;
  s.replace(s.find("KIND"), 4, kind.str());
  s.replace(s.find("REV"), 3, reversed ? "reversed" : "");
  return s;
}

TEST_F(Evaluator, SpmmSumCountsDuplicatesAndSelfLoops) {
  auto out = run(spmmSource("sum"), tinyGraph(), {signedNodes()});
  ASSERT_EQ(out.size(), 1u) << errors;
  // node1 <- x0 + x0 + x4, node2 <- x1 + x2 (self-loop), node3/5 <- nothing.
  expectTensor(out[0], {6, 2}, {0, 0, -5, 5, -3, 3, 0, 0, -2, 2, 0, 0});
}

TEST_F(Evaluator, SpmmMeanDividesByInDegree) {
  auto out = run(spmmSource("mean"), tinyGraph(), {signedNodes()});
  ASSERT_EQ(out.size(), 1u) << errors;
  expectTensor(out[0], {6, 2},
               {0, 0, -5.0 / 3, 5.0 / 3, -1.5, 1.5, 0, 0, -2, 2, 0, 0});
}

TEST_F(Evaluator, ElementTypeStorageRoundsF32ResultsOnly) {
  // mean over in-degree 3: -5/3. Double storage keeps it exact; storage at
  // the element type rounds the f32 result to float32, and leaves f64 exact.
  auto exact = run(spmmSource("mean"), tinyGraph(), {signedNodes()});
  ASSERT_EQ(exact.size(), 1u) << errors;
  EXPECT_EQ(exact[0].data[2], -5.0 / 3);
  auto stored = run(spmmSource("mean"), tinyGraph(), {signedNodes()},
                    ::gnn::Storage::ElementType);
  ASSERT_EQ(stored.size(), 1u) << errors;
  EXPECT_EQ(stored[0].data[2], double(float(-5.0 / 3)));
  std::string f64 = spmmSource("mean");
  for (size_t at; (at = f64.find("f32")) != std::string::npos;)
    f64.replace(at, 3, "f64");
  auto wide =
      run(f64, tinyGraph(), {signedNodes()}, ::gnn::Storage::ElementType);
  ASSERT_EQ(wide.size(), 1u) << errors;
  EXPECT_EQ(wide[0].data[2], -5.0 / 3);
}

TEST_F(Evaluator, SpmmMaxMinAreNotClampedAndEmptyRowsAreZero) {
  auto mx = run(spmmSource("max"), tinyGraph(), {signedNodes()});
  ASSERT_EQ(mx.size(), 1u) << errors;
  expectTensor(mx[0], {6, 2}, {0, 0, 1, 3, -1, 2, 0, 0, -2, 2, 0, 0});
  auto mn = run(spmmSource("min"), tinyGraph(), {signedNodes()});
  ASSERT_EQ(mn.size(), 1u) << errors;
  expectTensor(mn[0], {6, 2}, {0, 0, -3, -1, -2, 1, 0, 0, -2, 2, 0, 0});
}

TEST_F(Evaluator, SpmmMaxMinWinnersCountDuplicatesAndEqualValues) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  %0, %1 = gnn.spmm max %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  %2, %3 = gnn.spmm min %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  return %0, %1, %2, %3 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
})mlir";
  // x0 and x4 are equal in column 1, so all three edges into node 1 (<- x0,
  // x0, x4) attain its column-1 maximum and minimum; its column-0 maximum
  // is x4's alone, its minimum the duplicate edge's x0, counted twice.
  Tensor x = make({6, 2}, {-3, 3, -2, 2, -1, 1, 0, 0, 1, 3, 2, -2});
  auto out = run(src, tinyGraph(), {x});
  ASSERT_EQ(out.size(), 4u) << errors;
  expectTensor(out[0], {6, 2}, {0, 0, 1, 3, -1, 2, 0, 0, -2, 2, 0, 0});
  // The codes name the one edge attaining the extremum by its neighbour,
  // else count the c edges attaining it, -(c + 1) (-1 for none). Rows:
  // node0 <- x3; node1 <- x0 x0 x4 (3 = 3 on all three edges; the
  // duplicate edge's x0 is the minimum of column 0 on two edges);
  // node2 <- x1 x2; node4 <- x1; nodes 3 and 5 have no incoming edge.
  expectTensor(out[1], {6, 2}, {3, 3, 4, -4, 2, 1, -1, -1, 1, 1, -1, -1});
  expectTensor(out[2], {6, 2}, {0, 0, -3, 3, -2, 1, 0, 0, -2, 2, 0, 0});
  expectTensor(out[3], {6, 2}, {3, 3, -3, -4, 1, 2, -1, -1, 1, 1, -1, -1});
}

TEST_F(Evaluator, SpmmCountedCodesNameNoEdge) {
  // As SpmmMaxMinWinnersCountDuplicatesAndEqualValues with `counted`: the
  // same counts, and -2 where one edge attains the extremum.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %0, %1 = gnn.spmm max %g, %x counted : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  %2, %3 = gnn.spmm min %g, %x counted : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  return %1, %3 : tensor<?x2xf32>, tensor<?x2xf32>
})mlir";
  Tensor x = make({6, 2}, {-3, 3, -2, 2, -1, 1, 0, 0, 1, 3, 2, -2});
  auto out = run(src, tinyGraph(), {x});
  ASSERT_EQ(out.size(), 2u) << errors;
  expectTensor(out[0], {6, 2}, {-2, -2, -2, -4, -2, -2, -1, -1, -2, -2, -1, -1});
  expectTensor(out[1], {6, 2}, {-2, -2, -3, -4, -2, -2, -1, -1, -2, -2, -1, -1});
}

TEST_F(Evaluator, SpmmMaxWinnerCountsDuplicatesAndNotTheIdentity) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x1xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  %0, %1 = gnn.spmm max %g, %x : tensor<?x1xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
  return %0, %1 : tensor<?x1xf32>, tensor<?x1xf32>
})mlir";
  // Node 1's maximum comes from node 4 over two (duplicate) edges: two
  // edges, code -3. Node 2's only neighbour is -inf, the maximum's
  // identity, which no id names: one edge, -2 (the backward compares
  // values).
  HostGraph g;
  g.name = "duplicates";
  g.numNodes = 5;
  g.src = {4, 0, 2, 4, 3};
  g.dst = {1, 1, 1, 1, 2};
  double inf = std::numeric_limits<double>::infinity();
  auto out = run(src, g, {make({5, 1}, {1, 0, 3, -inf, 5})});
  ASSERT_EQ(out.size(), 2u) << errors;
  EXPECT_EQ(out[0].data[1], 5);
  EXPECT_EQ(out[0].data[2], -inf);
  expectTensor(out[1], {5, 1}, {-1, -3, -2, -1, -1});
}

TEST_F(Evaluator, ExtremumGradRoutesToWinnersAndSharesTies) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>, %dy: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %y, %w = gnn.spmm max %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  %dx = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x2xf32>
  return %dx : tensor<?x2xf32>
})mlir";
  Tensor x = make({6, 2}, {-3, 3, -2, 2, -1, 1, 0, 0, 1, 3, 2, -2});
  Tensor dy = make({6, 2}, {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60});
  auto out = run(src, tinyGraph(), {x, dy});
  ASSERT_EQ(out.size(), 1u) << errors;
  // Column 0: node0's dy to x3, node1's to x4, node2's to x2, node4's to
  // x1. Column 1: node0's to x3, node1's (code -4) shared by its three tied
  // edges (x0 twice, x4: 20 / 3 each), node2's and node4's to x1. Nodes 3 and 5
  // have no incoming edge: their dy goes nowhere.
  expectTensor(out[0], {6, 2},
               {0, 40.0 / 3.0, 5, 80, 3, 0, 1, 10, 2, 20.0 / 3.0, 0, 0});
}

TEST_F(Evaluator, ExtremumGradChecksTheTieCount) {
  // extremum_grad on given codes: node1's column-1 maximum 3 is attained by
  // its three edges (x0 twice, x4), so its code must be -4; -3 (two edges)
  // is reported, since the CUDA kernel would divide by the code's count.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>, %y: tensor<?x2xf32>, %w: tensor<?x2xf32>, %dy: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %dx = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x2xf32>
  return %dx : tensor<?x2xf32>
})mlir";
  Tensor x = make({6, 2}, {-3, 3, -2, 2, -1, 1, 0, 0, 1, 3, 2, -2});
  Tensor y = make({6, 2}, {0, 0, 1, 3, -1, 2, 0, 0, -2, 2, 0, 0});
  Tensor dy = make({6, 2}, {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60});
  Tensor right = make({6, 2}, {3, 3, 4, -4, 2, 1, -1, -1, 1, 1, -1, -1});
  auto out = run(src, tinyGraph(), {x, y, right, dy});
  ASSERT_EQ(out.size(), 1u) << errors;
  expectTensor(out[0], {6, 2},
               {0, 40.0 / 3.0, 5, 80, 3, 0, 1, 10, 2, 20.0 / 3.0, 0, 0});
  Tensor wrong = right;
  wrong.data[3] = -3;
  out = run(src, tinyGraph(), {x, y, wrong, dy});
  EXPECT_TRUE(out.empty());
  EXPECT_NE(errors.find("expects tie codes -(c + 1) for the c edges attaining "
                        "the extremum, but element 3 is -3 where 3 edge(s) "
                        "attain 3"),
            std::string::npos)
      << errors;
}

TEST_F(Evaluator, SpmmReversedAggregatesIntoSources) {
  auto out = run(spmmSource("sum", true), tinyGraph(), {signedNodes()});
  ASSERT_EQ(out.size(), 1u) << errors;
  // node0 <- x1 + x1, node1 <- x2 + x4, node2 <- x2, node3 <- x0, node4 <- x1.
  expectTensor(out[0], {6, 2}, {-4, 4, 0, 0, -1, 1, -3, 3, -2, 2, 0, 0});
}

TEST_F(Evaluator, SpmmWeightedMultiHead) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2x3xf32>, %w: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x3xf32> {
  %0 = gnn.spmm sum %g, %x weights(%w : tensor<?x2xf32>) : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %0 : tensor<?x2x3xf32>
})mlir";
  Tensor x({6, 2, 3});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data[i] = static_cast<double>(i);
  // w[e, h] = (e + 1) * (h ? -1 : 1)
  Tensor w({7, 2});
  for (int e = 0; e < 7; ++e) {
    w.data[e * 2] = e + 1;
    w.data[e * 2 + 1] = -(e + 1);
  }
  auto out = run(src, tinyGraph(), {x, w});
  ASSERT_EQ(out.size(), 1u) << errors;
  // node1, head 0: 1*x0 + 2*x0 + 6*x4 (head 0 rows start at 0 and 24).
  for (int f = 0; f < 3; ++f) {
    EXPECT_EQ(out[0].data[6 + f], 3 * (0 + f) + 6 * (24 + f));
    EXPECT_EQ(out[0].data[6 + 3 + f], -(3 * (3 + f) + 6 * (27 + f)));
  }
}

// Aggregations large enough for several threads (where the machine has
// them) give every node its sum edge by edge in edge-list order, bit for bit
// as one thread does: a weighted multi-head sum (a weight per edge and
// head), a mean over the reversed graph and a maximum, on a graph with a hub
// of many edges, isolated nodes and duplicate edges.
TEST_F(Evaluator, LargeAggregationsOnThreadsSumEdgeByEdge) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2x40xf32>, %w: tensor<?x2xf32> {gnn.domain = "edge"})
    -> (tensor<?x2x40xf32>, tensor<?x2x40xf32>, tensor<?x2x40xf32>) {
  %0 = gnn.spmm sum %g, %x weights(%w : tensor<?x2xf32>) : tensor<?x2x40xf32> -> tensor<?x2x40xf32>
  %1 = gnn.spmm mean %g, %x reversed : tensor<?x2x40xf32> -> tensor<?x2x40xf32>
  %2 = gnn.spmm max %g, %x : tensor<?x2x40xf32> -> tensor<?x2x40xf32>
  return %0, %1, %2 : tensor<?x2x40xf32>, tensor<?x2x40xf32>, tensor<?x2x40xf32>
})mlir";
  const int64_t n = 3000, e = 120000, row = 80;
  HostGraph g;
  g.name = "many";
  g.numNodes = n;
  for (int64_t i = 0; i < e; ++i) {
    uint64_t h = uint64_t(i) * 2654435761u;
    // A tenth of the edges into node 7; nodes >= 2900 without edges.
    g.src.push_back(int64_t(h % 2900));
    g.dst.push_back(i % 10 == 0 ? 7 : int64_t((h >> 20) % 2900));
  }
  g.src[5] = g.src[4], g.dst[5] = g.dst[4]; // a duplicate edge
  Tensor x({n, 2, 40}), w({e, 2});
  for (int64_t k = 0; k < x.numElements(); ++k)
    x.data[k] = std::ldexp(1.0 + (k * 7919 % 1000) / 997.0, int(k % 23) - 11) *
                (k % 3 ? 1 : -1);
  for (int64_t k = 0; k < w.numElements(); ++k)
    w.data[k] = std::sin(0.3 * k) * (1 + k % 4);
  auto out = run(src, g, {x, w});
  ASSERT_EQ(out.size(), 3u) << errors;
  // Edge by edge in edge-list order: each element starts from the first
  // edge's value.
  std::vector<double> sum(n * row), mean(n * row), max(n * row);
  std::vector<int64_t> in(n, 0), out_(n, 0);
  for (int64_t i = 0; i < e; ++i) {
    int64_t s = g.src[i], d = g.dst[i];
    for (int64_t k = 0; k < row; ++k) {
      double wx = w.data[i * 2 + k / 40] * x.data[s * row + k];
      double xs = x.data[s * row + k], xd = x.data[d * row + k];
      sum[d * row + k] = in[d] ? sum[d * row + k] + wx : wx;
      max[d * row + k] = in[d] ? std::max(max[d * row + k], xs) : xs;
      mean[s * row + k] = out_[s] ? mean[s * row + k] + xd : xd;
    }
    ++in[d], ++out_[s];
  }
  for (int64_t v = 0; v < n; ++v)
    for (int64_t k = 0; k < row; ++k)
      if (out_[v])
        mean[v * row + k] /= double(out_[v]);
  ASSERT_EQ(in[2950], 0);
  EXPECT_GT(in[7], e / 10);
  int64_t wrong[3] = {0, 0, 0};
  for (int64_t k = 0; k < n * row; ++k) {
    wrong[0] += std::memcmp(&out[0].data[k], &sum[k], 8) != 0;
    wrong[1] += std::memcmp(&out[1].data[k], &mean[k], 8) != 0;
    wrong[2] += std::memcmp(&out[2].data[k], &max[k], 8) != 0;
  }
  EXPECT_EQ(wrong[0], 0) << "weighted sum";
  EXPECT_EQ(wrong[1], 0) << "reversed mean";
  EXPECT_EQ(wrong[2], 0) << "max";
}

TEST_F(Evaluator, EdgeSoftmaxIsStableAndSkipsEmptyRows) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %s: tensor<?xf32> {gnn.domain = "edge"}) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = gnn.edge_softmax %g, %s : tensor<?xf32>
  %1 = gnn.edge_softmax %g, %s reversed : tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
})mlir";
  Tensor s = make({7}, {1000, 1001, 0, 5, 2, 1002, -3});
  auto out = run(src, tinyGraph(), {s});
  ASSERT_EQ(out.size(), 2u) << errors;
  double z1 = std::exp(-2) + std::exp(-1) + 1; // node1: e0, e1, e5
  double z2 = std::exp(-5) + 1;                // node2: e2, e3
  expectTensor(out[0], {7},
               {std::exp(-2) / z1, std::exp(-1) / z1, std::exp(-5) / z2,
                1 / z2, 1, 1 / z1, 1});
  // Reversed: grouped by source: {e0, e1}, {e2, e6}, {e3}, {e4}, {e5}.
  double za = std::exp(-1) + 1, zb = 1 + std::exp(-3);
  expectTensor(out[1], {7},
               {std::exp(-1) / za, 1 / za, 1 / zb, 1, 1, 1, std::exp(-3) / zb});
}

TEST_F(Evaluator, EdgeSoftmaxLogSumExp) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %s: tensor<?xf32> {gnn.domain = "edge"}) -> (tensor<?xf32>, tensor<?xf32>) {
  %0, %1 = gnn.edge_softmax %g, %s : tensor<?xf32>, tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
})mlir";
  Tensor s = make({7}, {1000, 1001, 0, 5, 2, 1002, -3});
  auto out = run(src, tinyGraph(), {s});
  ASSERT_EQ(out.size(), 2u) << errors;
  double z1 = std::exp(-2) + std::exp(-1) + 1, z2 = std::exp(-5) + 1;
  double inf = INFINITY;
  // node0 <- e4, node1 <- e0 e1 e5, node2 <- e2 e3, node4 <- e6; 3, 5: none.
  std::vector<double> want = {2,    1002 + std::log(z1), 5 + std::log(z2),
                              -inf, -3,                  -inf};
  ASSERT_EQ(out[1].shape, std::vector<int64_t>{6});
  for (int n = 0; n < 6; ++n)
    if (std::isinf(want[n]))
      EXPECT_EQ(out[1].data[n], want[n]) << "node " << n;
    else
      EXPECT_NEAR(out[1].data[n], want[n], 1e-9) << "node " << n;
  // The weights are exp(score - lse[dst]).
  EXPECT_NEAR(out[0].data[0], std::exp(1000 - out[1].data[1]), 1e-12);
}

/// As expectTensor, NaN where `values` has NaN (and nowhere else).
void expectWithNaN(const Tensor &t, std::vector<int64_t> shape,
                   std::vector<double> values, double tol = 1e-12) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.data.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::isnan(t.data[i]), std::isnan(values[i]))
        << "at flat index " << i << ": " << t.data[i];
    if (std::isinf(values[i]))
      EXPECT_EQ(t.data[i], values[i]) << "at flat index " << i;
    else if (!std::isnan(values[i]))
      EXPECT_NEAR(t.data[i], values[i], tol) << "at flat index " << i;
  }
}

TEST_F(Evaluator, EdgeSoftmaxNaNAndInfAsTorch) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %s: tensor<?x3xf32> {gnn.domain = "edge"}) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %0, %1 = gnn.edge_softmax %g, %s : tensor<?x3xf32>, tensor<?x3xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<?x3xf32>
})mlir";
  double inf = INFINITY, nan = NAN;
  // node0 <- e4, node1 <- e0 e1 e5, node2 <- e2 e3, node4 <- e6.
  // Column 0: node2's group is all -inf (-inf - -inf: NaN, as torch's
  // softmax and PyG's), node1's has one -inf among finite values (weight
  // 0). Column 1: one NaN in node1's group makes the group NaN. Column 2:
  // a +inf in node2's group (inf - inf) makes it NaN.
  Tensor s = make({7, 3}, {-inf, 0, 0,  0, 0, 0,  -inf, 0, inf,
                           -inf, 0, 0,  0, 0, 0,  0, nan, 0,  0, 0, 0});
  auto out = run(src, tinyGraph(), {s});
  ASSERT_EQ(out.size(), 2u) << errors;
  expectWithNaN(out[0], {7, 3},
                {0, nan, 1.0 / 3,  0.5, nan, 1.0 / 3,  nan, 0.5, nan,
                 nan, 0.5, nan,  1, 1, 1,  0.5, nan, 1.0 / 3,  1, 1, 1});
  // The log-sum-exp: NaN for those groups; -inf for nodes 3 and 5, which
  // have no incoming edge.
  double l2 = std::log(2.0), l3 = std::log(3.0);
  expectWithNaN(out[1], {6, 3}, {0, 0, 0,  l2, nan, l3,  nan, l2, nan,
                                 -inf, -inf, -inf,  0, 0, 0,  -inf, -inf, -inf});
}

TEST_F(Evaluator, MaxMinPropagateNaNWithNaNCodes) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>, %dy: tensor<?x2xf32>, %v: tensor<?xf32> {gnn.domain = "edge"}) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?xf32>, tensor<?xf32>) {
  %y, %w = gnn.spmm max %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  %dx = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x2xf32>
  %r, %c = gnn.reduce min %g, %v : tensor<?xf32> -> tensor<?xf32>, tensor<?xf32>
  return %y, %w, %dx, %r, %c : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?xf32>, tensor<?xf32>
})mlir";
  double nan = NAN;
  // As ExtremumGradRoutesToWinnersAndSharesTies with x1's column 0 NaN:
  // node2 (<- x1, x2) and node4 (<- x1) get a NaN maximum and a NaN code,
  // and every edge into them a NaN gradient (torch.scatter_reduce's amax:
  // no edge equals NaN, 0 * dy / 0), so x1 and x2 in column 0.
  Tensor x = make({6, 2}, {-3, 3, nan, 2, -1, 1, 0, 0, 1, 3, 2, -2});
  Tensor dy = make({6, 2}, {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60});
  // Edge values: e5's NaN makes node1's minimum NaN.
  Tensor v = make({7}, {2, 2, 1, 1, 0, nan, 1});
  auto out = run(src, tinyGraph(), {x, dy, v});
  ASSERT_EQ(out.size(), 5u) << errors;
  expectWithNaN(out[0], {6, 2}, {0, 0, 1, 3, nan, 2, 0, 0, nan, 2, 0, 0});
  expectWithNaN(out[1], {6, 2}, {3, 3, 4, -4, nan, 1, -1, -1, nan, 1, -1, -1});
  expectWithNaN(out[2], {6, 2},
                {0, 40.0 / 3.0, nan, 80, nan, 0, 1, 10, 2, 20.0 / 3.0, 0, 0});
  expectWithNaN(out[3], {6}, {0, nan, 1, 0, 1, 0});
  expectWithNaN(out[4], {6}, {-2, nan, -3, -1, -2, -1});
}

TEST_F(Evaluator, SddmmKindsAndReversed) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %a: tensor<?x2xf32>, %b: tensor<?x2xf32>)
    -> (tensor<?xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  %0 = gnn.sddmm dot %g, %a, %b : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?xf32>
  %1 = gnn.sddmm add %g, %a, %b : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  %2 = gnn.sddmm sub %g, %a, %b : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  %3 = gnn.sddmm mul %g, %a, %b : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  %4 = gnn.sddmm sub %g, %a, %b reversed : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  return %0, %1, %2, %3, %4 : tensor<?xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
})mlir";
  // a[n] = {n, 1}, b[n] = {1, n}: dot(a[s], b[d]) = s + d.
  Tensor a({6, 2}), b({6, 2});
  for (int n = 0; n < 6; ++n) {
    a.data[2 * n] = n;
    a.data[2 * n + 1] = 1;
    b.data[2 * n] = 1;
    b.data[2 * n + 1] = n;
  }
  auto out = run(src, tinyGraph(), {a, b});
  ASSERT_EQ(out.size(), 5u) << errors;
  HostGraph g = tinyGraph();
  for (int e = 0; e < 7; ++e) {
    double s = g.src[e], d = g.dst[e];
    EXPECT_EQ(out[0].data[e], s + d);
    EXPECT_EQ(out[1].data[2 * e], s + 1);
    EXPECT_EQ(out[1].data[2 * e + 1], 1 + d);
    EXPECT_EQ(out[2].data[2 * e], s - 1);
    EXPECT_EQ(out[2].data[2 * e + 1], 1 - d);
    EXPECT_EQ(out[3].data[2 * e], s);
    EXPECT_EQ(out[3].data[2 * e + 1], d);
    // reversed: lhs read at the destination, rhs at the source.
    EXPECT_EQ(out[4].data[2 * e], d - 1);
    EXPECT_EQ(out[4].data[2 * e + 1], 1 - s);
  }
}

TEST_F(Evaluator, ReduceMaxMinWinners) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %v: tensor<?xf32> {gnn.domain = "edge"}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0, %1 = gnn.reduce max %g, %v : tensor<?xf32> -> tensor<?xf32>, tensor<?xf32>
  %2, %3 = gnn.reduce min %g, %v reversed : tensor<?xf32> -> tensor<?xf32>, tensor<?xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir";
  Tensor v = make({7}, {2, 2, 1, 1, 0, 2, 1});
  auto out = run(src, tinyGraph(), {v});
  ASSERT_EQ(out.size(), 4u) << errors;
  // By destination: node0 <- e4; node1 <- e0 e1 e5 (all 2); node2 <- e2 e3
  // (both 1); node4 <- e6; nodes 3 and 5: none.
  expectTensor(out[0], {6}, {0, 2, 1, 0, 1, 0});
  // The codes count the edges attaining the extremum: -(c + 1).
  expectTensor(out[1], {6}, {-2, -4, -3, -1, -2, -1});
  // By source: node0 -> e0 e1; node1 -> e2 e6; node2 -> e3; node3 -> e4;
  // node4 -> e5; node5: none.
  expectTensor(out[2], {6}, {2, 1, 1, 0, 2, 0});
  expectTensor(out[3], {6}, {-3, -3, -2, -2, -2, -1});
}

TEST_F(Evaluator, GatherReduceDegree) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2xf32>, %v: tensor<?xf32> {gnn.domain = "edge"})
    -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0 = gnn.gather src %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>
  %1 = gnn.gather dst %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>
  %2 = gnn.reduce mean %g, %v : tensor<?xf32> -> tensor<?xf32>
  %3 = gnn.reduce max %g, %v reversed : tensor<?xf32> -> tensor<?xf32>
  %4 = gnn.reduce sum %g, %v : tensor<?xf32> -> tensor<?xf32>
  %5 = gnn.degree %g : tensor<?xf32>
  %6 = gnn.degree %g reversed : tensor<?xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir";
  Tensor v = make({7}, {0, 1, 2, 3, 4, 5, 6});
  auto out = run(src, tinyGraph(), {signedNodes(), v});
  ASSERT_EQ(out.size(), 7u) << errors;
  HostGraph g = tinyGraph();
  Tensor x = signedNodes();
  for (int e = 0; e < 7; ++e) {
    EXPECT_EQ(out[0].data[2 * e], x.data[2 * g.src[e]]);
    EXPECT_EQ(out[1].data[2 * e + 1], x.data[2 * g.dst[e] + 1]);
  }
  expectTensor(out[2], {6}, {4, 2, 2.5, 0, 6, 0});
  expectTensor(out[3], {6}, {1, 6, 3, 4, 5, 0});
  expectTensor(out[4], {6}, {4, 6, 5, 0, 6, 0});
  expectTensor(out[5], {6}, {1, 3, 2, 0, 1, 0});
  expectTensor(out[6], {6}, {2, 2, 1, 1, 1, 0});
}

/// 5 sources, 3 destinations (a bipartite graph): a duplicate edge (e3,
/// e4), destination 1 without an edge, source 4 without an edge.
///   e0: 0->0  e1: 1->0  e2: 3->0  e3: 2->2  e4: 2->2  e5: 3->2
HostGraph tinyBipartite() {
  HostGraph g;
  g.name = "tiny-bipartite";
  g.numSrc = 5;
  g.numDst = 3;
  g.numNodes = 5;
  g.src = {0, 1, 3, 2, 2, 3};
  g.dst = {0, 0, 0, 2, 2, 2};
  return g;
}

TEST_F(Evaluator, BipartiteOpsReadAndWriteTheirSides) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph<bipartite>, %x: tensor<?x1xf32> {gnn.domain = "src"},
             %y: tensor<?x1xf32> {gnn.domain = "dst"})
    -> (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?xf32>, tensor<?xf32>,
        tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %0 = gnn.spmm sum %g, %x : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  %1 = gnn.spmm mean %g, %x : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  %2 = gnn.spmm sum %g, %y reversed : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  %3 = gnn.degree %g : !gnn.graph<bipartite>, tensor<?xf32>
  %4 = gnn.degree %g reversed : !gnn.graph<bipartite>, tensor<?xf32>
  %5 = gnn.gather src %g, %x : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  %6 = gnn.gather dst %g, %y : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  %7 = gnn.sddmm add %g, %x, %y : !gnn.graph<bipartite>, tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x1xf32>
  %8 = gnn.reduce sum %g, %7 reversed : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>,
      tensor<?xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>
})mlir";
  Tensor x = make({5, 1}, {1, 2, 3, 4, 5});
  Tensor y = make({3, 1}, {10, 20, 30});
  auto out = run(src, tinyBipartite(), {x, y});
  ASSERT_EQ(out.size(), 9u) << errors;
  expectTensor(out[0], {3, 1}, {7, 0, 10});
  expectTensor(out[1], {3, 1}, {7.0 / 3, 0, 10.0 / 3});
  // Reversed: each source sums its destinations' rows.
  expectTensor(out[2], {5, 1}, {10, 10, 60, 40, 0});
  expectTensor(out[3], {3}, {3, 0, 3});
  expectTensor(out[4], {5}, {1, 1, 2, 2, 0});
  expectTensor(out[5], {6, 1}, {1, 2, 4, 3, 3, 4});
  expectTensor(out[6], {6, 1}, {10, 10, 10, 30, 30, 30});
  expectTensor(out[7], {6, 1}, {11, 12, 14, 33, 33, 34});
  expectTensor(out[8], {5, 1}, {11, 12, 66, 48, 0});
}

TEST_F(Evaluator, TypedGatherAndReduceUseEachEdgesRelation) {
  // h[n, r] = 10 n + r on the sources; relations of e0..e5: 0 1 0 1 1 0.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph<bipartite, typed>, %h: tensor<?x2x1xf32> {gnn.domain = "src"})
    -> (tensor<?x1xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) {
  %m = gnn.gather src %g, %h relation : !gnn.graph<bipartite, typed>, tensor<?x2x1xf32> -> tensor<?x1xf32>
  %d = gnn.reduce sum %g, %m relation : !gnn.graph<bipartite, typed>, tensor<?x1xf32> -> tensor<?x2x1xf32>
  %s = gnn.reduce sum %g, %m reversed relation : !gnn.graph<bipartite, typed>, tensor<?x1xf32> -> tensor<?x2x1xf32>
  return %m, %d, %s : tensor<?x1xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>
})mlir";
  HostGraph g = tinyBipartite();
  g.edgeTypes = {0, 1, 0, 1, 1, 0};
  Tensor h = make({5, 2, 1}, {0, 1, 10, 11, 20, 21, 30, 31, 40, 41});
  auto out = run(src, g, {h});
  ASSERT_EQ(out.size(), 3u) << errors;
  expectTensor(out[0], {6, 1}, {0, 11, 30, 21, 21, 30});
  // Per destination and relation; destination 1 has no edge.
  expectTensor(out[1], {3, 2, 1}, {30, 11, 0, 0, 30, 42});
  // Per source and relation (the gradient of the gather): the duplicate
  // edge adds twice, source 4 has no edge.
  expectTensor(out[2], {5, 2, 1}, {0, 0, 0, 11, 0, 42, 60, 0, 0, 0});
  // An untyped graph, and a relation id past the op's count, are refused.
  out = run(src, tinyBipartite(), {h});
  EXPECT_TRUE(out.empty());
  EXPECT_NE(errors.find("takes a typed graph (!gnn.graph<bipartite, typed>) "
                        "but graph 'tiny-bipartite' has no edge types"),
            std::string::npos)
      << errors;
  g.edgeTypes[5] = 2;
  out = run(src, g, {h});
  EXPECT_TRUE(out.empty());
  EXPECT_NE(errors.find("expects relation ids in [0, 2) but edge 5 of graph "
                        "'tiny-bipartite' has relation 2"),
            std::string::npos)
      << errors;
}

TEST_F(Evaluator, BipartiteExtremumGradRoutesToSources) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph<bipartite>, %x: tensor<?x1xf32> {gnn.domain = "src"},
             %dy: tensor<?x1xf32> {gnn.domain = "dst"}) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %w = gnn.spmm max %g, %x : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
  %dx = gnn.extremum_grad %g, %x, %y, %w, %dy : !gnn.graph<bipartite>, tensor<?x1xf32>
  return %y, %dx : tensor<?x1xf32>, tensor<?x1xf32>
})mlir";
  Tensor x = make({5, 1}, {1, 2, 3, 4, 5});
  Tensor dy = make({3, 1}, {1, 2, 3});
  auto out = run(src, tinyBipartite(), {x, dy});
  ASSERT_EQ(out.size(), 2u) << errors;
  // Source 3 wins both destinations with edges; destination 1 routes
  // nothing; source 4's larger value reaches no destination.
  expectTensor(out[0], {3, 1}, {4, 0, 4});
  expectTensor(out[1], {5, 1}, {0, 0, 0, 4, 0});
}

TEST_F(Evaluator, BipartiteFunctionOnOneNodeSetMatchesThePlainGraph) {
  // A graph of one node set is the bipartite graph whose sides are equal.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph<bipartite>, %x: tensor<?x2xf32> {gnn.domain = "src"}) -> tensor<?x2xf32> {
  %0 = gnn.spmm mean %g, %x : !gnn.graph<bipartite>, tensor<?x2xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
})mlir";
  auto bipartite = run(src, tinyGraph(), {signedNodes()});
  ASSERT_EQ(bipartite.size(), 1u) << errors;
  auto plain = run(spmmSource("mean"), tinyGraph(), {signedNodes()});
  ASSERT_EQ(plain.size(), 1u) << errors;
  expectTensor(bipartite[0], plain[0].shape, {plain[0].data.begin(), plain[0].data.end()}, 0);
}

TEST_F(Evaluator, BipartiteSidesAreCheckedAgainstTheGraph) {
  // A function of one node set sees a bipartite graph as one node set of
  // its larger side's count (sources and destinations numbered from 0).
  auto out = run(spmmSource("sum"), tinyBipartite(),
                 {make({5, 2}, {1, 0, 2, 0, 3, 0, 4, 0, 5, 0})});
  ASSERT_EQ(out.size(), 1u) << errors;
  expectTensor(out[0], {5, 2}, {7, 0, 0, 0, 10, 0, 0, 0, 0, 0});
  // Inputs of the wrong side's size are refused with what was expected.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph<bipartite>, %x: tensor<?x1xf32> {gnn.domain = "src"}) -> tensor<?x1xf32> {
  %0 = gnn.spmm sum %g, %x : !gnn.graph<bipartite>, tensor<?x1xf32> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
})mlir";
  out = run(src, tinyBipartite(), {make({3, 1}, {1, 2, 3})});
  EXPECT_TRUE(out.empty());
  EXPECT_NE(errors.find("argument #1 (src) expects shape [5, 1] on graph "
                        "'tiny-bipartite' but the input has shape [3, 1]"),
            std::string::npos)
      << errors;
  // The sizes the tools give seeded inputs.
  module = parseSourceString<ModuleOp>(src, &context);
  ASSERT_TRUE(module);
  auto specs = ::gnn::resolveArguments(*module->getOps<func::FuncOp>().begin(),
                                       tinyBipartite());
  ASSERT_TRUE(succeeded(specs));
  EXPECT_EQ((*specs)[1].role, "src");
  EXPECT_EQ((*specs)[1].shape, (std::vector<int64_t>{5, 1}));
}

TEST_F(Evaluator, EmptyGraph) {
  HostGraph g;
  g.name = "empty";
  auto out = run(spmmSource("mean"), g, {Tensor({0, 2})});
  ASSERT_EQ(out.size(), 1u) << errors;
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{0, 2}));
  // Nodes but no edges: every aggregation is 0.
  g.numNodes = 3;
  auto iso = run(spmmSource("max"), g, {make({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(iso.size(), 1u) << errors;
  expectTensor(iso[0], {3, 2}, {0, 0, 0, 0, 0, 0});
}

TEST_F(Evaluator, HugeDegreeHub) {
  // Every node points at node 0: a hub of in-degree 5000.
  HostGraph g;
  g.name = "star";
  g.numNodes = 5001;
  for (int i = 1; i <= 5000; ++i) {
    g.src.push_back(i);
    g.dst.push_back(0);
  }
  Tensor x({5001, 2});
  for (int i = 0; i < 5001; ++i) {
    x.data[2 * i] = i;
    x.data[2 * i + 1] = 1;
  }
  auto out = run(spmmSource("mean"), g, {x});
  ASSERT_EQ(out.size(), 1u) << errors;
  EXPECT_DOUBLE_EQ(out[0].data[0], 2500.5);
  EXPECT_DOUBLE_EQ(out[0].data[1], 1.0);
}

TEST_F(Evaluator, LinalgMatmulMatchesGenericContraction) {
  const char *src = R"mlir(
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>, %w: tensor<3x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<?x3xf32>, tensor<3x2xf32>) outs(%i : tensor<?x2xf32>) -> tensor<?x2xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x3xf32>, tensor<3x2xf32>) outs(%i : tensor<?x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x2xf32>
  return %0, %1 : tensor<?x2xf32>, tensor<?x2xf32>
})mlir";
  HostGraph g = tinyGraph();
  Tensor x({6, 3}), w = make({3, 2}, {1, 2, 3, 4, 5, 6});
  for (int i = 0; i < 18; ++i)
    x.data[i] = 0.5 * i - 3;
  auto out = run(src, g, {x, w});
  ASSERT_EQ(out.size(), 2u) << errors;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int k = 0; k < 3; ++k)
        want += x.data[i * 3 + k] * w.data[k * 2 + j];
      EXPECT_DOUBLE_EQ(out[0].data[i * 2 + j], want);
      EXPECT_DOUBLE_EQ(out[1].data[i * 2 + j], want);
    }
}

// The gradients gnn-autodiff builds for a matmul (Aᵀ dC and dC Bᵀ: the
// contracted loop in another place of each operand) run natively like
// linalg.matmul; a body that is not `out + a * b` (here `out - a * b`) is
// interpreted and still right.
TEST_F(Evaluator, TransposedContractionsAndOtherBodies) {
  const char *src = R"mlir(
#ta = affine_map<(k, j, i) -> (i, k)>
#tc = affine_map<(k, j, i) -> (i, j)>
#to = affine_map<(k, j, i) -> (k, j)>
#ua = affine_map<(i, k, j) -> (i, j)>
#ub = affine_map<(i, k, j) -> (k, j)>
#uo = affine_map<(i, k, j) -> (i, k)>
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>, %y: tensor<?x2xf32>, %w: tensor<3x2xf32>)
    -> (tensor<3x2xf32>, tensor<?x3xf32>, tensor<3x2xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %en = tensor.empty(%n) : tensor<?x3xf32>
  %in = linalg.fill ins(%z : f32) outs(%en : tensor<?x3xf32>) -> tensor<?x3xf32>
  %0 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x3xf32>, tensor<?x2xf32>) outs(%i : tensor<3x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %q, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  %1 = linalg.generic {indexing_maps = [#ua, #ub, #uo], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %w : tensor<?x2xf32>, tensor<3x2xf32>) outs(%in : tensor<?x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  %2 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x3xf32>, tensor<?x2xf32>) outs(%i : tensor<3x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.subf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  return %0, %1, %2 : tensor<3x2xf32>, tensor<?x3xf32>, tensor<3x2xf32>
})mlir";
  HostGraph g = tinyGraph();
  Tensor x({6, 3}), y({6, 2}), w = make({3, 2}, {1, 2, 3, 4, 5, 6});
  for (int i = 0; i < 18; ++i)
    x.data[i] = 0.5 * i - 3;
  for (int i = 0; i < 12; ++i)
    y.data[i] = 1.0 - 0.25 * i;
  auto out = run(src, g, {x, y, w});
  ASSERT_EQ(out.size(), 3u) << errors;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int i = 0; i < 6; ++i)
        want += x.data[i * 3 + k] * y.data[i * 2 + j];
      EXPECT_DOUBLE_EQ(out[0].data[k * 2 + j], want);
      EXPECT_DOUBLE_EQ(out[2].data[k * 2 + j], -want);
    }
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 3; ++k) {
      double want = 0;
      for (int j = 0; j < 2; ++j)
        want += y.data[i * 2 + j] * w.data[k * 2 + j];
      EXPECT_DOUBLE_EQ(out[1].data[i * 3 + k], want);
    }
}

// Contractions large enough to run on several threads (each thread a range
// of a loop indexing c) sum every element's terms in the order of the
// reduction loop, as one thread does: x W, Aᵀ dC (the reduction the outer
// loop) and dC Bᵀ (W read across its rows), compared bit for bit with the
// point by point sums.
TEST_F(Evaluator, LargeContractionsOnThreadsSumAsPointByPoint) {
  const char *src = R"mlir(
#xa = affine_map<(i, j, k) -> (i, k)>
#xb = affine_map<(i, j, k) -> (k, j)>
#xc = affine_map<(i, j, k) -> (i, j)>
#ta = affine_map<(k, j, i) -> (i, k)>
#tc = affine_map<(k, j, i) -> (i, j)>
#to = affine_map<(k, j, i) -> (k, j)>
#ua = affine_map<(i, k, j) -> (i, j)>
#ub = affine_map<(i, k, j) -> (k, j)>
#uo = affine_map<(i, k, j) -> (i, k)>
func.func @f(%g: !gnn.graph, %x: tensor<?x700xf32>, %w: tensor<700x8xf32>, %y: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<700x8xf32>, tensor<?x700xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x700xf32>
  %e8 = tensor.empty(%n) : tensor<?x8xf32>
  %i8 = linalg.fill ins(%z : f32) outs(%e8 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<?x700xf32>, tensor<700x8xf32>) outs(%i8 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %ew = tensor.empty() : tensor<700x8xf32>
  %iw = linalg.fill ins(%z : f32) outs(%ew : tensor<700x8xf32>) -> tensor<700x8xf32>
  %1 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x700xf32>, tensor<?x8xf32>) outs(%iw : tensor<700x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<700x8xf32>
  %ex = tensor.empty(%n) : tensor<?x700xf32>
  %ix = linalg.fill ins(%z : f32) outs(%ex : tensor<?x700xf32>) -> tensor<?x700xf32>
  %2 = linalg.generic {indexing_maps = [#ua, #ub, #uo], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %w : tensor<?x8xf32>, tensor<700x8xf32>) outs(%ix : tensor<?x700xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x700xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<700x8xf32>, tensor<?x700xf32>
})mlir";
  // 3,000 x 700 x 8 multiply-adds each: several threads' worth where the
  // machine has several.
  HostGraph g;
  g.name = "rows";
  g.numNodes = 3000;
  const int64_t n = 3000, f = 700, h = 8;
  Tensor x({n, f}), w({f, h}), y({n, h});
  // Values whose sums depend on their order (magnitudes 1e-3 .. 1e3).
  for (int64_t i = 0; i < n * f; ++i)
    x.data[i] = std::ldexp(1.0 + (i * 7919 % 1000) / 997.0, int(i % 21) - 10) *
                (i % 3 ? 1 : -1);
  for (int64_t i = 0; i < f * h; ++i)
    w.data[i] = 1.0 / (1 + i % 97) - 0.01 * (i % 13);
  for (int64_t i = 0; i < n * h; ++i)
    y.data[i] = std::sin(0.37 * i) * (1 + i % 5);
  auto out = run(src, g, {x, w, y});
  ASSERT_EQ(out.size(), 3u) << errors;
  EXPECT_EQ(notPointByPoint(out[0], n, h, zeroInit,
                            [&](int64_t i, int64_t j, int64_t k) {
                              return x.data[i * f + k] * w.data[k * h + j];
                            }, f), 0) << "x W";
  EXPECT_EQ(notPointByPoint(out[1], f, h, zeroInit,
                            [&](int64_t k, int64_t j, int64_t i) {
                              return x.data[i * f + k] * y.data[i * h + j];
                            }, n), 0) << "xT dC";
  EXPECT_EQ(notPointByPoint(out[2], n, f, zeroInit,
                            [&](int64_t i, int64_t k, int64_t j) {
                              return y.data[i * h + j] * w.data[k * h + j];
                            }, h), 0) << "dC WT";
}

// Zero scalars of a product's rows (x W with sparse x, and Aᵀ dC) are
// skipped only where that changes no bit: the results equal the point by
// point sums bit for bit, with zeros of both signs in x, infinities and NaN
// in rows of W and of dC (zero times those is NaN), and an init holding
// -0.0 (-0 + +0 is +0) or NaN.
TEST_F(Evaluator, ZeroScalarsOfProductsSkippedOnlyWhereNoBitChanges) {
  const char *src = R"mlir(
#xa = affine_map<(i, j, k) -> (i, k)>
#xb = affine_map<(i, j, k) -> (k, j)>
#xc = affine_map<(i, j, k) -> (i, j)>
#ta = affine_map<(k, j, i) -> (i, k)>
#tc = affine_map<(k, j, i) -> (i, j)>
#to = affine_map<(k, j, i) -> (k, j)>
func.func @f(%g: !gnn.graph, %x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %c: tensor<?x3xf32>,
             %y: tensor<?x3xf32>, %cw: tensor<4x3xf32>)
    -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x3xf32>) outs(%i : tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = linalg.generic {indexing_maps = [#xa, #xb, #xc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x4xf32>, tensor<4x3xf32>) outs(%c : tensor<?x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  %ew = tensor.empty() : tensor<4x3xf32>
  %iw = linalg.fill ins(%z : f32) outs(%ew : tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x4xf32>, tensor<?x3xf32>) outs(%iw : tensor<4x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %3 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x4xf32>, tensor<?x3xf32>) outs(%cw : tensor<4x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %0, %1, %2, %3 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
})mlir";
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostGraph g = tinyGraph();
  // x: mostly zeros (both signs); row 5 all zeros; a NaN and an infinity.
  Tensor x = make({6, 4}, {0, 1.5, 0, -0.0,   0, 0, 0, 0,    2, 0, -0.0, 0,
                           nan, 0, 0, 3,      0, 0, inf, 0,  0, -0.0, 0, 0});
  // W: row 1 holds an infinity, row 3 a NaN (zeros of x there give NaN).
  Tensor w = make({4, 3}, {1, -2, 0.5,  inf, 1, 1,  -1, 0.25, 4,  2, nan, -3});
  // c's init: -0.0 where only zero products arrive (row 5: -0 + +0 = +0).
  Tensor c = make({6, 3}, {-0.0, 1, 2,  -0.0, -0.0, 3,  0, 0, nan,
                           4, -0.0, 0,  1, 1, 1,  -0.0, -0.0, -0.0});
  // dC: row 2 an infinity, row 4 a NaN; its zeros of x go with those.
  Tensor y = make({6, 3}, {1, 2, 3,  -1, 0, 1,  inf, 1, 0,
                           0.5, 0.5, 0.5,  1, nan, 2,  -3, 1, 0});
  Tensor cw = make({4, 3}, {-0.0, 0, 1,  -0.0, -0.0, -0.0,  2, nan, 0,  0, 0, -0.0});
  auto out = run(src, g, {x, w, c, y, cw});
  ASSERT_EQ(out.size(), 4u) << errors;
  auto xw = [&](int64_t i, int64_t j, int64_t k) {
    return x.data[i * 4 + k] * w.data[k * 3 + j];
  };
  auto xty = [&](int64_t k, int64_t j, int64_t i) {
    return x.data[i * 4 + k] * y.data[i * 3 + j];
  };
  EXPECT_EQ(notPointByPoint(out[0], 6, 3, zeroInit, xw, 4), 0) << "x W";
  EXPECT_EQ(notPointByPoint(out[1], 6, 3,
                            [&](int64_t i, int64_t j) { return c.data[i * 3 + j]; },
                            xw, 4), 0) << "c + x W";
  EXPECT_EQ(notPointByPoint(out[2], 4, 3, zeroInit, xty, 6), 0) << "xT dC";
  EXPECT_EQ(notPointByPoint(out[3], 4, 3,
                            [&](int64_t k, int64_t j) { return cw.data[k * 3 + j]; },
                            xty, 6), 0) << "c + xT dC";
}

/// A function of (y: ?xJ, x: ?xF, c: JxF) returning yᵀ x summed into zeros
/// and into c (a weight gradient's product: the sum over the rows is the
/// outer loop).
std::string transposedProductSource(int64_t j, int64_t f) {
  std::string s = R"mlir(
#ya = affine_map<(j, f, n) -> (n, j)>
#xb = affine_map<(j, f, n) -> (n, f)>
#wc = affine_map<(j, f, n) -> (j, f)>
func.func @f(%g: !gnn.graph, %y: tensor<?x@J@xf32>, %x: tensor<?x@F@xf32>, %c: tensor<@J@x@F@xf32>)
    -> (tensor<@J@x@F@xf32>, tensor<@J@x@F@xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<@J@x@F@xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<@J@x@F@xf32>) -> tensor<@J@x@F@xf32>
  %0 = linalg.generic {indexing_maps = [#ya, #xb, #wc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %x : tensor<?x@J@xf32>, tensor<?x@F@xf32>) outs(%i : tensor<@J@x@F@xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<@J@x@F@xf32>
  %1 = linalg.generic {indexing_maps = [#ya, #xb, #wc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %x : tensor<?x@J@xf32>, tensor<?x@F@xf32>) outs(%c : tensor<@J@x@F@xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<@J@x@F@xf32>
  return %0, %1 : tensor<@J@x@F@xf32>, tensor<@J@x@F@xf32>
})mlir";
  for (auto [key, value] : {std::pair<std::string, int64_t>{"@J@", j}, {"@F@", f}})
    for (size_t at; (at = s.find(key)) != std::string::npos;)
      s.replace(at, key.size(), std::to_string(value));
  return s;
}

// Rows mostly of zeros that several scalars multiply (dCᵀ x over sparse
// features, the weight gradient of a layer on bag-of-words inputs) are
// walked by their nonzeros: bit for bit the point by point sums, with
// infinities and NaN among the rows' nonzeros and among the scalars (a
// non-finite scalar takes the whole row: zero times it is NaN), and with
// an init holding -0.0 (then nothing is skipped).
TEST_F(Evaluator, SparseRowsOfProductsWalkedByTheirNonzeros) {
  const std::string src = transposedProductSource(3, 200);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostGraph g;
  g.name = "rows";
  g.numNodes = 600;
  const int64_t n = 600, f = 200;
  Tensor y({n, 3}), x({n, f}), c({3, f});
  // x: about 90 % zeros (some -0.0), a few infinities and NaN.
  for (int64_t k = 0; k < n * f; ++k) {
    int64_t h = (k * 2654435761) % 1000;
    x.data[k] = h < 900 ? (h % 2 ? 0.0 : -0.0)
                        : std::ldexp(1.0 + h / 1000.0, int(k % 13) - 6) *
                              (h % 3 ? 1 : -1);
  }
  x.data[5 * f + 7] = inf;
  x.data[77 * f + 150] = nan;
  x.data[300 * f + 0] = -inf;
  for (int64_t k = 0; k < n * 3; ++k)
    y.data[k] = k % 7 == 0 ? 0.0 : std::cos(0.1 * k);
  y.data[10 * 3 + 1] = inf; // a whole row of x times infinity
  y.data[20 * 3 + 2] = nan;
  for (int64_t k = 0; k < 3 * f; ++k)
    c.data[k] = k % 5 ? 0.5 * k : -0.0;
  auto out = run(src, g, {y, x, c});
  ASSERT_EQ(out.size(), 2u) << errors;
  auto yx = [&](int64_t j, int64_t q, int64_t k) {
    return y.data[k * 3 + j] * x.data[k * f + q];
  };
  EXPECT_EQ(notPointByPoint(out[0], 3, f, zeroInit, yx, n), 0) << "yT x";
  EXPECT_EQ(notPointByPoint(out[1], 3, f,
                            [&](int64_t j, int64_t q) { return c.data[j * f + q]; },
                            yx, n), 0) << "c + yT x";
}

// Runs of eight zero scalars (x's rows in x W over wide bag-of-words
// features) are skipped together where every row of W is finite, and the
// sums stay the point by point ones bit for bit: zeros of both signs, NaN
// and infinities inside otherwise zero runs and at a row's end (a width
// that is not a multiple of eight), an init holding -0.0 (nothing skipped
// then), W with an infinity (no run skipped: zero times it is NaN), and
// enough multiply-adds for several threads where the machine has them.
TEST_F(Evaluator, ZeroRunsOfWideSparseRowsSkippedBitForBit) {
  const char *src = R"mlir(
#xa = affine_map<(i, j, k) -> (i, k)>
#xb = affine_map<(i, j, k) -> (k, j)>
#xc = affine_map<(i, j, k) -> (i, j)>
func.func @f(%g: !gnn.graph, %x: tensor<?x1437xf32>, %w: tensor<1437x16xf32>,
             %v: tensor<1437x16xf32>, %c: tensor<?x16xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x1437xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<?x1437xf32>, tensor<1437x16xf32>) outs(%i : tensor<?x16xf32>) -> tensor<?x16xf32>
  %1 = linalg.matmul ins(%x, %v : tensor<?x1437xf32>, tensor<1437x16xf32>) outs(%i : tensor<?x16xf32>) -> tensor<?x16xf32>
  %2 = linalg.generic {indexing_maps = [#xa, #xb, #xc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x1437xf32>, tensor<1437x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  return %0, %1, %2 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
})mlir";
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostGraph g;
  g.name = "rows";
  g.numNodes = 400;
  const int64_t n = 400, f = 1437, h = 16;
  Tensor x({n, f}), w({f, h}), v({f, h}), c({n, h});
  // x: about 99 % zeros (half of them -0.0), the rest of any magnitude.
  for (int64_t k = 0; k < n * f; ++k) {
    int64_t r = (k * 2654435761) % 1000;
    x.data[k] = r < 990 ? (r % 2 ? 0.0 : -0.0)
                        : std::ldexp(1.0 + r / 1000.0, int(k % 17) - 8) *
                              (r % 3 ? 1 : -1);
  }
  x.data[3 * f + 100] = nan;     // inside a run of zeros
  x.data[4 * f + 1436] = inf;    // the last column (after the last run)
  x.data[5 * f + 1433] = -inf;   // in the tail shorter than eight
  x.data[6 * f + 8] = -0.0;      // a run of zeros of both signs
  for (int64_t k = 0; k < f * h; ++k)
    w.data[k] = std::sin(0.01 * k) * (1 + k % 7);
  v = w;
  v.data[700 * h + 3] = inf; // zero times it is NaN: no run may be skipped
  for (int64_t k = 0; k < n * h; ++k)
    c.data[k] = k % 3 ? 0.25 * k : -0.0;
  auto out = run(src, g, {x, w, v, c});
  ASSERT_EQ(out.size(), 3u) << errors;
  auto xw = [&](int64_t i, int64_t j, int64_t k) {
    return x.data[i * f + k] * w.data[k * h + j];
  };
  auto xv = [&](int64_t i, int64_t j, int64_t k) {
    return x.data[i * f + k] * v.data[k * h + j];
  };
  EXPECT_EQ(notPointByPoint(out[0], n, h, zeroInit, xw, f), 0) << "x W";
  EXPECT_EQ(notPointByPoint(out[1], n, h, zeroInit, xv, f), 0) << "x V";
  EXPECT_EQ(notPointByPoint(out[2], n, h,
                            [&](int64_t i, int64_t j) { return c.data[i * h + j]; },
                            xw, f), 0) << "c + x W";
  // What the comparison rests on: x's NaN reached its row, and a zero of x
  // times V's infinity made a NaN (x[0][700] is -0.0).
  ASSERT_EQ(x.data[700], 0.0);
  EXPECT_TRUE(std::isnan(out[0].data[3 * h]));
  EXPECT_TRUE(std::isnan(out[1].data[0 * h + 3]));
  EXPECT_FALSE(std::isnan(out[0].data[0 * h + 3]));
}

// Products of scalars and dense rows (x W, xᵀ dC) hold blocks of c's rows
// in vector registers while they take their terms, in chunks of the sum,
// listing a row's nonzero terms only while the rows before it had many
// zeros: bit for bit the point by point sums, with a width that is no
// multiple of the blocks (37: blocks of 32 or 16, then 4, then 1), a sum
// longer than one chunk (600 and 3,000 terms), rows of x alternating
// between dense and mostly zeros (the listing switched off and on), an x
// sparse everywhere (xT dC then takes the loop that skips runs of zero
// scalars), zeros of both signs, infinities and NaN among the scalars and the rows, an
// init holding -0.0 (nothing skipped), and several threads where the
// machine has them.
TEST_F(Evaluator, BlockedRowProductsSumAsPointByPoint) {
  const char *src = R"mlir(
#ta = affine_map<(k, j, i) -> (i, k)>
#tc = affine_map<(k, j, i) -> (i, j)>
#to = affine_map<(k, j, i) -> (k, j)>
func.func @f(%g: !gnn.graph, %x: tensor<?x600xf32>, %w: tensor<600x37xf32>,
             %c: tensor<?x37xf32>, %y: tensor<?x64xf32>, %cw: tensor<600x64xf32>,
             %xs: tensor<?x600xf32>, %ys: tensor<?x64xf32>)
    -> (tensor<?x37xf32>, tensor<?x37xf32>, tensor<600x64xf32>, tensor<600x64xf32>,
        tensor<600x64xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x600xf32>
  %e = tensor.empty(%n) : tensor<?x37xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x37xf32>) -> tensor<?x37xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<?x600xf32>, tensor<600x37xf32>) outs(%i : tensor<?x37xf32>) -> tensor<?x37xf32>
  %1 = linalg.matmul ins(%x, %w : tensor<?x600xf32>, tensor<600x37xf32>) outs(%c : tensor<?x37xf32>) -> tensor<?x37xf32>
  %ew = tensor.empty() : tensor<600x64xf32>
  %iw = linalg.fill ins(%z : f32) outs(%ew : tensor<600x64xf32>) -> tensor<600x64xf32>
  %2 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x600xf32>, tensor<?x64xf32>) outs(%iw : tensor<600x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<600x64xf32>
  %3 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<?x600xf32>, tensor<?x64xf32>) outs(%cw : tensor<600x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<600x64xf32>
  %4 = linalg.generic {indexing_maps = [#ta, #tc, #to], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xs, %ys : tensor<?x600xf32>, tensor<?x64xf32>) outs(%iw : tensor<600x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<600x64xf32>
  return %0, %1, %2, %3, %4 : tensor<?x37xf32>, tensor<?x37xf32>, tensor<600x64xf32>, tensor<600x64xf32>, tensor<600x64xf32>
})mlir";
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostGraph g;
  g.name = "rows";
  g.numNodes = 3000;
  const int64_t n = 3000, f = 600, h = 37, hy = 64;
  Tensor x({n, f}), w({f, h}), c({n, h}), y({n, hy}), cw({f, hy}), xs({n, f}),
      ys({n, hy});
  // x: rows in runs of 40 alternating between 5 % and 70 % zeros (half of
  // them -0.0); values of magnitudes 1e-3 .. 1e3 (sums that depend on
  // their order).
  for (int64_t k = 0; k < n * f; ++k) {
    int64_t r = (k * 2654435761) % 1000, row = k / f;
    bool zero = r < ((row / 40) % 2 ? 700 : 50);
    x.data[k] = zero ? (r % 2 ? 0.0 : -0.0)
                     : std::ldexp(1.0 + r / 1000.0, int(k % 21) - 10) *
                           (r % 3 ? 1 : -1);
  }
  x.data[300] = -0.0; // (row 0: a dense row; times W's infinity below)
  x.data[7 * f + 3] = nan;
  x.data[50 * f + 599] = inf;
  x.data[2999 * f + 0] = -inf;
  for (int64_t k = 0; k < f * h; ++k)
    w.data[k] = std::sin(0.01 * k) * (1 + k % 7);
  w.data[300 * h + 5] = inf; // the zeros of x's column 300 make NaN there
  w.data[520 * h + 36] = nan; // in the second chunk, the last column
  for (int64_t k = 0; k < n * h; ++k)
    c.data[k] = k % 4 ? 0.125 * k : -0.0;
  // Row 60 (in a run of sparse rows) of x all +0.0 and of c all -0.0:
  // -0 + +0 is +0, so nothing may be skipped there.
  for (int64_t k = 0; k < f; ++k)
    x.data[60 * f + k] = 0.0;
  for (int64_t k = 0; k < h; ++k)
    c.data[60 * h + k] = -0.0;
  for (int64_t k = 0; k < n * hy; ++k)
    y.data[k] = std::cos(0.37 * k) * (1 + k % 5);
  y.data[1000 * hy + 10] = inf; // a row of dC with an infinity: x's zeros
  y.data[2500 * hy + 63] = nan; // give NaN there
  for (int64_t k = 0; k < f * hy; ++k)
    cw.data[k] = k % 6 ? -0.5 * k : -0.0;
  // xs: 95 % zeros everywhere (bag-of-words features), ys finite: xsT dC
  // takes the loop that skips runs of eight zero scalars, not RowProduct.
  for (int64_t k = 0; k < n * f; ++k)
    xs.data[k] = (k * 40503) % 100 < 95 ? 0.0 : x.data[k] + 1.0;
  xs.data[5 * f + 3] = nan; // (a NaN scalar takes its whole row)
  for (int64_t k = 0; k < n * hy; ++k)
    ys.data[k] = std::cos(0.11 * k) * (1 + k % 3);
  auto out = run(src, g, {x, w, c, y, cw, xs, ys});
  ASSERT_EQ(out.size(), 5u) << errors;
  auto xw = [&](int64_t i, int64_t j, int64_t k) {
    return x.data[i * f + k] * w.data[k * h + j];
  };
  auto xty = [&](int64_t k, int64_t j, int64_t i) {
    return x.data[i * f + k] * y.data[i * hy + j];
  };
  EXPECT_EQ(notPointByPoint(out[0], n, h, zeroInit, xw, f), 0) << "x W";
  EXPECT_EQ(notPointByPoint(out[1], n, h,
                            [&](int64_t i, int64_t j) { return c.data[i * h + j]; },
                            xw, f), 0) << "c + x W";
  EXPECT_EQ(notPointByPoint(out[2], f, hy, zeroInit, xty, n), 0) << "xT dC";
  EXPECT_EQ(notPointByPoint(out[3], f, hy,
                            [&](int64_t k, int64_t j) { return cw.data[k * hy + j]; },
                            xty, n), 0) << "c + xT dC";
  EXPECT_EQ(notPointByPoint(out[4], f, hy, zeroInit,
                            [&](int64_t k, int64_t j, int64_t i) {
                              return xs.data[i * f + k] * ys.data[i * hy + j];
                            }, n), 0) << "xsT dC";
  // What the comparison rests on: the non-finite values reached the
  // results (x's zero at [0][300] times W's infinity; row 1000 of dC's
  // infinity times x's zeros and nonzeros).
  ASSERT_EQ(x.data[300], 0.0);
  EXPECT_TRUE(std::isnan(out[0].data[0 * h + 5]));
  EXPECT_TRUE(std::isnan(out[0].data[7 * h + 0]));
  EXPECT_FALSE(std::isnan(out[0].data[8 * h + 0]));
  // Row 60 of c + x W in a column where the rows of W that hold a
  // non-finite value (never skipped) give -0.0 terms: only the skippable
  // +0.0 terms make it +0.
  int64_t col = 0;
  while (col < h && !(w.data[300 * h + col] < 0 && w.data[520 * h + col] < 0))
    ++col;
  ASSERT_LT(col, h);
  EXPECT_FALSE(std::signbit(out[1].data[60 * h + col])) << "column " << col;
  EXPECT_TRUE(std::isinf(out[2].data[0 * hy + 10]) ||
              std::isnan(out[2].data[0 * hy + 10]));
}

// A body run in batches along the edges where its innermost output loop is
// short (4 heads): every element takes its reduction terms in their order
// (bit for bit the point by point sums), and linalg.index reads the right
// point of both loops.
TEST_F(Evaluator, ShortInnerLoopsBatchedAlongTheLongestKeepEachElementsOrder) {
  const char *src = R"mlir(
#in = affine_map<(n, h, k) -> (n, h, k)>
#out = affine_map<(n, h, k) -> (n, h)>
func.func @f(%g: !gnn.graph, %x: tensor<?x4x5xf32>, %c: tensor<?x4xf32>)
    -> tensor<?x4xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x4x5xf32>) outs(%c : tensor<?x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %fj = arith.sitofp %jj : i64 to f32
    %t = arith.mulf %p, %fi : f32
    %u = arith.addf %t, %fj : f32
    %s = arith.addf %o, %u : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
})mlir";
  HostGraph g;
  g.name = "rows";
  g.numNodes = 700;
  const int64_t n = 700;
  Tensor x({n, 4, 5}), c({n, 4});
  for (int64_t k = 0; k < x.numElements(); ++k)
    x.data[k] = std::ldexp(1.0 + (k * 7919 % 1000) / 997.0, int(k % 19) - 9) *
                (k % 3 ? 1 : -1);
  for (int64_t k = 0; k < c.numElements(); ++k)
    c.data[k] = 0.1 * k;
  auto out = run(src, g, {x, c});
  ASSERT_EQ(out.size(), 1u) << errors;
  EXPECT_EQ(notPointByPoint(out[0], n, 4,
                            [&](int64_t i, int64_t j) { return c.data[i * 4 + j]; },
                            [&](int64_t i, int64_t j, int64_t k) {
                              return x.data[(i * 4 + j) * 5 + k] * double(i) +
                                     double(j);
                            }, 5), 0);
}

// tensor.empty is left unset only where ops write each of its elements
// before anything reads them: an elementwise body that does not read its
// output; one that reads it (o + x) and an empty returned as it is still
// see zeros. (The empties take kept blocks that held NaN just before, where
// blocks are kept.)
TEST_F(Evaluator, EmptyTensorsLeftUnsetOnlyWhereWrittenWhole) {
  const char *src = R"mlir(
#id = affine_map<(i, j) -> (i, j)>
func.func @f(%g: !gnn.graph, %x: tensor<?x32xf32>)
    -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %e1 = tensor.empty(%n) : tensor<?x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x32xf32>) outs(%e1 : tensor<?x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %p, %two : f32
    linalg.yield %m : f32
  } -> tensor<?x32xf32>
  %e2 = tensor.empty(%n) : tensor<?x32xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x32xf32>) outs(%e2 : tensor<?x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x32xf32>
  %e3 = tensor.empty(%n) : tensor<?x32xf32>
  return %a, %b, %e3 : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
})mlir";
  HostGraph g;
  g.name = "rows";
  g.numNodes = 4096;
  const int64_t n = 4096; // 4,096 x 32 doubles: 1 MiB, a kept block's size
  Tensor x({n, 32});
  for (int64_t k = 0; k < n * 32; ++k)
    x.data[k] = 0.5 * k - 3;
  {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<Tensor> junk;
    for (int i = 0; i < 12; ++i)
      junk.emplace_back(std::vector<int64_t>{n, 32}, nan);
  }
  auto out = run(src, g, {x});
  ASSERT_EQ(out.size(), 3u) << errors;
  int64_t wrong[3] = {0, 0, 0};
  for (int64_t k = 0; k < n * 32; ++k) {
    wrong[0] += out[0].data[k] != 2 * x.data[k];
    wrong[1] += out[1].data[k] != x.data[k];
    wrong[2] += out[2].data[k] != 0.0;
  }
  EXPECT_EQ(wrong[0], 0) << "written whole";
  EXPECT_EQ(wrong[1], 0) << "read by its body";
  EXPECT_EQ(wrong[2], 0) << "returned";
}

// arith.cmpf in a batch, every predicate (the common ones as plain
// comparisons, the rest through compareF), on pairs with NaN on either
// side, infinities, equal values and zeros of both signs: an ordered
// predicate is false and an unordered one true where a NaN is.
TEST_F(Evaluator, ComparisonsInBatchesFollowIeeeOrderedness) {
  const char *src = R"mlir(
#id = affine_map<(i) -> (i)>
func.func @f(%g: !gnn.graph, %a: tensor<?xf32>, %b: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e0 = tensor.empty(%n) : tensor<?xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e0 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf oeq, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e1 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ogt, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e2 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf oge, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e3 = tensor.empty(%n) : tensor<?xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e3 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf olt, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e4 = tensor.empty(%n) : tensor<?xf32>
  %r4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e4 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ole, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e5 = tensor.empty(%n) : tensor<?xf32>
  %r5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e5 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf one, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e6 = tensor.empty(%n) : tensor<?xf32>
  %r6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e6 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ord, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e7 = tensor.empty(%n) : tensor<?xf32>
  %r7 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e7 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ueq, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e8 = tensor.empty(%n) : tensor<?xf32>
  %r8 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e8 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ugt, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e9 = tensor.empty(%n) : tensor<?xf32>
  %r9 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e9 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf uge, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e10 = tensor.empty(%n) : tensor<?xf32>
  %r10 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e10 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ult, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e11 = tensor.empty(%n) : tensor<?xf32>
  %r11 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e11 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf ule, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e12 = tensor.empty(%n) : tensor<?xf32>
  %r12 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e12 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf une, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e13 = tensor.empty(%n) : tensor<?xf32>
  %r13 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e13 : tensor<?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %c = arith.cmpf uno, %p, %q : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %c, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir";
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> as = {1, 2, 2, nan, 1, nan, inf, -inf, 0.0, -0.0, 3, -5};
  std::vector<double> bs = {2, 1, 2, 1, nan, nan, inf, 1, -0.0, 0.0, -inf, -5};
  const int64_t n = static_cast<int64_t>(as.size());
  HostGraph g;
  g.name = "pairs";
  g.numNodes = n;
  auto out = run(src, g, {make({n}, as), make({n}, bs)});
  ASSERT_EQ(out.size(), 14u) << errors;
  // In the function's order: oeq ogt oge olt ole one ord ueq ugt uge ult
  // ule une uno.
  for (int64_t i = 0; i < n; ++i) {
    double a = as[i], b = bs[i];
    bool u = std::isnan(a) || std::isnan(b);
    bool want[14] = {!u && a == b, !u && a > b,  !u && a >= b, !u && a < b,
                     !u && a <= b, !u && a != b, !u,           u || a == b,
                     u || a > b,   u || a >= b,  u || a < b,   u || a <= b,
                     u || a != b,  u};
    for (int k = 0; k < 14; ++k)
      EXPECT_EQ(out[k].data[i], want[k] ? 1.0 : 0.0)
          << "predicate #" << k << " on " << a << ", " << b;
  }
}

// A body that sums into a single element (o + t, t free of o: an eps's
// gradient sum(x * dy)) computes its terms a batch at a time and adds them
// in the points' order: bit for bit the point by point sum, linalg.index
// included; a body that reads o otherwise (o * 0.5 + t) still runs point by
// point, with the same result as before.
TEST_F(Evaluator, SumsIntoOneElementTakeTheirTermsInOrder) {
  const char *src = R"mlir(
#in = affine_map<(i, k) -> (i, k)>
#one = affine_map<(i, k) -> (0)>
func.func @f(%g: !gnn.graph, %x: tensor<?x37xf32>, %y: tensor<?x37xf32>, %c: tensor<1xf32>)
    -> (tensor<1xf32>, tensor<1xf32>) {
  %0 = linalg.generic {indexing_maps = [#in, #in, #one], iterator_types = ["reduction", "reduction"]}
      ins(%x, %y : tensor<?x37xf32>, tensor<?x37xf32>) outs(%c : tensor<1xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %k = linalg.index 1 : index
    %kk = arith.index_cast %k : index to i64
    %fk = arith.sitofp %kk : i64 to f32
    %m = arith.mulf %p, %q : f32
    %t = arith.addf %m, %fk : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %1 = linalg.generic {indexing_maps = [#in, #in, #one], iterator_types = ["reduction", "reduction"]}
      ins(%x, %y : tensor<?x37xf32>, tensor<?x37xf32>) outs(%c : tensor<1xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %oh = arith.mulf %o, %h : f32
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %oh, %m : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %0, %1 : tensor<1xf32>, tensor<1xf32>
})mlir";
  HostGraph g;
  g.name = "rows";
  g.numNodes = 500;
  const int64_t n = 500, f = 37;
  Tensor x({n, f}), y({n, f});
  for (int64_t k = 0; k < n * f; ++k) {
    x.data[k] = std::ldexp(1.0 + (k * 7919 % 1000) / 997.0, int(k % 23) - 11) *
                (k % 3 ? 1 : -1);
    y.data[k] = std::sin(0.37 * k);
  }
  Tensor c = make({1}, {0.75});
  auto out = run(src, g, {x, y, c});
  ASSERT_EQ(out.size(), 2u) << errors;
  double sum = 0.75, half = 0.75;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < f; ++k) {
      sum = sum + (x.data[i * f + k] * y.data[i * f + k] + double(k));
      half = half * 0.5 + x.data[i * f + k] * y.data[i * f + k];
    }
  EXPECT_EQ(out[0].data[0], sum);
  EXPECT_EQ(out[1].data[0], half);
}

// A narrow product summed over a long outer loop (GINE's edge-projection
// gradient dMᵀ edge_attr, 40 x 5 here over 3,000 rows) runs transposed:
// bit for bit the point by point sums, with infinities and NaN among both
// operands, zeros of both signs and an init holding -0.0.
TEST_F(Evaluator, NarrowProductsOverALongSumRunTransposedBitForBit) {
  const std::string src = transposedProductSource(40, 5);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostGraph g;
  g.name = "rows";
  g.numNodes = 3000;
  const int64_t n = 3000, o = 40, k = 5;
  Tensor y({n, o}), a({n, k}), c({o, k});
  for (int64_t q = 0; q < n * o; ++q)
    y.data[q] = q % 9 == 0 ? (q % 2 ? 0.0 : -0.0)
                           : std::ldexp(1.0 + (q * 7919 % 1000) / 997.0,
                                        int(q % 23) - 11) * (q % 3 ? 1 : -1);
  for (int64_t q = 0; q < n * k; ++q)
    a.data[q] = q % 7 == 0 ? 0.0 : std::cos(0.13 * q) * (1 + q % 4);
  y.data[100 * o + 7] = inf;
  a.data[200 * k + 2] = nan;
  a.data[2999 * k + 4] = -inf;
  for (int64_t q = 0; q < o * k; ++q)
    c.data[q] = q % 3 ? 0.25 * q : -0.0;
  auto out = run(src, g, {y, a, c});
  ASSERT_EQ(out.size(), 2u) << errors;
  auto term = [&](int64_t p, int64_t j, int64_t e) {
    return y.data[e * o + p] * a.data[e * k + j];
  };
  EXPECT_EQ(notPointByPoint(out[0], o, k, zeroInit, term, n), 0) << "yT a";
  EXPECT_EQ(notPointByPoint(out[1], o, k,
                            [&](int64_t p, int64_t j) { return c.data[p * k + j]; },
                            term, n), 0) << "c + yT a";
}

// An op writes a tensor whose last use it is in place of a copy only where
// nothing else reads it: not where the same value is also an input of the
// op (a transpose into itself), not where another value shares it
// (tensor.cast) and is read later, not for a value returned twice; a
// reshape of a value used again leaves that value as it was.
TEST_F(Evaluator, TensorsTakenOverOnlyWhereNothingElseReadsThem) {
  const char *src = R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @f(%g: !gnn.graph, %a: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %e = tensor.empty() : tensor<2x2xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %p, %one : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %tt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<2x2xf32>) outs(%t : tensor<2x2xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<2x2xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.mulf %p, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %c = tensor.cast %u : tensor<2x2xf32> to tensor<2x2xf32>
  %v = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%u : tensor<2x2xf32>) {
  ^bb0(%o: f32):
    %s = arith.negf %o : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %r = tensor.collapse_shape %tt [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  return %tt, %v, %c, %v, %r, %a, %tt : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
})mlir";
  HostGraph g = tinyGraph();
  Tensor a = make({2, 2}, {1, 2, 3, 4});
  auto out = run(src, g, {a});
  ASSERT_EQ(out.size(), 7u) << errors;
  expectTensor(out[0], {2, 2}, {2, 4, 3, 5});   // (a + 1) transposed
  expectTensor(out[1], {2, 2}, {-1, -4, -9, -16});
  expectTensor(out[2], {2, 2}, {1, 4, 9, 16});  // the cast kept its values
  expectTensor(out[3], {2, 2}, {-1, -4, -9, -16});
  expectTensor(out[4], {4}, {2, 4, 3, 5});
  expectTensor(out[5], {2, 2}, {1, 2, 3, 4});   // an argument returned
  expectTensor(out[6], {2, 2}, {2, 4, 3, 5});
}

// Generic bodies run in batches of points along a loop indexing every
// output once: linalg.index of that loop across a batch's end, a
// reduction whose result depends on its terms' order (o * 2 + v) with the
// reduction innermost (the batches run along the outer loop), two outputs
// of which one is reduced, and a reduction to a scalar (no such loop).
TEST_F(Evaluator, GenericBodiesRunInBatchesAsPointByPoint) {
  const char *src = R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#one = affine_map<(i, j) -> (0)>
func.func @f(%g: !gnn.graph, %x: tensor<?x300xf32>)
    -> (tensor<?x300xf32>, tensor<?xf32>, tensor<?x300xf32>, tensor<1xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x300xf32>
  %e = tensor.empty(%n) : tensor<?x300xf32>
  %er = tensor.empty(%n) : tensor<?xf32>
  %r0 = linalg.fill ins(%z : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %s0 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1xf32>) -> tensor<1xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x300xf32>) outs(%e : tensor<?x300xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.muli %i, %c1000 : index
    %l = arith.addi %k, %j : index
    %li = arith.index_cast %l : index to i64
    %f = arith.sitofp %li : i64 to f32
    %y = arith.addf %f, %v : f32
    linalg.yield %y : f32
  } -> tensor<?x300xf32>
  %1:2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x300xf32>) outs(%r0, %e : tensor<?xf32>, tensor<?x300xf32>) {
  ^bb0(%v: f32, %o: f32, %p: f32):
    %m = arith.mulf %o, %two : f32
    %s = arith.addf %m, %v : f32
    %q = arith.maximumf %v, %s : f32
    linalg.yield %s, %q : f32, f32
  } -> (tensor<?xf32>, tensor<?x300xf32>)
  %2 = linalg.generic {indexing_maps = [#id, #one], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<?x300xf32>) outs(%s0 : tensor<1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %o, %two : f32
    %s = arith.subf %v, %m : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %0, %1#0, %1#1, %2 : tensor<?x300xf32>, tensor<?xf32>, tensor<?x300xf32>, tensor<1xf32>
})mlir";
  std::string source = src;
  source.replace(source.find("%two = "), 0,
                 "%c1000 = arith.constant 1000 : index\n  ");
  HostGraph g = tinyGraph();
  Tensor x({6, 300});
  for (int64_t i = 0; i < 6 * 300; ++i)
    x.data[i] = std::ldexp(double((i * 37) % 11) - 5.0, -int(i % 7));
  auto out = run(source, g, {x});
  ASSERT_EQ(out.size(), 4u) << errors;
  double scalar = 0;
  for (int64_t i = 0; i < 6; ++i) {
    double row = 0;
    for (int64_t j = 0; j < 300; ++j) {
      double v = x.data[i * 300 + j];
      EXPECT_EQ(out[0].data[i * 300 + j], double(i * 1000 + j) + v)
          << i << ", " << j;
      row = row * 2 + v;
      EXPECT_EQ(out[2].data[i * 300 + j], std::max(v, row)) << i << ", " << j;
      scalar = v - scalar * 2;
    }
    EXPECT_EQ(out[1].data[i], row) << i;
  }
  EXPECT_EQ(out[3].data[0], scalar);
}

TEST_F(Evaluator, IntegerOpsHaveArithSemantics) {
  // Integers of a body wrap to their width and are read signed or
  // unsigned as each op says; the CUDA printer emits C integer code
  // with the same meaning.
  const char *src = R"mlir(
#m = affine_map<(d0) -> (d0)>
func.func @f(%g: !gnn.graph, %x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r:16 = linalg.generic {indexing_maps = [#m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m, #m], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e, %e, %e, %e, %e, %e, %e, %e, %e, %e, %e, %e, %e, %e, %e, %e : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32, %o4: f32, %o5: f32, %o6: f32, %o7: f32, %o8: f32, %o9: f32, %o10: f32, %o11: f32, %o12: f32, %o13: f32, %o14: f32, %o15: f32):
    %aa0 = arith.constant 5 : i32
    %bb0 = arith.constant 3 : i32
    %cc0 = arith.xori %aa0, %bb0 : i32
    %r0 = arith.sitofp %cc0 : i32 to f32
    %aa1 = arith.constant 6 : i32
    %bb1 = arith.constant 3 : i32
    %cc1 = arith.andi %aa1, %bb1 : i32
    %r1 = arith.sitofp %cc1 : i32 to f32
    %aa2 = arith.constant 4 : i32
    %bb2 = arith.constant 1 : i32
    %cc2 = arith.ori %aa2, %bb2 : i32
    %r2 = arith.sitofp %cc2 : i32 to f32
    %aa3 = arith.constant -1 : i32
    %r3 = arith.uitofp %aa3 : i32 to f32
    %aa4 = arith.constant -1 : i32
    %bb4 = arith.constant 1 : i32
    %cc4 = arith.cmpi ult, %aa4, %bb4 : i32
    %r4 = arith.uitofp %cc4 : i1 to f32
    %aa5 = arith.constant -2 : i32
    %bb5 = arith.constant 2 : i32
    %cc5 = arith.divui %aa5, %bb5 : i32
    %r5 = arith.sitofp %cc5 : i32 to f32
    %aa6 = arith.constant -1 : i32
    %bb6 = arith.constant 2 : i32
    %cc6 = arith.maxui %aa6, %bb6 : i32
    %r6 = arith.sitofp %cc6 : i32 to f32
    %aa7 = arith.constant 2147483647 : i32
    %bb7 = arith.constant 1 : i32
    %cc7 = arith.addi %aa7, %bb7 : i32
    %r7 = arith.sitofp %cc7 : i32 to f32
    %aa8 = arith.constant 65536 : i32
    %cc8 = arith.muli %aa8, %aa8 : i32
    %r8 = arith.sitofp %cc8 : i32 to f32
    %aa9 = arith.constant true
    %r9 = arith.sitofp %aa9 : i1 to f32
    %aa10 = arith.constant 300 : i32
    %cc10 = arith.trunci %aa10 : i32 to i8
    %r10 = arith.sitofp %cc10 : i8 to f32
    %aa11 = arith.constant -1 : i8
    %cc11 = arith.extui %aa11 : i8 to i32
    %r11 = arith.sitofp %cc11 : i32 to f32
    %aa12 = arith.constant -8 : i32
    %bb12 = arith.constant 1 : i32
    %cc12 = arith.shrui %aa12, %bb12 : i32
    %r12 = arith.sitofp %cc12 : i32 to f32
    %aa13 = arith.constant -7 : i32
    %bb13 = arith.constant 2 : i32
    %cc13 = arith.floordivsi %aa13, %bb13 : i32
    %r13 = arith.sitofp %cc13 : i32 to f32
    %aa14 = arith.constant 7 : i32
    %bb14 = arith.constant 2 : i32
    %cc14 = arith.ceildivsi %aa14, %bb14 : i32
    %r14 = arith.sitofp %cc14 : i32 to f32
    %aa15 = arith.constant -7 : i32
    %bb15 = arith.constant 2 : i32
    %cc15 = arith.remui %aa15, %bb15 : i32
    %r15 = arith.sitofp %cc15 : i32 to f32
    linalg.yield %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  } -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11, %r#12, %r#13, %r#14, %r#15 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir";
  Tensor x({6});
  auto out = run(src, tinyGraph(), {x});
  ASSERT_EQ(out.size(), 16u) << errors;
  const struct {
    double want;
    const char *what;
  } expected[] = {
      {6, "xori is bitwise"},
      {2, "andi is bitwise"},
      {5, "ori is bitwise"},
      {4294967295.0, "uitofp reads unsigned"},
      {0, "cmpi ult reads unsigned"},
      {2147483647.0, "divui reads unsigned"},
      {-1, "maxui reads unsigned"},
      {-2147483648.0, "addi wraps"},
      {0, "muli wraps"},
      {-1, "a signed i1 true is -1"},
      {44, "trunci keeps the low bits"},
      {255, "extui zero-extends"},
      {2147483644.0, "shrui shifts zeros in"},
      {-4, "floordivsi rounds down"},
      {4, "ceildivsi rounds up"},
      {1, "remui reads unsigned"},
  };
  for (size_t k = 0; k < out.size(); ++k)
    EXPECT_EQ(out[k].data[0], expected[k].want) << expected[k].what;
}

TEST_F(Evaluator, NamedLinalgOps) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>, %y: tensor<?x3xf32>)
    -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<3x?xf32>, tensor<?xf32>, tensor<?x3x2xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %0 = linalg.add ins(%x, %y : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = linalg.exp ins(%x : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %et = tensor.empty(%n) : tensor<3x?xf32>
  %2 = linalg.transpose ins(%x : tensor<?x3xf32>) outs(%et : tensor<3x?xf32>) permutation = [1, 0]
  %er = tensor.empty(%n) : tensor<?xf32>
  %ir = linalg.fill ins(%z : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %3 = linalg.reduce ins(%x : tensor<?x3xf32>) outs(%ir : tensor<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %eb = tensor.empty(%n) : tensor<?x3x2xf32>
  %4 = linalg.broadcast ins(%x : tensor<?x3xf32>) outs(%eb : tensor<?x3x2xf32>) dimensions = [2]
  return %0, %1, %2, %3, %4 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<3x?xf32>, tensor<?xf32>, tensor<?x3x2xf32>
})mlir";
  HostGraph g = tinyGraph();
  Tensor x({6, 3}), y({6, 3});
  for (int i = 0; i < 18; ++i) {
    x.data[i] = 0.25 * i - 2;
    y.data[i] = i;
  }
  auto out = run(src, g, {x, y});
  ASSERT_EQ(out.size(), 5u) << errors;
  ASSERT_EQ(out[2].shape, (std::vector<int64_t>{3, 6}));
  for (int n = 0; n < 6; ++n) {
    double rowSum = 0;
    for (int f = 0; f < 3; ++f) {
      double v = x.data[n * 3 + f];
      rowSum += v;
      EXPECT_DOUBLE_EQ(out[0].data[n * 3 + f], v + y.data[n * 3 + f]);
      EXPECT_DOUBLE_EQ(out[1].data[n * 3 + f], std::exp(v));
      EXPECT_DOUBLE_EQ(out[2].data[f * 6 + n], v);
      EXPECT_DOUBLE_EQ(out[4].data[(n * 3 + f) * 2 + 1], v);
    }
    EXPECT_DOUBLE_EQ(out[3].data[n], rowSum);
  }
}

TEST_F(Evaluator, WrongInputShapeIsReported) {
  auto out = run(spmmSource("sum"), tinyGraph(), {Tensor({5, 2})});
  EXPECT_TRUE(out.empty());
  EXPECT_NE(errors.find("argument #1 (node) expects shape [6, 2] on graph "
                        "'tiny' but the input has shape [5, 2]"),
            std::string::npos)
      << errors;
}

TEST_F(Evaluator, ResultTypeMismatchIsReported) {
  // The IR claims 4 rows; the graph has 6 nodes.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph) -> tensor<4xf32> {
  %0 = gnn.degree %g : tensor<4xf32>
  return %0 : tensor<4xf32>
})mlir";
  auto out = run(src, tinyGraph(), {});
  EXPECT_TRUE(out.empty());
  EXPECT_NE(errors.find("produces shape [6] on graph 'tiny' but its result "
                        "type is 'tensor<4xf32>'"),
            std::string::npos)
      << errors;
}

TEST_F(Evaluator, ElementTypeStorageRoundsHalfResultsOnceFromDouble) {
  // -5/3 stored at bf16 (8 significand bits) and f16 (11), rounded to nearest
  // from the double; double storage keeps it exact whatever the type.
  for (auto [type, want] : {std::pair<const char *, double>{"bf16", -1.6640625},
                            {"f16", -1.6669921875}}) {
    std::string src = spmmSource("mean");
    for (size_t at; (at = src.find("f32")) != std::string::npos;)
      src.replace(at, 3, type);
    auto stored =
        run(src, tinyGraph(), {signedNodes()}, ::gnn::Storage::ElementType);
    ASSERT_EQ(stored.size(), 1u) << errors;
    EXPECT_EQ(stored[0].data[2], want) << type;
    EXPECT_EQ(stored[0].data[3], -want) << type;
    // Integers (the sums of the other rows) are exact in both.
    EXPECT_EQ(stored[0].data[4], -1.5) << type;
    auto exact = run(src, tinyGraph(), {signedNodes()});
    ASSERT_EQ(exact.size(), 1u) << errors;
    EXPECT_EQ(exact[0].data[2], -5.0 / 3) << type;
  }
}

TEST_F(Evaluator, HalfStorageRoundsIntermediatesNotSums) {
  // A bf16 edge tensor (x[src] * 1.01, rounded at storage) summed per node:
  // the sum runs in double over the stored values and is rounded once.
  const char *src = R"mlir(
#id = affine_map<(d0) -> (d0)>
func.func @f(%g: !gnn.graph, %x: tensor<?xbf16>) -> tensor<?xbf16> {
  %e = gnn.gather src %g, %x : tensor<?xbf16> -> tensor<?xbf16>
  %c = arith.constant 1.01 : bf16
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%e : tensor<?xbf16>) outs(%e : tensor<?xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %c : bf16
    linalg.yield %m : bf16
  } -> tensor<?xbf16>
  %r = gnn.reduce sum %g, %s : tensor<?xbf16> -> tensor<?xbf16>
  return %r : tensor<?xbf16>
})mlir";
  Tensor x = make({6}, {1, 1, 1, 1, 1, 1});
  auto out = run(src, tinyGraph(), {x}, ::gnn::Storage::ElementType);
  ASSERT_EQ(out.size(), 1u) << errors;
  // 1.01 as a bf16 constant is 1.0078125; the products are exact in bf16.
  // Node 1 has 3 incoming edges: 3 * 1.0078125 = 3.0234375, which bf16
  // (quantum 2^-6 in [2, 4)) rounds to 3.03125 (a tie, to even).
  EXPECT_EQ(out[0].data[1], 3.03125);
  EXPECT_EQ(out[0].data[3], 0.0);
}

// Elementwise bodies read contiguous operands where they are and round
// each result as it is stored; that changes no bit: a result whose map is
// a permutation is rounded once per element (f32 and, transposed, so
// stored with a stride, bf16), a reduction's sum only at the end (each
// partial sum in double), and of two results that swap their inits
// (`yield %o1, %o0`), the second takes its init as it was, not as the first
// result stored over it.
TEST_F(Evaluator, ElementwiseResultsRoundedAsStoredReductionsAtTheEnd) {
  const char *src = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%g: !gnn.graph, %x: tensor<?x300xf32>, %y: tensor<?x300xf32>, %h: tensor<?x300xbf16>)
    -> (tensor<?x300xf32>, tensor<300x?xbf16>, tensor<?xf32>, tensor<?x300xf32>, tensor<?x300xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x300xf32>
  %e = tensor.empty(%n) : tensor<?x300xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<?x300xf32>, tensor<?x300xf32>) outs(%e : tensor<?x300xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x300xf32>
  %et = tensor.empty(%n) : tensor<300x?xbf16>
  %t = linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x300xbf16>) outs(%et : tensor<300x?xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %a : bf16
    %c = arith.constant 1.01 : bf16
    %s = arith.mulf %m, %c : bf16
    linalg.yield %s : bf16
  } -> tensor<300x?xbf16>
  %er = tensor.empty(%n) : tensor<?xf32>
  %zr = linalg.fill ins(%z : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x300xf32>) outs(%zr : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %s0, %s1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x300xf32>) outs(%x, %y : tensor<?x300xf32>, tensor<?x300xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    linalg.yield %o1, %o0 : f32, f32
  } -> (tensor<?x300xf32>, tensor<?x300xf32>)
  return %p, %t, %r, %s0, %s1 : tensor<?x300xf32>, tensor<300x?xbf16>, tensor<?xf32>, tensor<?x300xf32>, tensor<?x300xf32>
})mlir";
  const int64_t n = 40, m = 300;
  HostGraph g;
  g.name = "rows";
  g.numNodes = n;
  Tensor x({n, m}), y({n, m}), h({n, m});
  // f32 values (as the Python path passes them) whose products need more
  // than f32's bits, bf16 values for h.
  for (int64_t k = 0; k < n * m; ++k) {
    x.data[k] = static_cast<float>(1.0 + std::sin(0.7 * k) / 3.0);
    y.data[k] = static_cast<float>(std::cos(0.3 * k) * 1e3);
    h.data[k] = ::gnn::roundToHalf(1.0 + std::sin(1.3 * k) / 7.0,
                                   ::gnn::HalfKind::BF16);
  }
  auto out = run(src, g, {x, y, h}, ::gnn::Storage::ElementType);
  ASSERT_EQ(out.size(), 5u) << errors;
  const double c = ::gnn::roundToHalf(1.01, ::gnn::HalfKind::BF16);
  int64_t wrong[5] = {0, 0, 0, 0, 0};
  auto differ = [](double a, double b) { return std::memcmp(&a, &b, 8) != 0; };
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < m; ++j) {
      double a = x.data[i * m + j], b = y.data[i * m + j];
      double hh = h.data[i * m + j];
      wrong[0] += differ(out[0].data[i * m + j],
                         static_cast<float>(a * b + a));
      wrong[1] += differ(out[1].data[j * n + i],
                         ::gnn::roundToHalf(hh * hh * c,
                                            ::gnn::HalfKind::BF16));
      sum = sum + a * a;
      wrong[3] += differ(out[3].data[i * m + j], b);
      wrong[4] += differ(out[4].data[i * m + j], a);
    }
    wrong[2] += differ(out[2].data[i], static_cast<float>(sum));
  }
  EXPECT_EQ(wrong[0], 0) << "x * y + x, f32";
  EXPECT_EQ(wrong[1], 0) << "h * h * 1.01, bf16, transposed";
  EXPECT_EQ(wrong[2], 0) << "sum of x * x, f32";
  EXPECT_EQ(wrong[3], 0) << "the init of the second result";
  EXPECT_EQ(wrong[4], 0) << "the init of the first result";
}

TEST_F(Evaluator, SeededInputsAreFloat32AndScaled) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x4xf32>, %w: tensor<16x4xf32>, %e: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
})mlir";
  auto specs = specsOf(src);
  ASSERT_TRUE(succeeded(specs));
  EXPECT_EQ((*specs)[1].shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ((*specs)[2].role, "dense");
  EXPECT_EQ((*specs)[3].shape, (std::vector<int64_t>{7}));
  auto a = ::gnn::makeSeededInputs(*specs, 5);
  auto b = ::gnn::makeSeededInputs(*specs, 5);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].data, b[0].data);
  for (double v : a[0].data) {
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
    EXPECT_LT(std::fabs(v), 1.0);
  }
  for (double v : a[1].data)
    EXPECT_LT(std::fabs(v), 0.25); // 1/sqrt(16)
}

TEST_F(Evaluator, SeededInputsOfHalfArgumentsHoldHalfValues) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x4xbf16>, %y: tensor<?x4xf16>) -> tensor<?x4xbf16> {
  return %x : tensor<?x4xbf16>
})mlir";
  auto specs = specsOf(src);
  ASSERT_TRUE(succeeded(specs));
  EXPECT_EQ((*specs)[1].element, "bf16");
  EXPECT_EQ((*specs)[2].element, "f16");
  auto a = ::gnn::makeSeededInputs(*specs, 5);
  ASSERT_EQ(a.size(), 2u);
  // Each value is one of its type (and so, for bf16, rarely an f16 one).
  for (double v : a[0].data)
    EXPECT_EQ(v, ::gnn::roundToHalf(v, ::gnn::HalfKind::BF16));
  for (double v : a[1].data)
    EXPECT_EQ(v, ::gnn::roundToHalf(v, ::gnn::HalfKind::F16));
}

/// An independent C++ GAT forward (the formula, written without the
/// evaluator) against examples/gat.mlir on a random power-law graph.
TEST_F(Evaluator, GatExampleMatchesHandWrittenFormula) {
  std::string path = std::string(GNNC_SOURCE_DIR) + "/examples/gat.mlir";
  module = parseSourceFile<ModuleOp>(path, &context);
  ASSERT_TRUE(module) << path;
  auto func = *module->getOps<func::FuncOp>().begin();
  HostGraph g = ::gnn::generatePowerLaw(200, 3000, 11);
  g.name = "powerlaw";
  auto specs = ::gnn::resolveArguments(func, g);
  ASSERT_TRUE(succeeded(specs));
  auto in = ::gnn::makeSeededInputs(*specs, 1);
  auto out = ::gnn::evaluateReference(func, g, in);
  ASSERT_TRUE(succeeded(out));
  const Tensor &x = in[0], &w = in[1], &as = in[2], &ad = in[3], &b = in[4];
  const int N = 200, H = 4, C = 16, F = 64;
  std::vector<double> h(N * F, 0), ssrc(N * H, 0), sdst(N * H, 0);
  for (int n = 0; n < N; ++n)
    for (int j = 0; j < F; ++j)
      for (int k = 0; k < F; ++k)
        h[n * F + j] += x.data[n * F + k] * w.data[k * F + j];
  for (int n = 0; n < N; ++n)
    for (int hd = 0; hd < H; ++hd)
      for (int c = 0; c < C; ++c) {
        ssrc[n * H + hd] += h[n * F + hd * C + c] * as.data[hd * C + c];
        sdst[n * H + hd] += h[n * F + hd * C + c] * ad.data[hd * C + c];
      }
  std::vector<double> want(N * F, 0);
  for (int i = 0; i < N; ++i)
    for (int hd = 0; hd < H; ++hd) {
      std::vector<std::pair<int, double>> in;
      double m = -INFINITY;
      for (int e = 0; e < g.numEdges(); ++e)
        if (g.dst[e] == i) {
          double s = ssrc[g.src[e] * H + hd] + sdst[i * H + hd];
          // The IR constant is `0.2 : f32`: its value is 0.2 rounded to f32.
          s = s > 0 ? s : static_cast<double>(0.2f) * s;
          in.push_back({static_cast<int>(g.src[e]), s});
          m = std::max(m, s);
        }
      double z = 0;
      for (auto &p : in)
        z += std::exp(p.second - m);
      for (auto &p : in)
        for (int c = 0; c < C; ++c)
          want[i * F + hd * C + c] +=
              std::exp(p.second - m) / z * h[p.first * F + hd * C + c];
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < F; ++j)
      EXPECT_NEAR((*out)[0].data[i * F + j], want[i * F + j] + b.data[j], 1e-12);
}

} // namespace
