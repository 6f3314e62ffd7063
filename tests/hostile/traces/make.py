#!/usr/bin/env python3
"""Writes the damaged traces of tests/hostile/traces.t from one intact binary trace.

usage: make.py INTACT.cwt OUT_DIR
INTACT.cwt is examples/slow-server.trace converted: causeway convert
examples/slow-server.trace -o slow-server.cwt. Each damage is one function below, so a
failing case can be regenerated and read; the outputs are committed beside this script.

huge-tid.cwt is not damaged: it is huge-tid.trace converted (causeway convert
huge-tid.trace -o huge-tid.cwt), the largest thread and process ids in the binary form.
"""
import ctypes
import os
import struct
import sys

HEADER = 32
CHUNK_HEADER = 24
STRINGS, THREADS, EVENTS, END = 2, 5, 6, 8
COMPRESSED = 0x80000000
MAX_COMPRESSED_PAYLOAD = 64 << 20  # the per-chunk cap (trace/binary_format.h)

# The checksum and the compression of a chunk come from the libraries causeway links.
_xxhash = ctypes.CDLL("libxxhash.so.0")
_xxhash.XXH3_64bits.restype = ctypes.c_uint64
_xxhash.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_zstd = ctypes.CDLL("libzstd.so.1")
_zstd.ZSTD_compressBound.restype = ctypes.c_size_t
_zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_compress.restype = ctypes.c_size_t
_zstd.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                ctypes.c_size_t, ctypes.c_int]


def chunk(kind, payload):
    """A chunk as the writer lays it out: header, payload padded to 8 bytes."""
    payload += b"\0" * (-len(payload) % 8)
    return struct.pack("<4sIQQ", b"CWCK", kind, len(payload),
                       _xxhash.XXH3_64bits(payload, len(payload))) + payload


def compressed_chunk(kind, payload):
    """`payload` compressed as one zstd frame that states its size (no raw prefix)."""
    bound = _zstd.ZSTD_compressBound(len(payload))
    out = ctypes.create_string_buffer(bound)
    n = _zstd.ZSTD_compress(out, bound, payload, len(payload), 3)
    assert n < bound
    return chunk(kind | COMPRESSED, struct.pack("<IIQ", 1, 0, len(payload)) + out.raw[:n])


def chunks(b):
    """(offset, type, payload size) of each chunk, in file order."""
    out, pos = [], HEADER
    while pos + CHUNK_HEADER <= len(b):
        magic, kind, size, _ = struct.unpack_from("<4sIQQ", b, pos)
        assert magic == b"CWCK"
        out.append((pos, kind, size))
        pos += CHUNK_HEADER + size
    return out


def chunk_of(b, kind):
    return next(c for c in chunks(b) if c[1] == kind)


def damages(b):
    ev_pos, _, ev_size = chunk_of(b, EVENTS)
    end_pos = chunk_of(b, END)[0]
    ev_mid = ev_pos + CHUNK_HEADER + ev_size // 2
    yield "empty", b""
    yield "short-header", b[:10]
    yield "bad-magic", b"NOTATRACE"[:8] + b[8:]
    yield "newer-major", b[:8] + struct.pack("<I", 99) + b[12:]
    yield "cut-in-events", b[:ev_mid]
    yield "no-end-chunk", b[:end_pos]
    flipped = bytearray(b)
    flipped[ev_mid] ^= 0x5A
    yield "flipped-event-byte", bytes(flipped)
    huge = bytearray(b)
    struct.pack_into("<Q", huge, ev_pos + 8, 1 << 62)
    yield "huge-chunk-size", bytes(huge)
    yield "junk-between-chunks", b[:ev_pos] + b"\xde\xad\xbe\xef" * 7 + b[ev_pos:]
    unknown = bytearray(b[ev_pos:ev_pos + CHUNK_HEADER])
    struct.pack_into("<I", unknown, 4, 77)
    struct.pack_into("<Q", unknown, 8, 0)
    # XXH3-64 of no bytes, so the unknown chunk itself is intact.
    struct.pack_into("<Q", unknown, 16, 0x2D06800538D394C2)
    yield "unknown-chunk-type", b[:ev_pos] + bytes(unknown) + b[ev_pos:]
    rnd, x = bytearray(), 12345
    for _ in range(4096):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        rnd.append(x >> 16 & 0xFF)
    yield "random-after-header", b[:HEADER] + bytes(rnd)
    # The server's worker (thread 813 of process 812) declared again, in the client's
    # process 811, with no fork making it so: the root cause would move process.
    moved = chunk(THREADS, struct.pack("<IIIII", 1, 813, 811, 0, 0))
    yield "thread-in-two-processes", b[:end_pos] + moved + b[end_pos:]
    # Forty strings chunks of about 2 KB, each decompressing to the per-chunk cap: one
    # string of 64 MiB, another in each chunk, so all would stay in memory (2.7 GB from
    # a file of 90 KB) but for the limit on what a whole file decompresses to.
    bombs = b""
    for i in range(40):
        text = b"%04d" % i + b"x" * (MAX_COMPRESSED_PAYLOAD - 12 - 4)
        bombs += compressed_chunk(STRINGS, struct.pack("<III", 1000 + i, 1, len(text)) + text)
    yield "decompression-total", b[:end_pos] + bombs + b[end_pos:]


def main():
    intact = open(sys.argv[1], "rb").read()
    for name, data in damages(intact):
        with open(os.path.join(sys.argv[2], name + ".cwt"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
