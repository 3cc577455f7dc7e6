"""bench/codec.py: the quick run reports every figure and a baseline that agrees with mqspec.

The ratios themselves are not checked: they depend on the machine and its load, and a test must
give the same answer on every run.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqspec.model import mqdsrp

from tests.strategies_mqdsrp import change_propagation_messages, sync_reply_messages

BENCH = Path(__file__).resolve().parents[2] / "bench" / "codec.py"
KINDS = ("mqdsrp.ChangePropagationMessage", "mqdsrp.SyncReplyMessage", "mqsd.TopologyServerReply")


@pytest.fixture(scope="module")
def report() -> dict:
    """The JSON report of one quick run."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_quick_run_reports_the_ratios_and_the_environment(report):
    """The report carries both overall ratios, the Python version and the run's parameters."""
    for key in ("decode_ratio_vs_construct", "encode_ratio_vs_construct"):
        assert isinstance(report[key], float) and report[key] > 0
    assert report["python"] == ".".join(map(str, sys.version_info[:3]))
    assert report["quick"] is True and report["statistic"] == "median"
    assert report["repetitions"] >= 3


def test_baseline_builds_the_same_bytes_and_parses_the_same_fields(report):
    """construct built mqspec's bytes for every corpus message and parsed a sample to mqspec's fields."""
    agreement = report["baseline_agreement"]
    assert agreement["bytes_equal"] is True and agreement["fields_equal"] is True
    assert agreement["mismatches"] == []
    total = sum(v["messages"] for v in report["corpus"].values())
    assert agreement["messages_built"] == total
    assert agreement["messages_parsed"] >= len(KINDS)


def test_every_kind_has_throughput_figures_for_both_codecs(report):
    """Each corpus kind reports its size and decode/encode MB/s and messages/s for both codecs."""
    assert set(report["corpus"]) == set(KINDS) == set(report["kinds"])
    for kind in KINDS:
        figures = report["kinds"][kind]
        assert figures["messages"] == report["corpus"][kind]["messages"] > 0
        assert figures["bytes"] == report["corpus"][kind]["bytes"] > 0
        for codec in ("mqspec", "construct"):
            for op in ("decode", "encode"):
                rates = figures[codec][op]
                assert rates["mb_per_s"] > 0 and rates["msgs_per_s"] > 0 and rates["seconds"] > 0
        assert figures["decode_ratio_vs_construct"] > 0
        assert figures["encode_ratio_vs_construct"] > 0


def test_overall_figures_add_up_the_kinds(report):
    """The overall byte and message counts are the sums over the kinds."""
    overall = report["overall"]
    assert overall["bytes"] == sum(v["bytes"] for v in report["corpus"].values())
    assert overall["messages"] == sum(v["messages"] for v in report["corpus"].values())


@functools.cache
def _load_bench():
    """bench/codec.py as a module (it puts bench/ on sys.path for its baseline)."""
    spec = importlib.util.spec_from_file_location("mqspec_bench_codec", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_corpus_is_the_same_for_the_same_seed():
    """Two corpora built from one seed are equal, and another seed gives another corpus."""
    bench = _load_bench()
    first = bench.build_corpus(7, quick=True)
    assert first == bench.build_corpus(7, quick=True)
    assert first != bench.build_corpus(8, quick=True)
    assert all(len(c.changes) == 50 for c in first["mqdsrp.ChangePropagationMessage"])
    assert all(len(c.changes) == 500 for c in first["mqdsrp.SyncReplyMessage"])


@settings(max_examples=60)
@given(st.one_of(change_propagation_messages(max_changes=4), sync_reply_messages(max_changes=4)))
def test_baseline_agrees_with_mqspec_on_drawn_messages(msg):
    """On any drawn replication message, construct builds mqspec's bytes and parses them back to its fields."""
    _load_bench()  # puts bench/ on sys.path
    import construct_baseline as cb

    wire = mqdsrp.encode(msg)
    assert cb.ReplicationMessage.build(cb.to_construct(msg)) == wire
    assert cb.plain(cb.ReplicationMessage.parse(wire)) == cb.to_construct(mqdsrp.decode(wire))
