"""`mqspec check` on MS-MQSD servers, issue 24: what a divergence cites (the MUST, or the register entry
it rests on), the Version rule of 2.2.1, a server-list size in characters, a reply to another port, and
`--all` (every divergence, bounded, with a count)."""

from __future__ import annotations

import json

import attrs
from click.testing import CliRunner
from mqspec.model import mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import TopologyServerReply

from mqspec.cli.check import check as check_command
from mqspec.clauses import covers

from .test_check_protocols import (
    NETWORK,
    OTHER_SITE,
    exchange,
    reference_reply,
    request,
    server_trace,
    verdict,
)


def test_a_reply_to_another_enterprise_rests_on_e210_not_on_a_must():
    """No step of 3.2.5.1 reads EnterpriseID: the divergence names 3.2.5.1 and rests on clarification E-210,
    in the report's JSON (id and kind) and in the text output (row 5)."""
    foreign = request(enterprise=Guid.from_name("elsewhere"), rid="e")
    report = verdict(server_trace(exchange(mqsd.encode(foreign), mqsd.encode(reference_reply(foreign)))))
    d = report.divergence
    assert d.clause.section == "3.2.5.1" and d.rests_on == ("E-210",) and d.rule == ""
    entry = report.to_json()["divergence"]["rests_on"][0]
    assert (entry["id"], entry["kind"]) == ("E-210", "clarification")


def test_a_reply_to_garbage_rests_on_the_e211_policy(tmp_path):
    """A reply to a malformed datagram breaks no MUST: the divergence rests on policy E-211 (row 6's rule)."""
    same = request(rid="g")
    path = tmp_path / "t.ndjson"
    path.write_text(server_trace(exchange(b"\x00garbage", mqsd.encode(reference_reply(same)))))
    result = CliRunner().invoke(check_command, [str(path), "--no-coverage"])
    assert result.exit_code == 1 and "rests on: E-211 (policy)" in result.stdout, result.stdout


@covers("MS-MQSD", "2.2.1")
def test_a_server_refusing_a_version_1_request_breaks_2_2_1():
    """A request whose Version is 1 left unanswered names 2.2.1 and quotes "MQSD servers MUST ignore this field"
    (row 13), not 3.2.5.1's send rule."""
    same = request(rid="v")
    data = b"\x01" + mqsd.encode(same)[1:]
    d = verdict(server_trace(exchange(data, None))).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "2.2.1")
    assert d.rule == "MQSD servers MUST ignore this field." and "Version is 0x1" in d.summary
    reserved = mqsd.encode(same)[:2] + b"\x07\x00" + mqsd.encode(same)[4:]
    d = verdict(server_trace(exchange(reserved, None))).divergence
    assert d.clause.section == "2.2.1" and "MUST be ignored by MQSD servers" in d.rule


