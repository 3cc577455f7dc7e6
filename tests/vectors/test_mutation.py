"""Mutation testing of the handler vectors: mutants of the reference handlers are told apart.

The default tier mutates the two acknowledgement handlers, whose role tests an independent
implementation once dropped unnoticed (3.2.7.4 "is a PEC", 3.2.7.5 "If queue manager is not
PSC"); ``bench/vector_mutation.py`` runs every MC-MQDSRP handler (the slow tier too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mqspec.refimpl import mqdsrp_server as server
from mqspec.vectors import mutation
from mqspec.vectors.writer import generate


@pytest.fixture(scope="module")
def handler_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handler vectors, written once for this module."""
    out = tmp_path_factory.mktemp("mutation") / "tree"
    generate(out, ("handler",))
    return out


def test_mutants_name_the_guard_they_change():
    """Each guard of 3.2.7.5 gives its mutants: the role test negated and dropped, the neighbor test likewise."""
    names = [m.name for m in mutation.mutants_of(server.receive_bsc_ack)]
    assert "mqdsrp_server.receive_bsc_ack drop-then: if not qm.is_psc -> if not qm.is_psc: pass" in names
    assert "mqdsrp_server.receive_bsc_ack negate: if neighbor is None -> if not neighbor is None" in names
    assert len(names) == len(set(names))


def test_a_mutant_runs_in_place_of_the_handler_and_is_put_back():
    """Installing a mutant changes what callers run; leaving the block restores the reference code."""
    original = server.receive_bsc_ack.__code__
    drop = next(m for m in mutation.mutants_of(server.receive_bsc_ack) if m.operator == "drop-then")
    with mutation.installed(server.receive_bsc_ack, mutation.mutant_code(server.receive_bsc_ack, drop)):
        assert server.receive_bsc_ack.__code__ is not original
    assert server.receive_bsc_ack.__code__ is original


def test_acknowledgement_handlers_have_no_surviving_mutant(handler_tree: Path):
    """Every mutant of Receive PSC Ack and Receive BSC Ack fails some handler vector (none is equivalent)."""
    outcomes = mutation.run_mutants(handler_tree, functions=[server.receive_psc_ack, server.receive_bsc_ack])
    assert len(outcomes) > 20
    assert [o.mutant.name for o in outcomes if o.status != "killed"] == []
    killed = {o.mutant.name: o.killed_by for o in outcomes}
    role = killed["mqdsrp_server.receive_psc_ack drop-operand: qm.is_pec [and operand 0] -> (dropped)"]
    assert "psc-ignores-enterprise-acks" in role
    bsc = killed["mqdsrp_server.receive_bsc_ack drop-then: if not qm.is_psc -> if not qm.is_psc: pass"]
    assert "bsc-with-a-bsc-neighbor" in bsc


def test_equivalent_mutants_are_named_with_a_reason():
    """Each entry of equivalent_mutants.yaml names a mutant that exists and says why it is equivalent."""
    listed = mutation.equivalent_mutants()
    existing = {m.name for f in mutation.handler_functions() for m in mutation.mutants_of(f)}
    assert sorted(set(listed) - existing) == []
    assert all(len(reason) > 40 for reason in listed.values())


@pytest.mark.slow
def test_no_handler_has_a_surviving_mutant(handler_tree: Path):
    """Every mutant of every MC-MQDSRP handler is killed by a vector or listed as equivalent, and no listing is stale."""
    result = mutation.report(mutation.run_mutants(handler_tree))
    assert result["mutants"] > 600
    assert result["survivors"] == [] and result["stale_equivalents"] == []
