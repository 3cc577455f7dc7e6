"""[MS-MQSD] 3.1: the MQSD client (a queue manager looking for MSMQ Directory Service servers).

Covered: the abstract data model (3.1.1), Initialization (3.1.3), Get Directory Server List
(3.1.4.1) with its RAS-address check, Sending a TopologyClientRequest (3.1.5.1), Receiving a
TopologyServerReply (3.1.5.2) with its three discard rules and its five cases, No Server Response
(3.1.6.1) and the two Populate events (3.1.7.1, 3.1.7.2). One function per event, branches in the
order of the text. Handlers perform no I/O: they change the :class:`MqsdClient` they are given
and append effects (:mod:`mqspec.refimpl.mqsd_effects`) to the context.

Get Directory Server List "MUST return after the protocol obtains a valid list": here the event
is a continuation. It sends the first request and returns; replies and timer expiries drive it
on, and its completion is the :class:`~mqspec.refimpl.mqsd_effects.DirectoryServerListResult`
effect. Where mqspec departs from the literal text (ids E-200 .. E-229) the code says
``# clarification E-2NN`` and the literal reading stays reachable with ``Mode.LITERAL``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import attrs
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqsd import (
    TopologyClientRequest,
    TopologyServerReply,
    decode_server_reply,
    encode_server_array,
)

from mqspec.clauses import clause

from .effects import Context
from .mqsd_effects import (
    DOC,
    WAIT_FOR_RESPONSE,
    WAIT_FOR_RESPONSE_TIMEOUT,
    BroadcastRequest,
    DirectoryServerListResult,
    Discard,
    NetworkAddress,
    PacketDiscarded,
)


@clause(DOC, "3.1.1", "Abstract Data Model (client)")
@attrs.define(eq=False)
class MqsdClient:
    """The client's data: the shared elements of 3.1.1.1 and the private ones of 3.1.1.2.

    ``last_topology_server_reply`` is None when the text calls LastTopologyServerReply "empty".
    ``request_id`` is None before the first request. ``wait_for_response_timeout`` is the
    Wait For Response Timer's value (15 s, 3.1.2.1; a runner may shorten it).
    ``earlier_network_reply`` is mqspec's, used by the clarified reading only (E-204): the last
    reply that Sending a TopologyClientRequest (3.1.5.1) emptied out of LastTopologyServerReply.
    """

    # 3.1.1.1 shared data elements
    enterprise_identifier: Guid = Guid.NULL  # Enterprise.Identifier
    site_identifier: Guid = Guid.NULL  # Site.Identifier (<13>: configuration; E-213)
    directory_server_list: tuple[str, ...] = ()  # QueueManager.DirectoryServerList
    connected_network_identifier_list: tuple[Guid, ...] = ()  # QueueManager.ConnectedNetworkIdentifierList
    # 3.1.1.2 private data elements
    request_id: Guid | None = None
    last_successful_network_address: NetworkAddress | None = None
    valid_last_successful_network_address: bool = False
    last_topology_server_reply: TopologyServerReply | None = None
    topology_server_reply_received: bool = False
    network_address_list: tuple[NetworkAddress, ...] = ()
    number_of_network_addresses: int = 0
    current_network_index: int = 0
    # mqspec's
    wait_for_response_timeout: float = WAIT_FOR_RESPONSE_TIMEOUT
    earlier_network_reply: TopologyServerReply | None = None

    def current_network(self) -> NetworkAddress | None:
        """NetworkAddressList "at the position corresponding to the CurrentNetworkIndex".

        Positions count from 1 (clarification E-200): 3.1.4.1 sets the index to zero and 3.1.5.1
        increments it before every broadcast, and 3.1.5.2 / 3.1.6.1 take "CurrentNetworkIndex
        equals NumberOfNetworkAddresses" to mean the last network. None when there is no such
        position (no request sent yet, or the literal reading of E-201).
        """
        if 1 <= self.current_network_index <= self.number_of_network_addresses:
            return self.network_address_list[self.current_network_index - 1]
        return None


def _discard(ctx: Context, reason: Discard, detail: str) -> None:
    ctx.emit(PacketDiscarded(ctx.node, reason, detail, f"{DOC} 3.1.5.2"))


@clause(DOC, "3.1.3", "Initialization (client)")
def client_initialization(client: MqsdClient, ctx: Context, enterprise_id: Guid) -> None:
    """Set Enterprise.Identifier and forget any last successful network.

    "The protocol MUST set Enterprise.Identifier to the local EnterpriseID. The protocol MUST set
    the ValidLastSuccessfulNetworkAddress ADM element to FALSE." (3.1.3) The other elements keep
    the initial values :class:`MqsdClient` gives them (modelling E-213).
    """
    client.enterprise_identifier = enterprise_id
    client.valid_last_successful_network_address = False


@clause(DOC, "3.1.4.1", "Get Directory Server List")
def get_directory_server_list(
    client: MqsdClient, ctx: Context, network_addresses: Sequence[NetworkAddress], new_guid: Callable[[], Guid],
) -> None:
    """Start a discovery on every connected network, unless the last one still holds.

    "The event MUST return after the protocol obtains a valid list of directory servers. If the
    protocol is unable to obtain a valid list of directory servers, the protocol MUST return a
    result that indicates a failure." (3.1.4.1) ``new_guid`` is "create a new GUID".
    """
    # "MUST add all network addresses to which the computer is connected to the NetworkAddressList
    # ... and MUST set the NumberOfNetworkAddresses ADM element to the number of network addresses"
    client.network_address_list = tuple(network_addresses)
    client.number_of_network_addresses = len(client.network_address_list)
    # "If the ValidLastSuccessfulNetworkAddress ADM element equals TRUE and none of the network
    # addresses ... is a Remote Access Service address, the protocol MUST complete the processing"
    if client.valid_last_successful_network_address and not any(a.ras for a in client.network_address_list):
        if ctx.clarified and client.last_successful_network_address not in client.network_address_list:
            # clarification E-206: the last successful network is no longer connected; look again
            ctx.clarify("E-206", f"{client.last_successful_network_address} is not in the NetworkAddressList")
        else:
            # the lists obtained before are still valid: success (E-206)
            complete_get_directory_server_list(client, ctx, success=True)
            return
    if ctx.clarified and client.number_of_network_addresses == 0:
        # clarification E-201: with no network there is nowhere to broadcast and, read literally,
        # CurrentNetworkIndex never equals NumberOfNetworkAddresses again: fail at once
        ctx.clarify("E-201", "no network address to broadcast on")
        client.valid_last_successful_network_address = False
        complete_get_directory_server_list(client, ctx, success=False)
        return
    client.request_id = new_guid()  # "MUST create a new GUID and assign it to the RequestID"
    client.current_network_index = 0
    client.topology_server_reply_received = False
    if ctx.clarified:  # clarification E-204
        client.earlier_network_reply = None  # E-204: replies of an earlier event do not count
    send_topology_client_request(client, ctx)


@clause(DOC, "3.1.5.1", "Sending a TopologyClientRequest")
def send_topology_client_request(client: MqsdClient, ctx: Context) -> None:
    """Move to the next network, arm the timer and broadcast the request there.

    "The protocol MUST increment the CurrentNetworkIndex ADM element by 1. The protocol MUST set
    the LastTopologyServerReply ADM element to empty. The protocol MUST start the Wait For
    Response Timer ... with a timeout of 15 seconds." (3.1.5.1)
    """
    client.current_network_index += 1
    if ctx.clarified and client.last_topology_server_reply is not None:
        # clarification E-204: keep the reply this step empties, so that a completion with an
        # empty LastTopologyServerReply still has the reply an earlier network gave
        client.earlier_network_reply = client.last_topology_server_reply
    client.last_topology_server_reply = None
    ctx.start_timer(WAIT_FOR_RESPONSE, client.wait_for_response_timeout)
    request = TopologyClientRequest(
        enterprise_id=client.enterprise_identifier,
        request_id=client.request_id if client.request_id is not None else Guid.NULL,
        site_id=client.site_identifier,
    )
    network = client.current_network()
    if network is not None:  # None only in the literal reading of E-201 (no network at all)
        ctx.emit(BroadcastRequest(ctx.node, network, request))


@clause(DOC, "3.1.5.2", "Receiving a TopologyServerReply")
def receive_topology_server_reply(client: MqsdClient, ctx: Context, data: bytes, received_on: NetworkAddress) -> None:
    """Discard what does not answer the current request; otherwise one of five cases.

    "If the packet is received on a network with an address other than the address specified in
    the NetworkAddressList ADM element at the position corresponding to the CurrentNetworkIndex
    ..., If an improperly formatted TopologyServerReply packet is received ..., If
    TopologyServerReply.CorrelationID ... does not match the RequestID ADM element, the protocol
    MUST discard the received packet and perform no further processing for it." (3.1.5.2)
    """
    if received_on != client.current_network():
        _discard(ctx, Discard.WRONG_NETWORK, f"received on {received_on}, expected {client.current_network()}")
        return
    try:
        # a receiver ignores the header's Version and Reserved (clarification E-020)
        reply = decode_server_reply(data, lenient=True)
    except DecodeError as exc:
        _discard(ctx, Discard.MALFORMED, str(exc))
        return
    if reply.correlation_id != client.request_id:
        # after completion the clarified reading has no RequestID: late replies end here (E-202)
        _discard(ctx, Discard.WRONG_CORRELATION, f"CorrelationID {reply.correlation_id} is not RequestID {client.request_id}")
        return
    at_last_network = client.current_network_index == client.number_of_network_addresses
    local_site = reply.directory_service_server_size == 0  # "sent by a server belonging to the local site"
    last_empty = client.last_topology_server_reply is None

    # (A) a local-site reply on a network that is not the last
    if not at_last_network and local_site:
        client.last_topology_server_reply = reply
        client.topology_server_reply_received = True
        _remember_network(client, received_on)
        ctx.cancel_timer(WAIT_FOR_RESPONSE)
        send_topology_client_request(client, ctx)
        return  # "MUST stop performing any further processing"

    # (B) a second remote-site reply on a network that is not the last
    if not at_last_network and not last_empty and not local_site:
        if ctx.clarified:
            # clarification E-205: there is one Wait For Response Timer; the instance that case (D)
            # restarted would otherwise expire during the next network's wait and skip a network
            ctx.clarify("E-205", "stop the Wait For Response Timer before the next request")
            ctx.cancel_timer(WAIT_FOR_RESPONSE)
        send_topology_client_request(client, ctx)
        return

    # (C) a local-site reply on the last network
    if at_last_network and local_site:
        ctx.cancel_timer(WAIT_FOR_RESPONSE)
        _remember_network(client, received_on)
        if ctx.clarified and last_empty:
            # clarification E-203: the text never copies this reply into LastTopologyServerReply,
            # so Populate ConnectedNetworkIdentifierList would read an empty reply
            ctx.clarify("E-203", "the local-site reply becomes LastTopologyServerReply")
            client.last_topology_server_reply = reply
        _populate_and_complete(client, ctx)
        return

    # (D) the first remote-site reply on this network
    if last_empty and not local_site:
        client.last_topology_server_reply = reply
        client.topology_server_reply_received = True
        _remember_network(client, received_on)
        # "MUST stop and start the Wait For Response Timer ... with a timeout of 15 seconds":
        # wait on this network for a reply from the local site
        ctx.cancel_timer(WAIT_FOR_RESPONSE)
        ctx.start_timer(WAIT_FOR_RESPONSE, client.wait_for_response_timeout)
        return

    # (E) a second remote-site reply on the last network
    ctx.cancel_timer(WAIT_FOR_RESPONSE)
    _populate(client, ctx)
    _remember_network(client, received_on)
    complete_get_directory_server_list(client, ctx, success=True)


def _remember_network(client: MqsdClient, network: NetworkAddress) -> None:
    """"set the LastSuccessfulNetworkAddress ... and ... ValidLastSuccessfulNetworkAddress ... to TRUE"."""
    client.last_successful_network_address = network
    client.valid_last_successful_network_address = True


def _populate(client: MqsdClient, ctx: Context) -> None:
    """"If LastTopologyServerReply.DirectoryServiceServerSize is not zero ... Populate
    DirectoryServerList ... trigger the Populate ConnectedNetworkIdentifierList event"."""
    last = client.last_topology_server_reply
    if last is not None and last.directory_service_server_size != 0:
        populate_directory_server_list(client, ctx)
    populate_connected_network_identifier_list(client, ctx)


