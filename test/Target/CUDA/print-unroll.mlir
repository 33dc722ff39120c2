// RUN: gnn-translate --gnnk-to-cuda %s | FileCheck %s

// gnnk.unroll on an scf.for with a trip count known only at run time (the
// split kernels' merge of partial states) becomes an unroll pragma; a loop
// of at most 32 constant trips is unrolled fully without it, and kept
// rolled with gnnk.unroll = 1 (the final kernel's loop over marked rows).
// CHECK-LABEL: // prefix_sums: block 32, grid nodes
// CHECK: #pragma unroll 8
// CHECK-NEXT: for (long long [[K:iv[0-9]+]] = 0LL; [[K]] < [[I:i[0-9]+]]; [[K]] += 1LL) {
// CHECK: #pragma unroll{{$}}
// CHECK-NEXT: for (long long {{iv[0-9]+}} = 0LL; {{iv[0-9]+}} < 4LL;
// CHECK: #pragma unroll 1{{$}}
// CHECK-NEXT: for (long long {{iv[0-9]+}} = 0LL; {{iv[0-9]+}} < 4LL;
gnnk.kernel @prefix_sums(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                         %out: memref<?xf32> {gnnk.result = 0 : i64},
                         %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %s = scf.for %k = %c0 to %i step %c1 iter_args(%a = %zero) -> f32 {
      %v = gnnk.load %x[%k] : memref<?xf32> -> f32
      %b = arith.addf %a, %v : f32
      scf.yield %b : f32
    } {gnnk.unroll = 8 : i64}
    %t = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %s) -> f32 {
      %b = arith.addf %a, %a : f32
      scf.yield %b : f32
    }
    %u = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %t) -> f32 {
      %b = arith.addf %a, %a : f32
      scf.yield %b : f32
    } {gnnk.unroll = 1 : i64}
    gnnk.store %u to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}
