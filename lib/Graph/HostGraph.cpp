//===- HostGraph.cpp - a graph in host memory -----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Graph/HostGraph.h"
#include "gnn/Graph/EdgeHash.h"
#include "gnn/Graph/GzipReader.h"
#include "gnn/Tensor/Tensor.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <type_traits>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace gnn;

int64_t HostGraph::numRelations() const {
  int64_t r = 0;
  for (int64_t t : edgeTypes)
    r = std::max(r, t + 1);
  return r;
}

void gnn::assignRelations(HostGraph &graph, int64_t numRelations,
                          uint64_t seed) {
  SplitMix64 rng(seed ^ 0x7E1A710D5ull);
  graph.edgeTypes.resize(graph.src.size());
  for (int64_t &t : graph.edgeTypes)
    t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(numRelations)));
  graph.typedEmpty = graph.edgeTypes.empty();
}

std::string HostGraph::validate() const {
  std::ostringstream os;
  if (numNodes < 0)
    return "negative node count " + std::to_string(numNodes);
  if (src.size() != dst.size()) {
    os << "source list has " << src.size() << " entries but destination list has "
       << dst.size();
    return os.str();
  }
  if ((numSrc >= 0) != (numDst >= 0) ||
      (numSrc >= 0 && numNodes != std::max(numSrc, numDst))) {
    os << "a bipartite graph's sides (" << numSrc << ", " << numDst
       << ") must both be set, with " << numNodes
       << " nodes the larger of them";
    return os.str();
  }
  if (bipartite() && !graphIds.empty())
    return "a bipartite graph cannot be a batch of small graphs";
  if (typedEmpty && edgeTypes.empty() && !src.empty())
    return "a typed graph with edges needs an edge type per edge";
  if (!edgeTypes.empty() && edgeTypes.size() != src.size()) {
    os << "edge type list has " << edgeTypes.size()
       << " entries but the graph has " << src.size() << " edges";
    return os.str();
  }
  for (size_t e = 0; e < edgeTypes.size(); ++e)
    if (edgeTypes[e] < 0) {
      os << "edge " << e << " has the negative relation id " << edgeTypes[e];
      return os.str();
    }
  int64_t ns = srcNodes(), nd = dstNodes();
  for (size_t e = 0; e < src.size(); ++e) {
    if (src[e] < 0 || src[e] >= ns || dst[e] < 0 || dst[e] >= nd) {
      os << "edge " << e << " (" << src[e] << " -> " << dst[e]
         << ") has a node id outside ";
      if (bipartite())
        os << "[0, " << ns << ") -> [0, " << nd << ")";
      else
        os << "[0, " << numNodes << ")";
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
// File-system entries
//===----------------------------------------------------------------------===//

namespace {
/// What is at a path (following symbolic links).
enum class Entry { Missing, Folder, File, Other, Error };
} // namespace

/// What is at `p`. "Does not exist" (ENOENT, ENOTDIR) is `Missing`; any
/// other failure (a symbolic-link loop, a folder that cannot be searched) is
/// `Error`, with `error` set to `'P': REASON`. `Other` is a FIFO, a socket or
/// a device, with `what` saying which. Never throws, unlike the
/// std::filesystem calls without a std::error_code.
static Entry entryAt(const fs::path &p, std::string &error,
                     std::string *what = nullptr) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return Entry::Missing;
    error = "'" + p.string() + "': " + std::strerror(err);
    return Entry::Error;
  }
  if (S_ISDIR(st.st_mode))
    return Entry::Folder;
  if (S_ISREG(st.st_mode))
    return Entry::File;
  if (what)
    *what = describeFileType(st.st_mode);
  return Entry::Other;
}

//===----------------------------------------------------------------------===//
// Reading text files
//===----------------------------------------------------------------------===//

/// The longest line of an edge list, a graph-id list or `meta.txt`.
constexpr size_t kMaxLineBytes = size_t(1) << 20;
/// Text an edge list or a graph-id list may hold beyond its data lines
/// (comments, blank lines, whitespace): 16 MiB.
constexpr uint64_t kTextSlackBytes = uint64_t(1) << 24;
/// Text allowed per data line: two ids of up to 20 characters each, with
/// ample room for whitespace.
constexpr uint64_t kBytesPerDataLine = 128;
/// The most text `meta.txt` may hold (a few lines of `key value`).
constexpr uint64_t kMaxMetaBytes = uint64_t(1) << 20;

namespace {
/// The lines of a text file, gzip-compressed or not, decompressed as a
/// stream: only a block of text is held at a time, never the whole file, so
/// a caller can bound the text it accepts as it goes (a gzip bomb is refused
/// after the bound, not after decompressing it all).
class LineReader {
public:
  LineReader() : buffer(kMaxLineBytes) {}
  LineReader(const LineReader &) = delete;
  LineReader &operator=(const LineReader &) = delete;

  /// Opens `path` (a regular file, see ReadableFile).
  std::string open(const std::string &path) {
    ReadableFile file;
    if (std::string error = file.open(path); !error.empty())
      return error;
    return open(file, path);
  }
  /// Reads the text of `file`, opened on `path`, from its current offset.
  std::string open(ReadableFile &file, const std::string &path) {
    this->path = path;
    reader.open(file.release(), path);
    return "";
  }

  /// The next line, without its newline. Returns false at the end of the
  /// text, or on an error (a read error, a line longer than kMaxLineBytes),
  /// which is then in `error`.
  bool next(std::string_view &line, std::string &error) {
    for (;;) {
      if (const char *nl = static_cast<const char *>(
              std::memchr(buffer.data() + begin, '\n', end - begin))) {
        return take(static_cast<size_t>(nl - buffer.data()), 1, line);
      }
      if (atEnd)
        return begin < end && take(end, 0, line);
      if (begin > 0) {
        std::memmove(buffer.data(), buffer.data() + begin, end - begin);
        end -= begin;
        begin = 0;
      }
      if (end == buffer.size()) {
        error = path + ":" + std::to_string(number + 1) +
                ": line longer than " + std::to_string(kMaxLineBytes) +
                " bytes";
        return false;
      }
      int64_t n = reader.read(buffer.data() + end, buffer.size() - end, error);
      if (n < 0)
        return false;
      end += static_cast<size_t>(n);
      atEnd = n == 0;
    }
  }

  /// Bytes of text (decompressed) in the lines returned so far.
  uint64_t bytes() const { return consumed; }
  /// The number of the last line returned (from 1).
  int64_t lineNumber() const { return number; }
  /// `PATH:LINE` of the last line returned.
  std::string location() const {
    return path + ":" + std::to_string(number);
  }

private:
  /// Returns the line ending at `stop`, followed by `newline` bytes.
  bool take(size_t stop, size_t newline, std::string_view &line) {
    line = std::string_view(buffer.data() + begin, stop - begin);
    consumed += stop - begin + newline;
    begin = stop + newline;
    ++number;
    return true;
  }

  std::string path;
  GzipReader reader;
  std::vector<char> buffer;
  size_t begin = 0, end = 0;
  bool atEnd = false;
  uint64_t consumed = 0;
  int64_t number = 0;
};

/// A line of whitespace-separated integers, a comment (`#`) or blank.
enum class LineKind { Blank, Comment, Values, Malformed };

/// Splits `line` into integers (`values`); a comment's text after `#` goes to
/// `comment`, a malformed token to `bad`.
LineKind parseIntLine(std::string_view line, std::vector<int64_t> &values,
                      std::string_view &comment, std::string_view &bad) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  size_t p = 0, n = line.size();
  while (p < n && space(line[p]))
    ++p;
  if (p == n)
    return LineKind::Blank;
  if (line[p] == '#') {
    comment = line.substr(p + 1);
    return LineKind::Comment;
  }
  values.clear();
  while (p < n) {
    size_t q = p;
    while (q < n && !space(line[q]))
      ++q;
    std::string_view token = line.substr(p, q - p);
    // strtoll's syntax without its leading whitespace: [+-]digits.
    const char *first = token.data(), *last = token.data() + token.size();
    if (token.size() > 1 && token[0] == '+' && token[1] != '-')
      ++first;
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last) {
      bad = token;
      return LineKind::Malformed;
    }
    values.push_back(v);
    p = q;
    while (p < n && space(line[p]))
      ++p;
  }
  return LineKind::Values;
}
} // namespace

