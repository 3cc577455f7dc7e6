"""Capture files read frame by frame: classic pcap and pcapng, plain or compressed, never whole in memory.

* classic libpcap (microsecond and nanosecond magic, either byte order, and the "modified" variant
  with its 8 extra record bytes): one link type for the file; the record's original length says
  what the snap length cut off; an FCS the link type header announces is removed;
* pcapng: every section and interface on its own: each Interface Description Block's link type,
  ``if_tsresol`` (a power of 10 or of 2) and ``if_tsoffset``; Enhanced, Simple and (obsolete)
  Packet Blocks with their original length; other blocks (name resolution, statistics,
  decryption secrets, custom) are skipped;
* gzip, bzip2 and xz compression (and zstd when the ``zstandard`` module is installed) are
  recognised by their magic bytes, whatever the file's name (``.pcap.gz``, ``.cap``, ...).

A file in another format is a :class:`CaptureError` that names the format and how to convert it
(Microsoft Network Monitor, snoop, a trace given as a capture). A file that ends inside a record is
not an error for the frames before it: :func:`read_frames` yields them, then raises CaptureError
with ``cut`` set, naming the frame that is cut.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from mqspec.wording import plural

CHUNK = 1 << 20  # bytes read at a time: memory does not grow with the file
MAX_RECORD = 1 << 24  # a record longer than this is corruption, not a frame
MAX_BLOCK = 1 << 26  # likewise for a pcapng block


class CaptureError(Exception):
    """A capture file that cannot be read; ``frame`` 0 means the file header.

    ``cut`` is True when the file ends inside frame ``frame`` (the frames before it are whole).
    """

    def __init__(self, path: Path | str, frame: int, reason: str, *, cut: bool = False) -> None:
        super().__init__(path, frame, reason)
        self.path, self.frame, self.reason, self.cut = str(path), frame, reason, cut

    def __str__(self) -> str:
        where = f"frame {self.frame}" if self.frame else "file header (before frame 1)"
        return f"{self.path}: {where}: {self.reason}"


class Frame:
    """One captured frame: 1-based number, time (seconds), bytes, length on the wire, link type, interface."""

    __slots__ = ("data", "interface", "linktype", "number", "time", "wire_length")

    def __init__(self, number: int, time: float, data: bytes, wire_length: int, linktype: int,
                 interface: int = 0) -> None:
        self.number, self.time, self.data, self.wire_length = number, time, data, wire_length
        self.linktype, self.interface = linktype, interface

    def __repr__(self) -> str:
        return (f"Frame({self.number}, {self.time}, {len(self.data)} of {plural(self.wire_length, 'byte')}, "
                f"linktype {self.linktype}, interface {self.interface})")


# --- the bytes of the file -------------------------------------------------------------------------

_COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
#: formats recognised only to say what they are and how to convert them
_FOREIGN = {
    b"GMBU": "a Microsoft Network Monitor 2.x capture",
    b"RTSS": "a Microsoft Network Monitor 1.x capture",
    b"snoop\x00\x00\x00": "a snoop capture (RFC 1761)",
    b"XCP\x00": "a NetXRay / Sniffer capture",
}
_CONVERT = ("convert it with Wireshark's editcap (`editcap -F pcapng FILE OUT.pcapng`), or save it as "
            "pcap or pcapng from the tool that made it")


def _open(path: Path) -> tuple[BinaryIO, str | None]:
    """The file's decompressed byte stream and the compression's name (None: plain)."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed by read_frames
    except OSError as exc:
        raise CaptureError(path, 0, exc.strerror or str(exc)) from exc
    head = raw.read(6)
    raw.seek(0)
    for magic, name in _COMPRESSED.items():
        if head.startswith(magic):
            if name == "gzip":
                return gzip.GzipFile(fileobj=raw), name  # type: ignore[return-value]
            if name == "bzip2":
                return bz2.BZ2File(raw), name  # type: ignore[return-value]
            if name == "xz":
                return lzma.LZMAFile(raw), name  # type: ignore[return-value]
            try:
                import zstandard
            except ImportError:
                raw.close()
                raise CaptureError(path, 0, "a zstd-compressed file: install the zstandard module "
                                            "(pip install zstandard) or decompress it first (zstd -d)") from None
            return zstandard.ZstdDecompressor().stream_reader(raw), name  # type: ignore[return-value]
    return raw, None


