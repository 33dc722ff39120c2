//===- Program.cpp - the Program text form --------------------------------===//
//
// Part of gnnc. The JSON form is documented in docs/Runtime.md; keys are
// written in a fixed order so that print(parse(text)) == text.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Program.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <set>

using namespace gnn::runtime;
using Json = nlohmann::ordered_json;

const char *gnn::runtime::dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::F64: return "f64";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  }
  return "f32";
}

static const char *roleName(BufferRole r) {
  switch (r) {
  case BufferRole::Input: return "input";
  case BufferRole::Output: return "output";
  case BufferRole::Temp: return "temp";
  }
  return "temp";
}

static const char *useName(BufferUse u) {
  switch (u) {
  case BufferUse::None: return "none";
  case BufferUse::Argument: return "argument";
  case BufferUse::Result: return "result";
  case BufferUse::Residual: return "residual";
  case BufferUse::OutputGradient: return "output_gradient";
  case BufferUse::Gradient: return "gradient";
  }
  return "none";
}

static Json argJson(const KernelArg &a) {
  switch (a.kind) {
  case KernelArg::Kind::Buffer: return Json{{"buffer", a.name}};
  case KernelArg::Kind::Graph: return Json{{"graph", a.name}};
  case KernelArg::Kind::I32: return Json{{"i32", a.integer.text()}};
  case KernelArg::Kind::I64: return Json{{"i64", a.integer.text()}};
  case KernelArg::Kind::F32: return Json{{"f32", a.real}};
  }
  return Json();
}

namespace {
/// JSON for each step kind.
struct StepWriter {
  Json operator()(const LaunchStep &s) const {
    Json args = Json::array();
    for (const KernelArg &a : s.args)
      args.push_back(argJson(a));
    Json j{{"op", "launch"},
           {"kernel", s.kernel},
           {"grid", {s.grid[0].text(), s.grid[1].text(), s.grid[2].text()}},
           {"block", {s.block[0], s.block[1], s.block[2]}},
           {"shared", s.sharedBytes.text()},
           {"args", args}};
    if (s.overlaps)
      j["overlaps"] = s.overlaps;
    return j;
  }
  Json operator()(const SpmmStep &s) const {
    return Json{{"op", "spmm"},       {"input", s.input},
                {"output", s.output}, {"weights", s.weights.empty() ? Json() : Json(s.weights)},
                {"cols", s.cols.text()}, {"alpha", s.alpha},
                {"beta", s.beta}};
  }
  Json operator()(const GemmStep &s) const {
    Json j{{"op", "gemm"},        {"a", s.a},
           {"b", s.b},            {"c", s.c},
           {"m", s.m.text()},     {"n", s.n.text()},
           {"k", s.k.text()},     {"trans_a", s.transA},
           {"trans_b", s.transB}, {"alpha", s.alpha},
           {"beta", s.beta}};
    if (!s.partials.empty()) {
      j["partials"] = s.partials;
      j["chunks"] = s.chunks.text();
    }
    if (!s.rowSums.empty())
      j["row_sums"] = s.rowSums;
    if (!s.bias.empty())
      j["bias"] = s.bias;
    if (s.relu)
      j["relu"] = true;
    if (s.overlaps)
      j["overlaps"] = s.overlaps;
    return j;
  }
  Json operator()(const FillStep &s) const {
    return Json{{"op", "fill"}, {"buffer", s.buffer}, {"value", s.value}};
  }
  Json operator()(const CopyStep &s) const {
    return Json{{"op", "copy"},
                {"src", s.src},
                {"dst", s.dst},
                {"elements", s.elements.text()}};
  }
};
} // namespace

