"""MS-MQSD 3.1: the client handlers, one at a time and in whole runs under a simulated clock."""

from __future__ import annotations

import pytest
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
from mqspec.refimpl.clock import Scheduler
from mqspec.refimpl.effects import CancelTimer, Clarified, Context, Mode, StartTimer
from mqspec.refimpl.mqsd_client import (
    MqsdClient,
    client_initialization,
    get_directory_server_list,
    no_server_response,
    populate_connected_network_identifier_list,
    populate_directory_server_list,
    receive_topology_server_reply,
    send_topology_client_request,
)
from mqspec.refimpl.mqsd_effects import (
    WAIT_FOR_RESPONSE,
    BroadcastRequest,
    DirectoryServerListResult,
    Discard,
    NetworkAddress,
    PacketDiscarded,
    SendReply,
)
from mqspec.refimpl.mqsd_server import MqsdServer, receive_datagram

from mqspec.clauses import covers

ENTERPRISE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")  # the section 4 values
REQUEST = Guid.parse("f291a103-e33c-ab4f-a930-be3a33e432dd")
SITE = Guid.parse("dcc51bf6-d4ad-4543-8739-71568e8f9128")
OTHER_SITE = Guid.parse("e6eaba60-d1c6-11db-baac-0003ff4e2d22")
CN = Guid.parse("e6eaba62-d1c6-11db-baac-0003ff4e2d22")
CN2 = Guid.from_name("cn2")
NET1, NET2, NET3 = (NetworkAddress(f"net{i}") for i in (1, 2, 3))
RAS = NetworkAddress("dialup", ras=True)
NODE = "client"

START = StartTimer(NODE, WAIT_FOR_RESPONSE, 15.0)
STOP = CancelTimer(NODE, WAIT_FOR_RESPONSE)


def guids(*values: Guid):
    """A "create a new GUID" that hands out ``values`` in order."""
    it = iter(values)
    return lambda: next(it)


def ctx(mode: Mode = Mode.CLARIFIED, now: float = 0.0) -> Context:
    return Context(NODE, mode, now)


def local_reply(request_id: Guid = REQUEST, networks=(CN,)) -> TopologyServerReply:
    return TopologyServerReply(request_id, networks)


def remote_reply(request_id: Guid = REQUEST, names=("ds1",), networks=(CN2,)) -> TopologyServerReply:
    return TopologyServerReply(request_id, networks, 0, OTHER_SITE, tuple(DirectoryServiceServer(n) for n in names))


def broadcast(network: NetworkAddress, request_id: Guid = REQUEST) -> BroadcastRequest:
    return BroadcastRequest(NODE, network, TopologyClientRequest(ENTERPRISE, request_id, SITE))


def client_at(index: int, networks=(NET1, NET2, NET3), last: TopologyServerReply | None = None,
              received: bool = False, **kw) -> MqsdClient:
    """A client in the middle of a Get Directory Server List event, on network ``index`` (1-based)."""
    return MqsdClient(
        enterprise_identifier=ENTERPRISE, site_identifier=SITE, request_id=REQUEST,
        network_address_list=tuple(networks), number_of_network_addresses=len(networks),
        current_network_index=index, last_topology_server_reply=last, topology_server_reply_received=received, **kw,
    )


def result(success: bool, dsl=(), cnil=(), network=None) -> DirectoryServerListResult:
    return DirectoryServerListResult(NODE, success, tuple(dsl), tuple(cnil), network)


def without_notes(effects):
    return [e for e in effects if type(e) is not Clarified]


# --------------------------------------------------------------------------- a simulated network