class _Bytes:
    """A window over a byte stream read a chunk at a time; ``take(n)`` is None at the end."""

    __slots__ = ("buf", "compression", "done", "error", "pos", "read", "stream")

    def __init__(self, stream: BinaryIO, compression: str | None) -> None:
        self.stream, self.buf, self.pos, self.done = stream, b"", 0, False
        self.compression = compression
        self.error: str | None = None  # why a compressed stream ended early
        self.read = getattr(stream, "read1", stream.read)

    def _fill(self, n: int) -> None:
        parts = [self.buf[self.pos:]]
        have = len(parts[0])
        while have < n and not self.done:
            try:
                # read1: one read of the underlying stream at a time, so a compressed stream that ends
                # early gives up its bytes before the error (read would lose them with it)
                chunk = self.read(max(CHUNK, n - have))
            except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
                # a compressed stream that ends early or is corrupt: like a file cut at that point
                self.done = True
                self.error = f"the {self.compression} stream ends early or is corrupt ({exc})"
                break
            if not chunk:
                self.done = True
                break
            parts.append(chunk)
            have += len(chunk)
        self.buf, self.pos = b"".join(parts), 0

    def take(self, n: int) -> bytes | None:
        """The next ``n`` bytes, or None when fewer remain (:meth:`left` says how many)."""
        end = self.pos + n
        if end > len(self.buf):
            self._fill(n)
            end = n
            if end > len(self.buf):
                return None
        data = self.buf[self.pos:end]
        self.pos = end
        return data

    def left(self) -> int:
        return len(self.buf) - self.pos

    def cut(self, path: Path, frame: int, reason: str) -> CaptureError:
        """The error for a file that ends inside frame ``frame`` (the frames before it are whole)."""
        return CaptureError(path, frame, f"{reason}; {self.error}" if self.error else reason, cut=True)

    def at_end(self) -> bool:
        if self.pos < len(self.buf):
            return False
        self._fill(1)
        return self.pos >= len(self.buf)


def sniff(path: Path | str) -> str | None:
    """``"capture"`` when the file (decompressed) starts as a pcap or pcapng file does, ``"foreign"``
    for another capture format (read only to say how to convert it), None otherwise (a trace, say)."""
    try:
        stream, _compression = _open(Path(path))
    except CaptureError:
        return None
    try:
        head = stream.read(8)
    except (OSError, EOFError, lzma.LZMAError, ValueError):
        return None
    finally:
        stream.close()
    if head[:4] == b"\x0a\x0d\x0d\x0a" or head[:4] in _CLASSIC_MAGIC:
        return "capture"
    return "foreign" if any(head.startswith(magic) for magic in _FOREIGN) else None


def read_frames(path: Path | str) -> Iterator[Frame]:
    """The frames of the capture at ``path``, one at a time (CaptureError for an unreadable file;
    a file cut mid-record yields the frames before the cut, then raises CaptureError with ``cut``)."""
    path = Path(path)
    stream, compression = _open(path)
    try:
        data = _Bytes(stream, compression)
        head = data.take(4)
        if head is None:
            left = data.left()
            what = "an empty file" if left == 0 else f"a {plural(left, 'byte')} file"
            raise CaptureError(path, 0, f"{what}, not a pcap or pcapng capture")
        data.pos = 0
        if head == b"\x0a\x0d\x0d\x0a":
            yield from _pcapng(path, data)
        elif head in _CLASSIC_MAGIC:
            yield from _classic(path, data, head)
        else:
            raise CaptureError(path, 0, _not_a_capture(data, head, compression))
    finally:
        stream.close()


