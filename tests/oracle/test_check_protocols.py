"""`mqspec check` on MS-MQSD and MS-MQCN behaviour: declared servers and clients replayed, each
departure from the reference named by its clause; nothing checked, E-020 policy, streaming input."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from mqspec.model import mqcn, mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import DirectoryServiceServer, TopologyClientRequest, TopologyServerReply

from mqspec.cli.check import check as check_command
from mqspec.clauses import covers
from mqspec.oracle.check import check, check_text

ENTERPRISE = Guid.from_name("enterprise")
SITE = Guid.from_name("site-a")
OTHER_SITE = Guid.from_name("site-b")
NETWORK = Guid.from_name("network")
HEAD = {"trace": "t", "format": 2}
SERVER = {"role": "server", "enterprise": str(ENTERPRISE), "site": str(SITE),
          "connected_networks": [str(NETWORK)], "servers": ["DS1:ip", "DS2:ip+ipx"]}
CLIENT_ADDRESS = "127.0.0.1:50000"


def request(site: Guid = SITE, enterprise: Guid = ENTERPRISE, rid: str = "r1") -> TopologyClientRequest:
    return TopologyClientRequest(enterprise_id=enterprise, request_id=Guid.from_name(rid), site_id=site)


def reference_reply(req: TopologyClientRequest) -> TopologyServerReply:
    """What 3.2.5.1 answers for SERVER's configuration (over IP)."""
    if req.site_id == SITE:
        return TopologyServerReply(req.request_id, (NETWORK,), 0)
    return TopologyServerReply(req.request_id, (NETWORK,), 0, SITE,
                               (DirectoryServiceServer("DS1"), DirectoryServiceServer("DS2", ipx=True)))


def dump(records: list[dict]) -> str:
    return "".join(json.dumps({**HEAD, **r}) + "\n" for r in records)


def exchange(datagram: bytes, reply: bytes | None, *, to: str = CLIENT_ADDRESS, t: float = 1.0) -> list[dict]:
    out = [{"event": "datagram", "t": t, "node": "DS1", "direction": "receive", "body": datagram.hex(),
            "from": CLIENT_ADDRESS, "to": "127.0.0.1:1801", "transport": "ip"}]
    if reply is not None:
        out.append({"event": "datagram", "t": t, "node": "DS1", "direction": "send", "body": reply.hex(),
                    "from": "127.0.0.1:1801", "to": to, "transport": "ip"})
    return out


def server_trace(*exchanges: list[dict]) -> str:
    records = [{"event": "header", "t": 0, "nodes": [{"name": "DS1", "mqsd": SERVER}]}]
    for e in exchanges:
        records += e
    return dump(records)


def verdict(text: str):
    return check_text(text, coverage=False)[0]


def good_exchanges() -> list[list[dict]]:
    same, other = request(SITE, rid="a"), request(OTHER_SITE, rid="b")
    return [exchange(mqsd.encode(same), mqsd.encode(reference_reply(same))),
            exchange(mqsd.encode(other), mqsd.encode(reference_reply(other)), t=2.0),
            exchange(b"\x00garbage", None, t=3.0),
            exchange(mqsd.encode(reference_reply(same)), None, t=4.0)]


# --- MS-MQSD servers ----------------------------------------------------------------------------


def test_a_server_that_answers_as_the_reference_conforms():
    """Same-site and other-site replies, silence towards garbage and towards a reply: conformant, all checked."""
    report = verdict(server_trace(*good_exchanges()))
    assert report.verdict == "conformant", report.to_json()
    assert report.checked == 6 and report.nodes == {"DS1": "conformant (MS-MQSD)"}


@covers("MS-MQSD", "3.2.5")
@pytest.mark.parametrize("garbage", [b"\x00garbage", "reply"])
def test_a_reply_to_garbage_or_to_a_reply_breaks_3_2_5(garbage):
    """A server answering a malformed datagram or a TopologyServerReply diverges, naming 3.2.5 (E-211)."""
    same = request(rid="g")
    data = mqsd.encode(reference_reply(same)) if garbage == "reply" else garbage
    d = verdict(server_trace(exchange(data, mqsd.encode(reference_reply(same))))).divergence
    assert (d.kind, d.index, d.clause.section) == ("unexpected-output", 2, "3.2.5")


@covers("MS-MQSD", "3.2.5.1")
def test_a_wrong_correlation_id_breaks_3_2_5_1():
    """A reply whose CorrelationID is not the RequestID is a field diff naming 3.2.5.1."""
    same = request(rid="c")
    wrong = TopologyServerReply(Guid.from_name("other"), (NETWORK,), 0)
    d = verdict(server_trace(exchange(mqsd.encode(same), mqsd.encode(wrong)))).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.2.5.1", "correlation_id")


