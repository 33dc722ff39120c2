// RUN: gnn-opt %s --gnn-lower-to-kernels -split-input-file -verify-diagnostics

func.func @no_schedule(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op has no schedule; run gnn-select-schedules (or the gnn-codegen-pipeline) first}}
  %r = gnn.kernel_group "spmm_0" family = aggregation -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @bad_name(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name made of letters, digits and '_' (not starting with a digit) but got 'k(); evil'}}
  %r = gnn.kernel_group "k(); evil" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// Names the CUDA source cannot give a kernel (they failed inside NVRTC,
// without a location) or that gnnc's own kernels take.
func.func @reserved_0(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'int' (a C++ keyword); allowed: an identifier that is not a C/C++ keyword, 'main', 'idx_t', a name the CUDA headers declare (math, integer, atomic, texture and surface functions, vector types and their make_ functions, built-in variables, 'cuda' and 'CUDART' names) or one device code calls (printf, malloc, free, memcpy, memset, assert, clock), does not start with '__', '_' and a capital letter, or 'gnn_', and does not end in '_final' or '_partial'}}
  %r = gnn.kernel_group "int" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @reserved_1(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got '__global__' (a name reserved to the compiler (it starts with '__')); allowed: an identifier that is not a C/C++ keyword, 'main', 'idx_t', a name the CUDA headers declare (math, integer, atomic, texture and surface functions, vector types and their make_ functions, built-in variables, 'cuda' and 'CUDART' names) or one device code calls (printf, malloc, free, memcpy, memset, assert, clock), does not start with '__', '_' and a capital letter, or 'gnn_', and does not end in '_final' or '_partial'}}
  %r = gnn.kernel_group "__global__" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @reserved_2(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'main' (the program's entry point); allowed: an identifier that is not a C/C++ keyword, 'main', 'idx_t', a name the CUDA headers declare (math, integer, atomic, texture and surface functions, vector types and their make_ functions, built-in variables, 'cuda' and 'CUDART' names) or one device code calls (printf, malloc, free, memcpy, memset, assert, clock), does not start with '__', '_' and a capital letter, or 'gnn_', and does not end in '_final' or '_partial'}}
  %r = gnn.kernel_group "main" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @reserved_3(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'gnn_edges_to_slots' (a name with the runtime's prefix 'gnn_' (its own kernels and device helpers)); allowed: an identifier that is not a C/C++ keyword, 'main', 'idx_t', a name the CUDA headers declare (math, integer, atomic, texture and surface functions, vector types and their make_ functions, built-in variables, 'cuda' and 'CUDART' names) or one device code calls (printf, malloc, free, memcpy, memset, assert, clock), does not start with '__', '_' and a capital letter, or 'gnn_', and does not end in '_final' or '_partial'}}
  %r = gnn.kernel_group "gnn_edges_to_slots" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @reserved_4(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'k_final' (a name the kernels split from another group's take (it ends in '_final' or '_partial')); allowed: an identifier that is not a C/C++ keyword, 'main', 'idx_t', a name the CUDA headers declare (math, integer, atomic, texture and surface functions, vector types and their make_ functions, built-in variables, 'cuda' and 'CUDART' names) or one device code calls (printf, malloc, free, memcpy, memset, assert, clock), does not start with '__', '_' and a capital letter, or 'gnn_', and does not end in '_final' or '_partial'}}
  %r = gnn.kernel_group "k_final" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}
// -----

// Names NVRTC declares without an #include (the CUDA math API, atomics,
// vector types, printf, ...): each failed inside NVRTC ("more than one
// instance of overloaded function \"sqrt\" has \"C\" linkage"; a kernel
// named float4 crashed NVRTC 13.0), without a location.

func.func @cuda_name_0(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'sqrt' (a function of the CUDA math API); allowed: }}
  %r = gnn.kernel_group "sqrt" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_1(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'expf' (a function of the CUDA math API); allowed: }}
  %r = gnn.kernel_group "expf" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_2(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'max' (a CUDA integer function); allowed: }}
  %r = gnn.kernel_group "max" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_3(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'atomicAdd' (a CUDA atomic function (atomicAdd, atomicCAS, ...)); allowed: }}
  %r = gnn.kernel_group "atomicAdd" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_4(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got '__syncthreads' (a name reserved to the compiler (it starts with '__')); allowed: }}
  %r = gnn.kernel_group "__syncthreads" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_5(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'float4' (a CUDA vector type or its make_ function); allowed: }}
  %r = gnn.kernel_group "float4" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_6(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'make_float2' (a CUDA vector type or its make_ function); allowed: }}
  %r = gnn.kernel_group "make_float2" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_7(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'tex1Dfetch' (a CUDA texture or surface function); allowed: }}
  %r = gnn.kernel_group "tex1Dfetch" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_8(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'cudaMalloc' (a name of the CUDA runtime API (it starts with 'cuda' and a capital letter)); allowed: }}
  %r = gnn.kernel_group "cudaMalloc" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_9(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'printf' (a function or macro that CUDA device code calls (printf, malloc, memcpy, assert, clock, ...)); allowed: }}
  %r = gnn.kernel_group "printf" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_10(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'malloc' (a function or macro that CUDA device code calls (printf, malloc, memcpy, assert, clock, ...)); allowed: }}
  %r = gnn.kernel_group "malloc" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_11(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'assert' (a function or macro that CUDA device code calls (printf, malloc, memcpy, assert, clock, ...)); allowed: }}
  %r = gnn.kernel_group "assert" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_12(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'std' (a type, macro or namespace of the C or C++ library); allowed: }}
  %r = gnn.kernel_group "std" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @cuda_name_13(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name not reserved in CUDA C++ or by gnnc but got 'NULL' (a type, macro or namespace of the C or C++ library); allowed: }}
  %r = gnn.kernel_group "NULL" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @twice(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "k" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  // expected-error @+1 {{reuses the kernel name 'k'}}
  %q = gnn.kernel_group "k" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %r : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %q : tensor<?x8xf32>
}