class Sim:
    """One client and MQSD servers on named networks, run on a simulated clock.

    ``servers`` maps a network to ``(server, latency, lost)`` triples: the server answers after
    ``latency`` seconds unless ``lost``. Timers follow the text: every start arms an instance,
    every stop cancels all of them.
    """

    def __init__(self, servers, *, mode: Mode = Mode.CLARIFIED, client: MqsdClient | None = None) -> None:
        self.servers = servers
        self.mode = mode
        self.client = client or MqsdClient(enterprise_identifier=ENTERPRISE, site_identifier=SITE)
        self.clock = Scheduler()
        self.timers = []
        self.results: list[tuple[float, DirectoryServerListResult]] = []
        self.discarded: list[tuple[float, Discard]] = []
        self.sent: list[tuple[float, NetworkAddress]] = []

    def call(self, handler, *args) -> None:
        c = Context(NODE, self.mode, self.clock.now)
        handler(self.client, c, *args)
        for e in c.effects:
            if type(e) is BroadcastRequest:
                self.sent.append((self.clock.now, e.network))
                for server, latency, lost in self.servers.get(e.network, ()):
                    s = Context("server", self.mode, self.clock.now)
                    receive_datagram(server, s, e.data, NODE)
                    for reply in (r for r in s.effects if type(r) is SendReply):
                        if not lost:
                            self.clock.schedule_in(latency, ("reply", e.network, reply.data))
            elif type(e) is StartTimer:
                self.timers.append(self.clock.schedule_in(e.delay, ("timer",)))
            elif type(e) is CancelTimer:
                for handle in self.timers:
                    self.clock.cancel(handle)
                self.timers.clear()
            elif type(e) is DirectoryServerListResult:
                self.results.append((self.clock.now, e))
            elif type(e) is PacketDiscarded:
                self.discarded.append((self.clock.now, e.reason))

    def run(self, networks, new_guid=None, *, until: float = 600.0, max_events: int = 500) -> Sim:
        self.call(get_directory_server_list, networks, new_guid or guids(REQUEST))
        for _ in range(max_events):
            due = self.clock.pop_due(until)
            if due is None:
                break
            event = due[1]
            if event[0] == "timer":
                self.call(no_server_response)
            else:
                self.call(receive_topology_server_reply, event[2], event[1])
        return self


def local_server(site: Guid = SITE) -> MqsdServer:
    return MqsdServer(ENTERPRISE, site, (), (CN,), listening=True)


def remote_server(names=("ds1",), networks=(CN2,)) -> MqsdServer:
    return MqsdServer(ENTERPRISE, OTHER_SITE, tuple(DirectoryServiceServer(n) for n in names), networks, listening=True)


# --------------------------------------------------------------------------- 3.1.1, 3.1.3


@covers("MS-MQSD", "3.1.1")
def test_a_new_client_holds_the_initial_values_of_the_data_model():
    """Every 3.1.1.2 element starts empty, zero or FALSE, and the timer value is 15 seconds."""
    c = MqsdClient()
    assert (c.request_id, c.last_successful_network_address, c.valid_last_successful_network_address) == (None, None, False)
    assert (c.last_topology_server_reply, c.topology_server_reply_received) == (None, False)
    assert (c.network_address_list, c.number_of_network_addresses, c.current_network_index) == ((), 0, 0)
    assert (c.directory_server_list, c.connected_network_identifier_list, c.wait_for_response_timeout) == ((), (), 15.0)


@covers("MS-MQSD", "3.1.3")
def test_initialization_sets_the_enterprise_and_invalidates_the_last_network():
    """Enterprise.Identifier := the local EnterpriseID; ValidLastSuccessfulNetworkAddress := FALSE; nothing is sent."""
    c = MqsdClient(last_successful_network_address=NET1, valid_last_successful_network_address=True)
    k = ctx()
    client_initialization(c, k, ENTERPRISE)
    assert c.enterprise_identifier == ENTERPRISE and c.valid_last_successful_network_address is False
    assert k.effects == []


# --------------------------------------------------------------------------- 3.1.4.1


