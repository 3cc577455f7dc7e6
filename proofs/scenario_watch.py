"""Check the invariants while a scenario runs: ``mqspec scenario run FILE --invariants``.

A counterexample file then shows its invariant's violation itself, in the mode it names, not
only a failed ``expect``. :class:`InvariantWatch` attaches a :class:`~mqspec.proofs.ghost.Ghost`
to the scenario's World before the enterprise is built and reads the World's trace notes: before
each step (a ``step`` note, the steps inside a ``repeat`` included) and at the end it checks every
invariant on what happened since the previous check, as the stateful machine does after each of
its steps.

The quiescence invariants (``*_at_quiescence``, convergence) state what holds once the enterprise
is quiet, healed and running; a scenario may settle with a server down, a link cut or a message
just lost to a fault. They are checked after a settle only when that settle ended quiet with
every server running, no link cut and no message lost while it ran (the stateful machine's
settle phase asks the same).
"""

from __future__ import annotations

from typing import Any

from mqspec.refimpl.world import World

from . import invariants as inv
from .ghost import Ghost


class InvariantWatch:
    """The ghost and the invariant checks of one scenario run; ``violations`` holds the first of each invariant."""

    def __init__(self, names: tuple[str, ...] | None = None, *, refine: bool = False) -> None:
        self.names = names
        #: check every handler run against the model too (proofs/refinement: handlers_refine_model)
        self.refine = refine
        self.world: World | None = None
        self.ghost: Ghost | None = None
        #: the step running (None before the enterprise's build begins)
        self.step: str | None = None
        self.checks = 0
        #: of those, the checks that included the quiescence invariants
        self.quiescent_checks = 0
        #: the first violation of each invariant: {"invariant", "step", "problems"}, in the order found
        self.violations: list[dict[str, Any]] = []
        #: every check: (step, {invariant: problems}) (the fast path's equivalence test compares them)
        self.history: list[tuple[str, dict[str, list[str]]]] = []
        self._seen: set[str] = set()
        self._lost_before = 0
        self._quiescent = False
        self._settled = True

    def attach(self, world: World) -> None:
        """Attach the ghost (``scenario_run.run``'s ``attach``: before the first event)."""
        self.world = world
        self.ghost = Ghost(world)
        if self.refine:
            from .refinement.check import Refinement

            self.ghost.refinement = Refinement(world)

    def record(self, record: dict[str, Any]) -> None:
        """Read one World trace record (``scenario_run.run``'s ``trace``): steps and settles."""
        event = record.get("event")
        if event == "step":
            self._check()
            self.step = str(record.get("step", ""))
            self._lost_before = self.world.network.lost if self.world is not None else 0
        elif event == "settled" and self.world is not None:
            quiet = bool(record.get("quiet"))
            w = self.world
            self._settled = quiet
            self._quiescent = (quiet and all(w.up.values()) and not w.network.has_cut_links()
                               and w.network.lost == self._lost_before)

    def finish(self) -> list[dict[str, Any]]:
        """Check what the last step did; the violations found."""
        self._check()
        return self.violations

    def _check(self) -> None:
        if self.ghost is None or self.step is None:
            return
        first = self.checks == 0  # the build: every server is new
        obs = self.ghost.observe(self.step, quiescent=self._quiescent, full=first or self._quiescent,
                                 settled=self._settled)
        self.checks += 1
        self.quiescent_checks += self._quiescent
        self._quiescent, self._settled = False, True
        verdicts = inv.check(obs, self.names)
        self.history.append((self.step, verdicts))
        for name, problems in verdicts.items():
            if name not in self._seen:
                self._seen.add(name)
                self.violations.append({"invariant": name, "step": self.step, "problems": problems})
