//===- ProgramTest.cpp - Program text form and formulas -------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Program.h"
#include "ProgramBuilders.h"
#include "gnn/Runtime/MemoryPlan.h"

#include <gtest/gtest.h>

using namespace gnn::runtime;

namespace {

/// A Program with every step and argument kind.
Program sample() {
  Program p;
  p.name = "sample";
  p.units = {{{"k"}, "extern \"C\" __global__ void k(float *y, int n) {}\n"}};
  p.kernels = {"k"};
  p.options = {"-DX=1"};
  auto f = [](const char *t) { return *Formula::parse(t); };
  p.buffers = {{"x", BufferRole::Input, DType::F32, f("nodes * 64"),
                BufferUse::Argument, 1},
               {"w", BufferRole::Input, DType::F32, f("64 * 16"),
                BufferUse::Argument, 2},
               {"e", BufferRole::Input, DType::F32, f("edges")},
               {"h", BufferRole::Temp, DType::F32, f("nodes*64")},
               {"idx", BufferRole::Temp, DType::I64, f("edges + 1")},
               {"y", BufferRole::Output, DType::F32, f("nodes*16"),
                BufferUse::Result, 0}};
  using namespace test;
  LaunchStep l = launch("k", "ceil_div(nodes * 64, 256)", 256);
  KernelArg real;
  real.kind = KernelArg::Kind::F32;
  real.real = 0.125f;
  l.args = {named(KernelArg::Kind::Buffer, "h"),
            named(KernelArg::Kind::Graph, "csr_row_ptr"),
            integer(KernelArg::Kind::I32, "nodes*64"),
            integer(KernelArg::Kind::I64, "max(edges, 1)"), real};
  p.steps.push_back(FillStep{"idx", 0});
  p.steps.push_back(SpmmStep{"x", "h", "e", f("64"), 1.0f, 0.0f});
  p.steps.push_back(l);
  p.steps.push_back(GemmStep{"h", "w", "y", f("nodes"), f("16"), f("64"), false,
                             true, 1.0f, 0.5f});
  p.steps.push_back(CopyStep{"x", "h", f("nodes*64")});
  return p;
}

TEST(Program, TextRoundTrips) {
  std::string text = sample().toJson();
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->toJson(), text);
  EXPECT_EQ(parsed->steps.size(), 5u);
  auto *l = std::get_if<LaunchStep>(&parsed->steps[2]);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->args[4].real, 0.125f);
  EXPECT_EQ(l->grid[0].text(), "ceil_div(nodes * 64, 256)");
  auto *g = std::get_if<GemmStep>(&parsed->steps[3]);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->transB);
  EXPECT_EQ(g->beta, 0.5f);
  // What the caller's buffers hold round-trips; a buffer without a use
  // (here an input bound by name only) prints none.
  EXPECT_EQ(parsed->buffers[1].use, BufferUse::Argument);
  EXPECT_EQ(parsed->buffers[1].index, 2);
  EXPECT_EQ(parsed->buffers[2].use, BufferUse::None);
  EXPECT_EQ(parsed->buffers[2].index, -1);
  EXPECT_EQ(parsed->buffers[5].use, BufferUse::Result);
  EXPECT_EQ(parsed->buffers[5].index, 0);
  EXPECT_NE(text.find("\"size\": \"nodes*16\",\n      \"use\": \"result\",\n"
                      "      \"index\": 0"),
            std::string::npos)
      << text;
  Program every = sample();
  int64_t k = 0;
  for (BufferUse use :
       {BufferUse::Argument, BufferUse::Result, BufferUse::Residual,
        BufferUse::OutputGradient, BufferUse::Gradient}) {
    bool given = use == BufferUse::Argument || use == BufferUse::OutputGradient;
    every.buffers.push_back({"b" + std::to_string(k),
                             given ? BufferRole::Input : BufferRole::Output,
                             DType::F32, Formula::nodes(), use, 7});
    ++k;
  }
  StatusOr<Program> back = Program::parse(every.toJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->toJson(), every.toJson());
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(back->buffers[6 + i].use, every.buffers[6 + i].use);
}

