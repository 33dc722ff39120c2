// RUN: gnn-translate --gnnk-to-cuda -split-input-file %s | FileCheck %s

// Vector loads and stores: one float4 / float2 / double2 access per 16 bytes,
// through __ldg for buffers the kernel only reads; a buffer the kernel writes
// is not const and is read without __ldg.
// CHECK-LABEL: // vectors: block 128, grid nodes ceildiv 128
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(128) vectors(
// CHECK-NEXT:     const float *__restrict__ in0,
// CHECK-NEXT:     const double *__restrict__ in1,
// CHECK-NEXT:     float *__restrict__ out0,
// CHECK-NEXT:     double *__restrict__ out1,
// CHECK-NEXT:     long long nodes) {
// CHECK: const float4 [[A:v[0-9]+]] = __ldg(reinterpret_cast<const float4 *>(in0 + [[I4:v[0-9]+]]));
// CHECK-NEXT: const float2 [[E:v[0-9]+]] = __ldg(reinterpret_cast<const float2 *>(in0 + [[I2:v[0-9]+]]));
// CHECK-NEXT: const double2 [[G:v[0-9]+]] = __ldg(reinterpret_cast<const double2 *>(in1 + [[I2]]));
// CHECK-NEXT: const double2 [[P:v[0-9]+]] = __ldg(reinterpret_cast<const double2 *>(in1 + [[I4]]));
// CHECK-NEXT: const double2 [[R:v[0-9]+]] = __ldg(reinterpret_cast<const double2 *>(in1 + [[I4]] + 2));
// CHECK-NEXT: const float4 [[O:v[0-9]+]] = *reinterpret_cast<const float4 *>(out0 + [[I4]]);
// CHECK-NEXT: const float [[Y:v[0-9]+]] = out0[[[I2]]];
// CHECK-NEXT: const float [[SUM:v[0-9]+]] = [[O]].w + [[Y]];
// CHECK-NEXT: *reinterpret_cast<float4 *>(out0 + [[I4]]) = make_float4([[A]].w, [[A]].z, [[A]].y, [[SUM]]);
// CHECK-NEXT: *reinterpret_cast<double2 *>(out1 + [[I4]]) = make_double2([[R]].y, [[R]].x);
// CHECK-NEXT: *reinterpret_cast<double2 *>(out1 + [[I4]] + 2) = make_double2([[P]].y, [[G]].x);
// CHECK-NEXT: *reinterpret_cast<float2 *>(out0 + [[I2]]) = make_float2([[E]].x, [[E]].y);
gnnk.kernel @vectors(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                     %y: memref<?xf64> {gnnk.operand = 1 : i64},
                     %out: memref<?xf32> {gnnk.result = 0 : i64},
                     %out2: memref<?xf64> {gnnk.result = 1 : i64},
                     %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 128 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 128)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c4 = arith.constant 4 : index
    %c2 = arith.constant 2 : index
    %i4 = arith.muli %i, %c4 : index
    %i2 = arith.muli %i, %c2 : index
    %a, %b, %c, %d = gnnk.load %x[%i4] : memref<?xf32> -> f32, f32, f32, f32
    %e, %f = gnnk.load %x[%i2] : memref<?xf32> -> f32, f32
    %g, %h = gnnk.load %y[%i2] : memref<?xf64> -> f64, f64
    %p, %q, %r, %s = gnnk.load %y[%i4] : memref<?xf64> -> f64, f64, f64, f64
    %o0, %o1, %o2, %o3 = gnnk.load %out[%i4] : memref<?xf32> -> f32, f32, f32, f32
    %y0 = gnnk.load %out[%i2] : memref<?xf32> -> f32
    %sum = arith.addf %o3, %y0 : f32
    gnnk.store %d, %c, %b, %sum to %out[%i4] : f32, f32, f32, f32 into memref<?xf32>
    gnnk.store %s, %r, %q, %g to %out2[%i4] : f64, f64, f64, f64 into memref<?xf64>
    gnnk.store %e, %f to %out[%i2] : f32, f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// A reversed edge loop through the CSC: the slot is read through the
// permutation; the neighbour array is not read when the body ignores it.
// CHECK-LABEL: // csc_sum: block 256, grid nodes ceildiv 256
// CHECK: const idx_t *__restrict__ csc_col_ptr,
// CHECK-NEXT: const idx_t *__restrict__ csc_row,
// CHECK-NEXT: const idx_t *__restrict__ csc_to_csr,
// CHECK: float [[S:acc[0-9]+]] = 0.0f;
// CHECK-NEXT: long long [[K:acc[0-9]+]] = 0LL;
// CHECK-NEXT: for (long long [[P:p[0-9]+]] = [[B:v[0-9]+]]; [[P]] < [[E:v[0-9]+]]; [[P]] += 1LL) {
// CHECK-NEXT: const long long [[SLOT:slot[0-9]+]] = (long long)__ldg(csc_to_csr + [[P]]);
// CHECK-NOT: csc_row +
// CHECK-NEXT: const float [[W:v[0-9]+]] = __ldg(in0 + [[SLOT]]);
// CHECK-NEXT: const float [[S1:v[0-9]+]] = [[S]] + [[W]];
// CHECK-NEXT: const long long [[K1:v[0-9]+]] = [[K]] + 1LL;
// CHECK-NEXT: [[S]] = [[S1]];
// CHECK-NEXT: [[K]] = [[K1]];
// CHECK-NEXT: }
gnnk.kernel @csc_sum(%w: memref<?xf32> {gnnk.operand = 0 : i64},
                     %out: memref<?xf32> {gnnk.result = 0 : i64},
                     %ptr: memref<?xi32> {gnnk.graph = "csc_col_ptr"},
                     %row: memref<?xi32> {gnnk.graph = "csc_row"},
                     %perm: memref<?xi32> {gnnk.graph = "csc_to_csr"},
                     %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 256)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %i1 = arith.addi %i, %c1 : index
    %b32 = gnnk.load %ptr[%i] : memref<?xi32> -> i32
    %e32 = gnnk.load %ptr[%i1] : memref<?xi32> -> i32
    %b = arith.index_cast %b32 : i32 to index
    %e = arith.index_cast %e32 : i32 to index
    %s, %k = gnnk.for_edges %b to %e step %c1 nbrs(%row : memref<?xi32>) perm(%perm : memref<?xi32>) iter_args(%zero, %c0 : f32, index) -> f32, index {
    ^bb0(%slot: index, %dst: index, %a: f32, %cnt: index):
      %v = gnnk.load %w[%slot] : memref<?xf32> -> f32
      %a1 = arith.addf %a, %v : f32
      %cnt1 = arith.addi %cnt, %c1 : index
      gnnk.yield %a1, %cnt1 : f32, index
    }
    %kf = arith.index_cast %k : index to i64
    %kff = arith.sitofp %kf : i64 to f32
    %mean = arith.divf %s, %kff : f32
    gnnk.store %mean to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// Without a permutation the slot is the position; carried values that swap
// go through temporaries.
// CHECK-LABEL: // swap: block 32, grid nodes ceildiv 32
// CHECK: float [[X:acc[0-9]+]] = 0.0f;
// CHECK-NEXT: float [[Y:acc[0-9]+]] = 1.0f;
// CHECK-NEXT: for (long long [[P:p[0-9]+]] = {{.*}}) {
// CHECK-NEXT: const long long [[NBR:nbr[0-9]+]] = (long long)__ldg(csr_col + [[P]]);
// CHECK-NEXT: const float [[V:v[0-9]+]] = __ldg(in0 + [[P]]);
// CHECK-NEXT: const float [[V2:v[0-9]+]] = __ldg(in0 + [[NBR]]);
// CHECK-NEXT: const float [[Z:v[0-9]+]] = [[V]] + [[V2]];
// CHECK-NEXT: const float [[Y2:v[0-9]+]] = [[Y]] + [[Z]];
// CHECK-NEXT: const float [[T0:t[0-9]+]] = [[Y2]];
// CHECK-NEXT: const float [[T1:t[0-9]+]] = [[X]];
// CHECK-NEXT: [[X]] = [[T0]];
// CHECK-NEXT: [[Y]] = [[T1]];
// CHECK-NEXT: }
gnnk.kernel @swap(%w: memref<?xf32> {gnnk.operand = 0 : i64},
                  %out: memref<?xf32> {gnnk.result = 0 : i64},
                  %ptr: memref<?xi32> {gnnk.graph = "csr_row_ptr"},
                  %col: memref<?xi32> {gnnk.graph = "csr_col"},
                  %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 32)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %i1 = arith.addi %i, %c1 : index
    %b32 = gnnk.load %ptr[%i] : memref<?xi32> -> i32
    %e32 = gnnk.load %ptr[%i1] : memref<?xi32> -> i32
    %b = arith.index_cast %b32 : i32 to index
    %e = arith.index_cast %e32 : i32 to index
    %x, %y = gnnk.for_edges %b to %e step %c1 nbrs(%col : memref<?xi32>) iter_args(%zero, %one : f32, f32) -> f32, f32 {
    ^bb0(%slot: index, %src: index, %a: f32, %bb: f32):
      %v = gnnk.load %w[%slot] : memref<?xf32> -> f32
      %v2 = gnnk.load %w[%src] : memref<?xf32> -> f32
      %z = arith.addf %v, %v2 : f32
      %y2 = arith.addf %bb, %z : f32
      gnnk.yield %y2, %a : f32, f32
    }
    %r = arith.subf %x, %y : f32
    gnnk.store %r to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}