/// Parses a nonnegative count (`nodes`, `edges`, `# nodes N`): decimal
/// digits only. Returns -1 when malformed.
static int64_t parseCount(std::string_view text) {
  int64_t v = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0 ||
      text.empty())
    return -1;
  return v;
}

/// The message when `lines` has read more text than `count` data lines (of
/// `item`s, `items` in plural) may hold with the comments and blank lines
/// allowed (kBytesPerDataLine each plus kTextSlackBytes), else "". Checked
/// after every line, so that a file of blank lines (a gzip bomb of newlines)
/// is refused once past the bound, whatever its size.
static std::string checkTextBound(const LineReader &lines, int64_t nodes,
                                  int64_t count, const std::string &item,
                                  const std::string &items) {
  uint64_t allowed = kTextSlackBytes + kBytesPerDataLine * uint64_t(count);
  if (lines.bytes() <= allowed)
    return "";
  return lines.location() + ": refused after " +
         std::to_string(lines.bytes()) + " bytes of text (decompressed) for " +
         std::to_string(nodes) + " nodes and " + std::to_string(count) + " " +
         items + ": a list of " + items + " may hold " +
         std::to_string(kBytesPerDataLine) + " bytes per " + item + " and " +
         std::to_string(kTextSlackBytes) +
         " bytes of comments and blank lines";
}

namespace {
/// What is known of an edge list before it is read.
struct EdgeListBounds {
  /// The node count (a data-set's meta.txt), or -1.
  int64_t nodes = -1;
  /// The edge count (a data-set's meta.txt), or -1.
  int64_t edges = -1;
  /// Where the declared counts come from, for messages.
  std::string declaredBy;
};
} // namespace

