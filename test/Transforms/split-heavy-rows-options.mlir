// RUN: not gnn-opt %s --pass-pipeline='builtin.module(gnn-split-heavy-rows{max-chunks=0})' 2>&1 | FileCheck %s
// RUN: not gnn-opt %s --gnn-cuda-pipeline='max-chunks=-3' 2>&1 | FileCheck %s --check-prefix=NEG

// RUN: not gnn-opt %s --gnn-cuda-pipeline='max-chunks=2147483648' 2>&1 | FileCheck %s --check-prefix=BIG

// Long chunks (at most 4) over rows of 8 floats, a team of 2 lanes: the
// final kernel probes the rows inside its chunk 2 at a time (a 2-lane OR
// of the marks) and walks the 2 marks of each step.
// RUN: gnn-opt %s --gnn-cuda-pipeline='stats=mean-degree:2,max-in:5000 max-chunks=4' | FileCheck %s --check-prefix=NARROW
// NARROW-LABEL: gnnk.kernel @spmm_0_final(
// NARROW: gnnk.for_blocks %{{.*}} lanes 2 {
// NARROW: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2{{(_[0-9]+)?}} {
// NARROW: gnnk.team_reduce %{{.*}} stride 1 width 2 : i32 {
// NARROW: arith.ori
// NARROW: scf.for %{{.*}} = %c0_i32{{.*}} to %c2_i32 step %c1_i32{{.*}} : i32 {

// CHECK: error: expects max-chunks between 1 and 2147483647 but got 0
// NEG: error: expects max-chunks between 1 and 2147483647 but got -3
// BIG: error: expects max-chunks between 1 and 2147483647 but got 2147483648
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
