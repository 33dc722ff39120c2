// RUN: gnn-opt %s --gnn-split-heavy-rows -split-input-file -verify-diagnostics

// expected-error @+1 {{'gnnk.kernel' op cannot split heavy rows: expects a gnnk.for_rows}}
gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>, gnnk.split = 512 : i64} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op cannot split heavy rows: expects a gnnk.for_edges directly in the row}}
gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>, gnnk.split = 512 : i64} {
  %c = arith.index_cast %n : i64 to index
  gnnk.for_rows %c lanes 32 {
  ^bb0(%r: index, %l: index):
    gnnk.yield
  }
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op cannot split heavy rows: expects the edge loop to have a merge region}}
gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %ptr: memref<?xi32> {gnnk.graph = "csr_row_ptr"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>, gnnk.split = 512 : i64} {
  %c = arith.index_cast %n : i64 to index
  gnnk.for_rows %c lanes 32 {
  ^bb0(%r: index, %l: index):
    %z = arith.constant 0.0 : f32
    %c1 = arith.constant 1 : index
    %r1 = arith.addi %r, %c1 : index
    %b32 = gnnk.load %ptr[%r] : memref<?xi32> -> i32
    %e32 = gnnk.load %ptr[%r1] : memref<?xi32> -> i32
    %b = arith.index_cast %b32 : i32 to index
    %e = arith.index_cast %e32 : i32 to index
    %s = arith.addi %b, %l : index
    %a = gnnk.for_edges %s to %e step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 {
    ^bb0(%slot: index, %src: index, %x: f32):
      gnnk.yield %x : f32
    }
    gnnk.yield
  }
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op cannot split heavy rows: expects the edge loop to run from the row's start (plus a lane offset) to the row's end}}
gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}, %col: memref<?xi32> {gnnk.graph = "csr_col"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>, gnnk.split = 512 : i64} {
  %c = arith.index_cast %n : i64 to index
  gnnk.for_rows %c lanes 32 {
  ^bb0(%r: index, %l: index):
    %z = arith.constant 0.0 : f32
    %c1 = arith.constant 1 : index
    %a = gnnk.for_edges %r to %c step %c1 nbrs(%col : memref<?xi32>) iter_args(%z : f32) -> f32 {
    ^bb0(%slot: index, %src: index, %x: f32):
      gnnk.yield %x : f32
    } merge {
    ^bb0(%p: f32, %q: f32):
      %t = arith.addf %p, %q : f32
      gnnk.yield %t : f32
    }
    gnnk.yield
  }
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects gnnk.split >= 1 but got 0}}
gnnk.kernel @k(%n: i64 {gnnk.size = "nodes"}) attributes {block = 256 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (1)>, gnnk.split = 0 : i64} {
  gnnk.return
}
