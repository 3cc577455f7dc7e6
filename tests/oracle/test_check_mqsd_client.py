"""`mqspec check` on an MS-MQSD client replayed through the reference state machine of 3.1: its
requests, the Wait For Response Timer on the trace clock, what it does with each reply."""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable

from mqspec.model import mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import DirectoryServiceServer, TopologyClientRequest, TopologyServerReply

from mqspec.clauses import covers
from mqspec.oracle.check import check_text
from mqspec.refimpl import mqsd_client
from mqspec.refimpl.effects import CancelTimer, Context, Mode, StartTimer
from mqspec.refimpl.mqsd_effects import (
    WAIT_FOR_RESPONSE,
    BroadcastRequest,
    DirectoryServerListResult,
    NetworkAddress,
    TimerInstances,
)

HEAD = {"trace": "t", "format": 2}
ENTERPRISE = Guid.from_name("enterprise")
SITE = Guid.from_name("site-a")
REMOTE = Guid.from_name("site-b")
NETWORK = Guid.from_name("network")
CLIENT = {"role": "client", "enterprise": str(ENTERPRISE), "site": str(SITE)}

#: answer(request, network) -> [(delay, reply bytes)]: what the servers on a network send back
Answer = Callable[[TopologyClientRequest, str], list[tuple[float, bytes]]]


def same_site(request: TopologyClientRequest, network: str) -> list[tuple[float, bytes]]:
    """A server of the client's site on every network (3.2.5.1: no server list)."""
    return [(0.1, mqsd.encode(TopologyServerReply(request.request_id, (NETWORK,), 0)))]


def remote_site(request: TopologyClientRequest, network: str) -> list[tuple[float, bytes]]:
    """A server of another site: it lists its site's directory servers."""
    return [(0.1, mqsd.encode(TopologyServerReply(request.request_id, (NETWORK,), 0, REMOTE,
                                                  (DirectoryServiceServer("DS9"),))))]


def only_on(name: str, answer: Answer) -> Answer:
    return lambda request, network: answer(request, network) if network == name else []


def reference_run(networks: list[str], answer: Answer, *, ras: tuple[str, ...] = (), rid: str = "rid",
                  t0: float = 0.0, client: mqsd_client.MqsdClient | None = None) -> list[dict]:
    """The events the reference client logs for one Get Directory Server List against ``answer``."""
    client = client or _client()
    timer = TimerInstances(WAIT_FOR_RESPONSE)
    records = [{"event": "discover", "t": t0, "node": "C1", "networks": networks, **({"ras": list(ras)} if ras else {})}]
    replies: list[tuple[float, int, bytes, str]] = []
    done = False

    def run(handler: Callable[..., None], t: float, *args: object) -> None:
        nonlocal done
        ctx = Context("C1", Mode.CLARIFIED, t)
        handler(client, ctx, *args)
        for e in ctx.effects:
            if type(e) is StartTimer or type(e) is CancelTimer:
                timer.apply(e, t)
            elif type(e) is BroadcastRequest:
                records.append({"event": "datagram", "t": t, "node": "C1", "direction": "send",
                                "body": e.data.hex(), "network": e.network.name})
                for delay, body in answer(e.request, e.network.name):
                    heapq.heappush(replies, (t + delay, len(records), body, e.network.name))
            elif type(e) is DirectoryServerListResult:
                done = True
                records.append({"event": "discovered", "t": t, "node": "C1",
                                "result": "success" if e.success else "failure",
                                "servers": list(e.directory_server_list),
                                "connected_networks": [str(g) for g in e.connected_network_identifier_list],
                                **({"network": e.network.name} if e.network is not None else {})})

    nets = [NetworkAddress(n, ras=n in ras) for n in networks]
    run(mqsd_client.get_directory_server_list, t0, nets, lambda: Guid.from_name(rid))
    while not done:
        due = timer.next_due()
        if replies and (due is None or replies[0][0] < due):
            t, _, body, network = heapq.heappop(replies)
            records.append({"event": "datagram", "t": t, "node": "C1", "direction": "receive", "body": body.hex(),
                            "network": network})
            run(mqsd_client.receive_topology_server_reply, t, body, next(n for n in nets if n.name == network))
        elif due is not None:
            timer.pop_due(due)
            run(mqsd_client.no_server_response, due)
        else:
            break
    return records


