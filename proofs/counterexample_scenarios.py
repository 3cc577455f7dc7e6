"""Counterexamples as scenario files: write them, replay them, and check a run's messages against the invariants.

Every violated obligation has a file ``scenarios/counterexamples/<obligation>.yaml`` that
``mqspec scenario run`` runs (the header comment holds the Z3 counterexample trace and says how
the file replays the violation):

* bounded-model-checking violations are their schedule, written by :func:`write_bmc_scenario`;
* literal-mode Z3 violations come from :data:`TEMPLATES`: a run on the simulator that reaches the
  counterexample's situation. Where the literal text lets the enterprise get there (the
  authority's side) the file replays with ``mqspec scenario run FILE --mode literal``. Where it
  does not (a replica never applies a change in literal mode: E-142 stops replication first), the
  file replays with the literal reading confined to the handler the counterexample names,
  everything else clarified: ``python -m mqspec.proofs.counterexample_scenarios replay FILE``
  (:func:`literal_in`), and the header says so.

Message-level invariants (what a change, a sync reply or a sync request carries) are not state
an ``expect`` step can see; :func:`message_violations` checks them on the run's trace.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.refimpl import world as world_module
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.scenario import ScenarioError, load, parse
from mqspec.refimpl.scenario_run import RunResult, run

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "scenarios" / "counterexamples"
MAX = (1 << 64) - 1


# --- the literal reading confined to some handlers -----------------------------------------------------


class SelectiveContext(Context):
    """A Context that reads the text literally only inside the named handler functions.

    ``ctx.clarified`` / ``ctx.literal`` answer for the function whose body asks (the caller's
    frame), so a counterexample that one handler's literal branch causes can be replayed with
    every other branch clarified (the enterprise forms, E-142 does not stop it first).
    """

    __slots__ = ("literal_handlers",)

    def __init__(self, node: str, mode: Mode = Mode.CLARIFIED, now: float = 0.0,
                 literal_handlers: frozenset[str] = frozenset()) -> None:
        super().__init__(node, Mode.CLARIFIED, now)
        self.literal_handlers = literal_handlers

    @property
    def clarified(self) -> bool:  # type: ignore[override]
        return sys._getframe(1).f_code.co_name not in self.literal_handlers

    @property
    def literal(self) -> bool:  # type: ignore[override]
        return sys._getframe(1).f_code.co_name in self.literal_handlers


@contextlib.contextmanager
def literal_in(*handlers: str) -> Iterator[None]:
    """While active, every World event reads the text literally inside ``handlers`` only."""
    names = frozenset(handlers)
    saved = world_module.Context

    def factory(node: str, mode: Mode = Mode.CLARIFIED, now: float = 0.0) -> Context:
        return SelectiveContext(node, mode, now, names)

    world_module.Context = factory  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        world_module.Context = saved  # type: ignore[misc]


_REPLAY = re.compile(r"^# replay: (literal|literal in (?P<handlers>[\w, ]+))\s*$", re.MULTILINE)


def replay_handlers(path: Path) -> tuple[str, ...] | None:
    """The handlers a file's ``# replay: literal in X, Y`` header names (None: plain ``--mode literal``)."""
    m = _REPLAY.search(Path(path).read_text(encoding="utf-8"))
    if m is None or m.group("handlers") is None:
        return None
    return tuple(h.strip() for h in m.group("handlers").split(","))


def replay(path: str | Path, *, clarified: bool = False, watch: Any = None) -> tuple[RunResult, list[str]]:
    """Run a counterexample file as its header says (or clarified); returns the run and its message violations.

    ``watch``: an :class:`~mqspec.proofs.scenario_watch.InvariantWatch` to check the invariants during the run.
    """
    records: list[dict[str, Any]] = []

    def trace(record: dict[str, Any]) -> None:
        records.append(record)
        if watch is not None:
            watch.record(record)

    scenario = load(path)
    handlers = replay_handlers(Path(path))
    attach = watch.attach if watch is not None else None
    if clarified:
        result = run(scenario, mode=Mode.CLARIFIED, trace=trace, attach=attach)
    elif handlers is None:
        result = run(scenario, mode=Mode.LITERAL, trace=trace, attach=attach)
    else:
        with literal_in(*handlers):
            result = run(scenario, mode=Mode.CLARIFIED, trace=trace, attach=attach)
    return result, message_violations(records, result.world)


