// RUN: gnn-opt %S/../../examples/gatv2.mlir --gnn-cuda-pipeline='stats=mean-degree:4,max-in:64' | FileCheck %s

// The online softmax takes one exponential per edge and head, e^-|x - m|:
// either the maximum stays (scale 1, the edge's weight e^(x - m)) or the
// score raises it (scale e^(m - x), weight e^0 = 1); and one per merge of
// two states, e^-|m1 - m2|. A +inf score's weight is (x - x) + 1 = NaN.
// CHECK: gnnk.for_edges
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