def _populate_and_complete(client: MqsdClient, ctx: Context) -> None:
    _populate(client, ctx)
    complete_get_directory_server_list(client, ctx, success=True)


@clause(DOC, "3.1.6.1", "No Server Response")
def no_server_response(client: MqsdClient, ctx: Context) -> None:
    """The Wait For Response Timer expired: try the next network, or finish with what was received.

    "If the CurrentNetworkIndex ADM element does not equal the NumberOfNetworkAddresses ADM
    element, the client MUST send a new TopologyClientRequest ... If ... equals ..., the
    LastTopologyServerReply ADM element is empty, and the TopologyServerReplyReceived ADM element
    equals FALSE, the protocol MUST set the ValidLastSuccessfulNetworkAddress ADM element to FALSE
    and complete ... by returning a code that indicates failure." (3.1.6.1)
    """
    if client.current_network_index != client.number_of_network_addresses:
        send_topology_client_request(client, ctx)
        return
    if client.last_topology_server_reply is None and not client.topology_server_reply_received:
        client.valid_last_successful_network_address = False
        complete_get_directory_server_list(client, ctx, success=False)
        return
    # "either the LastTopologyServerReply ADM element is not empty or the
    # TopologyServerReplyReceived ADM element equals TRUE"
    if ctx.clarified and client.last_topology_server_reply is None and client.earlier_network_reply is not None:
        # clarification E-204: the reply that made TopologyServerReplyReceived TRUE came on an
        # earlier network and 3.1.5.1 emptied it; populate from it rather than from nothing
        ctx.clarify("E-204", "populate from the reply received on an earlier network")
        client.last_topology_server_reply = client.earlier_network_reply
    _populate_and_complete(client, ctx)