@covers("MS-MQSD", "3.1.4.1")
def test_get_directory_server_list_broadcasts_on_the_first_network():
    """The list and its count are stored, a new RequestID made, and the first request goes to the first network."""
    c = MqsdClient(enterprise_identifier=ENTERPRISE, site_identifier=SITE, topology_server_reply_received=True)
    k = ctx()
    get_directory_server_list(c, k, [NET1, NET2], guids(REQUEST))
    assert k.effects == [START, broadcast(NET1)]
    assert (c.network_address_list, c.number_of_network_addresses) == ((NET1, NET2), 2)
    assert (c.request_id, c.current_network_index, c.topology_server_reply_received) == (REQUEST, 1, False)


@covers("MS-MQSD", "3.1.4.1")
def test_the_request_is_the_section_4_request():
    """EnterpriseID, RequestID and SiteID of the broadcast request are the section 4 packet, byte for byte."""
    c = MqsdClient(enterprise_identifier=ENTERPRISE, site_identifier=SITE)
    k = ctx()
    get_directory_server_list(c, k, [NET1], guids(REQUEST))
    assert k.effects[-1].data == CLIENT_REQUEST


@covers("MS-MQSD", "3.1.4.1")
def test_a_valid_last_network_without_ras_completes_at_once():
    """With ValidLastSuccessfulNetworkAddress TRUE and no RAS address the event completes without sending."""
    c = MqsdClient(last_successful_network_address=NET1, valid_last_successful_network_address=True,
                   directory_server_list=("ds1",), connected_network_identifier_list=(CN,))
    for mode in Mode:
        k = ctx(mode)
        get_directory_server_list(c, k, [NET1, NET2], guids(REQUEST))
        assert k.effects == [result(True, ["ds1"], [CN], NET1)]
        assert c.current_network_index == 0


@covers("MS-MQSD", "3.1.4.1")
def test_a_ras_address_forces_a_new_discovery():
    """When one of the addresses is a Remote Access Service address, the last network does not short-cut the event."""
    c = MqsdClient(last_successful_network_address=NET1, valid_last_successful_network_address=True)
    k = ctx()
    get_directory_server_list(c, k, [NET1, RAS], guids(REQUEST))
    assert [type(e) for e in k.effects] == [StartTimer, BroadcastRequest]
    assert c.request_id == REQUEST


@covers("MS-MQSD", "3.1.4.1")
def test_e206_a_last_network_that_is_gone_does_not_short_cut_in_clarified_mode():
    """Clarified mode looks again when LastSuccessfulNetworkAddress is not connected any more; literal mode completes."""
    literal, clarified = (MqsdClient(last_successful_network_address=NET3, valid_last_successful_network_address=True)
                          for _ in range(2))
    k = ctx(Mode.LITERAL)
    get_directory_server_list(literal, k, [NET1], guids(REQUEST))
    assert [type(e) for e in k.effects] == [DirectoryServerListResult] and k.effects[0].success
    k = ctx()
    get_directory_server_list(clarified, k, [NET1], guids(REQUEST))
    assert [type(e) for e in without_notes(k.effects)] == [StartTimer, BroadcastRequest]
    assert [e.erratum for e in k.effects if type(e) is Clarified] == ["E-206"]


@covers("MS-MQSD", "3.1.4.1")
def test_e201_with_no_network_the_clarified_client_fails_at_once():
    """No network address: clarified mode returns failure at once; no request, no timer."""
    c = MqsdClient()
    k = ctx()
    get_directory_server_list(c, k, [], guids(REQUEST))
    assert without_notes(k.effects) == [result(False)]


@covers("MS-MQSD", "3.1.4.1")
def test_e201_with_no_network_the_literal_client_never_completes():
    """Literal mode: CurrentNetworkIndex passes NumberOfNetworkAddresses (0) and never equals it; the timer loops for ever."""
    sim = Sim({}, mode=Mode.LITERAL).run([], until=15.0 * 50, max_events=60)
    assert sim.results == [] and sim.sent == []
    assert sim.client.current_network_index == 51  # one more "new request" per 15 s, to no network
    assert sim.clock.pending() == [(765.0, ("timer",))]  # and the next timer is armed


