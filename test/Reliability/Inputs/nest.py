# Prints a function nested DEPTH deep: nest.py KIND DEPTH, KIND one of
# attribute ([[...]]), type (tuple<tuple<...>>) or region (scf.execute_region).
import sys

kind, depth = sys.argv[1], int(sys.argv[2])
if kind == "attribute":
    print("func.func @f() attributes {a = " + "[" * depth + "]" * depth + "} { return }")
elif kind == "type":
    t = "tuple<" * depth + "i32" + ">" * depth
    print("func.func private @f(%x: " + t + ")")
else:
    body = "scf.execute_region {\n" * depth + "scf.yield\n}\n" * depth
    print("func.func @f() {\n" + body + "return\n}")