// -----

// Float types other than f16, bf16, f32 and f64 have no kernels.
func.func @f8(%x: tensor<?x8xf8E4M3FN>) -> tensor<?x8xf8E4M3FN> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf8E4M3FN> {
    // expected-error @+1 {{'linalg.generic' op uses 'tensor<?x8xf8E4M3FN>'; the CUDA backend supports only f16, bf16, f32 and f64 tensors}}
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf8E4M3FN>) outs(%x : tensor<?x8xf8E4M3FN>) {
    ^bb0(%a: f8E4M3FN, %o: f8E4M3FN):
      %v = arith.negf %a : f8E4M3FN
      linalg.yield %v : f8E4M3FN
    } -> tensor<?x8xf8E4M3FN>
    gnn.yield %t : tensor<?x8xf8E4M3FN>
  }
  return %r : tensor<?x8xf8E4M3FN>
}

// -----

// A function runs in one float type: f32 and f64 tensors together are an
// error on the first tensor of the second type.
// expected-note @+1 {{the first 'f64' tensor}}
func.func @mixed(%g: !gnn.graph, %x: tensor<?x8xf64>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf64> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf64> -> tensor<?x8xf64>
    gnn.yield %s : tensor<?x8xf64>
  }
  %c0 = arith.constant 0 : index
  %n = tensor.dim %r, %c0 : tensor<?x8xf64>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  // expected-error @+1 {{'linalg.generic' op uses 'tensor<?x8xf32>' in a function whose first float tensor is 'f64'; the CUDA backend computes a function in one arithmetic type (f32 for f32, bf16 and f16 tensors, or f64 for f64 ones)}}
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<?x8xf64>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f64, %o: f32):
    %v = arith.truncf %a : f64 to f32
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  return %t : tensor<?x8xf32>
}

// -----

// expected-note @+2 {{the first 'f32' tensor}}
// expected-error @+1 {{argument #2 of @mixed_arguments uses 'tensor<?x8xf64>' in a function whose first float tensor is 'f32'}}
func.func @mixed_arguments(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf64>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}

// -----

func.func @vector(%g: !gnn.graph, %x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x6xf32> {
    // expected-error @+1 {{'gnn.spmm' op has rows of 6 elements, not a multiple of the schedule's vector width 4}}
    %s = gnn.spmm sum %g, %x : tensor<?x6xf32> -> tensor<?x6xf32>
    gnn.yield %s : tensor<?x6xf32>
  }
  return %r : tensor<?x6xf32>
}

// -----

func.func @wide(%g: !gnn.graph, %x: tensor<?x16384xf32>) -> tensor<?x16384xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x16384xf32> {
    // expected-error @+1 {{'gnn.spmm' op has rows of 16384 elements; the CUDA backend keeps at most 2048 accumulators per row team}}
    %s = gnn.spmm sum %g, %x : tensor<?x16384xf32> -> tensor<?x16384xf32>
    gnn.yield %s : tensor<?x16384xf32>
  }
  return %r : tensor<?x16384xf32>
}

// -----