# --- message-level invariants on a trace -------------------------------------------------------------------


def message_violations(records: list[dict[str, Any]], world: Any) -> list[str]:
    """What the messages sent in a run break (changes_carry_authority_purged_seq, changes_chain_forward,
    changes_carry_assigned_sequence_numbers, sync_requests_ask_assigned_sequence_numbers)."""
    authority_last = {}
    for qm in world.nodes.values():
        for p in qm.partitions:
            if qm.is_authority_of(p):
                authority_last[p.partition_id] = p.last_seq_number.value
    out = []
    for r in records:
        if r.get("event") != "send":
            continue
        try:
            msg = mqdsrp.decode(bytes.fromhex(r["body"]))
        except (DecodeError, ValueError):
            continue
        where = f"t={r['t']} {r['node']}->{r['to']}"
        if isinstance(msg, ChangePropagationMessage):
            for c in msg.changes:
                if c.purged_seq_number.value > c.previous_seq_number.value:
                    out.append(f"changes_carry_authority_purged_seq: {where} ChangePropagation change "
                               f"{c.seq_number.value} carries PurgedSeqNumber {c.purged_seq_number.value} above "
                               f"the sender's LastSeqNumber {c.previous_seq_number.value} (E-103)")
        elif isinstance(msg, SyncReplyMessage):
            frm, to = msg.from_seq_number.value, msg.to_seq_number.value
            for c in msg.changes:
                prev, seq = c.previous_seq_number.value, c.seq_number.value
                if not (prev < seq or prev == seq == frm):
                    out.append(f"changes_chain_forward: {where} SyncReply [{frm}, {to}] chains change {seq} to "
                               f"PreviousSeqNumber {prev} (E-119, E-118)")
                if seq > to or seq < frm:
                    out.append(f"changes_carry_assigned_sequence_numbers: {where} SyncReply [{frm}, {to}] carries "
                               f"change {seq} outside it (E-118)")
        elif isinstance(msg, SyncRequestMessage):
            to = msg.to_seq_number.value
            known = authority_last.get(msg.partition_id)
            if known is not None and to != MAX and to > known:
                out.append(f"sync_requests_ask_assigned_sequence_numbers: {where} SyncRequest "
                           f"[{msg.from_seq_number.value}, {to}] asks past the authority's LastSeqNumber {known} (E-116)")
    return out


# --- writing files -------------------------------------------------------------------------------------------


def _comment(text: str) -> str:
    return "".join(f"# {line}".rstrip() + "\n" for line in text.splitlines())


def write_scenario(path: Path, header: str, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
    path.write_text(_comment(header) + body, encoding="utf-8")
    parse(yaml.safe_load(body), path.stem)  # a file mqspec scenario run accepts
    return path


def write_bmc_scenario(result: Any, folder: Path = FOLDER) -> Path:
    """The schedule of a violated bounded-model-checking obligation, as ``<obligation>.yaml``."""
    cex = result.counterexample
    header = (f"{cex['trace']}\n\nFound by `mqspec prove --mode {result.obligation.mode}` (bounded model checking: "
              f"{cex['bound']}).\nreplay: mqspec scenario run THIS_FILE --mode {result.obligation.mode} "
              "(the final expect fails)")
    suffix = "" if result.obligation.mode == "clarified" else f".{result.obligation.mode}"
    return write_scenario(folder / f"{result.obligation.name}{suffix}.yaml", header, cex["scenario"])


def _q(op: str, at: str, path: str, label: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"at": at, "type": "queue", "path": path, **extra}
    if label is not None:
        body["properties"] = {"PROPID_Q_LABEL": label}
    return {op: body}


SITE1 = {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0", "bscs": ["BSC01"], "machines": ["C0"]},
                                   "site1": {"psc": "PSC1", "bscs": ["BSC11"], "machines": ["C1"]}}}