def _client() -> mqsd_client.MqsdClient:
    client = mqsd_client.MqsdClient(site_identifier=SITE)
    mqsd_client.client_initialization(client, Context("C1", Mode.CLARIFIED, 0.0), ENTERPRISE)
    return client


def trace(*events: dict, observes: tuple[str, ...] = ("discover", "discovered", "datagram")) -> str:
    node = {"name": "C1", "mqsd": CLIENT, "observes": list(observes)}
    lines = [{"event": "header", "t": 0, "nodes": [node]}, *events]
    return "".join(json.dumps({**HEAD, **r}) + "\n" for r in lines)


def report(*events: dict):
    return check_text(trace(*events))[0]


def _sent(events: list[dict]) -> list[int]:
    return [i for i, e in enumerate(events) if e["event"] == "datagram" and e["direction"] == "send"]


@covers("MS-MQSD", "3.1.5.2")
def test_a_client_that_behaves_as_the_reference_conforms():
    """Reference runs (one network, a silent first network, a remote site then the local one) are conformant."""
    runs = [reference_run(["net1"], same_site),
            reference_run(["net1", "net2"], only_on("net2", same_site)),
            reference_run(["net1", "net2"], lambda r, n: remote_site(r, n) if n == "net1" else same_site(r, n)),
            reference_run(["net1"], lambda r, n: []),
            reference_run(["net1", "net2"], remote_site)]
    for events in runs:
        r = report(*events)
        assert (r.verdict, r.divergence) == ("conformant", None), events
        assert r.checked == len(events)
    assert [e["t"] for e in runs[1] if e["event"] == "datagram" and e["direction"] == "send"] == [0.0, 15.0]


@covers("MS-MQSD", "3.1.6.1")
def test_a_retry_before_the_wait_for_response_timer_expires_breaks_3_1_6_1():
    """Sending the next network's request 5 s after the first (the timer is 15 s) names 3.1.6.1."""
    events = reference_run(["net1", "net2"], only_on("net2", same_site))
    second = _sent(events)[1]
    early = [{**e, "t": e["t"] - 10.0} if i >= second else e for i, e in enumerate(events)]
    d = report(*early).divergence
    assert (d.kind, d.clause.section, d.index) == ("unexpected-output", "3.1.6.1", second + 1)


@covers("MS-MQSD", "3.1.6.1")
def test_a_client_that_does_not_retry_on_the_next_network_breaks_3_1_6_1():
    """A client that lets the timer expire without the next network's request (it then only hears a late reply) names 3.1.6.1."""
    events = reference_run(["net1", "net2"], only_on("net2", same_site))
    first = _sent(events)[0]
    late = {"event": "datagram", "t": 20.0, "node": "C1", "direction": "receive", "network": "net1",
            "body": same_site(mqsd.decode(bytes.fromhex(events[first]["body"])), "net1")[0][1].hex()}
    d = report(*events[:first + 1], late).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "3.1.6.1")


@covers("MS-MQSD", "3.1.6.1")
def test_a_client_silent_until_the_trace_ends_past_its_timer_breaks_3_1_6_1():
    """A client that never retries is caught from the trace clock alone: the trace's last event (another
    node's, here a note at t=20) is past the 15 s timer and its slack, so the retry 3.1.6.1 owes is missing;
    a trace that ends within the slack (t=15.5) owes nothing yet."""
    events = reference_run(["net1", "net2"], only_on("net2", same_site))
    first = _sent(events)[0]
    late = {"event": "note", "t": 20.0, "text": "the capture goes on without C1"}
    d = report(*events[:first + 1], late).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "3.1.6.1")
    early = report(*events[:first + 1], {**late, "t": 15.5})
    assert (early.verdict, early.divergence) == ("conformant", None)


