"""Sets every element of a float32 or float64 .npy file (format 1.0, as
gnn-run --dump-inputs writes it) to one value: python3 fill-npy.py FILE
VALUE (a float, 'nan', 'inf', '-inf')."""
import struct
import sys

path, value = sys.argv[1], float(sys.argv[2])
data = open(path, "rb").read()
header = 10 + struct.unpack("<H", data[8:10])[0]
descr = data[10:header].decode("latin1")
code = "d" if "<f8" in descr else "f" if "<f4" in descr else None
if code is None:
    sys.exit(f"{path}: not a float32 or float64 array ({descr.strip()})")
size = struct.calcsize(code)
count = (len(data) - header) // size
open(path, "wb").write(data[:header] + struct.pack(f"<{count}{code}", *[value] * count))
