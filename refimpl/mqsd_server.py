"""[MS-MQSD] 3.2: the MQSD server (a queue manager running the MSMQ Directory Service).

Covered: the abstract data model (3.2.1), Initialization (3.2.3), the processing loop of 3.2.5
(answer, return to listening; close and reopen the socket after a send error; terminate the
thread when it cannot be reopened) and Receiving a TopologyClientRequest (3.2.5.1) with its IP
and IPX rules. The server has no timers (3.2.2) and no other events (3.2.4, 3.2.7).

Handlers perform no I/O: a runner (the tests' simulator, or :class:`mqspec.mqsd_net.UdpResponder`
over a real UDP socket) hands them the datagrams it receives and the errors its socket raises,
and performs the effects they return. Departures from the literal text say
``# clarification E-2NN`` (ids E-200 .. E-229); ``Mode.LITERAL`` keeps the literal reading.
"""

from __future__ import annotations

from typing import Any

import attrs
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqsd import (
    MAX_NETWORKS,
    DirectoryServiceServer,
    TopologyClientRequest,
    TopologyServerReply,
    decode_client_request,
)

from mqspec.clauses import clause

from .effects import Context
from .mqsd_effects import (
    DOC,
    CloseSocket,
    Discard,
    OpenSocket,
    PacketDiscarded,
    SendReply,
    TerminateThread,
    Transport,
)


#: the server's MUSTs, quoted from the text: what ``check``, ``probe`` and ``discover`` cite when a
#: server breaks one (tests/oracle/test_must_citations.py finds each in its section)
RULES = {
    "send": ("3.2.5.1", "The protocol MUST send the TopologyServerReply packet to the sender of the "
                        "TopologyClientRequest packet."),
    "correlation": ("3.2.5.1", "The protocol MUST set the TopologyServerReply.CorrelationID field to the "
                               "TopologyClientRequest.RequestID field."),
    "same_site": ("3.2.5.1", "If Site.Identifier equals the TopologyClientRequest.SiteID field, the protocol MUST "
                             "set the TopologyServerReply.DirectoryServiceServerSize field to 0x00000000."),
    "other_site": ("3.2.5.1", "If Site.Identifier does not equal the TopologyClientRequest.SiteID field, the "
                              "protocol MUST set the TopologyServerReply.RespondingSiteID field to Site.Identifier"),
    "networks": ("3.2.5.1", "The protocol MUST copy all elements of LocalQueueManager.ConnectedNetworkIdentifierList "
                            "to the TopologyServerReply.ConnectedNetworkArray field"),
    "ip_mask": ("3.2.5.1", "If the TopologyClientRequest received is an IP packet, the protocol MUST set the "
                           "TopologyServerReply.ConnectedNetworkMask field to 0x00000000."),
    "ipx_mask": ("3.2.5.1", "If the TopologyClientRequest received is an IPX packet, the protocol MUST set an "
                            "individual bit of the TopologyServerReply.ConnectedNetworkMask field to 1 for every entry "
                            "that is placed in the TopologyServerReply.ConnectedNetworkArray field."),
    "partial_ipx": ("3.2.5.1", "the TopologyClientRequest packet's IPXNetworkCount and IPXNetworkNumberArray "
                               "fields are considered as not present and MUST be ignored."),
    "version": ("2.2.1", "MQSD servers MUST ignore this field."),
    "reserved": ("2.2.1", "It MUST be set to 0x0000 by MQSD clients and MUST be ignored by MQSD servers."),
}


def rule(name: str) -> str:
    """``MS-MQSD <section>: "<the MUST>"`` of one of :data:`RULES`."""
    section, text = RULES[name]
    return f'{DOC} {section}: "{text}"'


def _servers(_inst: object, _attr: attrs.Attribute, value: tuple) -> None:
    for s in value:
        if not isinstance(s, DirectoryServiceServer):
            raise ModelError(f"a DirectoryServerList entry is a DirectoryServiceServer, not {s!r}")


