//===- AutodiffTest.cpp - gradients of gnn-autodiff against finite differences -===//
//
// Part of gnnc. Every op kind and every example: `@f_fwd` and `@f_bwd` built
// by gnn-autodiff, run on the float64 reference evaluator, must give the
// gradient of L(x) = sum_i <c_i, f(x)_i> (random c_i) that central finite
// differences of @f give, elementwise within
//   |fd - grad| <= 1e-6 * max(1, |grad|)        (h = 1e-6 * max(1, |x|))
// on sampled elements of every differentiable argument, on a small graph
// with a self-loop, duplicate edges, an isolated node and a node without
// outgoing edges.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"
#include "gnn/Dialect/GNN/Transforms/Autodiff.h"
#include "gnn/InitGNN.h"
#include "gnn/Reference/Evaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

using namespace mlir;
using ::gnn::HostGraph;
using ::gnn::Tensor;

namespace {

/// 7 nodes: a self-loop (2 -> 2), duplicate edges (0 -> 1 twice), node 6
/// isolated, node 5 with no outgoing edge, a hub (3) with 5 incoming edges.
HostGraph smallGraph() {
  HostGraph g;
  g.name = "small";
  g.numNodes = 7;
  g.src = {0, 0, 1, 2, 2, 4, 0, 1, 4, 5, 1, 4, 2, 0};
  g.dst = {1, 1, 2, 2, 3, 3, 3, 3, 3, 4, 5, 0, 4, 5};
  return g;
}

/// 6 sources, 4 destinations (a bipartite graph): duplicate edges (1 -> 0
/// twice), destination 3 without incoming edges, source 5 without outgoing
/// ones, destination 2 with four.
HostGraph smallBipartite() {
  HostGraph g;
  g.name = "small-bipartite";
  g.numSrc = 6;
  g.numDst = 4;
  g.numNodes = 6;
  g.src = {1, 1, 0, 2, 3, 4, 0, 2};
  g.dst = {0, 0, 1, 2, 2, 2, 2, 1};
  return g;
}

class Autodiff : public ::testing::Test {
protected:
  Autodiff() {
    DialectRegistry registry;
    ::gnn::registerGNNDialects(registry);
    mlir::gnn::registerVJPModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  MLIRContext context;
  std::string errors;

  func::FuncOp lookup(ModuleOp m, StringRef name) {
    return m.lookupSymbol<func::FuncOp>(name);
  }

  std::vector<Tensor> eval(func::FuncOp f, const HostGraph &g,
                           const std::vector<Tensor> &in) {
    FailureOr<std::vector<Tensor>> out = ::gnn::evaluateReference(f, g, in);
    EXPECT_TRUE(succeeded(out)) << "evaluating @" << f.getSymName().str()
                                << ": " << errors;
    return succeeded(out) ? *out : std::vector<Tensor>{};
  }

  /// Differentiates the first function of `source` with respect to `wrt`
  /// (argument indices; empty: every float tensor argument) and checks the
  /// gradients against central differences. Returns false when the pass
  /// fails (its diagnostics are in `errors`).
  bool check(StringRef source, std::vector<unsigned> wrt = {},
             const HostGraph &graph = smallGraph(), double tol = 1e-6,
             mlir::gnn::AutodiffOptions options = {}) {
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    if (!module) {
      ADD_FAILURE() << "cannot parse: " << errors;
      return false;
    }
    auto f = *module->getOps<func::FuncOp>().begin();
    std::string name = f.getSymName().str();
    if (wrt.empty())
      for (unsigned i = 0; i < f.getNumArguments(); ++i) {
        auto t = dyn_cast<RankedTensorType>(f.getArgument(i).getType());
        if (t && isa<FloatType>(t.getElementType()))
          wrt.push_back(i);
      }
    for (unsigned i : wrt)
      f.setArgAttr(i, mlir::gnn::kDifferentiableAttrName, UnitAttr::get(&context));
    if (failed(mlir::gnn::differentiate(f, options)))
      return false;
    func::FuncOp fwd = lookup(*module, name + "_fwd");
    func::FuncOp bwd = lookup(*module, name + "_bwd");
    EXPECT_TRUE(fwd && bwd);
    if (!fwd || !bwd)
      return false;
    // The reference evaluator reads IR its verifiers would refuse.
    EXPECT_TRUE(succeeded(mlir::verify(fwd)) && succeeded(mlir::verify(bwd)))
        << "the derived functions do not verify: " << errors;

    FailureOr<std::vector<::gnn::ArgumentSpec>> specs =
        ::gnn::resolveArguments(f, graph);
    EXPECT_TRUE(succeeded(specs)) << errors;
    if (failed(specs))
      return false;
    std::vector<Tensor> x = ::gnn::makeSeededInputs(*specs, 7);
    std::vector<unsigned> argOf; // input index -> argument index
    for (unsigned i = 0; i < specs->size(); ++i)
      if (!(*specs)[i].isGraph)
        argOf.push_back(i);
    std::vector<Tensor> y = eval(f, graph, x);
    if (y.empty())
      return false;
    // Cotangents.
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<Tensor> c;
    for (const Tensor &t : y) {
      Tensor ct(t.shape);
      // No weight on infinite outputs (the log-sum-exp of a node without
      // edges is -inf), which would make the loss NaN.
      for (size_t k = 0; k < ct.data.size(); ++k)
        ct.data[k] = std::isfinite(t.data[k]) ? u(rng) : 0.0;
      c.push_back(std::move(ct));
    }
    auto loss = [&](const std::vector<Tensor> &in) {
      std::vector<Tensor> out = eval(f, graph, in);
      double l = 0;
      for (size_t i = 0; i < out.size(); ++i)
        for (size_t k = 0; k < out[i].data.size(); ++k)
          if (c[i].data[k] != 0.0)
            l += c[i].data[k] * out[i].data[k];
      return l;
    };
    // Forward, residuals, backward.
    std::vector<Tensor> fo = eval(fwd, graph, x);
    if (fo.size() < y.size())
      return false;
    for (size_t i = 0; i < y.size(); ++i)
      EXPECT_EQ(fo[i].data, y[i].data) << "@" << name << "_fwd result " << i;
    std::vector<Tensor> bin(fo.begin() + y.size(), fo.end());
    bin.insert(bin.end(), c.begin(), c.end());
    std::vector<Tensor> grads = eval(bwd, graph, bin);
    EXPECT_EQ(grads.size(), wrt.size());
    if (grads.size() != wrt.size())
      return false;
    for (size_t w = 0; w < wrt.size(); ++w) {
      size_t input = std::find(argOf.begin(), argOf.end(), wrt[w]) - argOf.begin();
      const Tensor &g = grads[w];
      EXPECT_EQ(g.shape, x[input].shape) << "gradient of argument " << wrt[w];
      size_t n = x[input].data.size();
      size_t step = std::max<size_t>(1, n / 16);
      for (size_t k = 0; k < n; k += step) {
        std::vector<Tensor> xp = x, xm = x;
        double h = 1e-6 * std::max(1.0, std::fabs(x[input].data[k]));
        xp[input].data[k] += h;
        xm[input].data[k] -= h;
        double fd = (loss(xp) - loss(xm)) / (2 * h);
        EXPECT_NEAR(g.data[k], fd, tol * std::max(1.0, std::fabs(fd)))
            << "@" << name << ": d/d(argument " << wrt[w] << ")[" << k << "]";
      }
    }
    return true;
  }

  std::string example(StringRef name) {
    std::ifstream in(std::string(GNNC_SOURCE_DIR) + "/examples/" + name.str() +
                     ".mlir");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

//===----------------------------------------------------------------------===//
// Graph ops
//===----------------------------------------------------------------------===//

TEST_F(Autodiff, Gather) {
  for (const char *end : {"src", "dst"}) {
    std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %e = gnn.gather )mlir") + end + R"mlir( %g, %x : tensor<?x3xf32> -> tensor<?x3xf32>
  return %e : tensor<?x3xf32>
})mlir";
    EXPECT_TRUE(check(src)) << errors;
  }
}

TEST_F(Autodiff, SddmmKindsAndReversed) {
  for (const char *kind : {"add", "sub", "mul"})
    for (const char *rev : {"", " reversed"}) {
      std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %a: tensor<?x2x3xf32>, %b: tensor<?x2x3xf32>) -> tensor<?x2x3xf32> {
  %e = gnn.sddmm )mlir") + kind + " %g, %a, %b" + rev + R"mlir( : tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %e : tensor<?x2x3xf32>
})mlir";
      EXPECT_TRUE(check(src)) << kind << rev << ": " << errors;
    }
  for (const char *rev : {"", " reversed"}) {
    std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %a: tensor<?x2x3xf32>, %b: tensor<?x2x3xf32>) -> tensor<?x2xf32> {
  %e = gnn.sddmm dot %g, %a, %b)mlir") + rev + R"mlir( : tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2xf32>
  return %e : tensor<?x2xf32>
})mlir";
    EXPECT_TRUE(check(src)) << "dot" << rev << ": " << errors;
  }
}