# --------------------------------------------------------------------------- 3.1.5.1


@covers("MS-MQSD", "3.1.5.1")
def test_sending_moves_to_the_next_network_and_empties_the_last_reply():
    """CurrentNetworkIndex += 1, LastTopologyServerReply := empty, the 15 s timer starts, the request goes out."""
    c = client_at(1, last=remote_reply())
    k = ctx()
    send_topology_client_request(c, k)
    assert k.effects == [START, broadcast(NET2)]
    assert (c.current_network_index, c.last_topology_server_reply) == (2, None)


@covers("MS-MQSD", "3.1.5.1")
def test_e200_network_positions_count_from_one():
    """Index 0 after 3.1.4.1, 1 for the first broadcast (the first entry), N for the last entry."""
    c = client_at(0)
    sent = []
    for _ in range(3):
        k = ctx()
        send_topology_client_request(c, k)
        sent += [e.network for e in k.effects if type(e) is BroadcastRequest]
    assert sent == [NET1, NET2, NET3] and c.current_network_index == c.number_of_network_addresses


@covers("MS-MQSD", "3.1.5.1")
def test_the_timer_value_is_the_clients():
    """A client configured with a shorter Wait For Response Timer (a runner's choice) arms that value."""
    c = client_at(0, wait_for_response_timeout=0.25)
    k = ctx()
    send_topology_client_request(c, k)
    assert k.effects[0] == StartTimer(NODE, WAIT_FOR_RESPONSE, 0.25)


# --------------------------------------------------------------------------- 3.1.5.2: the discards


@covers("MS-MQSD", "3.1.5.2")
def test_a_reply_on_another_network_is_discarded():
    """A reply received on a network other than the current one is discarded; nothing changes."""
    c = client_at(2)
    k = ctx()
    receive_topology_server_reply(c, k, encode(local_reply()), NET1)
    assert [(type(e), e.reason) for e in k.effects] == [(PacketDiscarded, Discard.WRONG_NETWORK)]
    assert (c.current_network_index, c.topology_server_reply_received, c.valid_last_successful_network_address) == (2, False, False)


BAD_REPLIES = {
    "empty": b"",
    "truncated": REPLY_LOCAL_SITE[:-1],
    "trailing byte": REPLY_LOCAL_SITE + b"\x00",
    "a request": CLIENT_REQUEST,
    "unknown type": b"\x00\x07\x00\x00" + REPLY_LOCAL_SITE[4:],
    "count 0": REPLY_LOCAL_SITE[:20] + b"\x00\x00\x00\x00" + REPLY_LOCAL_SITE[24:],
    "mask popcount": REPLY_LOCAL_SITE[:24] + b"\x03\x00\x00\x00" + REPLY_LOCAL_SITE[28:],
    "size too large": REPLY_OTHER_SITE[:28] + b"\x14\x00\x00\x00" + REPLY_OTHER_SITE[32:],
    "no EndList": REPLY_OTHER_SITE[:-2] + b"x\x00",
}


@covers("MS-MQSD", "3.1.5.2")
@pytest.mark.parametrize("name", sorted(BAD_REPLIES))
def test_a_malformed_reply_is_discarded(name):
    """An improperly formatted reply is discarded with the decoder's reason; the state does not change."""
    c = client_at(1, networks=(NET1,))
    k = ctx()
    receive_topology_server_reply(c, k, BAD_REPLIES[name], NET1)
    assert [(type(e), e.reason) for e in k.effects] == [(PacketDiscarded, Discard.MALFORMED)]
    assert c.last_topology_server_reply is None and c.valid_last_successful_network_address is False


@covers("MS-MQSD", "3.1.5.2")
def test_a_reply_header_version_and_reserved_are_ignored():
    """A reply whose header Version and Reserved are not zero is still a reply (clarification E-020)."""
    c = client_at(1, networks=(NET1,))
    k = ctx()
    receive_topology_server_reply(c, k, b"\x05\x02\x34\x12" + REPLY_LOCAL_SITE[4:], NET1)
    assert k.effects[-1] == result(True, (), [CN], NET1)


