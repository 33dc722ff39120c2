//===- HostGraph.cpp - a graph in host memory -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"
#include "gnn/Tensor/Tensor.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <type_traits>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace gnn;

std::string HostGraph::validate() const {
  std::ostringstream os;
  if (numNodes < 0)
    return "negative node count " + std::to_string(numNodes);
  if (src.size() != dst.size()) {
    os << "source list has " << src.size() << " entries but destination list has "
       << dst.size();
    return os.str();
  }
  for (size_t e = 0; e < src.size(); ++e) {
    if (src[e] < 0 || src[e] >= numNodes || dst[e] < 0 || dst[e] >= numNodes) {
      os << "edge " << e << " (" << src[e] << " -> " << dst[e]
         << ") has a node id outside [0, " << numNodes << ")";
      return os.str();
    }
  }
  if (!graphIds.empty()) {
    if (static_cast<int64_t>(graphIds.size()) != numNodes) {
      os << "graph id list has " << graphIds.size() << " entries but the graph has "
         << numNodes << " nodes";
      return os.str();
    }
    for (size_t i = 0; i < graphIds.size(); ++i) {
      if (graphIds[i] < 0 || (i > 0 && graphIds[i] < graphIds[i - 1])) {
        os << "graph ids must be nonnegative and nondecreasing; node " << i
           << " has id " << graphIds[i];
        return os.str();
      }
    }
    for (size_t e = 0; e < src.size(); ++e) {
      if (graphIds[src[e]] != graphIds[dst[e]]) {
        os << "edge " << e << " joins graph " << graphIds[src[e]] << " and graph "
           << graphIds[dst[e]];
        return os.str();
      }
    }
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Reading files
//===----------------------------------------------------------------------===//

/// Reads a whole (optionally gzip-compressed) file.
static bool readFile(const std::string &path, std::string &out,
                     std::string &error) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  out.clear();
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0)
    out.append(buf, n);
  int errnum = 0;
  const char *msg = gzerror(f, &errnum);
  bool ok = n == 0 && (errnum == Z_OK || errnum == Z_STREAM_END);
  if (!ok)
    error = "cannot read '" + path + "': " + (msg ? msg : "read error");
  gzclose(f);
  return ok;
}

namespace {
/// A tokenizer over lines of integers, reporting line numbers on errors.
struct IntLines {
  const std::string &text;
  const std::string &path;
  size_t pos = 0;
  int64_t line = 0;

  /// Parses the integers of the next non-empty line that is not a comment.
  /// Returns false at the end of input; sets `error` on a malformed line.
  /// Comment lines (`#`) are handed to `onComment`.
  template <typename F>
  bool next(std::vector<int64_t> &values, std::string &error, F onComment) {
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos)
        end = text.size();
      ++line;
      std::string_view l(text.data() + pos, end - pos);
      pos = end + 1;
      size_t first = l.find_first_not_of(" \t\r");
      if (first == std::string_view::npos)
        continue;
      if (l[first] == '#') {
        onComment(l.substr(first + 1));
        continue;
      }
      values.clear();
      const char *p = l.data() + first, *stop = l.data() + l.size();
      while (p < stop) {
        while (p < stop && (*p == ' ' || *p == '\t' || *p == '\r'))
          ++p;
        if (p == stop)
          break;
        char *after = nullptr;
        std::string token(p, std::find_if(p, stop, [](char c) {
                            return c == ' ' || c == '\t' || c == '\r';
                          }));
        errno = 0;
        long long v = std::strtoll(token.c_str(), &after, 10);
        if (errno || *after != '\0' || token.empty()) {
          error = path + ":" + std::to_string(line) +
                  ": expected an integer but found '" + token + "'";
          return false;
        }
        values.push_back(v);
        p += token.size();
      }
      return true;
    }
    return false;
  }
};
} // namespace

static bool readEdgeList(const std::string &path, HostGraph &g,
                         std::string &error, int64_t &declaredNodes) {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  IntLines lines{text, path};
  std::vector<int64_t> v;
  declaredNodes = -1;
  auto onComment = [&](std::string_view c) {
    std::istringstream is{std::string(c)};
    std::string key, count;
    if (!(is >> key) || key != "nodes" || !error.empty())
      return;
    is >> count;
    char *end = nullptr;
    errno = 0;
    long long n = std::strtoll(count.c_str(), &end, 10);
    if (errno || count.empty() || *end != '\0' || n < 0) {
      error = path + ":" + std::to_string(lines.line) +
              ": expected '# nodes N' with a nonnegative N but found '#" +
              std::string(c) + "'";
      return;
    }
    declaredNodes = n;
  };
  while (lines.next(v, error, onComment)) {
    if (!error.empty())
      return false;
    if (v.size() != 2) {
      error = path + ":" + std::to_string(lines.line) +
              ": expected 'src dst' but found " + std::to_string(v.size()) +
              " numbers";
      return false;
    }
    g.src.push_back(v[0]);
    g.dst.push_back(v[1]);
  }
  return error.empty();
}

