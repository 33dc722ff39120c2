// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the gnn dialect.

func.func @gather_of_edge_tensor(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-note @+1 {{the edge tensor is produced here}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  // expected-error @+1 {{'gnn.gather' op expects input to be a node tensor but got an edge tensor}}
  %f = gnn.gather dst %g, %e : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @gather_trailing_mismatch(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects dimension 1 of result to match input (8) but got 4}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @gather_rank_mismatch(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects result of rank 2 for input of rank 2 but got rank 3}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8x1xf32>
  return
}

// -----

func.func @gather_element_type(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects input and result to have the same element type but got 'f32' and 'f16'}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf16>
  return
}

// -----

func.func @gather_rank0(%g: !gnn.graph, %x: tensor<f32>) {
  // expected-error @+1 {{'gnn.gather' op expects input of rank at least 1 (one row per node) but got 'tensor<f32>'}}
  %e = gnn.gather src %g, %x : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @integer_features(%g: !gnn.graph, %x: tensor<?x8xi32>) {
  // expected-error @+1 {{'gnn.gather' op operand #1 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<?x8xi32>'}}
  %e = gnn.gather src %g, %x : tensor<?x8xi32> -> tensor<?x8xi32>
  return
}

// -----

func.func @graph_operand_type(%g: tensor<?xf32>, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.degree' op operand #0 must be the sparse structure of a graph or of a batch of small graphs}}
  %d = "gnn.degree"(%g) : (tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @sddmm_unknown_kind(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [dot, add, sub, mul]}}
  %e = gnn.sddmm max %g, %x, %x : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @sddmm_dot_rank(%g: !gnn.graph, %x: tensor<?xf32>) {
  // expected-error @+1 {{'gnn.sddmm' op expects lhs of rank at least 2 (`dot` contracts the last dimension) but got 'tensor<?xf32>'}}
  %e = gnn.sddmm dot %g, %x, %x : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @sddmm_contracted(%g: !gnn.graph, %a: tensor<?x8xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+1 {{'gnn.sddmm' op expects dimension 1 of rhs to match lhs (8) but got 4}}
  %e = gnn.sddmm dot %g, %a, %b : tensor<?x8xf32>, tensor<?x4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @sddmm_dot_result(%g: !gnn.graph, %a: tensor<?x4x8xf32>) {
  // expected-error @+1 {{'gnn.sddmm' op expects result of rank 2 for lhs of rank 3 but got rank 3}}
  %e = gnn.sddmm dot %g, %a, %a : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return
}

// -----

func.func @sddmm_heads(%g: !gnn.graph, %a: tensor<?x4x8xf32>) {
  // expected-error @+1 {{'gnn.sddmm' op expects dimension 1 of result to match lhs (4) but got 2}}
  %e = gnn.sddmm dot %g, %a, %a : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x2xf32>
  return
}

// -----

func.func @sddmm_node_counts(%g: !gnn.graph, %a: tensor<5x8xf32>, %b: tensor<6x8xf32>) {
  // expected-error @+1 {{'gnn.sddmm' op expects lhs and rhs to have the same number of nodes but got 5 and 6}}
  %e = gnn.sddmm add %g, %a, %b : tensor<5x8xf32>, tensor<6x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @sddmm_element_types(%g: !gnn.graph, %a: tensor<?x8xf32>, %b: tensor<?x8xf64>) {
  // expected-error @+1 {{'gnn.sddmm' op expects lhs and rhs to have the same element type but got 'f32' and 'f64'}}
  %e = gnn.sddmm add %g, %a, %b : tensor<?x8xf32>, tensor<?x8xf64> -> tensor<?x8xf32>
  return
}

// -----

func.func @sddmm_edge_operand(%g: !gnn.graph, %a: tensor<?x8xf32>,
                              // expected-note @+1 {{declared by the function argument's `gnn.domain`}}
                              %e: tensor<?x8xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.sddmm' op expects rhs to be a node tensor but got an edge tensor}}
  %s = gnn.sddmm add %g, %a, %e : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @softmax_of_node_tensor(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-note @+1 {{the node tensor is produced here}}
  %n = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  // expected-error @+1 {{'gnn.edge_softmax' op expects input to be an edge tensor but got a node tensor}}
  %a = gnn.edge_softmax %g, %n : tensor<?x8xf32>
  return
}

// -----

// An argument without `gnn.domain` is bound with one row per node, so an edge
// op may not read it.
// expected-note @+1 {{a function argument with a dynamic leading dimension and no `gnn.domain` is a node tensor; declare `{gnn.domain = "edge"}` if it has one row per edge}}
func.func @softmax_of_undeclared_argument(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.edge_softmax' op expects input to be an edge tensor but got a node tensor}}
  %a = gnn.edge_softmax %g, %x : tensor<?x8xf32>
  return
}

// -----

// A static leading dimension says nothing about nodes or edges.
func.func @reduce_of_unknown_domain(%g: !gnn.graph, %x: tensor<6x8xf32>) {
  // expected-error @+1 {{'gnn.reduce' op expects input to be an edge tensor but cannot tell whether 'tensor<6x8xf32>' has one row per node or per edge; declare it with a `gnn.domain` function argument attribute}}
  %r = gnn.reduce sum %g, %x : tensor<6x8xf32> -> tensor<6x8xf32>
  return
}

// -----

func.func @gather_of_unknown_producer(%g: !gnn.graph, %n: index) {
  // expected-note @+1 {{the tensor is produced here}}
  %x = tensor.empty(%n) : tensor<?x8xf32>
  // expected-error @+1 {{'gnn.gather' op expects input to be a node tensor but cannot tell}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// A tensor computed from both a node tensor and an edge tensor along one
// loop has no size any binding could give it.
func.func @mixed(%g: !gnn.graph, %x: tensor<?x8xf32>,
                 %e: tensor<?x8xf32> {gnn.domain = "edge"}) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %e, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%d) : tensor<?x8xf32>
  // expected-note @+1 {{this op reads tensors of two index sets along its leading loop}}
  %s = linalg.add ins(%x, %e : tensor<?x8xf32>, tensor<?x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  %t = linalg.exp ins(%s : tensor<?x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-error @+1 {{'gnn.reduce' op expects input to be an edge tensor but it is computed from tensors of two index sets (node, edge, or the two sides of a bipartite graph)}}
  %r = gnn.reduce sum %g, %t : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// A verifier may rely on what an earlier graph op requires of a value only
// because that op's verifier checks it: the wrong requirement is reported
// there, and a later op with the right one passes.
func.func @earlier_requirement(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-note @+1 {{the edge tensor is produced here}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  // expected-error @+1 {{'gnn.gather' op expects input to be a node tensor but got an edge tensor}}
  %f = gnn.gather dst %g, %e : tensor<?x8xf32> -> tensor<?x8xf32>
  %a = gnn.edge_softmax %g, %e : tensor<?x8xf32>
  return
}

// -----

// The same across kernel groups: program order spans blocks.
func.func @earlier_requirement_in_group(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-note @+1 {{the edge tensor is produced here}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %f = gnn.kernel_group "gather_0" family = edge_map -> tensor<?x8xf32> {
    // expected-error @+1 {{'gnn.gather' op expects input to be a node tensor but got an edge tensor}}
    %h = gnn.gather dst %g, %e : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %h : tensor<?x8xf32>
  }
  %a = gnn.kernel_group "edge_softmax_0" family = edge_softmax -> tensor<?x8xf32> {
    %b = gnn.edge_softmax %g, %e : tensor<?x8xf32>
    gnn.yield %b : tensor<?x8xf32>
  }
  return
}

// -----

func.func @softmax_rank0(%g: !gnn.graph, %x: tensor<f32>) {
  // expected-error @+1 {{'gnn.edge_softmax' op expects input of rank at least 1 (one row per edge) but got 'tensor<f32>'}}
  %a = gnn.edge_softmax %g, %x : tensor<f32>
  return
}

// -----

func.func @softmax_types(%g: !gnn.graph, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{'gnn.edge_softmax' op failed to verify that all of {input, result} have same type}}
  %a = "gnn.edge_softmax"(%g, %x) : (!gnn.graph, tensor<?x4xf32>) -> tensor<?x2xf32>
  return
}

// -----

func.func @softmax_lse_shape(%g: !gnn.graph, %x: tensor<?x4xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.edge_softmax' op expects dimension 1 of lse to match input (4) but got 2}}
  %a, %l = gnn.edge_softmax %g, %x : tensor<?x4xf32>, tensor<?x2xf32>
  return
}

// -----

func.func @softmax_lse_rank(%g: !gnn.graph, %x: tensor<?x4xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.edge_softmax' op expects lse of rank 2 for input of rank 2 but got rank 1 ('tensor<?xf32>')}}
  %a, %l = gnn.edge_softmax %g, %x : tensor<?x4xf32>, tensor<?xf32>
  return
}

// -----

func.func @softmax_lse_element(%g: !gnn.graph, %x: tensor<?x4xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.edge_softmax' op expects lse of element type 'f32' (the arithmetic type of the input's 'f32') but got 'f64'}}
  %a, %l = gnn.edge_softmax %g, %x : tensor<?x4xf32>, tensor<?x4xf64>
  return
}

// -----

// The log-sum-exp of bf16 scores stays f32.
func.func @softmax_lse_bf16(%g: !gnn.graph, %x: tensor<?x4xbf16> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.edge_softmax' op expects lse of element type 'f32' (the arithmetic type of the input's 'bf16') but got 'bf16'}}
  %a, %l = gnn.edge_softmax %g, %x : tensor<?x4xbf16>, tensor<?x4xbf16>
  return
}

// -----

func.func @softmax_lse_is_a_node_tensor(%g: !gnn.graph, %x: tensor<?x4xf32> {gnn.domain = "edge"}) {
  // expected-note @+1 {{the node tensor is produced here}}
  %a, %l = gnn.edge_softmax %g, %x : tensor<?x4xf32>, tensor<?x4xf32>
  // expected-error @+1 {{'gnn.edge_softmax' op expects input to be an edge tensor but got a node tensor}}
  %b = gnn.edge_softmax %g, %l : tensor<?x4xf32>
  return
}

// -----

func.func @softmax_through_linalg(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // The domain is followed through elementwise linalg ops.
  // expected-note @+1 {{the node tensor is produced here}}
  %n = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %n, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%d) : tensor<?x8xf32>
  %r = linalg.exp ins(%n : tensor<?x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-error @+1 {{'gnn.edge_softmax' op expects input to be an edge tensor but got a node tensor}}
  %a = gnn.edge_softmax %g, %r : tensor<?x8xf32>
  return
}

// -----

func.func @spmm_ties_sum(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects a 'winner' result only with max or min but the reduction is sum}}
  %o, %t = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
  return
}

// -----

func.func @spmm_ties_type(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects 'winner' of the result's shape and arithmetic type 'tensor<?x8xf32>' but got 'tensor<?x4xf32>'}}
  %o, %t = gnn.spmm max %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
  return
}

// -----

// `counted` says how the winner codes name edges: nothing to say without them.
func.func @spmm_counted_without_winner(%g: !gnn.graph, %x: tensor<?x8xbf16>) {
  // expected-error @+1 {{'gnn.spmm' op expects 'counted' (how its winner codes name the edges attaining the extremum) only with a 'winner' result}}
  %o = gnn.spmm max %g, %x counted : tensor<?x8xbf16> -> tensor<?x8xbf16>
  return
}

// -----

// Winner codes of f16 rows are f32 (exact node ids up to 2^24).
func.func @spmm_winner_f16(%g: !gnn.graph, %x: tensor<?x8xf16>) {
  // expected-error @+1 {{'gnn.spmm' op expects 'winner' of the result's shape and arithmetic type 'tensor<?x8xf32>' but got 'tensor<?x8xf16>'}}
  %o, %t = gnn.spmm max %g, %x : tensor<?x8xf16> -> tensor<?x8xf16>, tensor<?x8xf16>
  return
}

// -----

// A gnn op does not convert: mixing bf16 and f32 needs an explicit
// arith.extf / arith.truncf in a linalg op.
func.func @spmm_mixed_weights(%g: !gnn.graph, %x: tensor<?x4x8xbf16>, %w: tensor<?x4xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.spmm' op expects input and weights to have the same element type but got 'bf16' and 'f32'}}
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?x4xf32>) : tensor<?x4x8xbf16> -> tensor<?x4x8xbf16>
  return
}