@clause(DOC, "3.2.1", "Abstract Data Model (server)")
@attrs.define(eq=False)
class MqsdServer:
    """The server's data: the shared elements of 3.2.1.1 ("3.2.1.2 Private Data Elements: None").

    ``directory_server_list`` holds each server's name with the IP and IPX flags the reply's
    DirectoryServiceServerArray carries (modelling E-212: a list of names, as 3.2.1.1 and the
    client's 3.1.7.1 describe it, cannot fill those two characters). ``listening`` and ``terminated`` are the state of
    the server thread of 3.2.5, not of the protocol.
    """

    enterprise_identifier: Guid  # Enterprise.Identifier
    site_identifier: Guid  # Site.Identifier
    directory_server_list: tuple[DirectoryServiceServer, ...] = attrs.field(
        default=(), converter=tuple, validator=_servers
    )  # QueueManager.DirectoryServerList
    connected_network_identifier_list: tuple[Guid, ...] = attrs.field(
        default=(), converter=tuple
    )  # QueueManager.ConnectedNetworkIdentifierList
    listening: bool = False
    terminated: bool = False


def _discard(ctx: Context, reason: Discard, detail: str, section: str, erratum: str | None = None) -> None:
    ctx.emit(PacketDiscarded(ctx.node, reason, detail, f"{DOC} {section}", erratum))


@clause(DOC, "3.2.3", "Initialization (server)")
def server_initialization(server: MqsdServer, ctx: Context) -> None:
    """Open the socket and listen.

    "The server starts to listen for client requests. Typically, a sockets programming select
    operation is used as the means for listening for the client requests." (3.2.3) A runner
    that cannot open the socket reports it with :func:`socket_open_failed`.
    """
    server.listening = True
    server.terminated = False
    ctx.emit(OpenSocket(ctx.node))


@clause(DOC, "3.2.5", "Processing Events and Sequencing Rules (server)")
def receive_datagram(server: MqsdServer, ctx: Context, data: bytes, sender: Any, transport: Transport = Transport.IP) -> None:
    """One datagram arrived on the listening socket: answer it if it is a TopologyClientRequest.

    "On receiving a TopologyClientRequest packet, the server sends a TopologyServerReply packet
    and then immediately returns to listening for another TopologyClientRequest packet." (3.2.5)
    Anything else is dropped and counted (clarification E-211).
    """
    if not server.listening:
        _discard(ctx, Discard.NOT_LISTENING, "the server thread has terminated", "3.2.5")
        return
    try:
        # lenient: "MQSD servers MUST ignore" Version and "MUST be ignored by MQSD servers"
        # (Reserved, 2.2.1), and a request too short for the IPX fields is read without them
        # (3.2.5.1, first step; clarification E-021)
        request = decode_client_request(data, lenient=True)
    except DecodeError as exc:
        # clarification E-211: the text says nothing about a packet that is not a request
        _discard(ctx, Discard.MALFORMED, str(exc), "3.2.5", "E-211")
        return
    receive_topology_client_request(server, ctx, request, sender, transport)


def send_failed(server: MqsdServer, ctx: Context, error: str) -> None:
    """A send raised a network error: close the socket and open it again (3.2.5).

    "In the event of a network error during a send operation, the server MUST close and reopen
    the socket and attempt to listen for incoming packets." (3.2.5) The reply is lost.
    """
    ctx.emit(CloseSocket(ctx.node))
    ctx.emit(OpenSocket(ctx.node))


def socket_open_failed(server: MqsdServer, ctx: Context, error: str) -> None:
    """Opening the socket failed: the server thread ends (3.2.5).

    "If the socket cannot be opened, the server thread MUST terminate." (3.2.5) mqspec applies
    the same rule when the first open of Initialization (3.2.3) fails.
    """
    server.listening = False
    server.terminated = True
    ctx.emit(TerminateThread(ctx.node, error))


