"""Rewrites a float32 .npy file (format 1.0, as gnn-run --dump-inputs writes
it) as float64, each element plus a relative DELTA (one float32 rounds
away): python3 widen-npy.py IN OUT DELTA."""
import struct
import sys

src, dst, delta = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = open(src, "rb").read()
header = 10 + struct.unpack("<H", data[8:10])[0]
descr = data[10:header].decode("latin1")
if "<f4" not in descr:
    sys.exit(f"{src}: not a float32 array ({descr.strip()})")
count = (len(data) - header) // 4
values = struct.unpack(f"<{count}f", data[header:])
text = descr.replace("<f4", "<f8").rstrip()
text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
out = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")
out += struct.pack(f"<{count}d", *[v * (1 + delta) for v in values])
open(dst, "wb").write(out)