#: template -> (how it replays: None for --mode literal, or the handlers read literally; what it shows; steps)
TEMPLATES: dict[str, tuple[tuple[str, ...] | None, str, list[dict[str, Any]]]] = {
    "authority-delete-without-tombstone": (None, (
        "PEC0 deletes its own queue C0\\q. Read literally, neither Propagate Directory Change nor Handle Directory "
        "Delete records a DeletedObject (E-108), so the authority has no tombstone of a deletion it will have to "
        "send in sync replies. Expected: the tombstone exists (clarified passes; literal fails)."), [
        _q("create", "PEC0", "C0\\q", "q", expect_status="MQ_OK"), {"settle": {"quiet": 60}},
        _q("delete", "PEC0", "C0\\q", expect_status="MQ_OK"), {"advance": 5},
        {"expect": {"tombstone": {"at": "PEC0", "type": "queue", "path": "C0\\q"}}}]),
    "change-request-tombstone-without-identifier": (None, (
        "BSC01 asks PEC0 to delete C0\\q by path (3.1.7.1.1 sends UseGuid 0x00). Read literally, Receive Change "
        "Request records \"Identifier := dirChange.GuidIdentifier\", which a path-named request does not have "
        "(E-108): the tombstone names no object and no sync reply can carry it. Expected: a tombstone of C0\\q."), [
        _q("create", "PEC0", "C0\\q", "q", expect_status="MQ_OK"), {"settle": {"quiet": 60}},
        _q("delete", "BSC01", "C0\\q", site="site0"), {"advance": 5},
        {"expect": {"tombstone": {"at": "PEC0", "type": "queue", "path": "C0\\q"}}}]),
    "propagated-purged-seq": (None, (
        "PEC0 propagates changes to its PSC neighbor PSC1, one made by a client at PEC0 and one requested by BSC01. "
        "Read literally, each change carries \"PurgedSeqNumber := iSeqNumber\" (E-103), a purged sequence number "
        "above anything PEC0 has purged. The messages show it: replay with a trace and "
        "counterexample_scenarios.message_violations (the evidence test does)."), [
        _q("create", "PEC0", "C0\\q", "q", expect_status="MQ_OK"),
        _q("create", "BSC01", "C0\\r", "r", site="site0"), {"advance": 30},
        {"expect": {"sent": {"at": "PEC0", "to": "PSC1", "operation": "ChangePropagation", "count": ">= 1"}}}]),
    "descending-sync-reply": (None, (
        "PSC1 synchronizes the enterprise partition from PEC0 when it starts (4.1). Read literally, the reply is "
        "sorted by SeqNumber in descending order and chained from FromSeqNumber (E-119), and carries every "
        "tombstone of every partition (E-118): each change but the first names a larger one as its "
        "PreviousSeqNumber. message_violations shows it on the trace."), [
        _q("create", "PEC0", "C0\\q", "q", expect_status="MQ_OK"), {"advance": 30},
        {"expect": {"received": {"at": "PSC1", "from": "PEC0", "operation": "SyncReply", "count": ">= 1"}}}]),
    "window-past-authority": (("receive_change_propagation",), (
        "PSC1 misses one propagation of PEC0's; PEC0's next SeqNumberHeader (20 minutes later) tells it of the "
        "gap. Read literally, PSC1 sets its window to the header's LastSeqNumber + 1 (E-116) and asks for a change "
        "PEC0 has not made; an empty answer would move its LastSeqNumber past PEC0's. message_violations shows the "
        "SyncRequest on the trace."), [
        {"settle": {"quiet": 60}},
        {"drop": {"from": "PEC0", "to": "PSC1", "operation": "ChangePropagation", "times": 1}},
        # an enterprise-scoped queue: a PSC's sync request asks only for those (E-263)
        {"create": {"at": "PEC0", "type": "queue", "path": "C0\\q", "expect_status": "MQ_OK",
                    "properties": {"PROPID_Q_LABEL": "q", "PROPID_Q_SCOPE": 1}}}, {"advance": 1300},
        {"expect": {"object": {"at": "PSC1", "type": "queue", "path": "C0\\q"}}}]),
    "stale-empty-reply-moves-last-back": (("receive_sync_reply",), (
        "BSC11 gets PSC1's changes out of order (one propagation delayed), asks for the gap, and the missing "
        "changes then arrive before the delayed SyncRequest is answered; meanwhile the queue changes again, so the "
        "answer for the old range is empty. Read literally, the Count-0 branch of Receive Sync Reply sets "
        "LastSeqNumber to that answer's ToSeqNumber (E-166): BSC11's LastSeqNumber moves back. Expected: it "
        "never goes below what BSC11 applied."), [
        _q("create", "PSC1", "C1\\q", "q0", expect_status="MQ_OK"), {"settle": {"quiet": 60}},
        {"delay": {"from": "PSC1", "to": "BSC11", "operation": "ChangePropagation", "seconds": 5, "times": 1}},
        _q("update", "PSC1", "C1\\q", "q1"), {"advance": 2.5},
        {"delay": {"from": "BSC11", "to": "PSC1", "operation": "SyncRequest", "seconds": 10, "times": 1}},
        _q("update", "PSC1", "C1\\q", "q2"), {"advance": 6},
        _q("update", "PSC1", "C1\\q", "q3"), {"advance": 12},
        {"expect": {"partition": {"at": "BSC11", "site": "site1", "last_seq": ">= 6"}}}]),
    "replica-delete-without-tombstone": (("handle_directory_delete",), (
        "BSC11 applies PSC1's deletion of C1\\q. Read literally, Handle Directory Delete records no DeletedObject "
        "at a replica (E-108), so its DeletedObjectCollection lacks a deletion it has applied. Expected: the "
        "tombstone exists at BSC11."), [
        _q("create", "PSC1", "C1\\q", "q", expect_status="MQ_OK"), {"settle": {"quiet": 60}},
        _q("delete", "PSC1", "C1\\q", expect_status="MQ_OK"), {"settle": {"quiet": 60}},
        {"expect": {"tombstone": {"at": "BSC11", "type": "queue", "path": "C1\\q"}}}]),
    "purge-inside-the-buffer": (("purge_deleted_objects",), (
        "PSC1 deletes C1\\t (its tombstone is seq 5) and makes changes up to 256, which PEC0 acknowledges "
        "(3.1.7.2.3 acks at multiples of 256); the next change raises Purge Deleted Objects (E-131). Read "
        "literally, Purge Deleted Objects computes LastSeqNumber - 1024 with 2.2.2 Subtraction, which wraps below "
        "1024 (E-130), uses minAckedSeqNumber alone at the authority, and purges the tombstone at LastSeqNumber "
        "257, inside the buffer the step announces, without raising PurgedSeqNumber (E-133). Expected: the "
        "tombstone is kept."), [
        _q("create", "PSC1", "C1\\t", "t", expect_status="MQ_OK"), _q("delete", "PSC1", "C1\\t", expect_status="MQ_OK"),
        {"settle": {"quiet": 60}},
        {"repeat": {"times": 251, "steps": [_q("update", "PSC1", "C1\\a", "busy")]}},
        {"advance": 30},
        {"expect": {"partition": {"at": "PSC1", "site": "site1", "last_seq": 256}}},
        {"repeat": {"times": 2, "steps": [_q("update", "PSC1", "C1\\a", "busier")]}},
        {"advance": 30},
        {"expect": {"tombstone": {"at": "PSC1", "type": "queue", "path": "C1\\t"}}}]),
    "site-partition-created-twice": (("handle_directory_create",), (
        "BSC11 creates a site (its PSC named BSC01: any name shows it) through a change request to PEC0, the "
        "enterprise partition's authority. Read literally, PEC0 runs Handle Directory Create twice for the one "
        "create (once from Receive Change Request, once from Propagate Directory Change) and adds the site's "
        "partition and its PSC neighbor twice (E-104). Expected: PEC0 has one PSC neighbor per PSC."), [
        {"settle": {"quiet": 60}},
        {"create": {"at": "BSC11", "type": "site", "path": "xsite1", "properties": {
            "PROPID_S_PATHNAME": "xsite1", "PROPID_S_SITEID": "001e2d22-12c4-5db2-b88b-8dcb9fe0023f",
            "PROPID_S_PSC": "BSC01"}}},
        {"settle": {"quiet": 60}},
        {"expect": {"neighbors": {"at": "PEC0", "psc": ["PSC1", "BSC01"]}}}]),
}
PREFIX = {"purge-inside-the-buffer": [_q("create", "PSC1", "C1\\a", "a", expect_status="MQ_OK")]}

