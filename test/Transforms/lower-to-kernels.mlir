// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:13' --gnn-lower-to-kernels -split-input-file | FileCheck %s
// RUN: gnn-opt %s --gnn-cuda-pipeline='stats=mean-degree:13,max-in:5000' -split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: gnn-opt %s --gnn-cuda-pipeline='stats=mean-degree:13 fuse=attention,aggregation,prologue' -split-input-file | FileCheck %s --check-prefix=PROLOGUE
// RUN: gnn-opt %s --gnn-cuda-pipeline='stats=mean-degree:13,max-in:5000 max-chunks=4' -split-input-file | FileCheck %s --check-prefix=LONG

// Fused GATv2 attention: one kernel, a warp per destination row; per edge the
// lane's 4 features of l_src + r_dst go through the score body, a team
// reduction over the head's 4 lanes gives the head's score, and the online
// softmax state (m, s, acc x 4) is carried; the same rule merges partial
// states (the loop's merge region).

#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: gnnk.kernel @attention_0
// CHECK-SAME: gnnk.graph = "csr_row_ptr"
// CHECK: gnnk.for_rows %{{.*}} lanes 32 {
// CHECK: %[[DST:.*]]:4 = gnnk.load {{.*}} -> f32, f32, f32, f32
// CHECK: %{{.*}}:6 = gnnk.for_edges {{.*}} nbrs({{.*}}) iter_args({{.*}}) -> f32, f32, f32, f32, f32, f32
// CHECK: %[[SRC:.*]]:4 = gnnk.load {{.*}} -> f32, f32, f32, f32
// CHECK: arith.addf %[[SRC]]#0, %[[DST]]#0
// CHECK: arith.cmpf ogt
// CHECK: gnnk.team_reduce %{{.*}} stride 1 width 4 : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: gnnk.yield {{.*}} : f32, f32, f32, f32, f32, f32
// CHECK: } merge {
// CHECK: arith.maximumf
// CHECK: gnnk.store {{.*}} : f32, f32, f32, f32 into memref<?xf32>
// CHECK-NOT: gnnk.kernel
// CHECK-LABEL: func.func @gatv2
// CHECK: gnnk.launch @attention_0[%{{.*}}] (%{{.*}}, %{{.*}}, %{{.*}}) rows [#{{.*}}]
// CHECK-NOT: gnnk.launch
func.func @gatv2(%g: !gnn.graph, %xl: tensor<?x2x16xf32>, %xr: tensor<?x2x16xf32>, %att: tensor<2x16xf32>) -> tensor<?x2x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %e = gnn.sddmm add %g, %xr, %xl : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x2x16xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x2x16xf32>
  %sempty = tensor.empty(%ne) : tensor<?x2xf32>
  %szero = linalg.fill ins(%zero : f32) outs(%sempty : tensor<?x2xf32>) -> tensor<?x2xf32>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %att : tensor<?x2x16xf32>, tensor<2x16xf32>) outs(%szero : tensor<?x2xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %neg = arith.mulf %v, %slope : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %lr = arith.select %pos, %v, %neg : f32
    %m = arith.mulf %lr, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x2xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x2xf32>
  %agg = gnn.spmm sum %g, %xr weights(%alpha : tensor<?x2xf32>) : tensor<?x2x16xf32> -> tensor<?x2x16xf32>
  return %agg : tensor<?x2x16xf32>
}