TEST_F(Autodiff, EdgeSoftmaxAndLogSumExp) {
  for (const char *rev : {"", " reversed"}) {
    std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %s: tensor<?x2xf32> {gnn.domain = "edge"}) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %a, %l = gnn.edge_softmax %g, %s)mlir") + rev + R"mlir( : tensor<?x2xf32>, tensor<?x2xf32>
  return %a, %l : tensor<?x2xf32>, tensor<?x2xf32>
})mlir";
    EXPECT_TRUE(check(src)) << rev << ": " << errors;
  }
}

// Attention's weights weighting a max/min: the backward compares each
// edge's value, made again, with the stored extremum, so the weights must be
// the forward's own (made again as exp(s - lse), no edge won: the gradient
// was wrong). Directly, and through an edge-valued map.
TEST_F(Autodiff, EdgeSoftmaxWeightingMaxOrMin) {
  for (const char *red : {"max", "min"})
    for (bool scaled : {false, true}) {
      std::string scale =
          scaled ? R"mlir(
  %c = arith.constant 1.5 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, h) -> (i, h)>, affine_map<(i, h) -> (i, h)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x2xf32>) outs(%e : tensor<?x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x2xf32>)mlir"
                 : "";
      std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2x3xf32>, %s: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x3xf32> {
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>)mlir") +
                        scale + R"mlir(
  %y = gnn.spmm )mlir" + red + " %g, %x weights(" + (scaled ? "%w" : "%a") +
                        R"mlir( : tensor<?x2xf32>) : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %y : tensor<?x2x3xf32>
})mlir";
      EXPECT_TRUE(check(src)) << red << (scaled ? " scaled" : "") << ": "
                              << errors;
    }
}