/// The most nodes per graph of block-per-graph kernels round-trips, is
/// written only when set, and must be a nonnegative integer.
TEST(Program, MaxGraphNodes) {
  Program p = sample();
  EXPECT_EQ(p.toJson().find("max_graph_nodes"), std::string::npos);
  p.maxGraphNodes = 16;
  StatusOr<Program> back = Program::parse(p.toJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->maxGraphNodes, 16);
  EXPECT_EQ(back->toJson(), p.toJson());
  for (const char *bad : {"-1", "\"16\"", "1.5"}) {
    std::string text = p.toJson();
    std::string from = "\"max_graph_nodes\": 16";
    text.replace(text.find(from), from.size(),
                 std::string("\"max_graph_nodes\": ") + bad);
    StatusOr<Program> q = Program::parse(text);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_NE(q.message().find("program.max_graph_nodes: expected a "
                               "nonnegative integer"),
              std::string::npos)
        << q.message();
  }
}

TEST(Program, FixedCounts) {
  Program p = sample();
  EXPECT_EQ(p.toJson().find("fixed_counts"), std::string::npos);
  p.fixedCounts = {{"node", 7}, {"edge", 30}};
  StatusOr<Program> back = Program::parse(p.toJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->fixedCounts, p.fixedCounts);
  EXPECT_EQ(back->toJson(), p.toJson());
  for (auto [bad, needle] :
       {std::pair<const char *, const char *>{
            "{\"nodes\": 7}", "expected node, edge, src or dst but got 'nodes'"},
        {"{\"node\": -7}", "program.fixed_counts.node: expected a nonnegative"},
        {"{\"node\": \"7\"}", "program.fixed_counts.node: expected a nonnegative"},
        {"[7]", "program.fixed_counts: expected an object"}}) {
    std::string text = p.toJson();
    size_t at = text.find("\"fixed_counts\": ");
    ASSERT_NE(at, std::string::npos);
    size_t end = text.find('}', at);
    text.replace(at, end + 1 - at, std::string("\"fixed_counts\": ") + bad);
    StatusOr<Program> q = Program::parse(text);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_NE(q.message().find(needle), std::string::npos) << q.message();
  }
}

/// Parses `text` (a sample with one replacement) and expects an error
/// containing `needle`.
void expectError(const std::string &from, const std::string &to,
                 const std::string &needle) {
  std::string text = sample().toJson();
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  StatusOr<Program> p = Program::parse(text);
  ASSERT_FALSE(p.ok()) << "accepted: " << to;
  EXPECT_NE(p.message().find(needle), std::string::npos) << p.message();
}

TEST(Program, ParseErrorsNameThePlace) {
  expectError("\"format\": \"gnnc-program\"", "\"format\": \"other\"",
              "program.format: expected 'gnnc-program'");
  expectError("\"version\": 1", "\"version\": 2", "program.version: expected 1");
  expectError("\"size\": \"nodes * 64\"", "\"size\": \"nodes ** 64\"",
              "program.buffers[0].size: in formula 'nodes ** 64' at offset 7");
  expectError("\"size\": \"64 * 16\"", "\"size\": \"64 * rows\"",
              "unknown name 'rows'");
  expectError("\"role\": \"temp\"", "\"role\": \"scratch\"",
              "program.buffers[3].role: expected input, output or temp");
  expectError("\"use\": \"result\"", "\"use\": \"output\"",
              "program.buffers[5].use: expected argument, result, residual, "
              "output_gradient or gradient but got 'output'");
  expectError("\"index\": 0", "\"index\": \"0\"",
              "program.buffers[5].index: expected an integer beside 'use'");
  expectError("\"index\": 0", "\"index\": -2", "buffer 'y' holds result -2");
  expectError("\"index\": 1", "\"index\": 2",
              "buffer 'w' holds argument 2, which another buffer holds too");
  expectError("\"use\": \"result\"", "\"use\": \"argument\"",
              "buffer 'y' is output but its use, argument, is input");
  expectError("\"size\": \"edges + 1\"",
              "\"size\": \"edges + 1\", \"index\": 3",
              "program.buffers[4]: missing 'use'");
  expectError("\"op\": \"fill\"", "\"op\": \"zero\"", "unknown step 'zero'");
  expectError("\"kernel\": \"k\"", "\"kernel\": \"missing\"",
              "step 2: kernel 'missing' is not in the program's kernel list");
  expectError("\"input\": \"x\"", "\"input\": \"nothing\"",
              "step 1: unknown spmm input buffer 'nothing'");
  expectError("\"graph\": \"csr_row_ptr\"", "\"graph\": \"csr_rows\"",
              "unknown graph array 'csr_rows'");
  expectError("\"block\": [\n        256,", "\"block\": [\n        2048,",
              "program.steps[2].block[0]: expected an integer in [1, 1024]");
  expectError("\"trans_b\": true", "\"trans_b\": \"yes\"",
              "program.steps[3].trans_b: expected true or false");
  expectError("\"op\": \"copy\",", "\"op\": \"copy\", \"bytes\": 4,",
              "program.steps[4]: unknown key 'bytes'");
  // A float field beyond float's range would print back as null.
  expectError("\"alpha\": 1.0", "\"alpha\": 1e39",
              "program.steps[1].alpha: expected a number within the range of "
              "float");
  expectError("\"f32\": 0.125", "\"f32\": -1e39",
              "program.steps[2].args[4].f32: expected a number within the "
              "range of float");
  StatusOr<Program> p = Program::parse("[1, 2]");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.message().find("program: expected an object"), std::string::npos);
  p = Program::parse("{ not json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.message().find("program is not valid JSON"), std::string::npos);
}