// Heavy rows (more than 128 edges) split: the row kernel keeps the light
// rows, updating its result in place; each chunk's partial state (m, s,
// acc x 4 per lane: 192 floats) goes to a buffer of its own (a second
// result of the partial kernel, min(ceil(edges / 128), 8192) states),
// written by the partial kernel and merged by the final one. The row
// kernel's launch overlaps those two (`overlaps = 2`): it writes only light
// rows, they only heavy rows and the states. Every kernel of the split takes
// the same constant threshold.
// SPLIT-LABEL: gnnk.kernel @attention_0(
// SPLIT-SAME: {gnnk.result = 0 : i64}
// SPLIT-NOT: split_threshold
// SPLIT: gnnk.for_rows
// SPLIT: %[[LIGHTROW:.*]] = arith.cmpi sle, %{{.*}}, %c128{{(_[0-9]+)?}} : index
// SPLIT-NEXT: scf.if %[[LIGHTROW]] {
// SPLIT-NEXT: gnnk.for_edges
// SPLIT-LABEL: gnnk.kernel @attention_0_partial(
// SPLIT-SAME: %[[OUT:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 0 : i64}
// SPLIT-SAME: %[[STATES:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 1 : i64}
// SPLIT-SAME: grid = #[[CHUNKS:.*]]}
// SPLIT: %[[SHORT:.*]] = arith.ceildivsi %[[E:[0-9]+]], %c8192
// SPLIT-NEXT: %[[LEN:.*]] = arith.maxsi %c128{{(_[0-9]+)?}}, %[[SHORT]]
// SPLIT-NEXT: %[[COUNT:.*]] = arith.ceildivsi %[[E]], %[[LEN]]
// SPLIT-NEXT: gnnk.for_blocks %[[COUNT]] lanes 32 {
// SPLIT: gnnk.for_edges
// SPLIT: gnnk.block_reduce
// SPLIT: gnnk.store %{{.*}}#0, %{{.*}}#1 to %[[STATES]]
// SPLIT-LABEL: gnnk.kernel @attention_0_final(
// SPLIT-SAME: %[[FOUT:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 0 : i64}
// SPLIT-SAME: %[[FSTATES:[a-z0-9]+]]: memref<?xf32> {gnnk.operand = 3 : i64}
// SPLIT: arith.ceildivsi %{{.*}}, %c8192
// SPLIT-NEXT: %[[FLEN:.*]] = arith.maxsi
// SPLIT-NEXT: %[[FCHUNKS:.*]] = arith.ceildivsi %{{.*}}, %[[FLEN]]
// SPLIT-NEXT: gnnk.for_blocks %[[FCHUNKS]] lanes 32 {
// SPLIT-NEXT: ^bb0(%[[BLK:.*]]: index, %[[TEAM:.*]]: index, %{{.*}}: index):
// SPLIT: %[[FIRST:.*]] = arith.muli %[[BLK]], %c8{{(_[0-9]+)?}} : index
// SPLIT-NEXT: %[[CHUNK:.*]] = arith.addi %[[FIRST]], %[[TEAM]] : index
// SPLIT-NEXT: %[[SOME:.*]] = arith.cmpi slt, %[[CHUNK]], %[[FCHUNKS]] : index
// SPLIT-NEXT: scf.if %[[SOME]] {
// SPLIT: gnnk.load %[[FSTATES]][%{{.*}}] : memref<?xf32> -> f32, f32
// SPLIT: scf.for {{.*}} iter_args
// SPLIT: gnnk.load %[[FSTATES]][%{{.*}}] : memref<?xf32> -> f32, f32
// SPLIT: math.exp
// SPLIT: } {gnnk.unroll = 8 : i64}
// SPLIT: gnnk.store
// SPLIT-LABEL: func.func @gatv2
// SPLIT: %[[PART:.*]]:2 = gnnk.launch @attention_0_partial[{{.*}}] ({{.*}}) rows [#[[NODEROWS:[^,]*]], #{{.*}}] :
// SPLIT: %[[FIN:.*]] = gnnk.launch @attention_0_final[{{.*}}] ({{.*}}, %[[PART]]#1, %[[PART]]#0) rows [#[[NODEROWS]]] {tied = array<i64: 4>}
// SPLIT: %[[ROWS:.*]] = gnnk.launch @attention_0[{{.*}}] ({{.*}}, %[[FIN]]) rows [#[[NODEROWS]]] {overlaps = 2 : i64, tied = array<i64: 3>}
// SPLIT: return %[[ROWS]]

