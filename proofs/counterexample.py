"""Counterexamples: a violated obligation as a readable trace and as a runnable scenario file.

The trace reads like mypyvy's: "invariant X is not preserved by Y", then the pre-state, the event
with its arguments, what the event did (messages, changes applied, tombstones removed, literal
branches taken) and the post-state, every value under its attrs field name
(``partition.last_seq_number``, ``qm.deleted_objects[0].seq_number``); the post-state lists only
what changed. ``errata`` names the register entries whose literal reading the model followed on
the way (the branches where literal and clarified differ); a literal violation is cited by them.

The scenario half lives in :mod:`mqspec.proofs.counterexample_scenarios`: each literal violation
has a scenario file ``scenarios/counterexamples/<obligation>.yaml`` that ``mqspec scenario run
--mode literal`` replays to the same violation.
"""

from __future__ import annotations

from typing import Any

import attrs
import z3

from . import z3_events as ev
from . import z3_invariants as zi
from .z3_model import ERRATA, Change, NodeState, Out, Reading

SEQ_FIELDS = ("last_seq_number", "purged_seq_number", "allowed_purge_seq_number", "previous_purged_seq_number",
              "change_missing_window")
PURGE_STATES = {0: "NORMAL", 1: "STARTSYNC0", 2: "SYNC0", 3: "COMPLETESYNC0"}
MAX = (1 << 64) - 1


def value(model: z3.ModelRef, x: Any) -> Any:
    """A term's value in the model (Python ints and bools pass through)."""
    if isinstance(x, (bool, int)):
        return x
    v = model.eval(x, model_completion=True)
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    return v.as_long()  # type: ignore[union-attr]


def _seq_text(n: int) -> Any:
    return "MAX" if n == MAX else n


def state_dict(model: z3.ModelRef, s: NodeState) -> dict[str, Any]:
    """A state by attrs field names; collections hold only their present elements."""
    v = lambda x: value(model, x)
    out: dict[str, Any] = {
        "qm.is_psc": v(s.is_psc),
        "qm.is_authority_of(partition)": v(s.is_authority),
        "partition.is_enterprise": v(s.is_enterprise),
    }
    for f in SEQ_FIELDS:
        out[f"partition.{f}"] = _seq_text(v(getattr(s, f)))
    out["partition.purge_state"] = PURGE_STATES.get(v(s.purge_state), v(s.purge_state))
    out["partition.pending_changes"] = [_change(model, c) for c in s.pending_changes if v(c.present)]
    out["qm.psc_neighbors"] = [{"slot": i, "acked": v(n.acked)} for i, n in enumerate(s.psc_neighbors)
                               if v(n.present)]
    out["qm.deleted_objects"] = [
        {"seq_number": v(t.seq_number), "partition": "this" if v(t.in_partition) else "another",
         "identifier": "set" if v(t.named) else "None"}
        for t in s.deleted_objects if v(t.present)]
    out["qm.directory"] = [{"seq_number": v(o.seq_number), "partition": "this" if v(o.in_partition) else "another"}
                           for o in s.objects if v(o.present)]
    out["ghost.authority_last_seq"] = v(s.ghost_authority_last_seq)
    out["ghost.authority_purged_seq"] = v(s.ghost_authority_purged_seq)
    out["ghost.max_assigned_seq"] = v(s.ghost_max_assigned_seq)
    out["ghost.deletions"] = [v(d.seq_number) for d in s.ghost_deletions if v(d.present)]
    return out


def _change(model: z3.ModelRef, c: Change) -> dict[str, Any]:
    v = lambda x: value(model, x)
    return {"command": "DELETE" if v(c.is_delete) else "UPDATE", "previous_seq_number": v(c.previous_seq_number),
            "seq_number": v(c.seq_number), "purged_seq_number": v(c.purged_seq_number), "applies": v(c.applies)}