/// dW = Xᵀ dY with the row split: an f64 temp of partial sums per slice.
Program rowSplit() {
  auto f = [](const char *t) { return *Formula::parse(t); };
  Program p;
  p.name = "weight_grad";
  p.buffers = {
      {"x", BufferRole::Input, DType::F32, f("nodes * 16")},
      {"dy", BufferRole::Input, DType::F32, f("nodes * 8")},
      {"p", BufferRole::Temp, DType::F64,
       f("max(min(ceil_div(nodes, 256), 1024), 1) * 128")},
      {"dw", BufferRole::Output, DType::F32, f("128")}};
  GemmStep g{"x", "dy", "dw", f("16"), f("8"), f("nodes"), true, false, 1.0f,
             0.0f};
  g.partials = "p";
  g.chunks = f("max(min(ceil_div(nodes, 256), 1024), 1)");
  p.steps.push_back(g);
  return p;
}

TEST(Program, SourceUnitsRoundTripAndDefineEachKernelOnce) {
  Program p = sample();
  p.prelude = "typedef int idx_t;\n";
  p.units = {{{"k"}, "extern \"C\" __global__ void k(float *y, int n) {}\n"},
             {{"unused_a", "unused_b"}, "// two kernels no step launches\n"}};
  std::string text = p.toJson();
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->toJson(), text);
  ASSERT_EQ(parsed->units.size(), 2u);
  EXPECT_EQ(parsed->units[1].kernels,
            (std::vector<std::string>{"unused_a", "unused_b"}));
  EXPECT_EQ(parsed->unitSource(0), p.prelude + p.units[0].text);
  EXPECT_EQ(parsed->source(), p.prelude + p.units[0].text + p.units[1].text);

  Program twice = p;
  twice.units[1].kernels.push_back("k");
  EXPECT_EQ(twice.verify().message(), "kernel 'k' is defined by units 0 and 1");
  Program listedTwice = p;
  listedTwice.units[1].kernels.push_back("unused_a");
  EXPECT_EQ(listedTwice.verify().message(),
            "unit 1 lists kernel 'unused_a' twice");
  Program none = p;
  none.units.erase(none.units.begin());
  EXPECT_EQ(none.verify().message(), "kernel 'k' is defined by no source unit");

  // `units` replaced by `tail`.
  auto withUnits = [&](const std::string &tail) {
    return Program::parse(text.substr(0, text.find("\"units\"")) + tail);
  };
  EXPECT_EQ(withUnits("\"units\": 3}").message(),
            "program.units: expected an array");
  EXPECT_EQ(withUnits("\"units\": [{\"kernels\": [\"k\"], \"y\": 1}]}")
                .message(),
            "program.units[0]: unknown key 'y'");
  EXPECT_EQ(withUnits("\"units\": [{\"kernels\": [1], \"text\": \"\"}]}")
                .message(),
            "program.units[0].kernels: expected strings");
  EXPECT_EQ(withUnits("\"units\": [], \"source\": \"\"}").message(),
            "program: expected either 'source' or 'prelude' and 'units' but "
            "got both");
}

