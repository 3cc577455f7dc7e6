"""`mqspec check`: recorded traces conform, every mutation is caught at its event, nondeterminism is accepted."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqspec.model import mqdsrp
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    SeqNumberHeader,
)
from mqspec.model.propids import ObjectType
from mqspec.refimpl import mqdsrp_server
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqds import ClientRequest

from mqspec.clauses import covers
from mqspec.cli.check import check
from mqspec.oracle import coverage as coverage_module
from mqspec.oracle.check import check_text, check_trace
from mqspec.oracle.generate import generate
from mqspec.oracle.record import scenario_trace
from mqspec.oracle.trace_format import Trace, validate

from . import mutations as mut
from .mutations import dump, indices, parse

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
#: the generated trace the mutation tests use: a PEC, a PSC and a BSC each, creates, updates and
#: deletes at random servers (change requests from BSCs), snapshots every minute
SMALL = {"seed": 7, "sites": 2, "bscs": 1, "changes": 10, "interval": 2.0, "snapshot_every": 5.0, "quiet": 12.0}


@pytest.fixture(scope="module")
def small() -> list[dict]:
    return parse(generate(**SMALL))


@pytest.fixture(scope="module")
def site_trace() -> list[dict]:
    return parse(scenario_trace(str(SCENARIOS / "4.1-adding-a-site.yaml")))


def verdict(trace: str | list[dict]):
    """The report on NDJSON text, or on a list of events (every event validated, no JSON round trip)."""
    if isinstance(trace, str):
        return check_text(trace, coverage=False)[0]
    events = [validate(e) for e in trace]
    return check_trace(Trace(events[0]["trace"], "<mutated>", events, list(range(1, len(events) + 1))),
                       coverage=False)


# --- recorded traces conform ------------------------------------------------------------------


LARGE = ("4.4-deleting-a-queue", "4.5-full-partition-sync")


def _marks(path):
    return [pytest.mark.slow] if path.stem in LARGE else []


@pytest.mark.parametrize("path", [pytest.param(p, marks=_marks(p)) for p in sorted(SCENARIOS.glob("*.yaml"))],
                         ids=lambda p: p.stem)
def test_a_trace_recorded_from_a_scenario_conforms(path):
    """Every scenario file's recorded trace (clarified mode) passes check, every node replayed."""
    report = verdict(scenario_trace(str(path)))
    assert report.verdict == "conformant", report.to_json().get("divergence")
    assert set(report.nodes.values()) == {"conformant"}


@pytest.mark.parametrize("name", [pytest.param("4.1-adding-a-site", marks=pytest.mark.slow),
                                  "e136-pending-change-after-full-sync"])
def test_a_literal_trace_conforms_as_literal_and_diverges_as_clarified(name):
    """A literal-mode trace conforms to the literal reading and departs from the clarified one."""
    text = scenario_trace(str(SCENARIOS / f"{name}.yaml"), mode=Mode.LITERAL)
    assert verdict(text).verdict == "conformant"
    report = verdict(text.replace('"mode":"literal"', '"mode":"clarified"', 1))
    assert report.verdict == "divergent"
    assert report.divergence.clause.section == "3.2.7.3"  # the reply's order: clarification E-119


def test_generated_traces_with_loss_duplication_delay_and_a_crash_conform():
    """Transport faults and a crash and restart are inputs like any other: the trace conforms."""
    text = generate(seed=3, sites=3, bscs=1, changes=25, faults=True, crash=True)
    kinds = {e["event"] for e in parse(text)}
    assert {"crash", "snapshot", "client_request", "request_completed"} <= kinds
    assert verdict(text).verdict == "conformant"


# --- mutations are caught at their event -------------------------------------------------------


def _sample(rng: random.Random, population: list, k: int) -> list:
    return population if len(population) <= k else rng.sample(population, k)


def _misses(cases, events) -> list[str]:
    """Check every mutated trace; the cases whose divergence is not where it must be."""
    misses = []
    for what, mutated, expected_at, later in cases:
        report = verdict(mutated)
        got = report.divergence.index if report.divergence else None
        ok = got is not None and (got > expected_at if later else got == expected_at)
        if not ok:
            misses.append(f"{what}: divergence at {got}, expected {'after ' if later else ''}{expected_at}")
    return misses