/// Reads the `src dst` lines of `lines` into `g` as they are decompressed,
/// refusing text beyond what the edges read so far may hold (see
/// checkTextBound), more edges than declared, and more than fit in memory.
static bool readEdgeList(LineReader &lines, const std::string &path,
                         HostGraph &g, std::string &error,
                         int64_t &declaredNodes, const EdgeListBounds &bounds) {
  std::vector<int64_t> v;
  std::string_view line, comment, bad;
  declaredNodes = -1;
  // The line of the `# nodes N` header, once read.
  int64_t declaredLine = 0;
  int64_t maxId = -1;
  auto nodesSoFar = [&] {
    return bounds.nodes >= 0   ? bounds.nodes
           : declaredNodes >= 0 ? declaredNodes
                                : std::max<int64_t>(maxId, -1) + 1;
  };
  while (lines.next(line, error)) {
    switch (parseIntLine(line, v, comment, bad)) {
    case LineKind::Blank:
      break;
    case LineKind::Malformed:
      error = lines.location() + ": expected an integer but found '" +
              std::string(bad) + "'";
      return false;
    case LineKind::Comment: {
      // `# nodes N` fixes the node count.
      size_t first = comment.find_first_not_of(" \t\r");
      if (first == std::string_view::npos)
        break;
      std::string_view rest = comment.substr(first);
      size_t keyEnd = rest.find_first_of(" \t\r");
      if (rest.substr(0, keyEnd) != "nodes")
        break;
      std::string_view count =
          keyEnd == std::string_view::npos ? std::string_view()
                                           : rest.substr(keyEnd);
      size_t a = count.find_first_not_of(" \t\r");
      count = a == std::string_view::npos ? std::string_view()
                                          : count.substr(a);
      // Only blanks may follow N (a '# nodes 3 extra' header is refused,
      // not read as 3).
      size_t countEnd = count.find_first_of(" \t\r");
      bool trailing = countEnd != std::string_view::npos &&
                      count.find_first_not_of(" \t\r", countEnd) !=
                          std::string_view::npos;
      count = count.substr(0, countEnd);
      int64_t nodes = trailing ? -1 : parseCount(count);
      if (nodes < 0) {
        error = lines.location() +
                ": expected '# nodes N' with a nonnegative N but found '#" +
                std::string(comment) + "'";
        return false;
      }
      // A second `# nodes` line (two lists concatenated?) is refused: either
      // count may be the one meant.
      if (declaredLine > 0) {
        error = lines.location() + ": '# nodes' is repeated (first on line " +
                std::to_string(declaredLine) +
                "); an edge list declares its node count once";
        return false;
      }
      declaredLine = lines.lineNumber();
      declaredNodes = nodes;
      break;
    }
    case LineKind::Values:
      if (v.size() != 2) {
        error = lines.location() + ": expected 'src dst' but found " +
                std::to_string(v.size()) + " numbers";
        return false;
      }
      g.src.push_back(v[0]);
      g.dst.push_back(v[1]);
      maxId = std::max({maxId, v[0], v[1]});
      if (bounds.edges >= 0 && g.numEdges() > bounds.edges) {
        error = path + ": " + bounds.declaredBy + " declares " +
                std::to_string(bounds.edges) +
                " edges but the file has more (line " +
                std::to_string(lines.lineNumber()) + ")";
        return false;
      }
      // Refused once it cannot fit, not after reading it all.
      if ((g.numEdges() & 0xffff) == 0) {
        error = checkGraphSize(path, nodesSoFar(), g.numEdges());
        if (!error.empty())
          return false;
      }
      break;
    }
    error = checkTextBound(lines, nodesSoFar(), g.numEdges(), "edge", "edges");
    if (!error.empty())
      return false;
  }
  return error.empty();
}

namespace {
/// What readIntColumn reads: a data set's graph ids (one per node) or
/// relation ids (one per edge).
struct IntColumn {
  /// The most values there may be: the nodes, the edges.
  int64_t limit;
  /// What there is one value per ("nodes", "edges").
  const char *of;
  /// A value and values, for messages ("graph id", "graph ids").
  const char *item, *items;
};
} // namespace

/// Reads one integer per line, at most `column.limit`, of a graph of
/// `nodes` nodes.
static bool readIntColumn(const std::string &path, int64_t nodes,
                          const IntColumn &column, std::vector<int64_t> &out,
                          std::string &error) {
  LineReader lines;
  error = lines.open(path);
  if (!error.empty())
    return false;
  std::vector<int64_t> v;
  std::string_view line, comment, bad;
  while (lines.next(line, error)) {
    switch (parseIntLine(line, v, comment, bad)) {
    case LineKind::Blank:
    case LineKind::Comment:
      break;
    case LineKind::Malformed:
      error = lines.location() + ": expected an integer but found '" +
              std::string(bad) + "'";
      return false;
    case LineKind::Values:
      if (v.size() != 1) {
        error = lines.location() + ": expected one integer per line";
        return false;
      }
      if (static_cast<int64_t>(out.size()) == column.limit) {
        error = lines.location() + ": more " + column.items + " than the " +
                std::to_string(column.limit) + " " + column.of +
                " of the graph";
        return false;
      }
      out.push_back(v[0]);
      break;
    }
    error = checkTextBound(lines, nodes, static_cast<int64_t>(out.size()),
                           column.item, column.items);
    if (!error.empty())
      return false;
  }
  return error.empty();
}