def params_dict(model: z3.ModelRef, params: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, x in params.items():
        if isinstance(x, Change):
            out[name] = _change(model, x)
        elif isinstance(x, list):
            out[name] = [_change(model, c) for c in x if value(model, c.present)]
        else:
            got = value(model, x)
            out[name] = _seq_text(got) if isinstance(got, int) and not isinstance(got, bool) else got
    return out


def effects_list(model: z3.ModelRef, out: Out) -> list[str]:
    """What the event did, in the order it did it (per kind)."""
    v = lambda x: value(model, x)
    lines = []
    for g, c, last in out.applied:
        if v(g):
            lines.append(f"Handle In-Sync Change of {v(c.seq_number)} "
                         f"(PreviousSeqNumber {v(c.previous_seq_number)}) at LastSeqNumber {v(last)}")
    for g, seq in out.assigned:
        if v(g):
            lines.append(f"assigned sequence number {v(seq)}")
    for g, c in out.sent_changes:
        if v(g):
            ch = _change(model, c)
            lines.append(f"propagated {ch['command']} {ch['previous_seq_number']}->{ch['seq_number']} "
                         f"PurgedSeqNumber {ch['purged_seq_number']}")
    for g, frm, to, known, s0 in out.sync_requests:
        if v(g):
            lines.append(f"sent SyncRequest [{v(frm)}, {_seq_text(v(to))}] KnownPurgedSeqNumber {v(known)}"
                         f"{' sync0' if v(s0) else ''}")
    for g, acked in out.psc_acks:
        if v(g):
            lines.append(f"sent PSCAck {v(acked)}")
    for g, purged in out.already_purged:
        if v(g):
            lines.append(f"sent AlreadyPurged {v(purged)}")
    for r in out.replies:
        if v(r.sent):
            elems = ", ".join(f"{'DELETE' if v(e.is_delete) else 'SYNC'} {v(e.previous_seq_number)}->{v(e.seq_number)}"
                              for e in r.elements if v(e.included))
            lines.append(f"sent SyncReply [{v(r.from_seq_number)}, {_seq_text(v(r.to_seq_number))}] PurgedSeqNumber "
                         f"{v(r.purged_seq_number)} CompleteSync0 {v(r.complete_sync0)}: [{elems}]")
    for g, seq, why, _last in out.removed_tombstones:
        if v(g):
            lines.append(f"removed tombstone {v(seq)} ({why})")
    if any(v(g) for g in out.forwarded):
        lines.append("forwarded the change request")
    if any(v(g) for g in out.sync0_started):
        lines.append("started sync0")
    return lines


def errata_cited(model: z3.ModelRef, out: Out) -> list[str]:
    """The register entries whose literal reading acted in this run (sorted, once each)."""
    return sorted({e for g, e in out.literal if value(model, g)})


def concretize(model: z3.ModelRef, obj: Any) -> Any:
    """A state, change or argument dictionary with every term replaced by its value in the model."""
    if attrs.has(type(obj)):
        return type(obj)(**{f.name: concretize(model, getattr(obj, f.name)) for f in attrs.fields(type(obj))})
    if isinstance(obj, list):
        return [concretize(model, x) for x in obj]
    if isinstance(obj, dict):
        return {k: concretize(model, x) for k, x in obj.items()}
    if isinstance(obj, z3.ExprRef):
        return value(model, obj)
    return obj


def violated_concretely(invariant: str, event: Any, pre: NodeState, params: dict[str, Any], reading: Reading) -> bool:
    """Run the event on concrete values (the same model code, Python ints) and evaluate the invariant."""
    inv = zi.BY_NAME[invariant]
    post, out = ev.step(event, pre, params, reading)
    goal = inv.formula(post) if inv.kind == "state" else inv.formula(pre, post, out, event.name)
    return goal is False


def causal_errata(invariant: str, event: Any, pre: NodeState, params: dict[str, Any], taken: list[str]) -> list[str]:
    """The entries whose clarification alone removes the violation (each tried on the concrete counterexample).

    If no single one does (two literal readings combine), every entry whose literal branch acted is cited.
    """
    if not violated_concretely(invariant, event, pre, params, Reading.literal()):
        return taken
    causal = [e for e in taken
              if not violated_concretely(invariant, event, pre, params, Reading(frozenset(ERRATA) - {e}))]
    return causal or taken


def _diff(pre: dict[str, Any], post: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in post.items() if pre.get(k) != v}


def consecution_counterexample(model: z3.ModelRef, ob: Any, event: Any, pre: NodeState, params: dict[str, Any],
                               post: NodeState, out: Out) -> dict[str, Any]:
    before = state_dict(model, pre)
    after = state_dict(model, post)
    taken = errata_cited(model, out)
    errata = taken
    if ob.mode == "literal":
        errata = causal_errata(ob.invariant, event, concretize(model, pre), concretize(model, params), taken)
    cex = {
        "pre": before,
        "event": {"handler": event.name, "section": event.section, "arguments": params_dict(model, params)},
        "effects": effects_list(model, out),
        "post": _diff(before, after),
        "errata": errata,
        "literal_readings_taken": taken,
    }
    cex["trace"] = render(ob, cex)
    return cex


def initiation_counterexample(model: z3.ModelRef, s0: NodeState, authority: bool) -> dict[str, Any]:
    state = state_dict(model, s0)
    return {"pre": state, "event": {"handler": "initialization", "authority": authority}, "effects": [],
            "post": {}, "errata": []}


def render(ob: Any, cex: dict[str, Any]) -> str:
    """The readable trace: the obligation, the pre-state, the event, what it did, the post-state."""
    lines = [f"invariant {ob.invariant} is not preserved by {ob.handler} ({ob.mode} mode)"]
    inv = zi.BY_NAME.get(ob.invariant)
    if inv is not None:
        lines.append(f"  ({inv.prose})")
    if cex.get("errata"):
        lines.append(f"  caused by the literal reading of: {', '.join(cex['errata'])}")
    if cex.get("errata_alone"):
        lines.append(f"  (each of {', '.join(cex['errata_alone'])} alone, the rest clarified, breaks it too)")
    lines.append("  pre-state:")
    lines += [f"    {k} = {_fmt(v)}" for k, v in cex["pre"].items() if v not in ([], None)]
    ev = cex["event"]
    args = ", ".join(f"{k}={_fmt(v)}" for k, v in ev.get("arguments", {}).items())
    lines.append(f"  event: {ev['handler']}({args})  [MC-MQDSRP {ev.get('section', '')}]")
    lines += [f"    {e}" for e in cex.get("effects", [])]
    lines.append("  post-state (changed):")
    lines += [f"    {k} = {_fmt(v)}" for k, v in cex["post"].items()]
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) + "}"
    return str(v)