std::string Program::toJson() const {
  Json buffersJson = Json::array();
  for (const BufferDecl &b : buffers) {
    Json j{{"name", b.name},
           {"role", roleName(b.role)},
           {"dtype", dtypeName(b.dtype)},
           {"size", b.size.text()}};
    if (b.use != BufferUse::None) {
      j["use"] = useName(b.use);
      j["index"] = b.index;
    }
    buffersJson.push_back(j);
  }
  Json stepsJson = Json::array();
  for (const Step &s : steps)
    stepsJson.push_back(std::visit(StepWriter{}, s));
  Json j{{"format", "gnnc-program"},
         {"version", 1},
         {"name", name},
         {"kernels", kernels},
         {"options", options},
         {"index_bits", indexBits},
         {"csr_order_edges", csrOrderEdges},
         {"buffers", buffersJson},
         {"steps", stepsJson},
         {"prelude", prelude}};
  if (maxGraphNodes)
    j["max_graph_nodes"] = maxGraphNodes;
  if (relations)
    j["relations"] = relations;
  if (!fixedCounts.empty())
    j["fixed_counts"] = fixedCounts;
  Json unitsJson = Json::array();
  for (const SourceUnit &u : units)
    unitsJson.push_back(Json{{"kernels", u.kernels}, {"text", u.text}});
  j["units"] = unitsJson;
  return j.dump(2) + "\n";
}

std::string Program::source() const {
  std::string all = prelude;
  for (const SourceUnit &u : units)
    all += u.text;
  return all;
}

