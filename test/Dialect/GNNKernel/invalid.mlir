// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'gnnk.kernel' op expects parameter #0 to have exactly one of gnnk.operand, gnnk.result, gnnk.graph, gnnk.size but got 0}}
gnnk.kernel @k(%x: memref<?xf32>) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// The name becomes the CUDA kernel's: anything but a C identifier would be
// pasted into the source as code.
// expected-error @+1 {{'gnnk.kernel' op expects its name to be a C identifier (letters, digits and underscores, not starting with a digit) but got "k(){}\0A#error injected\0Avoid k1"}}
gnnk.kernel @"k(){}\0A#error injected\0Avoid k1"() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name to be a C identifier}}
gnnk.kernel @"9lives"() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// A C identifier the CUDA source cannot use as a kernel's name failed inside
// NVRTC, with no location in the .mlir.
// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'int' (a C++ keyword)}}
gnnk.kernel @int() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got '__syncthreads' (a name reserved to the compiler (it starts with '__'))}}
gnnk.kernel @__syncthreads() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got '_Kernel' (a name reserved to the compiler (it starts with '_' and a capital letter))}}
gnnk.kernel @_Kernel() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'main' (the program's entry point)}}
gnnk.kernel @main() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'threadIdx' (a CUDA built-in variable)}}
gnnk.kernel @threadIdx() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// Names NVRTC declares without an #include.
// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'rsqrtf' (a function of the CUDA math API)}}
gnnk.kernel @rsqrtf() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'atomicCAS_block' (a CUDA atomic function (atomicAdd, atomicCAS, ...))}}
gnnk.kernel @atomicCAS_block() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'double4_16a' (a CUDA vector type or its make_ function)}}
gnnk.kernel @double4_16a() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'memcpy' (a function or macro that CUDA device code calls (printf, malloc, memcpy, assert, clock, ...))}}
gnnk.kernel @memcpy() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// Close to reserved names, but not one: accepted.
gnnk.kernel @sqrt_norm() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}
gnnk.kernel @atomic_add() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}
gnnk.kernel @float5() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}
gnnk.kernel @cuda_spmm() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'idx_t' (the index type the emitted code defines)}}
gnnk.kernel @idx_t() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects its name not to be reserved in CUDA C++ but got 'gnn_edges_to_slots' (a name with the runtime's prefix 'gnn_' (its own kernels and device helpers))}}
gnnk.kernel @gnn_edges_to_slots() attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects block to be a multiple of 32 in [32, 1024] but got 100}}
gnnk.kernel @k() attributes {block = 100 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects min_blocks blocks of 512 threads to fit in an SM's 2048 but got min_blocks 8}}
gnnk.kernel @k() attributes {block = 512 : i64, min_blocks = 8 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op attribute 'min_blocks' failed to satisfy constraint}}
gnnk.kernel @k() attributes {block = 256 : i64, min_blocks = 0 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects grid to be an affine map ()[s0, s1, s2, s3, s4] -> (e, ...) of nodes, edges, graphs, source and destination nodes (the minimum of its results) but got}}
gnnk.kernel @k() attributes {block = 256 : i64, grid = affine_map<(d0) -> (d0)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects parameter #0 to name a graph array but got "csr_evil"}}
gnnk.kernel @k(%p: memref<?xi32> {gnnk.graph = "csr_evil"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects operand bindings numbered 0 to 0 but #0 is missing}}
gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 1 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects parameter #1 to name nodes, edges, graphs, src_nodes or dst_nodes but got "csr_light_7"}}
gnnk.kernel @k(%a: i64 {gnnk.size = "dst_nodes"}, %b: i64 {gnnk.size = "csr_light_7"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects gnnk.formula on parameter #0 to be a #gnnk.formula beside a gnnk.size naming it with an identifier but got #gnnk.formula<div(edges, 2)>}}
gnnk.kernel @k(%a: i64 {gnnk.size = "split threshold", gnnk.formula = #gnnk.formula<div(edges, 2)>}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// A formula is structured, not text.
// expected-error @+1 {{'gnnk.kernel' op expects gnnk.formula on parameter #0 to be a #gnnk.formula beside a gnnk.size naming it with an identifier but got "edges / 2"}}
gnnk.kernel @k(%a: i64 {gnnk.size = "split_threshold", gnnk.formula = "edges / 2"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{expects a formula name (nodes, edges, graphs, src_nodes, dst_nodes, max_in_degree, max_out_degree or largest_graph) but got "csr_light_7"}}
gnnk.kernel @k(%a: i64 {gnnk.size = "split_threshold", gnnk.formula = #gnnk.formula<mul(csr_light_7, 2)>}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{expected '('}}
gnnk.kernel @k(%a: i64 {gnnk.size = "split_threshold", gnnk.formula = #gnnk.formula<ceil_div>}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// A formula needs a gnnk.size naming it.
// expected-error @+1 {{'gnnk.kernel' op expects parameter #0 to have exactly one of gnnk.operand, gnnk.result, gnnk.graph, gnnk.size but got 0}}
gnnk.kernel @k(%a: i64 {gnnk.formula = #gnnk.formula<div(edges, 2)>}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects parameter #0 to name nodes, edges, graphs, src_nodes or dst_nodes but got "light_7"}}
gnnk.kernel @k(%a: i64 {gnnk.size = "light_7"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects size parameter #0 to be i64 but got 'index'}}
gnnk.kernel @k(%n: index {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.index_cast %n : i64 to index
  // expected-error @+1 {{'gnnk.for_rows' op expects lanes to be a power of two in [1, 32] but got 12}}
  gnnk.for_rows %c lanes 12 {
  ^bb0(%r: index, %l: index):
    gnnk.yield
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.index_cast %n : i64 to index
  gnnk.for_rows %c lanes 8 {
  ^bb0(%r: index, %l: index):
    %z = arith.constant 0.0 : f32
    // expected-error @+1 {{'gnnk.team_reduce' op expects width to be at most the team's 8 lanes but got 16}}
    %s = gnnk.team_reduce %z stride 1 width 16 : f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      gnnk.yield %t : f32
    }
    gnnk.yield
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.team_reduce' op expects to be inside gnnk.for_rows or gnnk.for_blocks}}
  %s = gnnk.team_reduce %z stride 1 width 2 : f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    gnnk.yield %t : f32
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 0 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  // expected-error @+1 {{'gnnk.load' op expects 1, 2, 4 or 8 values but got 3}}
  %a:3 = gnnk.load %x[%c] : memref<?xf32> -> f32, f32, f32
  gnnk.return
}

// -----

gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 0 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  %v = arith.constant 0.0 : f64
  // expected-error @+1 {{'gnnk.store' op expects values of the buffer's element type 'f32' but got 'f64'}}
  gnnk.store %v to %x[%c] : f64 into memref<?xf32>
  gnnk.return
}

// -----

gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 0 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}
func.func @f(%g: !gnn.graph) -> tensor<?x4xf32> {
  // expected-error @+1 {{'gnnk.launch' op passes 0 operands and 1 results but @k binds 1 and 0}}
  %r = gnnk.launch @k[%g] () rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0)>] : () -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

func.func @f(%g: !gnn.graph) -> tensor<?x4xf32> {
  // expected-error @+1 {{'gnnk.launch' op expects 'nowhere' to name a gnnk.kernel}}
  %r = gnnk.launch @nowhere[%g] () rows [affine_map<()[s0, s1, s2, s3, s4] -> (s0)>] : () -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.for_edges' op expects the merge region to take two sets of carried values and yield one}}
  %r = gnnk.for_edges %c0 to %c1 step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 {
  ^bb0(%s: index, %o: index, %a: f32):
    gnnk.yield %a : f32
  } merge {
  ^bb0(%a: f32):
    gnnk.yield %a : f32
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.for_edges' op expects a rest region exactly when group > 1 (group 2, none found)}}
  %r = gnnk.for_edges %c0 to %c1 step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 attributes {group = 2 : i64} {
  ^bb0(%s0: index, %o0: index, %s1: index, %o1: index, %a: f32):
    gnnk.yield %a : f32
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.for_edges' op expects a rest region exactly when group > 1 (group 1, one found)}}
  %r = gnnk.for_edges %c0 to %c1 step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 {
  ^bb0(%s: index, %o: index, %a: f32):
    gnnk.yield %a : f32
  } rest {
  ^bb0(%s: index, %o: index, %a: f32):
    gnnk.yield %a : f32
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.for_edges' op expects 4 + 1 body arguments (slot and neighbour of 2 edge(s), carried values) but got 3}}
  %r = gnnk.for_edges %c0 to %c1 step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 attributes {group = 2 : i64} {
  ^bb0(%s: index, %o: index, %a: f32):
    gnnk.yield %a : f32
  } rest {
  ^bb0(%s: index, %o: index, %a: f32):
    gnnk.yield %a : f32
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.for_edges' op expects 2 + 1 rest region arguments (slot and neighbour of 1 edge(s), carried values) but got 5}}
  %r = gnnk.for_edges %c0 to %c1 step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 attributes {group = 2 : i64} {
  ^bb0(%s0: index, %o0: index, %s1: index, %o1: index, %a: f32):
    gnnk.yield %a : f32
  } rest {
  ^bb0(%s0: index, %o0: index, %s1: index, %o1: index, %a: f32):
    gnnk.yield %a : f32
  }
  gnnk.return
}

// -----

gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'gnnk.for_edges' op expects group in [1, 8] but got 9}}
  %r = gnnk.for_edges %c0 to %c1 step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 attributes {group = 9 : i64} {
  ^bb0(%s: index, %o: index, %a: f32):
    gnnk.yield %a : f32
  }
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects gnnk.accumulate (a unit attribute) only on result parameters but parameter #0 has it}}
gnnk.kernel @k(%x: memref<?xf32> {gnnk.operand = 0 : i64, gnnk.accumulate}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  gnnk.return
}

// -----

gnnk.kernel @k(%x: memref<?xf32> {gnnk.result = 0 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{'gnnk.atomic_add' op expects a result parameter marked gnnk.accumulate (zeroed before the launch) as its buffer}}
  gnnk.atomic_add %v to %x[%c] : f32 into memref<?xf32>
  gnnk.return
}

// -----

gnnk.kernel @k(%x: memref<?xf32> {gnnk.result = 0 : i64, gnnk.accumulate}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  %v = arith.constant 1.0 : f64
  // expected-error @+1 {{'gnnk.atomic_add' op expects a value of the buffer's element type 'f32' but got 'f64'}}
  gnnk.atomic_add %v to %x[%c] : f64 into memref<?xf32>
  gnnk.return
}

// -----

// A bf16 buffer is read as f32 (a widening load), never as bf16.
gnnk.kernel @k(%x: memref<?xbf16> {gnnk.operand = 0 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  // expected-error @+1 {{'gnnk.load' op expects values of type 'f32' (the arithmetic type of the buffer's element type 'bf16') but got 'bf16'}}
  %a = gnnk.load %x[%c] : memref<?xbf16> -> bf16
  gnnk.return
}

// -----

// An f16 buffer is written from f32 (a rounding store).
gnnk.kernel @k(%x: memref<?xf16> {gnnk.result = 0 : i64}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  %v = arith.constant 0.0 : f64
  // expected-error @+1 {{'gnnk.store' op expects values of type 'f32' (the arithmetic type of the buffer's element type 'f16') but got 'f64'}}
  gnnk.store %v to %x[%c] : f64 into memref<?xf16>
  gnnk.return
}

// -----

// Atomic sums stay in f32: a half-precision buffer would round each addition.
gnnk.kernel @k(%x: memref<?xbf16> {gnnk.result = 0 : i64, gnnk.accumulate}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{'gnnk.atomic_add' op expects a buffer of f32 or f64 (sums in the arithmetic type) but got 'memref<?xbf16>'}}
  gnnk.atomic_add %v to %x[%c] : f32 into memref<?xbf16>
  gnnk.return
}

// -----

// Shared memory holds the arithmetic type, never bf16 or f16.
gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>} {
  %c = arith.index_cast %n : i64 to index
  gnnk.for_blocks %c lanes 32 {
  ^bb0(%blk: index, %team: index, %lane: index):
    // expected-error @+1 {{'gnnk.shared' op result #0 must be}}
    %s = gnnk.shared 64 : memref<?xbf16>
    gnnk.yield
  }
  gnnk.return
}
