#!/usr/bin/env python3
"""Writes the damaged traces of tests/hostile/traces.t from one intact binary trace.

usage: make.py INTACT.cwt OUT_DIR
INTACT.cwt is examples/slow-server.trace converted: causeway convert
examples/slow-server.trace -o slow-server.cwt. Each damage is one function below, so a
failing case can be regenerated and read; the outputs are committed beside this script.

huge-tid.cwt is not damaged: it is huge-tid.trace converted (causeway convert
huge-tid.trace -o huge-tid.cwt), the largest thread and process ids in the binary form.
"""
import os
import struct
import sys

HEADER = 32
CHUNK_HEADER = 24
EVENTS, END = 6, 8


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


def main():
    intact = open(sys.argv[1], "rb").read()
    for name, data in damages(intact):
        with open(os.path.join(sys.argv[2], name + ".cwt"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