#: what a replay of each template shows: a failed expect (its text) or a message violation (the invariant)
SHOWS: dict[str, str] = {
    "authority-delete-without-tombstone": "tombstone of queue C0\\q is not in DeletedObjectCollection",
    "change-request-tombstone-without-identifier": "tombstone of queue C0\\q is not in DeletedObjectCollection",
    "propagated-purged-seq": "changes_carry_authority_purged_seq",
    "descending-sync-reply": "changes_chain_forward",
    "window-past-authority": "sync_requests_ask_assigned_sequence_numbers",
    "stale-empty-reply-moves-last-back": "partition site1 last_seq is",
    "replica-delete-without-tombstone": "tombstone of queue C1\\q is not in DeletedObjectCollection",
    "purge-inside-the-buffer": "tombstone of queue C1\\t is not in DeletedObjectCollection",
    "site-partition-created-twice": "PEC0 psc neighbors are ['BSC01', 'BSC01', 'PSC1']",
}

#: every literal-mode violation and the template that replays it
LITERAL_SCENARIOS: dict[str, str] = {
    "authority_tombstone_covers_unacked_deletions-by-propagate_directory_change": "authority-delete-without-tombstone",
    "authority_tombstone_covers_unacked_deletions-by-receive_change_request": "change-request-tombstone-without-identifier",
    "changes_carry_authority_purged_seq-by-propagate_directory_change": "propagated-purged-seq",
    "changes_carry_authority_purged_seq-by-receive_change_request": "propagated-purged-seq",
    "changes_carry_assigned_sequence_numbers-by-receive_sync_request": "descending-sync-reply",
    "changes_chain_forward-by-receive_sync_request": "descending-sync-reply",
    "changes_skip_no_deletion-by-receive_sync_request": "descending-sync-reply",
    "window_within_authority_history-by-receive_change_propagation": "window-past-authority",
    "sync_requests_ask_assigned_sequence_numbers-by-receive_change_propagation": "window-past-authority",
    "replica_last_seq_monotone_except_sync0-by-receive_sync_reply": "stale-empty-reply-moves-last-back",
    "replication_state_well_formed-by-receive_sync_reply": "stale-empty-reply-moves-last-back",
    "purged_seq_at_most_last_seq-by-receive_sync_reply": "stale-empty-reply-moves-last-back",
    "replica_tombstone_covers_applied_deletions-by-handle_directory_change": "replica-delete-without-tombstone",
    "replica_tombstone_covers_applied_deletions-by-handle_in_sync_change": "replica-delete-without-tombstone",
    "replica_tombstone_covers_applied_deletions-by-check_pending_changes": "replica-delete-without-tombstone",
    "replica_tombstone_covers_applied_deletions-by-receive_sync_reply": "replica-delete-without-tombstone",
    "purge_keeps_last_1024_changes-by-purge_deleted_objects": "purge-inside-the-buffer",
    "purge_keeps_last_1024_changes-by-handle_directory_change": "purge-inside-the-buffer",
    "purge_keeps_last_1024_changes-by-handle_in_sync_change": "purge-inside-the-buffer",
    "purge_keeps_last_1024_changes-by-check_pending_changes": "purge-inside-the-buffer",
    "purge_keeps_last_1024_changes-by-receive_sync_reply": "purge-inside-the-buffer",
    "authority_tombstone_covers_unacked_deletions-by-purge_deleted_objects": "purge-inside-the-buffer",
    "replica_tombstone_covers_applied_deletions-by-purge_deleted_objects": "purge-inside-the-buffer",
    # the enterprise model's (servers: any): each run has four directory servers in two sites
    "enterprise-propagated_changes_carry_assigned_numbers-by-propagate_directory_change": "propagated-purged-seq",
    "enterprise-tombstones_cover_deletions_above_purged_seq-by-propagate_directory_change":
        "authority-delete-without-tombstone",
    "enterprise-tombstones_cover_deletions_above_purged_seq-by-handle_directory_change":
        "replica-delete-without-tombstone",
    "enterprise-window_within_authority_history-by-receive_change_propagation": "window-past-authority",
    "enterprise-sync_replies_carry_assigned_numbers-by-receive_sync_request": "descending-sync-reply",
    "enterprise-reply_deletions_are_authority_deletions-by-receive_sync_request": "descending-sync-reply",
    "enterprise-no_server_keeps_an_object_deleted_below_its_last_seq-by-receive_sync_reply": "descending-sync-reply",
    "enterprise-tombstones_cover_deletions_above_purged_seq-by-receive_sync_reply": "replica-delete-without-tombstone",
    "enterprise-tombstones_cover_deletions_above_purged_seq-by-purge_deleted_objects": "purge-inside-the-buffer",
    "enterprise-partition_held_once_per_server-by-handle_site_update": "site-partition-created-twice",
    **{f"enterprise-{inv}-by-receive_sync_reply": "stale-empty-reply-moves-last-back" for inv in (
        "purged_seq_at_most_last_seq", "replica_objects_are_authority_history", "replica_last_seq_monotone_except_sync0",
        "tombstones_are_authority_deletions", "psc_acks_are_truthful", "recorded_psc_acks_are_truthful",
        "acked_seq_at_most_replica_last_seq", "handover_successor_has_applied_more")},
}