TEST_F(Autodiff, SpmmReductionsWeightsAndReversed) {
  for (const char *red : {"sum", "mean", "max", "min"})
    for (const char *rev : {"", " reversed"}) {
      std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = gnn.spmm )mlir") + red + " %g, %x" + rev + R"mlir( : tensor<?x3xf32> -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
})mlir";
      EXPECT_TRUE(check(src)) << red << rev << ": " << errors;
    }
  for (const char *red : {"sum", "mean", "max", "min"})
    for (const char *rev : {"", " reversed"}) {
      std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x2x3xf32>, %w: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x3xf32> {
  %y = gnn.spmm )mlir") + red + " %g, %x weights(%w : tensor<?x2xf32>)" + rev +
                        R"mlir( : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %y : tensor<?x2x3xf32>
})mlir";
      EXPECT_TRUE(check(src)) << red << " weighted" << rev << ": " << errors;
    }
}

TEST_F(Autodiff, BipartiteGraphOps) {
  // Every graph op on a bipartite graph, each operand on its side: the
  // gradients come back with the rows of their arguments' sides.
  const char *kPrefix = R"mlir(
func.func @f(%g: !gnn.graph<bipartite>, %s: tensor<?x2x3xf32> {gnn.domain = "src"},
             %d: tensor<?x2x3xf32> {gnn.domain = "dst"}) -> )mlir";
  for (const char *red : {"sum", "mean", "max", "min"}) {
    std::string src = std::string(kPrefix) + R"mlir((tensor<?x2x3xf32>, tensor<?x2x3xf32>) {
  %y = gnn.spmm )mlir" + red + R"mlir( %g, %s : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %z = gnn.spmm )mlir" + red + R"mlir( %g, %d reversed : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %y, %z : tensor<?x2x3xf32>, tensor<?x2x3xf32>
})mlir";
    EXPECT_TRUE(check(src, {}, smallBipartite())) << red << ": " << errors;
  }
  for (const char *kind : {"add", "mul"})
    for (bool rev : {false, true}) {
      // Reversed, lhs is read at the destinations and rhs at the sources.
      std::string ops = rev ? "%d, %s reversed" : "%s, %d";
      std::string src = std::string(kPrefix) + R"mlir((tensor<?x2x3xf32>, tensor<?x2x3xf32>) {
  %e = gnn.sddmm )mlir" + kind + " %g, " + ops + R"mlir( : !gnn.graph<bipartite>, tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %a = gnn.reduce sum %g, %e : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %b = gnn.reduce max %g, %e reversed : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %a, %b : tensor<?x2x3xf32>, tensor<?x2x3xf32>
})mlir";
      EXPECT_TRUE(check(src, {}, smallBipartite())) << kind << rev << ": " << errors;
    }
  // Attention: scores of source and destination rows, softmax over each
  // destination's edges, the weighted sum of source rows.
  std::string attention = std::string(kPrefix) + R"mlir((tensor<?x2x3xf32>, tensor<?x2xf32>) {
  %e = gnn.sddmm dot %g, %s, %d : !gnn.graph<bipartite>, tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2xf32>
  %a, %l = gnn.edge_softmax %g, %e : !gnn.graph<bipartite>, tensor<?x2xf32>, tensor<?x2xf32>
  %y = gnn.spmm sum %g, %s weights(%a : tensor<?x2xf32>) : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %x = gnn.gather dst %g, %d : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %r = gnn.reduce mean %g, %x reversed : !gnn.graph<bipartite>, tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  return %y, %l : tensor<?x2x3xf32>, tensor<?x2xf32>
})mlir";
  EXPECT_TRUE(check(attention, {}, smallBipartite())) << errors;
}

