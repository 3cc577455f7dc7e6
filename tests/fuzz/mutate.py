"""Deterministic mutations of valid encodings: bit flips, truncation, extension, huge counts."""

from __future__ import annotations

import random
from collections.abc import Iterator

HUGE = (b"\xff", b"\xff\xff", b"\xff\xff\xff\xff", b"\x00\x00\x01\x00", b"\xff\xff\xff\x7f")


def mutants(data: bytes, rng: random.Random, n: int) -> Iterator[bytes]:
    """Yield ``n`` mutants of ``data``; the same ``rng`` state yields the same mutants."""
    size = len(data)
    for _ in range(n):
        kind = rng.randrange(7)
        buf = bytearray(data)
        if kind == 0 and size:  # flip one bit
            i = rng.randrange(size)
            buf[i] ^= 1 << rng.randrange(8)
        elif kind == 1 and size:  # flip several bits
            for _ in range(rng.randrange(2, 8)):
                i = rng.randrange(size)
                buf[i] ^= 1 << rng.randrange(8)
        elif kind == 2:  # truncate
            del buf[rng.randrange(size + 1) :]
        elif kind == 3:  # extend with random or zero bytes
            buf += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        elif kind == 4 and size:  # overwrite a window with a huge count
            patch = rng.choice(HUGE)
            i = rng.randrange(size)
            buf[i : i + len(patch)] = patch
        elif kind == 5 and size:  # set one byte to a boundary value
            buf[rng.randrange(size)] = rng.choice((0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x08, 0x7F, 0x80, 0xFF))
        else:  # delete or duplicate a slice
            i = rng.randrange(size + 1)
            j = min(size, i + rng.randrange(1, 17))
            if rng.random() < 0.5:
                del buf[i:j]
            else:
                buf[i:i] = data[i:j]
        yield bytes(buf)