def _not_a_capture(data: _Bytes, head: bytes, compression: str | None) -> str:
    longer = data.take(8) or head
    inside = f" (inside the {compression} compression)" if compression else ""
    for magic, name in _FOREIGN.items():
        if longer.startswith(magic):
            return f"{name}{inside}, not pcap or pcapng: {_CONVERT}"
    if longer.lstrip()[:1] == b"{":
        return f"not a capture but JSON text{inside} (a trace? `mqspec check` reads traces)"
    return f"not a pcap or pcapng file{inside} (magic {head.hex()}): {_CONVERT}"


# --- classic pcap -------------------------------------------------------------------------------

_CLASSIC_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 10**6, 16),
    b"\xa1\xb2\xc3\xd4": (">", 10**6, 16),
    b"\x4d\x3c\xb2\xa1": ("<", 10**9, 16),
    b"\xa1\xb2\x3c\x4d": (">", 10**9, 16),
    b"\x34\xcd\xb2\xa1": ("<", 10**6, 24),  # Alexey Kuznetzov's modified pcap: 8 more record bytes
    b"\xa1\xb2\xcd\x34": (">", 10**6, 24),
}


def _classic(path: Path, data: _Bytes, magic: bytes) -> Iterator[Frame]:
    """A 24-byte file header, then record headers and their bytes (read here, not by dpkt: its reader
    returns a record cut short by the end of the file as if it were whole)."""
    order, scale, record_size = _CLASSIC_MAGIC[magic]
    header = data.take(24)
    if header is None:
        raise CaptureError(path, 0, f"truncated file header: {data.left()} of 24 bytes")
    field = struct.unpack_from(order + "I", header, 20)[0]
    linktype = field & 0x0FFFFFFF
    fcs = ((field >> 29) & 0x7) * 2 if field & 0x10000000 else 0  # an FCS announced, in 16-bit words
    record = struct.Struct(order + "IIII")
    number = 0
    take = data.take
    while not data.at_end():
        number += 1
        head = take(record_size)
        if head is None:
            raise data.cut(path, number, f"truncated record header: {data.left()} of {plural(record_size, 'byte')}")
        sec, frac, caplen, wirelen = record.unpack_from(head)
        if caplen > MAX_RECORD:
            raise CaptureError(path, number, f"record claims {plural(caplen, 'captured byte')}: corrupt file")
        body = take(caplen)
        if body is None:
            raise data.cut(path, number, f"truncated frame: record says {plural(caplen, 'byte')}, "
                                         f"file has {data.left()}")
        if fcs and caplen >= fcs and wirelen == caplen:
            body, caplen, wirelen = body[:-fcs], caplen - fcs, wirelen - fcs
        yield Frame(number, sec + frac / scale, body, wirelen if wirelen > caplen else caplen, linktype)


# --- pcapng ---------------------------------------------------------------------------------------

SHB, IDB, PB, SPB, EPB = 0x0A0D0D0A, 1, 2, 3, 6
_BYTE_ORDER_MAGIC = 0x1A2B3C4D


class _Interface:
    __slots__ = ("divisor", "linktype", "offset", "snaplen")

    def __init__(self, linktype: int, snaplen: int, divisor: int, offset: int) -> None:
        self.linktype, self.snaplen, self.divisor, self.offset = linktype, snaplen, divisor, offset


