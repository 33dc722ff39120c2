// Small inputs and outputs, one huge temporary: each node's 16 features
// broadcast to 16 x 4096 values (a node-sized buffer of 65,536 floats per
// node), then summed back. On 2,000,000 nodes the temporary takes 524 GB, more
// than any GPU holds: `gnn-run --backend=cuda` must refuse it before
// allocating anything (device-memory.test), naming nodes, edges and bytes.
#in = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @huge_temp(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %wide = tensor.empty(%n) : tensor<?x16x4096xf32>
  %b = linalg.generic {indexing_maps = [#in, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x16xf32>) outs(%wide : tensor<?x16x4096xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %y = arith.mulf %v, %f : f32
    linalg.yield %y : f32
  } -> tensor<?x16x4096xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %s = linalg.generic {indexing_maps = [#id3, #in], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%b : tensor<?x16x4096xf32>) outs(%z : tensor<?x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.addf %o, %v : f32
    linalg.yield %y : f32
  } -> tensor<?x16xf32>
  %r = gnn.spmm sum %g, %s : tensor<?x16xf32> -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}
