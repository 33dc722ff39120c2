// RUN: gnn-translate --gnnk-to-cuda -verify-diagnostics -split-input-file %s

gnnk.kernel @uses_atan(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                  %out: memref<?xf32> {gnnk.result = 0 : i64},
                  %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %a = gnnk.load %x[%i] : memref<?xf32> -> f32
    // expected-error @+1 {{'math.atan' op is not supported by the CUDA printer}}
    %b = math.atan %a : f32
    gnnk.store %b to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

gnnk.kernel @scf_while(%out: memref<?xf32> {gnnk.result = 0 : i64},
                   %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    // expected-error @+1 {{'scf.while' op is not supported by the CUDA printer}}
    %r = scf.while (%a = %i) : (index) -> index {
      %c = arith.cmpi slt, %a, %n : index
      scf.condition(%c) %a : index
    } do {
    ^bb0(%a: index):
      scf.yield %a : index
    }
    gnnk.yield
  }
  gnnk.return
}

// -----

gnnk.kernel @bitcast(%out: memref<?xf32> {gnnk.result = 0 : i64},
                     %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c = arith.index_cast %i : index to i32
    // expected-error @+1 {{'arith.bitcast' op is not supported by the CUDA printer}}
    %f = arith.bitcast %c : i32 to f32
    gnnk.store %f to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

gnnk.kernel @i16(%out: memref<?xf32> {gnnk.result = 0 : i64},
                 %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c = arith.index_cast %i : index to i32
    // expected-error @+1 {{'arith.trunci' op uses a value of type 'i16', which the CUDA printer does not support (only f16, bf16, f32, f64, i1, i32, i64 and index)}}
    %s = arith.trunci %c : i32 to i16
    gnnk.yield
  }
  gnnk.return
}

// -----

gnnk.kernel @vector_constant(%out: memref<?xf32> {gnnk.result = 0 : i64},
                             %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    // expected-error @+1 {{'arith.constant' op uses a value of type 'vector<4xf32>', which the CUDA printer does not support}}
    %v = arith.constant dense<1.0> : vector<4xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op has parameter #0 of type 'memref<?xf8E4M3FN>', which the CUDA printer does not support (only rank-1 buffers of f16, bf16, f32, f64, i32 or i64)}}
gnnk.kernel @f8(%x: memref<?xf8E4M3FN> {gnnk.operand = 0 : i64},
                 %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op has parameter #0 of type 'memref<?x4xf32>', which the CUDA printer does not support}}
gnnk.kernel @rank2(%x: memref<?x4xf32> {gnnk.operand = 0 : i64})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  gnnk.return
}

// -----

// expected-error @+1 {{'gnnk.kernel' op expects graph array parameter #1 to have 32-bit elements (the graph index width) but got 'memref<?xi64>'}}
gnnk.kernel @wide(%out: memref<?xf32> {gnnk.result = 0 : i64},
                  %ptr: memref<?xi64> {gnnk.graph = "csr_row_ptr"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  gnnk.return
}

// -----

gnnk.kernel @bad_unroll(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                        %out: memref<?xf32> {gnnk.result = 0 : i64},
                        %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    // expected-error @+1 {{'scf.for' op expects gnnk.unroll in [1, 16] but got 32}}
    %s = scf.for %k = %c0 to %i step %c1 iter_args(%a = %zero) -> f32 {
      %v = gnnk.load %x[%k] : memref<?xf32> -> f32
      %b = arith.addf %a, %v : f32
      scf.yield %b : f32
    } {gnnk.unroll = 32 : i64}
    gnnk.store %s to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}
