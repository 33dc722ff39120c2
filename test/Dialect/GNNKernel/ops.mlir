// RUN: gnn-opt %s | gnn-opt | FileCheck %s
// RUN: gnn-opt %s -mlir-print-op-generic | gnn-opt | FileCheck %s

// CHECK-LABEL: gnnk.kernel @spmm_0
// CHECK: gnnk.for_rows
// CHECK: gnnk.for_edges
// CHECK: gnnk.team_reduce
// CHECK: gnnk.store
gnnk.kernel @spmm_0(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                    %out: memref<?xf32> {gnnk.result = 0 : i64},
                    %ptr: memref<?xi32> {gnnk.graph = "csr_row_ptr"},
                    %col: memref<?xi32> {gnnk.graph = "csr_col"},
                    %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> ((s0 * 32) ceildiv 256)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_rows %n lanes 32 {
  ^bb0(%row: index, %lane: index):
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f64
    %g = arith.divui %lane, %c2 : index
    %fl = arith.remui %lane, %c2 : index
    %b32 = gnnk.load %ptr[%row] : memref<?xi32> -> i32
    %r1 = arith.addi %row, %c1 : index
    %e32 = gnnk.load %ptr[%r1] : memref<?xi32> -> i32
    %b0 = arith.index_cast %b32 : i32 to index
    %e = arith.index_cast %e32 : i32 to index
    %b = arith.addi %b0, %g : index
    %acc = gnnk.for_edges %b to %e step %c2 nbrs(%col : memref<?xi32>) iter_args(%zero : f64) -> f64 attributes {unroll = 4 : i64} {
    ^bb0(%slot: index, %src: index, %a: f64):
      %base = arith.muli %src, %c64 : index
      %i = arith.addi %base, %fl : index
      %v = gnnk.load %x[%i] : memref<?xf32> -> f32
      %vd = arith.extf %v : f32 to f64
      %s = arith.addf %a, %vd : f64
      gnnk.yield %s : f64
    }
    %t = gnnk.team_reduce %acc stride 1 width 32 : f64 {
    ^bb0(%p: f64, %q: f64):
      %s = arith.addf %p, %q : f64
      gnnk.yield %s : f64
    }
    %f = arith.truncf %t : f64 to f32
    %o = arith.muli %row, %c64 : index
    %oi = arith.addi %o, %fl : index
    gnnk.store %f to %out[%oi] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// CHECK-LABEL: func.func @host
// CHECK: gnnk.launch @spmm_0[%{{.*}}] (%{{.*}}) rows
func.func @host(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = gnnk.launch @spmm_0[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0)>] : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// A launch on a bipartite graph names its type after the function type; its
// rows may be either side's (s3: sources, s4: destinations).
// CHECK-LABEL: func.func @host_bipartite
// CHECK: gnnk.launch @spmm_0[%{{.*}}] (%{{.*}}) rows [#{{.*}}] : (tensor<?x64xf32>) -> tensor<?x64xf32> on !gnn.graph<bipartite>
func.func @host_bipartite(%g: !gnn.graph<bipartite>, %x: tensor<?x64xf32> {gnn.domain = "src"}) -> tensor<?x64xf32> {
  %r = gnnk.launch @spmm_0[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s4)>] : (tensor<?x64xf32>) -> tensor<?x64xf32> on !gnn.graph<bipartite>
  return %r : tensor<?x64xf32>
}

// A size parameter computed by the runtime from a formula of the graph's
// sizes (every operator and name kind, negative constants included).
// CHECK-LABEL: gnnk.kernel @formula
// CHECK-SAME: {gnnk.formula = #gnnk.formula<add(sub(max(1, div(mul(src_nodes, 64), 128)), ceil_div(edges, min(max_in_degree, -3))), mod(dst_nodes, max(largest_graph, max_out_degree)))>, gnnk.size = "split_fit"}
gnnk.kernel @formula(%fit: i64 {gnnk.size = "split_fit", gnnk.formula = #gnnk.formula<add(sub(max(1, div(mul(src_nodes, 64), 128)), ceil_div(edges, min(max_in_degree, -3))), mod(dst_nodes, max(largest_graph, max_out_degree)))>})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// The blocks an SM must hold at once (__launch_bounds__'s second argument).
// CHECK-LABEL: gnnk.kernel @min_blocks
// CHECK-SAME: min_blocks = 8 : i64
gnnk.kernel @min_blocks() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>, min_blocks = 8 : i64} {
  gnnk.return
}

// Half-precision storage: 8 bf16 values read as f32 in one access, summed in
// f32, rounded into an f16 result.
// CHECK-LABEL: gnnk.kernel @half_storage
// CHECK: gnnk.load %{{.*}}[%{{.*}}] : memref<?xbf16> -> f32, f32, f32, f32, f32, f32, f32, f32
// CHECK: gnnk.store %{{.*}} to %{{.*}}[%{{.*}}] : f32 into memref<?xf16>
gnnk.kernel @half_storage(%x: memref<?xbf16> {gnnk.operand = 0 : i64},
                          %out: memref<?xf16> {gnnk.result = 0 : i64},
                          %n: i64 {gnnk.size = "nodes"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 256)>} {
  %count = arith.index_cast %n : i64 to index
  gnnk.for_elements %count {
  ^bb0(%i: index):
    %c8 = arith.constant 8 : index
    %base = arith.muli %i, %c8 : index
    %v:8 = gnnk.load %x[%base] : memref<?xbf16> -> f32, f32, f32, f32, f32, f32, f32, f32
    %s0 = arith.addf %v#0, %v#1 : f32
    %s1 = arith.addf %v#2, %v#3 : f32
    %s2 = arith.addf %v#4, %v#5 : f32
    %s3 = arith.addf %v#6, %v#7 : f32
    %s4 = arith.addf %s0, %s1 : f32
    %s5 = arith.addf %s2, %s3 : f32
    %s = arith.addf %s4, %s5 : f32
    gnnk.store %s to %out[%i] : f32 into memref<?xf16>
    gnnk.yield
  }
  gnnk.return
}
