// RUN: gnn-opt %s -split-input-file | FileCheck %s
// RUN: gnn-opt %s -split-input-file | gnn-opt -split-input-file | FileCheck %s
// RUN: gnn-opt %s -split-input-file -mlir-print-op-generic | gnn-opt -split-input-file | FileCheck %s

// Every gnn op prints, parses and prints again identically (also through the
// generic form).

// CHECK-LABEL: func.func @graph_type
// CHECK-SAME: !gnn.graph
func.func @graph_type(%g: !gnn.graph) -> !gnn.graph {
  return %g : !gnn.graph
}

// -----

// A bipartite graph's type leads the types of the ops that take it.
// CHECK-LABEL: func.func @bipartite
// CHECK-SAME: %[[G:.*]]: !gnn.graph<bipartite>, %{{.*}}: tensor<?x8xf32> {gnn.domain = "src"}, %{{.*}}: tensor<?x8xf32> {gnn.domain = "dst"}
// CHECK: gnn.gather src %[[G]], %{{.*}} : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: gnn.sddmm dot %[[G]], %{{.*}}, %{{.*}} : !gnn.graph<bipartite>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
// CHECK: gnn.edge_softmax %[[G]], %{{.*}} : !gnn.graph<bipartite>, tensor<?xf32>, tensor<?xf32>
// CHECK: gnn.spmm sum %[[G]], %{{.*}} weights(%{{.*}} : tensor<?xf32>) : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: gnn.spmm max %[[G]], %{{.*}} : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
// CHECK: gnn.extremum_grad %[[G]], %{{.*}} : !gnn.graph<bipartite>, tensor<?x8xf32>
// CHECK: gnn.reduce mean %[[G]], %{{.*}} reversed : !gnn.graph<bipartite>, tensor<?xf32> -> tensor<?xf32>
// CHECK: gnn.degree %[[G]] : !gnn.graph<bipartite>, tensor<?xf32>
func.func @bipartite(%g: !gnn.graph<bipartite>, %x: tensor<?x8xf32> {gnn.domain = "src"},
                     %y: tensor<?x8xf32> {gnn.domain = "dst"}) -> !gnn.graph<bipartite> {
  %0 = gnn.gather src %g, %x : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = gnn.sddmm dot %g, %x, %y : !gnn.graph<bipartite>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
  %2, %lse = gnn.edge_softmax %g, %1 : !gnn.graph<bipartite>, tensor<?xf32>, tensor<?xf32>
  %3 = gnn.spmm sum %g, %x weights(%2 : tensor<?xf32>) : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
  %4, %w = gnn.spmm max %g, %x : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
  %5 = gnn.extremum_grad %g, %x, %4, %w, %3 : !gnn.graph<bipartite>, tensor<?x8xf32>
  %6 = gnn.reduce mean %g, %2 reversed : !gnn.graph<bipartite>, tensor<?xf32> -> tensor<?xf32>
  %7 = gnn.degree %g : !gnn.graph<bipartite>, tensor<?xf32>
  return %g : !gnn.graph<bipartite>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK: gnn.gather src %{{.*}}, %{{.*}} : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
// CHECK: gnn.gather dst %{{.*}}, %{{.*}} : tensor<?x16xf16> -> tensor<?x16xf16>
func.func @gather(%g: !gnn.graph, %x: tensor<?x4x8xf32>, %y: tensor<?x16xf16>) {
  %0 = gnn.gather src %g, %x : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %1 = gnn.gather dst %g, %y : tensor<?x16xf16> -> tensor<?x16xf16>
  return
}

// -----

// CHECK-LABEL: func.func @sddmm
// CHECK: gnn.sddmm dot %{{.*}}, %[[A:.*]], %[[B:.*]] : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
// CHECK: gnn.sddmm add %{{.*}} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: gnn.sddmm sub %{{.*}} reversed : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
// CHECK: gnn.sddmm mul %{{.*}} : tensor<?x16xbf16>, tensor<?x16xbf16> -> tensor<?x16xbf16>
// CHECK: gnn.sddmm dot %{{.*}} : tensor<?x16xf64>, tensor<?x16xf64> -> tensor<?xf64>
func.func @sddmm(%g: !gnn.graph, %a: tensor<?x4x8xf32>, %b: tensor<?x4x8xf32>,
                 %s: tensor<?x4xf32>, %t: tensor<?x4xf32>, %u: tensor<?x16xbf16>,
                 %v: tensor<?x16xf64>) {
  %0 = gnn.sddmm dot %g, %a, %b : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
  %1 = gnn.sddmm add %g, %s, %t : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = gnn.sddmm sub %g, %a, %b reversed : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %3 = gnn.sddmm mul %g, %u, %u : tensor<?x16xbf16>, tensor<?x16xbf16> -> tensor<?x16xbf16>
  %4 = gnn.sddmm dot %g, %v, %v : tensor<?x16xf64>, tensor<?x16xf64> -> tensor<?xf64>
  return
}

// -----

// CHECK-LABEL: func.func @edge_softmax
// CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} : tensor<?x4xf32>
// CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} reversed : tensor<?xf32>
// CHECK: %{{.*}}, %{{.*}} = gnn.edge_softmax %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x4xf32>
// CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} reversed : tensor<?xf32>, tensor<7xf32>
func.func @edge_softmax(%g: !gnn.graph, %e: tensor<?x4xf32> {gnn.domain = "edge"},
                        %f: tensor<?xf32> {gnn.domain = "edge"}) {
  %0 = gnn.edge_softmax %g, %e : tensor<?x4xf32>
  %1 = gnn.edge_softmax %g, %f reversed : tensor<?xf32>
  %2, %lse = gnn.edge_softmax %g, %e : tensor<?x4xf32>, tensor<?x4xf32>
  %3, %lse2 = gnn.edge_softmax %g, %f reversed : tensor<?xf32>, tensor<7xf32>
  return
}

// -----

// CHECK-LABEL: func.func @spmm
// CHECK: gnn.spmm sum %{{.*}}, %{{.*}} : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: gnn.spmm mean %{{.*}}, %{{.*}} reversed : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: gnn.spmm max %{{.*}}, %{{.*}} weights(%{{.*}} : tensor<?xf32>) : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: gnn.spmm min %{{.*}}, %{{.*}} weights(%{{.*}} : tensor<?x4xf32>) reversed : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
// CHECK: %{{.*}}, %{{.*}} = gnn.spmm max %{{.*}}, %{{.*}} : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
// CHECK: %{{.*}}, %{{.*}} = gnn.spmm min %{{.*}}, %{{.*}} weights(%{{.*}} : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>, tensor<?x4x8xf32>
// CHECK: %{{.*}}, %{{.*}} = gnn.spmm max %{{.*}}, %{{.*}} reversed counted : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
func.func @spmm(%g: !gnn.graph, %x: tensor<?x16xf32>, %w: tensor<?xf32> {gnn.domain = "edge"},
                %h: tensor<?x4x8xf32>, %a: tensor<?x4xf32> {gnn.domain = "edge"}) {
  %0 = gnn.spmm sum %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
  %1 = gnn.spmm mean %g, %x reversed : tensor<?x16xf32> -> tensor<?x16xf32>
  %2 = gnn.spmm max %g, %x weights(%w : tensor<?xf32>) : tensor<?x16xf32> -> tensor<?x16xf32>
  %3 = gnn.spmm min %g, %h weights(%a : tensor<?x4xf32>) reversed : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %4, %winner = gnn.spmm max %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  %5, %winner2 = gnn.spmm min %g, %h weights(%a : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>, tensor<?x4x8xf32>
  %6, %count = gnn.spmm max %g, %x reversed counted : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @extremum_grad
// CHECK: gnn.extremum_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x16xf32>
// CHECK: gnn.extremum_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} reversed : tensor<?x16xf32>
func.func @extremum_grad(%g: !gnn.graph, %x: tensor<?x16xf32>, %dy: tensor<?x16xf32>) {
  %y, %w = gnn.spmm max %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  %0 = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x16xf32>
  %r, %rw = gnn.spmm min %g, %x reversed : tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  %1 = gnn.extremum_grad %g, %x, %r, %rw, %dy reversed : tensor<?x16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @reduce
// CHECK: gnn.reduce sum %{{.*}}, %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: gnn.reduce mean %{{.*}}, %{{.*}} reversed : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: gnn.reduce max %{{.*}}, %{{.*}} : tensor<?xf32> -> tensor<?xf32>
// CHECK: gnn.reduce min %{{.*}}, %{{.*}} : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
// CHECK: %{{.*}}, %{{.*}} = gnn.reduce max %{{.*}}, %{{.*}} reversed : tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
func.func @reduce(%g: !gnn.graph, %e: tensor<?x4xf32> {gnn.domain = "edge"},
                  %f: tensor<?xf32> {gnn.domain = "edge"},
                  %k: tensor<?x2x3xf32> {gnn.domain = "edge"}) {
  %0 = gnn.reduce sum %g, %e : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = gnn.reduce mean %g, %e reversed : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = gnn.reduce max %g, %f : tensor<?xf32> -> tensor<?xf32>
  %3 = gnn.reduce min %g, %k : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %4, %winner = gnn.reduce max %g, %e reversed : tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @degree
// CHECK: gnn.degree %{{.*}} : tensor<?xf32>
// CHECK: gnn.degree %{{.*}} reversed : tensor<?xf64>
func.func @degree(%g: !gnn.graph) {
  %0 = gnn.degree %g : tensor<?xf32>
  %1 = gnn.degree %g reversed : tensor<?xf64>
  return
}

// -----

// Static sizes are allowed where a function is written for one graph; the
// argument then says what its rows are.
// CHECK-LABEL: func.func @static_sizes
// CHECK: gnn.spmm sum %{{.*}}, %{{.*}} : tensor<5x8xf32> -> tensor<5x8xf32>
func.func @static_sizes(%g: !gnn.graph, %x: tensor<5x8xf32> {gnn.domain = "node"}) -> tensor<5x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<5x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

// bf16 and f16 are storage types: the ops keep their element type, the
// softmax's log-sum-exp, the winner codes and extremum_grad's result (a sum)
// are f32; an f32 attention parameter meets bf16 rows through explicit casts.
// CHECK-LABEL: func.func @half_types
// CHECK: gnn.sddmm dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4x8xbf16>, tensor<?x4x8xbf16> -> tensor<?x4xbf16>
// CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<?x4xf32>
// CHECK: gnn.spmm sum %{{.*}}, %{{.*}} weights(%{{.*}} : tensor<?x4xbf16>) : tensor<?x4x8xbf16> -> tensor<?x4x8xbf16>
// CHECK: gnn.spmm max %{{.*}}, %{{.*}} : tensor<?x16xf16> -> tensor<?x16xf16>, tensor<?x16xf32>
// CHECK: gnn.extremum_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x16xf16>
// CHECK: gnn.reduce sum %{{.*}}, %{{.*}} : tensor<?x4xbf16> -> tensor<?x4xbf16>
#id = affine_map<(d0, d1) -> (d0, d1)>
#head = affine_map<(d0, d1) -> (d1)>
func.func @half_types(%g: !gnn.graph, %x: tensor<?x4x8xbf16>, %att: tensor<4xf32>,
                      %h: tensor<?x16xf16>, %dh: tensor<?x16xf16>) {
  %s = gnn.sddmm dot %g, %x, %x : tensor<?x4x8xbf16>, tensor<?x4x8xbf16> -> tensor<?x4xbf16>
  %c0 = arith.constant 0 : index
  %e = tensor.dim %s, %c0 : tensor<?x4xbf16>
  %init = tensor.empty(%e) : tensor<?x4xbf16>
  %scaled = linalg.generic {indexing_maps = [#id, #head, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %att : tensor<?x4xbf16>, tensor<4xf32>) outs(%init : tensor<?x4xbf16>) {
  ^bb0(%a: bf16, %b: f32, %o: bf16):
    %w = arith.extf %a : bf16 to f32
    %p = arith.mulf %w, %b : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x4xbf16>
  %alpha, %lse = gnn.edge_softmax %g, %scaled : tensor<?x4xbf16>, tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %x weights(%alpha : tensor<?x4xbf16>) : tensor<?x4x8xbf16> -> tensor<?x4x8xbf16>
  %y, %win = gnn.spmm max %g, %h : tensor<?x16xf16> -> tensor<?x16xf16>, tensor<?x16xf32>
  %dx = gnn.extremum_grad %g, %h, %y, %win, %dh : tensor<?x16xf16>
  %r = gnn.reduce sum %g, %alpha : tensor<?x4xbf16> -> tensor<?x4xbf16>
  return
}

// -----

// A typed graph's edges carry relation ids: the relation forms of gather and
// reduce read and write a row per (node, relation); other ops ignore them.
// CHECK-LABEL: func.func @typed
// CHECK-SAME: %[[G:.*]]: !gnn.graph<typed>
// CHECK: gnn.gather src %[[G]], %{{.*}} relation : !gnn.graph<typed>, tensor<?x3x8xf32> -> tensor<?x8xf32>
// CHECK: gnn.reduce sum %[[G]], %{{.*}} reversed relation : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x3x8xf32>
// CHECK: gnn.reduce sum %[[G]], %{{.*}} : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x8xf32>
func.func @typed(%g: !gnn.graph<typed>, %h: tensor<?x3x8xf32>) -> tensor<?x3x8xf32> {
  %0 = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?x3x8xf32> -> tensor<?x8xf32>
  %1 = gnn.reduce sum %g, %0 reversed relation : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x3x8xf32>
  %2 = gnn.reduce sum %g, %0 : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %1 : tensor<?x3x8xf32>
}

// -----

// CHECK-LABEL: func.func @bipartite_typed
// CHECK-SAME: !gnn.graph<bipartite, typed>
// CHECK: gnn.gather dst %{{.*}}, %{{.*}} relation : !gnn.graph<bipartite, typed>, tensor<?x2x4xf32> -> tensor<?x4xf32>
func.func @bipartite_typed(%g: !gnn.graph<bipartite, typed>, %h: tensor<?x2x4xf32> {gnn.domain = "dst"}) {
  %0 = gnn.gather dst %g, %h relation : !gnn.graph<bipartite, typed>, tensor<?x2x4xf32> -> tensor<?x4xf32>
  return
}
