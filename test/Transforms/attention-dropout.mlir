// RUN: gnn-opt %S/../Integration/Inputs/attention_dropout.mlir --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups))' | FileCheck %s --check-prefix=GROUPS
// RUN: gnn-opt %S/../Integration/Inputs/attention_dropout.mlir --gnn-cuda-pipeline='stats=mean-degree:4,max-in:64' | FileCheck %s
// RUN: gnn-opt %S/../Integration/Inputs/attention_dropout.mlir --gnn-cuda-pipeline='stats=mean-degree:4,max-in:5000' | FileCheck %s --check-prefix=SPLIT
// RUN: gnn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups))' | FileCheck %s --check-prefix=APART

// Attention dropout (alpha * mask between the softmax and the spmm) is part
// of the attention group: the scaling ops sit between the softmax and the
// spmm.
// GROUPS-LABEL: func.func @gat_dropout
// GROUPS: gnn.kernel_group "attention_0" family = attention -> tensor<?x4x16xf32> {
// GROUPS: %[[A:.*]] = gnn.edge_softmax
// GROUPS-NEXT: %[[D:.*]] = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<?x4xf32>, tensor<?x4xf32>)
// GROUPS: gnn.spmm sum %{{.*}}, %{{.*}} weights(%[[D]] : tensor<?x4xf32>)
// GROUPS-LABEL: func.func @transformer_dropout
// GROUPS: gnn.kernel_group "attention_0" family = attention -> tensor<?x2x8xf32>, tensor<?x2xf32> {
// GROUPS: %[[A:.*]], %[[L:.*]] = gnn.edge_softmax
// GROUPS-NEXT: %[[M:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[A]], %{{.*}} : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?xf32>)
// GROUPS: %[[D:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<?x2xf32>)
// GROUPS: %[[O:.*]] = gnn.spmm sum %{{.*}}, %{{.*}} weights(%[[D]] : tensor<?x2xf32>)
// GROUPS: gnn.yield %[[O]], %[[L]]

// GAT with dropout is 3 launches (two per-node score halves, the attention),
// as without dropout; the score halves are one shared kernel (the same
// computation on different weights: gnn-dedup-kernels). In the edge loop
// (two edges a step in f32) each edge's mask is read at its CSR slot; the
// normaliser takes the softmax terms p alone, the accumulators p * mask,
// rescaled once for both edges. The rest region takes the last edge alone,
// the same way.
// CHECK: gnnk.kernel @elementwise_0
// CHECK-NOT: gnnk.kernel @elementwise_1
// CHECK-LABEL: gnnk.kernel @gat_dropout_attention_0
// CHECK-SAME: %[[MASK:arg[0-9]+]]: memref<?xf32> {gnnk.operand = 3 : i64}
// CHECK: gnnk.for_edges
// CHECK-SAME: attributes {group = 2 : i64}
// CHECK-NEXT: ^bb0(%[[SLOT0:arg[0-9]+]]: index, %arg{{[0-9]+}}: index, %[[SLOT1:arg[0-9]+]]: index, %arg{{[0-9]+}}: index, %arg{{[0-9]+}}: f32, %[[S2:arg[0-9]+]]: f32,
// CHECK: %[[I0:.*]] = arith.muli %[[SLOT0]], %{{.*}} : index
// CHECK-NEXT: %[[J0:.*]] = arith.addi %[[I0]], %{{.*}} : index
// CHECK-NEXT: %[[M0:.*]] = gnnk.load %[[MASK]][%[[J0]]] : memref<?xf32> -> f32
// CHECK-NEXT: %[[F0:.*]] = arith.mulf %{{.*}}, %[[M0]] : f32
// CHECK: %[[I1:.*]] = arith.muli %[[SLOT1]], %{{.*}} : index
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[I1]], %{{.*}} : index
// CHECK-NEXT: %[[M1:.*]] = gnnk.load %[[MASK]][%[[J1]]] : memref<?xf32> -> f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %{{.*}}, %[[M1]] : f32
// CHECK: %[[SCALE:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[SC:.*]] = arith.mulf %[[S2]], %[[SCALE]] : f32
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P0:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[SUM0:.*]] = arith.addf %[[SC]], %[[P0]] : f32
// CHECK-NEXT: %[[W0:.*]] = arith.mulf %[[P0]], %[[F0]] : f32
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P1:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[SUM0]], %[[P1]] : f32
// CHECK-NEXT: %[[W1:.*]] = arith.mulf %[[P1]], %[[F1]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NEXT: %[[A0:.*]] = math.fma %[[W0]], %{{.*}}#0, %[[A]] : f32
// CHECK-NEXT: math.fma %[[W1]], %{{.*}}#0, %[[A0]] : f32
// CHECK: } rest {
// CHECK-NEXT: ^bb0(%[[SLOT:arg[0-9]+]]: index, %arg{{[0-9]+}}: index, %arg{{[0-9]+}}: f32, %[[S:arg[0-9]+]]: f32,
// CHECK: %[[I:.*]] = arith.muli %[[SLOT]], %{{.*}} : index
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[M:.*]] = gnnk.load %[[MASK]][%[[J]]] : memref<?xf32> -> f32
// CHECK-NEXT: %[[F:.*]] = arith.mulf %{{.*}}, %[[M]] : f32
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: math.fma %[[S]], %{{.*}}, %[[P]] : f32
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[P]], %[[F]] : f32
// CHECK-NEXT: arith.mulf %[[W]], %{{.*}}#0 : f32
// CHECK: } merge {
// CHECK-NOT: gnnk.kernel
// CHECK-LABEL: func.func @gat_dropout
// CHECK-COUNT-2: gnnk.launch @elementwise_0[
// CHECK-NEXT: gnnk.launch @gat_dropout_attention_0[
// CHECK-NOT: gnnk.launch
// CHECK: return

