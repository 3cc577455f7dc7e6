"""Handler situations for MS-MQSD: the discovery server (3.2) and client (3.1), one branch each.

Each builder returns the server or client state and the event's arguments; its docstring names
the branch. Addresses are opaque names (``"10.0.0.5:2101"``): the handlers only compare them.
"""

from __future__ import annotations

from mqspec.model import mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import DirectoryServiceServer, TopologyClientRequest, TopologyServerReply
from mqspec.refimpl.mqsd_client import MqsdClient
from mqspec.refimpl.mqsd_effects import NetworkAddress, Transport
from mqspec.refimpl.mqsd_server import MqsdServer

from .handlers import mqsd_situation as situation

ENTERPRISE, SITE, OTHER_SITE = (Guid.from_name(f"mqsd:{n}") for n in ("enterprise", "site", "other-site"))
NETWORKS = tuple(Guid.from_name(f"mqsd:network{i}") for i in range(2))
SERVERS = (DirectoryServiceServer("ds1", True, False), DirectoryServiceServer("ds2", True, True))
REQUEST_ID = Guid.from_name("mqsd:request")
SENDER = "10.0.0.5:2101"
NET_A, NET_B = NetworkAddress("10.0.0.255"), NetworkAddress("192.168.1.255")


def _server(*, servers=SERVERS, networks=NETWORKS, listening=True) -> MqsdServer:
    return MqsdServer(ENTERPRISE, SITE, servers, networks, listening=listening)


def _request(site=OTHER_SITE, enterprise=ENTERPRISE, ipx=()) -> TopologyClientRequest:
    return TopologyClientRequest(enterprise, REQUEST_ID, site, ipx)


def _datagram(data: bytes, transport=Transport.IP) -> dict:
    return {"data": data, "sender": SENDER, "transport": transport}


# --- the server (3.2) ----------------------------------------------------------------------------


@situation("server_initialization", "opens-the-socket")
def _init():
    """Initialization opens the socket and listens."""
    return _server(listening=False), {}


@situation("receive_datagram", "same-site-request")
def _same_site():
    """A request from the server's own site is answered without a server list, mask 0 over IP (3.2.5.1)."""
    return _server(), _datagram(mqsd.encode(_request(site=SITE)))


@situation("receive_datagram", "other-site-request")
def _other_site():
    """A request from another site is answered with RespondingSiteID and the DirectoryServerList."""
    return _server(), _datagram(mqsd.encode(_request()))


@situation("receive_datagram", "ipx-request")
def _ipx():
    """A request over IPX sets one mask bit per connected network (E-207)."""
    return _server(), _datagram(mqsd.encode(_request(ipx=(0x12345678,))), Transport.IPX)


@situation("receive_datagram", "other-enterprise")
def _other_enterprise():
    """A request of another enterprise: literally answered (3.2.5.1 never reads EnterpriseID), clarified dropped (E-210)."""
    return _server(), _datagram(mqsd.encode(_request(enterprise=Guid.from_name("mqsd:elsewhere"))))


@situation("receive_datagram", "truncated")
def _truncated():
    """A datagram shorter than a request is dropped, no reply (E-211)."""
    return _server(), _datagram(mqsd.encode(_request())[:30])


@situation("receive_datagram", "a-reply-not-a-request")
def _a_reply():
    """A TopologyServerReply sent to the server is not a request: dropped, no reply (E-211)."""
    return _server(), _datagram(mqsd.encode(TopologyServerReply(REQUEST_ID, NETWORKS)))


@situation("receive_datagram", "repeated-request-id")
def _repeated():
    """A request whose RequestID the server answered before is answered again: the server keeps no record of
    RequestIDs (3.2.1.2: no private data) and a client's retry keeps its RequestID (3.1.6.1)."""
    # the state is the server's after it answered other-site-request's request (the same RequestID): the
    # server has no data element an answered RequestID could be kept in, so the state is unchanged and
    # the reply is owed again; an implementation that remembers RequestIDs must run this case with that
    # request answered first (mqspec mqsd probe's repeated-request-id case does it over UDP)
    return _server(), _datagram(mqsd.encode(_request()))


@situation("receive_datagram", "version-ignored")
def _version():
    """A request whose header Version is not zero is still answered: "MQSD servers MUST ignore this field" (2.2.1)."""
    data = bytearray(mqsd.encode(_request()))
    data[0] = 7
    return _server(), _datagram(bytes(data))


@situation("receive_datagram", "not-listening")
def _not_listening():
    """A server whose thread has terminated answers nothing."""
    return _server(listening=False), _datagram(mqsd.encode(_request()))


@situation("receive_topology_client_request", "empty-server-list-other-site")
def _empty_list():
    """Another site's client and no DirectoryServerList: literally a size-0 reply, clarified silence (E-208)."""
    return _server(servers=()), {"request": _request(), "sender": SENDER, "transport": Transport.IP}


@situation("receive_topology_client_request", "no-connected-network")
def _no_networks():
    """No connected network: no reply can have ConnectedNetworkCount in 1..32, none is sent (E-209)."""
    return _server(networks=()), {"request": _request(site=SITE), "sender": SENDER, "transport": Transport.IP}


@situation("send_failed", "reopens-the-socket")
def _send_failed():
    """A send error closes and reopens the socket (3.2.5)."""
    return _server(), {"error": "ENETUNREACH"}


@situation("socket_open_failed", "terminates")
def _open_failed():
    """A socket that cannot be opened ends the server thread (3.2.5)."""
    return _server(), {"error": "EADDRINUSE"}


