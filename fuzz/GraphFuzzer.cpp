//===- GraphFuzzer.cpp - the graph loaders ----------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// loadGraph on one kind of file, chosen at build time:
//  - text: the input is an edge-list file `g.txt`;
//  - gzip: the first byte chooses: even, the rest is gzip-compressed into
//    `g.txt.gz` (the fuzzer mutates the text); odd, the rest is written as
//    is (the fuzzer mutates the stream);
//  - folder: `meta.txt`, a NUL, then the edges: `edges.npy` when they start
//    with the `.npy` magic, else compressed into `edges.txt.gz`; a second
//    NUL starts `graph_ids.txt.gz`, a third `edge_types.txt.gz`;
//  - npy: the input is an edge array `g.npy`.
// A loaded graph must pass HostGraph::validate. The host memory the loaders
// may plan for is capped at 64 MiB, far below the fuzzer's RSS limit.
//
//===----------------------------------------------------------------------===//

#include "FuzzFiles.h"

#include "gnn/Graph/HostGraph.h"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace fs = std::filesystem;
using namespace gnn::fuzz;

static std::string writeInput(const uint8_t *data, size_t size) {
  const fs::path &dir = scratchDir();
#if defined(GNNC_FUZZ_LOADER_text)
  writeFile(dir / "g.txt", data, size);
  return (dir / "g.txt").string();
#elif defined(GNNC_FUZZ_LOADER_gzip)
  if (size == 0)
    return "";
  if (data[0] & 1)
    writeFile(dir / "g.txt.gz", data + 1, size - 1);
  else
    writeGzip(dir / "g.txt.gz", data + 1, size - 1);
  return (dir / "g.txt.gz").string();
#elif defined(GNNC_FUZZ_LOADER_folder)
  std::string_view in(reinterpret_cast<const char *>(data), size);
  size_t cut = in.find('\0');
  if (cut == std::string_view::npos)
    return "";
  std::string_view meta = in.substr(0, cut), edges = in.substr(cut + 1),
                   ids, types;
  bool npy = edges.substr(0, 6) == "\x93NUMPY";
  if (!npy) {
    if (size_t cut2 = edges.find('\0'); cut2 != std::string_view::npos) {
      ids = edges.substr(cut2 + 1);
      edges = edges.substr(0, cut2);
    }
    if (size_t cut3 = ids.find('\0'); cut3 != std::string_view::npos) {
      types = ids.substr(cut3 + 1);
      ids = ids.substr(0, cut3);
    }
  }
  fs::path folder = dir / "set";
  std::error_code ec;
  fs::remove_all(folder, ec);
  fs::create_directory(folder);
  writeFile(folder / "meta.txt", meta.data(), meta.size());
  if (npy)
    writeFile(folder / "edges.npy", edges.data(), edges.size());
  else
    writeGzip(folder / "edges.txt.gz", edges.data(), edges.size());
  if (!ids.empty())
    writeGzip(folder / "graph_ids.txt.gz", ids.data(), ids.size());
  if (!types.empty())
    writeGzip(folder / "edge_types.txt.gz", types.data(), types.size());
  return folder.string();
#elif defined(GNNC_FUZZ_LOADER_npy)
  writeFile(dir / "g.npy", data, size);
  return (dir / "g.npy").string();
#else
#error "define GNNC_FUZZ_LOADER_<text|gzip|folder|npy>"
#endif
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool capped = (gnn::setHostMemoryCap(64 << 20), true);
  (void)capped;
  std::string path = writeInput(data, size);
  if (path.empty())
    return -1;
  gnn::GraphOrError r = gnn::loadGraph(path);
  if (!r.error.empty())
    return 0;
  if (std::string why = r.graph.validate(); !why.empty()) {
    std::fprintf(stderr, "loaded an invalid graph: %s\n", why.c_str());
    std::abort();
  }
  return 0;
}
