"""MS-MQSD 3.2: the server handlers (initialization, the processing loop, answering a request)."""

from __future__ import annotations

import struct

import pytest
from mqspec.model.errors import ModelError
from mqspec.model.examples_mqsd import (
    CLIENT_REQUEST,
    REPLY_LOCAL_SITE,
    REPLY_OTHER_SITE,
)
from mqspec.model.guid import Guid
from mqspec.model.mqsd import (
    DirectoryServiceServer,
    TopologyClientRequest,
    TopologyServerReply,
    decode,
    encode,
)
from mqspec.refimpl.effects import Clarified, Context, Mode
from mqspec.refimpl.mqsd_effects import (
    CloseSocket,
    Discard,
    OpenSocket,
    PacketDiscarded,
    SendReply,
    TerminateThread,
    Transport,
)
from mqspec.refimpl.mqsd_server import (
    MqsdServer,
    receive_datagram,
    receive_topology_client_request,
    send_failed,
    server_initialization,
    socket_open_failed,
)

from mqspec.clauses import covers

ENTERPRISE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")  # the section 4 values
REQUEST = Guid.parse("f291a103-e33c-ab4f-a930-be3a33e432dd")
CLIENT_SITE = Guid.parse("dcc51bf6-d4ad-4543-8739-71568e8f9128")
SERVER_SITE = Guid.parse("e6eaba60-d1c6-11db-baac-0003ff4e2d22")
CN = Guid.parse("e6eaba62-d1c6-11db-baac-0003ff4e2d22")
NT4PEC = DirectoryServiceServer("nt4pec", ip=True, ipx=False)
SENDER = ("10.0.0.1", 1801)
NODE = "server"


def ctx(mode: Mode = Mode.CLARIFIED) -> Context:
    return Context(NODE, mode)


def local_site_server(**kw) -> MqsdServer:
    """The section 4 server of the client's own site."""
    return MqsdServer(ENTERPRISE, CLIENT_SITE, (NT4PEC,), (CN,), listening=True, **kw)


def other_site_server(servers=(NT4PEC,), networks=(CN,)) -> MqsdServer:
    """The section 4 server of another site, which lists nt4pec."""
    return MqsdServer(ENTERPRISE, SERVER_SITE, servers, networks, listening=True)


def replies(effects) -> list[SendReply]:
    return [e for e in effects if type(e) is SendReply]


def discards(effects) -> list[Discard]:
    return [e.reason for e in effects if type(e) is PacketDiscarded]


# --------------------------------------------------------------------------- 3.2.1, 3.2.3


@covers("MS-MQSD", "3.2.1")
def test_server_state_holds_the_shared_elements():
    """Enterprise and site identifiers, the directory servers with their protocols, the connected networks."""
    s = MqsdServer(ENTERPRISE, SERVER_SITE, [NT4PEC], [CN])
    assert (s.directory_server_list, s.connected_network_identifier_list) == ((NT4PEC,), (CN,))
    assert (s.listening, s.terminated) == (False, False)
    with pytest.raises(ModelError):
        MqsdServer(ENTERPRISE, SERVER_SITE, ["nt4pec"], [CN])


@covers("MS-MQSD", "3.2.3")
def test_initialization_opens_the_socket_and_listens():
    """Initialization opens the socket; the server is listening."""
    s = MqsdServer(ENTERPRISE, SERVER_SITE, (), (CN,))
    k = ctx()
    server_initialization(s, k)
    assert k.effects == [OpenSocket(NODE)] and s.listening and not s.terminated


# --------------------------------------------------------------------------- 3.2.5


@covers("MS-MQSD", "3.2.5")
def test_a_request_is_answered_to_its_sender():
    """A TopologyClientRequest datagram is answered with one reply addressed to the datagram's sender."""
    k = ctx()
    receive_datagram(local_site_server(), k, CLIENT_REQUEST, SENDER)
    assert [(r.destination, r.data) for r in replies(k.effects)] == [(SENDER, REPLY_LOCAL_SITE)]


GARBAGE = {
    "empty": b"",
    "one byte": b"\x00",
    "header only": b"\x00\x01\x00\x00",
    "unknown type": b"\x00\x09\x00\x00" + CLIENT_REQUEST[4:],
    "a reply": REPLY_LOCAL_SITE,
    "truncated": CLIENT_REQUEST[:40],
    "ipx count 0": CLIENT_REQUEST + struct.pack("<II", 0, 7),
    "ipx count 33": CLIENT_REQUEST + struct.pack("<II", 33, 7),
    "ipx count too large": CLIENT_REQUEST + struct.pack("<III", 3, 7, 8),
    "ipx trailing": CLIENT_REQUEST + struct.pack("<IIH", 1, 7, 0),
    "text": b"GET / HTTP/1.1\r\n\r\n",
}


