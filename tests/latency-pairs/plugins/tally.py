# The Python side of the ctypes pairs (07, 10): formats, splits and tallies 60,000 records,
# and checksums every EVERY-th one with cw_checksum() from the C library at LIBRARY.
# usage: python3 tally.py LIBRARY EVERY
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
every = int(sys.argv[2])
lib.cw_checksum.restype = ctypes.c_uint64
lib.cw_checksum.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
counts = {}
total = 0
for i in range(60000):
    record = f"{i:08d},user{i % 313},{i * 7919 % 100003},ok".encode()
    fields = record.split(b",")
    counts[fields[1]] = counts.get(fields[1], 0) + int(fields[2])
    if i % every == 0:
        total ^= lib.cw_checksum(record, len(record))
print(len(counts), total)
