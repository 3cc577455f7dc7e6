"""Hypothesis strategies for every [MS-MQSD] structure (valid values only; fuzzers mutate bytes).

``messages()`` draws either packet; ``packets()`` draws canonical encodings of them.
"""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from mqspec.model import mqsd
from mqspec.model.guid import Guid

guids = st.binary(min_size=16, max_size=16).map(Guid)

#: any 16-bit code unit a NameChar may be (everything but 0x0000 and 0x002C, E-025)
name_code_units = st.integers(1, 0xFFFF).filter(lambda u: u != 0x2C)
_ascii_name_units = st.sampled_from(
    [ord(c) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."]
)


@st.composite
def server_names(draw, max_size: int = 16) -> str:
    """A name of 1..max_size code units, as the decoder returns it (surrogatepass-decoded)."""
    unit = st.one_of(_ascii_name_units, name_code_units)
    units = draw(st.lists(unit, min_size=1, max_size=max_size))
    return struct.pack(f"<{len(units)}H", *units).decode("utf-16-le", "surrogatepass")


directory_service_servers = st.builds(
    mqsd.DirectoryServiceServer, name=server_names(), ip=st.booleans(), ipx=st.booleans()
)

#: a non-empty DirectoryServiceServerArray
server_arrays = st.lists(directory_service_servers, min_size=1, max_size=6).map(tuple)

packet_headers = st.builds(
    mqsd.TopologyPacketHeader,
    version=st.just(0),
    type=st.sampled_from(list(mqsd.PacketType)),
    reserved=st.just(0),
)

#: Version/Reserved values a lenient receiver ignores (strict decoding refuses any but 0)
any_versions = st.integers(0, 0xFF)
any_reserved = st.integers(0, 0xFFFF)

ipx_network_numbers = st.lists(
    st.integers(0, 0xFFFFFFFF), min_size=1, max_size=mqsd.MAX_NETWORKS
).map(tuple)

client_requests_ip = st.builds(mqsd.TopologyClientRequest, guids, guids, guids)
client_requests_ipx = st.builds(mqsd.TopologyClientRequest, guids, guids, guids, ipx_network_numbers)
client_requests = st.one_of(client_requests_ip, client_requests_ipx)


@st.composite
def connected_network_masks(draw, count: int) -> int:
    """0 (IP) or a mask with exactly ``count`` of the 32 bits set (IPX)."""
    if draw(st.booleans()):
        return 0
    bits = draw(st.lists(st.integers(0, 31), min_size=count, max_size=count, unique=True))
    return sum(1 << b for b in bits)


@st.composite
def server_replies(draw, *, with_servers: bool | None = None) -> mqsd.TopologyServerReply:
    """A reply; ``with_servers`` forces the local-site (False) or other-site (True) shape."""
    networks = tuple(draw(st.lists(guids, min_size=1, max_size=mqsd.MAX_NETWORKS)))
    mask = draw(connected_network_masks(len(networks)))
    if with_servers is None:
        with_servers = draw(st.booleans())
    site = draw(guids) if with_servers else None
    servers = draw(server_arrays) if with_servers else ()
    return mqsd.TopologyServerReply(draw(guids), networks, mask, site, servers)


def messages() -> st.SearchStrategy:
    """Either MQSD packet."""
    return st.one_of(client_requests, server_replies())


def packets() -> st.SearchStrategy[bytes]:
    """Canonical encodings of either packet."""
    return messages().map(mqsd.encode)
