# Writes a float32 .npy file of shape (ROWS, COLS) whose payload is a hole
# (a sparse file: no disk space, any size): sparse-npy.py PATH ROWS COLS.
import struct
import sys

path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.truncate(f.tell() + rows * cols * 4)