/// readIntColumn of a data set's optional column file `file`: `Missing`
/// (`out` untouched) where there is none, `Error` with `error` set where it
/// cannot be read, else what is there.
static Entry readOptionalColumn(const fs::path &file, int64_t nodes,
                                const IntColumn &column,
                                std::vector<int64_t> &out,
                                std::string &error) {
  Entry entry = entryAt(file, error);
  if (entry == Entry::Error || entry == Entry::Missing)
    return entry;
  return readIntColumn(file.string(), nodes, column, out, error) ? entry
                                                                 : Entry::Error;
}

//===----------------------------------------------------------------------===//
// NumPy edge arrays
//===----------------------------------------------------------------------===//

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

/// Reads the edges of the `.npy` edge array open in `file` (see loadGraph)
/// into `g`, in large blocks; `nodes` is the node count when known (a data
/// set's meta.txt), else -1. Node ids are checked later, by
/// HostGraph::validate.
static bool readNpyEdges(ReadableFile &file, const std::string &path,
                         int64_t nodes, HostGraph &g, std::string &error) {
  std::istream &is = file.stream();
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
  if (h.shape.size() != 2 || (h.shape[0] != 2 && h.shape[1] != 2))
    return fail("expected shape [E, 2] or [2, E] but found " + shape.str());
  // A [2, 2] array is both, and the two readings are different graphs.
  if (h.shape[0] == 2 && h.shape[1] == 2)
    return fail("shape [2, 2] is ambiguous: it may hold two edges as rows "
                "([E, 2]) or the sources then the destinations ([2, E], "
                "PyG's edge_index), which are different graphs; write a graph "
                "of two edges as a text edge list ('src dst' per line)");
  bool rowsAreEdges = h.shape[1] == 2;
  uint64_t numEdges = rowsAreEdges ? h.shape[0] : h.shape[1];
  // Whether all sources come before all destinations in the file.
  bool planar = rowsAreEdges == h.fortranOrder;

  uint64_t size = h.itemSize();
  uint64_t fileSize = file.size();
  uint64_t found = fileSize - h.dataOffset;
  if (numEdges > (uint64_t(1) << 58))
    return fail("shape " + shape.str() + " is too large for a file of " +
                std::to_string(fileSize) + " bytes");
  uint64_t expected = numEdges * 2 * size;
  if (found != expected)
    return fail("expected " + std::to_string(expected) +
                " payload bytes for shape " + shape.str() + " of " +
                h.dtypeName() + " but found " + std::to_string(found));
  // A sparse file may claim any size: the edges must fit before they are
  // allocated.
  if (int64_t bytes = graphHostBytes(std::max<int64_t>(nodes, 0),
                                     static_cast<int64_t>(numEdges));
      bytes < 0 || bytes > hostMemoryBytes()) {
    error = checkGraphSize(path, std::max<int64_t>(nodes, 0),
                           static_cast<int64_t>(numEdges));
    return false;
  }

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

/// Reads `meta.txt`: `key value` lines, each key at most once (a repeated
/// key is an error naming both lines: which one was meant is not known), at
/// most kMaxMetaBytes of text.
static std::map<std::string, std::string> readMeta(const std::string &path,
                                                   std::string &error) {
  std::map<std::string, std::string> meta;
  std::map<std::string, int64_t> lineOf;
  LineReader lines;
  error = lines.open(path);
  if (!error.empty())
    return meta;
  std::string_view line;
  while (lines.next(line, error)) {
    if (lines.bytes() > kMaxMetaBytes) {
      error = lines.location() + ": more than " +
              std::to_string(kMaxMetaBytes) +
              " bytes of text (decompressed); meta.txt holds a few lines of "
              "'key value'";
      return meta;
    }
    std::istringstream ls{std::string(line)};
    std::string key, value;
    if (ls >> key) {
      std::getline(ls >> std::ws, value);
      while (!value.empty() && (value.back() == '\r' || value.back() == ' ' ||
                                value.back() == '\t'))
        value.pop_back();
      auto [first, added] = lineOf.emplace(key, lines.lineNumber());
      if (!added) {
        error = lines.location() + ": key '" + key +
                "' is repeated (first on line " +
                std::to_string(first->second) + "); each key may appear once";
        return meta;
      }
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
  // Which files there are, without following a symbolic-link loop or a FIFO
  // further than `stat`.
  fs::path metaFile = dir / "meta.txt", edgeFile = dir / "edges.txt.gz";
  Entry meta = entryAt(metaFile, r.error);
  Entry text = meta == Entry::Error ? Entry::Error : entryAt(edgeFile, r.error);
  Entry npy = text != Entry::Missing ? Entry::Missing
                                     : entryAt(dir / "edges.npy", r.error);
  if (!r.ok())
    return r;
  if (meta == Entry::Missing || (text == Entry::Missing && npy == Entry::Missing))
    return {{},
            "'" + dir.string() + "' is a folder without meta.txt and " +
                "edges.txt.gz (or edges.npy)"};
  auto metaValues = readMeta(metaFile.string(), r.error);
  if (!r.ok())
    return r;
  auto it = metaValues.find("nodes");
  if (it == metaValues.end()) {
    r.error = metaFile.string() + ": no 'nodes' line";
    return r;
  }
  g.numNodes = parseCount(it->second);
  if (g.numNodes < 0) {
    r.error = metaFile.string() +
              ": expected a nonnegative node count but found '" + it->second +
              "'";
    return r;
  }
  // A bipartite graph: `src_nodes S` and `dst_nodes D`, both or neither.
  auto srcNodes = metaValues.find("src_nodes"),
       dstNodes = metaValues.find("dst_nodes");
  if ((srcNodes == metaValues.end()) != (dstNodes == metaValues.end())) {
    r.error = metaFile.string() + ": a bipartite graph needs both " +
              "'src_nodes' and 'dst_nodes' lines but there is only '" +
              (srcNodes == metaValues.end() ? "dst_nodes" : "src_nodes") +
              "'";
    return r;
  }
  if (srcNodes != metaValues.end()) {
    g.numSrc = parseCount(srcNodes->second);
    g.numDst = parseCount(dstNodes->second);
    if (g.numSrc < 0 || g.numDst < 0) {
      auto bad = g.numSrc < 0 ? srcNodes : dstNodes;
      r.error = metaFile.string() + ": expected a nonnegative '" + bad->first +
                "' count but found '" + bad->second + "'";
      return r;
    }
    if (g.numNodes != std::max(g.numSrc, g.numDst)) {
      r.error = metaFile.string() + ": expected 'nodes' to be the larger of " +
                "'src_nodes' (" + std::to_string(g.numSrc) +
                ") and 'dst_nodes' (" + std::to_string(g.numDst) +
                ") but found " + std::to_string(g.numNodes);
      return r;
    }
  }
  EdgeListBounds bounds;
  bounds.nodes = g.numNodes;
  bounds.declaredBy = "meta.txt";
  auto edges = metaValues.find("edges");
  if (edges != metaValues.end()) {
    bounds.edges = parseCount(edges->second);
    if (bounds.edges < 0) {
      r.error = metaFile.string() +
                ": expected a nonnegative edge count but found '" +
                edges->second + "'";
      return r;
    }
  }
  // What meta.txt declares must fit before anything is read.
  r.error = checkGraphSize(dir.string(), g.numNodes,
                           std::max<int64_t>(bounds.edges, 0));
  if (!r.ok())
    return r;
  // The edges as text, else as a NumPy array.
  if (text == Entry::Missing)
    edgeFile = dir / "edges.npy";
  ReadableFile file;
  r.error = file.open(edgeFile.string());
  if (!r.ok())
    return r;
  if (text == Entry::Missing) {
    if (!readNpyEdges(file, edgeFile.string(), g.numNodes, g, r.error))
      return r;
  } else {
    if (bounds.edges > 0) {
      g.src.reserve(bounds.edges);
      g.dst.reserve(bounds.edges);
    }
    LineReader lines;
    int64_t declared;
    r.error = lines.open(file, edgeFile.string());
    if (!r.ok() ||
        !readEdgeList(lines, edgeFile.string(), g, r.error, declared, bounds))
      return r;
  }
  if (bounds.edges >= 0 && bounds.edges != g.numEdges()) {
    r.error = edgeFile.string() + ": meta.txt declares " +
              std::to_string(bounds.edges) + " edges but the file has " +
              std::to_string(g.numEdges());
    return r;
  }
  r.error = checkGraphSize(dir.string(), g.numNodes, g.numEdges());
  if (!r.ok())
    return r;
  if (readOptionalColumn(dir / "graph_ids.txt.gz", g.numNodes,
                         {g.numNodes, "nodes", "graph id", "graph ids"},
                         g.graphIds, r.error) == Entry::Error)
    return r;
  // A typed graph: a relation id per edge (an empty file for one without
  // edges).
  fs::path typeFile = dir / "edge_types.txt.gz";
  Entry types = readOptionalColumn(
      typeFile, g.numNodes,
      {g.numEdges(), "edges", "relation id", "relation ids"}, g.edgeTypes,
      r.error);
  if (types == Entry::Error)
    return r;
  g.typedEmpty = types != Entry::Missing && g.edgeTypes.empty();
  if (types != Entry::Missing && g.edgeTypes.size() != g.src.size()) {
    r.error = typeFile.string() + ": " + std::to_string(g.edgeTypes.size()) +
              " relation ids for the " + std::to_string(g.numEdges()) +
              " edges of the graph (expected one per edge)";
    return r;
  }
  r.error = g.validate();
  if (!r.ok())
    r.error = dir.string() + ": " + r.error;
  return r;
}

static GraphOrError loadEdgeFile(const fs::path &path) {
  GraphOrError r;
  HostGraph &g = r.graph;
  g.name = path.filename().string();
  std::string file = path.string();
  ReadableFile in;
  r.error = in.open(file);
  if (!r.ok())
    return r;
  // A `.npy` array by its extension or its magic bytes, else text.
  char magic[6] = {};
  ssize_t n;
  do
    n = ::pread(in.fd(), magic, sizeof(magic), 0);
  while (n < 0 && errno == EINTR);
  bool npy = path.extension() == ".npy" ||
             (n == 6 && std::memcmp(magic, "\x93NUMPY", 6) == 0);
  int64_t declared = -1;
  if (npy) {
    if (!readNpyEdges(in, file, -1, g, r.error))
      return r;
  } else {
    LineReader lines;
    r.error = lines.open(in, file);
    if (!r.ok() || !readEdgeList(lines, file, g, r.error, declared, {}))
      return r;
  }
  int64_t maxId = -1;
  for (int64_t e = 0; e < g.numEdges(); ++e)
    maxId = std::max({maxId, g.src[e], g.dst[e]});
  if (declared < 0 && maxId == std::numeric_limits<int64_t>::max()) {
    r.error = file + ": node id " + std::to_string(maxId) + " is too large";
    return r;
  }
  g.numNodes = declared >= 0 ? declared : maxId + 1;
  r.error = checkGraphSize(file, g.numNodes, g.numEdges());
  if (!r.ok())
    return r;
  r.error = g.validate();
  if (!r.ok())
    r.error = file + ": " + r.error;
  return r;
}

std::string gnn::edgeListOmissions(const HostGraph &graph) {
  std::vector<std::string> parts;
  if (!graph.graphIds.empty())
    parts.push_back("graph ids (a batch of " +
                    std::to_string(graph.numGraphs()) + " small graphs)");
  if (graph.bipartite())
    parts.push_back("bipartite split (" + std::to_string(graph.numSrc) +
                    " source and " + std::to_string(graph.numDst) +
                    " destination nodes)");
  if (graph.typed())
    parts.push_back("relation ids (" +
                    std::to_string(graph.numRelations()) + " relations)");
  std::string all;
  for (const std::string &part : parts)
    all += (all.empty() ? "" : " and ") + part;
  return all;
}

std::string gnn::writeEdgeList(const std::string &path,
                               const HostGraph &graph) {
  if (std::string lost = edgeListOmissions(graph); !lost.empty())
    return "cannot write '" + path + "' as an edge list: it has no room for " +
           "the graph's " + lost;
  errno = 0;
  std::ofstream os(path, std::ios::binary);
  if (!os)
    return "cannot write '" + path + "': " +
           (errno ? std::strerror(errno) : "cannot open it");
  os << "# nodes " << graph.numNodes << "\n";
  std::string line;
  for (int64_t e = 0; e < graph.numEdges(); ++e) {
    line = std::to_string(graph.src[e]);
    line += ' ';
    line += std::to_string(graph.dst[e]);
    line += '\n';
    os.write(line.data(), line.size());
  }
  return closeWrittenFile(os, path);
}

/// Writes `lines(emit)`'s text to `path`, gzip-compressed; `lines` calls
/// `emit` once per line. Returns "" or the error; a file not written whole
/// is removed.
template <typename Lines>
static std::string writeGzipLines(const std::string &path, Lines lines) {
  errno = 0;
  gzFile gz = gzopen(path.c_str(), "wb");
  if (!gz)
    return "cannot write '" + path + "': " +
           (errno ? std::strerror(errno) : "cannot open it");
  bool ok = true;
  std::string buffer;
  auto flush = [&] {
    if (ok && !buffer.empty())
      ok = gzwrite(gz, buffer.data(), static_cast<unsigned>(buffer.size())) ==
           static_cast<int>(buffer.size());
    buffer.clear();
  };
  lines([&](const std::string &line) {
    buffer += line;
    buffer += '\n';
    if (buffer.size() >= (1u << 20))
      flush();
  });
  flush();
  int errnum = Z_OK;
  std::string reason = ok ? "" : gzerror(gz, &errnum);
  errno = 0;
  if (gzclose(gz) != Z_OK && ok)
    reason = errno ? std::strerror(errno) : "the write failed";
  if (ok && reason.empty())
    return "";
  std::remove(path.c_str());
  return "cannot write '" + path + "': " +
         (reason.empty() ? std::string("the write failed") : reason);
}

/// `values` (one per line) to `path`, gzip-compressed.
static std::string writeIntColumn(const std::string &path,
                                  const std::vector<int64_t> &values) {
  return writeGzipLines(path, [&](auto emit) {
    for (int64_t v : values)
      emit(std::to_string(v));
  });
}

std::string gnn::writeDatasetDir(const std::string &dir,
                                 const HostGraph &graph) {
  if (std::string why = graph.validate(); !why.empty())
    return "cannot write '" + dir + "': " + why;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return "cannot write '" + dir + "': " + ec.message();
  fs::path folder(dir);
  // The optional files of the layout this graph has not: left from an
  // earlier dump into the folder, they would be read back as its.
  for (auto [file, has] :
       {std::pair<const char *, bool>{"graph_ids.txt.gz",
                                      !graph.graphIds.empty()},
        {"edge_types.txt.gz", graph.typed()},
        {"edges.npy", false}}) {
    if (has)
      continue;
    fs::remove(folder / file, ec);
    if (ec)
      return "cannot write '" + dir + "': cannot remove '" +
             (folder / file).string() + "': " + ec.message();
  }
  std::ostringstream meta;
  meta << "nodes " << graph.numNodes << "\nedges " << graph.numEdges()
       << "\n";
  if (graph.bipartite())
    meta << "src_nodes " << graph.numSrc << "\ndst_nodes " << graph.numDst
         << "\n";
  std::string metaPath = (folder / "meta.txt").string();
  errno = 0;
  std::ofstream os(metaPath, std::ios::binary);
  if (!os)
    return "cannot write '" + metaPath + "': " +
           (errno ? std::strerror(errno) : "cannot open it");
  os << meta.str();
  if (std::string err = closeWrittenFile(os, metaPath); !err.empty())
    return err;
  std::string err =
      writeGzipLines((folder / "edges.txt.gz").string(), [&](auto emit) {
        for (int64_t e = 0; e < graph.numEdges(); ++e)
          emit(std::to_string(graph.src[e]) + " " +
               std::to_string(graph.dst[e]));
      });
  if (err.empty() && !graph.graphIds.empty())
    err = writeIntColumn((folder / "graph_ids.txt.gz").string(),
                         graph.graphIds);
  if (err.empty() && graph.typed())
    err = writeIntColumn((folder / "edge_types.txt.gz").string(),
                         graph.edgeTypes);
  return err;
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
    std::string key = item.substr(0, eq);
    if (!out.emplace(key, item.substr(eq + 1)).second) {
      error = "'" + key + "' given twice";
      return false;
    }
  }
  return true;
}

namespace {
/// Typed access to generator options with errors naming the key.
struct Options {
  std::map<std::string, std::string> values;
  std::string &error;
  std::string spec;

  /// A nonnegative number; with `whole` (counts, seeds) an integer.
  bool number(const std::string &key, double &out, bool required,
              bool whole = true) {
    auto it = values.find(key);
    if (it == values.end()) {
      if (required)
        error = "'" + spec + "': missing '" + key + "='";
      return !required;
    }
    char *end = nullptr;
    out = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isfinite(out) || out < 0 ||
        (whole && out != std::floor(out))) {
      error = "'" + spec + "': expected a nonnegative " +
              (whole ? "integer" : "number") + " for '" + key +
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
  // relations=R: a typed graph (every generator).
  bool typed = o.values.count("relations") > 0;
  double relations = 0, typesSeed = 1;
  if (!o.number("relations", relations, false, /*whole=*/false))
    return r;
  if (typed && (relations < 1 || relations > 2147483647.0 ||
                relations != std::floor(relations))) {
    r.error = "'" + spec + "': expected relations to be an integer in [1, "
              "2^31 - 1] but found '" + formatCount(relations) + "'";
    return r;
  }
  if (kind == "powerlaw" || kind == "bipartite") {
    bool two = kind == "bipartite";
    double nodes = 0, edges = 0, seed = 1, alpha = 1.0, ns = 0, nd = 0;
    if ((two ? !o.number("src", ns, true) || !o.number("dst", nd, true)
             : !o.number("nodes", nodes, true)) ||
        !o.number("edges", edges, true) || !o.number("seed", seed, false) ||
        !o.number("alpha", alpha, false, /*whole=*/false) || !o.done())
      return r;
    typesSeed = seed;
    if (two)
      nodes = std::max(ns, nd);
    if ((two ? std::min(ns, nd) : nodes) < 1 && edges > 0) {
      r.error = "'" + spec + "': a graph with edges needs at least one " +
                (two ? "source and one destination node" : "node");
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
    if (two)
      r.graph = generateBipartite(
          static_cast<int64_t>(ns), static_cast<int64_t>(nd),
          static_cast<int64_t>(edges), static_cast<uint64_t>(seed), alpha);
    else
      r.graph = generatePowerLaw(static_cast<int64_t>(nodes),
                                 static_cast<int64_t>(edges),
                                 static_cast<uint64_t>(seed), alpha);
  } else {
    double graphs = 0, minN = 10, maxN = 30, degree = 2.2, seed = 1;
    if (!o.number("graphs", graphs, true) || !o.number("min", minN, false) ||
        !o.number("max", maxN, false) ||
        !o.number("degree", degree, false, /*whole=*/false) ||
        !o.number("seed", seed, false) || !o.done())
      return r;
    typesSeed = seed;
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
  if (typed)
    assignRelations(r.graph, static_cast<int64_t>(relations),
                    static_cast<uint64_t>(typesSeed));
  r.graph.name = spec;
  return r;
}

/// The data-set folder `name` under $GNNC_DATASETS, else under
/// `shared/datasets` or `../shared/datasets` from the working directory and
/// up to 6 folders above it (a folder there must hold meta.txt). Empty when
/// there is none; a path that cannot be looked at (a symbolic-link loop, a
/// folder that cannot be searched) sets `error`.
static fs::path findDataset(const std::string &name, std::string &error) {
  if (const char *env = std::getenv("GNNC_DATASETS"); env && *env) {
    fs::path p = fs::path(env) / name;
    Entry e = entryAt(p, error);
    if (e == Entry::Error)
      return {};
    if (e == Entry::Folder)
      return p;
  }
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  if (ec)
    return {};
  for (int up = 0; up < 6; ++up) {
    for (const char *rel : {"shared/datasets", "../shared/datasets"}) {
      fs::path p = dir / rel / name;
      Entry e = entryAt(p, error);
      if (e == Entry::Error)
        return {};
      if (e != Entry::Folder)
        continue;
      Entry meta = entryAt(p / "meta.txt", error);
      if (meta == Entry::Error)
        return {};
      if (meta != Entry::Missing)
        return p;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir)
      break;
    dir = dir.parent_path();
  }
#ifdef GNNC_SHIPPED_DATASETS
  // Last, the copies shipped in the source tree (Cora and Citeseer).
  fs::path shipped = fs::path(GNNC_SHIPPED_DATASETS) / name;
  Entry e = entryAt(shipped, error);
  if (e == Entry::Error)
    return {};
  if (e == Entry::Folder &&
      entryAt(shipped / "meta.txt", error) == Entry::File)
    return shipped;
#endif
  return {};
}

GraphOrError gnn::loadGraph(const std::string &spec) {
  if (spec.rfind("powerlaw:", 0) == 0 || spec.rfind("bipartite:", 0) == 0 ||
      spec.rfind("batch:", 0) == 0)
    return generateFromSpec(spec);
  GraphOrError r;
  fs::path p(spec);
  std::string what;
  switch (entryAt(p, r.error, &what)) {
  case Entry::Error:
    return r;
  case Entry::Folder:
    return loadDatasetDir(p);
  case Entry::File:
    return loadEdgeFile(p);
  case Entry::Other:
    return {{},
            "'" + spec + "' is " + what +
                ", not a graph file or a data-set folder"};
  case Entry::Missing:
    break;
  }
  if (spec.find('/') == std::string::npos) {
    fs::path found = findDataset(spec, r.error);
    if (!r.ok())
      return r;
    if (!found.empty())
      return loadDatasetDir(found);
  }
  return {{},
          "no graph '" + spec +
              "': expected a data-set folder, an edge-list file, a data-set "
              "name under $GNNC_DATASETS, ../shared/datasets or "
              "the repository's data/, "
              "'powerlaw:nodes=N,edges=E', 'bipartite:src=S,dst=D,edges=E' "
              "or 'batch:graphs=G'"};
}

GraphStats gnn::computeStats(const HostGraph &g) {
  GraphStats s;
  int64_t n = g.numNodes, e = g.numEdges();
  s.nodes = n;
  s.edges = e;
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
    // CSR order: sorted by destination, ties in input order.
    if (i && g.dst[i - 1] > g.dst[i])
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
  std::vector<int64_t> offsets = graphOffsets(g);
  s.graphs = static_cast<int64_t>(offsets.size()) - 1;
  s.largestGraph = s.smallestGraph = 0;
  for (int64_t k = 0; k < s.graphs; ++k) {
    int64_t size = offsets[k + 1] - offsets[k];
    s.largestGraph = k ? std::max(s.largestGraph, size) : size;
    s.smallestGraph = k ? std::min(s.smallestGraph, size) : size;
  }
  return s;
}

std::vector<int64_t> gnn::graphOffsets(const HostGraph &g) {
  int64_t n = g.numNodes;
  std::vector<int64_t> offsets;
  if (!g.graphIds.empty()) {
    offsets.assign(g.numGraphs() + 1, 0);
    for (int64_t v = 0; v < n; ++v)
      ++offsets[g.graphIds[v] + 1];
    for (size_t k = 1; k < offsets.size(); ++k)
      offsets[k] += offsets[k - 1];
    return offsets;
  }
  // How many edges cross each position: +1 after an edge's lower end, -1
  // after its upper end.
  std::vector<int64_t> cover(n + 1, 0);
  for (int64_t e = 0; e < g.numEdges(); ++e) {
    int64_t lo = std::min(g.src[e], g.dst[e]),
            hi = std::max(g.src[e], g.dst[e]);
    if (lo < hi) {
      ++cover[lo + 1];
      --cover[hi + 1];
    }
  }
  int64_t crossing = 0;
  for (int64_t i = 0; i <= n; ++i) {
    crossing += cover[i];
    if (crossing == 0)
      offsets.push_back(i);
  }
  return offsets;
}