// -----

// Element types other than f16, bf16, f32 and f64 are not gnn tensors.
func.func @gather_f8(%g: !gnn.graph, %x: tensor<?x8xf8E4M3FN>) {
  // expected-error @+1 {{'gnn.gather' op operand #1 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<?x8xf8E4M3FN>'}}
  %e = gnn.gather src %g, %x : tensor<?x8xf8E4M3FN> -> tensor<?x8xf8E4M3FN>
  return
}

// -----

func.func @reduce_ties_mean(%g: !gnn.graph, %e: tensor<?x8xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.reduce' op expects a 'winner' result only with max or min but the reduction is mean}}
  %o, %t = gnn.reduce mean %g, %e : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
  return
}

// -----

func.func @spmm_rank(%g: !gnn.graph, %x: tensor<?xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects input of rank at least 2 (node rows of features) but got 'tensor<?xf32>'}}
  %o = gnn.spmm sum %g, %x : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @spmm_result(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects dimension 1 of result to match input (8) but got 16}}
  %o = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x16xf32>
  return
}

// -----

func.func @spmm_node_count(%g: !gnn.graph, %x: tensor<5x8xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects input and result to have the same number of nodes but got 5 and 7}}
  %o = gnn.spmm sum %g, %x : tensor<5x8xf32> -> tensor<7x8xf32>
  return
}