static bool readIntColumn(const std::string &path, std::vector<int64_t> &out,
                          std::string &error) {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  IntLines lines{text, path};
  std::vector<int64_t> v;
  while (lines.next(v, error, [](std::string_view) {})) {
    if (v.size() != 1) {
      error = path + ":" + std::to_string(lines.line) +
              ": expected one integer per line";
      return false;
    }
    out.push_back(v[0]);
  }
  return error.empty();
}

//===----------------------------------------------------------------------===//
// NumPy edge arrays
//===----------------------------------------------------------------------===//

/// Whether `path` is a `.npy` file: by its extension, else by its magic bytes.
static bool isNpyFile(const fs::path &path) {
  if (path.extension() == ".npy")
    return true;
  char magic[6] = {};
  std::ifstream is(path, std::ios::binary);
  return is.read(magic, 6) && std::memcmp(magic, "\x93NUMPY", 6) == 0;
}

/// Decodes `count` little-endian integers of type `T`, `stride` elements
/// apart in `bytes`, into `out`.
template <typename T>
static void decodeIds(const unsigned char *bytes, uint64_t stride,
                      uint64_t count, int64_t *out) {
  using U = std::make_unsigned_t<T>;
  for (uint64_t k = 0; k < count; ++k) {
    const unsigned char *p = bytes + k * stride * sizeof(T);
    U v = 0;
    for (size_t b = 0; b < sizeof(T); ++b)
      v |= static_cast<U>(p[b]) << (8 * b);
    out[k] = static_cast<T>(v);
  }
}

/// Reads the edges of a `.npy` edge array (see loadGraph) into `g`, in large
/// blocks. Node ids are checked later, by HostGraph::validate.
static bool readNpyEdges(const std::string &path, HostGraph &g,
                         std::string &error) {
  std::ifstream is(path, std::ios::binary);
  if (!is) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  NpyHeader h;
  error = readNpyHeader(is, path, h);
  if (!error.empty())
    return false;
  auto fail = [&](const std::string &message) {
    error = "'" + path + "': " + message;
    return false;
  };
  std::string type = h.descr.size() == 3 ? h.descr.substr(1) : "";
  bool integer = type == "i4" || type == "i8";
  if (integer && h.descr[0] == '>')
    return fail("expected little-endian node ids but the dtype is '" + h.descr +
                "' (big-endian)");
  if (!integer || (h.descr[0] != '<' && h.descr[0] != '|'))
    return fail("expected int32 or int64 node ids ('<i4' or '<i8') but found " +
                h.dtypeName() + " ('" + h.descr + "')");
  std::ostringstream shape;
  for (size_t i = 0; i < h.shape.size(); ++i)
    shape << (i ? ", " : "[") << h.shape[i];
  shape << (h.shape.empty() ? "[]" : "]");
  // [E, 2] holds one edge per row; [2, E] holds sources then destinations.
  // A [2, 2] array is read as [E, 2].
  if (h.shape.size() != 2 || (h.shape[0] != 2 && h.shape[1] != 2))
    return fail("expected shape [E, 2] or [2, E] but found " + shape.str());
  bool rowsAreEdges = h.shape[1] == 2;
  uint64_t numEdges = rowsAreEdges ? h.shape[0] : h.shape[1];
  // Whether all sources come before all destinations in the file.
  bool planar = rowsAreEdges == h.fortranOrder;

  uint64_t size = h.itemSize();
  std::error_code ec;
  uint64_t fileSize = fs::file_size(path, ec);
  if (ec)
    return fail("cannot read: " + ec.message());
  uint64_t found = fileSize - h.dataOffset;
  if (numEdges > (uint64_t(1) << 58))
    return fail("shape " + shape.str() + " is too large for a file of " +
                std::to_string(fileSize) + " bytes");
  uint64_t expected = numEdges * 2 * size;
  if (found != expected)
    return fail("expected " + std::to_string(expected) +
                " payload bytes for shape " + shape.str() + " of " +
                h.dtypeName() + " but found " + std::to_string(found));

  g.src.resize(numEdges);
  g.dst.resize(numEdges);
  // Blocks of an even number of elements, so that a block holds whole
  // (src, dst) pairs of the interleaved layout.
  const uint64_t blockElements = uint64_t(1) << 23;
  std::vector<unsigned char> block(std::min(blockElements, 2 * numEdges) *
                                   size);
  auto decode = [&](const unsigned char *bytes, uint64_t stride, uint64_t count,
                    int64_t *out) {
    if (size == 4)
      decodeIds<int32_t>(bytes, stride, count, out);
    else
      decodeIds<int64_t>(bytes, stride, count, out);
  };
  for (uint64_t first = 0; first < 2 * numEdges; first += blockElements) {
    uint64_t count = std::min(blockElements, 2 * numEdges - first);
    if (!is.read(reinterpret_cast<char *>(block.data()), count * size))
      return fail("cannot read the payload");
    if (!planar) {
      decode(block.data(), 2, count / 2, g.src.data() + first / 2);
      decode(block.data() + size, 2, count / 2, g.dst.data() + first / 2);
      continue;
    }
    // The part of this block before element `numEdges` holds sources.
    uint64_t srcCount =
        first < numEdges ? std::min(count, numEdges - first) : 0;
    if (srcCount)
      decode(block.data(), 1, srcCount, g.src.data() + first);
    if (count > srcCount)
      decode(block.data() + srcCount * size, 1, count - srcCount,
             g.dst.data() + (first + srcCount - numEdges));
  }
  return true;
}

