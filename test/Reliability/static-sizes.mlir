// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// The verifier bounds the static dimensions of every graph-op tensor.

func.func @wraps(%g: !gnn.graph, %x: tensor<?x4294967296x4294967296xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects the static dimensions of operand #1 to hold at most 1099511627776 bytes (2^40) but got 'tensor<?x4294967296x4294967296xf32>' (an element count beyond 2^63)}}
  %e = gnn.gather src %g, %x : tensor<?x4294967296x4294967296xf32> -> tensor<?x4294967296x4294967296xf32>
  return
}

// -----

func.func @bytes_wrap(%g: !gnn.graph, %x: tensor<?x4611686018427387904xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects the static dimensions of operand #1 to hold at most 1099511627776 bytes (2^40) but got 'tensor<?x4611686018427387904xf32>' (4611686018427387904 elements, beyond 2^63 bytes)}}
  %r = gnn.spmm sum %g, %x : tensor<?x4611686018427387904xf32> -> tensor<?x4611686018427387904xf32>
  return
}

// -----

func.func @too_large(%g: !gnn.graph, %x: tensor<?x1024x1024x1024x1024xf32>) {
  // expected-error @+1 {{'gnn.spmm' op expects the static dimensions of operand #1 to hold at most 1099511627776 bytes (2^40) but got 'tensor<?x1024x1024x1024x1024xf32>' (4398046511104 bytes)}}
  %r = gnn.spmm sum %g, %x : tensor<?x1024x1024x1024x1024xf32> -> tensor<?x1024x1024x1024x1024xf32>
  return
}

// -----

// Exactly at the limit is accepted.
func.func @at_limit(%g: !gnn.graph, %x: tensor<?x274877906944xf32>) {
  %r = gnn.spmm sum %g, %x : tensor<?x274877906944xf32> -> tensor<?x274877906944xf32>
  return
}

// -----

func.func @degree_result(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.degree' op expects the static dimensions of result #0 to hold at most 1099511627776 bytes (2^40) but got 'tensor<1099511627776xf32>' (4398046511104 bytes)}}
  %d = gnn.degree %g : tensor<1099511627776xf32>
  return
}