@covers("MS-MQSD", "3.2.5")
@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_e211_a_datagram_that_is_not_a_request_is_dropped(name):
    """Anything that does not decode as a TopologyClientRequest is dropped with a reason; no reply, still listening."""
    s = local_site_server()
    k = ctx()
    receive_datagram(s, k, GARBAGE[name], SENDER)
    assert discards(k.effects) == [Discard.MALFORMED] and not replies(k.effects)
    assert s.listening


@covers("MS-MQSD", "3.2.5")
def test_a_send_error_closes_and_reopens_the_socket():
    """A network error during a send: close the socket, open it again, keep listening."""
    s = local_site_server()
    k = ctx()
    send_failed(s, k, "ENETDOWN")
    assert k.effects == [CloseSocket(NODE), OpenSocket(NODE)] and s.listening


@covers("MS-MQSD", "3.2.5")
def test_a_socket_that_cannot_be_reopened_terminates_the_thread():
    """If the socket cannot be opened the server thread terminates; later datagrams are not answered."""
    s = local_site_server()
    k = ctx()
    socket_open_failed(s, k, "EADDRINUSE")
    assert k.effects == [TerminateThread(NODE, "EADDRINUSE")]
    assert (s.listening, s.terminated) == (False, True)
    k = ctx()
    receive_datagram(s, k, CLIENT_REQUEST, SENDER)
    assert discards(k.effects) == [Discard.NOT_LISTENING] and not replies(k.effects)


@covers("MS-MQSD", "3.2.5")
def test_the_request_header_version_and_reserved_are_ignored():
    """"MQSD servers MUST ignore" Version, and Reserved "MUST be ignored by MQSD servers" (2.2.1)."""
    k = ctx()
    receive_datagram(local_site_server(), k, b"\x07\x01\xff\xff" + CLIENT_REQUEST[4:], SENDER)
    assert [r.data for r in replies(k.effects)] == [REPLY_LOCAL_SITE]


# --------------------------------------------------------------------------- 3.2.5.1


@covers("MS-MQSD", "3.2.5.1")
def test_a_same_site_request_gets_the_section_4_local_reply():
    """Same SiteID: DirectoryServiceServerSize 0, no RespondingSiteID, no array; the bytes are section 4's first reply."""
    k = ctx()
    receive_datagram(local_site_server(), k, CLIENT_REQUEST, SENDER)
    (reply,) = replies(k.effects)
    assert reply.reply == TopologyServerReply(REQUEST, (CN,)) and reply.data == REPLY_LOCAL_SITE


@covers("MS-MQSD", "3.2.5.1")
def test_another_site_request_gets_the_section_4_remote_reply():
    """Other SiteID: RespondingSiteID and the DirectoryServerList; the bytes are section 4's second reply."""
    k = ctx()
    receive_datagram(other_site_server(), k, CLIENT_REQUEST, SENDER)
    (reply,) = replies(k.effects)
    assert reply.reply.responding_site_id == SERVER_SITE and reply.reply.servers == (NT4PEC,)
    assert reply.data == REPLY_OTHER_SITE


@covers("MS-MQSD", "3.2.5.1")
def test_the_correlation_id_is_the_request_id_and_every_network_is_copied():
    """CorrelationID := RequestID; ConnectedNetworkArray := every connected network, in order."""
    networks = tuple(Guid.from_name(f"n{i}") for i in range(32))
    request = TopologyClientRequest(ENTERPRISE, Guid.from_name("req"), CLIENT_SITE)
    k = ctx()
    receive_topology_client_request(other_site_server(networks=networks), k, request, SENDER)
    (reply,) = replies(k.effects)
    assert reply.reply.correlation_id == request.request_id and reply.reply.connected_networks == networks
    assert decode(reply.data) == reply.reply


@covers("MS-MQSD", "3.2.5.1")
def test_an_ip_request_gets_a_zero_mask():
    """"If the TopologyClientRequest received is an IP packet ... ConnectedNetworkMask field to 0x00000000"."""
    k = ctx()
    receive_datagram(other_site_server(networks=(CN, Guid.from_name("x"))), k, CLIENT_REQUEST, SENDER, Transport.IP)
    assert replies(k.effects)[0].reply.connected_network_mask == 0