TEST(Program, SingleSourceFormIsOneUnit) {
  // A Program written before source units: "source" is one unit defining
  // every kernel, and prints back in units.
  std::string text = sample().toJson();
  size_t at = text.find("\"prelude\"");
  ASSERT_NE(at, std::string::npos);
  text = text.substr(0, at) + "\"source\": \"extern \\\"C\\\" __global__ void k() {}\"\n}\n";
  StatusOr<Program> p = Program::parse(text);
  ASSERT_TRUE(p.ok()) << p.message() << "\n" << text;
  ASSERT_EQ(p->units.size(), 1u);
  EXPECT_EQ(p->units[0].kernels, std::vector<std::string>{"k"});
  EXPECT_EQ(p->units[0].text, "extern \"C\" __global__ void k() {}");
  EXPECT_TRUE(p->prelude.empty());
  StatusOr<Program> again = Program::parse(p->toJson());
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->toJson(), p->toJson());
}

TEST(Program, GemmRowSplitRoundTripsAndIsChecked) {
  std::string text = rowSplit().toJson();
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->toJson(), text);
  auto *g = std::get_if<GemmStep>(&parsed->steps[0]);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->partials, "p");
  EXPECT_EQ(*g->chunks.evaluate(FormulaScope{1000000}), 1024);
  EXPECT_EQ(*g->chunks.evaluate(FormulaScope{300}), 2);
  EXPECT_EQ(*g->chunks.evaluate(FormulaScope{0}), 1);
  // The partials live through the step in the workspace.
  StatusOr<MemoryPlan> plan = planMemory(*parsed, FormulaScope{1000});
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_GE(plan->arenaBytes, 4u * 128 * 8);
  // Both keys or neither.
  size_t at = text.find(",\n      \"chunks\"");
  ASSERT_NE(at, std::string::npos);
  StatusOr<Program> half =
      Program::parse(text.substr(0, at) + text.substr(text.find('\n', at + 2)));
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.message().find("chunks"), std::string::npos) << half.message();
  // Only for Aᵀ B of f32 matrices, into an f64 temp.
  for (int bad = 0; bad < 3; ++bad) {
    Program p = rowSplit();
    auto &s = std::get<GemmStep>(p.steps[0]);
    if (bad == 0)
      p.buffers[2].dtype = DType::F32;
    if (bad == 1)
      s.transA = false;
    if (bad == 2)
      s.transB = true;
    Status st = p.verify();
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("a gemm's row split (partials 'p', f64) is "
                                "for Aᵀ B of f32 matrices only"),
              std::string::npos)
        << st.message();
  }
}

/// The row split's column sums of A (a bias gradient beside its weight's):
/// round-trip as "row_sums", live through the step, and only with the row
/// split, into a known f32 buffer.
TEST(Program, GemmRowSumsRoundTripAndAreChecked) {
  auto f = [](const char *t) { return *Formula::parse(t); };
  Program p = rowSplit();
  p.buffers.push_back({"db", BufferRole::Output, DType::F32, f("16")});
  p.buffers[2].size = f("max(min(ceil_div(nodes, 256), 1024), 1) * 144");
  std::get<GemmStep>(p.steps[0]).rowSums = "db";
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  std::string text = p.toJson();
  EXPECT_NE(text.find("\"row_sums\": \"db\""), std::string::npos) << text;
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->toJson(), text);
  EXPECT_EQ(std::get<GemmStep>(parsed->steps[0]).rowSums, "db");
  StatusOr<MemoryPlan> plan = planMemory(*parsed, FormulaScope{1000});
  ASSERT_TRUE(plan.ok()) << plan.message();
  for (int bad = 0; bad < 3; ++bad) {
    Program q = p;
    auto &s = std::get<GemmStep>(q.steps[0]);
    if (bad == 0) {
      s.partials.clear(); // cuBLAS: no row sums
      s.chunks = Formula();
    }
    if (bad == 1)
      q.buffers.back().dtype = DType::F64;
    if (bad == 2)
      s.rowSums = "nowhere";
    Status st = q.verify();
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find(bad == 2 ? "unknown gemm row sums buffer 'nowhere'"
                                : bad == 1 ? "gemm row sums buffer 'db'"
                                           : "a gemm's row sums ('db', f32) come "
                                             "only with its row split"),
              std::string::npos)
        << bad << ": " << st.message();
  }
}

