"""Compressed traces: gzip (``.gz``) and Zstandard (``.zst``), chosen by the file name's last extension.

``mqspec check`` and ``mqspec pipeline check`` read ``run.ndjson.zst`` and ``run.ndjson.gz`` as they
read ``run.ndjson``, decompressing as they stream; ``pipeline explore --traces`` writes its traces
compressed. The same text gives the same bytes: gzip's header carries no time or name, and Zstandard
is written at one level.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import IO

GZIP, ZSTD = ".gz", ".zst"
SUFFIXES = (GZIP, ZSTD)
#: the suffix of each compression's traces (``--trace-compression``)
TRACE_SUFFIX = {"zstd": ".ndjson" + ZSTD, "gzip": ".ndjson" + GZIP, "none": ".ndjson"}
ZSTD_LEVEL = 3


class CompressedError(ValueError):
    """Bytes that are not the compressed stream their name says (a truncated or foreign file)."""


def codec(name: str | Path) -> str | None:
    """``"gzip"``, ``"zstd"`` or None, by the name's last extension (case aside)."""
    lower = str(name).lower()
    return "gzip" if lower.endswith(GZIP) else "zstd" if lower.endswith(ZSTD) else None


def strip(name: str) -> str:
    """The name without its compression extension (``run.ndjson.zst`` -> ``run.ndjson``)."""
    kind = codec(name)
    return name[: -len(GZIP if kind == "gzip" else ZSTD)] if kind else name


def reader(raw: IO[bytes], name: str | Path) -> IO[bytes]:
    """A binary stream of ``raw``'s decompressed bytes, by ``name``'s extension (``raw`` itself if none)."""
    kind = codec(name)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    return raw


def open_text(path: str | Path) -> IO[str]:
    """The file as UTF-8 text (a byte order mark dropped, newlines universal), decompressed by its extension."""
    raw = open(path, "rb")  # noqa: SIM115 - closed with the text stream
    try:
        return io.TextIOWrapper(reader(raw, path), encoding="utf-8-sig", newline=None)
    except Exception:
        raw.close()
        raise


def text_of(data: bytes, name: str | Path) -> IO[str]:
    """``data`` (a file's bytes) as text, decompressed by ``name``'s extension."""
    return io.TextIOWrapper(reader(io.BytesIO(data), name), encoding="utf-8-sig", newline=None)


def open_write_text(path: str | Path) -> IO[str]:
    """A text file written through the compression its extension names (streamed: nothing held whole)."""
    kind = codec(path)
    binary: IO[bytes]
    if kind == "gzip":  # the file's name in the header, no time: the same text gives the same bytes
        binary = gzip.GzipFile(filename=str(path), mode="wb", compresslevel=6, mtime=0)
    elif kind == "zstd":
        import zstandard

        binary = zstandard.ZstdCompressor(level=ZSTD_LEVEL).stream_writer(open(path, "wb"), closefd=True)  # noqa: SIM115
    else:
        binary = open(path, "wb")  # noqa: SIM115 - closed with the text stream
    return io.TextIOWrapper(binary, encoding="utf-8", newline="")


def compress(data: bytes, name: str | Path) -> bytes:
    """``data`` compressed as ``name``'s extension says (unchanged without one); deterministic."""
    kind = codec(name)
    if kind == "gzip":
        return gzip.compress(data, compresslevel=6, mtime=0)
    if kind == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=True).compress(data)
    return data


def stream_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a broken compressed stream raises while it is read."""
    errors: list[type[BaseException]] = [EOFError, gzip.BadGzipFile]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover - zstandard is a dependency
        pass
    return tuple(errors)
