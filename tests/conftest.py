"""Shared pytest configuration: hypothesis profiles for CI and for long local runs."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.register_profile("soak", deadline=None, max_examples=20_000)
settings.load_profile(os.environ.get("MQSPEC_HYPOTHESIS_PROFILE", "ci"))

#: The suite starts dozens of short-lived Spark JVMs (a session for each pipeline command it runs) on CI's two
#: cores, where it is CPU-bound. HotSpot's optimizing compiler (C2) and parallel collector spend CPU on code these
#: JVMs do not run long enough to gain from. Measured on two cores: a session and one job, 30 CPU-seconds with the
#: defaults, 17 with these options; tests/pipeline and the README examples, 1,606 CPU-seconds (827 s) with the
#: defaults, 1,104 (600 s) with these, the same 60 tests passing. spark-submit reads SPARK_SUBMIT_OPTS (a driver,
#: a Connect server), spark-class SPARK_DAEMON_JAVA_OPTS (a standalone master and worker); the standalone test gives
#: its executors the same (spark.executor.extraJavaOptions). Tests only: users' jobs keep the JVM's defaults, and
#: a value set before the tests run is kept.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
for _name in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
    os.environ.setdefault(_name, TEST_JVM_OPTIONS)


#: session fixtures each worker may build for itself: a local Spark session starts in seconds, while the
#: campaigns built on it take minutes
CHEAP = {"spark"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the tests' ids
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test`` runs two workers, one a core), the tests that share a session fixture of
    this suite run on one worker: the fixture (a Spark campaign, the docs' browser, a prove run) is then built once,
    not once a worker. A group is one connected set of such fixtures (two fixtures one test uses are one group),
    so that tests of unrelated fixtures (the prove runs, the literal campaign, the clarified one) run side by side."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    uses = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        keys = sorted({f"{d.baseid}::{name}" for name, defs in (info.name2fixturedefs.items() if info else ())
                       for d in defs if d.scope == "session" and d.baseid and name not in CHEAP})
        for key in keys:
            parent[root(key)] = root(keys[0])
        uses[item] = keys
    # a group is named by its smallest fixture, whatever the order the tests were collected in
    names: dict[str, str] = {}
    for key in sorted(parent):
        names.setdefault(root(key), key)
    for item, keys in uses.items():
        if keys:
            item.add_marker(pytest.mark.xdist_group(names[root(keys[0])]))
