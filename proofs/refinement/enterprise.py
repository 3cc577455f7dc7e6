"""The enterprise model's invariants on the states the campaign's scenario files reach (issue 22).

The per-server check (:mod:`.check`) compares each handler run with the one-server model. This one speaks of the
whole enterprise: after each top-level step of a scenario file, the World is projected onto the enterprise model's
state (:func:`mqspec.proofs.enterprise.projection.project`: every server, every message ever sent, the authority's
history) and every state invariant of :mod:`mqspec.proofs.enterprise.invariants` is evaluated on it
(:mod:`mqspec.proofs.enterprise.evaluate`). The invariants are the inductive invariant `mqspec prove` proves for any
number of servers; a reached state outside it means the proof does not describe the code that reached it.

The step invariants (``kind == "step"``) speak of one transition: they are evaluated on each handler run, on the
server that ran projected before and after it (``project(..., server)``: a handler run changes no other server's
state) with the authority's history narrowed to what the run changed (:func:`_history_narrowed`). A run that
changed nothing they read is counted apart (``runs_unchanged``), not as a check.

What it leaves out, and why (printed by `mqspec prove` with the rows):

* literal mode: the enterprise proofs are about the clarified reading; literal mode's runs reach the literal
  reading's violations by design (its counterexamples);
* for the step invariants, what is no handler run: a crash, a handover (refimpl/handover.py moves state between
  servers outside any handler);
* the explorer's seeded runs: the projection records every message ever sent, and the runs are long;
* the scenario files in :data:`OUT_OF_SCOPE`, each with what the enterprise model does not have.
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from mqspec.proofs.enterprise import evaluate
from mqspec.proofs.enterprise import invariants as ei
from mqspec.proofs.enterprise.projection import EnterpriseRecorder, project

#: scenario file -> what in it the enterprise model does not have (its states are not checked)
OUT_OF_SCOPE: dict[str, str] = {
    "an-authority-receives-a-change-of-its-own-partition.yaml": "a misbehaving peer sends PSC1 a change of PSC1's "
    "own partition, which PSC1 applies and propagates under the peer's number (E-337); in the enterprise model only "
    "the authority numbers its partition's changes, one at a time",
    "a-pec-whose-site-partition-has-the-enterprise-id.yaml": "a client creates and deletes a site whose identifier "
    "is the enterprise partition's (GUID_NULL), as in a-site-with-the-enterprise-partitions-id.yaml, and a "
    "misbehaving peer then sends the PEC a change of the enterprise partition (E-337)",
    "a-pending-change-older-than-a-purge.yaml": "a misbehaving peer sends changes numbered past its authority's "
    "LastSeqNumber, with a SeqNumberHeader giving a PurgedSeqNumber the authority never reached; the enterprise "
    "model's changes and headers are the ones its servers send",
    "an-enterprise-update-names-another-pec.yaml": "a directory client names PECX, a machine that is no server, as "
    "the PEC (PROPID_E_PECNAME); in the enterprise model the enterprise partition's AuthorityName names the PEC, "
    "which owns it (1.3.1.2)",
    "a-site-created-with-no-psc.yaml": "a client creates a site without PROPID_S_PSC, whose partition names no "
    "authority (E-336); in the enterprise model the AuthorityName of a site's partition names a server that owns it "
    "(1.3.1.2)",
    "pec-acked-with-no-site-partition.yaml": "deletes a site; the enterprise model has no site deletion (Handle "
    "Directory Delete of a site, 3.1.7.2.7 and E-318), so a PEC without its site's partition is outside it",
    "e262-authority-loses-all-replication-state.yaml": "an authority loses its persisted replication state (a "
    "crash with lose: all); the enterprise model's crash loses the volatile state only (3.1.1, 3.3.3)",
    "enterprise-partition_held_once_per_server-by-handle_site_update.yaml": "a client creates a site whose PSC is a "
    "BSC; in the enterprise model a site's partition is owned by a PSC (1.3.1.2)",
    "partition_held_once_per_server.yaml": "a client creates a site whose PSC names no server; in the enterprise "
    "model the AuthorityName of a site's partition names a server that owns it (1.3.1.2)",
    "e318-a-deleted-sites-psc-neighbor-goes-at-every-psc.yaml": "a client creates a site whose PSC names no server "
    "and deletes it; the enterprise model has neither (1.3.1.2; no site deletion, 3.1.7.2.7 and E-318)",
    "a-change-request-to-no-machine.yaml": "a client names NOWHERE, a machine that is no server, as site1's PSC; in "
    "the enterprise model the AuthorityName of a site's partition names a server that owns it (1.3.1.2)",
    "a-site-with-the-enterprise-partitions-id.yaml": "a client creates and deletes a site whose identifier is the "
    "enterprise partition's (GUID_NULL), which removes the PEC's enterprise partition; the enterprise model has no "
    "site deletion (Handle Directory Delete of a site, 3.1.7.2.7 and E-318); and it makes a queue again with the "
    "GUID of one it deleted, where the model's objects are made once",
    "a-bsc-hears-a-machine-made-a-bsc.yaml": "a directory client makes C11, a client machine, a BSC by its "
    "PROPID_QM_SERVICE, as in a-machine-update-makes-and-unmakes-a-bsc.yaml: in the enterprise model a server's role "
    "is fixed and C11 is no server, so what PSC1 sends it counts as sent to a PSC",
    "machine-updates-by-guid-and-without-a-service.yaml": "a directory client makes C13, a client machine, a BSC "
    "by its PROPID_QM_SERVICE, as in a-machine-update-makes-and-unmakes-a-bsc.yaml: in the enterprise model a "
    "server's role is fixed and C13 is no server, so what PSC1 sends it counts as sent to a PSC",
    "a-machine-update-makes-and-unmakes-a-bsc.yaml": "a directory client makes C11, a client machine, a BSC by its "
    "PROPID_QM_SERVICE (and creates C12 as one), and PSC1 propagates to it as to a BSC neighbor (3.1.7.2.12); in the enterprise model a "
    "server's role is fixed (bsc(s) is a symbol) and C11 is no server, so what PSC1 sends it counts as sent to a PSC",
    "psc-acks-the-handler-records-nothing-of.yaml": "misbehaving peers acknowledge 256 changes of partitions they "
    "never applied (PSC1 records one, for its site); the enterprise model's PSC acks are truthful "
    "(psc_acks_are_truthful)",
    "literal-bsc-with-a-psc-neighbor.yaml": "a misbehaving peer's SeqNumberHeader gives the enterprise partition a "
    "PurgedSeqNumber its authority never reached (the file's literal states need it); the enterprise model's "
    "headers are the ones its servers send",
    "e315-new-psc-knew-its-site-before-the-move.yaml": "the new PSC of a site first holds the site's partition as a "
    "replica and asks its old PSC for it (E-315); the model's handover (move_psc) gives the new PSC the old one's "
    "partition at once, so it has no PSC that sent a Sync Request for its own site (sync_answers_go_to_replicas "
    "fails on this run's state)",
    "a-new-psc-hears-its-old-psc-named.yaml": "as e315-new-psc-knew-its-site-before-the-move.yaml: the new PSC of "
    "a site first holds the site's partition as a replica and asks for it (sync_answers_go_to_replicas fails on "
    "this run's state); the model's handover gives it the old PSC's partition at once",
    "a-bsc-named-its-sites-psc.yaml": "a client names BSC11, a BSC, as site1's PSC; in the enterprise model the "
    "AuthorityName of a site's partition names a server that owns it, a PSC (1.3.1.2)",
    "a-site-with-servers-deleted.yaml": "a client deletes site1 while PSC1 and BSC11 run; the enterprise model has no "
    "site deletion (Handle Directory Delete of a site, 3.1.7.2.7 and E-318)",
}
STATE_INVARIANTS = tuple(i for i in ei.INVARIANTS if i.kind == "state")
STEP_INVARIANTS = tuple(i for i in ei.INVARIANTS if i.kind == "step")


@attrs.define
class Violation:
    invariant: str
    file: str
    step: str
    instance: dict[str, str]
    #: the handler run a step invariant fails on ("PSC1's receive run"); None for a state invariant
    run: str | None = None

    def text(self) -> str:
        where = ", ".join(f"{k} = {v}" for k, v in self.instance.items())
        if self.run is not None:
            at = f"{self.run} of {self.file}, in {self.step}"
        else:
            at = f"the projected state of {self.file} after {self.step}"
        return f"the enterprise invariant {self.invariant} fails on {at}" + (f": {where}" if where else "")


@attrs.define
class Tally:
    """The enterprise check of a campaign's scenario files: states checked, the first violation of each invariant."""

    states: int = 0
    files: list[str] = attrs.field(factory=list)
    violations: dict[str, Violation] = attrs.field(factory=dict)
    seconds: float = 0.0
    #: handler runs the step invariants were evaluated on; those that changed nothing they read; their seconds
    runs: int = 0
    runs_unchanged: int = 0
    step_seconds: float = 0.0

    def watch(self, name: str) -> Watch | None:
        """The watch for one scenario file's run (None: out of scope)."""
        if name in OUT_OF_SCOPE:
            return None
        self.files.append(name)
        return Watch(self, name)

    def found(self, invariant: str, file: str, step: str, run: str | None = None) -> None:
        """Record ``invariant``'s violation (its first only), with the instance its evaluation failed on."""
        if invariant not in self.violations:
            instance = {k: str(v) for k, v in evaluate.compiled(ei.BY_NAME[invariant]).witness.items()}
            self.violations[invariant] = Violation(invariant, file, step, instance, run)

    def rows(self) -> list[Any]:
        """One row per invariant (clarified): ``refined`` on the states checked (a step invariant: on the handler
        runs that changed what it reads), or ``violated``."""
        from mqspec.proofs.obligations import Obligation, Result

        out = []
        for inv in (*STATE_INVARIANTS, *STEP_INVARIANTS):
            found = self.violations.get(inv.name)
            detail = {"section": "enterprise", "kind": inv.kind, "scenario_files": len(self.files)}
            if inv.kind == "step":
                detail |= {"states": self.runs, "runs_unchanged": self.runs_unchanged}
            else:
                detail["states"] = self.states
            counterexample = None
            if found is not None:
                counterexample = {"trace": found.text(), "file": found.file, "step": found.step,
                                  "instance": found.instance, "departures": 1}
            out.append(Result(Obligation(f"enterprise-{inv.name}", inv.name, inv.name, "clarified", "refinement",
                                         inv.family, "any"), "violated" if found else "refined",
                              self.step_seconds / len(STEP_INVARIANTS) if inv.kind == "step"
                              else self.seconds / len(STATE_INVARIANTS), counterexample, detail=detail))
        return out


