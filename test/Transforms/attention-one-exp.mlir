// RUN: gnn-opt %S/../../examples/gatv2.mlir --gnn-cuda-pipeline='stats=mean-degree:4,max-in:64' | FileCheck %s

// In f32 the edge loop takes two edges a step (group 2): both edges' rows
// are loaded and their partial scores summed in one team reduction; then
// m' = max(m, x0, x1), the state scales by e^(m - m') (1 where m stays, also
// m = m' = -inf), each edge weighs e^(x - m') (1 where x is m': (x - x) + 1,
// NaN for +inf; 0 for -inf): one exponential per edge and one per step,
// arguments <= 0. The accumulators are rescaled once and take both edges.
// CHECK: gnnk.for_edges
// CHECK-SAME: attributes {group = 2 : i64}
// CHECK-NOT: math.exp
// CHECK: %[[X2:.*]]:2 = gnnk.team_reduce
// CHECK: %[[M0:.*]] = arith.maximumf %[[MOLD2:.*]], %[[X2]]#0 : f32
// CHECK-NEXT: %[[M2:.*]] = arith.maximumf %[[M0]], %[[X2]]#1 : f32
// CHECK-NEXT: %[[STAYS:.*]] = arith.cmpf oeq, %[[MOLD2]], %[[M2]] : f32
// CHECK-NEXT: %[[DM:.*]] = arith.subf %[[MOLD2]], %[[M2]] : f32
// CHECK-NEXT: %[[EM:.*]] = math.exp %[[DM]] : f32
// CHECK-NEXT: arith.constant 1.0
// CHECK-NEXT: %[[SCALE2:.*]] = arith.select %[[STAYS]], %{{.*}}, %[[EM]] : f32
// CHECK-NEXT: %[[SS:.*]] = arith.mulf %{{.*}}, %[[SCALE2]] : f32
// CHECK-NEXT: %[[TOP:.*]] = arith.cmpf oeq, %[[X2]]#0, %[[M2]] : f32
// CHECK-NEXT: %[[D0:.*]] = arith.subf %[[X2]]#0, %[[M2]] : f32
// CHECK-NEXT: %[[E0:.*]] = math.exp %[[D0]] : f32
// CHECK-NEXT: %[[XX0:.*]] = arith.subf %[[X2]]#0, %[[X2]]#0 : f32
// CHECK-NEXT: arith.constant 1.0
// CHECK-NEXT: %[[ONE0:.*]] = arith.addf %[[XX0]], %{{.*}} : f32
// CHECK-NEXT: %[[W0:.*]] = arith.select %[[TOP]], %[[ONE0]], %[[E0]] : f32
// CHECK-NEXT: arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[DEAD0:.*]] = arith.cmpf oeq, %[[X2]]#0, %{{.*}} : f32
// CHECK-NEXT: arith.constant 0.0
// CHECK-NEXT: %[[P0:.*]] = arith.select %[[DEAD0]], %{{.*}}, %[[W0]] : f32
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[SS]], %[[P0]] : f32
// CHECK: math.exp
// CHECK: arith.constant 0.0
// CHECK-NEXT: %[[P1:.*]] = arith.select
// CHECK-NEXT: arith.addf %[[S0]], %[[P1]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.mulf %{{.*}}, %[[SCALE2]] : f32
// CHECK-NEXT: %[[A0:.*]] = math.fma %[[P0]], %{{.*}}#0, %[[A]] : f32
// CHECK-NEXT: math.fma %[[P1]], %{{.*}}#0, %[[A0]] : f32
// CHECK-NOT: math.exp
// CHECK: } rest {

// The rest region (the row's last edge when an odd number is left) takes
// one exponential per edge and head, e^-|x - m|:
// either the maximum stays (scale 1, the edge's weight e^(x - m)) or the
// score raises it (scale e^(m - x), weight e^0 = 1); and one per merge of
// two states, e^-|m1 - m2|. A +inf score's weight is (x - x) + 1 = NaN.
// CHECK-NOT: math.exp
// CHECK: %[[X:.*]] = gnnk.team_reduce
// CHECK: %[[M:.*]] = arith.maximumf %[[MOLD:.*]], %[[X]] : f32
// CHECK-NEXT: %[[RAISES:.*]] = arith.cmpf ogt, %[[X]], %[[MOLD]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[X]], %[[MOLD]] : f32
// CHECK-NEXT: %[[A:.*]] = math.absf %[[D]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: arith.constant 1.0
// CHECK-NEXT: %[[SCALE:.*]] = arith.select %[[RAISES]], %[[E]], %{{.*}} : f32
// CHECK-NEXT: %[[XX:.*]] = arith.subf %[[X]], %[[X]] : f32
// CHECK-NEXT: arith.constant 1.0
// CHECK-NEXT: %[[ONE:.*]] = arith.addf %[[XX]], %{{.*}} : f32
// CHECK-NEXT: arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[DEAD:.*]] = arith.cmpf oeq, %[[X]], %{{.*}} : f32
// CHECK-NEXT: %[[W:.*]] = arith.select %[[RAISES]], %[[ONE]], %[[E]] : f32
// CHECK-NEXT: arith.constant 0.0
// CHECK-NEXT: %[[P:.*]] = arith.select %[[DEAD]], %{{.*}}, %[[W]] : f32
// CHECK-NEXT: math.fma %{{.*}}, %[[SCALE]], %[[P]] : f32
// CHECK-NOT: math.exp
// CHECK: } merge {
// CHECK: %[[M1:.*]] = arith.maximumf %[[A1:.*]], %[[A2:.*]] : f32
// CHECK-NEXT: %[[D1:.*]] = arith.subf %[[A1]], %[[A2]] : f32
// CHECK-NEXT: %[[B1:.*]] = math.absf %[[D1]] : f32
// CHECK-NEXT: %[[N1:.*]] = arith.negf %[[B1]] : f32
// CHECK-NEXT: math.exp %[[N1]] : f32
// CHECK-NOT: math.exp
// CHECK: gnnk.yield