@covers("MS-MQSD", "3.1.5.2")
def test_a_client_that_accepts_a_reply_with_another_correlation_id_breaks_3_1_5_2():
    """Completing on a reply whose CorrelationID is not the RequestID (which MUST be discarded) names 3.1.5.2."""
    events = reference_run(["net1"], same_site)
    reply = next(i for i, e in enumerate(events) if e["event"] == "datagram" and e["direction"] == "receive")
    wrong = TopologyServerReply(Guid.from_name("someone else"), (NETWORK,), 0)
    bad = [*events[:reply], {**events[reply], "body": mqsd.encode(wrong).hex()}, *events[reply + 1:]]
    d = report(*bad).divergence
    assert (d.kind, d.clause.section, d.index) == ("unexpected-output", "3.1.5.2", reply + 2)


@covers("MS-MQSD", "3.1.5.2")
def test_a_client_that_ignores_its_reply_breaks_3_1_5_2():
    """Not completing on a matching local-site reply (and failing after the timer instead) names 3.1.5.2."""
    events = reference_run(["net1"], same_site)
    done = events[-1]
    failed = [*events[:-1], {**done, "t": 15.0, "result": "failure", "connected_networks": []}]
    d = report(*failed).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "3.1.5.2")


@covers("MS-MQSD", "3.1.4.1")
def test_a_discovery_that_reuses_the_last_request_id_breaks_3_1_4_1():
    """A second Get Directory Server List (over a RAS network) must create a new RequestID (3.1.4.1)."""
    client = _client()
    first = reference_run(["net1"], same_site, ras=("net1",), rid="one", client=client)
    second = reference_run(["net1"], same_site, ras=("net1",), rid="two", t0=30.0, client=client)
    assert report(*first, *second).verdict == "conformant"
    reused = reference_run(["net1"], same_site, ras=("net1",), rid="one", t0=30.0, client=_client())
    d = report(*first, *reused).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.1.4.1", "request_id")


@covers("MS-MQSD", "3.1.5.1")
def test_a_request_that_changes_its_request_id_mid_discovery_breaks_3_1_5_1():
    """The next network's request carries the same RequestID (3.1.5.1); another one diverges on request_id."""
    events = reference_run(["net1", "net2"], only_on("net2", same_site))
    second = _sent(events)[1]
    other = TopologyClientRequest(enterprise_id=ENTERPRISE, request_id=Guid.from_name("other"), site_id=SITE)
    bad = [*events[:second], {**events[second], "body": mqsd.encode(other).hex()}]
    d = report(*bad).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.1.5.1", "request_id")


@covers("MS-MQSD", "3.1.7.1")
def test_a_completion_with_another_server_list_breaks_3_1_7_1():
    """Completing with a DirectoryServerList other than the remote reply's names 3.1.7.1."""
    events = reference_run(["net1"], remote_site)
    assert events[-1]["servers"] == ["DS9"]
    d = report(*events[:-1], {**events[-1], "servers": ["DS1"]}).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.1.7.1", "servers")
    d = report(*events[:-1], {**events[-1], "network": "net9"}).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.1.6.1", "network")  # completed by the timer (case D)


def test_a_client_without_discover_events_is_checked_on_its_requests_only():
    """A client that does not log discover is checked at request level: its declared EnterpriseID and SiteID."""
    events = [e for e in reference_run(["net1", "net2"], only_on("net2", same_site)) if e["event"] == "datagram"]
    assert check_text(trace(*events, observes=("datagram",)))[0].verdict == "conformant"


# --- a trace of the reference client over real UDP sockets (mqspec mqsd discover --trace) ----------