class Watch:
    """One scenario file's run: ``attach`` and ``record`` as scenario_run.run's hooks; each top-level step's
    start (and ``finish``) checks the state the steps before it left, and each handler run (the World's
    observation hook, ``before`` and ``after``) the step invariants."""

    def __init__(self, tally: Tally, name: str) -> None:
        self.tally = tally
        self.name = name
        self.world: Any = None
        self.recorder: EnterpriseRecorder | None = None
        self.step: str | None = None  # the step whose outcome the next check sees (None: the build is running)
        self.pre: tuple[Any, Any] = ((), None)  # the running handler's server before it ran: (its key, its projection)

    def attach(self, world: Any) -> None:
        self.world = world
        self.recorder = EnterpriseRecorder(world)
        world.observers.append(self)  # after the recorder: it has recorded a handler run when this one looks

    # --- the World's observation hook: the step invariants on each handler run --------------------------------

    def before(self, world: Any, qm: Any, event: tuple[Any, ...]) -> None:
        assert self.recorder is not None
        self.pre = (_step_key(qm, self.recorder), project(world, self.recorder, qm.machine_name))

    def after(self, world: Any, qm: Any, event: tuple[Any, ...], effects: list) -> None:
        assert self.recorder is not None
        key, pre = self.pre
        if _step_key(qm, self.recorder) == key:
            self.tally.runs_unchanged += 1
            return  # nothing a step invariant reads changed: each holds with the same state on both sides
        started = time.perf_counter()
        pre, post = _history_narrowed(pre, project(world, self.recorder, qm.machine_name))
        for name in evaluate.violations(post, pre, STEP_INVARIANTS):
            run = f"{qm.machine_name}'s {event[0] if event else 'handler'} run"
            self.tally.found(name, self.name, str(self.step), run)
        self.tally.runs += 1
        self.tally.step_seconds += time.perf_counter() - started

    def effect(self, world: Any, qm: Any, effect: object) -> None:
        """Effects are read from the state after the run."""

    def skipped(self, world: Any, qm: Any, event: tuple[Any, ...]) -> None:
        """A handler run the fast path skipped changes nothing."""

    def crashed(self, world: Any, name: str, lose: str) -> None:
        """A crash is no handler run (the per-server check covers Initialization, which follows it)."""

    def record(self, record: dict[str, Any]) -> None:
        if record.get("event") == "step" and " (iteration " not in str(record.get("step", "")):
            if self.step is not None:
                self.check()
            step = str(record.get("step", ""))
            self.step = "the build" if step == "enterprise" else step

    def finish(self) -> None:
        self.check()

    def check(self) -> None:
        if self.recorder is None or self.step is None:
            return
        started = time.perf_counter()
        snap = project(self.world, self.recorder)
        for name in evaluate.violations(snap, None, STATE_INVARIANTS):
            self.tally.found(name, self.name, self.step)
        self.tally.states += 1
        self.tally.seconds += time.perf_counter() - started