TEST_F(Autodiff, TypedGatherAndReduce) {
  // RGCN's pass: each edge reads its (source, relation) row, scaled by an
  // edge weight, summed into the destination; and a relation reduce whose
  // gradient is a relation gather at the destinations. Relations of the
  // eight edges: 2 0 1 2 2 0 1 2 (the duplicate edge 1 -> 0 in two).
  const char *src = R"mlir(
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @f(%g: !gnn.graph<bipartite, typed>, %h: tensor<?x3x2xf32> {gnn.domain = "src"},
             %w: tensor<?xf32> {gnn.domain = "edge"}, %d: tensor<?x3x2xf32> {gnn.domain = "dst"})
    -> (tensor<?x2xf32>, tensor<?x3x2xf32>) {
  %c0 = arith.constant 0 : index
  %m = gnn.gather src %g, %h relation : !gnn.graph<bipartite, typed>, tensor<?x3x2xf32> -> tensor<?x2xf32>
  %ne = tensor.dim %m, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%ne) : tensor<?x2xf32>
  %msg = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %w : tensor<?x2xf32>, tensor<?xf32>) outs(%e : tensor<?x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<?x2xf32>
  %out = gnn.reduce sum %g, %msg : !gnn.graph<bipartite, typed>, tensor<?x2xf32> -> tensor<?x2xf32>
  %k = gnn.gather dst %g, %d relation : !gnn.graph<bipartite, typed>, tensor<?x3x2xf32> -> tensor<?x2xf32>
  %t = gnn.reduce sum %g, %k reversed relation : !gnn.graph<bipartite, typed>, tensor<?x2xf32> -> tensor<?x3x2xf32>
  return %out, %t : tensor<?x2xf32>, tensor<?x3x2xf32>
})mlir";
  HostGraph g = smallBipartite();
  g.edgeTypes = {2, 0, 1, 2, 2, 0, 1, 2};
  EXPECT_TRUE(check(src, {}, g)) << errors;
}