// Transformer: both masks and the division by (1 - p) make the factor; the
// log-sum-exp is m + log s of the unmasked softmax.
// CHECK-LABEL: gnnk.kernel @transformer_dropout_attention_0
// CHECK-SAME: %[[DROP:arg[0-9]+]]: memref<?xf32> {gnnk.operand = 3 : i64}, %[[SCALE:arg[0-9]+]]: memref<?xf32> {gnnk.operand = 4 : i64}
// CHECK: gnnk.for_edges
// CHECK: } rest {
// CHECK-NEXT: ^bb0(%[[SLOT:arg[0-9]+]]: index, %arg{{[0-9]+}}: index, %arg{{[0-9]+}}: f32, %[[S:arg[0-9]+]]: f32,
// CHECK: %[[D:.*]] = gnnk.load %[[DROP]]
// CHECK: %[[C:.*]] = gnnk.load %[[SCALE]][%[[SLOT]]]
// CHECK-NEXT: %[[DC:.*]] = arith.mulf %[[D]], %[[C]] : f32
// CHECK-NEXT: %[[DA:.*]] = arith.mulf %[[DC]], %{{.*}} : f32
// CHECK: %[[F:.*]] = arith.divf %[[DA]], %{{.*}} : f32
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: math.fma %[[S]], %{{.*}}, %[[P]] : f32
// CHECK-NEXT: arith.mulf %[[P]], %[[F]] : f32
// CHECK: } merge {
// CHECK: %[[LOG:.*]] = math.log
// CHECK: arith.addf %{{.*}}, %[[LOG]]
// CHECK-LABEL: func.func @transformer_dropout
// CHECK-COUNT-1: gnnk.launch
// CHECK-NOT: gnnk.launch
// CHECK: return

// Heavy rows split the fused kernel as without dropout: the state and merge
// rule are the softmax's, and the partial kernel reads the mask too.
// SPLIT-LABEL: gnnk.kernel @gat_dropout_attention_0_partial
// SPLIT-SAME: %[[MASK:arg[0-9]+]]: memref<?xf32> {gnnk.operand = 3 : i64}
// SPLIT: gnnk.load %[[MASK]]
// SPLIT-LABEL: gnnk.kernel @gat_dropout_attention_0_final
// SPLIT-LABEL: func.func @gat_dropout
// SPLIT: gnnk.launch @gat_dropout_attention_0_partial[
// SPLIT: gnnk.launch @gat_dropout_attention_0_final[
// SPLIT: gnnk.launch @gat_dropout_attention_0[

// -----

// An op between the softmax and the spmm that is not linear in the softmax
// weights (alpha + mask) keeps them in separate kernels.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// APART-LABEL: func.func @not_scaling
// APART-NOT: family = attention
// APART: family = edge_softmax
// APART-NOT: family = attention
func.func @not_scaling(%g: !gnn.graph, %q: tensor<?x2x8xf32>,
                       %drop: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x2x8xf32>, tensor<?x2x8xf32> -> tensor<?x2xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  %ne = tensor.dim %a, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%ne) : tensor<?x2xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %drop : tensor<?x2xf32>, tensor<?x2xf32>) outs(%e : tensor<?x2xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %r = gnn.spmm sum %g, %q weights(%w : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
  return %r : tensor<?x2x8xf32>
}

// -----

// alpha * alpha reads the weights twice: not a scaling.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// APART-LABEL: func.func @squared
// APART-NOT: family = attention
// APART: family = edge_softmax
// APART-NOT: family = attention
func.func @squared(%g: !gnn.graph, %q: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x2x8xf32>, tensor<?x2x8xf32> -> tensor<?x2xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x2xf32>
  %ne = tensor.dim %a, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%ne) : tensor<?x2xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %a : tensor<?x2xf32>, tensor<?x2xf32>) outs(%e : tensor<?x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %r = gnn.spmm sum %g, %q weights(%w : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
  return %r : tensor<?x2x8xf32>
}