def exemption_lines() -> list[str]:
    """What the enterprise check leaves out, one line each (printed by `mqspec prove`)."""
    head = ("enterprise check: clarified mode only; scenario files only (not the seeded runs); the step invariants "
            "on each handler run, the server that ran projected before and after it (a crash or a handover between "
            "runs is no handler run)")
    return [head, *(f"  not checked: {name}: {why}" for name, why in OUT_OF_SCOPE.items())]


def _step_key(qm: Any, recorder: EnterpriseRecorder) -> tuple[Any, ...]:
    """What the step invariants read of a handler run at ``qm``: its partitions, tombstones and PSC neighbors'
    acks, and the authority's history (which only grows: its sizes tell whether it did)."""
    return (tuple((p.partition_id, p.authority_name, p.last_seq_number.value, p.purged_seq_number.value,
                   p.purge_state) for p in qm.partitions),
            tuple((d.identifier, d.seq_number.value) for d in qm.deleted_objects),
            tuple((n.machine_name, n.acked_pec_seq_number.value, n.acked_seq_number.value) for n in qm.psc_neighbors),
            len(recorder.hist), len(recorder.hdel), tuple(recorder.authority.items()))


def _history_narrowed(pre: Any, post: Any) -> tuple[Any, Any]:
    """``pre`` and ``post`` with the authority's history (``hist``, ``hdel``) narrowed to the entries one side has and
    the other has not, and no held object. The step invariants have the same value on the narrowed pair: an entry
    both sides have satisfies their parts on what was kept, and is no new change to number; no step invariant reads
    the objects held. Evaluating the whole history at every handler run would cost its size each time."""
    hist, hdel = pre.hist ^ post.hist, pre.hdel ^ post.hdel

    def narrowed(snap: Any) -> Any:
        return attrs.evolve(snap, hist=snap.hist & hist, hdel=snap.hdel & hdel, ver={})

    return narrowed(pre), narrowed(post)