TEST_F(Autodiff, BipartiteSage) {
  // PyG's bipartite SAGEConv: mean of the sources' projected rows, the
  // destinations' own rows through W_r, a bias.
  const char *src = R"mlir(
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
func.func @f(%g: !gnn.graph<bipartite>, %x: tensor<?x4xf32> {gnn.domain = "src"},
             %xd: tensor<?x4xf32> {gnn.domain = "dst"},
             %wl: tensor<4x3xf32>, %bl: tensor<3xf32>, %wr: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  %ns = tensor.dim %x, %c0 : tensor<?x4xf32>
  %nd = tensor.dim %xd, %c0 : tensor<?x4xf32>
  %es = tensor.empty(%ns) : tensor<?x3xf32>
  %as = linalg.fill ins(%cst : f32) outs(%es : tensor<?x3xf32>) -> tensor<?x3xf32>
  %ed = tensor.empty(%nd) : tensor<?x3xf32>
  %ad = linalg.fill ins(%cst : f32) outs(%ed : tensor<?x3xf32>) -> tensor<?x3xf32>
  %hl = linalg.matmul ins(%x, %wl : tensor<?x4xf32>, tensor<4x3xf32>) outs(%as : tensor<?x3xf32>) -> tensor<?x3xf32>
  %hr = linalg.matmul ins(%xd, %wr : tensor<?x4xf32>, tensor<4x3xf32>) outs(%ad : tensor<?x3xf32>) -> tensor<?x3xf32>
  %agg = gnn.spmm mean %g, %hl : !gnn.graph<bipartite>, tensor<?x3xf32> -> tensor<?x3xf32>
  %1 = tensor.empty(%nd) : tensor<?x3xf32>
  %out = linalg.generic {indexing_maps = [#map, #map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%agg, %hr, %bl : tensor<?x3xf32>, tensor<?x3xf32>, tensor<3xf32>) outs(%1 : tensor<?x3xf32>) {
  ^bb0(%a: f32, %r: f32, %b: f32, %o: f32):
    %2 = arith.addf %a, %b : f32
    %3 = arith.addf %2, %r : f32
    linalg.yield %3 : f32
  } -> tensor<?x3xf32>
  return %out : tensor<?x3xf32>
})mlir";
  EXPECT_TRUE(check(src, {}, smallBipartite())) << errors;
  // The same function on a graph of one node set (both sides one set).
  EXPECT_TRUE(check(src, {}, smallGraph())) << errors;
}

TEST_F(Autodiff, BipartiteLayers) {
  // The bipartite layers the CUDA integration runs (GAT, a GCN-style
  // propagation with both sides' degrees, SAGE max and mean).
  for (const char *name : {"gat", "gcn", "sage_max", "sage_mean"}) {
    std::ifstream in(std::string(GNNC_SOURCE_DIR) +
                     "/test/Integration/Inputs/bipartite/" + name + ".mlir");
    std::stringstream ss;
    ss << in.rdbuf();
    ASSERT_FALSE(ss.str().empty()) << name;
    EXPECT_TRUE(check(ss.str(), {}, smallBipartite())) << name << ": " << errors;
  }
}

TEST_F(Autodiff, ReduceAndDegree) {
  for (const char *red : {"sum", "mean", "max", "min"})
    for (const char *rev : {"", " reversed"}) {
      std::string src = std::string(R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%g: !gnn.graph, %v: tensor<?x3xf32> {gnn.domain = "edge"}) -> tensor<?x3xf32> {
  %r = gnn.reduce )mlir") + red + " %g, %v" + rev + R"mlir( : tensor<?x3xf32> -> tensor<?x3xf32>
  %d = gnn.degree %g : tensor<?xf32>
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %d : tensor<?x3xf32>, tensor<?xf32>) outs(%r : tensor<?x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x3xf32>
  return %o : tensor<?x3xf32>
})mlir";
      EXPECT_TRUE(check(src)) << red << rev << ": " << errors;
    }
}

//===----------------------------------------------------------------------===//
// Dense ops
//===----------------------------------------------------------------------===//

TEST_F(Autodiff, MatmulBroadcastReductionAndReshapes) {
  const char *src = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#one = affine_map<(d0, d1) -> (0)>
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x6xf32>, %w: tensor<6x6xf32>, %b: tensor<6xf32>,
             %s: tensor<1xf32>, %att: tensor<2x3xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %e = tensor.empty(%n) : tensor<?x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x6xf32>) -> tensor<?x6xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x6xf32>, tensor<6x6xf32>) outs(%acc : tensor<?x6xf32>) -> tensor<?x6xf32>
  %t = linalg.generic {indexing_maps = [#id, #col, #one, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b, %s : tensor<?x6xf32>, tensor<6xf32>, tensor<1xf32>) outs(%e : tensor<?x6xf32>) {
  ^bb0(%v: f32, %bias: f32, %sc: f32, %o: f32):
    %p = arith.addf %v, %bias : f32
    %q = arith.mulf %p, %sc : f32
    %r = math.tanh %q : f32
    %d = arith.divf %r, %sc : f32
    %m = arith.maximumf %d, %zero : f32
    %z = arith.subf %m, %q : f32
    %ex = math.exp %z : f32
    linalg.yield %ex : f32
  } -> tensor<?x6xf32>
  %t3 = tensor.expand_shape %t [[0], [1, 2]] output_shape [%n, 2, 3] : tensor<?x6xf32> into tensor<?x2x3xf32>
  %se = tensor.empty(%n) : tensor<?x2xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<?x2xf32>) -> tensor<?x2xf32>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t3, %att : tensor<?x2x3xf32>, tensor<2x3xf32>) outs(%sz : tensor<?x2xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m = arith.mulf %v, %a : f32
    %l = math.log1p %m : f32
    %s2 = arith.addf %o, %l : f32
    linalg.yield %s2 : f32
  } -> tensor<?x2xf32>
  return %score : tensor<?x2xf32>
})mlir";
  EXPECT_TRUE(check(src)) << errors;
}

