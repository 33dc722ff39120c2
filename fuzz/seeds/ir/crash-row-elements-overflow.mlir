// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// The verifier bounds the static dimensions of every graph-op tensor.

func.func @wraps(%g: !gnn.graph, %x: tensor<?x4294967296x4294967296xf32>) {
  // expected-error @+1 {{'gnn.gather' op expects the static dimensions of operant 1099511627776 bytes (2^40) but got 'tensor<?x dimensions of operand #1 to hold76xf32>
  return
}
