// Schedules from real graphs' statistics (gnn-run's graph.stats_option):
// a low-degree citation graph (pubmed: mean in-degree 4.5, largest 171), a
// hub-heavy social graph (musae-github: mean 15, largest 9458) and a molecule
// batch (4096 graphs of 9 to 27 nodes, mean 2.1, largest 10).
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=nodes:19717,edges:88648,max-in:171,max-out:171,p50:2,p90:12,p99:35,p999:72,smallest-graph:19717,largest-graph:19717,rows-by-degree:9094/3357/2498/1872/1711/935/223/23/4,edges-by-degree:9094/6714/8408/11645/20482/20583/9353/1783/586' | FileCheck %s --check-prefix=CITATION
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=nodes:37700,edges:578006,max-in:9458,max-out:9458,p50:6,p90:30,p99:138,p999:665,smallest-graph:37700,largest-graph:37700,csr-order:1,rows-by-degree:5045/4620/6507/7552/6454/4179/2043/868/272/102/38/14/4/1/1,edges-by-degree:5045/9240/22358/47297/76314/95442/91213/76024/46462/34595/26267/20113/11093/7085/9458' | FileCheck %s --check-prefix=SOCIAL
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=nodes:74009,edges:155794,max-in:10,max-out:10,p50:2,p90:4,p99:6,p999:8,graphs:4096,smallest-graph:9,largest-graph:27,rows-by-degree:29713/22327/18057/3891/21,edges-by-degree:29713/44654/60092/21143/192' | FileCheck %s --check-prefix=MOLECULES
// RUN: gnn-opt %examples/gat.mlir --gnn-codegen-pipeline='stats=nodes:19717,edges:88648,max-in:171,max-out:171,p50:2,p90:12,p99:35,p999:72,smallest-graph:19717,largest-graph:19717,rows-by-degree:9094/3357/2498/1872/1711/935/223/23/4,edges-by-degree:9094/6714/8408/11645/20482/20583/9353/1783/586' | FileCheck %s --check-prefix=GAT-CITATION
// RUN: gnn-opt %examples/gat.mlir --gnn-codegen-pipeline='stats=nodes:37700,edges:578006,max-in:9458,max-out:9458,p50:6,p90:30,p99:138,p999:665,smallest-graph:37700,largest-graph:37700,csr-order:1,rows-by-degree:5045/4620/6507/7552/6454/4179/2043/868/272/102/38/14/4/1/1,edges-by-degree:5045/9240/22358/47297/76314/95442/91213/76024/46462/34595/26267/20113/11093/7085/9458' | FileCheck %s --check-prefix=GAT-SOCIAL
// RUN: gnn-opt %examples/gat.mlir --gnn-codegen-pipeline='stats=nodes:74009,edges:155794,max-in:10,max-out:10,p50:2,p90:4,p99:6,p999:8,graphs:4096,smallest-graph:9,largest-graph:27,rows-by-degree:29713/22327/18057/3891/21,edges-by-degree:29713/44654/60092/21143/192' | FileCheck %s --check-prefix=GAT-MOLECULES

// Citation: a warp per row (mean >= 4), no split (no row above 256 edges),
// softmax teams of 4 lanes (mean < 6).
// CITATION: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 0>
// CITATION: "edge_softmax_0" family = edge_softmax schedule = <mapping = row_parallel, lanes = 4, block = 256, vector = 1, split = 0>
// Social: hub rows split above 128 edges; softmax teams of 16 (mean 15).
// SOCIAL: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 128>
// SOCIAL: "edge_softmax_0" family = edge_softmax schedule = <mapping = row_parallel, lanes = 16, block = 256, vector = 1, split = 0>
// Molecules: teams as wide as the row needs (mean < 4), no split.
// MOLECULES: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 16, block = 64, vector = 4, split = 0>
// MOLECULES: "edge_softmax_0" family = edge_softmax schedule = <mapping = row_parallel, lanes = 4, block = 256, vector = 1, split = 0>
// Attention splits from shorter rows than aggregations (pubmed's 171).
// GAT-CITATION: family = attention schedule = <mapping = row_parallel, lanes = 32, {{.*}}, split = 32>
// GAT-SOCIAL: family = attention schedule = <mapping = row_parallel, lanes = 32, {{.*}}, split = 128>
// GAT-MOLECULES: family = attention schedule = <mapping = row_parallel, lanes = {{[0-9]+}}, {{.*}}, split = 0>
func.func @layer(%g: !gnn.graph, %x: tensor<?x64xf32>, %s: tensor<?x4xf32> {gnn.domain = "edge"}) -> (tensor<?x64xf32>, tensor<?x4xf32>) {
  %o = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  return %o, %a : tensor<?x64xf32>, tensor<?x4xf32>
}