@covers("MS-MQSD", "3.1.5.2")
def test_a_reply_for_another_request_is_discarded():
    """A CorrelationID that is not RequestID is discarded: no timer change, no completion."""
    c = client_at(1, networks=(NET1,))
    k = ctx()
    receive_topology_server_reply(c, k, encode(local_reply(Guid.from_name("other"))), NET1)
    assert [(type(e), e.reason) for e in k.effects] == [(PacketDiscarded, Discard.WRONG_CORRELATION)]


# --------------------------------------------------------------------------- 3.1.5.2: the five cases


@covers("MS-MQSD", "3.1.5.2")
def test_a_local_site_reply_before_the_last_network_moves_on():
    """(A) copy, TopologyServerReplyReceived, LastSuccessfulNetworkAddress, stop the timer, send on the next network."""
    c = client_at(1)
    k = ctx(Mode.LITERAL)
    receive_topology_server_reply(c, k, encode(local_reply()), NET1)
    assert k.effects == [STOP, START, broadcast(NET2)]
    assert c.topology_server_reply_received and c.valid_last_successful_network_address
    assert c.last_successful_network_address == NET1
    # 3.1.5.1 empties LastTopologyServerReply right after (A) copied the reply into it
    assert (c.current_network_index, c.last_topology_server_reply) == (2, None)


@covers("MS-MQSD", "3.1.5.2")
def test_a_second_remote_reply_before_the_last_network_moves_on():
    """(B) with a remote reply kept, another remote reply sends the next request and changes nothing else."""
    for mode, expected in ((Mode.LITERAL, [START, broadcast(NET2)]), (Mode.CLARIFIED, [STOP, START, broadcast(NET2)])):
        c = client_at(1, last=remote_reply(), received=True)
        k = ctx(mode)
        receive_topology_server_reply(c, k, encode(remote_reply(names=("ds2",))), NET1)
        assert without_notes(k.effects) == expected
        assert c.current_network_index == 2 and c.last_successful_network_address is None


@covers("MS-MQSD", "3.1.5.2")
def test_e205_literal_leftover_timer_cuts_the_next_network_short():
    """Literal mode: case (B) does not stop the timer (D) restarted; it expires during network 2's wait and loses its reply."""
    servers = {
        NET1: [(remote_server(("ds1",)), 1.0, False), (remote_server(("ds2",)), 5.0, False)],
        NET2: [(local_server(), 12.0, False)],
    }
    literal = Sim(servers, mode=Mode.LITERAL).run([NET1, NET2, NET3])
    clarified = Sim(servers).run([NET1, NET2, NET3])
    # literal: network 2 is given up at 16 s (the instance armed at 1 s), its reply at 17 s is on the wrong network
    assert [(t, n) for t, n in literal.sent] == [(0.0, NET1), (5.0, NET2), (16.0, NET3)]
    assert (17.0, Discard.WRONG_NETWORK) in literal.discarded
    # clarified: network 2's own 15 s wait holds, its local-site reply arrives at 17 s
    assert [(t, n) for t, n in clarified.sent] == [(0.0, NET1), (5.0, NET2), (17.0, NET3)]
    assert clarified.client.last_successful_network_address == NET2


@covers("MS-MQSD", "3.1.5.2")
def test_a_local_site_reply_at_the_last_network_completes():
    """(C) stop the timer, remember the network, populate from the remote reply kept on this network, complete."""
    c = client_at(3, last=remote_reply(names=("ds1", "ds2")), received=True)
    k = ctx(Mode.LITERAL)
    receive_topology_server_reply(c, k, encode(local_reply()), NET3)
    assert k.effects == [STOP, result(True, ["ds1", "ds2"], [CN2], NET3)]