@clause(DOC, "3.2.5.1", "Receiving a TopologyClientRequest")
def receive_topology_client_request(
    server: MqsdServer, ctx: Context, request: TopologyClientRequest, sender: Any, transport: Transport = Transport.IP,
) -> None:
    """Build the reply of 3.2.5.1 and send it to the request's sender.

    The first step ("If the length of the data packet received is less than the length of a
    TopologyClientRequest packet, including the IPXNetworkCount field and at least one
    IPXNetworkNumberArray field entry, ... MUST be ignored") is the lenient decode in
    :func:`receive_datagram`. "If Site.Identifier equals the TopologyClientRequest.SiteID field,
    the protocol MUST set the TopologyServerReply.DirectoryServiceServerSize field to 0x00000000.
    The protocol MUST NOT set the TopologyServerReply.RespondingSiteID field or the
    TopologyServerReply.DirectoryServiceServerArray field." (3.2.5.1)
    """
    if ctx.clarified and request.enterprise_id != server.enterprise_identifier:
        # clarification E-210: 3.2.5.1 never reads EnterpriseID; a server does not hand its
        # directory servers to a client of another enterprise
        ctx.clarify("E-210", f"EnterpriseID {request.enterprise_id} is not {server.enterprise_identifier}")
        _discard(ctx, Discard.OTHER_ENTERPRISE, f"request for enterprise {request.enterprise_id}", "3.2.5.1", "E-210")
        return
    # "MUST set the TopologyServerReply.CorrelationID field to the TopologyClientRequest.RequestID field"
    correlation = request.request_id
    # "MUST copy all elements of LocalQueueManager.ConnectedNetworkIdentifierList to the
    # TopologyServerReply.ConnectedNetworkArray field and MUST set ... ConnectedNetworkCount"
    networks = tuple(server.connected_network_identifier_list)
    if not 1 <= len(networks) <= MAX_NETWORKS:
        # erratum E-209 (and E-023): ConnectedNetworkCount "MUST be in the range 1 to 32"; no
        # conformant reply exists, in either reading
        _discard(ctx, Discard.NO_CONFORMANT_REPLY, f"{len(networks)} connected networks; a reply carries 1..32",
                 "3.2.5.1", "E-209")
        return
    if transport is Transport.IP:
        # "If the TopologyClientRequest received is an IP packet, the protocol MUST set the
        # TopologyServerReply.ConnectedNetworkMask field to 0x00000000."
        mask = 0
    else:
        # "MUST set an individual bit ... to 1 for every entry that is placed in the
        # TopologyServerReply.ConnectedNetworkArray": bit i for entry i (clarification E-207)
        mask = (1 << len(networks)) - 1
    if server.site_identifier == request.site_id:
        reply = TopologyServerReply(correlation, networks, mask)
    elif server.directory_server_list:
        # "MUST set the TopologyServerReply.RespondingSiteID field to Site.Identifier, MUST copy
        # all entries of LocalQueueManager.DirectoryServerList to the ... DirectoryServiceServerArray"
        reply = TopologyServerReply(correlation, networks, mask, server.site_identifier, server.directory_server_list)
    elif ctx.clarified:
        # erratum E-208: an empty DirectoryServerList gives DirectoryServiceServerSize 0, which
        # tells the client that the server is in its site; the clarified server stays silent
        ctx.clarify("E-208", "no directory server to list for a client of another site")
        _discard(ctx, Discard.NO_CONFORMANT_REPLY, "DirectoryServerList is empty and the client is in another site",
                 "3.2.5.1", "E-208")
        return
    else:
        # literal: size 0, and 2.2.3 forbids RespondingSiteID with size 0: a same-site reply
        reply = TopologyServerReply(correlation, networks, mask)
    # "The protocol MUST send the TopologyServerReply packet to the sender of the TopologyClientRequest packet."
    ctx.emit(SendReply(ctx.node, sender, reply, transport))
