# Prints an SpMM followed by N elementwise ops, ending in a gather and a
# reduce: elementwise-chain.py N [--gather-each], where --gather-each also
# gathers every link of the chain (N more graph ops, all reading the chain).
import sys

n = int(sys.argv[1])
each = "--gather-each" in sys.argv[2:]
out = ['#id2 = affine_map<(d0, d1) -> (d0, d1)>',
       'func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {',
       '%c0 = arith.constant 0 : index',
       '%n = tensor.dim %x, %c0 : tensor<?x64xf32>',
       '%e = tensor.empty(%n) : tensor<?x64xf32>',
       '%r0 = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>']
for i in range(1, n + 1):
    out.append(f'%r{i} = linalg.generic {{indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}} ins(%r{i-1} : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) {{\n^bb0(%a: f32, %o: f32):\n  %m = arith.addf %a, %a : f32\n  linalg.yield %m : f32\n}} -> tensor<?x64xf32>')
    if each:
        out.append(f'%s{i} = gnn.gather src %g, %r{i} : tensor<?x64xf32> -> tensor<?x64xf32>')
out.append(f'%s = gnn.gather src %g, %r{n} : tensor<?x64xf32> -> tensor<?x64xf32>')
out.append('%t = gnn.reduce sum %g, %s : tensor<?x64xf32> -> tensor<?x64xf32>')
out.append('return %t : tensor<?x64xf32>')
out.append('}')
print('\n'.join(out))