static std::map<std::string, std::string> readMeta(const std::string &path,
                                                   std::string &error) {
  std::map<std::string, std::string> meta;
  std::string text;
  if (!readFile(path, text, error))
    return meta;
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    std::istringstream ls(line);
    std::string key, value;
    if (ls >> key) {
      std::getline(ls >> std::ws, value);
      meta[key] = value;
    }
  }
  return meta;
}

int64_t gnn::graphHostBytes(int64_t nodes, int64_t edges) {
  int64_t a = 0, b = 0, sum = 0;
  if (nodes < 0 || edges < 0 || __builtin_mul_overflow(nodes, int64_t(48), &a) ||
      __builtin_mul_overflow(edges, int64_t(32), &b) ||
      __builtin_add_overflow(a, b, &sum))
    return -1;
  return sum;
}

static std::atomic<int64_t> hostMemoryCap{0};

void gnn::setHostMemoryCap(int64_t bytes) { hostMemoryCap = bytes; }

int64_t gnn::hostMemoryBytes() {
  if (int64_t cap = hostMemoryCap; cap > 0)
    return cap;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return std::numeric_limits<int64_t>::max();
  int64_t bytes = 0;
  if (__builtin_mul_overflow(int64_t(pages), int64_t(page), &bytes))
    return std::numeric_limits<int64_t>::max();
  return bytes;
}

std::string gnn::checkGraphSize(const std::string &what, int64_t nodes,
                                int64_t edges) {
  if (nodes < 0)
    return what + ": negative node count " + std::to_string(nodes);
  int64_t bytes = graphHostBytes(nodes, edges);
  int64_t memory = hostMemoryBytes();
  if (bytes >= 0 && bytes <= memory)
    return "";
  return what + ": a graph of " + std::to_string(nodes) + " nodes and " +
         std::to_string(edges) + " edges needs " +
         (bytes < 0 ? std::string("more than 2^63") : std::to_string(bytes)) +
         " bytes of host memory but this machine has " +
         std::to_string(memory);
}

