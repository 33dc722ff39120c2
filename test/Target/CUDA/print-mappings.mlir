// RUN: gnn-translate --gnnk-to-cuda -split-input-file %s | FileCheck %s

// A thread per element, guarded by the count.
// CHECK-LABEL: // scale: block 128, grid (edges * 16) ceildiv 128
// CHECK: extern "C" __global__ void __launch_bounds__(128) scale(
// CHECK-NEXT: const float *__restrict__ in0,
// CHECK-NEXT: float *__restrict__ out0,
// CHECK-NEXT: long long edges) {
// CHECK: const long long [[N:v[0-9]+]] = [[E:v[0-9]+]] * 16LL;
// CHECK-NEXT: const long long [[I:i[0-9]+]] = blockIdx.x * (long long)blockDim.x + threadIdx.x;
// CHECK-NEXT: if ([[I]] < [[N]]) {
// CHECK-NEXT: const float [[V:v[0-9]+]] = __ldg(in0 + [[I]]);
// CHECK-NEXT: const float [[W:v[0-9]+]] = [[V]] * 2.0f;
// CHECK-NEXT: out0[[[I]]] = [[W]];
gnnk.kernel @scale(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                   %out: memref<?xf32> {gnnk.result = 0 : i64},
                   %edges: i64 {gnnk.size = "edges"})
    attributes {block = 128 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> ((s1 * 16) ceildiv 128)>} {
  %e = arith.index_cast %edges : i64 to index
  %c16 = arith.constant 16 : index
  %n = arith.muli %e, %c16 : index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %v = gnnk.load %x[%i] : memref<?xf32> -> f32
    %two = arith.constant 2.0 : f32
    %w = arith.mulf %v, %two : f32
    gnnk.store %w to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// Teams of 8 lanes; a 4-value butterfly over lanes 2 and 4 apart (an online
// softmax state, a count and a flag): one shuffle per value, the bool as an
// int, in the 8-lane segment of the warp.
// CHECK-LABEL: // softmax_stats: block 64, grid (nodes * 8) ceildiv 64
// CHECK: const long long [[T:t[0-9]+]] = blockIdx.x * (long long)blockDim.x + threadIdx.x;
// CHECK-NEXT: const long long [[ROW:row[0-9]+]] = [[T]] / 8;
// CHECK-NEXT: const long long [[LANE:lane[0-9]+]] = [[T]] % 8;
// CHECK-NEXT: if ([[ROW]] < [[N:v[0-9]+]]) {
// CHECK: float [[M:acc[0-9]+]] = [[V:v[0-9]+]];
// CHECK-NEXT: float [[S:acc[0-9]+]] = 1.0f;
// CHECK-NEXT: long long [[K:acc[0-9]+]] = [[KI:v[0-9]+]];
// CHECK-NEXT: bool [[F:acc[0-9]+]] = [[FI:v[0-9]+]];
// CHECK-NEXT: const unsigned [[MASK:mask[0-9]+]] = gnn_segment_mask(8);
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int [[O:o[0-9]+]] = 2; [[O]] < 8; [[O]] <<= 1) {
// CHECK-NEXT: const float [[M2:v[0-9]+]] = __shfl_xor_sync([[MASK]], [[M]], [[O]]);
// CHECK-NEXT: const float [[S2:v[0-9]+]] = __shfl_xor_sync([[MASK]], [[S]], [[O]]);
// CHECK-NEXT: const long long [[K2:v[0-9]+]] = __shfl_xor_sync([[MASK]], [[K]], [[O]]);
// CHECK-NEXT: const bool [[F2:v[0-9]+]] = (bool)__shfl_xor_sync([[MASK]], (int)[[F]], [[O]]);
// CHECK-NEXT: const float [[MM:v[0-9]+]] = gnn_maximumf([[M]], [[M2]]);
// CHECK-NEXT: const float [[D1:v[0-9]+]] = [[M]] - [[MM]];
// CHECK-NEXT: const float [[D2:v[0-9]+]] = [[M2]] - [[MM]];
// CHECK-NEXT: const float [[E1:v[0-9]+]] = expf([[D1]]);
// CHECK-NEXT: const float [[E2:v[0-9]+]] = expf([[D2]]);
// CHECK-NEXT: const float [[A:v[0-9]+]] = [[S]] * [[E1]];
// CHECK-NEXT: const float [[B:v[0-9]+]] = [[S2]] * [[E2]];
// CHECK-NEXT: const float [[SS:v[0-9]+]] = [[A]] + [[B]];
// CHECK-NEXT: const long long [[KK:v[0-9]+]] = [[K]] + [[K2]];
// CHECK-NEXT: const bool [[FF:v[0-9]+]] = [[F]] || [[F2]];
// CHECK-NEXT: [[M]] = [[MM]];
// CHECK-NEXT: [[S]] = [[SS]];
// CHECK-NEXT: [[K]] = [[KK]];
// CHECK-NEXT: [[F]] = [[FF]];
// CHECK-NEXT: }
// CHECK: *reinterpret_cast<float2 *>(out0 + [[OI:v[0-9]+]]) = make_float2([[M]], [[S]]);
gnnk.kernel @softmax_stats(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                           %out: memref<?xf32> {gnnk.result = 0 : i64},
                           %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 64 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> ((s0 * 8) ceildiv 64)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_rows %n lanes 8 {
  ^bb0(%row: index, %lane: index):
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %base = arith.muli %row, %c8 : index
    %i = arith.addi %base, %lane : index
    %v = gnnk.load %x[%i] : memref<?xf32> -> f32
    %one = arith.constant 1.0 : f32
    %k = arith.index_cast %lane : index to i64
    %pos = arith.cmpf ogt, %v, %one : f32
    %m, %s, %cnt, %any = gnnk.team_reduce %v, %one, %k, %pos stride 2 width 8 : f32, f32, i64, i1 {
    ^bb0(%m1: f32, %s1: f32, %k1: i64, %p1: i1, %m2: f32, %s2: f32, %k2: i64, %p2: i1):
      %mm = arith.maximumf %m1, %m2 : f32
      %d1 = arith.subf %m1, %mm : f32
      %d2 = arith.subf %m2, %mm : f32
      %e1 = math.exp %d1 : f32
      %e2 = math.exp %d2 : f32
      %a = arith.mulf %s1, %e1 : f32
      %b = arith.mulf %s2, %e2 : f32
      %ss = arith.addf %a, %b : f32
      %kk = arith.addi %k1, %k2 : i64
      %pp = arith.ori %p1, %p2 : i1
      gnnk.yield %mm, %ss, %kk, %pp : f32, f32, i64, i1
    }
    %o = arith.muli %row, %c2 : index
    gnnk.store %m, %s to %out[%o] : f32, f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// A block per graph, 8 teams of 32 lanes: a block reduction of a maximum and
// an int count through one shared array per value, combined as a tree of
// neighbouring teams (the lower team on the left, log2(8) rounds), then a
// team reduction of an int; team 0 stores.
// CHECK-LABEL: // graph_max: block 256, grid graphs
// CHECK: const long long [[BLK:blk[0-9]+]] = blockIdx.x;
// CHECK-NEXT: const long long [[TEAM:team[0-9]+]] = threadIdx.x / 32;
// CHECK-NEXT: const long long [[LANE:lane[0-9]+]] = threadIdx.x % 32;
// CHECK-NEXT: if ([[BLK]] < [[G:v[0-9]+]]) {
// CHECK: __shared__ float [[R0:red[0-9]+]][8][32];
// CHECK-NEXT: [[R0]][[[TEAM]]][[[LANE]]] = [[V:v[0-9]+]];
// CHECK-NEXT: __shared__ int [[R1:red[0-9]+]][8][32];
// CHECK-NEXT: [[R1]][[[TEAM]]][[[LANE]]] = 1;
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: for (int [[Q:q[0-9]+]] = 1; [[Q]] < 8; [[Q]] <<= 1) {
// CHECK-NEXT: if ([[TEAM]] % (2 * [[Q]]) == 0 && [[TEAM]] + [[Q]] < 8) {
// CHECK-NEXT: const float [[L0:v[0-9]+]] = [[R0]][[[TEAM]]][[[LANE]]];
// CHECK-NEXT: const int [[L1:v[0-9]+]] = [[R1]][[[TEAM]]][[[LANE]]];
// CHECK-NEXT: const float [[P0:v[0-9]+]] = [[R0]][[[TEAM]] + [[Q]]][[[LANE]]];
// CHECK-NEXT: const int [[P1:v[0-9]+]] = [[R1]][[[TEAM]] + [[Q]]][[[LANE]]];
// CHECK-NEXT: const float [[MX:v[0-9]+]] = gnn_maximumf([[L0]], [[P0]]);
// CHECK-NEXT: const int [[C:v[0-9]+]] = [[L1]] + [[P1]];
// CHECK-NEXT: [[R0]][[[TEAM]]][[[LANE]]] = [[MX]];
// CHECK-NEXT: [[R1]][[[TEAM]]][[[LANE]]] = [[C]];
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: }
// CHECK-NEXT: float [[A0:acc[0-9]+]] = [[R0]][0][[[LANE]]];
// CHECK-NEXT: int [[A1:acc[0-9]+]] = [[R1]][0][[[LANE]]];
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: const float [[W:v[0-9]+]] = (float)[[A1]];
// CHECK-NEXT: const float [[R:v[0-9]+]] = [[A0]] / [[W]];
// CHECK-NEXT: int [[TA:acc[0-9]+]] = [[A1]];
// CHECK-NEXT: const unsigned [[MASK:mask[0-9]+]] = gnn_segment_mask(32);
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int [[O:o[0-9]+]] = 1; [[O]] < 32; [[O]] <<= 1) {
// CHECK-NEXT: const int [[TP:v[0-9]+]] = __shfl_xor_sync([[MASK]], [[TA]], [[O]]);
// CHECK: const bool [[FIRST:v[0-9]+]] = [[TEAM]] == 0LL;
// CHECK-NEXT: if ([[FIRST]]) {
// CHECK-NEXT: out0[[[OI:v[0-9]+]]] = [[R]];
// CHECK-NEXT: const float [[TF:v[0-9]+]] = (float)[[TA]];
// CHECK-NEXT: out1[[[OI]]] = [[TF]];
gnnk.kernel @graph_max(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                       %out: memref<?xf32> {gnnk.result = 0 : i64},
                       %counts: memref<?xf32> {gnnk.result = 1 : i64},
                       %graphs: i64 {gnnk.size = "graphs"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s2)>} {
  %g = arith.index_cast %graphs : i64 to index
  gnnk.for_blocks %g lanes 32 {
  ^bb0(%b: index, %team: index, %lane: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : index
    %base = arith.muli %b, %c256 : index
    %t32 = arith.muli %team, %c32 : index
    %o = arith.addi %base, %t32 : index
    %i = arith.addi %o, %lane : index
    %v = gnnk.load %x[%i] : memref<?xf32> -> f32
    %one = arith.constant 1 : i32
    %m, %n = gnnk.block_reduce %v, %one : f32, i32 {
    ^bb0(%a: f32, %ca: i32, %bb: f32, %cb: i32):
      %mx = arith.maximumf %a, %bb : f32
      %c = arith.addi %ca, %cb : i32
      gnnk.yield %mx, %c : f32, i32
    }
    %w = arith.sitofp %n : i32 to f32
    %r = arith.divf %m, %w : f32
    %total = gnnk.team_reduce %n stride 1 width 32 : i32 {
    ^bb0(%p: i32, %q: i32):
      %s = arith.addi %p, %q : i32
      gnnk.yield %s : i32
    }
    %bi = arith.muli %b, %c32 : index
    %oi = arith.addi %bi, %lane : index
    %first = arith.cmpi eq, %team, %c0 : index
    scf.if %first {
      gnnk.store %r to %out[%oi] : f32 into memref<?xf32>
      %tf = arith.sitofp %total : i32 to f32
      gnnk.store %tf to %counts[%oi] : f32 into memref<?xf32>
    }
    gnnk.yield
  }
  gnnk.return
}

// -----

// Teams of 2 lanes, 128 of them in a block of 256: the rounds between teams
// of one warp (16 a warp) on shuffles, team t + s's value coming down 2 s
// lanes, combined where t is a multiple of 2 s (the shared-memory tree's
// pairs, so its bits); a bool shuffled as an int. Then the 8 warps' first
// teams through shared memory, a barrier a round.
// CHECK-LABEL: // graph_sum: block 256, grid graphs
// CHECK: const long long [[TEAM:team[0-9]+]] = threadIdx.x / 2;
// CHECK-NEXT: const long long [[LANE:lane[0-9]+]] = threadIdx.x % 2;
// CHECK: double [[A0:acc[0-9]+]] = [[V0:v[0-9]+]];
// CHECK-NEXT: bool [[A1:acc[0-9]+]] = [[V1:v[0-9]+]];
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int [[O:o[0-9]+]] = 1; [[O]] < 16; [[O]] <<= 1) {
// CHECK-NEXT: const double [[P0:v[0-9]+]] = __shfl_down_sync(0xffffffffu, [[A0]], [[O]] * 2);
// CHECK-NEXT: const bool [[P1:v[0-9]+]] = (bool)__shfl_down_sync(0xffffffffu, (int)[[A1]], [[O]] * 2);
// CHECK-NEXT: if ([[TEAM]] % (2 * [[O]]) == 0) {
// CHECK-NEXT: const double [[S:v[0-9]+]] = [[A0]] + [[P0]];
// CHECK-NEXT: const bool [[B:v[0-9]+]] = [[A1]] || [[P1]];
// CHECK-NEXT: [[A0]] = [[S]];
// CHECK-NEXT: [[A1]] = [[B]];
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: __shared__ double [[R0:red[0-9]+]][8][2];
// CHECK-NEXT: __shared__ bool [[R1:red[0-9]+]][8][2];
// CHECK-NEXT: if ([[TEAM]] % 16 == 0) {
// CHECK-NEXT: [[R0]][[[TEAM]] / 16][[[LANE]]] = [[A0]];
// CHECK-NEXT: [[R1]][[[TEAM]] / 16][[[LANE]]] = [[A1]];
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: for (int [[Q:q[0-9]+]] = 1; [[Q]] < 8; [[Q]] <<= 1) {
// CHECK-NEXT: if ([[TEAM]] % (2 * 16 * [[Q]]) == 0 && [[TEAM]] / 16 + [[Q]] < 8) {
// CHECK-NEXT: const double [[L0:v[0-9]+]] = [[R0]][[[TEAM]] / 16][[[LANE]]];
// CHECK-NEXT: const bool [[L1:v[0-9]+]] = [[R1]][[[TEAM]] / 16][[[LANE]]];
// CHECK-NEXT: const double [[Q0:v[0-9]+]] = [[R0]][[[TEAM]] / 16 + [[Q]]][[[LANE]]];
// CHECK-NEXT: const bool [[Q1:v[0-9]+]] = [[R1]][[[TEAM]] / 16 + [[Q]]][[[LANE]]];
// CHECK-NEXT: const double [[S2:v[0-9]+]] = [[L0]] + [[Q0]];
// CHECK-NEXT: const bool [[B2:v[0-9]+]] = [[L1]] || [[Q1]];
// CHECK-NEXT: [[R0]][[[TEAM]] / 16][[[LANE]]] = [[S2]];
// CHECK-NEXT: [[R1]][[[TEAM]] / 16][[[LANE]]] = [[B2]];
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: }
// CHECK-NEXT: double [[T0:acc[0-9]+]] = [[R0]][0][[[LANE]]];
// CHECK-NEXT: bool [[T1:acc[0-9]+]] = [[R1]][0][[[LANE]]];
// CHECK-NEXT: __syncthreads();
gnnk.kernel @graph_sum(%x: memref<?xf64> {gnnk.operand = 0 : i64},
                       %out: memref<?xf64> {gnnk.result = 0 : i64},
                       %graphs: i64 {gnnk.size = "graphs"})
    attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s2)>} {
  %g = arith.index_cast %graphs : i64 to index
  gnnk.for_blocks %g lanes 2 {
  ^bb0(%b: index, %team: index, %lane: index):
    %c0 = arith.constant 0 : index
    %c256 = arith.constant 256 : index
    %base = arith.muli %b, %c256 : index
    %t2 = arith.addi %team, %team : index
    %o = arith.addi %base, %t2 : index
    %i = arith.addi %o, %lane : index
    %v = gnnk.load %x[%i] : memref<?xf64> -> f64
    %zero = arith.constant 0.0 : f64
    %neg = arith.cmpf olt, %v, %zero : f64
    %s, %any = gnnk.block_reduce %v, %neg : f64, i1 {
    ^bb0(%a: f64, %na: i1, %bb: f64, %nb: i1):
      %sum = arith.addf %a, %bb : f64
      %or = arith.ori %na, %nb : i1
      gnnk.yield %sum, %or : f64, i1
    }
    %r = arith.select %any, %zero, %s : f64
    %first = arith.cmpi eq, %team, %c0 : index
    scf.if %first {
      gnnk.store %r to %out[%lane] : f64 into memref<?xf64>
    }
    gnnk.yield
  }
  gnnk.return
}

// -----

// Two mappings in one kernel: code after the first still runs (no early
// return).
// CHECK-LABEL: // two_phases: block 32, grid nodes
// CHECK: if ([[I:i[0-9]+]] < [[N:v[0-9]+]]) {
// CHECK: out0[[[I]]] = 0.0f;
// CHECK: if ([[I2:i[0-9]+]] < [[N]]) {
// CHECK: out1[[[I2]]] = 1.0f;
// CHECK-NOT: return
gnnk.kernel @two_phases(%out: memref<?xf32> {gnnk.result = 0 : i64},
                        %out1: memref<?xf32> {gnnk.result = 1 : i64},
                        %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    gnnk.store %z to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %o = arith.constant 1.0 : f32
    gnnk.store %o to %out1[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}