TEST_F(Autodiff, ScalarUsedTwice) {
  // A 0-d parameter read by two generics: its two gradients are summed
  // through a generic over 0-d tensors (it crashed: a null indexing map).
  const char *src = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func @f(%g: !gnn.graph, %x: tensor<?x4xf32>, %p: tensor<f32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %m = linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<?x4xf32>, tensor<f32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%v: f32, %q: f32, %o: f32):
    %r = arith.mulf %v, %q : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %a = gnn.spmm sum %g, %m : tensor<?x4xf32> -> tensor<?x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %p : tensor<?x4xf32>, tensor<f32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%v: f32, %q: f32, %o: f32):
    %r = arith.mulf %v, %q : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
})mlir";
  EXPECT_TRUE(check(src)) << errors;
}

TEST_F(Autodiff, OnlyMarkedArgumentsAndUnreachedZero) {
  // Only %x is differentiated; %unused gets a zero gradient.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>, %w: tensor<?x3xf32>, %unused: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %a = gnn.sddmm mul %g, %x, %w : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  %y = gnn.reduce sum %g, %a : tensor<?x3xf32> -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
})mlir";
  EXPECT_TRUE(check(src, {1, 3})) << errors;
}

TEST_F(Autodiff, OpWithoutRuleIsADiagnostic) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  return %t : tensor<3x4xf32>
})mlir";
  EXPECT_FALSE(check(src));
  EXPECT_NE(errors.find("'linalg.transpose' op has no derivative rule"),
            std::string::npos)
      << errors;
}

TEST_F(Autodiff, WeightedExtremaOnRankTwoFeatures) {
  for (const char *red : {"max", "min"}) {
    std::string src = std::string(R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>, %w: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x3xf32> {
  %y = gnn.spmm )mlir") + red + R"mlir( %g, %x weights(%w : tensor<?xf32>) : tensor<?x3xf32> -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
})mlir";
    EXPECT_TRUE(check(src)) << red << ": " << errors;
  }
}


//===----------------------------------------------------------------------===//
// Cases a review found (each crashed, produced invalid IR or an unusable
// backward before its fix)
//===----------------------------------------------------------------------===//

TEST_F(Autodiff, InactiveSoftmaxWeights) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %s: tensor<?x2xf32> {gnn.domain = "edge"}, %x: tensor<?x2x4xf32> {gnn.differentiable}) -> tensor<?x2x4xf32> {
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  %y = gnn.spmm sum %g, %x weights(%a : tensor<?x2xf32>) : tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  return %y : tensor<?x2x4xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {2})) << errors;
}

TEST_F(Autodiff, ScalarsReadByBodies) {
  const char *src = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8.0 : f32
  %sq = math.sqrt %c8 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %a, %sq : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }  -> tensor<?x8xf32>
  %z = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
  return %z : tensor<?x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {})) << errors;
}

TEST_F(Autodiff, SizeReadAsAScalar) {
  const char *src = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f32
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %nf : f32
    %t = math.tanh %m : f32
    linalg.yield %t : f32
  }  -> tensor<?x8xf32>
  %t = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
  return %t : tensor<?x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {})) << errors;
}

TEST_F(Autodiff, LoopSizedOnlyByADeadInput) {
  const char *src = R"mlir(
#a = affine_map<(d0, d1) -> (d0, 0)>
#b = affine_map<(d0, d1) -> (d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x1xf32> {gnn.differentiable}, %c: tensor<5xf32>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x1xf32>
  %e = tensor.empty(%n) : tensor<?x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x1xf32>) -> tensor<?x1xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #a], iterator_types = ["parallel", "reduction"]} ins(%x, %c : tensor<?x1xf32>, tensor<5xf32>) outs(%f : tensor<?x1xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.addf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }  -> tensor<?x1xf32>
  %t = gnn.spmm sum %g, %y : tensor<?x1xf32> -> tensor<?x1xf32>
  return %t : tensor<?x1xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {1})) << errors;
}

