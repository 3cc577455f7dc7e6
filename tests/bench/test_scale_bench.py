"""bench/scale.py: each point counts the replica changes applied, once per replica, and the time per change."""

from __future__ import annotations

import pytest

from mqspec.refimpl.effects import Mode

from tests.bench import load


def _bench():
    return load("scale")


def test_a_point_counts_each_object_a_replica_made_once():
    """In one site of ten servers every BSC creates each of the PEC's objects once, though most arrive twice."""
    bench = _bench()
    point = bench.point(10, 20, 1, True, Mode.CLARIFIED)
    assert point["converged"] is True and point["servers"] == 10
    world, _quiet = bench.build_and_settle(10, 20, 1, True, Mode.CLARIFIED)
    pec_objects = len(world.nodes["PEC0"].directory)
    # a build only creates: every change a replica applied made one of the objects it holds
    assert point["object_replicas_created"] == point["replica_changes_applied"] == 9 * pec_objects
    assert point["object_replicas"] == 10 * pec_objects
    assert point["us_per_replica_change"] == pytest.approx(
        point["build_settle_seconds"] / point["replica_changes_applied"] * 1e6, rel=0.02)


def test_the_exponents_are_slopes_of_the_log_of_the_time():
    """exponent fits log(seconds) over log(servers), exponent_in_replica_changes over log(replica changes)."""
    bench = _bench()
    points = [{"servers": n, "replica_changes_applied": n * n, "build_settle_seconds": 1e-3 * n ** 2}
              for n in (10, 100, 1000)]
    assert round(bench.exponent(points), 6) == 2.0
    assert round(bench.exponent(points, "replica_changes_applied"), 6) == 1.0
