"""The enterprise model's invariants on the states the campaign's scenario files reach (issue 22).

The per-server check (:mod:`.check`) compares each handler run with the one-server model. This one speaks of the
whole enterprise: after each top-level step of a scenario file, the World is projected onto the enterprise model's
state (:func:`mqspec.proofs.enterprise.projection.project`: every server, every message ever sent, the authority's
history) and every state invariant of :mod:`mqspec.proofs.enterprise.invariants` is evaluated on it
(:mod:`mqspec.proofs.enterprise.evaluate`). The invariants are the inductive invariant `mqspec prove` proves for any
number of servers; a reached state outside it means the proof does not describe the code that reached it.

What it leaves out, and why (printed by `mqspec prove` with the rows):

* literal mode: the enterprise proofs are about the clarified reading; literal mode's runs reach the literal
  reading's violations by design (its counterexamples);
* the step invariants (``kind == "step"``): each speaks of one transition, and a scenario step runs many;
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
    "literal-bsc-with-a-psc-neighbor.yaml": "a misbehaving peer's SeqNumberHeader gives the enterprise partition a "
    "PurgedSeqNumber its authority never reached (the file's literal states need it); the enterprise model's "
    "headers are the ones its servers send",
    "e315-new-psc-knew-its-site-before-the-move.yaml": "the new PSC of a site first holds the site's partition as a "
    "replica and asks its old PSC for it (E-315); the model's handover (move_psc) gives the new PSC the old one's "
    "partition at once, so it has no PSC that sent a Sync Request for its own site (sync_answers_go_to_replicas "
    "fails on this run's state)",
}
STATE_INVARIANTS = tuple(i for i in ei.INVARIANTS if i.kind == "state")


@attrs.define
class Violation:
    invariant: str
    file: str
    step: str
    instance: dict[str, str]

    def text(self) -> str:
        where = ", ".join(f"{k} = {v}" for k, v in self.instance.items())
        return (f"the enterprise invariant {self.invariant} fails on the projected state of {self.file} after "
                f"{self.step}" + (f": {where}" if where else ""))


@attrs.define
class Tally:
    """The enterprise check of a campaign's scenario files: states checked, the first violation of each invariant."""

    states: int = 0
    files: list[str] = attrs.field(factory=list)
    violations: dict[str, Violation] = attrs.field(factory=dict)
    seconds: float = 0.0

    def watch(self, name: str) -> Watch | None:
        """The watch for one scenario file's run (None: out of scope)."""
        if name in OUT_OF_SCOPE:
            return None
        self.files.append(name)
        return Watch(self, name)

    def rows(self) -> list[Any]:
        """One row per state invariant (clarified): ``refined`` on the states checked, or ``violated``."""
        from mqspec.proofs.obligations import Obligation, Result

        out = []
        for inv in STATE_INVARIANTS:
            found = self.violations.get(inv.name)
            detail = {"section": "enterprise", "states": self.states, "scenario_files": len(self.files)}
            counterexample = None
            if found is not None:
                counterexample = {"trace": found.text(), "file": found.file, "step": found.step,
                                  "instance": found.instance, "departures": 1}
            out.append(Result(Obligation(f"enterprise-{inv.name}", inv.name, inv.name, "clarified", "refinement",
                                         inv.family, "any"), "violated" if found else "refined",
                              self.seconds / len(STATE_INVARIANTS), counterexample, detail=detail))
        return out


class Watch:
    """One scenario file's run: ``attach`` and ``record`` as scenario_run.run's hooks; each top-level step's
    start (and ``finish``) checks the state the steps before it left."""

    def __init__(self, tally: Tally, name: str) -> None:
        self.tally = tally
        self.name = name
        self.world: Any = None
        self.recorder: EnterpriseRecorder | None = None
        self.step: str | None = None  # the step whose outcome the next check sees (None: the build is running)

    def attach(self, world: Any) -> None:
        self.world = world
        self.recorder = EnterpriseRecorder(world)

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
            if name not in self.tally.violations:
                instance = {k: str(v) for k, v in evaluate.compiled(ei.BY_NAME[name]).witness.items()}
                self.tally.violations[name] = Violation(name, self.name, self.step, instance)
        self.tally.states += 1
        self.tally.seconds += time.perf_counter() - started


def exemption_lines() -> list[str]:
    """What the enterprise check leaves out, one line each (printed by `mqspec prove`)."""
    head = ("enterprise check: clarified mode only; state invariants only (the step invariants speak of one "
            "transition); scenario files only (not the seeded runs)")
    return [head, *(f"  not checked: {name}: {why}" for name, why in OUT_OF_SCOPE.items())]