# --- the client (3.1) ----------------------------------------------------------------------------


def _client(**changes) -> MqsdClient:
    c = MqsdClient(ENTERPRISE, SITE)
    for name, value in changes.items():
        setattr(c, name, value)
    return c


def _waiting(index: int = 1, **changes) -> MqsdClient:
    """A client that broadcast request REQUEST_ID on network ``index`` of two."""
    return _client(request_id=REQUEST_ID, network_address_list=(NET_A, NET_B), number_of_network_addresses=2,
                   current_network_index=index, **changes)


def _reply(*, local: bool, correlation=REQUEST_ID) -> bytes:
    if local:
        return mqsd.encode(TopologyServerReply(correlation, NETWORKS))
    return mqsd.encode(TopologyServerReply(correlation, NETWORKS, 0, OTHER_SITE, SERVERS))


@situation("client_initialization", "sets-the-enterprise")
def _client_init():
    """Initialization sets Enterprise.Identifier and forgets the last successful network."""
    return _client(valid_last_successful_network_address=True), {"enterprise_id": ENTERPRISE}


@situation("get_directory_server_list", "two-networks")
def _get_list():
    """A new discovery: a new RequestID, the network list, and a request on the first network."""
    return _client(), {"network_addresses": (NET_A, NET_B), "new_guid": REQUEST_ID}


@situation("get_directory_server_list", "no-network")
def _get_list_none():
    """With no connected network the discovery fails at once (clarified) or broadcasts nowhere (literal)."""
    return _client(), {"network_addresses": (), "new_guid": REQUEST_ID}


@situation("send_topology_client_request", "next-network")
def _send_next():
    """The request goes out on the next network and the Wait For Response Timer starts."""
    return _waiting(1), {}


@situation("receive_topology_server_reply", "wrong-network")
def _wrong_network():
    """A reply on a network other than the current one is discarded."""
    return _waiting(1), {"data": _reply(local=True), "received_on": NET_B}


@situation("receive_topology_server_reply", "wrong-correlation")
def _wrong_correlation():
    """A reply whose CorrelationID is not the RequestID is discarded."""
    return _waiting(1), {"data": _reply(local=True, correlation=Guid.from_name("mqsd:old")), "received_on": NET_A}


@situation("receive_topology_server_reply", "malformed")
def _malformed():
    """An improperly formatted reply is discarded."""
    return _waiting(1), {"data": _reply(local=True)[:20], "received_on": NET_A}


@situation("receive_topology_server_reply", "local-site-not-last-network")
def _case_a():
    """(A) A local-site reply on a network that is not the last: remember it and try the next network."""
    return _waiting(1), {"data": _reply(local=True), "received_on": NET_A}


@situation("receive_topology_server_reply", "first-remote-reply")
def _case_d():
    """(D) The first remote-site reply on a network: keep it and wait 15 s more for a local one."""
    return _waiting(1), {"data": _reply(local=False), "received_on": NET_A}


@situation("receive_topology_server_reply", "second-remote-reply-not-last")
def _case_b():
    """(B) A second remote-site reply on a network that is not the last: go on to the next network."""
    first = TopologyServerReply(REQUEST_ID, NETWORKS, 0, OTHER_SITE, SERVERS)
    return _waiting(1, last_topology_server_reply=first), {"data": _reply(local=False), "received_on": NET_A}


@situation("receive_topology_server_reply", "local-site-last-network")
def _case_c():
    """(C) A local-site reply on the last network completes the discovery (the reply kept: E-203)."""
    return _waiting(2), {"data": _reply(local=True), "received_on": NET_B}


@situation("receive_topology_server_reply", "second-remote-reply-last")
def _case_e():
    """(E) A second remote-site reply on the last network completes the discovery with the kept server list."""
    first = TopologyServerReply(REQUEST_ID, NETWORKS, 0, OTHER_SITE, SERVERS)
    return _waiting(2, last_topology_server_reply=first), {"data": _reply(local=False), "received_on": NET_B}


@situation("no_server_response", "not-the-last-network")
def _timeout_next():
    """No reply within 15 s on a network that is not the last: try the next one."""
    return _waiting(1), {}


@situation("no_server_response", "last-network-nothing-kept")
def _timeout_fail():
    """No reply on the last network and none kept: the discovery fails."""
    return _waiting(2), {}


@situation("no_server_response", "last-network-remote-reply-kept")
def _timeout_kept():
    """No more replies on the last network, a remote-site reply kept: the discovery succeeds with it."""
    kept = TopologyServerReply(REQUEST_ID, NETWORKS, 0, OTHER_SITE, SERVERS)
    return _waiting(2, last_topology_server_reply=kept, topology_server_reply_received=True), {}


@situation("populate_directory_server_list", "names-of-the-reply")
def _populate_servers():
    """The DirectoryServerList becomes the names of the kept reply's DirectoryServiceServerArray."""
    kept = TopologyServerReply(REQUEST_ID, NETWORKS, 0, OTHER_SITE, SERVERS)
    return _waiting(2, last_topology_server_reply=kept), {}


@situation("populate_connected_network_identifier_list", "networks-of-the-reply")
def _populate_networks():
    """The ConnectedNetworkIdentifierList becomes the kept reply's ConnectedNetworkArray."""
    kept = TopologyServerReply(REQUEST_ID, NETWORKS)
    return _waiting(2, last_topology_server_reply=kept), {}