#: what the run of an enterprise obligation's file shows of the invariant's violation (the model's invariant itself
#: speaks of ghost history and messages in flight, which no ``expect`` step reads)
ENTERPRISE_SHOWS = (
    "The enterprise model's counterexample above is this reading's step for any number of servers; the run shows on "
    "the simulator, with four directory servers in two sites, the state or message that step makes, from which the "
    "invariant's violation follows.")



def write_literal_scenario(result: Any, folder: Path = FOLDER) -> Path:
    """``<obligation>.yaml`` for a violated literal obligation: its template, headed by the Z3 counterexample."""
    name = result.obligation.name
    template = LITERAL_SCENARIOS[name]
    handlers, what, steps = TEMPLATES[template]
    cex = result.counterexample or {}
    how = ("replay: literal" if handlers is None else f"replay: literal in {', '.join(handlers)}")
    command = ("mqspec scenario run THIS_FILE --mode literal" if handlers is None else
               "python -m mqspec.proofs.counterexample_scenarios replay THIS_FILE (the literal reading only inside "
               f"{', '.join(handlers)}: read wholly literally, replication stops earlier, at E-142)")
    header = "\n".join([
        f"Counterexample of {name} (mqspec prove --mode literal), cited by {', '.join(cex.get('errata', []))}.",
        "", cex.get("trace", ""), "", f"The run ({template}): {what}",
        *(["", ENTERPRISE_SHOWS] if name.startswith("enterprise-") else []), "", how, f"How: {command}"])
    data = {"description": f"counterexample {name}", "enterprise": SITE1,
            "steps": PREFIX.get(template, []) + steps}
    return write_scenario(folder / f"{name}.yaml", header, data)