@covers("MS-MQSD", "3.1.5.2")
def test_e203_a_local_site_reply_at_the_last_network_gives_its_connected_networks():
    """(C) with nothing kept: literal mode populates from an empty reply (no networks); clarified mode from this reply."""
    literal, clarified = client_at(1, networks=(NET1,)), client_at(1, networks=(NET1,))
    k = ctx(Mode.LITERAL)
    receive_topology_server_reply(literal, k, REPLY_LOCAL_SITE, NET1)
    assert k.effects == [STOP, result(True, (), (), NET1)]
    k = ctx()
    receive_topology_server_reply(clarified, k, REPLY_LOCAL_SITE, NET1)
    assert without_notes(k.effects) == [STOP, result(True, (), [CN], NET1)]


@covers("MS-MQSD", "3.1.5.2")
@pytest.mark.parametrize("index", [1, 3])
def test_the_first_remote_reply_is_kept_and_the_timer_restarted(index):
    """(D) before or at the last network: copy, TopologyServerReplyReceived, the network, stop and start the timer."""
    c = client_at(index)
    k = ctx()
    reply = remote_reply()
    receive_topology_server_reply(c, k, encode(reply), (NET1, NET2, NET3)[index - 1])
    assert k.effects == [STOP, START]
    assert (c.last_topology_server_reply, c.topology_server_reply_received, c.current_network_index) == (reply, True, index)
    assert c.valid_last_successful_network_address


@covers("MS-MQSD", "3.1.5.2")
def test_a_second_remote_reply_at_the_last_network_completes_with_the_first():
    """(E) stop the timer, populate from LastTopologyServerReply (the first remote reply), remember the network, complete."""
    c = client_at(3, last=remote_reply(names=("first",)), received=True)
    k = ctx()
    receive_topology_server_reply(c, k, encode(remote_reply(names=("second",))), NET3)
    assert k.effects == [STOP, result(True, ["first"], [CN2], NET3)]
    assert c.directory_server_list == ("first",)


# --------------------------------------------------------------------------- 3.1.6.1


@covers("MS-MQSD", "3.1.6.1")
def test_no_response_before_the_last_network_tries_the_next():
    """The timer expired on network 1 of 3: a new request goes to network 2."""
    c = client_at(1)
    k = ctx()
    no_server_response(c, k)
    assert k.effects == [START, broadcast(NET2)]


@covers("MS-MQSD", "3.1.6.1")
def test_no_response_anywhere_fails_and_invalidates_the_last_network():
    """At the last network with no reply ever: ValidLastSuccessfulNetworkAddress := FALSE and a failure result."""
    c = client_at(3, valid_last_successful_network_address=True, last_successful_network_address=NET1)
    k = ctx()
    no_server_response(c, k)
    assert k.effects == [result(False)]
    assert c.valid_last_successful_network_address is False


@covers("MS-MQSD", "3.1.6.1")
def test_no_response_after_a_remote_reply_completes_with_it():
    """At the last network with a remote reply kept: populate both lists from it and complete successfully."""
    c = client_at(3, last=remote_reply(names=("ds1",)), received=True,
                  valid_last_successful_network_address=True, last_successful_network_address=NET3)
    k = ctx()
    no_server_response(c, k)
    assert k.effects == [result(True, ["ds1"], [CN2], NET3)]


@covers("MS-MQSD", "3.1.6.1")
def test_e204_a_reply_from_an_earlier_network_is_not_lost():
    """Remote reply on network 1, silence on network 2: literal mode succeeds with empty lists, clarified mode uses the reply."""
    servers = {NET1: [(remote_server(("ds1",)), 0.5, False)]}
    literal = Sim(servers, mode=Mode.LITERAL).run([NET1, NET2])
    clarified = Sim(servers).run([NET1, NET2])
    assert [r for _, r in literal.results] == [result(True, (), (), NET1)]
    assert [r for _, r in clarified.results] == [result(True, ["ds1"], [CN2], NET1)]
    assert [t for t, _ in clarified.results] == [30.5]  # (D) waited 15 s on network 1, then 15 s on network 2


