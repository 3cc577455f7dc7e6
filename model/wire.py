"""A bounded little-endian reader and the small packing helpers every codec shares.

Every read checks the bytes remaining first and raises :class:`DecodeError` naming the field,
offset and section; counts are checked against the bytes remaining before anything is built,
so a short buffer claiming a huge count fails at once.
"""

from __future__ import annotations

import struct

from mqspec.wording import plural

from .errors import DecodeError, ModelError
from .guid import Guid
from .seqnum import SequenceNumber

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")


class Reader:
    """Read fields from ``data`` starting at ``pos``; every method names its field and section."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = bytes(data)
        self.pos = pos
        self.end = len(self.data) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def fail(self, field: str, section: str, reason: str, offset: int | None = None) -> DecodeError:
        """Build the error for ``field`` at ``offset`` (default: the current position)."""
        return DecodeError(field, self.pos if offset is None else offset, section, reason)

    def need(self, n: int, field: str, section: str) -> None:
        if self.end - self.pos < n:
            raise self.fail(field, section, f"needs {plural(n, 'byte')}, {self.end - self.pos} left")

    def u8(self, field: str, section: str) -> int:
        pos = self.pos
        if pos >= self.end:
            raise self.fail(field, section, "needs 1 byte, 0 left")
        self.pos = pos + 1
        return self.data[pos]

    def _fixed(self, st: struct.Struct, field: str, section: str):
        pos = self.pos
        if self.end - pos < st.size:
            raise self.fail(field, section, f"needs {plural(st.size, 'byte')}, {self.end - pos} left")
        self.pos = pos + st.size
        return st.unpack_from(self.data, pos)[0]

    def u16(self, field: str, section: str) -> int:
        return self._fixed(_U16, field, section)

    def u32(self, field: str, section: str) -> int:
        return self._fixed(_U32, field, section)

    def i16(self, field: str, section: str) -> int:
        return self._fixed(_I16, field, section)

    def i32(self, field: str, section: str) -> int:
        return self._fixed(_I32, field, section)

    def u64(self, field: str, section: str) -> int:
        return self._fixed(_U64, field, section)

    def i64(self, field: str, section: str) -> int:
        return self._fixed(_I64, field, section)

    def raw(self, n: int, field: str, section: str) -> bytes:
        pos = self.pos
        if self.end - pos < n:
            raise self.fail(field, section, f"needs {plural(n, 'byte')}, {self.end - pos} left")
        self.pos = pos + n
        return self.data[pos : pos + n]

    def guid(self, field: str, section: str) -> Guid:
        return Guid(self.raw(16, field, section))

    def seqnum(self, field: str, section: str) -> SequenceNumber:
        """A SEQUENCE_NUMBER: 8 bytes, byte 1 most significant (MC-MQDSRP 2.2.2)."""
        return SequenceNumber(int.from_bytes(self.raw(8, field, section), "big"))

    def wstr(self, field: str, section: str) -> str:
        """A null-terminated WCHAR (UTF-16LE) buffer; the terminator is consumed, not returned."""
        data, start, end = self.data, self.pos, self.end
        i = start
        while True:
            i = data.find(b"\x00\x00", i, end)
            if i < 0:
                raise self.fail(field, section, "null-terminated WCHAR buffer has no terminator")
            if (i - start) % 2 == 0:
                break
            i += 1  # the zero pair straddles two WCHARs; keep looking on the WCHAR grid
        self.pos = i + 2
        return data[start:i].decode("utf-16-le", "surrogatepass")

    def count(self, n: int, min_size: int, field: str, section: str, what: str, offset: int) -> None:
        """Check that ``n`` elements of at least ``min_size`` bytes can fit in what is left."""
        fits = (self.end - self.pos) // min_size if min_size else n
        if n > fits:
            raise self.fail(field, section, f"{n} {what} declared, bytes for {fits}", offset)

    def finish(self, structure: str, section: str) -> None:
        """Refuse trailing bytes after a complete structure."""
        if self.pos != self.end:
            raise self.fail(
                f"{structure}", section, f"{self.end - self.pos} trailing bytes after the structure"
            )


def pack_u16(v: int) -> bytes:
    return _U16.pack(v)


def pack_u32(v: int) -> bytes:
    return _U32.pack(v)


def pack_wstr(s: str) -> bytes:
    """Encode a null-terminated WCHAR buffer; an embedded NUL could not be decoded back."""
    if "\x00" in s:
        raise ModelError(f"WCHAR string {s!r} contains a NUL, which would end it on the wire")
    return s.encode("utf-16-le", "surrogatepass") + b"\x00\x00"


def check_range(value: int, bits: int, what: str) -> int:
    """Refuse an unsigned integer that does not fit in ``bits`` bits."""
    if not 0 <= value < (1 << bits):
        raise ModelError(f"{what} = {value} does not fit in {bits} unsigned bits")
    return value