func.func @features(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%x : tensor<?x8xf32>) -> tensor<?x8xf32>
    // expected-error @+1 {{'gnn.spmm' op reads features computed inside its kernel group by an op that cannot be evaluated per node (only degrees and elementwise ops)}}
    %t = gnn.spmm sum %g, %s : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @not_a_consumer(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.matmul' op is not an elementwise consumer; a kernel group ends with its anchor op and its consumers}}
    %t = linalg.matmul ins(%s, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%s : tensor<?x8xf32>) -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weights(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
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
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %a = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) -> tensor<?x8xf32>
    %b = linalg.add ins(%a, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) -> tensor<?x8xf32>
    gnn.yield %b : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @named(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
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
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
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
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<8x8xf32> {
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
func.func @before_degree(%g: !gnn.graph, %x0: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects nothing before a degree}}
  %r = gnn.kernel_group "degree_0" family = degree schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
    %s = linalg.generic {indexing_maps = [#d1], iterator_types = ["parallel"]} outs(%x0 : tensor<?xf32>) {
    ^bb0(%o: f32):
      linalg.yield %o : f32
    } -> tensor<?xf32>
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

#id2e = affine_map<(d0, d1) -> (d0, d1)>
func.func @before_softmax(%g: !gnn.graph, %e: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects an edge softmax group to start with the softmax}}
  %r = gnn.kernel_group "edge_softmax_0" family = edge_softmax schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 1, split = 0> -> tensor<?x2xf32> {
    %a = linalg.generic {indexing_maps = [#id2e], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x2xf32>) {
    ^bb0(%o: f32):
      linalg.yield %o : f32
    } -> tensor<?x2xf32>
    %b = gnn.edge_softmax %g, %a : tensor<?x2xf32>
    gnn.yield %b : tensor<?x2xf32>
  }
  return %r : tensor<?x2xf32>
}

// -----

func.func @no_sddmm(%g: !gnn.graph, %e: tensor<?x2xf32> {gnn.domain = "edge"}, %x: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects the graph ops of a family = attention group to be sddmm, edge_softmax, spmm but got edge_softmax, spmm}}
  %r = gnn.kernel_group "attention_0" family = attention schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x2x8xf32> {
    %a = gnn.edge_softmax %g, %e : tensor<?x2xf32>
    %s = gnn.spmm sum %g, %x weights(%a : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
    gnn.yield %s : tensor<?x2x8xf32>
  }
  return %r : tensor<?x2x8xf32>
}

// -----

// Between the softmax and the spmm only ops linear in the softmax weights
// (attention dropout's alpha * mask) can be fused: alpha + mask is not.
#id2s = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_scaling(%g: !gnn.graph, %q: tensor<?x2x8xf32>, %m: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects an attention group: sddmm, score ops, edge_softmax, ops scaling it and an spmm sum weighted by the result}}
  %r = gnn.kernel_group "attention_0" family = attention schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x2x8xf32> {
    %e = gnn.sddmm dot %g, %q, %q : tensor<?x2x8xf32>, tensor<?x2x8xf32> -> tensor<?x2xf32>
    %a = gnn.edge_softmax %g, %e : tensor<?x2xf32>
    %w = linalg.generic {indexing_maps = [#id2s, #id2s, #id2s], iterator_types = ["parallel", "parallel"]}
        ins(%a, %m : tensor<?x2xf32>, tensor<?x2xf32>) outs(%a : tensor<?x2xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %z = arith.addf %x, %y : f32
      linalg.yield %z : f32
    } -> tensor<?x2xf32>
    %s = gnn.spmm sum %g, %q weights(%w : tensor<?x2xf32>) : tensor<?x2x8xf32> -> tensor<?x2x8xf32>
    gnn.yield %s : tensor<?x2x8xf32>
  }
  return %r : tensor<?x2x8xf32>
}

// -----

func.func @wide_attention(%g: !gnn.graph, %q: tensor<?x4x512xf32>, %k: tensor<?x4x512xf32>) -> tensor<?x4x512xf32> {
  %r = gnn.kernel_group "attention_0" family = attention schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x4x512xf32> {
    %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x512xf32>, tensor<?x4x512xf32> -> tensor<?x4xf32>
    %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
    // expected-error @+1 {{'gnn.spmm' op has rows of 2048 elements; fused attention keeps at most 1024 per row team}}
    %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf32>) : tensor<?x4x512xf32> -> tensor<?x4x512xf32>
    gnn.yield %o : tensor<?x4x512xf32>
  }
  return %r : tensor<?x4x512xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @unknown_rows(%g: !gnn.graph) -> tensor<?x8xf32> {
  %n = arith.constant 4 : index
  %e = tensor.empty(%n) : tensor<?x8xf32>
  // expected-error @+1 {{'gnn.kernel_group' op produces a tensor whose leading dimension cannot be told to count nodes or edges}}
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @outside_value(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x8xf32>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      // expected-error @+1 {{'arith.index_cast' op uses a value defined outside its linalg body that is not a constant; the CUDA backend supports only constants there}}
      %i = arith.index_cast %n : index to i64
      %f = arith.sitofp %i : i64 to f32
      %w = arith.addf %v, %f : f32
      linalg.yield %w : f32
    } -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @body_op(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      // expected-error @+1 {{'tensor.from_elements' op is not supported in a kernel body (only arith and math ops)}}
      %t = tensor.from_elements %v : tensor<1xf32>
      %c0 = arith.constant 0 : index
      %w = tensor.extract %t[%c0] : tensor<1xf32>
      linalg.yield %w : f32
    } -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
func.func @scalar_operand(%g: !gnn.graph, %x: tensor<?x8xf32>, %s: f32) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    // expected-error @+1 {{'linalg.generic' op has a scalar operand that is not a constant}}
    %a = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<?x8xf32>, f32) outs(%x : tensor<?x8xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %y = arith.addf %v, %w : f32
      linalg.yield %y : f32
    } -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#shifted = affine_map<(d0, d1) -> (d0, d1 + 1)>
func.func @shifted_map(%g: !gnn.graph, %x: tensor<?x9xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    // expected-error @+1 {{'linalg.generic' op has an indexing map the CUDA backend does not support (only dimensions and constants)}}
    %a = linalg.generic {indexing_maps = [#shifted, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x9xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic_inner(%g: !gnn.graph, %x: tensor<?x?xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    // expected-error @+1 {{'linalg.generic' op has a dynamic non-leading dimension}}
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    gnn.yield %a : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
func.func @dynamic_reduction(%g: !gnn.graph, %x: tensor<?x?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
    // expected-error @+1 {{'linalg.generic' op has a reduction loop d1 of unknown static size}}
    %a = linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%y : tensor<?xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.addf %v, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    gnn.yield %a : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @yields_input(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects to yield the result of its last op (and the log-sum-exp of its edge_softmax or the winner codes of its spmm or reduce)}}
  %r = gnn.kernel_group "elementwise_0" family = elementwise schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    gnn.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// A consumer of a degree is evaluated at the degree's only loop index.
#r1 = affine_map<(d0, d1) -> (d0)>
#r2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @loop_index(%g: !gnn.graph, %x: tensor<?x4xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = gnn.kernel_group "degree_0" family = degree schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    %a = linalg.generic {indexing_maps = [#r1, #r2, #r1], iterator_types = ["parallel", "reduction"]} ins(%d, %f : tensor<?xf32>, tensor<?x4xf32>) outs(%d : tensor<?xf32>) {
    ^bb0(%v: f32, %u: f32, %o: f32):
      // expected-error @+1 {{'linalg.index' op reads a loop index the kernel does not have}}
      %i = linalg.index 1 : index
      %j = arith.index_cast %i : index to i64
      %k = arith.sitofp %j : i64 to f32
      %w = arith.addf %v, %k : f32
      linalg.yield %w : f32
    } -> tensor<?xf32>
    gnn.yield %a : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @score_init(%g: !gnn.graph, %xl: tensor<?x2x16xf32>, %xr: tensor<?x2x16xf32>, %a: tensor<2x16xf32>, %init: tensor<?x2xf32> {gnn.domain = "edge"}) -> tensor<?x2x16xf32> {
  %r = gnn.kernel_group "attention_0" family = attention schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x2x16xf32> {
    %e = gnn.sddmm add %g, %xr, %xl : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x2x16xf32>
    // expected-error @+1 {{'linalg.generic' op expects a constant-filled init for a fused score reduction}}
    %s = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e, %a : tensor<?x2x16xf32>, tensor<2x16xf32>) outs(%init : tensor<?x2xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %m = arith.mulf %v, %w : f32
      %t = arith.addf %o, %m : f32
      linalg.yield %t : f32
    } -> tensor<?x2xf32>
    %alpha = gnn.edge_softmax %g, %s : tensor<?x2xf32>
    %o = gnn.spmm sum %g, %xr weights(%alpha : tensor<?x2xf32>) : tensor<?x2x16xf32> -> tensor<?x2x16xf32>
    gnn.yield %o : tensor<?x2x16xf32>
  }
  return %r : tensor<?x2x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#first = affine_map<(d0, d1) -> (d0, 0)>
func.func @edge_constant_index(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.generic' op expects dimensions in the indexing maps of fused edge ops}}
    %m = linalg.generic {indexing_maps = [#first, #id], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    %s = gnn.reduce sum %g, %m : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @edge_named(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.add' op cannot be fused into an edge loop}}
    %m = linalg.add ins(%e, %e : tensor<?x8xf32>, tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) -> tensor<?x8xf32>
    %s = gnn.reduce sum %g, %m : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @edge_reduction_inside(%g: !gnn.graph, %x: tensor<?x4x8xf32>, %y: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    // expected-error @+1 {{'linalg.generic' op expects its parallel loops first when fused}}
    %m = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "parallel"]} ins(%e : tensor<?x4x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %a = arith.addf %v, %o : f32
      linalg.yield %a : f32
    } -> tensor<?x8xf32>
    %s = gnn.reduce sum %g, %m : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @edge_init(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.generic' op reads an init that is not a constant fill; it cannot be fused into an edge loop}}
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %a = arith.addf %v, %o : f32
      linalg.yield %a : f32
    } -> tensor<?x8xf32>
    %s = gnn.reduce sum %g, %m : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d1)>
#w = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @edge_dynamic_reduction(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x?xf32>, %y: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%y : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.generic' op has a reduction loop d2 of unknown static size}}
    %m = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e, %w : tensor<?x8xf32>, tensor<8x?xf32>) outs(%f : tensor<?x8xf32>) {
    ^bb0(%v: f32, %u: f32, %o: f32):
      %a = arith.mulf %v, %u : f32
      %b = arith.addf %a, %o : f32
      linalg.yield %b : f32
    } -> tensor<?x8xf32>
    %s = gnn.reduce sum %g, %m : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @node_reduction(%g: !gnn.graph, %x: tensor<?x8x4xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    // expected-error @+1 {{'linalg.generic' op cannot be evaluated per node inside an aggregation (expects parallel loops and an unread init)}}
    %n = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<?x8x4xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %a = arith.addf %v, %o : f32
      linalg.yield %a : f32
    } -> tensor<?x8xf32>
    %s = gnn.spmm sum %g, %n : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @node_named(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %a = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.generic' op reads a value computed inside its kernel group that the CUDA backend cannot evaluate there}}
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    %s = gnn.spmm sum %g, %n : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#first = affine_map<(d0, d1) -> (0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @node_constant_index(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    // expected-error @+1 {{'linalg.generic' op expects its first index to be a loop index to read a node value of its group}}
    %n = linalg.generic {indexing_maps = [#first, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%d, %x : tensor<?xf32>, tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %u: f32, %o: f32):
      %m = arith.mulf %v, %u : f32
      linalg.yield %m : f32
    } -> tensor<?x8xf32>
    %s = gnn.spmm sum %g, %n : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

#half = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @node_map(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "aggregation_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.generic' op has an indexing map the CUDA backend does not support (only dimensions and constants)}}
    %n = linalg.generic {indexing_maps = [#half, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    %s = gnn.spmm sum %g, %n : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// A maximum over all rows into a static result is not a sum: the row
// reduction kernel merges partial results by adding them.
#rmax_in = affine_map<(d0, d1) -> (d1, d0)>
#rmax_out = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%g: !gnn.graph, %x: tensor<?x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = gnn.kernel_group "rmax" family = elementwise schedule = <mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<8xf32> {
    // expected-error @+1 {{'linalg.generic' op sums over rows of unknown count only as `out + term`, but result 0 is not such a sum}}
    %m = linalg.generic {indexing_maps = [#rmax_in, #rmax_out], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<?x8xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.maximumf %o, %a : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    gnn.yield %m : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// bf16 storage is computed in f32, so it does not mix with f64 either.
// expected-note @+2 {{the first 'bf16' tensor}}
// expected-error @+1 {{argument #2 of @mixed_bf16_f64 uses 'tensor<?x8xf64>' in a function whose first float tensor is 'bf16'; the CUDA backend computes a function in one arithmetic type (f32 for f32, bf16 and f16 tensors, or f64 for f64 ones)}}
func.func @mixed_bf16_f64(%g: !gnn.graph, %x: tensor<?x8xbf16>, %y: tensor<?x8xf64>) -> tensor<?x8xbf16> {
  return %x : tensor<?x8xbf16>
}
