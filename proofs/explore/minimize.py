"""Shrink a failing run's inputs to a small counterexample (delta debugging), and check inputs.

Hypothesis shrinks the machine's choices; this shrinks the recorded inputs themselves, which is
faster here (a run is a replay, with no re-drawing) and gives inputs that read as a scenario:

    python -m mqspec.proofs.explore.minimize failing.json --invariant replicas_converge_at_quiescence

:func:`violations` replays inputs with the ghost attached, checks the invariants after every
input, and ends the way every machine run ends (heal, restart every server, settle, check the
quiescence invariants too). :func:`minimize` removes inputs (ddmin), then simplifies those left
(shorter repeats and waits) while the named invariant still fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqspec.proofs import invariants as inv
from mqspec.refimpl.effects import Mode

from .driver import Driver, InputRefused, to_scenario

Inputs = list[dict[str, Any]]


def settle_phase(driver: Driver, args: dict[str, float] | None = None,
                 after: Callable[[dict[str, Any]], None] | None = None) -> Inputs:
    """End a run: heal, restart every server that is down, settle; performs and returns those inputs.

    A message lost to a drop or tamper fault is asked for again at the next SeqNumberHeader round
    at the latest (20 minutes), and World.settle waits 22 minutes of unchanged state: a settle during
    which a fault still lost a message may have ended on a round whose retry was lost, so the phase
    settles again until one passes with no message lost (each settle that does not uses up at least
    one of the faults still armed, so this ends). The last settle input is marked
    ``"quiescent": True`` (the quiescence invariants apply after it). ``after`` is called with each
    input once it is performed.
    """
    done: Inputs = []

    def perform(inp: dict[str, Any]) -> None:
        driver.apply(inp)
        done.append(inp)
        if after is not None:
            after(inp)

    perform({"input": "heal"})
    for node in [n for n, up in driver.world.up.items() if not up]:
        perform({"input": "restart", "node": node})
    for attempt in range(MAX_SETTLES):
        hits = driver.drop_hits()
        settle: dict[str, Any] = {"input": "settle"}
        if args:
            settle["args"] = dict(args)
        driver.apply(settle)
        if driver.drop_hits() == hits or attempt == MAX_SETTLES - 1:
            settle["quiescent"] = True
        done.append(settle)
        if after is not None:
            after(settle)
        if settle.get("quiescent"):
            break
    return done


#: a safety bound on the settles of one phase (every drop fault of the machine has a finite count)
MAX_SETTLES = 200


def violations(inputs: Inputs, mode: Mode = Mode.CLARIFIED, names: tuple[str, ...] | None = None,
               *, finish: bool = True, stop: str | None = None,
               settle: dict[str, float] | None = None, refine: bool | None = None,
               skip_idle_timers: bool = False) -> dict[str, list[str]]:
    """Replay ``inputs`` (then the finishing settle), checking invariants after each; the first failures.

    Returns {invariant: violations} of the first input after which any named invariant (all by
    default) failed, or {} when none did; with ``stop`` only that invariant is looked for.
    ``refine``: check every handler run against the model (handlers_refine_model); by default when
    that invariant is looked for. ``skip_idle_timers``: the World's fast path, as the run had it (the
    runs it skips are not checked against the model).
    """
    wanted = names if stop is None else (stop,)
    if refine is None:
        refine = wanted is None or "handlers_refine_model" in wanted
    driver = Driver(mode, refine=refine, skip_idle_timers=skip_idle_timers)
    found: dict[str, list[str]] = {}

    def check(inp: dict[str, Any], first: bool = False) -> None:
        quiet = _quiescent(driver, inp)
        obs = driver.ghost.observe(inp["input"], quiescent=quiet, full=quiet or first,  # type: ignore[union-attr]
                                   settled=driver.last_settle_quiet)
        if not found:
            found.update(inv.check(obs, wanted))

    for i, inp in enumerate(inputs):
        try:
            driver.apply(inp)
        except InputRefused as exc:  # an input the state does not allow (a shrunk list can make one)
            return {"__refused__": [f"input {i} {inp['input']}: {exc}"]}
        check(inp, first=(i == 0))
        if found:
            return found
    if finish and not (inputs and _quiescent(driver, inputs[-1])):
        settle_phase(driver, settle, after=check)
    return found


def _quiescent(driver: Driver, inp: dict[str, Any]) -> bool:
    """Whether ``inp`` is a settle marked quiescent that ended a settle phase: every server up, no link cut
    (a shrunk list can keep the marked settle and lose the heal or the restarts before it)."""
    world = driver.world
    return bool(inp.get("quiescent")) and all(world.up.values()) and not world.network.has_cut_links()


def minimize(inputs: Inputs, invariant: str, mode: Mode = Mode.CLARIFIED,
             log: Callable[[str], None] | None = None, *, settle: dict[str, float] | None = None,
             budget: float | None = None, should_stop: Callable[[], bool] | None = None,
             like: str | None = None, skip_idle_timers: bool = False) -> Inputs:
    """The smallest inputs (by ddmin, then simplification) that still violate ``invariant``.

    ``like``: one violation text of the original failure; a candidate then counts only when one of
    its violations has the same shape (names, numbers and GUIDs aside), so that the shrinking does not
    slide to another failure of the same invariant (a server left down instead of a missing replica).
    ``budget``: stop shrinking after that many seconds and return the smallest found so far;
    ``should_stop``: asked before each replay, True stops shrinking the same way (a replay count
    makes the result deterministic, a time budget cannot).
    """
    deadline = None if budget is None else time.monotonic() + budget

    def fails(candidate: Inputs) -> bool:
        if deadline is not None and time.monotonic() > deadline:
            return False
        if should_stop is not None and should_stop():
            return False
        found = violations(candidate, mode, stop=invariant, settle=settle,
                           skip_idle_timers=skip_idle_timers).get(invariant)
        return bool(found) and (like is None or any(_shape(p) == _shape(like) for p in found))

    if not fails(inputs):
        raise ValueError(f"the inputs do not violate {invariant}")
    head, body = inputs[:1], inputs[1:]
    n = 2
    while len(body) >= 1:
        chunk = max(1, len(body) // n)
        reduced = False
        for start in range(0, len(body), chunk):
            candidate = body[:start] + body[start + chunk:]
            if fails(head + candidate):
                body = candidate
                n = max(n - 1, 2)
                reduced = True
                if log:
                    log(f"{len(body)} inputs")
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(n * 2, len(body))
    # simplify what is left: shorter repeats, shorter waits
    for i, inp in enumerate(body):
        for smaller in _simpler(inp):
            candidate = body[:i] + [smaller] + body[i + 1:]
            if fails(head + candidate):
                body = candidate
                inp = smaller
    return head + body


def scenario_for(inputs: Inputs, mode: Mode = Mode.CLARIFIED, settle: dict[str, float] | None = None,
                 description: str = "") -> dict[str, Any]:
    """The scenario file of ``inputs`` followed by the run's ending (heal, restarts, settles: see
    settle_phase, unless the inputs end with one) and ``expect: {converged: true}``."""
    driver = Driver(mode, ghost=False)
    for inp in inputs:
        driver.apply(inp)
    tail = [] if inputs and inputs[-1].get("quiescent") else settle_phase(driver, settle)
    return to_scenario(inputs + tail, description, final=[{"expect": {"converged": True}}])


def _shape(problem: str) -> str:
    """A violation's text with its GUIDs, numbers and server names blanked (what kind of violation it is)."""
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "G", problem)
    return re.sub(r"\b[A-Za-z]*\d[\w]*", "N", text)


