# Writes a float32 .npy file whose header says SHAPE (any text, true or not)
# followed by PAYLOAD_BYTES zero bytes: write-npy.py FILE SHAPE PAYLOAD_BYTES
import sys

path, shape, payload = sys.argv[1], sys.argv[2], int(sys.argv[3])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little"))
    f.write(header.encode() + b"\0" * payload)