std::string Program::unitSource(size_t i) const { return prelude + units[i].text; }

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
/// Typed field access with errors naming the JSON path.
struct Reader {
  std::string error;

  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = path + ": " + what;
    return false;
  }

  bool keys(const Json &j, const std::string &path,
            std::initializer_list<const char *> allowed) {
    if (!j.is_object())
      return fail(path, "expected an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const char *k : allowed)
        known |= it.key() == k;
      if (!known)
        return fail(path, "unknown key '" + it.key() + "'");
    }
    return true;
  }

  bool string(const Json &j, const char *key, const std::string &path,
              std::string &out, bool optional = false) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      if (optional)
        return true;
      return fail(path, std::string("missing '") + key + "'");
    }
    if (!it->is_string())
      return fail(path + "." + key, "expected a string");
    out = it->get<std::string>();
    return true;
  }

  template <typename T>
  bool number(const Json &j, const char *key, const std::string &path,
              T &out, bool optional = false) {
    auto it = j.find(key);
    if (it == j.end()) {
      if (optional)
        return true;
      return fail(path, std::string("missing '") + key + "'");
    }
    if (!it->is_number())
      return fail(path + "." + key, "expected a number");
    return real(*it, path + "." + key, out);
  }

  /// A JSON number as a float or double: one beyond the type's range would
  /// become an infinity, which the text form cannot write back.
  template <typename T>
  bool real(const Json &j, const std::string &path, T &out) {
    double v = j.get<double>();
    if (std::isfinite(v) && !std::isfinite(static_cast<T>(v)))
      return fail(path, "expected a number within the range of " +
                            std::string(sizeof(T) == 4 ? "float" : "double"));
    out = static_cast<T>(v);
    return true;
  }

  bool boolean(const Json &j, const char *key, const std::string &path,
               bool &out) {
    auto it = j.find(key);
    if (it == j.end())
      return true;
    if (!it->is_boolean())
      return fail(path + "." + key, "expected true or false");
    out = it->get<bool>();
    return true;
  }

  bool formula(const Json &j, const std::string &path, Formula &out) {
    std::string text;
    if (j.is_number_integer())
      text = std::to_string(j.get<int64_t>());
    else if (j.is_string())
      text = j.get<std::string>();
    else
      return fail(path, "expected a formula (string or integer)");
    StatusOr<Formula> f = Formula::parse(text);
    if (!f.ok())
      return fail(path, f.message());
    out = *f;
    return true;
  }

  bool formulaField(const Json &j, const char *key, const std::string &path,
                    Formula &out, const char *fallback = nullptr) {
    auto it = j.find(key);
    if (it == j.end()) {
      if (fallback)
        return formula(Json(fallback), path + "." + key, out);
      return fail(path, std::string("missing '") + key + "'");
    }
    return formula(*it, path + "." + key, out);
  }

  bool arg(const Json &j, const std::string &path, KernelArg &a) {
    if (!j.is_object() || j.size() != 1)
      return fail(path, "expected one of {\"buffer\": NAME}, {\"graph\": "
                        "ARRAY}, {\"i32\": F}, {\"i64\": F}, {\"f32\": X}");
    auto it = j.begin();
    const std::string &k = it.key();
    if (k == "buffer" || k == "graph") {
      a.kind = k == "buffer" ? KernelArg::Kind::Buffer : KernelArg::Kind::Graph;
      if (!it->is_string())
        return fail(path + "." + k, "expected a string");
      a.name = it->get<std::string>();
      return true;
    }
    if (k == "i32" || k == "i64") {
      a.kind = k == "i32" ? KernelArg::Kind::I32 : KernelArg::Kind::I64;
      return formula(*it, path + "." + k, a.integer);
    }
    if (k == "f32") {
      a.kind = KernelArg::Kind::F32;
      if (!it->is_number())
        return fail(path + ".f32", "expected a number");
      return real(*it, path + ".f32", a.real);
    }
    return fail(path, "unknown argument kind '" + k + "'");
  }

  /// A launch's or gemm's optional "overlaps" (absent: 0).
  bool overlaps(const Json &j, const std::string &path, int64_t &out) {
    auto o = j.find("overlaps");
    if (o == j.end())
      return true;
    if (!o->is_number_integer() || o->get<int64_t>() < 0)
      return fail(path + ".overlaps", "expected an integer >= 0");
    out = o->get<int64_t>();
    return true;
  }

  bool step(const Json &j, const std::string &path, Step &out) {
    std::string op;
    if (!j.is_object() || !string(j, "op", path, op))
      return fail(path, "expected a step object with 'op'");
    if (op == "launch") {
      LaunchStep s;
      if (!keys(j, path,
                {"op", "kernel", "grid", "block", "shared", "args", "overlaps"}) ||
          !string(j, "kernel", path, s.kernel))
        return false;
      auto grid = j.find("grid");
      if (grid == j.end() || !grid->is_array() || grid->size() != 3)
        return fail(path + ".grid", "expected 3 formulas");
      for (int i = 0; i < 3; ++i)
        if (!formula((*grid)[i], path + ".grid[" + std::to_string(i) + "]",
                     s.grid[i]))
          return false;
      auto block = j.find("block");
      if (block == j.end() || !block->is_array() || block->size() != 3)
        return fail(path + ".block", "expected 3 integers");
      for (int i = 0; i < 3; ++i) {
        if (!(*block)[i].is_number_unsigned() || (*block)[i].get<int64_t>() < 1 ||
            (*block)[i].get<int64_t>() > 1024)
          return fail(path + ".block[" + std::to_string(i) + "]",
                      "expected an integer in [1, 1024]");
        s.block[i] = (*block)[i].get<unsigned>();
      }
      if (!formulaField(j, "shared", path, s.sharedBytes, "0"))
        return false;
      if (!overlaps(j, path, s.overlaps))
        return false;
      auto args = j.find("args");
      if (args != j.end()) {
        if (!args->is_array())
          return fail(path + ".args", "expected an array");
        for (size_t i = 0; i < args->size(); ++i) {
          KernelArg a;
          if (!arg((*args)[i], path + ".args[" + std::to_string(i) + "]", a))
            return false;
          s.args.push_back(a);
        }
      }
      out = s;
      return true;
    }
    if (op == "spmm") {
      SpmmStep s;
      if (!keys(j, path, {"op", "input", "output", "weights", "cols", "alpha", "beta"}) ||
          !string(j, "input", path, s.input) ||
          !string(j, "output", path, s.output) ||
          !string(j, "weights", path, s.weights, true) ||
          !formulaField(j, "cols", path, s.cols) ||
          !number(j, "alpha", path, s.alpha, true) ||
          !number(j, "beta", path, s.beta, true))
        return false;
      out = s;
      return true;
    }
    if (op == "gemm") {
      GemmStep s;
      if (!keys(j, path,
                {"op", "a", "b", "c", "m", "n", "k", "trans_a", "trans_b",
                 "alpha", "beta", "partials", "chunks", "bias", "relu",
                 "row_sums", "overlaps"}) ||
          !string(j, "a", path, s.a) || !string(j, "b", path, s.b) ||
          !string(j, "c", path, s.c) || !formulaField(j, "m", path, s.m) ||
          !formulaField(j, "n", path, s.n) ||
          !formulaField(j, "k", path, s.k) ||
          !boolean(j, "trans_a", path, s.transA) ||
          !boolean(j, "trans_b", path, s.transB) ||
          !number(j, "alpha", path, s.alpha, true) ||
          !number(j, "beta", path, s.beta, true))
        return false;
      // The row split: both keys or neither.
      if ((j.contains("partials") || j.contains("chunks")) &&
          (!string(j, "partials", path, s.partials) ||
           !formulaField(j, "chunks", path, s.chunks)))
        return false;
      if (j.contains("bias") && !string(j, "bias", path, s.bias))
        return false;
      if (j.contains("relu") && !boolean(j, "relu", path, s.relu))
        return false;
      if (j.contains("row_sums") && !string(j, "row_sums", path, s.rowSums))
        return false;
      if (!overlaps(j, path, s.overlaps))
        return false;
      out = s;
      return true;
    }
    if (op == "fill") {
      FillStep s;
      if (!keys(j, path, {"op", "buffer", "value"}) ||
          !string(j, "buffer", path, s.buffer) ||
          !number(j, "value", path, s.value, true))
        return false;
      out = s;
      return true;
    }
    if (op == "copy") {
      CopyStep s;
      if (!keys(j, path, {"op", "src", "dst", "elements"}) ||
          !string(j, "src", path, s.src) || !string(j, "dst", path, s.dst) ||
          !formulaField(j, "elements", path, s.elements))
        return false;
      out = s;
      return true;
    }
    return fail(path + ".op", "unknown step '" + op +
                                  "' (expected launch, spmm, gemm, fill, copy)");
  }
};
} // namespace