def test_a_server_list_in_a_same_site_reply_breaks_3_2_5_1():
    """A same-site reply carrying RespondingSiteID and a server list diverges, naming 3.2.5.1."""
    same = request(rid="s")
    listed = reference_reply(request(OTHER_SITE, rid="s"))
    d = verdict(server_trace(exchange(mqsd.encode(same), mqsd.encode(listed)))).divergence
    assert (d.kind, d.clause.section) == ("output-differs", "3.2.5.1")
    assert {x["field"] for x in d.diff} >= {"responding_site_id"}


def test_no_reply_at_all_breaks_3_2_5_1():
    """A request left unanswered before the next one is a missing reply naming 3.2.5.1."""
    same = request(rid="n")
    d = verdict(server_trace(exchange(mqsd.encode(same), None),
                             exchange(mqsd.encode(request(rid="n2")), mqsd.encode(reference_reply(request(rid="n2"))),
                                      t=2.0))).divergence
    assert (d.kind, d.index, d.clause.section) == ("missing-output", 2, "3.2.5.1")
    d = verdict(server_trace(exchange(mqsd.encode(same), None))).divergence  # at the end of the trace too
    assert (d.kind, d.clause.section) == ("missing-output", "3.2.5.1")


def test_a_reply_sent_to_the_wrong_host_breaks_3_2_5_1():
    """A right reply sent to another address than the request's sender diverges on (destination)."""
    same = request(rid="w")
    d = verdict(server_trace(exchange(mqsd.encode(same), mqsd.encode(reference_reply(same)),
                                      to="127.0.0.9:50000"))).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.2.5.1", "(destination)")


def test_a_reply_to_another_enterprise_diverges_with_the_clarification():
    """Answering a request of another enterprise diverges in clarified mode (E-210) and conforms as literal."""
    foreign = request(enterprise=Guid.from_name("elsewhere"), rid="e")
    text = server_trace(exchange(mqsd.encode(foreign), mqsd.encode(reference_reply(foreign))))
    d = verdict(text).divergence
    assert (d.kind, d.clause.section) == ("unexpected-output", "3.2.5.1")
    literal = text.replace('"event": "header", "t": 0,', '"event": "header", "t": 0, "mode": "literal",', 1)
    assert verdict(literal).verdict == "conformant"


@covers("MS-MQSD", "2.2.1")
def test_a_reply_version_1_is_policy_not_divergence():
    """A server reply with Version 1 conforms (2.2.1 binds clients only) and the report says policy: E-020."""
    same = request(rid="v")
    reply = b"\x01" + mqsd.encode(reference_reply(same))[1:]
    report = verdict(server_trace(exchange(mqsd.encode(same), reply)))
    assert report.verdict == "conformant"
    assert any("policy: E-020" in n for n in report.notes)
    # at codec level too (no mqsd declaration): a sent reply with Version 1 is a note, a request is not
    codec = dump([{"event": "header", "t": 0, "nodes": [{"name": "X"}]},
                  {"event": "datagram", "t": 1, "node": "X", "direction": "send", "body": reply.hex()}])
    report = verdict(codec)
    assert report.verdict == "conformant" and "policy: E-020" in report.notes[0]
    bad_request = b"\x01" + mqsd.encode(same)[1:]
    assert verdict(codec.replace(reply.hex(), bad_request.hex())).divergence.clause.section == "2.2.1"


# --- MS-MQSD clients -------------------------------------------------------------------------------


def client_trace(*requests: bytes) -> str:
    decl = {"role": "client", "enterprise": str(ENTERPRISE), "site": str(SITE)}
    records = [{"event": "header", "t": 0, "nodes": [{"name": "C1", "mqsd": decl}]}]
    records += [{"event": "datagram", "t": i, "node": "C1", "direction": "send", "body": r.hex()}
                for i, r in enumerate(requests)]
    return dump(records)


@covers("MS-MQSD", "3.1.5.1")
def test_a_client_request_must_carry_the_declared_enterprise_and_site():
    """A client's requests conform with its declared IDs; another SiteID diverges naming 3.1.5.1."""
    assert verdict(client_trace(mqsd.encode(request(rid="1")), mqsd.encode(request(rid="2")))).verdict == "conformant"
    d = verdict(client_trace(mqsd.encode(request(OTHER_SITE)))).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.1.5.1", "site_id")


# --- MS-MQCN -------------------------------------------------------------------------------------


def _v1_delete(queue: Guid) -> bytes:
    from mqspec.model.propids import PROPIDS
    from mqspec.model.propvalue import Property

    update = mqcn.NotificationUpdate(
        command=mqcn.Command.DELETE, guid_identifier=queue, guid_master_id=Guid.from_name("master"),
        properties=(Property(PROPIDS["PROPID_D_SCOPE"].propid, 1), Property(PROPIDS["PROPID_D_OBJTYPE"].propid, 1)))
    return mqcn.encode_body(mqcn.ChangeNotificationMessage(version=mqcn.Version.DIRECTORY_SERVICE, updates=(update,)))