TEST_F(Autodiff, PerNodeScale) {
  const char *src = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (d0, 0)>
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}, %n1: tensor<?x1xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %n1 : tensor<?x8xf32>, tensor<?x1xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  }  -> tensor<?x8xf32>
  %t = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
  return %t : tensor<?x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {})) << errors;
}

TEST_F(Autodiff, TransposedWeight) {
  const char *src = R"mlir(
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr = affine_map<(d0, d1, d2) -> (d2, d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x4x8xf32> {gnn.differentiable}, %w: tensor<8x4xf32> {gnn.differentiable}) -> tensor<?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %w : tensor<?x4x8xf32>, tensor<8x4xf32>) outs(%e : tensor<?x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    linalg.yield %s : f32
  }  -> tensor<?x4x8xf32>
  %z = gnn.spmm sum %g, %y : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return %z : tensor<?x4x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {})) << errors;
}

TEST_F(Autodiff, StaticNodeRows) {
  // Node tensors whose leading size is static (7: smallGraph's nodes) reach
  // @f_bwd declared as node tensors, and the sizes the backward reads from
  // them are constants it makes itself.
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<7x8xf32> {gnn.domain = "node"}) -> tensor<7x8xf32> {
  %y = gnn.spmm mean %g, %x : tensor<7x8xf32> -> tensor<7x8xf32>
  %m = gnn.spmm max %g, %y : tensor<7x8xf32> -> tensor<7x8xf32>
  %s = gnn.sddmm dot %g, %m, %x : tensor<7x8xf32>, tensor<7x8xf32> -> tensor<?xf32>
  %w = gnn.edge_softmax %g, %s : tensor<?xf32>
  %o = gnn.spmm sum %g, %m weights(%w : tensor<?xf32>) : tensor<7x8xf32> -> tensor<7x8xf32>
  return %o : tensor<7x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src)) << errors;
}

TEST_F(Autodiff, StaticNodeResult) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<7x8xf32> {
  %y = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<7x8xf32>
  return %y : tensor<7x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src)) << errors;
}

TEST_F(Autodiff, StaticBipartiteSides) {
  const char *src = R"mlir(
func.func @f(%g: !gnn.graph<bipartite>, %x: tensor<6x8xf32> {gnn.domain = "src"}, %h: tensor<4x8xf32> {gnn.domain = "dst"}) -> tensor<4x8xf32> {
  %y = gnn.spmm mean %g, %x : !gnn.graph<bipartite>, tensor<6x8xf32> -> tensor<4x8xf32>
  %s = gnn.sddmm dot %g, %x, %h : !gnn.graph<bipartite>, tensor<6x8xf32>, tensor<4x8xf32> -> tensor<?xf32>
  %w = gnn.edge_softmax %g, %s : !gnn.graph<bipartite>, tensor<?xf32>
  %a = gnn.spmm sum %g, %x weights(%w : tensor<?xf32>) : !gnn.graph<bipartite>, tensor<6x8xf32> -> tensor<4x8xf32>
  %e = gnn.gather dst %g, %y : !gnn.graph<bipartite>, tensor<4x8xf32> -> tensor<?x8xf32>
  %r = gnn.reduce max %g, %e : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<4x8xf32>
  %o = gnn.sddmm add %g, %x, %r : !gnn.graph<bipartite>, tensor<6x8xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  %z = gnn.reduce sum %g, %o : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
)mlir";
  EXPECT_TRUE(check(src, {}, smallBipartite())) << errors;
}

//===----------------------------------------------------------------------===//
// Examples
//===----------------------------------------------------------------------===//

class AutodiffExample : public Autodiff,
                        public ::testing::WithParamInterface<const char *> {};

TEST_P(AutodiffExample, MatchesFiniteDifferences) {
  EXPECT_TRUE(check(example(GetParam()))) << errors;
}

TEST_P(AutodiffExample, StoringEdgeValuesMatchesToo) {
  mlir::gnn::AutodiffOptions store;
  store.storeEdgeValues = true;
  EXPECT_TRUE(check(example(GetParam()), {}, smallGraph(), 1e-6, store))
      << errors;
}

INSTANTIATE_TEST_SUITE_P(Examples, AutodiffExample,
                         ::testing::Values("gcn", "sage_mean", "sage_max",
                                           "gin", "gat", "gatv2",
                                           "transformer", "agnn"));

} // namespace