def test_a_discover_trace_over_real_sockets_conforms_and_an_early_retry_does_not(tmp_path):
    """`mqspec mqsd discover --trace` against a silent network and a local-site server writes a trace that
    `mqspec check` finds conformant; the same trace with the retry moved 0.4 s early names 3.1.6.1."""
    import socket

    from click.testing import CliRunner

    from mqspec.cli import main
    from mqspec.mqsd_net import UdpResponder
    from mqspec.refimpl.mqsd_server import MqsdServer

    path = tmp_path / "discover.ndjson"
    responder = UdpResponder(MqsdServer(ENTERPRISE, SITE, (), (NETWORK,)), "127.0.0.1", 0).start()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
            silent.bind(("127.0.0.1", 0))
            done = CliRunner().invoke(main, [
                "mqsd", "discover", "--to", f"127.0.0.1:{silent.getsockname()[1]}", "--to",
                f"127.0.0.1:{responder.address[1]}", "--enterprise", str(ENTERPRISE), "--site", str(SITE),
                "--timeout", "0.5", "--trace", str(path)])
    finally:
        responder.shutdown()
    assert done.exit_code == 0, done.output
    text = path.read_text()
    r = check_text(text)[0]
    assert (r.verdict, r.divergence) == ("conformant", None)
    events = [json.loads(x) for x in text.splitlines()]
    assert [e["event"] for e in events] == ["header", "discover", "datagram", "datagram", "datagram", "discovered"]
    retry = 3
    early = [{**e, "t": max(e["t"] - 0.4, events[2]["t"])} if i >= retry else e for i, e in enumerate(events)]
    d = check_text("".join(json.dumps(e) + "\n" for e in early))[0].divergence
    assert (d.kind, d.clause.section, d.index) == ("unexpected-output", "3.1.6.1", retry)


@covers("MS-MQSD", "3.1.5.2")
def test_a_client_that_takes_a_reply_from_another_network_breaks_3_1_5_2():
    """Completing on a reply that came in on an earlier network (which MUST be discarded) names 3.1.5.2."""
    events = reference_run(["net1", "net2"], only_on("net2", same_site))
    reply = next(i for i, e in enumerate(events) if e["event"] == "datagram" and e["direction"] == "receive")
    d = report(*events[:reply], {**events[reply], "network": "net1"}, *events[reply + 1:]).divergence
    assert (d.kind, d.clause.section, d.index) == ("unexpected-output", "3.1.5.2", reply + 2)
    assert "received on net1" in d.summary


@covers("MS-MQSD", "3.1.5.2")
def test_a_client_that_completes_on_a_first_remote_reply_breaks_3_1_5_2():
    """A first reply from another site restarts the timer to wait for the local site: completing at once names 3.1.5.2."""
    events = reference_run(["net1"], remote_site)
    reply = next(i for i, e in enumerate(events) if e["event"] == "datagram" and e["direction"] == "receive")
    assert events[-1]["t"] > events[reply]["t"] + 14  # the reference waits out the restarted timer
    d = report(*events[:reply + 1], {**events[-1], "t": events[reply]["t"]}).divergence
    assert (d.kind, d.clause.section) == ("unexpected-output", "3.1.5.2")
    assert "restarts the Wait For Response Timer" in d.summary


def test_every_reference_run_over_up_to_three_networks_conforms():
    """For each network silent, local-site, other-site or both (every mix over 1-3 networks), the reference's run conforms."""
    import itertools

    behaviours = {"silent": lambda r, n: [], "local": same_site, "remote": remote_site,
                  "both": lambda r, n: [*remote_site(r, n), (0.2, same_site(r, n)[0][1])]}
    runs = 0
    for k in (1, 2, 3):
        for mix in itertools.product(behaviours, repeat=k):
            nets = [f"net{i}" for i in range(k)]
            answer = dict(zip(nets, (behaviours[b] for b in mix)))
            events = reference_run(nets, lambda r, n, a=answer: a[n](r, n))
            r = report(*events)
            assert (r.verdict, r.divergence) == ("conformant", None), (mix, r.divergence)
            runs += 1
    assert runs == 4 + 16 + 64