/// The kernels' source: the `prelude` and per-kernel `units`, or (version 1
/// before units) one `source` defining every kernel.
static Status parseUnits(const Json &j, Reader &r, Program &p) {
  bool hasUnits = j.contains("units") || j.contains("prelude");
  if (hasUnits == j.contains("source"))
    return Status::error(hasUnits ? "program: expected either 'source' or "
                                    "'prelude' and 'units' but got both"
                                  : "program: missing 'units'");
  if (!hasUnits) {
    // Version 1 before per-kernel units: the whole source is one unit that
    // defines every kernel.
    std::string source;
    if (!r.string(j, "source", "program", source))
      return Status::error(r.error);
    p.units.push_back(SourceUnit{{}, std::move(source)});
  } else {
    if (!r.string(j, "prelude", "program", p.prelude))
      return Status::error(r.error);
    auto units = j.find("units");
    if (units == j.end())
      return Status::error("program: missing 'units'");
    if (!units->is_array())
      return Status::error("program.units: expected an array");
    for (size_t i = 0; i < units->size(); ++i) {
      const Json &u = (*units)[i];
      std::string path = "program.units[" + std::to_string(i) + "]";
      SourceUnit unit;
      if (!r.keys(u, path, {"kernels", "text"}) ||
          !r.string(u, "text", path, unit.text))
        return Status::error(r.error);
      auto names = u.find("kernels");
      if (names == u.end() || !names->is_array())
        return Status::error(path + ".kernels: expected an array");
      for (const Json &v : *names) {
        if (!v.is_string())
          return Status::error(path + ".kernels: expected strings");
        unit.kernels.push_back(v.get<std::string>());
      }
      p.units.push_back(std::move(unit));
    }
  }
  return Status();
}