# --------------------------------------------------------------------------- 3.1.7


@covers("MS-MQSD", "3.1.7.1")
def test_populate_directory_server_list_strips_the_two_protocol_characters():
    """Each item loses its IP and IPX characters; the old list is replaced, not extended."""
    servers = (DirectoryServiceServer("a", True, False), DirectoryServiceServer("bb", False, True),
               DirectoryServiceServer("c c", True, True))
    c = MqsdClient(directory_server_list=("old",),
                   last_topology_server_reply=TopologyServerReply(REQUEST, (CN,), 0, OTHER_SITE, servers))
    populate_directory_server_list(c, ctx())
    assert c.directory_server_list == ("a", "bb", "c c")


@covers("MS-MQSD", "3.1.7.1")
def test_populate_directory_server_list_reads_the_section_4_array():
    """The section 4 array "10nt4pec" 0x0000 gives the one name nt4pec."""
    c = MqsdClient(last_topology_server_reply=decode(REPLY_OTHER_SITE))
    populate_directory_server_list(c, ctx())
    assert c.directory_server_list == ("nt4pec",)


@covers("MS-MQSD", "3.1.7.2")
def test_populate_connected_network_identifier_list_replaces_the_list():
    """ConnectedNetworkIdentifierList becomes exactly the ConnectedNetworkArray of LastTopologyServerReply."""
    c = MqsdClient(connected_network_identifier_list=(CN,), last_topology_server_reply=remote_reply(networks=(CN2, CN)))
    populate_connected_network_identifier_list(c, ctx())
    assert c.connected_network_identifier_list == (CN2, CN)


# --------------------------------------------------------------------------- whole runs


@covers("MS-MQSD", "3.1.5.2")
def test_the_section_4_exchange_completes_on_the_local_site_reply():
    """The local-site reply completes the event at once; the remote reply after it is discarded (clarified)."""
    servers = {NET1: [(local_server(), 0.1, False), (remote_server(("nt4pec",), (CN,)), 0.2, False)]}
    sim = Sim(servers).run([NET1])
    assert sim.results == [(0.1, result(True, (), [CN], NET1))]
    assert sim.discarded == [(0.2, Discard.WRONG_CORRELATION)]


@covers("MS-MQSD", "3.1.5.2")
def test_e202_literal_late_reply_reopens_the_finished_event():
    """Literal mode: the section 4 remote reply after completion goes through case (D) and completes the event again."""
    servers = {NET1: [(local_server(), 0.1, False), (remote_server(("nt4pec",), (CN,)), 0.2, False)]}
    sim = Sim(servers, mode=Mode.LITERAL).run([NET1])
    assert sim.results == [(0.1, result(True, (), (), NET1)), (15.2, result(True, ["nt4pec"], [CN], NET1))]
    assert sim.client.directory_server_list == ("nt4pec",)


@covers("MS-MQSD", "3.1.6.1")
def test_lost_replies_on_every_network_fail_after_one_timer_per_network():
    """Servers whose replies are lost: one request per network, 15 s each, then failure."""
    servers = {n: [(local_server(), 0.1, True)] for n in (NET1, NET2, NET3)}
    sim = Sim(servers).run([NET1, NET2, NET3])
    assert [n for _, n in sim.sent] == [NET1, NET2, NET3]
    assert sim.results == [(45.0, result(False))]


@covers("MS-MQSD", "3.1.5.2")
def test_a_local_site_reply_on_the_first_network_still_probes_the_others():
    """(A) on network 1 moves on; silence on network 2 ends at the timer with success via TopologyServerReplyReceived."""
    sim = Sim({NET1: [(local_server(), 0.1, False)]}).run([NET1, NET2])
    assert [(t, n) for t, n in sim.sent] == [(0.0, NET1), (0.1, NET2)]
    # clarified E-204: the local-site reply's connected networks survive the move to network 2
    assert sim.results == [(15.1, result(True, (), [CN], NET1))]
