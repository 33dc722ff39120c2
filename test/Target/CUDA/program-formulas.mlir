// RUN: gnn-translate --gnn-to-program %s | FileCheck %s

// Formulas reach the Program as structures, printed once by the Program's
// text form: a kernel parameter's #gnnk.formula with the fewest parentheses
// that keep its operators, launch shapes (affine maps) with their sums and
// products in parentheses and a row count that subtracts (a negative
// constant).

// CHECK: "name": "result0"
// CHECK-NEXT: "role": "output"
// CHECK-NEXT: "dtype": "f32"
// CHECK-NEXT: "size": "(nodes + -1) * 8"
// CHECK: "kernel": "k"
// CHECK-NEXT: "grid": [
// CHECK-NEXT: "min(ceil_div((edges * 4), 256), 8192)",
// CHECK: "buffer": "result0"
// CHECK-NEXT: }
// CHECK-NEXT: {
// CHECK-NEXT: "i64": "max(1, src_nodes * 64 / 128) - ceil_div(edges, max(128, largest_graph) * 4) + (1 - dst_nodes % 2) * (nodes - (edges - graphs))"
// CHECK: "i64": "edges"
gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 0 : i64},
               %out: memref<?xf32> {gnnk.result = 0 : i64},
               %t: i64 {gnnk.size = "split_fit", gnnk.formula = #gnnk.formula<add(sub(max(1, div(mul(src_nodes, 64), 128)), ceil_div(edges, mul(max(128, largest_graph), 4))), mul(sub(1, mod(dst_nodes, 2)), sub(nodes, sub(edges, graphs))))>},
               %e: i64 {gnnk.size = "edges"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> ((s1 * 4) ceildiv 256, 8192)>} {
  gnnk.return
}
func.func @formulas(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnnk.launch @k[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0 - 1)>] : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