StatusOr<Program> Program::parse(const std::string &text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception &e) {
    return Status::error(std::string("program is not valid JSON: ") + e.what());
  }
  Reader r;
  Program p;
  std::string format;
  if (!r.keys(j, "program",
              {"format", "version", "name", "kernels", "options", "index_bits",
               "csr_order_edges", "max_graph_nodes", "relations",
               "fixed_counts", "buffers",
               "steps",
               "source", "prelude", "units"}) ||
      !r.string(j, "format", "program", format))
    return Status::error(r.error);
  if (format != "gnnc-program")
    return Status::error("program.format: expected 'gnnc-program' but got '" +
                         format + "'");
  if (!j.contains("version") || j["version"] != 1)
    return Status::error("program.version: expected 1");
  if (!r.string(j, "name", "program", p.name))
    return Status::error(r.error);
  bool hasUnits = j.contains("units") || j.contains("prelude");
  if (Status st = parseUnits(j, r, p); !st.ok())
    return st;
  if (auto bits = j.find("index_bits"); bits != j.end()) {
    if (!bits->is_number_integer() ||
        (bits->get<int>() != 32 && bits->get<int>() != 64))
      return Status::error("program.index_bits: expected 32 or 64");
    p.indexBits = bits->get<int>();
  }
  if (auto csr = j.find("csr_order_edges"); csr != j.end()) {
    if (!csr->is_boolean())
      return Status::error("program.csr_order_edges: expected true or false");
    p.csrOrderEdges = csr->get<bool>();
  }
  if (auto most = j.find("max_graph_nodes"); most != j.end()) {
    if (!most->is_number_integer() || most->get<int64_t>() < 0)
      return Status::error(
          "program.max_graph_nodes: expected a nonnegative integer");
    p.maxGraphNodes = most->get<int64_t>();
  }
  if (auto r = j.find("relations"); r != j.end()) {
    if (!r->is_number_integer() || r->get<int64_t>() < 0)
      return Status::error("program.relations: expected a nonnegative integer");
    p.relations = r->get<int64_t>();
  }
  if (auto f = j.find("fixed_counts"); f != j.end()) {
    if (!f->is_object())
      return Status::error("program.fixed_counts: expected an object");
    for (auto &[count, value] : f->items()) {
      if (count != "node" && count != "edge" && count != "src" && count != "dst")
        return Status::error("program.fixed_counts: expected node, edge, src or "
                             "dst but got '" + count + "'");
      if (!value.is_number_integer() || value.get<int64_t>() < 0)
        return Status::error("program.fixed_counts." + count +
                             ": expected a nonnegative integer");
      p.fixedCounts[count] = value.get<int64_t>();
    }
  }
  for (const char *list : {"kernels", "options"}) {
    auto it = j.find(list);
    if (it == j.end())
      continue;
    if (!it->is_array())
      return Status::error(std::string("program.") + list + ": expected an array");
    for (const Json &v : *it) {
      if (!v.is_string())
        return Status::error(std::string("program.") + list +
                             ": expected strings");
      (std::string(list) == "kernels" ? p.kernels : p.options)
          .push_back(v.get<std::string>());
    }
  }
  if (!hasUnits) {
    p.units[0].kernels = p.kernels;
    if (p.kernels.empty() && p.units[0].text.empty())
      p.units.clear();
  }
  auto buffers = j.find("buffers");
  if (buffers != j.end()) {
    if (!buffers->is_array())
      return Status::error("program.buffers: expected an array");
    for (size_t i = 0; i < buffers->size(); ++i) {
      const Json &b = (*buffers)[i];
      std::string path = "program.buffers[" + std::to_string(i) + "]";
      BufferDecl d;
      std::string role, dtype, use = "none";
      if (!r.keys(b, path, {"name", "role", "dtype", "size", "use", "index"}) ||
          !r.string(b, "name", path, d.name) ||
          !r.string(b, "role", path, role) ||
          !r.string(b, "dtype", path, dtype) ||
          !r.formulaField(b, "size", path, d.size))
        return Status::error(r.error);
      if (role == "input") d.role = BufferRole::Input;
      else if (role == "output") d.role = BufferRole::Output;
      else if (role == "temp") d.role = BufferRole::Temp;
      else return Status::error(path + ".role: expected input, output or temp but got '" + role + "'");
      if (b.contains("use") || b.contains("index")) {
        if (!r.string(b, "use", path, use))
          return Status::error(r.error);
        auto index = b.find("index");
        if (index == b.end() || !index->is_number_integer())
          return Status::error(path + ".index: expected an integer beside "
                                      "'use'");
        d.index = index->get<int64_t>();
      }
      if (use == "none") d.use = BufferUse::None;
      else if (use == "argument") d.use = BufferUse::Argument;
      else if (use == "result") d.use = BufferUse::Result;
      else if (use == "residual") d.use = BufferUse::Residual;
      else if (use == "output_gradient") d.use = BufferUse::OutputGradient;
      else if (use == "gradient") d.use = BufferUse::Gradient;
      else return Status::error(path + ".use: expected argument, result, "
                                "residual, output_gradient or gradient but "
                                "got '" + use + "'");
      if (dtype == "f32") d.dtype = DType::F32;
      else if (dtype == "i32") d.dtype = DType::I32;
      else if (dtype == "i64") d.dtype = DType::I64;
      else if (dtype == "f64") d.dtype = DType::F64;
      else if (dtype == "bf16")
        d.dtype = DType::BF16;
      else if (dtype == "f16")
        d.dtype = DType::F16;
      else
        return Status::error(
            path +
            ".dtype: expected f32, f64, bf16, f16, i32 or i64 but got '" +
            dtype + "'");
      p.buffers.push_back(d);
    }
  }
  auto steps = j.find("steps");
  if (steps != j.end()) {
    if (!steps->is_array())
      return Status::error("program.steps: expected an array");
    for (size_t i = 0; i < steps->size(); ++i) {
      Step s;
      if (!r.step((*steps)[i], "program.steps[" + std::to_string(i) + "]", s))
        return Status::error(r.error);
      p.steps.push_back(std::move(s));
    }
  }
  GNN_RETURN_IF_ERROR(p.verify());
  return p;
}