/// A gemm's ReLU in its bias epilogue: round-trips as "relu" (written only
/// where set) and comes only with a bias.
TEST(Program, GemmReluRoundTripsAndNeedsABias) {
  auto f = [](const char *t) { return *Formula::parse(t); };
  Program p;
  p.name = "mlp";
  p.buffers = {{"x", BufferRole::Input, DType::F32, f("nodes * 16")},
               {"w", BufferRole::Input, DType::F32, f("128")},
               {"b", BufferRole::Input, DType::F32, f("8")},
               {"y", BufferRole::Output, DType::F32, f("nodes * 8")}};
  GemmStep g{"x", "w", "y", f("nodes"), f("8"), f("16"), false, true, 1.0f,
             0.0f};
  g.bias = "b";
  g.relu = true;
  p.steps.push_back(g);
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  std::string text = p.toJson();
  EXPECT_NE(text.find("\"relu\": true"), std::string::npos) << text;
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->toJson(), text);
  EXPECT_TRUE(std::get<GemmStep>(parsed->steps[0]).relu);
  std::get<GemmStep>(p.steps[0]).relu = false;
  EXPECT_EQ(p.toJson().find("\"relu\""), std::string::npos) << p.toJson();
  std::get<GemmStep>(p.steps[0]).relu = true;
  std::get<GemmStep>(p.steps[0]).bias.clear();
  Status st = p.verify();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("a gemm's relu comes only with its bias"),
            std::string::npos)
      << st.message();
}

// A launch's `overlaps` round-trips (written only where it is not 0) and
// names steps right before it (which may overlap others themselves).
TEST(Program, OverlapsRoundTripsAndIsChecked) {
  using namespace test;
  auto make = [](int64_t overlaps, bool fillBetween) {
    Program p;
    p.name = "beside";
    p.units = {{{"k"}, ""}};
    p.kernels = {"k"};
    p.buffers = {{"y", BufferRole::Output, DType::F32,
                  *Formula::parse("nodes"), BufferUse::Result, 0}};
    p.steps.push_back(launch("k", "1", 32));
    if (fillBetween)
      p.steps.push_back(FillStep{"y", 0});
    p.steps.push_back(launch("k", "1", 32));
    LaunchStep last = launch("k", "1", 32);
    last.overlaps = overlaps;
    p.steps.push_back(last);
    return p;
  };
  Program p = make(2, false);
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  std::string text = p.toJson();
  EXPECT_NE(text.find("\"overlaps\": 2"), std::string::npos) << text;
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(std::get<LaunchStep>(parsed->steps[2]).overlaps, 2);
  EXPECT_EQ(parsed->toJson(), text);
  EXPECT_EQ(make(0, false).toJson().find("overlaps"), std::string::npos);
  // A fill in the window runs on the caller's stream like any other step.
  Program filled = make(2, true);
  EXPECT_TRUE(filled.verify().ok()) << filled.verify().message();
  // Windows may nest: step 2 beside steps 0-1, step 1 beside step 0.
  Program nested = make(2, false);
  std::get<LaunchStep>(nested.steps[1]).overlaps = 1;
  EXPECT_TRUE(nested.verify().ok()) << nested.verify().message();
  std::vector<Program::OverlapWindow> windows = nested.overlapWindows();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].first, 0u);
  EXPECT_EQ(windows[0].last, 1u);
  EXPECT_EQ(windows[1].first, 0u);
  EXPECT_EQ(windows[1].last, 2u);
  // More steps than come before it, a negative count.
  for (auto [bad, why] :
       {std::pair{make(3, false), "overlaps 3 steps but 2 come before it"},
        std::pair{make(-1, false), "overlaps -1 steps"}}) {
    Status st = bad.verify();
    ASSERT_FALSE(st.ok()) << why;
    EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
  }
  size_t at = text.find("\"overlaps\": 2");
  StatusOr<Program> negative = Program::parse(
      text.substr(0, at) + "\"overlaps\": -2" + text.substr(at + 14));
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.message().find("overlaps"), std::string::npos)
      << negative.message();
}