// At most max-chunks chunks (here 4) of max(128, ceil(edges / 4)) positions
// (chunks of 3250 edges: the split is 128, gnn::chooseSplit): the grids are
// capped (the minimum of a map's results), and the final kernel also walks the rows of its
// chunk, reducing the heavy rows lying wholly inside it with the whole
// block: the rows are probed 32 at a time (lane l reads row base + l, a team
// reduction ORs the marks of rows inside the chunk into a mask) and the
// marked ones taken in order by a rolled loop.
// LONG-DAG: #[[GRID:.*]] = affine_map<()[s0, s1, s2, s3, s4] -> (s1 ceildiv 128, 4)>
// LONG-LABEL: gnnk.kernel @attention_0_partial(
// LONG-SAME: grid = #[[GRID]]
// LONG: %[[E:.*]] = arith.index_cast %arg7 : i64 to index
// LONG: %[[C:.*]] = arith.ceildivsi %[[E]], %c4
// LONG-NEXT: %[[LEN:.*]] = arith.maxsi %c128{{(_[0-9]+)?}}, %[[C]]
// LONG-NEXT: %[[N:.*]] = arith.ceildivsi %[[E]], %[[LEN]]
// LONG: gnnk.for_blocks %[[N]] lanes 32
// LONG-LABEL: gnnk.kernel @attention_0_final(
// LONG-SAME: grid = #[[GRID]]
// LONG: %[[FLEN:.*]] = arith.maxsi %c128{{(_[0-9]+)?}}, %{{.*}}
// LONG: gnnk.for_blocks
// LONG: %[[LONGER:.*]] = arith.cmpi sgt, %[[FLEN]], %c128{{(_[0-9]+)?}}
// LONG-NEXT: scf.if %[[LONGER]] {
// LONG: scf.for %[[BASE:.*]] = %{{.*}} to %{{.*}} step %c32
// LONG: %[[MINE:.*]] = arith.addi %[[BASE]], %[[LANE:.*]] : index
// LONG: arith.cmpi sle, %[[MINE]]
// LONG: %[[LANE32:.*]] = arith.index_cast %[[LANE]] : index to i32
// LONG: %[[BIT:.*]] = arith.shli %{{.*}}, %[[LANE32]] : i32
// LONG: %[[MARK:.*]] = arith.select %{{.*}}, %[[BIT]]
// LONG: %[[MASK:.*]] = gnnk.team_reduce %[[MARK]] stride 1 width 32 : i32
// LONG: arith.ori
// LONG: scf.for %[[J:.*]] = %c0{{.*}} to %c32{{.*}} step %{{.*}} : i32
// LONG: arith.shrui %[[MASK]], %[[J]]
// LONG: scf.if
// LONG: %[[JX:.*]] = arith.index_cast %[[J]] : i32 to index
// LONG: arith.addi %[[BASE]], %[[JX]]
// LONG: gnnk.for_edges
// LONG: gnnk.team_reduce
// LONG: gnnk.block_reduce
// LONG: math.exp
// LONG: gnnk.store
// LONG: } {gnnk.unroll = 1 : i64}
// LONG: scf.for {{.*}} iter_args
// LONG: gnnk.store
// LONG-LABEL: func.func @gatv2
// LONG: gnnk.launch @attention_0_partial[{{.*}}] ({{.*}}) rows [#[[NODEROWS:[^,]*]], #{{.*}}] :
// LONG: gnnk.launch @attention_0_final[{{.*}}] ({{.*}}) rows [#[[NODEROWS]]] {tied
// LONG: gnnk.launch @attention_0[{{.*}}] ({{.*}}) rows [#[[NODEROWS]]] {overlaps = 2 : i64, tied

// -----

// A fused gather -> elementwise -> reduce: the gathered source row goes
// through the body inside the edge loop, nothing edge-sized is written.

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: gnnk.kernel @aggregation_0
// CHECK: gnnk.for_rows
// CHECK: gnnk.for_edges
// CHECK: gnnk.load
// CHECK: math.tanh
// CHECK: arith.maximumf
// CHECK: } merge {
// CHECK: gnnk.team_reduce
// CHECK-LABEL: func.func @gather_reduce
// CHECK-COUNT-1: gnnk.launch
func.func @gather_reduce(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x8xf32>
  %em = tensor.empty(%ne) : tensor<?x8xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<?x8xf32>) outs(%em : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.tanh %v : f32
    linalg.yield %y : f32
  } -> tensor<?x8xf32>
  %r = gnn.reduce max %g, %t : tensor<?x8xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// GCN with the node prologue (opt-in rule `prologue`): one kernel; per