def _counterexample_file(name: str) -> Path:
    """``name`` as given, or, when no such file exists and it is a bare file name (as the files' own ``Replay:``
    lines write it), the counterexample of that name under scenarios/counterexamples."""
    path = Path(name)
    if path.exists() or path.name != name:
        return path
    found = sorted(FOLDER.rglob(name))
    return found[0] if len(found) == 1 else path


def main(argv: list[str]) -> int:
    """``replay FILE [--clarified]``: run a counterexample file as its header says; print what it broke
    (failed expectations, messages an invariant forbids, invariants violated after a step)."""
    if len(argv) < 2 or argv[0] != "replay":
        print("usage: python -m mqspec.proofs.counterexample_scenarios replay FILE [--clarified]", file=sys.stderr)
        return 2
    from .scenario_watch import InvariantWatch

    path = _counterexample_file(argv[1])
    watch = InvariantWatch()
    try:
        result, messages = replay(path, clarified="--clarified" in argv[2:], watch=watch)
    except ScenarioError as exc:
        print(f"mqspec: counterexample error: {path}: {exc}", file=sys.stderr)
        return 2
    violated = watch.finish()
    print(json.dumps({"failures": result.failures, "message_violations": messages,
                      "invariant_violations": violated}, indent=2))
    return 1 if result.failures or messages or violated else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
