import sys
n=int(sys.argv[1])
print('#id2 = affine_map<(d0, d1) -> (d0, d1)>')
print('func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {')
print('%c0 = arith.constant 0 : index')
print('%n = tensor.dim %x, %c0 : tensor<?x64xf32>')
print('%e = tensor.empty(%n) : tensor<?x64xf32>')
print('%r0 = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>')
for i in range(1,n+1):
  print(f'%r{i} = linalg.generic {{indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}} ins(%r{i-1} : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) {{\n^bb0(%a: f32, %o: f32):\n  %m = arith.addf %a, %a : f32\n  linalg.yield %m : f32\n}} -> tensor<?x64xf32>')
print(f'%s = gnn.gather src %g, %r{n} : tensor<?x64xf32> -> tensor<?x64xf32>')
print(f'%t = gnn.reduce sum %g, %s : tensor<?x64xf32> -> tensor<?x64xf32>')
print(f'return %t : tensor<?x64xf32>')
print('}')
