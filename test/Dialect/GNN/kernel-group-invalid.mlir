// RUN: gnn-opt %s -split-input-file -verify-diagnostics

func.func @yield_mismatch(%g: !gnn.graph) -> tensor<?xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects the yielded types to match the results but got 'tensor<?xf64>' and 'tensor<?xf32>'}}
  %r = gnn.kernel_group "degree_0" family = degree -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf64>
    gnn.yield %d : tensor<?xf64>
  }
  return %r : tensor<?xf32>
}

// -----

func.func @empty_group() {
  // expected-error @+1 {{'gnn.kernel_group' op expects at least one op besides the terminator}}
  gnn.kernel_group "nothing" family = elementwise {
    gnn.yield
  }
  return
}

// -----

func.func @bad_lanes(%g: !gnn.graph) -> tensor<?xf32> {
  // expected-error @+1 {{expects lanes to be a power of two in [1, 32] but got 3}}
  %r = gnn.kernel_group "degree_0" family = degree schedule = #gnn.schedule<mapping = element_parallel, lanes = 3, block = 256, vector = 1, split = 0> -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

func.func @bad_block(%g: !gnn.graph) -> tensor<?xf32> {
  // expected-error @+1 {{expects block to be a multiple of 32 in [32, 1024] but got 100}}
  %r = gnn.kernel_group "degree_0" family = degree schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 100, vector = 1, split = 0> -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

func.func @bad_vector(%g: !gnn.graph) -> tensor<?xf32> {
  // expected-error @+1 {{expects vector to be 1, 2, 4 or 8 but got 16}}
  %r = gnn.kernel_group "degree_0" family = degree schedule = #gnn.schedule<mapping = element_parallel, lanes = 1, block = 256, vector = 16, split = 0> -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

func.func @yield_outside(%x: tensor<?xf32>) {
  // expected-error @+1 {{'gnn.yield' op expects parent op 'gnn.kernel_group'}}
  gnn.yield %x : tensor<?xf32>
}

// -----

func.func @bad_split(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects split to be 0 or at least 32 but got 7}}
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 2, block = 256, vector = 4, split = 7> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @attention_without_softmax(%g: !gnn.graph, %q: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects the graph ops of a family = attention group to be sddmm, edge_softmax, spmm but got sddmm, spmm}}
  %r = gnn.kernel_group "attention_0" family = attention -> tensor<?x4x8xf32> {
    %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
    %o = gnn.spmm sum %g, %q weights(%s : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    gnn.yield %o : tensor<?x4x8xf32>
  }
  return %r : tensor<?x4x8xf32>
}

// -----

func.func @aggregation_of_softmax(%g: !gnn.graph, %e: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{expects the graph ops of a family = aggregation group to be an spmm or a reduce, optionally after gathers and sddmms (an spmm also after degrees) but got edge_softmax, reduce}}
  %r = gnn.kernel_group "aggregation_0" family = aggregation -> tensor<?x4xf32> {
    %a = gnn.edge_softmax %g, %e : tensor<?x4xf32>
    %s = gnn.reduce sum %g, %a : tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.yield %s : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}

// -----

func.func @elementwise_with_graph_op(%g: !gnn.graph) -> tensor<?xf32> {
  // expected-error @+1 {{expects the graph ops of a family = elementwise group to be none but got degree}}
  %r = gnn.kernel_group "elementwise_0" family = elementwise -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

func.func @degree_without_degree(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects the graph ops of a family = degree group to be one degree but got none}}
  %r = gnn.kernel_group "degree_0" family = degree -> tensor<?x8xf32> {
    %c = tensor.cast %x : tensor<?x8xf32> to tensor<?x8xf32>
    gnn.yield %c : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// The family decides how a group is lowered: its schedule may only use a
// mapping the family's lowerings implement.
func.func @mapping_of_another_family(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects the schedule of a family = aggregation group to map threads row_parallel but got edge_parallel}}
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = edge_parallel, lanes = 1, block = 256, vector = 1, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// A group without a family is not a group: the family is required.
func.func @no_family(%g: !gnn.graph) -> tensor<?xf32> {
  // expected-error @+1 {{expected 'family'}}
  %r = gnn.kernel_group "degree_0" -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