static GraphOrError loadDatasetDir(const fs::path &dir) {
  GraphOrError r;
  HostGraph &g = r.graph;
  g.name = dir.filename().string();
  auto meta = readMeta((dir / "meta.txt").string(), r.error);
  if (!r.ok())
    return r;
  auto it = meta.find("nodes");
  if (it == meta.end()) {
    r.error = (dir / "meta.txt").string() + ": no 'nodes' line";
    return r;
  }
  {
    char *end = nullptr;
    errno = 0;
    g.numNodes = std::strtoll(it->second.c_str(), &end, 10);
    if (errno || it->second.empty() || *end != '\0' || g.numNodes < 0) {
      r.error = (dir / "meta.txt").string() +
                ": expected a nonnegative node count but found '" +
                it->second + "'";
      return r;
    }
  }
  // The edges as text, else as a NumPy array.
  fs::path edgeFile = dir / "edges.txt.gz";
  int64_t declared;
  if (!fs::exists(edgeFile) && fs::exists(dir / "edges.npy")) {
    edgeFile = dir / "edges.npy";
    if (!readNpyEdges(edgeFile.string(), g, r.error))
      return r;
  } else if (!readEdgeList(edgeFile.string(), g, r.error, declared)) {
    return r;
  }
  auto edges = meta.find("edges");
  if (edges != meta.end() &&
      std::strtoll(edges->second.c_str(), nullptr, 10) != g.numEdges()) {
    r.error = edgeFile.string() + ": meta.txt declares " + edges->second +
              " edges but the file has " + std::to_string(g.numEdges());
    return r;
  }
  r.error = checkGraphSize(dir.string(), g.numNodes, g.numEdges());
  if (!r.ok())
    return r;
  if (fs::exists(dir / "graph_ids.txt.gz") &&
      !readIntColumn((dir / "graph_ids.txt.gz").string(), g.graphIds, r.error))
    return r;
  r.error = g.validate();
  if (!r.ok())
    r.error = dir.string() + ": " + r.error;
  return r;
}

static GraphOrError loadEdgeFile(const fs::path &file) {
  GraphOrError r;
  HostGraph &g = r.graph;
  g.name = file.filename().string();
  int64_t declared = -1;
  if (isNpyFile(file) ? !readNpyEdges(file.string(), g, r.error)
                      : !readEdgeList(file.string(), g, r.error, declared))
    return r;
  int64_t maxId = -1;
  for (int64_t e = 0; e < g.numEdges(); ++e)
    maxId = std::max({maxId, g.src[e], g.dst[e]});
  if (declared < 0 && maxId == std::numeric_limits<int64_t>::max()) {
    r.error =
        file.string() + ": node id " + std::to_string(maxId) + " is too large";
    return r;
  }
  g.numNodes = declared >= 0 ? declared : maxId + 1;
  r.error = checkGraphSize(file.string(), g.numNodes, g.numEdges());
  if (!r.ok())
    return r;
  r.error = g.validate();
  if (!r.ok())
    r.error = file.string() + ": " + r.error;
  return r;
}