int64_t gnn::runtime::overlapsOf(const Step &step) {
  if (auto *l = std::get_if<LaunchStep>(&step))
    return l->overlaps;
  if (auto *g = std::get_if<GemmStep>(&step))
    return g->overlaps;
  return 0;
}

std::vector<Program::OverlapWindow> Program::overlapWindows() const {
  std::vector<OverlapWindow> windows;
  for (size_t j = 0; j < steps.size(); ++j)
    if (int64_t k = overlapsOf(steps[j]); k > 0 && static_cast<size_t>(k) <= j)
      windows.push_back({j - static_cast<size_t>(k), j});
  return windows;
}

Status Program::verify() const {
  std::map<std::string, const BufferDecl *> byName;
  std::set<std::pair<BufferUse, int64_t>> uses;
  for (const BufferDecl &b : buffers) {
    if (!byName.emplace(b.name, &b).second)
      return Status::error("buffer '" + b.name + "' is declared twice");
    if (b.use == BufferUse::None) {
      if (b.index != -1)
        return Status::error("buffer '" + b.name + "' has an index but no use");
      continue;
    }
    // Given by the caller: arguments and output gradients; written for the
    // caller: results, residuals and gradients.
    bool given =
        b.use == BufferUse::Argument || b.use == BufferUse::OutputGradient;
    if (b.role != (given ? BufferRole::Input : BufferRole::Output))
      return Status::error("buffer '" + b.name + "' is " + roleName(b.role) +
                           " but its use, " + useName(b.use) + ", is " +
                           (given ? "input" : "output"));
    if (b.index < 0)
      return Status::error("buffer '" + b.name + "' holds " + useName(b.use) +
                           " " + std::to_string(b.index));
    if (!uses.emplace(b.use, b.index).second)
      return Status::error("buffer '" + b.name + "' holds " + useName(b.use) +
                           " " + std::to_string(b.index) +
                           ", which another buffer holds too");
  }
  std::set<std::string> kernelNames(kernels.begin(), kernels.end());
  std::map<std::string, size_t> unitOf;
  for (size_t u = 0; u < units.size(); ++u)
    for (const std::string &k : units[u].kernels)
      if (!unitOf.emplace(k, u).second)
        return Status::error(
            unitOf[k] == u
                ? "unit " + std::to_string(u) + " lists kernel '" + k +
                      "' twice"
                : "kernel '" + k + "' is defined by units " +
                      std::to_string(unitOf[k]) + " and " + std::to_string(u));
  for (const std::string &k : kernels)
    if (!unitOf.count(k))
      return Status::error("kernel '" + k + "' is defined by no source unit");
  static const std::set<std::string> graphArrays = {
      "csr_row_ptr", "csr_col",    "csr_edge",           "csr_dst",
      "csc_col_ptr", "csc_row",    "csc_edge",           "csc_to_csr",
      "in_degree",   "out_degree", "csr_rows_by_degree", "csc_cols_by_degree",
      "graph_ptr",   "csr_type"};
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string where = "step " + std::to_string(i);
    // A step that overlaps the k before it (overlapsOf): k of them there.
    // Windows may nest or cross: the steps that run beside others run on
    // one second stream in the order they are forked (Executor.cpp).
    auto checkWindow = [&]() -> Status {
      int64_t k = overlapsOf(steps[i]);
      if (k < 0 || static_cast<size_t>(k) > i)
        return Status::error(where + ": overlaps " + std::to_string(k) +
                             " steps but " + std::to_string(i) +
                             " come before it");
      return Status();
    };
    // `real`: a library step's operand, f32 or f64 like the step's first.
    std::optional<DType> stepType;
    auto need = [&](const std::string &name, const char *what,
                    bool real = true) -> Status {
      auto it = byName.find(name);
      if (it == byName.end())
        return Status::error(where + ": unknown " + std::string(what) +
                             " buffer '" + name + "'");
      if (!real)
        return Status();
      DType t = it->second->dtype;
      if (!isFloat(t))
        return Status::error(
            where + ": " + what + " buffer '" + name +
            "' must be a float type (f32, f64, bf16 or f16) but is " +
            dtypeName(t));
      if (stepType && *stepType != t)
        return Status::error(where + ": " + what + " buffer '" + name +
                             "' is " + dtypeName(t) +
                             " but the step's first operand is " +
                             dtypeName(*stepType));
      stepType = t;
      return Status();
    };
    if (auto *s = std::get_if<LaunchStep>(&steps[i])) {
      if (!kernelNames.count(s->kernel))
        return Status::error(where + ": kernel '" + s->kernel +
                             "' is not in the program's kernel list");
      GNN_RETURN_IF_ERROR(checkWindow());
      for (const KernelArg &a : s->args) {
        if (a.kind == KernelArg::Kind::Buffer)
          GNN_RETURN_IF_ERROR(need(a.name, "argument", false));
        if (a.kind == KernelArg::Kind::Graph && !graphArrays.count(a.name))
          return Status::error(where + ": unknown graph array '" + a.name + "'");
      }
    } else if (auto *s = std::get_if<SpmmStep>(&steps[i])) {
      GNN_RETURN_IF_ERROR(need(s->input, "spmm input"));
      GNN_RETURN_IF_ERROR(need(s->output, "spmm output"));
      if (!s->weights.empty())
        GNN_RETURN_IF_ERROR(need(s->weights, "spmm weights"));
    } else if (auto *s = std::get_if<GemmStep>(&steps[i])) {
      GNN_RETURN_IF_ERROR(need(s->a, "gemm a"));
      GNN_RETURN_IF_ERROR(need(s->b, "gemm b"));
      GNN_RETURN_IF_ERROR(need(s->c, "gemm c"));
      if (!s->partials.empty()) {
        GNN_RETURN_IF_ERROR(need(s->partials, "gemm partials", false));
        if (byName[s->partials]->dtype != DType::F64 || *stepType != DType::F32 ||
            !s->transA || s->transB)
          return Status::error(where + ": a gemm's row split (partials '" +
                               s->partials +
                               "', f64) is for Aᵀ B of f32 matrices only");
      }
      if (!s->rowSums.empty()) {
        GNN_RETURN_IF_ERROR(need(s->rowSums, "gemm row sums"));
        if (s->partials.empty() || byName[s->rowSums]->dtype != DType::F32)
          return Status::error(where + ": a gemm's row sums ('" + s->rowSums +
                               "', f32) come only with its row split");
      }
      if (s->overlaps && s->partials.empty())
        return Status::error(where + ": a gemm that overlaps the steps before "
                                     "it must be a row split (cuBLAS's "
                                     "handle and workspace are shared)");
      GNN_RETURN_IF_ERROR(checkWindow());
      if (!s->bias.empty()) {
        GNN_RETURN_IF_ERROR(need(s->bias, "gemm bias"));
        if (*stepType != DType::F32 || s->transA || !s->partials.empty() ||
            s->beta != 0)
          return Status::error(where + ": a gemm's bias ('" + s->bias +
                               "') is for f32 A B or A Bᵀ with beta 0 only");
      }
      if (s->relu && s->bias.empty())
        return Status::error(where + ": a gemm's relu comes only with its "
                                     "bias (cuBLASLt's RELU_BIAS epilogue)");
    } else if (auto *s = std::get_if<FillStep>(&steps[i])) {
      GNN_RETURN_IF_ERROR(need(s->buffer, "fill", false));
      if (byName[s->buffer]->dtype == DType::I64 && s->value != 0)
        return Status::error(where + ": an i64 buffer can only be filled with 0");
    } else if (auto *s = std::get_if<CopyStep>(&steps[i])) {
      GNN_RETURN_IF_ERROR(need(s->src, "copy source", false));
      GNN_RETURN_IF_ERROR(need(s->dst, "copy destination", false));
      if (byName[s->src]->dtype != byName[s->dst]->dtype)
        return Status::error(where + ": copy between buffers of different types");
    }
  }
  return Status();
}