def qm_trace(*events: dict, version: int | None = None) -> str:
    decl = {"side": "queue_manager", **({"version": version} if version else {})}
    return dump([{"event": "header", "t": 0, "nodes": [{"name": "QM1", "mqcn": decl}]}, *events])


def _received(body: bytes, signed: bool = True) -> dict:
    extra = {"sender_id_type": 2, "sender_id": str(Guid.from_name("ds")), "authentication": 1} if signed else {}
    return {"event": "notification", "t": 1, "node": "QM1", "direction": "receive", "body": body.hex(), **extra}


@covers("MS-MQCN", "3.2.5.1")
def test_a_queue_manager_side_deletes_what_a_signed_notification_names():
    """A signed v1 delete is followed by Delete Queue; an unsigned one is disregarded, and deleting anyway diverges."""
    queue = Guid.from_name("queue")
    delete = {"event": "queue", "t": 1, "node": "QM1", "operation": "delete", "identifier": str(queue)}
    assert verdict(qm_trace(_received(_v1_delete(queue)), delete)).verdict == "conformant"
    d = verdict(qm_trace(_received(_v1_delete(queue)))).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "3.2.5.1")
    d = verdict(qm_trace(_received(_v1_delete(queue), signed=False), delete)).divergence
    assert (d.kind, d.clause.section) == ("unexpected-output", "3.2.5.1")


@covers("MS-MQCN", "3.3.4.1")
def test_a_directory_side_sends_the_declared_version():
    """A directory side declared to send version 0x02 diverges on a version 0x01 message, naming 3.3.4.1."""
    decl = {"side": "directory", "version": 2}
    sent = {"event": "notification", "t": 1, "node": "D1", "direction": "send", "body": _v1_delete(Guid.NULL).hex()}
    text = dump([{"event": "header", "t": 0, "nodes": [{"name": "D1", "mqcn": decl}]}, sent])
    d = verdict(text).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.3.4.1", "version")
    assert verdict(text.replace('"version": 2', '"version": 1')).verdict == "conformant"


# --- nothing checked, --no-coverage, streaming input ---------------------------------------------


def test_a_header_only_trace_is_nothing_checked_and_exits_3(tmp_path):
    """A header alone (or events no level checks) is reported as nothing checked, exit 3, never conformant."""
    path = tmp_path / "h.ndjson"
    path.write_text(dump([{"event": "header", "t": 0, "nodes": [{"name": "A"}]},
                          {"event": "note", "t": 1, "text": "hello"}]))
    result = CliRunner().invoke(check_command, [str(path)])
    assert result.exit_code == 3 and "NOTHING CHECKED" in result.stdout and "conformant" not in result.stdout
    result = CliRunner().invoke(check_command, [str(path), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 3 and report["conformant"] is False
    assert report["traces"][0]["verdict"] == "nothing-checked" and report["traces"][0]["checked"] == 0


def test_no_coverage_prints_nothing_about_coverage(tmp_path):
    """With --no-coverage neither the text nor the JSON report mentions coverage or clauses exercised."""
    path = tmp_path / "s.ndjson"
    path.write_text(server_trace(*good_exchanges()))
    for extra in ([], ["--json"]):
        result = CliRunner().invoke(check_command, [str(path), "--no-coverage", *extra])
        assert result.exit_code == 0
        assert "coverage" not in result.stdout.replace(str(path), "") and "clauses" not in result.stdout
    assert "coverage: " in CliRunner().invoke(check_command, [str(path)]).stdout


def test_check_takes_a_path_or_lines_read_once():
    """The public entry point takes an iterable of lines (a generator, read once) as well as a path."""
    text = server_trace(*good_exchanges())
    report = check(line for line in text.splitlines())
    assert [t.verdict for t in report.traces] == ["conformant"] and report.exit_status == 0


def test_interleaved_traces_in_one_file_are_checked_each_on_its_own(tmp_path):
    """Two traces whose lines interleave in one file get one report each: the first (replayed while
    the file is validated) conforms, the second (replayed in a pass of its own) diverges."""
    good = [json.loads(x) for x in server_trace(*good_exchanges()).splitlines()]
    same = request(rid="i")
    wrong = TopologyServerReply(Guid.from_name("other"), (NETWORK,), 0)
    bad = [{**json.loads(x), "trace": "u"} for x in server_trace(exchange(mqsd.encode(same),
                                                                         mqsd.encode(wrong))).splitlines()]
    good[0]["observes"] = ["datagram"]
    lines = [good[0], bad[0], *[x for pair in zip(good[1:], bad[1:]) for x in pair], *good[1 + len(bad) - 1:]]
    path = tmp_path / "two.ndjson"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = check(path, coverage=True)
    assert [(t.trace_id, t.verdict) for t in report.traces] == [("t", "conformant"), ("u", "divergent")]
    assert report.traces[1].divergence.clause.section == "3.2.5.1" and report.traces[1].line == 6
    assert report.traces[0].coverage and report.traces[1].coverage and report.exit_status == 1