/// Parses `key=value,key=value` into a map; returns false on a malformed item.
static bool parseOptions(const std::string &text,
                         std::map<std::string, std::string> &out,
                         std::string &error) {
  std::istringstream is(text);
  std::string item;
  while (std::getline(is, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "expected key=value but found '" + item + "'";
      return false;
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return true;
}

namespace {
/// Typed access to generator options with errors naming the key.
struct Options {
  std::map<std::string, std::string> values;
  std::string &error;
  std::string spec;

  bool number(const std::string &key, double &out, bool required) {
    auto it = values.find(key);
    if (it == values.end()) {
      if (required)
        error = "'" + spec + "': missing '" + key + "='";
      return !required;
    }
    char *end = nullptr;
    out = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isfinite(out) || out < 0) {
      error = "'" + spec + "': expected a nonnegative number for '" + key +
              "' but found '" + it->second + "'";
      return false;
    }
    values.erase(it);
    return true;
  }
  bool done() {
    if (!error.empty())
      return false;
    if (values.empty())
      return true;
    error = "'" + spec + "': unknown option '" + values.begin()->first + "'";
    return false;
  }
};
} // namespace

/// `1e+30` for a count given as a double.
static std::string formatCount(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

static GraphOrError generateFromSpec(const std::string &spec) {
  GraphOrError r;
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  Options o{{}, r.error, spec};
  if (!parseOptions(spec.substr(colon + 1), o.values, r.error)) {
    r.error = "'" + spec + "': " + r.error;
    return r;
  }
  if (kind == "powerlaw") {
    double nodes = 0, edges = 0, seed = 1, alpha = 1.0;
    if (!o.number("nodes", nodes, true) || !o.number("edges", edges, true) ||
        !o.number("seed", seed, false) || !o.number("alpha", alpha, false) ||
        !o.done())
      return r;
    if (nodes < 1 && edges > 0) {
      r.error = "'" + spec + "': a graph with edges needs at least one node";
      return r;
    }
    // Refused before anything is allocated (or a double too large for
    // int64 is converted).
    constexpr double kLimit = 4611686018427387904.0; // 2^62
    r.error = checkGraphSize("'" + spec + "'",
                             nodes < kLimit ? static_cast<int64_t>(nodes) : -2,
                             edges < kLimit ? static_cast<int64_t>(edges) : -2);
    if (nodes >= kLimit || edges >= kLimit)
      r.error = "'" + spec + "': " + formatCount(nodes) + " nodes and " +
                formatCount(edges) + " edges are beyond 2^62";
    if (!r.ok())
      return r;
    r.graph = generatePowerLaw(static_cast<int64_t>(nodes),
                               static_cast<int64_t>(edges),
                               static_cast<uint64_t>(seed), alpha);
  } else {
    double graphs = 0, minN = 10, maxN = 30, degree = 2.2, seed = 1;
    if (!o.number("graphs", graphs, true) || !o.number("min", minN, false) ||
        !o.number("max", maxN, false) || !o.number("degree", degree, false) ||
        !o.number("seed", seed, false) || !o.done())
      return r;
    if (minN < 1 || maxN < minN) {
      r.error = "'" + spec + "': expected 1 <= min <= max";
      return r;
    }
    // At most graphs * max nodes and about degree edges per node.
    constexpr double kLimit = 4611686018427387904.0; // 2^62
    double nodes = graphs * maxN, edges = std::max(degree, 2.0) * nodes;
    if (nodes >= kLimit || edges >= kLimit) {
      r.error = "'" + spec + "': up to " + formatCount(nodes) +
                " nodes and " + formatCount(edges) + " edges are beyond 2^62";
      return r;
    }
    r.error = checkGraphSize("'" + spec + "'", static_cast<int64_t>(nodes),
                             static_cast<int64_t>(edges));
    if (!r.ok())
      return r;
    r.graph = generateBatch(static_cast<int64_t>(graphs),
                            static_cast<int64_t>(minN),
                            static_cast<int64_t>(maxN), degree,
                            static_cast<uint64_t>(seed));
  }
  r.graph.name = spec;
  return r;
}

static fs::path findDataset(const std::string &name) {
  if (const char *env = std::getenv("GNNC_DATASETS")) {
    fs::path p = fs::path(env) / name;
    if (fs::is_directory(p))
      return p;
  }
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  for (int up = 0; !ec && up < 6; ++up) {
    for (const char *rel : {"shared/datasets", "../shared/datasets"}) {
      fs::path p = dir / rel / name;
      if (fs::is_directory(p / "", ec) && fs::exists(p / "meta.txt"))
        return p;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir)
      break;
    dir = dir.parent_path();
  }
  return {};
}

GraphOrError gnn::loadGraph(const std::string &spec) {
  if (spec.rfind("powerlaw:", 0) == 0 || spec.rfind("batch:", 0) == 0)
    return generateFromSpec(spec);
  std::error_code ec;
  fs::path p(spec);
  if (fs::is_directory(p, ec)) {
    if (!fs::exists(p / "meta.txt") ||
        (!fs::exists(p / "edges.txt.gz") && !fs::exists(p / "edges.npy")))
      return {{},
              "'" + spec + "' is a folder without meta.txt and " +
                  "edges.txt.gz (or edges.npy)"};
    return loadDatasetDir(p);
  }
  if (fs::is_regular_file(p, ec))
    return loadEdgeFile(p);
  if (spec.find('/') == std::string::npos) {
    fs::path found = findDataset(spec);
    if (!found.empty())
      return loadDatasetDir(found);
  }
  return {{},
          "no graph '" + spec +
              "': expected a data-set folder, an edge-list file, a data-set "
              "name under $GNNC_DATASETS or ../shared/datasets, "
              "'powerlaw:nodes=N,edges=E' or 'batch:graphs=G'"};
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

HostGraph gnn::generatePowerLaw(int64_t numNodes, int64_t numEdges,
                                uint64_t seed, double alpha) {
  HostGraph g;
  g.numNodes = numNodes;
  if (numNodes <= 0 || numEdges <= 0)
    return g;
  SplitMix64 rng(seed);
  // Cumulative Zipf weights over ranks; ranks are mapped to node ids through
  // a seeded permutation so hubs are not all low ids.
  std::vector<double> cdf(numNodes);
  double total = 0;
  for (int64_t i = 0; i < numNodes; ++i)
    cdf[i] = (total += std::pow(static_cast<double>(i + 1), -alpha));
  std::vector<int64_t> perm(numNodes);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = numNodes - 1; i > 0; --i)
    std::swap(perm[i], perm[rng.below(i + 1)]);
  g.src.resize(numEdges);
  g.dst.resize(numEdges);
  for (int64_t e = 0; e < numEdges; ++e) {
    double u = rng.uniform() * total;
    int64_t rank = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    g.dst[e] = perm[std::min(rank, numNodes - 1)];
    g.src[e] = static_cast<int64_t>(rng.below(numNodes));
  }
  return g;
}

HostGraph gnn::generateBatch(int64_t numGraphs, int64_t minNodes,
                             int64_t maxNodes, double meanDegree,
                             uint64_t seed) {
  HostGraph g;
  SplitMix64 rng(seed);
  for (int64_t k = 0; k < numGraphs; ++k) {
    int64_t n = minNodes + static_cast<int64_t>(rng.below(maxNodes - minNodes + 1));
    int64_t base = g.numNodes;
    auto addUndirected = [&](int64_t a, int64_t b) {
      g.src.push_back(base + a);
      g.dst.push_back(base + b);
      g.src.push_back(base + b);
      g.dst.push_back(base + a);
    };
    for (int64_t i = 1; i < n; ++i)
      addUndirected(static_cast<int64_t>(rng.below(i)), i);
    int64_t extra = static_cast<int64_t>(std::llround(meanDegree * n / 2.0)) - (n - 1);
    for (int64_t i = 0; i < extra && n > 1; ++i) {
      int64_t a = static_cast<int64_t>(rng.below(n));
      int64_t b = static_cast<int64_t>(rng.below(n - 1));
      addUndirected(a, b >= a ? b + 1 : b);
    }
    g.graphIds.insert(g.graphIds.end(), n, k);
    g.numNodes += n;
  }
  return g;
}

/// A 64-bit mix of an edge (splitmix64's finaliser over both ends).
static uint64_t edgeHash(int64_t from, int64_t to) {
  uint64_t z = static_cast<uint64_t>(from) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(to) + 0x632BE59BD9B4E019ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

GraphStats gnn::computeStats(const HostGraph &g) {
  GraphStats s;
  int64_t n = g.numNodes, e = g.numEdges();
  s.nodes = n;
  s.edges = e;
  s.graphs = g.numGraphs();
  std::vector<int64_t> in(n, 0), out(n, 0);
  // Order-independent sums of the edges' hashes and of the reversed edges':
  // equal exactly when the multiset of edges is symmetric (up to hash
  // collisions).
  uint64_t forward = 0, backward = 0;
  s.csrOrder = true;
  for (int64_t i = 0; i < e; ++i) {
    ++in[g.dst[i]];
    ++out[g.src[i]];
    s.selfLoops += g.src[i] == g.dst[i];
    forward += edgeHash(g.src[i], g.dst[i]);
    backward += edgeHash(g.dst[i], g.src[i]);
    // CSR order: sorted by (destination, source), ties in input order.
    if (i && std::make_pair(g.dst[i - 1], g.src[i - 1]) >
                 std::make_pair(g.dst[i], g.src[i]))
      s.csrOrder = false;
  }
  s.directed = forward != backward;
  for (int64_t v = 0; v < n; ++v) {
    s.maxInDegree = std::max(s.maxInDegree, in[v]);
    s.maxOutDegree = std::max(s.maxOutDegree, out[v]);
    s.isolatedNodes += in[v] == 0 && out[v] == 0;
    int k = GraphStats::bucketOf(in[v]);
    ++s.rowsByDegree[k];
    s.edgesByDegree[k] += in[v];
  }
  // Quantiles: nearest rank on the sorted in-degrees, like the runtime.
  std::vector<int64_t> sorted = in;
  std::sort(sorted.begin(), sorted.end());
  auto rank = [&](double q) {
    if (n == 0)
      return int64_t(0);
    int64_t r = static_cast<int64_t>(std::ceil(q * n)) - 1;
    return sorted[std::min(std::max<int64_t>(r, 0), n - 1)];
  };
  s.p50 = rank(0.5);
  s.p90 = rank(0.9);
  s.p99 = rank(0.99);
  s.p999 = rank(0.999);
  if (g.graphIds.empty()) {
    s.largestGraph = s.smallestGraph = n;
  } else {
    // Nodes per graph id (ids are sorted; an id with no node counts 0).
    std::vector<int64_t> sizes(s.graphs, 0);
    for (int64_t v = 0; v < n; ++v)
      ++sizes[g.graphIds[v]];
    s.largestGraph = *std::max_element(sizes.begin(), sizes.end());
    s.smallestGraph = *std::min_element(sizes.begin(), sizes.end());
  }
  return s;
}
