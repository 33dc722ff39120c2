// A tensor no graph op reads is not bounded by the gnn verifiers; its row of
// 2^64 elements used to wrap to 0 in the Program's buffer size (found by the
// ir fuzz target).
func.func @wraps(%g: !gnn.graph, %x: tensor<?x4294967296x4294967296xf32>) {
  return
}
