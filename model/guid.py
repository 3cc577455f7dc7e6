"""GUID in the [MS-DTYP] 2.3.4 layout: Data1, Data2, Data3 little-endian, Data4 as bytes.

>>> g = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
>>> g.bytes_le.hex()
'61baeae6c6d1db11baac0003ff4e2d22'
>>> str(Guid(bytes.fromhex("61baeae6c6d1db11baac0003ff4e2d22")))
'e6eaba61-d1c6-11db-baac-0003ff4e2d22'
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from typing import ClassVar

import attrs

from mqspec import memos

from .errors import ModelError


_URL_NAMESPACE = uuid.NAMESPACE_URL.bytes


def _check_len(_inst: object, _attr: attrs.Attribute, value: bytes) -> None:
    if type(value) is not bytes or len(value) != 16:
        raise ModelError(f"a GUID is 16 bytes, not {value!r}")


@attrs.frozen(order=True)
class Guid:
    """A GUID held as its 16 wire bytes; ``str()`` gives the lowercase dashed form."""

    bytes_le: bytes = attrs.field(validator=_check_len, repr=False)

    NULL: ClassVar[Guid]

    @classmethod
    def parse(cls, text: str) -> Guid:
        """Parse the dashed string form (braces allowed, case-insensitive)."""
        try:
            return cls(uuid.UUID(text.strip().strip("{}")).bytes_le)
        except (ValueError, AttributeError) as exc:
            raise ModelError(f"not a GUID: {text!r}") from exc

    @classmethod
    def from_name(cls, name: str) -> Guid:
        """A stable GUID derived from a name (for scenarios and tests that name their objects).

        ``uuid.uuid5(uuid.NAMESPACE_URL, f"mqspec:{name}").bytes_le``, computed without the two
        UUID objects (the simulator names a GUID for every object a directory client creates):
        the first 16 bytes of the SHA-1 with the version (5) and variant (RFC 4122) bits set as
        uuid.UUID sets them, then the first three fields little-endian.
        """
        b = bytearray(hashlib.sha1(_URL_NAMESPACE + f"mqspec:{name}".encode()).digest()[:16])
        b[6] = (b[6] & 0x0F) | 0x50
        b[8] = (b[8] & 0x3F) | 0x80
        return cls(bytes(b[3::-1] + b[5:3:-1] + b[7:5:-1] + b[8:]))

    def __str__(self) -> str:
        return _text(self.bytes_le)

    def __eq__(self, other: object) -> bool:
        # attrs' generated __eq__ less its one-field tuples: GUIDs are compared on every
        # partition and object lookup of the simulator
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.bytes_le == other.bytes_le  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.bytes_le != other.bytes_le  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        # the bytes' own hash (CPython keeps it): GUIDs key the simulator's every dict, and the
        # generated hash of a one-field tuple costs a tuple per lookup
        return hash(self.bytes_le)

    def __repr__(self) -> str:
        return f"Guid('{self}')"


@functools.lru_cache(maxsize=1 << 16)
def _text(b: bytes) -> str:
    # str(uuid.UUID(bytes_le=b)) without building a UUID: snapshots and fingerprints print every
    # GUID of every replica, so this is on the simulator's hot path
    h = (b[3::-1] + b[5:3:-1] + b[7:5:-1] + b[8:]).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


memos.register_cache(_text, "a GUID's bytes -> its text")


Guid.NULL = Guid(bytes(16))