// A row-split gemm (a weight gradient) may run beside the steps before it
// (`overlaps` on the gemm, round-tripped); a cuBLAS gemm may not (its
// handle and workspace are shared with the steps on the caller's stream).
TEST(Program, ARowSplitGemmOverlapsTheStepsBeforeIt) {
  using namespace test;
  auto make = [](bool rowSplit) {
    Program p;
    p.name = "weights";
    p.units = {{{"k"}, ""}};
    p.kernels = {"k"};
    p.buffers = {{"a", BufferRole::Input, DType::F32, *Formula::parse("nodes * 8")},
                 {"b", BufferRole::Input, DType::F32, *Formula::parse("nodes * 4")},
                 {"p", BufferRole::Temp, DType::F64, *Formula::parse("32 * 2")},
                 {"c", BufferRole::Output, DType::F32, *Formula::parse("32"),
                  BufferUse::Result, 0},
                 {"y", BufferRole::Output, DType::F32, *Formula::parse("nodes"),
                  BufferUse::Result, 1}};
    p.steps.push_back(launch("k", "1", 32));
    p.steps.push_back(FillStep{"y", 0});
    GemmStep g = weightGradient("a", "b", "c", 8, 4, "nodes",
                                rowSplit ? "p" : "", 2);
    g.overlaps = 2;
    p.steps.push_back(g);
    return p;
  };
  Program p = make(true);
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  ASSERT_EQ(p.overlapWindows().size(), 1u);
  EXPECT_EQ(p.overlapWindows()[0].first, 0u);
  EXPECT_EQ(p.overlapWindows()[0].last, 2u);
  std::string text = p.toJson();
  EXPECT_NE(text.find("\"overlaps\": 2"), std::string::npos) << text;
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(std::get<GemmStep>(parsed->steps[2]).overlaps, 2);
  EXPECT_EQ(parsed->toJson(), text);
  Status st = make(false).verify();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("step 2: a gemm that overlaps the steps "
                              "before it must be a row split"),
            std::string::npos)
      << st.message();
}

TEST(Program, DuplicateBuffersAreRejected) {
  Program p = sample();
  p.buffers.push_back(p.buffers[0]);
  Status s = p.verify();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("buffer 'x' is declared twice"), std::string::npos);
}

