"""bench/codec.py: the quick run reports every figure and baselines that agree with mqspec; the headline is cold.

The ratios themselves are not checked: they depend on the machine and its load, and a test must
give the same answer on every run. What is checked is a ratio of two of mqspec's own passes timed
side by side: the cold figure against the same codec with its memos switched off.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqspec.model import mqdsrp

from tests.bench import load
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
    """construct built mqspec's bytes for every corpus message and, with the hand struct decoder, parsed a sample to mqspec's fields."""
    agreement = report["baseline_agreement"]
    assert agreement["bytes_equal"] is True and agreement["fields_equal"] is True
    assert agreement["struct_fields_equal"] is True
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
        for codec, ops in (("mqspec", ("decode", "encode")), ("construct", ("decode", "encode")),
                           ("struct", ("decode",))):
            for op in ops:
                rates = figures[codec][op]
                assert rates["mb_per_s"] > 0 and rates["msgs_per_s"] > 0 and rates["seconds"] > 0
        assert figures["decode_ratio_vs_construct"] > 0
        assert figures["encode_ratio_vs_construct"] > 0
        assert figures["decode_ratio_vs_struct"] > 0
        for variant in ("warm", "memos_off"):
            assert figures[variant]["decode_ratio_vs_construct"] > 0
            assert figures[variant]["encode_ratio_vs_construct"] > 0


def test_the_report_names_the_memos_it_empties_and_the_warm_figures_apart(report):
    """The report lists every registered memo as emptied before each cold pass, and gives the warm figures under "warm"."""
    emptied = report["memos_emptied_before_each_cold_pass"]
    assert {"mqspec.model.mqdsrp._KNOWN_CHANGES", "mqspec.model.mqdsrp_changes._ENCODED"} <= set(emptied)
    assert emptied == sorted(emptied)
    for key in ("decode_ratio_vs_construct", "encode_ratio_vs_construct"):
        assert report["warm"][key] > 0 and report["memos_off"][key] > 0


def test_overall_figures_add_up_the_kinds(report):
    """The overall byte and message counts are the sums over the kinds."""
    overall = report["overall"]
    assert overall["bytes"] == sum(v["bytes"] for v in report["corpus"].values())
    assert overall["messages"] == sum(v["messages"] for v in report["corpus"].values())


def _load_bench():
    return load("codec")


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


def test_the_cold_figure_is_the_codec_without_its_memos():
    """Cold passes take as long as passes with the memos switched off (within the noise), while warm passes are far faster.

    Were a cold pass to find values of an earlier pass in a memo, it would fall towards the warm
    time (a few percent of the memo-less time for decode, a fifth for encode). CPU time, medians
    of nine interleaved repetitions of the MC-MQDSRP kinds of the quick corpus.
    """
    bench = _load_bench()
    corpus = {kind: messages for kind, messages in bench.build_corpus(bench.SEED, quick=True).items()
              if kind.startswith("mqdsrp.")}
    seconds = bench.time_passes(corpus, repeat=9, ops=tuple(op for op in bench.OPS if op.startswith("mqspec_")))
    for op in ("decode", "encode"):
        cold, warm, off = (sum(per_op[f"mqspec_{op}{variant}"] for per_op in seconds.values())
                           for variant in ("", "_warm", "_memos_off"))
        assert 0.6 <= cold / off <= 1.8, (op, cold, off)
        assert warm / off < 0.5, (op, warm, off)  # the memos do matter: the check above can fail


def test_switching_the_memos_off_restores_the_codecs():
    """memos_switched_off puts the memo lookups back on leaving, and the codec gives the same values inside it."""
    from mqspec.model import mqdsrp_changes

    bench = _load_bench()
    msg = bench.build_corpus(3, quick=True)["mqdsrp.ChangePropagationMessage"][0]
    wire = mqdsrp.encode(msg)
    before = (mqdsrp._decode_known_change, mqdsrp.encode_directory_change)
    with bench.memos_switched_off():
        assert mqdsrp.encode_directory_change is mqdsrp_changes._encode_directory_change
        assert mqdsrp.decode(wire) == msg and mqdsrp.encode(msg) == wire
    assert (mqdsrp._decode_known_change, mqdsrp.encode_directory_change) == before


@settings(max_examples=60)
@given(st.one_of(change_propagation_messages(max_changes=4), sync_reply_messages(max_changes=4)))
def test_struct_baseline_reads_mqspecs_fields_on_drawn_messages(msg):
    """On any drawn replication message, the hand struct decoder reads the fields mqspec decodes."""
    _load_bench()  # puts bench/ on sys.path
    import construct_baseline as cb
    import struct_baseline as sb

    wire = mqdsrp.encode(msg)
    assert sb.decode_mqdsrp(wire) == cb.to_construct(mqdsrp.decode(wire))
