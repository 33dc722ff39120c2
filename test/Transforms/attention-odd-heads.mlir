// RUN: gnn-opt %S/../Integration/Inputs/attention_odd_heads.mlir --gnn-cuda-pipeline='stats=mean-degree:4,max-in:64' | FileCheck %s

// Heads of 3 features on 8 feature lanes: one masked sum per head, reduced
// over all the feature lanes (width 8), not over 3 lanes (no shuffle group).
// CHECK-LABEL: gnnk.kernel @dot_h2d3
// CHECK: gnnk.team_reduce %{{.*}}, %{{.*}} stride 1 width 8 : f32, f32
// CHECK-NOT: width 3 :
// CHECK-LABEL: gnnk.kernel @dot_h4d5
// CHECK: gnnk.team_reduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} stride 1 width {{(8|16|32)}} : f32, f32, f32, f32
// CHECK-NOT: width 5 :