TEST(Program, F64BuffersRoundTripAndLibraryStepsNeedOneFloatType) {
  auto f = [](const char *t) { return *Formula::parse(t); };
  Program p;
  p.name = "double";
  p.buffers = {{"x", BufferRole::Input, DType::F64, f("nodes * 8")},
               {"w", BufferRole::Input, DType::F64, f("8 * 4")},
               {"h", BufferRole::Temp, DType::F64, f("nodes * 8")},
               {"y", BufferRole::Output, DType::F64, f("nodes * 4")}};
  p.steps.push_back(FillStep{"h", 0.1});
  p.steps.push_back(SpmmStep{"x", "h", "", f("8"), 1.0f, 1.0f});
  p.steps.push_back(GemmStep{"h", "w", "y", f("nodes"), f("4"), f("8"), false,
                             false, 1.0f, 0.0f});
  ASSERT_TRUE(p.verify().ok()) << p.verify().message();
  std::string text = p.toJson();
  EXPECT_NE(text.find("\"dtype\": \"f64\""), std::string::npos) << text;
  StatusOr<Program> parsed = Program::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->toJson(), text);
  EXPECT_EQ(parsed->buffers[0].dtype, DType::F64);
  // A fill keeps its value in double precision.
  EXPECT_EQ(std::get<FillStep>(parsed->steps[0]).value, 0.1);
  EXPECT_EQ(elementBytes(DType::F64), 8u);
  EXPECT_EQ(elementBytes(DType::F32), 4u);
  EXPECT_EQ(elementBytes(DType::BF16), 2u);
  EXPECT_EQ(elementBytes(DType::F16), 2u);

  // bf16 and f16 buffers print and parse back.
  for (DType half : {DType::BF16, DType::F16}) {
    Program h = p;
    for (BufferDecl &b : h.buffers)
      b.dtype = half;
    ASSERT_TRUE(h.verify().ok()) << h.verify().message();
    StatusOr<Program> back = Program::parse(h.toJson());
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->buffers[0].dtype, half);
    EXPECT_EQ(back->toJson(), h.toJson());
  }

  // A library step's operands share one float type.
  Program mixed = p;
  mixed.buffers[1].dtype = DType::F32;
  Status s = mixed.verify();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("step 2: gemm b buffer 'w' is f32 but the step's "
                             "first operand is f64"),
            std::string::npos)
      << s.message();
  Program integer = p;
  integer.buffers[0].dtype = DType::I64;
  s = integer.verify();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("step 1: spmm input buffer 'x' must be a float "
                             "type (f32, f64, bf16 or f16) but is i64"),
            std::string::npos)
      << s.message();
  expectError("\"dtype\": \"f32\"", "\"dtype\": \"f8\"",
              "program.buffers[0].dtype: expected f32, f64, bf16, f16, i32 or "
              "i64 but got 'f8'");
}

TEST(Formula, Evaluates) {
  FormulaScope scope{100, 2500, 3, 40, 7, 50};
  auto eval = [&](const char *t) { return *Formula::parse(t)->evaluate(scope); };
  EXPECT_EQ(eval("nodes * 64 + 1"), 6401);
  EXPECT_EQ(eval("ceil_div(edges, 256)"), 10);
  EXPECT_EQ(eval("(nodes + 1) * (2 - 1)"), 101);
  EXPECT_EQ(eval("min(max_in_degree, max_out_degree) % 4"), 3);
  EXPECT_EQ(eval("max(graphs, largest_graph) / 7"), 7);
  EXPECT_EQ(eval(" 42 "), 42);
  StatusOr<int64_t> div0 = Formula::parse("nodes / (edges - 2500)")->evaluate(scope);
  ASSERT_FALSE(div0.ok());
  EXPECT_NE(div0.message().find("division by zero"), std::string::npos);
  EXPECT_FALSE(Formula::parse("").ok());
  EXPECT_FALSE(Formula::parse("nodes nodes").ok());
  EXPECT_FALSE(Formula::parse("ceil_div(1)").ok());
  EXPECT_FALSE(Formula::parse("99999999999999999999").ok());
  // Sizes never wrap: an overflowing product or sum is an error.
  FormulaScope huge{int64_t(1) << 40, 1, 1, 1, 1, 1};
  for (const char *t : {"nodes * nodes", "nodes * 8388608 + nodes * 8388608",
                        "0 - nodes * nodes", "ceil_div(nodes * 8388607 + "
                                             "nodes * 8388607 + 4194303, 2)"}) {
    StatusOr<int64_t> v = Formula::parse(t)->evaluate(huge);
    ASSERT_FALSE(v.ok()) << t;
    EXPECT_NE(v.message().find("overflows 64 bits"), std::string::npos) << t;
  }
  EXPECT_EQ(*Formula::parse("nodes * 4194304")->evaluate(huge),
            int64_t(1) << 62);
  EXPECT_TRUE(Formula::parse("64")->isConstant());
  EXPECT_FALSE(Formula::parse("nodes")->isConstant());
}

