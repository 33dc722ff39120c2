// RUN: gnn-translate --gnnk-to-cuda --gnnk-index-bits=64 %s | FileCheck %s
// RUN: gnn-translate --gnnk-to-cuda --gnnk-index-bits=16 -verify-diagnostics %s

// 64-bit graph indices: idx_t is long long, and i64 graph arrays are idx_t.
// CHECK: typedef long long idx_t;
// CHECK-LABEL: // degree: block 64, grid nodes ceildiv 64
// CHECK: const idx_t *__restrict__ csr_row_ptr,
// CHECK: const long long [[B:v[0-9]+]] = __ldg(csr_row_ptr + [[I:i[0-9]+]]);
// CHECK: out0[[[I]]] = [[D:v[0-9]+]];

// expected-error @below {{expects an index width of 32 or 64 bits but got 16}}
module {
  gnnk.kernel @degree(%out: memref<?xf32> {gnnk.result = 0 : i64},
                      %ptr: memref<?xi64> {gnnk.graph = "csr_row_ptr"},
                      %nodes: i64 {gnnk.size = "nodes"})
      attributes {block = 64 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 64)>} {
    %n = arith.index_cast %nodes : i64 to index
    gnnk.for_elements %n {
    ^bb0(%i: index):
      %c1 = arith.constant 1 : index
      %i1 = arith.addi %i, %c1 : index
      %b = gnnk.load %ptr[%i] : memref<?xi64> -> i64
      %e = gnnk.load %ptr[%i1] : memref<?xi64> -> i64
      %d = arith.subi %e, %b : i64
      %f = arith.sitofp %d : i64 to f32
      gnnk.store %f to %out[%i] : f32 into memref<?xf32>
      gnnk.yield
    }
    gnnk.return
  }
}
