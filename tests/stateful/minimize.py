"""Shrink a failing run's inputs to a small counterexample (delta debugging), and check inputs.

Hypothesis shrinks the machine's choices; this shrinks the recorded inputs themselves, which is
faster here (a run is a replay, with no re-drawing) and gives inputs that read as a scenario:

    python -m tests.stateful.minimize failing.json --invariant replicas_converge_at_quiescence

:func:`violations` replays inputs with the ghost attached, checks the invariants after every
input, and ends the way every machine run ends (heal, restart every server, settle, check the
quiescence invariants too). :func:`minimize` removes inputs (ddmin), then simplifies those left
(shorter repeats and waits) while the named invariant still fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from mqspec.proofs import invariants as inv
from mqspec.refimpl.effects import Mode

from .driver import Driver, InputRefused, to_scenario

Inputs = list[dict[str, Any]]


def finish_inputs(driver: Driver, settle: dict[str, float] | None = None) -> Inputs:
    """The inputs that end a run: heal, restart every server that is down, settle (see final_settle)."""
    out: Inputs = [{"input": "heal"}]
    out += [{"input": "restart", "node": n} for n, up in driver.world.up.items() if not up]
    out.append(final_settle(driver, settle))
    return out


#: a lost message may be asked for again only at the next SeqNumberHeader round (20 minutes, <12>)
HEADER_ROUND = 1200.0


def final_settle(driver: Driver, args: dict[str, float] | None = None) -> dict[str, Any]:
    """The settle that ends a run: ``args`` if given; else quiet for one SeqNumberHeader round more
    than the drop faults still armed can cost (each can lose the retry of one round)."""
    if args is not None:
        return {"input": "settle", "args": dict(args)}
    pending = driver.pending_drops()
    if not pending:
        return {"input": "settle"}
    quiet = (pending + 1) * HEADER_ROUND + 120.0
    return {"input": "settle", "args": {"quiet": quiet, "limit": max(6 * 3600.0, quiet + 2 * 3600.0)}}


def violations(inputs: Inputs, mode: Mode = Mode.CLARIFIED, names: tuple[str, ...] | None = None,
               *, finish: bool = True, stop: str | None = None,
               settle: dict[str, float] | None = None) -> dict[str, list[str]]:
    """Replay ``inputs`` (then the finishing settle), checking invariants after each; the first failures.

    Returns {invariant: violations} of the first input after which any named invariant (all by
    default) failed, or {} when none did; with ``stop`` only that invariant is looked for.
    """
    wanted = names if stop is None else (stop,)
    driver = Driver(mode)
    tail = []
    for i, inp in enumerate(inputs):
        try:
            driver.apply(inp)
        except InputRefused as exc:  # an input the state does not allow (a shrunk list can make one)
            return {"__refused__": [f"input {i} {inp['input']}: {exc}"]}
        obs = driver.ghost.observe(inp["input"], full=(i == 0))
        found = inv.check(obs, wanted)
        if found:
            return found
    if finish:
        tail = finish_inputs(driver, settle)
        for inp in tail:
            driver.apply(inp)
            quiet = inp["input"] == "settle"
            obs = driver.ghost.observe(inp["input"], quiescent=quiet, full=quiet, settled=driver.last_settle_quiet)
            found = inv.check(obs, wanted)
            if found:
                return found
    return {}


def minimize(inputs: Inputs, invariant: str, mode: Mode = Mode.CLARIFIED,
             log: Callable[[str], None] | None = None, *, settle: dict[str, float] | None = None,
             budget: float | None = None) -> Inputs:
    """The smallest inputs (by ddmin, then simplification) that still violate ``invariant``.

    ``budget``: stop shrinking after that many seconds and return the smallest found so far.
    """
    deadline = None if budget is None else time.monotonic() + budget

    def fails(candidate: Inputs) -> bool:
        if deadline is not None and time.monotonic() > deadline:
            return False
        return invariant in violations(candidate, mode, stop=invariant, settle=settle)

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
    """The scenario file of ``inputs`` followed by the run's ending (heal, restarts, settle) and
    ``expect: {converged: true}``."""
    driver = Driver(mode, ghost=False)
    for inp in inputs:
        driver.apply(inp)
    return to_scenario(inputs + finish_inputs(driver, settle), description,
                       final=[{"expect": {"converged": True}}])


def _simpler(inp: dict[str, Any]) -> list[dict[str, Any]]:
    if inp["input"] == "repeat":
        return [{**inp, "times": t} for t in (1, 2, 32, 256, 300, 1030, 1100) if t < inp["times"]]
    if inp["input"] == "advance":
        return [{**inp, "seconds": s} for s in (0.01, 0.1, 1.0, 10.0, 60.0) if s < inp["seconds"]]
    if inp["input"] in ("drop", "duplicate", "delay") and inp.get("times", 1) > 1:
        return [{**inp, "times": 1}]
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="shrink a failing run's inputs (a JSON list) to a counterexample")
    ap.add_argument("inputs")
    ap.add_argument("--invariant", required=True, choices=inv.NAMES)
    ap.add_argument("--mode", choices=[m.value for m in Mode], default="clarified")
    ap.add_argument("--out", help="write the shrunk inputs here (JSON)")
    args = ap.parse_args(argv)
    with open(args.inputs, encoding="utf-8") as f:
        inputs = json.load(f)
    small = minimize(inputs, args.invariant, Mode(args.mode), log=lambda m: print(m, file=sys.stderr))
    text = json.dumps(small, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
