"""mqspec.memos: every memo the code keeps is registered, and clear_all empties them all.

A benchmark empties the registered memos before each timed repetition (CONVENTIONS.md); a memo
left out of the registry would be timed warm without anyone noticing. So the test runs a workload
through every layer (codecs, a scenario with the invariants, an explorer run, the trace checker)
and looks for module-level containers of mqspec that grew during it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from pathlib import Path

import mqspec
from mqspec import memos
from mqspec.refimpl.effects import Mode

ROOT = Path(__file__).resolve().parents[1]
#: module-level containers that grow by design and remember no input: the registries filled as
#: modules import, the stack of open clause coverages (empty again once they close), and the table
#: of instrumentable functions clause coverage builds once from the clause registry (the same
#: table in every process, whatever ran before; emptying it under an open coverage would break it)
NOT_MEMOS = {"mqspec.clauses._REGISTRY", "mqspec.memos.MEMOS", "mqspec.oracle.coverage._ACTIVE",
             "mqspec.oracle.coverage._TARGETS"}


def _modules() -> list[str]:
    """Every module of the installed folders but the command line, the pipeline and the docs."""
    names = []
    for package in ("mqspec.model", "mqspec.refimpl", "mqspec.proofs", "mqspec.oracle", "mqspec.vectors"):
        module = importlib.import_module(package)
        names.append(package)
        names += [info.name for info in pkgutil.walk_packages(module.__path__, package + ".")]
    return names


def _containers() -> dict[str, object]:
    """name -> every dict, list, set or lru_cache function held at module level by an mqspec module."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("mqspec") or module is None:
            continue
        for attribute, value in vars(module).items():
            if isinstance(value, dict | list | set) or isinstance(value, functools._lru_cache_wrapper):
                if getattr(value, "__module__", name) == name:
                    found[f"{name}.{attribute}"] = value
    return found


def _size(value: object) -> int:
    if isinstance(value, functools._lru_cache_wrapper):
        return value.cache_info().currsize
    return len(value)  # type: ignore[arg-type]


def _workload(tmp_path: Path) -> None:
    """Codecs, a scenario recorded with the invariants watched, the checker over its trace, an explorer run."""
    from mqspec.model import mqdsrp
    from mqspec.oracle.check import check
    from mqspec.oracle.record import record_scenario
    from mqspec.proofs.explore.run import explore_run
    from mqspec.proofs.scenario_watch import InvariantWatch
    from mqspec.refimpl import scenario

    trace = tmp_path / "trace.ndjson"
    with trace.open("w", encoding="utf-8") as out:
        record_scenario(scenario.load(ROOT / "scenarios" / "4.2-adding-a-bsc.yaml"), mode=Mode.CLARIFIED,
                        write=out.write, watch=InvariantWatch())
    check(trace)
    explore_run(3, "ci", Mode.CLARIFIED)
    reply = mqdsrp.SyncReplyMessage(mqdsrp.Guid.NULL, mqdsrp.Guid.NULL, mqdsrp.SequenceNumber(1),
                                    mqdsrp.SequenceNumber(1), mqdsrp.SequenceNumber(0),
                                    mqdsrp.CompleteSync0.NOT_IN_SYNC0, ())
    mqdsrp.decode_shared(mqdsrp.encode(reply))


def test_every_memo_that_fills_during_a_workload_is_registered(tmp_path):
    """No module-level container of mqspec grows during a workload through every layer unless it is a registered memo."""
    for name in _modules():
        importlib.import_module(name)
    before = {name: _size(value) for name, value in _containers().items()}
    _workload(tmp_path)
    registered = {id(memo.target) for memo in memos.MEMOS.values()}
    grown = sorted(name for name, value in _containers().items()
                   if _size(value) > before.get(name, 0) and id(value) not in registered and name not in NOT_MEMOS)
    assert grown == [], f"module-level containers that fill like memos but are not in mqspec.memos: {grown}"


def test_clear_all_empties_every_registered_memo(tmp_path):
    """After a workload, clear_all leaves every registered memo empty."""
    _workload(tmp_path)
    memos.clear_all()
    full = [memo.name for memo in memos.MEMOS.values()
            if not isinstance(memo.target, tuple) and _size(memo.target) != 0]
    assert full == []


def test_a_cleared_memo_changes_no_result():
    """Decoding and encoding give equal values with the memos full and after clear_all."""
    from mqspec.model import mqdsrp
    from tests.strategies_mqdsrp import change_propagation_messages

    from hypothesis import given, settings

    @settings(max_examples=20, database=None)
    @given(change_propagation_messages(max_changes=3))
    def roundtrip(msg):
        wire = mqdsrp.encode(msg)
        warm = (mqdsrp.decode(wire), mqdsrp.encode(msg), mqdsrp.decode(wire))
        memos.clear_all()
        assert (mqdsrp.decode(wire), mqdsrp.encode(msg)) == (msg, wire) == warm[:2]
        assert warm[2] == msg

    roundtrip()
    assert mqspec.__version__
