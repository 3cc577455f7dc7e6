"""Link layers: where a frame's IP packet starts, and whether the link says it was a broadcast.

Read by hand (a few struct reads per frame) rather than through dpkt objects: this runs once per
frame and is most of a capture's cost. Link types (the tcpdump.org ``LINKTYPE_*`` values):

* 1 Ethernet, with any number of 802.1Q / 802.1ad / QinQ tags; a destination MAC of all ones is a
  link broadcast;
* 0 BSD loopback (4-byte family in host order), 108 OpenBSD loopback (network order);
* 12, 14, 101 raw IP; 228 IPv4; 229 IPv6;
* 113 Linux "cooked" SLL and 276 SLL2 (``tcpdump -i any``): packet type 1 is a broadcast.
"""

from __future__ import annotations

import struct

ETH_IPV4, ETH_IPV6 = 0x0800, 0x86DD
_VLAN = frozenset((0x8100, 0x88A8, 0x9100, 0x9200))
_BROADCAST_MAC = b"\xff" * 6
_U16 = struct.Struct(">H")

NAMES = {0: "BSD loopback", 1: "Ethernet", 12: "raw IP", 14: "raw IP", 101: "raw IP", 108: "OpenBSD loopback",
         113: "Linux SLL", 228: "raw IPv4", 229: "raw IPv6", 276: "Linux SLL2"}

#: not IP (the frame is skipped for that reason)
NOT_IP = "not IP"
MALFORMED = "malformed"


def _past_tags(data: bytes, kind: int, pos: int) -> int | str:
    """Where the IP packet starts after any VLAN tags (``kind``: the EtherType at ``pos - 2``), or why not."""
    while kind in _VLAN:
        if len(data) < pos + 4:
            return MALFORMED
        kind = _U16.unpack_from(data, pos + 2)[0]
        pos += 4
    return pos if kind == ETH_IPV4 or kind == ETH_IPV6 else NOT_IP


def _ethernet(data: bytes) -> tuple[int, bool] | str:
    if len(data) < 14:
        return MALFORMED
    pos = _past_tags(data, _U16.unpack_from(data, 12)[0], 14)
    return pos if type(pos) is str else (pos, data[:6] == _BROADCAST_MAC)


def _raw(data: bytes) -> tuple[int, bool] | str:
    return (0, False) if data and data[0] >> 4 in (4, 6) else NOT_IP


def _loopback(data: bytes) -> tuple[int, bool] | str:
    # the family is in the capturing host's byte order: the IP version nibble says more reliably
    return (4, False) if len(data) > 4 and data[4] >> 4 in (4, 6) else NOT_IP


def _sll(data: bytes) -> tuple[int, bool] | str:
    if len(data) < 16:
        return MALFORMED
    pos = _past_tags(data, _U16.unpack_from(data, 14)[0], 16)  # a VLAN tag may be kept in the payload
    return pos if type(pos) is str else (pos, _U16.unpack_from(data, 0)[0] == 1)


def _sll2(data: bytes) -> tuple[int, bool] | str:
    if len(data) < 20:
        return MALFORMED
    kind = _U16.unpack_from(data, 0)[0]
    if kind != ETH_IPV4 and kind != ETH_IPV6:
        return NOT_IP
    return 20, data[10] == 1


def _only(version: int):
    def parse(data: bytes) -> tuple[int, bool] | str:
        return (0, False) if data and data[0] >> 4 == version else NOT_IP
    return parse


#: link type -> the function that finds the IP packet: (offset, link broadcast) or a skip reason
PARSERS = {0: _loopback, 1: _ethernet, 12: _raw, 14: _raw, 101: _raw, 108: _loopback, 113: _sll,
           228: _only(4), 229: _only(6), 276: _sll2}
