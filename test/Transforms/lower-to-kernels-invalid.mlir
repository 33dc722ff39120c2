// RUN: gnn-opt %s --gnn-lower-to-kernels -split-input-file -verify-diagnostics

func.func @no_schedule(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op has no schedule; run gnn-select-schedules (or the gnn-codegen-pipeline) first}}
  %r = gnn.kernel_group "spmm_0" -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @bad_name(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name made of letters, digits and '_' (not starting with a digit) but got 'k(); evil'}}
  %r = gnn.kernel_group "k(); evil" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @twice(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "k" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  // expected-error @+1 {{reuses the kernel name 'k'}}
  %q = gnn.kernel_group "k" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %r : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %q : tensor<?x8xf32>
}

// -----

func.func @f64(%g: !gnn.graph, %x: tensor<?x8xf64>) -> tensor<?x8xf64> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf64> {
    // expected-error @+1 {{'gnn.spmm' op uses 'tensor<?x8xf64>'; the CUDA backend supports only f32 tensors}}
    %s = gnn.spmm sum %g, %x : tensor<?x8xf64> -> tensor<?x8xf64>
    gnn.yield %s : tensor<?x8xf64>
  }
  return %r : tensor<?x8xf64>
}

// -----

func.func @vector(%g: !gnn.graph, %x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x6xf32> {
    // expected-error @+1 {{'gnn.spmm' op has rows of 6 elements, not a multiple of the schedule's vector width 4}}
    %s = gnn.spmm sum %g, %x : tensor<?x6xf32> -> tensor<?x6xf32>
    gnn.yield %s : tensor<?x6xf32>
  }
  return %r : tensor<?x6xf32>
}

// -----

func.func @wide(%g: !gnn.graph, %x: tensor<?x16384xf32>) -> tensor<?x16384xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x16384xf32> {
    // expected-error @+1 {{'gnn.spmm' op has rows of 16384 elements; the CUDA backend keeps at most 2048 accumulators per row team}}
    %s = gnn.spmm sum %g, %x : tensor<?x16384xf32> -> tensor<?x16384xf32>
    gnn.yield %s : tensor<?x16384xf32>
  }
  return %r : tensor<?x16384xf32>
}

// -----

func.func @features(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'gnn.spmm' op reads features computed inside its kernel group by an op that cannot be evaluated per node (only degrees and elementwise ops)}}
    %t = gnn.spmm sum %g, %s : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @not_a_consumer(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.matmul' op is not an elementwise consumer; a kernel group ends with its anchor op and its consumers}}
    %t = linalg.matmul ins(%s, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%s : tensor<?x8xf32>) -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weights(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'gnn.spmm' op expects fused producers of an spmm to compute its weights}}
    %t = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @two_dense(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects a dense kernel group to hold one linalg op}}
  %r = gnn.kernel_group "elementwise_0" schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %a = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) -> tensor<?x8xf32>
    %b = linalg.add ins(%a, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) -> tensor<?x8xf32>
    gnn.yield %b : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @named(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    // expected-error @+1 {{'linalg.add' op is not supported by the CUDA backend (only linalg.generic outside matmuls and fills)}}
    %a = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#rp = affine_map<(d0, d1) -> (d1, d0)>
#r0 = affine_map<(d0, d1) -> (d1)>
func.func @reduction_first(%g: !gnn.graph, %x: tensor<8x?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = gnn.kernel_group "elementwise_0" schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
    // expected-error @+1 {{'linalg.generic' op expects parallel loops before reduction loops in the CUDA backend}}
    %a = linalg.generic {indexing_maps = [#rp, #r0], iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<8x?xf32>) outs(%y : tensor<?xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.addf %v, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    gnn.yield %a : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

#t = affine_map<(d0, d1) -> (d1, d0)>
#i = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed_out(%g: !gnn.graph, %x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = gnn.kernel_group "elementwise_0" schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<8x8xf32> {
    // expected-error @+1 {{'linalg.generic' op expects every output indexed by the parallel loops in order in the CUDA backend}}
    %a = linalg.generic {indexing_maps = [#i, #t], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x8xf32>) outs(%x : tensor<8x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<8x8xf32>
    gnn.yield %a : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

#d1 = affine_map<(d0) -> (d0)>
func.func @before_degree(%g: !gnn.graph, %x: tensor<?x2xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects nothing before a degree}}
  %r = gnn.kernel_group "degree_0" schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

func.func @before_softmax(%g: !gnn.graph, %e: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects an edge softmax group to start with the softmax}}
  %r = gnn.kernel_group "edge_softmax_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 1, split = 0> -> tensor<?x2xf32> {
    %a = gnn.edge_softmax %g, %e : tensor<?x2xf32>
    %b = gnn.edge_softmax %g, %a : tensor<?x2xf32>
    gnn.yield %b : tensor<?x2xf32>
  }
  return %r : tensor<?x2xf32>
}

// -----

func.func @no_sddmm(%g: !gnn.graph, %e: tensor<?x2xf32> {gnn.domain = "edge"}, %x: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects an attention group: sddmm, score ops, edge_softmax and an spmm sum weighted by it}}
  %r = gnn.kernel_group "attention_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x2x8xf32> {
    %a = gnn.edge_softmax %g, %e : tensor<?x2xf32>
    %s = gnn.spmm sum %g, %x weights(%a : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
    gnn.yield %s : tensor<?x2x8xf32>
  }
  return %r : tensor<?x2x8xf32>
}

// -----

func.func @wide_attention(%g: !gnn.graph, %q: tensor<?x4x512xf32>, %k: tensor<?x4x512xf32>) -> tensor<?x4x512xf32> {
  %r = gnn.kernel_group "attention_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x4x512xf32> {
    %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x512xf32>, tensor<?x4x512xf32> -> tensor<?x4xf32>
    %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
    // expected-error @+1 {{'gnn.spmm' op has rows of 2048 elements; fused attention keeps at most 1024 per row team}}
    %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf32>) : tensor<?x4x512xf32> -> tensor<?x4x512xf32>
    gnn.yield %o : tensor<?x4x512xf32>
  }
  return %r : tensor<?x4x512xf32>
}