// The builders print with parentheses only where precedence needs them,
// and their text parses back to a formula of the same value.
TEST(Formula, Builds) {
  FormulaScope scope{100, 2500, 3, 40, 7, 50};
  scope.srcNodes = 90;
  scope.dstNodes = 11;
  auto c = Formula::constant;
  struct Case {
    Formula f;
    const char *text;
    int64_t value;
  };
  Case cases[] = {
      {Formula::nodes() * c(64) + c(1), "nodes * 64 + 1", 6401},
      {Formula::ceilDiv(Formula::edges(), c(256)), "ceil_div(edges, 256)", 10},
      {(Formula::nodes() + c(1)) * (c(2) - c(1)), "(nodes + 1) * (2 - 1)", 101},
      {Formula::nodes() - (Formula::edges() - c(2500)),
       "nodes - (edges - 2500)", 100},
      {Formula::nodes() - Formula::edges() + c(2500), "nodes - edges + 2500",
       100},
      {Formula::nodes() / (Formula::graphs() * c(2)), "nodes / (graphs * 2)",
       16},
      {Formula::min(Formula::maxInDegree(), Formula::maxOutDegree()) % c(4),
       "min(max_in_degree, max_out_degree) % 4", 3},
      {Formula::max(Formula::graphs(), Formula::largestGraph()) / c(7),
       "max(graphs, largest_graph) / 7", 7},
      {*Formula::name("src_nodes") * c(2) + *Formula::name("dst_nodes"),
       "src_nodes * 2 + dst_nodes", 191},
      {Formula::parenthesized(Formula::nodes() * c(4)) * c(8),
       "(nodes * 4) * 8", 3200},
      {Formula::ceilDiv(Formula::parenthesized(Formula::nodes() * c(4)), c(8)),
       "ceil_div((nodes * 4), 8)", 50},
      {Formula::nodes() + c(-1), "nodes + -1", 99},
  };
  for (const Case &k : cases) {
    EXPECT_EQ(k.f.text(), k.text);
    EXPECT_EQ(*k.f.evaluate(scope), k.value) << k.text;
    StatusOr<Formula> back = Formula::parse(k.f.text());
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(*back->evaluate(scope), k.value) << k.text;
  }
  // A parsed formula keeps its text, and its outermost operator decides the
  // parentheses when it is built upon.
  Formula sum = *Formula::parse("nodes+1");
  EXPECT_EQ((sum * c(2)).text(), "(nodes+1) * 2");
  EXPECT_EQ((c(2) * *Formula::parse("(nodes + 1)")).text(), "2 * (nodes + 1)");
  EXPECT_EQ((c(2) - *Formula::parse("nodes * 3")).text(), "2 - nodes * 3");
  EXPECT_EQ((c(2) / *Formula::parse("nodes * 3")).text(), "2 / (nodes * 3)");
  EXPECT_TRUE((c(2) * c(3)).isConstant());
  EXPECT_FALSE((c(2) * Formula::edges()).isConstant());

  EXPECT_EQ(Formula::name("dst_nodes")->text(), "dst_nodes");
  EXPECT_EQ(*Formula::name("largest_graph")->evaluate(scope), 50);
  StatusOr<Formula> bad = Formula::name("vertices");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("unknown name 'vertices'"), std::string::npos);
  // Nor are the light-row counts (csr_light_<j>), which no kernel reads.
  EXPECT_FALSE(Formula::name("csr_light_7").ok());
}

TEST(Formula, BipartiteSides) {
  // src_nodes and dst_nodes: a bipartite graph's sides, both the nodes on a
  // graph of one node set (sides unset).
  FormulaScope scope{100, 2500, 1, 40, 7, 100};
  auto eval = [&](const char *t) { return *Formula::parse(t)->evaluate(scope); };
  EXPECT_EQ(eval("src_nodes * 2 + dst_nodes"), 300);
  scope.srcNodes = 100;
  scope.dstNodes = 30;
  EXPECT_EQ(eval("src_nodes * 2 + dst_nodes"), 230);
  EXPECT_EQ(eval("ceil_div(dst_nodes * 32, 256)"), 4);
  EXPECT_EQ(Formula::parse("dst_nodes * 4")->text(), "dst_nodes * 4");
  EXPECT_FALSE(Formula::parse("src_nodes")->isConstant());
  StatusOr<Formula> bad = Formula::parse("source_nodes");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("src_nodes, dst_nodes"), std::string::npos);
}

} // namespace