// -----

func.func @spmm_weight_rank(%g: !gnn.graph, %x: tensor<?x4x8xf32>, %w: tensor<?xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.spmm' op expects weights of rank 2 for input of rank 3 but got rank 1}}
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return
}

// -----

func.func @spmm_weight_heads(%g: !gnn.graph, %x: tensor<?x4x8xf32>, %w: tensor<?x2xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.spmm' op expects dimension 1 of weights to match input (4) but got 2}}
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?x2xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return
}

// -----

func.func @spmm_weight_type(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<?xf16>) {
  // expected-error @+1 {{'gnn.spmm' op expects input and weights to have the same element type but got 'f32' and 'f16'}}
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xf16>) : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @spmm_node_weights(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-note @+1 {{the node tensor is produced here}}
  %d = gnn.degree %g : tensor<?xf32>
  // expected-error @+1 {{'gnn.spmm' op expects weights to be an edge tensor but got a node tensor}}
  %o = gnn.spmm sum %g, %x weights(%d : tensor<?xf32>) : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @spmm_edge_input(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-note @+1 {{the edge tensor is produced here}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %e, %c0 : tensor<?x8xf32>
  %empty = tensor.empty(%d) : tensor<?x2x4xf32>
  // The domain is followed through reshapes that keep the leading dimension.
  %r = tensor.expand_shape %e [[0], [1, 2]] output_shape [%d, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
  // expected-error @+1 {{'gnn.spmm' op expects input to be a node tensor but got an edge tensor}}
  %o = gnn.spmm sum %g, %r : tensor<?x2x4xf32> -> tensor<?x2x4xf32>
  return
}

// -----

func.func @spmm_unknown_reduction(%g: !gnn.graph, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'reduce' [sum, mean, max, min]}}
  %o = gnn.spmm prod %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @reduce_of_node_tensor(%g: !gnn.graph) {
  // expected-note @+1 {{the node tensor is produced here}}
  %d = gnn.degree %g : tensor<?xf32>
  // expected-error @+1 {{'gnn.reduce' op expects input to be an edge tensor but got a node tensor}}
  %r = gnn.reduce sum %g, %d : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @reduce_result(%g: !gnn.graph, %e: tensor<?x4xf32>) {
  // expected-error @+1 {{'gnn.reduce' op expects dimension 1 of result to match input (4) but got 3}}
  %r = gnn.reduce max %g, %e : tensor<?x4xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @reduce_element_type(%g: !gnn.graph, %e: tensor<?x4xf32>) {
  // expected-error @+1 {{'gnn.reduce' op expects input and result to have the same element type but got 'f32' and 'bf16'}}
  %r = gnn.reduce max %g, %e : tensor<?x4xf32> -> tensor<?x4xbf16>
  return
}

// -----

func.func @reduce_rank0(%g: !gnn.graph, %e: tensor<f32>) {
  // expected-error @+1 {{'gnn.reduce' op expects input of rank at least 1 (one row per edge) but got 'tensor<f32>'}}
  %r = gnn.reduce max %g, %e : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @degree_rank(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.degree' op expects a rank-1 result (one degree per node) but got 'tensor<?x1xf32>'}}
  %d = gnn.degree %g : tensor<?x1xf32>
  return
}

// -----

// expected-error @+1 {{expects `gnn.domain` to be "node", "edge", "src" or "dst" but got "edges"}}
func.func @domain_value(%g: !gnn.graph, %e: tensor<?xf32> {gnn.domain = "edges"}) {
  return
}

// -----

// expected-error @+1 {{expects `gnn.domain` on a ranked tensor of rank >= 1 but argument #0 has type '!gnn.graph'}}
func.func @domain_on_graph(%g: !gnn.graph {gnn.domain = "node"}) {
  return
}

// -----

// expected-error @+1 {{unknown gnn argument attribute 'gnn.nodes'}}
func.func @unknown_arg_attr(%g: !gnn.graph, %x: tensor<?xf32> {gnn.nodes = 1}) {
  return
}

// -----

// Parameters of the graph type other than `bipartite` and `typed` are
// rejected, not dropped.
// expected-error @+1 {{expects !gnn.graph, !gnn.graph<bipartite>, !gnn.graph<typed> or !gnn.graph<bipartite, typed> (the sizes are known only at run time)}}
func.func @graph_parameters(%g: !gnn.graph<1, 2>) {
  return
}

// -----

// A bipartite graph's aggregation reads source rows: a destination-side
// tensor is refused as an edge tensor is where a node tensor is expected.
// expected-note @+1 {{declared by the function argument's `gnn.domain`}}
func.func @bipartite_spmm_of_dst(%g: !gnn.graph<bipartite>, %x: tensor<?x8xf32> {gnn.domain = "dst"}) {
  // expected-error @+1 {{'gnn.spmm' op expects input to be a source-node tensor but got a destination-node tensor}}
  %0 = gnn.spmm sum %g, %x : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// Reversed, the aggregation reads destination rows.
func.func @bipartite_reversed_spmm_of_its_result(%g: !gnn.graph<bipartite>, %x: tensor<?x8xf32> {gnn.domain = "src"}) {
  // expected-note @+1 {{the dst tensor is produced here}}
  %0 = gnn.spmm sum %g, %x : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
  // expected-error @+1 {{'gnn.spmm' op expects input to be a source-node tensor but got a destination-node tensor}}
  %1 = gnn.spmm sum %g, %0 : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// An argument without `gnn.domain` is a node tensor of one node set.
// expected-note @+1 {{a function argument with a dynamic leading dimension and no `gnn.domain` is a node tensor; declare `{gnn.domain = "src"}` if it has one row per source node}}
func.func @bipartite_undeclared_side(%g: !gnn.graph<bipartite>, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects input to be a source-node tensor but got a node tensor}}
  %0 = gnn.gather src %g, %x : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// sddmm reads its lhs at the sources and its rhs at the destinations.
func.func @bipartite_sddmm_sides(%g: !gnn.graph<bipartite>, %s: tensor<?x4xf32> {gnn.domain = "src"},
                                 // expected-note @+1 {{declared by the function argument's `gnn.domain`}}
                                 %d: tensor<?x4xf32> {gnn.domain = "dst"}) {
  // expected-error @+1 {{'gnn.sddmm' op expects lhs to be a source-node tensor but got a destination-node tensor}}
  %0 = gnn.sddmm add %g, %d, %s : !gnn.graph<bipartite>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

// The two sides have different sizes: an elementwise op over both has no
// row count.
func.func @bipartite_mixed_sides(%g: !gnn.graph<bipartite>, %s: tensor<?x4xf32> {gnn.domain = "src"},
                                 %d: tensor<?x4xf32> {gnn.domain = "dst"}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x4xf32>
  %init = tensor.empty(%n) : tensor<?x4xf32>
  // expected-note @+1 {{this op reads tensors of two index sets along its leading loop}}
  %sum = linalg.add ins(%s, %d : tensor<?x4xf32>, tensor<?x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  // expected-error @+1 {{'gnn.spmm' op expects input to be a source-node tensor but it is computed from tensors of two index sets}}
  %0 = gnn.spmm sum %g, %sum : !gnn.graph<bipartite>, tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

// A bipartite graph's sides are declared "src" or "dst".
// expected-error @+1 {{expects `gnn.domain` to be "node", "edge", "src" or "dst" but got "source"}}
func.func @bad_side(%g: !gnn.graph<bipartite>, %x: tensor<?x4xf32> {gnn.domain = "source"}) {
  return
}

// -----

// expected-note @+1 {{declared by the function argument's `gnn.domain`}}
func.func @extremum_grad_edge(%g: !gnn.graph, %x: tensor<?x8xf32>, %e: tensor<?x8xf32> {gnn.domain = "edge"}) {
  %y, %w = gnn.spmm max %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
  // expected-error @+1 {{'gnn.extremum_grad' op expects grad to be a node tensor but got an edge tensor}}
  %0 = gnn.extremum_grad %g, %x, %y, %w, %e : tensor<?x8xf32>
  return
}

// -----

func.func @extremum_grad_rank(%g: !gnn.graph, %x: tensor<?xf32>) {
  // expected-error @+1 {{'gnn.extremum_grad' op expects result of rank at least 2 (node rows of features) but got 'tensor<?xf32>'}}
  %0 = gnn.extremum_grad %g, %x, %x, %x, %x : tensor<?xf32>
  return
}

// -----

func.func @extremum_grad_types(%g: !gnn.graph, %x: tensor<?x8xf32>, %d: tensor<?x4xf32>) {
  // expected-error @+1 {{'gnn.extremum_grad' op failed to verify that all of {input, extremum, grad} have same type}}
  %0 = "gnn.extremum_grad"(%g, %x, %x, %x, %d) : (!gnn.graph, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return
}

// -----

// bf16 rows: the winner codes and the result (an f32 sum) are f32.
func.func @extremum_grad_bf16_result(%g: !gnn.graph, %x: tensor<?x8xbf16>, %w: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.extremum_grad' op failed to verify that result is of the input's arithmetic type}}
  %0 = "gnn.extremum_grad"(%g, %x, %x, %w, %x) : (!gnn.graph, tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x8xf32>, tensor<?x8xbf16>) -> tensor<?x8xbf16>
  return
}

// -----

func.func @extremum_grad_bf16_winner(%g: !gnn.graph, %x: tensor<?x8xbf16>, %r: tensor<?x8xf32>) {
  // expected-error @+1 {{'gnn.extremum_grad' op failed to verify that winner is of the input's arithmetic type}}
  %0 = "gnn.extremum_grad"(%g, %x, %x, %x, %x) : (!gnn.graph, tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x8xbf16>) -> tensor<?x8xf32>
  return
}

// -----

// `bipartite` comes before `typed`.
// expected-error @+1 {{expects 'bipartite' before 'typed' (!gnn.graph<bipartite, typed>)}}
func.func @typed_first(%g: !gnn.graph<typed, bipartite>) {
  return
}

// -----

func.func @relation_gather_untyped(%g: !gnn.graph, %h: tensor<?x3x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects a typed graph (!gnn.graph<typed> or !gnn.graph<bipartite, typed>) with `relation` but got '!gnn.graph'}}
  %0 = gnn.gather src %g, %h relation : tensor<?x3x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @relation_gather_dynamic(%g: !gnn.graph<typed>, %h: tensor<?x?x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects a static relation count (dimension 1 of input) of at least 1 but got 'tensor<?x?x8xf32>'}}
  %0 = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?x?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @relation_gather_rank(%g: !gnn.graph<typed>, %h: tensor<?x3x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects result of rank 2 (input's without the relation dimension) but got 'tensor<?x3x8xf32>'}}
  %0 = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?x3x8xf32> -> tensor<?x3x8xf32>
  return
}

// -----

func.func @relation_gather_width(%g: !gnn.graph<typed>, %h: tensor<?x3x8xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects dimension 1 of result to match dimension 2 of input (8) but got 4}}
  %0 = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?x3x8xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @relation_gather_flat(%g: !gnn.graph<typed>, %h: tensor<?xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects input of rank at least 2 (a row per node and relation) with `relation` but got 'tensor<?xf32>'}}
  %0 = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @relation_reduce_max(%g: !gnn.graph<typed>, %e: tensor<?x8xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.reduce' op expects `sum` with `relation` (the gradient of a relation gather) but got max}}
  %0 = gnn.reduce max %g, %e relation : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x3x8xf32>
  return
}

// -----

func.func @relation_reduce_shape(%g: !gnn.graph<typed>, %e: tensor<?x8xf32> {gnn.domain = "edge"}) {
  // expected-error @+1 {{'gnn.reduce' op expects input of rank 1 (result's without the relation dimension) but got 'tensor<?x8xf32>'}}
  %0 = gnn.reduce sum %g, %e relation : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}