def _simpler(inp: dict[str, Any]) -> list[dict[str, Any]]:
    if inp["input"] == "repeat":
        return [{**inp, "times": t} for t in (1, 2, 32, 256, 300, 1030, 1100) if t < inp["times"]]
    if inp["input"] == "advance":
        return [{**inp, "seconds": s} for s in (0.01, 0.1, 1.0, 10.0, 60.0) if s < inp["seconds"]]
    if inp["input"] in ("drop", "duplicate", "delay") and inp.get("times", 1) > 1:
        return [{**inp, "times": 1}]
    return []


def _refuse(path: str, why: str) -> int:
    """One line naming the inputs file and why it cannot be shrunk; exit status 2 (a usage error, as argparse's)."""
    print(f"minimize.py: error: {path}: {why}", file=sys.stderr)
    return 2


def _unwritable(path: str) -> str | None:
    """Why the shrunk inputs could not be written to ``path``, or None."""
    target = Path(path)
    if target.is_dir():
        return "is a directory"
    folder = target.parent
    if not folder.is_dir():
        return f"no such folder {str(folder)!r}"
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return "not writable"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="shrink a failing run's inputs (a JSON list) to a counterexample")
    ap.add_argument("inputs")
    ap.add_argument("--invariant", required=True, choices=inv.NAMES)
    ap.add_argument("--mode", choices=[m.value for m in Mode], default="clarified")
    ap.add_argument("--out", help="write the shrunk inputs here (JSON)")
    ap.add_argument("--like", metavar="VIOLATION", help="a violation text of the failure: keep only candidates with one of that shape")
    args = ap.parse_args(argv)
    if args.out and (why := _unwritable(args.out)):  # before the shrink, which can take minutes
        return _refuse(args.out, why)
    try:
        with open(args.inputs, encoding="utf-8") as f:
            inputs = json.load(f)
    except OSError as exc:
        return _refuse(args.inputs, exc.strerror or str(exc))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _refuse(args.inputs, f"not JSON: {exc}")
    if not isinstance(inputs, list) or not all(isinstance(i, dict) for i in inputs):
        return _refuse(args.inputs, "not a JSON list of inputs (objects)")
    try:
        small = minimize(inputs, args.invariant, Mode(args.mode), log=lambda m: print(m, file=sys.stderr),
                         like=args.like)
    except ValueError as exc:  # an input the explorer has no such kind of, or inputs that violate nothing
        return _refuse(args.inputs, str(exc))
    text = json.dumps(small, indent=1)
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:  # the shrunk inputs are not lost: they go to stdout instead
            print(text)
            return _refuse(args.out, f"{exc.strerror or exc}; the shrunk inputs are on stdout")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
