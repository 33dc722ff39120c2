"""Prints a Program file (gnn-run --dump-program) a line per buffer
(`buffer NAME ROLE SIZE`) and per step (`gemm m=M`, `launch KERNEL grid=G
args=A` with the size arguments only), for FileCheck."""
import json
import sys

program = json.load(open(sys.argv[1]))
for b in program["buffers"]:
    print("buffer", b["name"], b["role"], b["size"])
for s in program["steps"]:
    if s["op"] == "gemm":
        print("gemm", "m=" + s["m"], "n=" + s["n"], "k=" + s["k"])
    elif s["op"] == "launch":
        sizes = [a["i64"] for a in s["args"] if "i64" in a]
        print("launch", s["kernel"], "grid=" + s["grid"][0], "sizes=" + ",".join(sizes))
    else:
        print(s["op"])
