// RUN: not gnn-opt %s 2>&1 | FileCheck %s
// RUN: not gnn-translate --gnn-to-program %s 2>&1 | FileCheck %s

// A launch's graph operand is a `!gnn.graph`, made by its parser when the
// text names none. In a file that names no gnn type at all (here the graph
// argument's type is wrong; the IR fuzzer's input was a garbled signature)
// the gnn dialect was not loaded and making the type crashed the parser: the
// gnnk dialect now loads gnn with itself, and the file gets a located error.

// CHECK: launch-without-gnn-types.mlir:[[@LINE+3]]:23: error: use of value '%g' expects different type than prior uses: '!gnn.graph' vs 'i64'
// CHECK-NOT: internal error
func.func @f(%g: i64, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnnk.launch @k[%g](%x) rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0 - 1)>] : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
