// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels --gnn-dedup-kernels | FileCheck %s
// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels='share-kernels=1' | FileCheck %s
// RUN: gnn-opt %s --gnn-codegen-pipeline --gnn-lower-to-kernels | FileCheck %s --check-prefix=APART
// RUN: gnn-opt %s --gnn-cuda-pipeline=stats=mean-degree:4.0,max-in:2000 | FileCheck %s --check-prefix=SPLIT

// Identical kernels (the spmm over 64 features, three times) are one
// gnnk.kernel, the first; the spmm over 32 features keeps its own. Sharing
// before the heavy-row split splits the shared kernel once.
// CHECK-LABEL: gnnk.kernel @spmm_0(
// CHECK-NOT: gnnk.kernel @spmm_1(
// CHECK-LABEL: gnnk.kernel @spmm_2(
// CHECK-NOT: gnnk.kernel @spmm_3(
// CHECK-LABEL: func.func @f
// CHECK: gnnk.launch @spmm_0[%{{.*}}] (%arg1)
// CHECK-NEXT: gnnk.launch @spmm_0[
// CHECK-NEXT: gnnk.launch @spmm_2[%{{.*}}] (%arg2)
// CHECK-NEXT: gnnk.launch @spmm_0[

// Without sharing every group has its kernel.
// APART: gnnk.kernel @spmm_0(
// APART: gnnk.kernel @spmm_1(
// APART: gnnk.kernel @spmm_2(
// APART: gnnk.kernel @spmm_3(
// APART: gnnk.launch @spmm_0[
// APART-NEXT: gnnk.launch @spmm_1[
// APART-NEXT: gnnk.launch @spmm_2[
// APART-NEXT: gnnk.launch @spmm_3[

// SPLIT: gnnk.kernel @spmm_0(
// SPLIT: gnnk.kernel @spmm_0_partial(
// SPLIT: gnnk.kernel @spmm_0_final(
// SPLIT: gnnk.kernel @spmm_2(
// SPLIT-NOT: gnnk.kernel @spmm_1
// SPLIT-NOT: gnnk.kernel @spmm_3
// SPLIT-LABEL: func.func @f
// SPLIT-COUNT-2: gnnk.launch @spmm_0_partial[
// SPLIT: gnnk.launch @spmm_2_partial[
// SPLIT: gnnk.launch @spmm_0_partial[
func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>, %y: tensor<?x32xf32>) -> (tensor<?x64xf32>, tensor<?x32xf32>) {
  %a = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %b = gnn.spmm sum %g, %a : tensor<?x64xf32> -> tensor<?x64xf32>
  %c = gnn.spmm sum %g, %y : tensor<?x32xf32> -> tensor<?x32xf32>
  %d = gnn.spmm sum %g, %b : tensor<?x64xf32> -> tensor<?x64xf32>
  return %d, %c : tensor<?x64xf32>, tensor<?x32xf32>
}