def _pcapng(path: Path, data: _Bytes) -> Iterator[Frame]:
    order = "<"
    interfaces: list[_Interface] = []
    number = 0
    blocks = 0
    last_time = 0.0
    while not data.at_end():
        blocks += 1
        head = data.take(8)
        where = number + 1 if blocks > 1 else 0
        if head is None:
            if blocks == 1:
                raise CaptureError(path, 0, f"truncated file header: {data.left()} of 8 bytes")
            raise data.cut(path, where, f"truncated pcapng block header: {data.left()} of 8 bytes")
        kind = struct.unpack_from(order + "I", head)[0]
        if kind == SHB:
            magic = head[4:8]  # the length's byte order is the section's: read the magic first
            body4 = data.take(4)
            if body4 is None:
                if blocks == 1:
                    raise CaptureError(path, 0, "truncated section header block")
                raise data.cut(path, where, "truncated section header block")
            order = "<" if struct.unpack("<I", body4)[0] == _BYTE_ORDER_MAGIC else ">"
            if struct.unpack(order + "I", body4)[0] != _BYTE_ORDER_MAGIC:
                raise CaptureError(path, where, "section header block without the byte-order magic: corrupt file")
            length = struct.unpack(order + "I", magic)[0]
            if length < 28 or length % 4 or length > MAX_BLOCK:
                raise CaptureError(path, where, f"section header block of {plural(length, 'byte')}: corrupt file")
            if data.take(length - 12) is None:
                if blocks == 1:
                    raise CaptureError(path, 0, "truncated section header block")
                raise data.cut(path, where, "truncated section header block")
            interfaces = []  # a new section numbers its interfaces afresh
            continue
        length = struct.unpack_from(order + "I", head, 4)[0]
        if length < 12 or length % 4 or length > MAX_BLOCK:
            raise CaptureError(path, where,
                               f"pcapng block of type {kind:#x} claims {plural(length, 'byte')}: corrupt file")
        body = data.take(length - 8)
        if body is None:
            is_packet = kind in (EPB, SPB, PB)
            at = number + 1 if is_packet else where
            raise data.cut(path, at, f"truncated {'frame' if is_packet else 'pcapng block'}: block says "
                                     f"{plural(length, 'byte')}, file has {data.left() + 8}")
        body = body[:-4]  # the trailing copy of the length
        if kind == IDB:
            interfaces.append(_interface(path, where, body, order))
        elif kind in (EPB, PB):
            number += 1
            if len(body) < 20:
                raise CaptureError(path, number, f"packet block of {plural(length, 'byte')}: corrupt file")
            if kind == EPB:
                if_id, high, low, caplen, wirelen = struct.unpack_from(order + "IIIII", body)
            else:
                if_id, _drops, high, low, caplen, wirelen = struct.unpack_from(order + "HHIIII", body)
            start = 20
            if if_id >= len(interfaces):
                raise CaptureError(path, number, f"packet of interface {if_id}, which the section does not "
                                                 f"describe ({plural(len(interfaces), 'interface')}): corrupt file")
            if start + caplen > len(body):
                raise CaptureError(path, number, f"packet block claims {plural(caplen, 'captured byte')} in a block of "
                                                 f"{length}: corrupt file")
            iface = interfaces[if_id]
            last_time = ((high << 32) | low) / iface.divisor + iface.offset
            yield Frame(number, last_time, body[start:start + caplen], wirelen if wirelen > caplen else caplen,
                        iface.linktype, if_id)
        elif kind == SPB:
            number += 1
            if not interfaces or len(body) < 4:
                raise CaptureError(path, number, "simple packet block before any interface: corrupt file")
            wirelen = struct.unpack_from(order + "I", body)[0]
            iface = interfaces[0]
            caplen = min(wirelen, len(body) - 4, iface.snaplen or wirelen)
            # a Simple Packet Block has no time: it is given the time of the frame before it
            yield Frame(number, last_time, body[4:4 + caplen], max(wirelen, caplen), iface.linktype)
        # other block types (name resolution, statistics, secrets, custom) carry no frame


def _interface(path: Path, where: int, body: bytes, order: str) -> _Interface:
    if len(body) < 8:
        raise CaptureError(path, where, "interface description block too short: corrupt file")
    linktype, _reserved, snaplen = struct.unpack_from(order + "HHI", body)
    divisor, offset = 1_000_000, 0
    pos = 8
    while pos + 4 <= len(body):
        code, size = struct.unpack_from(order + "HH", body, pos)
        value = body[pos + 4:pos + 4 + size]
        if code == 0:
            break
        if code == 9 and size >= 1:  # if_tsresol: 10**-v, or 2**-v with the top bit set
            v = value[0]
            divisor = 2 ** (v & 0x7F) if v & 0x80 else 10 ** v
        elif code == 14 and size >= 8:  # if_tsoffset: seconds added to every timestamp
            offset = struct.unpack_from(order + "q", value)[0]
        pos += 4 + (size + 3) // 4 * 4
    return _Interface(linktype, snaplen, divisor, offset)
