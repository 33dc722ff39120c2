// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:2.0' | FileCheck %s --check-prefix=SPARSE
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:40.0' | FileCheck %s --check-prefix=DENSE
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:13.0,max-in:2000' | FileCheck %s --check-prefix=HUB

// Aggregations are row-parallel with the lanes over the features (float4 for
// widths divisible by 4); with long rows the whole warp takes the row.
// Softmax teams grow with the mean degree; sddmm is edge-parallel, its dot
// product of 8 floats read as two float4 (one lane: a lane takes up to 4
// vectors). The softmax here is returned, so nothing is fused.

// SPARSE-LABEL: func.func @schedules
// SPARSE: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 16, block = 64, vector = 4, split = 0>
// SPARSE: "spmm_1" family = aggregation schedule = <mapping = row_parallel, lanes = 4, block = 64, vector = 2, split = 0>
// SPARSE: "sddmm_0" family = edge_map schedule = <mapping = edge_parallel, lanes = 1, block = 256, vector = 4, split = 0>
// SPARSE: "edge_softmax_0" family = edge_softmax schedule = <mapping = row_parallel, lanes = 4, block = 256, vector = 1, split = 0>
// SPARSE: "degree_0" family = degree schedule = <mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0>
// DENSE-LABEL: func.func @schedules
// DENSE: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 0>
// DENSE: "spmm_1" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 2, split = 0>
// DENSE: "edge_softmax_0" family = edge_softmax schedule = <mapping = row_parallel, lanes = 32, block = 256, vector = 1, split = 0>
func.func @schedules(%g: !gnn.graph, %x: tensor<?x64xf32>, %y: tensor<?x6xf32>, %h: tensor<?x4x8xf32>)
    -> (tensor<?x64xf32>, tensor<?x6xf32>, tensor<?x4xf32>, tensor<?xf32>) {
  %a = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %b = gnn.spmm mean %g, %y : tensor<?x6xf32> -> tensor<?x6xf32>
  %s = gnn.sddmm dot %g, %h, %h : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
  %p = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %d = gnn.degree %g : tensor<?xf32>
  return %a, %b, %p, %d : tensor<?x64xf32>, tensor<?x6xf32>, tensor<?x4xf32>, tensor<?xf32>
}

// Attention is row-parallel over the spmm's row (4 heads x 16 = 64 floats)
// with lanes like an spmm, and its heavy rows are split like an aggregation's.
// The vector must also divide one head's features: with 2 per head it is 2
// although the row of 8 floats alone would take float4.

// SPARSE-LABEL: func.func @attention
// SPARSE: "attention_0" family = attention schedule = <mapping = row_parallel, lanes = 16, block = 64, vector = 4, split = 0>
// SPARSE: "attention_1" family = attention schedule = <mapping = row_parallel, lanes = 4, block = 64, vector = 2, split = 0>
// DENSE-LABEL: func.func @attention
// DENSE: "attention_0" family = attention schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 0>
// DENSE: "attention_1" family = attention schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 2, split = 0>
// HUB-LABEL: func.func @attention
// HUB: "attention_0" family = attention schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 128>
func.func @attention(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>, %k: tensor<?x4x2xf32>)
    -> (tensor<?x4x16xf32>, tensor<?x4x2xf32>) {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %o = gnn.spmm sum %g, %v weights(%a : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %s2 = gnn.sddmm dot %g, %k, %k : tensor<?x4x2xf32>, tensor<?x4x2xf32> -> tensor<?x4xf32>
  %a2 = gnn.edge_softmax %g, %s2 : tensor<?x4xf32>
  %o2 = gnn.spmm sum %g, %k weights(%a2 : tensor<?x4xf32>) : tensor<?x4x2xf32> -> tensor<?x4x2xf32>
  return %o, %o2 : tensor<?x4x16xf32>, tensor<?x4x2xf32>
}

// A fused gather-reduce is scheduled like its reduce (row-parallel over the
// 6 features), not like the gather it starts with.

// SPARSE-LABEL: func.func @aggregation
// SPARSE: "aggregation_0" family = aggregation schedule = <mapping = row_parallel, lanes = 4, block = 64, vector = 2, split = 0>
// HUB-LABEL: func.func @aggregation
// HUB: "aggregation_0" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 2, split = 128>
func.func @aggregation(%g: !gnn.graph, %x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %e = gnn.gather src %g, %x : tensor<?x6xf32> -> tensor<?x6xf32>
  %r = gnn.reduce max %g, %e : tensor<?x6xf32> -> tensor<?x6xf32>
  return %r : tensor<?x6xf32>
}

// Edge maps: the team splits each dot product of an sddmm into vectors of
// 16 bytes (8 bf16, 4 f32; 1 where nothing larger divides it), a lane per 4
// vectors up to a warp: 128 bf16 are 16 vectors on 4 lanes, 128 f32 32 on
// 8, 3 f32 3 scalars on one; the statistics do not matter. Without a dot
// product: element-wise sddmms a thread per element, a gather's group a
// thread per 16-byte run of its row (vector = 4 f32 of 128).

// SPARSE-LABEL: func.func @edge_maps
// SPARSE: "sddmm_0" family = edge_map schedule = <mapping = edge_parallel, lanes = 4, block = 256, vector = 8, split = 0>
// SPARSE: "sddmm_1" family = edge_map schedule = <mapping = edge_parallel, lanes = 8, block = 256, vector = 4, split = 0>
// SPARSE: "sddmm_2" family = edge_map schedule = <mapping = edge_parallel, lanes = 1, block = 256, vector = 1, split = 0>
// SPARSE: "sddmm_3" family = edge_map schedule = <mapping = edge_parallel, lanes = 1, block = 256, vector = 1, split = 0>
// SPARSE: "gather_0" family = edge_map schedule = <mapping = edge_parallel, lanes = 1, block = 256, vector = 4, split = 0>
// DENSE-LABEL: func.func @edge_maps
// DENSE: "sddmm_0" family = edge_map schedule = <mapping = edge_parallel, lanes = 4, block = 256, vector = 8, split = 0>
func.func @edge_maps(%g: !gnn.graph, %h: tensor<?x128xbf16>, %x: tensor<?x128xf32>, %o: tensor<?x2x3xf32>)
    -> (tensor<?xbf16>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x128xf32>, tensor<?x128xf32>) {
  %a = gnn.sddmm dot %g, %h, %h : tensor<?x128xbf16>, tensor<?x128xbf16> -> tensor<?xbf16>
  %b = gnn.sddmm dot %g, %x, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?xf32>
  %c = gnn.sddmm dot %g, %o, %o : tensor<?x2x3xf32>, tensor<?x2x3xf32> -> tensor<?x2xf32>
  %d = gnn.sddmm mul %g, %x, %x : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %e = gnn.gather src %g, %x : tensor<?x128xf32> -> tensor<?x128xf32>
  return %a, %b, %c, %d, %e : tensor<?xbf16>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x128xf32>, tensor<?x128xf32>
}
