// RUN: gnn-translate --gnnk-to-cuda %s | FileCheck %s
// RUN: gnn-opt %s | gnn-opt | FileCheck %s --check-prefix=ROUND
// RUN: gnn-opt %s -mlir-print-op-generic | gnn-opt | FileCheck %s --check-prefix=ROUND

// The group and the rest region survive printing and parsing.
// ROUND: gnnk.for_edges
// ROUND-SAME: attributes {group = 2 : i64}
// ROUND: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f64):
// ROUND: } rest {
// ROUND-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: f64):

// An edge loop taking two edges a step (group 2): the position lives outside
// the loops; the body's loop runs while both positions are below the end and
// steps by twice the step, reading both edges' neighbours before its body;
// the rest region then takes the remaining position, one edge at a time,
// carrying the same accumulator.
// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(256) sum2(
// CHECK:         double [[ACC:acc[0-9]+]] = 0.0;
// CHECK-NEXT:    long long [[P:p[0-9]+]] = [[B:v[0-9]+]];
// CHECK-NEXT:    for (; ([[P]] + 1LL * (2LL)) < [[E:v[0-9]+]]; [[P]] += 2LL * (2LL)) {
// CHECK-NEXT:      const long long [[N0:nbr[0-9]+]] = (long long)__ldg(csr_col + [[P]]);
// CHECK-NEXT:      const long long [[N1:nbr[0-9]+]] = (long long)__ldg(csr_col + ([[P]] + 1LL * (2LL)));
// CHECK-NEXT:      const float [[V0:v[0-9]+]] = __ldg(in0 + [[N0]]);
// CHECK-NEXT:      const float [[V1:v[0-9]+]] = __ldg(in0 + [[N1]]);
// CHECK-NEXT:      const double [[D0:v[0-9]+]] = (double)[[V0]];
// CHECK-NEXT:      const double [[D1:v[0-9]+]] = (double)[[V1]];
// CHECK-NEXT:      const double [[S0:v[0-9]+]] = [[ACC]] + [[D0]];
// CHECK-NEXT:      const double [[S1:v[0-9]+]] = [[S0]] + [[D1]];
// CHECK-NEXT:      [[ACC]] = [[S1]];
// CHECK-NEXT:    }
// CHECK-NEXT:    for (; [[P]] < [[E]]; [[P]] += 2LL) {
// CHECK-NEXT:      const long long [[N:nbr[0-9]+]] = (long long)__ldg(csr_col + [[P]]);
// CHECK-NEXT:      const float [[V:v[0-9]+]] = __ldg(in0 + [[N]]);
// CHECK-NEXT:      const double [[D:v[0-9]+]] = (double)[[V]];
// CHECK-NEXT:      const double [[S:v[0-9]+]] = [[ACC]] + [[D]];
// CHECK-NEXT:      [[ACC]] = [[S]];
// CHECK-NEXT:    }
// CHECK-NEXT:    const float [[F:v[0-9]+]] = (float)[[ACC]];
gnnk.kernel @sum2(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                  %out: memref<?xf32> {gnnk.result = 0 : i64},
                  %ptr: memref<?xi32> {gnnk.graph = "csr_row_ptr"},
                  %col: memref<?xi32> {gnnk.graph = "csr_col"},
                  %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> ((s0 * 2) ceildiv 256)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_rows %n lanes 2 {
  ^bb0(%row: index, %lane: index):
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f64
    %b32 = gnnk.load %ptr[%row] : memref<?xi32> -> i32
    %r1 = arith.addi %row, %c1 : index
    %e32 = gnnk.load %ptr[%r1] : memref<?xi32> -> i32
    %b0 = arith.index_cast %b32 : i32 to index
    %e = arith.index_cast %e32 : i32 to index
    %b = arith.addi %b0, %lane : index
    %acc = gnnk.for_edges %b to %e step %c2 nbrs(%col : memref<?xi32>) iter_args(%zero : f64) -> f64 attributes {group = 2 : i64} {
    ^bb0(%s0: index, %o0: index, %s1: index, %o1: index, %a: f64):
      %v0 = gnnk.load %x[%o0] : memref<?xf32> -> f32
      %v1 = gnnk.load %x[%o1] : memref<?xf32> -> f32
      %d0 = arith.extf %v0 : f32 to f64
      %d1 = arith.extf %v1 : f32 to f64
      %t0 = arith.addf %a, %d0 : f64
      %t1 = arith.addf %t0, %d1 : f64
      gnnk.yield %t1 : f64
    } rest {
    ^bb0(%s: index, %o: index, %a: f64):
      %v = gnnk.load %x[%o] : memref<?xf32> -> f32
      %d = arith.extf %v : f32 to f64
      %t = arith.addf %a, %d : f64
      gnnk.yield %t : f64
    }
    %f = arith.truncf %acc : f64 to f32
    gnnk.store %f to %out[%row] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}
