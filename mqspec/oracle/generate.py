"""Generated traces: a random enterprise workload on the simulator, recorded in the published format.

Deterministic for a seed. Used by the mutation tests and by ``bench/check.py``: an enterprise of
``sites`` sites (the PEC's and ``sites - 1`` PSCs) with ``bscs`` BSCs each, then ``changes``
directory client requests (queue creates, updates and deletes at random servers, BSCs included,
so change requests travel) spread over simulated time, with optional faults (lost, duplicated
and delayed messages; a crash and restart of a PSC), snapshots every ``snapshot_every``
simulated seconds and at the end.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from typing import Any

from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqds import ClientRequest
from mqspec.refimpl.transport import MessageClass
from mqspec.refimpl.world import World, add_bsc, add_site, bootstrap_pec, create_machine

from .record import RECORDED_KINDS, TraceRecorder
from .trace_format import TraceWriter, header

P = {name: pdef.propid for name, pdef in PROPIDS.items()}


def generate(*, seed: int = 1, sites: int = 2, bscs: int = 1, changes: int = 20, interval: float = 5.0,
             faults: bool = False, crash: bool = False, snapshot_every: float = 300.0,
             mode: Mode = Mode.CLARIFIED, directory: bool = True, trace_id: str | None = None,
             quiet: float = 30.0, write: Callable[[str], object] | None = None) -> str:
    """The NDJSON text of one generated trace (see the module docstring).

    ``quiet`` is how long the enterprise must stay unchanged after each building step (and at the
    end) before the next: the default leaves room for every propagation timer; shorter gives a
    smaller trace. With ``write`` each line goes there as it is made (a file, for traces larger
    than memory should hold) and the text returned is empty.
    """
    out = io.StringIO()
    tid = trace_id or f"generated:{mode.value}:{seed}:{sites}x{bscs}:{changes}"
    writer = TraceWriter(tid, write or out.write)
    writer(header(source=f"mqspec.oracle.generate seed={seed}", mode=mode.value, observes=RECORDED_KINDS))
    world = World(mode=mode, seed=seed)
    recorder = TraceRecorder(world, writer, directory=directory)
    rng = random.Random(seed)
    names = _build(world, sites, bscs, quiet)
    recorder.snapshot()
    if faults:
        _faults(world, rng)
    live: list[tuple[str, Any]] = []  # (queue path, site name)
    next_snapshot = world.now + snapshot_every
    crashed: str | None = None
    for i in range(changes):
        world.advance(interval * (0.5 + rng.random()))
        if crash and i == changes // 2 and sites > 1:
            crashed = names["psc"][1]
            world.crash(crashed)
        if crashed is not None and i == changes // 2 + 3:
            world.restart(crashed)
            crashed = None
        at = rng.choice([n for n in names["all"] if world.up.get(n)])
        _request(world, rng, at, live, sites)
        if world.now >= next_snapshot:
            recorder.snapshot()
            next_snapshot = world.now + snapshot_every
    if crashed is not None:
        world.restart(crashed)
    world.settle(window=min(10.0, quiet / 3), quiet=2 * quiet, limit=3600.0)
    recorder.snapshot()
    return out.getvalue()


def _build(world: World, sites: int, bscs: int, quiet: float) -> dict[str, list[str]]:
    settle = {"window": min(10.0, quiet / 3), "quiet": quiet, "limit": 3600.0}
    bootstrap_pec(world, "PEC0", "site0")
    world.settle(**settle)
    pscs = ["PEC0"]
    for s in range(1, sites):
        add_site(world, f"site{s}", f"PSC{s}")
        pscs.append(f"PSC{s}")
        world.settle(**settle)
    bsc_names = []
    for s in range(sites):
        for b in range(bscs):
            add_bsc(world, f"site{s}", f"BSC{s}{b}")
            bsc_names.append(f"BSC{s}{b}")
            world.settle(**settle)
    for s in range(sites):
        create_machine(world, pscs[s], f"C{s}", f"site{s}")
    world.settle(**settle)
    return {"psc": pscs, "bsc": bsc_names, "all": pscs + bsc_names}


def _request(world: World, rng: random.Random, at: str, live: list[tuple[str, Any]], sites: int) -> None:
    roll = rng.random()
    if live and roll < 0.25:
        path, site = live.pop(rng.randrange(len(live)))
        world.client_request(at, ClientRequest("delete", ObjectType.MQDS_QUEUE, world.site_guid(site),
                                               path_name=path, scope=1))
    elif live and roll < 0.5:
        path, site = rng.choice(live)
        world.client_request(at, ClientRequest(
            "update", ObjectType.MQDS_QUEUE, world.site_guid(site), path_name=path,
            properties=(Property(P["PROPID_Q_LABEL"], f"label {rng.randrange(1000)}"),)))
    else:
        s = rng.randrange(sites)
        path = f"C{s}\\q{rng.randrange(10**6)}"
        live.append((path, f"site{s}"))
        world.client_request(at, ClientRequest(
            "create", ObjectType.MQDS_QUEUE, world.site_guid(f"site{s}"), path_name=path,
            properties=(Property(P["PROPID_Q_PATHNAME"], path), Property(P["PROPID_Q_SCOPE"], 1),
                        Property(P["PROPID_Q_LABEL"], f"queue {path}"))))


def _faults(world: World, rng: random.Random) -> None:
    """A few lost, duplicated and delayed replication messages (acknowledgments are left alone)."""
    net = world.network

    def normal(msg: Any) -> bool:
        return msg.klass is MessageClass.NORMAL

    net.drop(lambda m: normal(m) and rng.random() < 0.05)
    net.duplicate(lambda m: normal(m) and rng.random() < 0.05)
    net.delay(lambda m: normal(m) and rng.random() < 0.1, 3.0)