def test_flipping_a_byte_of_a_sent_message_diverges_at_that_send(small):
    """200 sampled byte flips in sent messages, and 30 in one change request, each diverge at the
    send (an implementation-chosen RequestIdentifier at the first later event contradicting it)."""
    rng = random.Random(20240612)
    sends = indices(small, "send")
    everywhere = [(i, offset) for i in sends for offset in range(len(small[i]["body"]) // 2)]
    positions = _sample(rng, everywhere, 200)
    # bytes of one change request a BSC originates: its free RequestIdentifier and fixed fields alike
    request = next(i for i in sends if mut.free_offsets(small[i]))
    size = len(small[request]["body"]) // 2
    positions += [(request, offset) for offset in sorted({*mut.free_offsets(small[request]), *range(0, size, size // 25)})]
    cases = [(f"flip {i}:{offset}", mut.flip(small, i, offset), i, offset in mut.free_offsets(small[i]))
             for i, offset in positions]
    assert len(cases) >= 225
    assert not _misses(cases, small)


def test_dropping_a_sent_message_diverges_where_it_was(small):
    """Dropping any of 100 sampled sends is a missing output reported at the position it had."""
    rng = random.Random(7)
    cases = [(f"drop {i}", mut.drop(small, i), i, False) for i in _sample(rng, indices(small, "send"), 100)]
    assert not _misses(cases, small)


def test_perturbing_a_snapshot_field_diverges_at_that_snapshot(small):
    """Changing any of 100 sampled snapshot values or keys to another valid value diverges at the snapshot."""
    rng = random.Random(11)
    leaves = [(i, path) for i in indices(small, "snapshot") for path in mut.snapshot_leaves(small, i)]
    cases = [(f"perturb {i}:{'.'.join(path)}", mut.perturb(small, i, path), i, False)
             for i, path in _sample(rng, leaves, 100)]
    assert not _misses(cases, small)


@pytest.mark.slow
def test_every_mutation_of_a_small_trace_is_caught(site_trace):
    """Slow tier: every byte flip, every dropped send and every snapshot field of the 4.1 trace."""
    events = site_trace
    cases = []
    for i in indices(events, "send"):
        free = mut.free_offsets(events[i])
        cases += [(f"flip {i}:{o}", mut.flip(events, i, o), i, o in free) for o in range(len(events[i]["body"]) // 2)]
        cases.append((f"drop {i}", mut.drop(events, i), i, False))
    for i in indices(events, "snapshot"):
        cases += [(f"perturb {i}:{p}", mut.perturb(events, i, p), i, False) for p in mut.snapshot_leaves(events, i)]
    assert not _misses(cases, events)


# --- what a divergence says ---------------------------------------------------------------------


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_wrong_message_names_the_field_and_the_handler_that_builds_it(site_trace):
    """A flipped sequence number in a SyncReplyMessage is a field diff blamed on Receive Sync Request."""
    i = next(i for i in indices(site_trace, "send") if type(mqdsrp.decode(bytes.fromhex(site_trace[i]["body"])))
             .__name__ == "SyncReplyMessage")
    report = verdict(mut.flip(site_trace, i, 40))
    d = report.divergence
    assert (d.index, d.kind, d.node) == (i, "output-differs", site_trace[i]["node"])
    assert (d.clause.document, d.clause.section) == ("MC-MQDSRP", "3.2.7.3")
    assert d.diff[0]["field"] == "from_seq_number" and d.cause == i - 1
    assert report.line == i + 1


@covers("MC-MQDSRP", "3.3.7.3")
def test_a_wrong_priority_is_blamed_on_the_caller_of_send_replication_message(site_trace):
    """A SyncRequestMessage sent at priority 7 breaks Send Sync Request's "iPriority := 3"."""
    i = next(i for i in indices(site_trace, "send") if site_trace[i]["body"][34:36] == "02")
    events = [*site_trace[:i], {**site_trace[i], "priority": 7}, *site_trace[i + 1:]]
    d = verdict(dump(events)).divergence
    assert d.kind == "output-differs" and d.diff == ({"field": "priority", "expected": 3, "actual": 7},)
    assert d.clause.section == "3.3.7.3"


@covers("MC-MQDSRP", "2.2.5.1")
def test_bytes_that_do_not_decode_are_blamed_on_the_structure_section(site_trace):
    """A send whose Version byte is wrong is a decode divergence citing BaseReplicationHeader's section."""
    i = indices(site_trace, "send")[0]
    d = verdict(mut.flip(site_trace, i, 0)).divergence
    assert d.kind == "decode" and d.index == i
    assert (d.clause.document, d.clause.section) == ("MC-MQDSRP", "2.2.5.1")


def test_an_extra_send_is_blamed_on_the_handler_of_the_input(site_trace):
    """A message the reference never sends is blamed on the handler the node's last input went to."""
    i = next(i for i in indices(site_trace, "send") if site_trace[i - 1]["event"] == "receive")
    events = [*site_trace[:i + 1], site_trace[i], *site_trace[i + 1:]]
    d = verdict(dump(events)).divergence
    assert d.index == i + 1 and d.kind in ("unexpected-output", "output-differs")
    assert d.clause is not None and d.clause.section.startswith(("3.2.7", "3.3.7"))


def test_a_missing_send_is_blamed_on_the_handler_that_produces_it(site_trace):
    """A dropped send names the handler whose rule produces it and the input it answers."""
    i = next(i for i in indices(site_trace, "send") if site_trace[i]["body"][34:36] == "03")
    d = verdict(mut.drop(site_trace, i)).divergence
    assert (d.index, d.kind) == (i, "missing-output")
    assert d.clause.section == "3.2.7.3" and d.cause is not None and d.cause < i


def test_a_wrong_snapshot_names_the_handler_that_last_changed_the_field(site_trace):
    """A snapshot's last_seq off by one is blamed on the handler that set LastSeqNumber in the reference."""
    i = indices(site_trace, "snapshot")[-1]
    pid = next(p for p, v in site_trace[i]["state"]["partitions"].items() if int(v["last_seq"]) > 0)
    d = verdict(mut.perturb(site_trace, i, ("partitions", pid, "last_seq"))).divergence
    assert (d.index, d.kind) == (i, "state")
    assert d.diff[0]["field"] == f"partitions.{pid}.last_seq"
    assert d.clause.section in ("3.1.7.1.2", "3.1.7.2.3", "3.3.7.11") and d.cause < i


@covers("MC-MQDSRP", "3.3.6.2")
def test_a_timer_the_reference_never_started_diverges(site_trace):
    """A BSC Ack Timer expiring at a PSC (it never starts one) is an input divergence."""
    i = indices(site_trace, "timer")[3]
    node = site_trace[i]["node"]
    fake = {**site_trace[i], "timer": "bsc_ack", "args": []}
    d = verdict(dump([*site_trace[:i], fake, *site_trace[i + 1:]])).divergence
    assert (d.index, d.kind, d.node) == (i, "input", node)


# --- allowed nondeterminism is accepted ---------------------------------------------------------


def test_only_some_nodes_traced_conforms(small):
    """A trace of one BSC alone (its inputs and outputs) conforms: partial traces are first-class."""
    kept = [e for e in small if e.get("node", e.get("name")) in (None, "BSC10")]
    assert len(kept) > 50
    assert verdict(dump(kept)).verdict == "conformant"


def test_only_sent_messages_observed_conforms(small):
    """Without directory events and completions (and without the header claiming them) a trace conforms."""
    header = {k: v for k, v in small[0].items() if k != "observes"}
    kept = [header] + [e for e in small[1:] if e["event"] not in ("directory", "request_completed")]
    assert verdict(dump(kept)).verdict == "conformant"
    claimed = [small[0]] + kept[1:]  # the header still says completions are logged: they are missing
    assert verdict(dump(claimed)).divergence.kind == "missing-output"


def test_partial_snapshots_compare_only_the_fields_given(small):
    """A snapshot giving one partition's LastSeqNumber conforms, and a wrong one diverges there."""
    i = indices(small, "snapshot")[-1]
    pid, part = next(iter(small[i]["state"]["partitions"].items()))
    partial = {**small[i], "state": {"partitions": {pid: {"last_seq": part["last_seq"]}}}}
    assert verdict(dump([*small[:i], partial, *small[i + 1:]])).verdict == "conformant"
    wrong = {**small[i], "state": {"partitions": {pid: {"last_seq": str(int(part["last_seq"]) + 1)}}}}
    assert verdict(dump([*small[:i], wrong, *small[i + 1:]])).divergence.index == i


@covers("MC-MQDSRP", "3.1.5.1")
def test_outputs_of_one_input_may_be_logged_in_any_order(small):
    """Two outputs answering the same input (a send and the next output), swapped, still conform."""
    outputs = ("send", "directory", "request_completed")
    i = next(i for i in indices(small, "send") if small[i + 1]["event"] in outputs
             and small[i + 1]["node"] == small[i]["node"] and small[i + 1] != small[i])
    events = [*small[:i], small[i + 1], small[i], *small[i + 2:]]
    assert verdict(dump(events)).verdict == "conformant"


def test_outputs_may_lag_by_the_window_the_header_allows(small):
    """A send logged after the node's next input diverges with window 0 and conforms with window 1."""
    i = next(i for i in indices(small, "send")
             if small[i + 1]["event"] == "timer" and small[i + 1]["node"] == small[i]["node"]
             and small[i - 1]["event"] in ("timer", "receive"))
    moved = [*small[:i], small[i + 1], small[i], *small[i + 2:]]
    assert verdict(dump(moved)).divergence.kind == "missing-output"
    assert verdict(dump([{**small[0], "window": 1}, *moved[1:]])).verdict == "conformant"


@covers("MC-MQDSRP", "3.3.7.2")
def test_a_change_propagation_may_leave_out_the_seq_number_header(site_trace):
    """When to send a SeqNumberHeader is implementation-specific: a propagation without one conforms."""
    for i in indices(site_trace, "send"):
        message = mqdsrp.decode(bytes.fromhex(site_trace[i]["body"]))
        if type(message) is ChangePropagationMessage and message.seq_numbers.partitions:
            break
    plain = ChangePropagationMessage(message.site_id, message.flush, message.changes, SeqNumberHeader(None, ()))
    events = [*site_trace[:i], {**site_trace[i], "body": mqdsrp.encode(plain).hex()}, *site_trace[i + 1:]]
    assert verdict(dump(events)).verdict == "conformant"


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_the_originator_chooses_request_identifiers(small):
    """Renumbering one BSC's change requests consistently (requests, replies, wait timer) conforms."""
    i = next(i for i in indices(small, "send") if mut.free_offsets(small[i]))
    request = mqdsrp.decode(bytes.fromhex(small[i]["body"]))
    old, new = (request.requester_name, request.request_identifier), 0xC0FFEE
    events = []
    for e in small:
        if e["event"] in ("send", "receive"):
            m = mqdsrp.decode(bytes.fromhex(e["body"]))
            if type(m) in (ChangeRequestMessage, ChangeReplyMessage) and (m.requester_name, m.request_identifier) == old:
                import attrs

                e = {**e, "body": mqdsrp.encode(attrs.evolve(m, request_identifier=new)).hex()}
        elif e["event"] == "timer" and e["timer"] == "change_request_wait" and tuple(e["args"][0]) == old:
            e = {**e, "args": [[old[0], new]]}
        events.append(e)
    assert verdict(dump(events)).verdict == "conformant"


def test_timer_values_are_the_implementations(small):
    """The same trace on a clock running 1.5 times slower (longer timers) still conforms."""
    events = [{**e, "t": round(e["t"] * 1.5, 6)} for e in small]
    assert verdict(dump(events)).verdict == "conformant"


def test_a_node_clock_reading_shifts_its_handlers_time(site_trace):
    """Clock readings are accepted: a node whose own clock is an hour ahead still conforms."""
    node = site_trace[1]["name"]
    reading = {"trace": site_trace[0]["trace"], "format": 1, "event": "clock", "t": site_trace[1]["t"],
               "node": node, "clock": site_trace[1]["t"] + 3600.0}
    events = [site_trace[0], site_trace[1], reading, *site_trace[2:]]
    assert verdict(dump(events)).verdict == "conformant"


# --- MQSD and MQCN at codec level, coverage -----------------------------------------------------


def notification():
    """A version 0x01 MS-MQCN notification: a queue deletion (as in tests/capture/test_scan.py)."""
    from mqspec.model import mqcn
    from mqspec.model.guid import Guid
    from mqspec.model.propids import PROPIDS
    from mqspec.model.propvalue import Property

    update = mqcn.NotificationUpdate(
        command=mqcn.Command.DELETE, guid_identifier=Guid.from_name("queue"), guid_master_id=Guid.from_name("master"),
        properties=(Property(PROPIDS["PROPID_D_SCOPE"].propid, 1), Property(PROPIDS["PROPID_D_OBJTYPE"].propid, 1)),
    )
    return mqcn.ChangeNotificationMessage(version=mqcn.Version.DIRECTORY_SERVICE, updates=(update,))


def _codec_trace(kind: str, body: bytes) -> str:
    head = {"trace": "t", "format": 1}
    return dump([{**head, "event": "header", "t": 0, "nodes": [{"name": "S1"}]},
                 {**head, "event": kind, "t": 1, "node": "S1", "direction": "send", "body": body.hex()}])


@pytest.mark.parametrize("kind", ["datagram", "notification"])
def test_sent_mqsd_and_mqcn_messages_must_decode(kind):
    """A sent MQSD datagram or MQCN body is checked against its codec; a bad one cites its section."""
    from mqspec.model import examples_mqsd, mqcn

    good = examples_mqsd.CLIENT_REQUEST if kind == "datagram" else mqcn.encode_body(notification())
    assert verdict(_codec_trace(kind, good)).verdict == "conformant"
    d = verdict(_codec_trace(kind, good[:-3])).divergence
    assert d.kind == "decode" and d.clause.document == ("MS-MQSD" if kind == "datagram" else "MS-MQCN")


def test_coverage_lists_exercised_clauses_and_restores_the_code(site_trace):
    """Coverage names the handlers the trace ran and leaves every function as it was."""
    code = mqdsrp_server.receive_sync_request.__code__
    report = check_text(dump(site_trace))[0]
    sections = {(c.document, c.section) for c in report.coverage}
    assert {("MC-MQDSRP", "3.2.7.3"), ("MC-MQDSRP", "3.3.7.5"), ("MC-MQDSRP", "2.2.6.5")} <= sections
    assert mqdsrp_server.receive_sync_request.__code__ is code
    assert not [k for k in vars(mqdsrp_server) if k.startswith("_mqspec_coverage")]
    assert not coverage_module._ACTIVE


# --- the command line ----------------------------------------------------------------------------


def _run(*args: str):
    return CliRunner().invoke(check, list(args))


def test_check_exits_0_1_by_verdict_and_prints_json(tmp_path, site_trace):
    """Exit 0 for a conformant trace, 1 with the divergence in the JSON report for a mutated one."""
    good, bad = tmp_path / "good.ndjson", tmp_path / "bad.ndjson"
    good.write_text(dump(site_trace))
    i = indices(site_trace, "send")[5]
    bad.write_text(dump(mut.drop(site_trace, i)))
    assert _run(str(good)).exit_code == 0
    result = _run(str(good), str(bad), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [t["verdict"] for t in report["traces"]] == ["conformant", "divergent"]
    d = report["traces"][1]["divergence"]
    assert d["event"] == i and d["line"] == i + 1 and d["kind"] == "missing-output"
    assert d["clause"]["document"] == "MC-MQDSRP" and report["coverage"]["count"] > 20


@pytest.mark.parametrize(("line", "field"), [
    ("{not json", "(line)"),
    ('{"trace":"t","format":4,"event":"header","t":0}', "format"),
    ('{"trace":"t","format":1,"event":"start","t":0,"node":"A"}', "event"),
    ('{"trace":"t","format":1,"event":"header","t":0,"nodes":[{"name":"A","role":"PSC"}]}', "nodes[0].site"),
])
def test_malformed_input_exits_2_naming_file_line_and_field(tmp_path, line, field):
    """A malformed line is one stderr line ``file:line: field: reason`` and exit 2, no traceback."""
    path = tmp_path / "t.ndjson"
    path.write_text(line + "\n")
    result = _run(str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith(f"mqspec: trace error: {path}:1: {field}: ")
    assert result.stderr.count("\n") == 1


def test_an_event_the_reference_cannot_take_exits_2_naming_its_line(tmp_path, site_trace):
    """A client request with an object type MQDS does not define is malformed input at its line."""
    _assert_bad_client_request(tmp_path, site_trace, {"operation": "create", "object_type": 77},
                               "object_type: 77 is not an MQDS object type")


def _assert_bad_client_request(tmp_path, site_trace, fields, error):
    """A client request with ``fields`` appended to the trace exits 2 with ``error`` at its line."""
    head = {"trace": site_trace[0]["trace"], "format": 1}
    bad = {**head, "event": "client_request", "t": 999999, "node": site_trace[1]["name"], "request": 99,
           "partition": "00000000-0000-0000-0000-000000000000", **fields}
    path = tmp_path / "t.ndjson"
    path.write_text(dump([*site_trace, bad]))
    result = _run(str(path))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"mqspec: trace error: {path}:{len(site_trace) + 1}: {error}"


def test_a_client_request_naming_its_object_both_ways_exits_2_naming_its_line(tmp_path, site_trace):
    """A request names its object by path or by GUID: one the authority does not own travels as a DirectoryChange,
    which carries one name only (2.2.4), so a request with both is malformed input at its line, as the reference's
    ClientRequest refuses it."""
    _assert_bad_client_request(tmp_path, site_trace, {"operation": "update", "object_type": 1, "path": "C1\\q",
                                                      "guid": "0d252ca3-da77-59d3-b012-a238236a6878"},
                               "guid: an update names its object by path or by guid, not both")
    with pytest.raises(ModelError, match="not both"):
        ClientRequest("update", ObjectType.MQDS_QUEUE, Guid.NULL, path_name="C1\\q", guid=Guid.from_name("q"))


def test_a_missing_file_exits_2(tmp_path):
    """A trace file that cannot be read is one line and exit 2."""
    result = _run(str(tmp_path / "absent.ndjson"))
    assert result.exit_code == 2 and "absent.ndjson:0: (file)" in result.stderr


# --- the clause named is the rule that was broken ------------------------------------------------


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_a_duplicated_change_applied_twice_breaks_handle_directory_change():
    """Raising the directory update again for a duplicated change breaks 3.1.7.2.2's "Take no further
    action", not the input handler 3.2.7.1."""
    events = parse(generate(seed=3, sites=3, bscs=1, changes=25, faults=True))
    mutated, at = mut.apply_twice(events)
    d = verdict(mutated).divergence
    assert (d.index, d.kind) == (at, "unexpected-output")
    assert (d.clause.document, d.clause.section) == ("MC-MQDSRP", "3.1.7.2.2"), d.summary


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_request_completed_before_its_reply_breaks_the_wait_of_process_change_request(small):
    """A BSC completing a client's request before the change reply arrives breaks 3.3.7.1's wait."""
    mutated, at = mut.complete_early(small)
    d = verdict(mutated).divergence
    assert (d.index, d.kind) == (at, "unexpected-output")
    assert (d.clause.document, d.clause.section) == ("MC-MQDSRP", "3.3.7.1"), d.summary


def test_an_output_sent_twice_is_blamed_on_the_clause_that_sends_it_once(site_trace):
    """A send repeated right after itself is blamed on the handler whose rule sends it (once)."""
    i = next(i for i in indices(site_trace, "send") if site_trace[i]["body"][34:36] == "03")
    d = verdict(dump([*site_trace[:i + 1], site_trace[i], *site_trace[i + 1:]])).divergence
    assert (d.index, d.kind, d.clause.section) == (i + 1, "unexpected-output", "3.2.7.3")
    assert "a second time" in d.summary


def test_check_all_goes_on_past_the_first_divergence_of_a_replication_server(small):
    """With every divergence asked for, two wrong snapshots of one MC-MQDSRP node are both reported, each
    naming the handler that set the field, the count says two; the first is the one the default reports."""
    from mqspec.oracle.check import check as check_lines

    first, last = indices(small, "snapshot")[-2:]
    pid = next(p for p, v in small[last]["state"]["partitions"].items() if int(v["last_seq"]) > 0)
    wrong = mut.perturb(mut.perturb(small, first, ("partitions", pid, "last_seq")), last,
                        ("partitions", pid, "last_seq"))
    report = check_lines(dump(wrong).splitlines(keepends=True), all_divergences=10, coverage=False).traces[0]
    assert [(d.index, d.kind) for d, _ in report.divergences] == [(first, "state"), (last, "state")]
    assert report.divergence_count == 2 and all(d.clause is not None for d, _ in report.divergences)
    assert verdict(dump(wrong)).divergence.index == first == report.divergence.index