@covers("MS-MQSD", "3.2.5.1")
def test_an_ipx_request_gets_one_mask_bit_per_network():
    """Over IPX one bit per ConnectedNetworkArray entry (bit i for entry i), as many bits as ConnectedNetworkCount."""
    networks = tuple(Guid.from_name(f"n{i}") for i in range(3))
    ipx = encode(TopologyClientRequest(ENTERPRISE, REQUEST, CLIENT_SITE, (0x1234, 0x5678)))
    k = ctx()
    receive_datagram(other_site_server(networks=networks), k, ipx, ("ipx-node", 876), Transport.IPX)
    (reply,) = replies(k.effects)
    assert (reply.reply.connected_network_mask, reply.transport) == (0b111, Transport.IPX)
    assert decode(reply.data).connected_network_mask == 0b111


@covers("MS-MQSD", "3.2.5.1")
@pytest.mark.parametrize("extra", range(1, 8))
def test_a_request_too_short_for_the_ipx_fields_is_read_without_them(extra):
    """53..59 bytes: IPXNetworkCount and IPXNetworkNumberArray "are considered as not present and MUST be ignored"."""
    k = ctx()
    receive_datagram(local_site_server(), k, CLIENT_REQUEST + b"\x01" * extra, SENDER)
    assert [r.data for r in replies(k.effects)] == [REPLY_LOCAL_SITE]


@covers("MS-MQSD", "3.2.5.1")
def test_e207_an_ipx_form_request_over_ip_gets_a_zero_mask():
    """A request carrying IPX fields that arrives over UDP/IP is an IP packet: mask 0, the IPX numbers are not used."""
    ipx_form = encode(TopologyClientRequest(ENTERPRISE, REQUEST, CLIENT_SITE, (1, 2, 3)))
    k = ctx()
    receive_datagram(local_site_server(), k, ipx_form, SENDER, Transport.IP)
    assert [r.data for r in replies(k.effects)] == [REPLY_LOCAL_SITE]


@covers("MS-MQSD", "3.2.5.1")
def test_e208_an_empty_server_list_cannot_answer_another_site():
    """Empty DirectoryServerList, other site: literal mode sends a size-0 reply (which claims the client's site); clarified sends nothing."""
    empty = other_site_server(servers=())
    k = ctx(Mode.LITERAL)
    receive_datagram(empty, k, CLIENT_REQUEST, SENDER)
    (reply,) = replies(k.effects)
    assert reply.data == REPLY_LOCAL_SITE  # indistinguishable from the same-site answer
    k = ctx()
    receive_datagram(empty, k, CLIENT_REQUEST, SENDER)
    assert discards(k.effects) == [Discard.NO_CONFORMANT_REPLY] and not replies(k.effects)
    assert [e.erratum for e in k.effects if type(e) is Clarified] == ["E-208"]


@covers("MS-MQSD", "3.2.5.1")
@pytest.mark.parametrize("count", [0, 33])
@pytest.mark.parametrize("mode", list(Mode))
def test_e209_no_reply_without_1_to_32_connected_networks(count, mode):
    """0 or more than 32 connected networks: no reply exists with a legal ConnectedNetworkCount, in either mode."""
    server = other_site_server(networks=tuple(Guid.from_name(f"n{i}") for i in range(count)))
    k = ctx(mode)
    receive_datagram(server, k, CLIENT_REQUEST, SENDER)
    assert discards(k.effects) == [Discard.NO_CONFORMANT_REPLY] and not replies(k.effects)


@covers("MS-MQSD", "3.2.5.1")
def test_e210_a_request_of_another_enterprise():
    """Another EnterpriseID: literal mode answers (3.2.5.1 never reads it); clarified mode drops it."""
    other = b"\x00\x01\x00\x00" + Guid.from_name("other-enterprise").bytes_le + CLIENT_REQUEST[20:]
    k = ctx(Mode.LITERAL)
    receive_datagram(local_site_server(), k, other, SENDER)
    assert [r.data for r in replies(k.effects)] == [REPLY_LOCAL_SITE]
    k = ctx()
    receive_datagram(local_site_server(), k, other, SENDER)
    assert discards(k.effects) == [Discard.OTHER_ENTERPRISE] and not replies(k.effects)