// neighbour the degree comes from the row pointer, rsqrt(deg + 1) scales the
// neighbour's row, and the epilogue recomputes the row's own scale.
// PROLOGUE-LABEL: gnnk.kernel @aggregation_0
// PROLOGUE: gnnk.for_edges
// PROLOGUE: gnnk.load %{{.*}}[%{{.*}}] : memref<?xi32> -> i32
// PROLOGUE: math.rsqrt
// PROLOGUE: } merge {
// PROLOGUE: math.rsqrt
// PROLOGUE: gnnk.store
// PROLOGUE-NOT: gnnk.kernel
// PROLOGUE-LABEL: func.func @gcn
// PROLOGUE: linalg.matmul
// PROLOGUE-COUNT-1: gnnk.launch
#id1 = affine_map<(d0) -> (d0)>
#id2b = affine_map<(d0, d1) -> (d0, d1)>
#rowb = affine_map<(d0, d1) -> (d0)>
#colb = affine_map<(d0, d1) -> (d1)>
func.func @gcn(%g: !gnn.graph, %x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %deg = gnn.degree %g : tensor<?xf32>
  %dempty = tensor.empty(%n) : tensor<?xf32>
  %dinv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%deg : tensor<?xf32>) outs(%dempty : tensor<?xf32>) {
  ^bb0(%d: f32, %o: f32):
    %s = arith.addf %d, %one : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %hs = linalg.generic {indexing_maps = [#id2b, #rowb, #id2b], iterator_types = ["parallel", "parallel"]}
      ins(%h, %dinv : tensor<?x64xf32>, tensor<?xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x64xf32>
  %agg = gnn.spmm sum %g, %hs : tensor<?x64xf32> -> tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2b, #id2b, #rowb, #colb, #id2b], iterator_types = ["parallel", "parallel"]}
      ins(%agg, %hs, %dinv, %b : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %d: f32, %bias: f32, %o: f32):
    %t = arith.addf %a, %s : f32
    %u = arith.mulf %t, %d : f32
    %v = arith.addf %u, %bias : f32
    linalg.yield %v : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}

// -----

// An attention group returning the softmax's log-sum-exp: after the output
// row, the lane holding each head's first feature stores m + log s of its
// head into the second result (a row of heads per node); with heavy rows the
// final kernel does the same and updates both results in place. An edge
// softmax alone stores it from the team's first lane after the normaliser.

// CHECK-LABEL: gnnk.kernel @attention_0(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 0 : i64}, %[[LSE:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 1 : i64}
// CHECK: gnnk.store %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} to %[[OUT]]
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: scf.if
// CHECK-NEXT: %[[LOG:.*]] = math.log %[[STATE:[0-9]+]]#1 : f32
// CHECK-NEXT: %[[V:.*]] = arith.addf %[[STATE]]#0, %[[LOG]] : f32
// CHECK: %[[NAN:.*]] = arith.andi
// CHECK-NEXT: %[[L:.*]] = arith.select %[[NAN]], %{{.*}}, %[[V]] : f32
// CHECK: gnnk.store %[[L]] to %[[LSE]]
// CHECK-LABEL: func.func @attention_lse
// CHECK: %[[R:.*]]:2 = gnnk.launch @attention_0[%{{.*}}] ({{.*}}) rows [#[[NODES:.*]], #[[NODES]]]
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK-LABEL: gnnk.kernel @edge_softmax_0(
// CHECK-SAME: %[[SLSE:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 1 : i64}
// CHECK: math.log
// CHECK: gnnk.store %{{.*}} to %[[SLSE]]
// CHECK-LABEL: func.func @softmax_lse
// CHECK: gnnk.launch @edge_softmax_0[%{{.*}}] ({{.*}}) rows [#{{.*}}, #[[NODES]]]

// SPLIT-LABEL: gnnk.kernel @attention_0_final(
// SPLIT: math.log
// SPLIT: gnnk.store %{{.*}} to %{{.*}}[%{{.*}}] : f32 into memref<?xf32>
// SPLIT-LABEL: func.func @attention_lse
// SPLIT: %[[PART:.*]]:3 = gnnk.launch @attention_0_partial[
// SPLIT: %[[FIN:.*]]:2 = gnnk.launch @attention_0_final[{{.*}}] ({{.*}}, %[[PART]]#2, %[[PART]]#0, %[[PART]]#1) rows [{{.*}}, {{.*}}] {tied = array<i64: 4, 5>}
// SPLIT: %[[ROWS:.*]]:2 = gnnk.launch @attention_0[{{.*}}] ({{.*}}, %[[FIN]]#0, %[[FIN]]#1) rows [{{.*}}, {{.*}}] {overlaps = 2 : i64, tied = array<i64: 3, 4>}
// SPLIT: return %[[ROWS]]#0, %[[ROWS]]#1
func.func @attention_lse(%g: !gnn.graph, %q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) -> (tensor<?x2x16xf32>, tensor<?x2xf32>) {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x2xf32>
  %alpha, %lse = gnn.edge_softmax %g, %s : tensor<?x2xf32>, tensor<?x2xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x2xf32>) : tensor<?x2x16xf32> -> tensor<?x2x16xf32>
  return %agg, %lse : tensor<?x2x16xf32>, tensor<?x2xf32>
}

func.func @softmax_lse(%g: !gnn.graph, %s: tensor<?x2xf32> {gnn.domain = "edge"}) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %alpha, %lse = gnn.edge_softmax %g, %s : tensor<?x2xf32>, tensor<?x2xf32>
  return %alpha, %lse : tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// A sum over all rows into a small static result (a bias gradient, and a
// broadcast scalar's through a constant-0 output index), in two kernels
// that fill the GPU (about 1024 blocks): @elementwise_0, a block per
// (element, chunk) -- C = min(ceil(nodes / 2048), floor(1024 / count))
// chunks of ceil(nodes / C) rows, element fastest -- its threads striding
// over the chunk's rows, a block reduction in thread order, thread 0
// storing the double sum in a static f64 workspace ([chunk][element], count
// x floor(1024 / count) slots); @elementwise_0_final, a block per element:
// thread t adds its ceil(C / 256) chunks in order, a block reduction in
// thread order, thread 0 adds the init once, rounds once and stores. The
// sums run in double (each term widened). C depends only on the row count.
#rs_in = affine_map<(d0, d1) -> (d1, d0)>
#rs_out = affine_map<(d0, d1) -> (d0)>
#rs_all = affine_map<(d0) -> (d0)>
#rs_one = affine_map<(d0) -> (0)>
// CHECK-DAG: #[[P8:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> ((s0 ceildiv 2048) * 8, 1024)>
// CHECK-DAG: #[[G8:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> (8)>
// CHECK-DAG: #[[P1:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 2048, 1024)>
// CHECK-DAG: #[[G1:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> (1)>
// CHECK-DAG: #[[WS:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> (1024)>
// CHECK-LABEL: gnnk.kernel @elementwise_0(
// CHECK-SAME: %[[N:[a-z0-9]+]]: i64 {gnnk.size = "nodes"}
// CHECK-SAME: %[[WS0:[a-z0-9]+]]: memref<?xf64> {gnnk.result = 0 : i64}
// CHECK-SAME: grid = #[[P8]]
// CHECK: %[[ROWS:.*]] = arith.index_cast %[[N]]
// CHECK: %[[BYROWS:.*]] = arith.ceildivsi %[[ROWS]], %c2048
// CHECK: %[[C:.*]] = arith.minsi %[[BYROWS]], %c128
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[C]], %c8
// CHECK: gnnk.for_blocks %[[BLOCKS]] lanes 1 {
// CHECK-NEXT: ^bb0(%[[BLK:.*]]: index, %[[THR:.*]]: index, %{{.*}}: index):
// CHECK: %[[E:.*]] = arith.remui %[[BLK]], %c8
// CHECK: %[[CHUNK:.*]] = arith.divui %[[BLK]], %c8
// CHECK: %[[LEN:.*]] = arith.ceildivsi %[[ROWS]], %{{.*}}
// CHECK: %[[LO0:.*]] = arith.muli %[[CHUNK]], %[[LEN]]
// CHECK: %[[LO:.*]] = arith.minsi %[[LO0]], %[[ROWS]]
// CHECK: %[[HI0:.*]] = arith.addi %[[LO]], %[[LEN]]
// CHECK: %[[HI:.*]] = arith.minsi %[[HI0]], %[[ROWS]]
// CHECK: %[[FROM:.*]] = arith.addi %[[LO]], %[[THR]]
// CHECK: scf.for %{{.*}} = %[[FROM]] to %[[HI]] step %c256{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64)
// CHECK: gnnk.load
// CHECK: %[[T:.*]] = arith.addf %{{.*}} : f32
// CHECK: %[[W:.*]] = arith.extf %[[T]] : f32 to f64
// CHECK: arith.addf %{{.*}}, %[[W]] : f64
// CHECK: %[[SUM:.*]] = gnnk.block_reduce %{{.*}} : f64
// CHECK: scf.if
// CHECK-NOT: arith.truncf
// CHECK: %[[SLOT:.*]] = arith.muli %[[CHUNK]], %c8
// CHECK: arith.addi %[[SLOT]], %[[E]]
// CHECK: gnnk.store %[[SUM]] to %[[WS0]][%{{.*}}] : f64 into memref<?xf64>
// CHECK-LABEL: gnnk.kernel @elementwise_0_final(
// CHECK-SAME: %[[FN:[a-z0-9]+]]: i64 {gnnk.size = "nodes"}
// CHECK-SAME: %[[PART:[a-z0-9]+]]: memref<?xf64> {gnnk.operand = 0 : i64}
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<?xf32> {gnnk.result = 0 : i64}
// CHECK-SAME: grid = #[[G8]]
// CHECK: %[[FBYROWS:.*]] = arith.ceildivsi %{{.*}}, %c2048
// CHECK: %[[FC:.*]] = arith.minsi %[[FBYROWS]], %c128
// CHECK: gnnk.for_blocks %c8{{.*}} lanes 1 {
// CHECK-NEXT: ^bb0(%[[FE:.*]]: index, %[[FTHR:.*]]: index, %{{.*}}: index):
// CHECK: %[[Q:.*]] = arith.ceildivsi %[[FC]], %c256
// CHECK: %[[CLO0:.*]] = arith.muli %[[FTHR]], %[[Q]]
// CHECK: %[[CLO:.*]] = arith.minsi %[[CLO0]], %[[FC]]
// CHECK: %[[CHI0:.*]] = arith.addi %[[CLO]], %[[Q]]
// CHECK: %[[CHI:.*]] = arith.minsi %[[CHI0]], %[[FC]]
// CHECK: scf.for %[[K:.*]] = %[[CLO]] to %[[CHI]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64)
// CHECK: %[[AT:.*]] = arith.muli %[[K]], %c8
// CHECK: arith.addi %[[AT]], %[[FE]]
// CHECK: gnnk.load %[[PART]][%{{.*}}] : memref<?xf64> -> f64
// CHECK: %[[TOTAL:.*]] = gnnk.block_reduce %{{.*}} : f64
// CHECK: scf.if
// CHECK: %[[R:.*]] = arith.truncf %[[TOTAL]] : f64 to f32
// CHECK: gnnk.store %[[R]] to %[[OUT]][%[[FE]]]
// CHECK-LABEL: gnnk.kernel @elementwise_1(
// CHECK-SAME: grid = #[[P1]]
// CHECK: arith.minsi %{{.*}}, %c1024
// CHECK: gnnk.for_blocks
// CHECK: gnnk.block_reduce
// CHECK-LABEL: gnnk.kernel @elementwise_1_final(
// CHECK-SAME: grid = #[[G1]]
// CHECK: gnnk.for_blocks %c1{{.*}} lanes 1 {
// CHECK: gnnk.block_reduce
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[W0:.*]] = gnnk.launch @elementwise_0[%arg0] (%arg1) rows [#[[WS]]] : (tensor<?x8xf32>) -> tensor<1024xf64>
// CHECK: gnnk.launch @elementwise_0_final[%arg0] (%[[W0]]) rows [#[[G8]]] : (tensor<1024xf64>) -> tensor<8xf32>
// CHECK: %[[W1:.*]] = gnnk.launch @elementwise_1[%arg0] (%arg2) rows [#[[WS]]] : (tensor<?xf32>) -> tensor<1024xf64>
// CHECK: gnnk.launch @elementwise_1_final[%arg0] (%[[W1]]) rows [#[[G1]]] : (tensor<1024xf64>) -> tensor<1xf32>
func.func @row_sums(%g: !gnn.graph, %dy: tensor<?x8xf32>, %v: tensor<?xf32>) -> (tensor<8xf32>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.generic {indexing_maps = [#rs_in, #rs_out], iterator_types = ["parallel", "reduction"]}
      ins(%dy : tensor<?x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1xf32>) -> tensor<1xf32>
  %ds = linalg.generic {indexing_maps = [#rs_all, #rs_one], iterator_types = ["reduction"]}
      ins(%v : tensor<?xf32>) outs(%z1 : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %db, %ds : tensor<8xf32>, tensor<1xf32>
}

// -----

// GIN's eps gradient: a sum over rows and over the 64 elements of each row
// (a static inner loop) into one element. The rows and the inner loop are
// one flattened index walked by the block's threads in turn (row = f / 64,
// column = f % 64: a warp reads 32 consecutive floats), chunks of at least
// 2048 elements (32 rows of 64), at most 1024 of them, the walk unrolled
// by 4 (loads in flight; a thread's terms still add in order). The init (a
// tensor, not a constant fill) is read and added once, in the final kernel.
#gin_rows = affine_map<(d0, d1) -> (d0, d1)>
#gin_one = affine_map<(d0, d1) -> (0)>
// CHECK-DAG: #[[GP:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> (s0 ceildiv 32, 1024)>
// CHECK-LABEL: gnnk.kernel @elementwise_0(
// CHECK-SAME: grid = #[[GP]]
// CHECK: arith.ceildivsi %{{.*}}, %c32
// CHECK: gnnk.for_blocks
// CHECK: %[[LO:.*]] = arith.minsi
// CHECK: %[[HI:.*]] = arith.minsi
// CHECK: %[[LO64:.*]] = arith.muli %[[LO]], %c64
// CHECK: %[[FROM:.*]] = arith.addi %[[LO64]], %{{.*}}
// CHECK: %[[TO:.*]] = arith.muli %[[HI]], %c64
// CHECK: scf.for %[[F:.*]] = %[[FROM]] to %[[TO]] step %c256
// CHECK: %[[ROW:.*]] = arith.divui %[[F]], %c64
// CHECK: %[[COL:.*]] = arith.remui %[[F]], %c64
// CHECK-NOT: arith.remui
// CHECK: %[[AT0:.*]] = arith.muli %[[ROW]], %c64
// CHECK: %[[AT:.*]] = arith.addi %[[AT0]], %[[COL]]
// CHECK: gnnk.load %{{.*}}[%[[AT]]]
// CHECK-NOT: scf.for
// CHECK: } {gnnk.unroll = 4 : i64}
// CHECK: gnnk.block_reduce
// CHECK-LABEL: gnnk.kernel @elementwise_0_final(
// CHECK-SAME: %{{.*}}: memref<?xf64> {gnnk.operand = 0 : i64}
// CHECK-SAME: %[[INIT:[a-z0-9]+]]: memref<?xf32> {gnnk.operand = 1 : i64}
// CHECK: gnnk.block_reduce
// CHECK: scf.if
// CHECK: %[[I:.*]] = gnnk.load %[[INIT]]
// CHECK: %[[IW:.*]] = arith.extf %[[I]] : f32 to f64
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[IW]] : f64
// CHECK: arith.truncf %[[S]] : f64 to f32
// CHECK-LABEL: func.func @gin_eps_grad
// CHECK: %[[W:.*]] = gnnk.launch @elementwise_0[%arg0] (%arg1, %arg2) rows [#{{.*}}] : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<1024xf64>
// CHECK: gnnk.launch @elementwise_0_final[%arg0] (%[[W]], %arg3) rows [#{{.*}}] : (tensor<1024xf64>, tensor<1xf32>) -> tensor<1xf32>
func.func @gin_eps_grad(%g: !gnn.graph, %x: tensor<?x64xf32>, %dy: tensor<?x64xf32>, %init: tensor<1xf32>) -> tensor<1xf32> {
  %d = linalg.generic {indexing_maps = [#gin_rows, #gin_rows, #gin_one], iterator_types = ["reduction", "reduction"]}
      ins(%x, %dy : tensor<?x64xf32>, tensor<?x64xf32>) outs(%init : tensor<1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %d : tensor<1xf32>
}

// -----

// A sum with no static reduction loop over 16 or more result elements (a
// bias gradient's column sums) runs in column mode: a block per group of 32
// consecutive elements and chunk, its lanes on the elements (a warp reads
// 32 consecutive floats of one row), its 8 teams on the rows in turn, the
// teams' sums combined in team order; K = floor(1024 / 19 groups) = 53
// chunks of at least 64 rows. Lanes past element 599 sum nothing and store
// nothing. The final kernel is a block per element, as for other sums.
#wide_in = affine_map<(d0, d1) -> (d1, d0)>
#wide_out = affine_map<(d0, d1) -> (d0)>
// CHECK: #[[G:[a-z0-9]+]] = affine_map<()[s0, s1, s2, s3, s4] -> ((s0 ceildiv 64) * 19, 1007)>
// CHECK-LABEL: gnnk.kernel @elementwise_0(
// CHECK-SAME: %{{.*}}: memref<?xf64> {gnnk.result = 0 : i64}
// CHECK-SAME: grid = #[[G]]
// CHECK: %[[C:.*]] = arith.minsi %{{.*}}, %c53
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[C]], %c19
// CHECK: gnnk.for_blocks %[[BLOCKS]] lanes 32 {
// CHECK-NEXT: ^bb0(%[[B:.*]]: index, %[[TEAM:.*]]: index, %[[LANE:.*]]: index):
// CHECK: %[[GROUP:.*]] = arith.remui %[[B]], %c19
// CHECK: %[[E0:.*]] = arith.muli %[[GROUP]], %c32
// CHECK: %[[E:.*]] = arith.addi %[[E0]], %[[LANE]]
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %[[E]], %c600
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %c8
// CHECK: %[[AT0:.*]] = arith.muli %[[ROW]], %c600
// CHECK: %[[AT:.*]] = arith.addi %[[AT0]], %{{.*}}
// CHECK: gnnk.load %{{.*}}[%[[AT]]]
// CHECK: } {gnnk.unroll = 4 : i64}
// CHECK: gnnk.block_reduce
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TEAM]], %c0
// CHECK: arith.andi %[[VALID]], %[[FIRST]]
// CHECK: gnnk.store %{{.*}} : f64 into memref<?xf64>
// CHECK-LABEL: gnnk.kernel @elementwise_0_final(
// CHECK: gnnk.for_blocks %c600{{.*}} lanes 1 {
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK-LABEL: func.func @wide_bias_grad
// CHECK: %[[W:.*]] = gnnk.launch @elementwise_0[%arg0] (%arg1) rows [#{{.*}}] : (tensor<?x600xf32>) -> tensor<31800xf64>
// CHECK: gnnk.launch @elementwise_0_final[%arg0] (%[[W]]) rows [#{{.*}}] : (tensor<31800xf64>) -> tensor<600xf32>
func.func @wide_bias_grad(%g: !gnn.graph, %dy: tensor<?x600xf32>) -> tensor<600xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<600xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<600xf32>) -> tensor<600xf32>
  %db = linalg.generic {indexing_maps = [#wide_in, #wide_out], iterator_types = ["parallel", "reduction"]}
      ins(%dy : tensor<?x600xf32>) outs(%z : tensor<600xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<600xf32>
  return %db : tensor<600xf32>
}