#: 3.1.7.1: "the comma (value 0x002C) or null-value (0x0000)-separated list"
_ITEM_SEPARATORS = re.compile("[,\x00]")


@clause(DOC, "3.1.7.1", "Populate DirectoryServerList")
def populate_directory_server_list(client: MqsdClient, ctx: Context) -> None:
    """Replace DirectoryServerList with the names in LastTopologyServerReply's server array.

    "The protocol MUST initialize LocalQueueManager.DirectoryServerList as empty. The protocol
    MUST read each list item of the comma (value 0x002C) or null-value (0x0000)-separated list
    ... For each item found, the protocol MUST remove the first two Unicode characters. The
    remainder of the item ... MUST be appended" (3.1.7.1).
    """
    client.directory_server_list = ()
    last = client.last_topology_server_reply
    if last is None or not last.servers:
        return
    # read the array as the text says, from its characters (the codec already checked the ABNF)
    text = encode_server_array(last.servers).decode("utf-16-le", "surrogatepass")
    items = _ITEM_SEPARATORS.split(text)
    # the "item" after EndList is empty: the ABNF has one 0x0000, at the end (E-026)
    client.directory_server_list = tuple(item[2:] for item in items[:-1])


@clause(DOC, "3.1.7.2", "Populate ConnectedNetworkIdentifierList")
def populate_connected_network_identifier_list(client: MqsdClient, ctx: Context) -> None:
    """Replace ConnectedNetworkIdentifierList with LastTopologyServerReply.ConnectedNetworkArray.

    "The protocol MUST initialize LocalQueueManager.ConnectedNetworkIdentifierList as empty. The
    protocol MUST add all elements of the LastTopologyServerReply.ConnectedNetworkArray" (3.1.7.2).
    An empty LastTopologyServerReply has no elements (errata E-203, E-204).
    """
    client.connected_network_identifier_list = ()
    last = client.last_topology_server_reply
    if last is not None:
        client.connected_network_identifier_list = tuple(last.connected_networks)


def complete_get_directory_server_list(client: MqsdClient, ctx: Context, *, success: bool) -> None:
    """Complete the Get Directory Server List event (3.1.4.1) with its result."""
    network = client.last_successful_network_address if client.valid_last_successful_network_address else None
    ctx.emit(DirectoryServerListResult(
        ctx.node, success, client.directory_server_list, client.connected_network_identifier_list, network,
    ))
    if ctx.clarified:
        # clarification E-202: the event is over; without a RequestID a late reply fails the
        # correlation check instead of reopening the event through case (D)
        client.request_id = None