@covers("MS-MQSD", "2.2.3")
def test_a_server_list_size_in_characters_names_directory_service_server_size():
    """A reply whose DirectoryServiceServerSize counts characters, not bytes, is blamed on that field and
    2.2.3 (row 14), not on "trailing bytes"."""
    other = request(OTHER_SITE, rid="z")
    reply = bytearray(mqsd.encode(reference_reply(other)))
    size = int.from_bytes(reply[28:32], "little")
    reply[28:32] = (size // 2).to_bytes(4, "little")
    d = verdict(server_trace(exchange(mqsd.encode(other), bytes(reply)))).divergence
    assert (d.kind, d.clause.section) == ("decode", "2.2.3")
    assert d.diff[0]["field"] == "TopologyServerReply.DirectoryServiceServerSize" and d.diff[0]["offset"] == 28
    assert "trailing" not in d.summary and "number of bytes" in d.summary


def test_trailing_bytes_after_a_well_sized_array_are_still_trailing_bytes():
    """Bytes after an array that its size covers (EndList within the size) stay blamed on the structure."""
    other = request(OTHER_SITE, rid="t")
    reply = mqsd.encode(reference_reply(other)) + b"\x00\x00"
    d = verdict(server_trace(exchange(mqsd.encode(other), reply))).divergence
    assert d.diff[0]["field"] == "TopologyServerReply" and "trailing" in d.diff[0]["reason"]


@covers("MS-MQSD", "3.2.5.1")
def test_a_reply_to_another_port_says_another_port():
    """A reply sent to port 1801 of the request's host, not its source port, says "another port" (row 15); to
    another host, "another host"; both quote 3.2.5.1's send rule."""
    same = request(rid="p")
    good = mqsd.encode(reference_reply(same))
    d = verdict(server_trace(exchange(mqsd.encode(same), good, to="127.0.0.1:1801"))).divergence
    assert "to another port than the request's source (127.0.0.1:50000)" in d.summary
    assert d.rule.startswith("The protocol MUST send the TopologyServerReply packet to the sender")
    d = verdict(server_trace(exchange(mqsd.encode(same), good, to="127.0.0.9:50000"))).divergence
    assert "to another host than" in d.summary


def test_a_differing_field_quotes_the_must_that_sets_it():
    """A wrong CorrelationID quotes 3.2.5.1's CorrelationID rule; a mask over IP its IP mask rule."""
    same = request(rid="q")
    wrong = attrs.evolve(reference_reply(same), correlation_id=Guid.from_name("x"))
    d = verdict(server_trace(exchange(mqsd.encode(same), mqsd.encode(wrong)))).divergence
    assert "MUST set the TopologyServerReply.CorrelationID field" in d.rule
    masked = attrs.evolve(reference_reply(same), connected_network_mask=1)
    d = verdict(server_trace(exchange(mqsd.encode(same), mqsd.encode(masked)))).divergence
    assert "ConnectedNetworkMask field to 0x00000000" in d.rule


def _three_faults() -> str:
    """A trace with three departures: a wrong CorrelationID, a reply to garbage and a missing reply."""
    a, b, c = request(rid="a"), request(rid="b"), request(rid="c")
    wrong = TopologyServerReply(Guid.from_name("other"), (NETWORK,), 0)
    return server_trace(exchange(mqsd.encode(a), mqsd.encode(wrong)),
                        exchange(b"\x00garbage", mqsd.encode(reference_reply(b)), t=2.0),
                        exchange(mqsd.encode(c), None, t=3.0),
                        exchange(mqsd.encode(b), mqsd.encode(reference_reply(b)), t=4.0))


def test_check_all_reports_every_divergence_with_its_clause_and_a_count(tmp_path):
    """`check --all` lists each of the three departures with its clause, in event order, and counts them;
    without --all only the first is reported (row 16)."""
    path = tmp_path / "t.ndjson"
    path.write_text(_three_faults())
    first = json.loads(CliRunner().invoke(check_command, [str(path), "--json", "--no-coverage"]).stdout)
    assert "divergences" not in first["traces"][0] and first["traces"][0]["divergence"]["event"] == 2
    result = CliRunner().invoke(check_command, [str(path), "--json", "--no-coverage", "--all"])
    assert result.exit_code == 1
    trace = json.loads(result.stdout)["traces"][0]
    found = [(d["event"], d["kind"], d["clause"]["section"]) for d in trace["divergences"]]
    assert found == [(2, "output-differs", "3.2.5.1"), (4, "unexpected-output", "3.2.5"),
                     (6, "missing-output", "3.2.5.1")], found
    assert trace["divergence_count"] == 3 and trace["divergence"]["event"] == 2
    assert trace["divergences"][1]["rests_on"][0]["id"] == "E-211"
    text = CliRunner().invoke(check_command, [str(path), "--no-coverage", "--all"]).stdout
    assert "DIVERGENT: 3 divergences" in text and text.count("clause: MS-MQSD") == 3


def test_check_all_is_bounded_by_limit_and_still_counts_them_all(tmp_path):
    """`--all --limit 2` lists two divergences and says that three were found."""
    path = tmp_path / "t.ndjson"
    path.write_text(_three_faults())
    result = CliRunner().invoke(check_command, [str(path), "--json", "--no-coverage", "--all", "--limit", "2"])
    trace = json.loads(result.stdout)["traces"][0]
    assert len(trace["divergences"]) == 2 and trace["divergence_count"] == 3
    text = CliRunner().invoke(check_command, [str(path), "--no-coverage", "--all", "--limit", "2"]).stdout
    assert "3 divergences (the first 2 listed)" in text


def test_a_second_reply_or_an_unasked_reply_rests_on_the_e216_policy():
    """No MUST forbids a second reply to one request, or a reply nobody asked for: check still reports both
    (3.2.5's loop) but marks them policy E-216, not a MUST."""
    same = request(rid="twice")
    good = mqsd.encode(reference_reply(same))
    second = verdict(server_trace(exchange(mqsd.encode(same), good) + [exchange(mqsd.encode(same), good)[1]]))
    unasked = verdict(server_trace([exchange(mqsd.encode(same), good)[1]]))
    for report in (second, unasked):
        d = report.divergence
        assert (d.kind, d.clause.section, d.rests_on) == ("unexpected-output", "3.2.5", ("E-216",))
        assert report.to_json()["divergence"]["rests_on"][0]["kind"] == "policy"
