"""Codec throughput: mqspec's MC-MQDSRP and MS-MQSD codecs against a declarative construct baseline.

Run ``python bench/codec.py --json`` (``--quick`` for a short run). The corpus is built with
``random.Random(seed)``, so every run measures the same bytes:

* ``mqdsrp.ChangePropagationMessage``: 50 DirectoryChanges each, queue and machine objects
  created, updated and deleted with their usual properties (path names, labels, GUIDs, quotas,
  times, *_SEQNUM blobs, CN and site GUID vectors, keys), and a SeqNumberHeader;
* ``mqdsrp.SyncReplyMessage``: 500 DirectoryChanges each;
* ``mqsd.TopologyServerReply``: several connected networks and directory servers.

Before timing, the script checks that the construct baseline is the same codec: its build of
every corpus message equals mqspec's encode byte for byte, and on a sample its parse equals
mqspec's decode field by field. Then it times decode (bytes -> values) and encode (values ->
bytes) of the whole corpus for each implementation, several repetitions, one process on one
core, and reports medians. Ratios are mqspec throughput over construct throughput.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import construct
import construct_baseline as cb
import struct_baseline as sb
from mqspec import memos
from mqspec.model import mqdsrp, mqdsrp_changes, mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    PartitionSeqNumbers,
    SeqNumberHeader,
    SyncReplyMessage,
)
from mqspec.model.propids import PROPIDS
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber

SEED = 20240611

# --- the corpus -------------------------------------------------------------------------------


def _p(name: str) -> int:
    return PROPIDS[name].propid


class CorpusBuilder:
    """Draws realistic directory objects and changes from one seeded random generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.sites = [self.guid() for _ in range(4)]
        self.cns = [self.guid() for _ in range(3)]
        self.machines = [f"{self.word(5, 9)}{self.rng.randrange(100):02d}".upper()
                         for _ in range(24)]
        self.machine_ids = {m: self.guid() for m in self.machines}
        self.seq = self.rng.randrange(1 << 40, 1 << 44)

    def guid(self) -> Guid:
        return Guid(self.rng.randbytes(16))

    def word(self, low: int, high: int) -> str:
        return "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz")
                       for _ in range(self.rng.randint(low, high)))

    def seqnum(self) -> SequenceNumber:
        self.seq += self.rng.randint(1, 3)
        return SequenceNumber(self.seq)

    def queue_properties(self, machine: str, full: bool) -> list[Property]:
        rng = self.rng
        name = f"{machine}\\{self.word(4, 10)}_{self.word(3, 8)}"
        created = rng.randrange(1_500_000_000, 1_700_000_000)
        props = [
            Property(_p("PROPID_Q_PATHNAME"), name),
            Property(_p("PROPID_Q_LABEL"), f"{self.word(4, 9).title()} {self.word(3, 12)} queue"),
            Property(_p("PROPID_Q_QUOTA"), rng.choice((0xFFFFFFFF, 1 << 20, 8 << 20))),
            Property(_p("PROPID_Q_JOURNAL_QUOTA"), rng.choice((0xFFFFFFFF, 1 << 20))),
            Property(_p("PROPID_Q_MODIFY_TIME"), created + rng.randrange(10_000_000)),
            Property(_p("PROPID_Q_SEQNUM"), rng.randbytes(8)),
        ]
        if full:
            props += [
                Property(_p("PROPID_Q_INSTANCE"), self.guid()),
                Property(_p("PROPID_Q_TYPE"), rng.choice((Guid.NULL, self.guid()))),
                Property(_p("PROPID_Q_QMID"), self.machine_ids[machine]),
                Property(_p("PROPID_Q_PARTITIONID"), Guid.NULL),
                Property(_p("PROPID_Q_JOURNAL"), rng.randrange(2)),
                Property(_p("PROPID_Q_BASEPRIORITY"), rng.randrange(-5, 6)),
                Property(_p("PROPID_Q_CREATE_TIME"), created),
                Property(_p("PROPID_Q_AUTHENTICATE"), rng.randrange(2)),
                Property(_p("PROPID_Q_PRIV_LEVEL"), rng.randrange(3)),
                Property(_p("PROPID_Q_TRANSACTION"), rng.randrange(2)),
                Property(_p("PROPID_Q_HASHKEY"), rng.randrange(1 << 32)),
                Property(_p("PROPID_Q_LABEL_HASHKEY"), rng.randrange(1 << 32)),
                Property(_p("PROPID_Q_SECURITY"), rng.randbytes(rng.randrange(48, 120))),
            ]
        return props

    def machine_properties(self, machine: str, full: bool) -> list[Property]:
        rng = self.rng
        props = [
            Property(_p("PROPID_QM_PATHNAME"), machine),
            Property(_p("PROPID_QM_SITE_ID"), rng.choice(self.sites)),
            Property(_p("PROPID_QM_ADDRESS"), bytes((2, 0, 0, 0)) + rng.randbytes(4)),
            Property(_p("PROPID_QM_CNS"), tuple(rng.sample(self.cns, rng.randint(1, 3)))),
            Property(_p("PROPID_QM_QUOTA"), rng.choice((0xFFFFFFFF, 1 << 30))),
            Property(_p("PROPID_QM_SEQNUM"), rng.randbytes(8)),
        ]
        if full:
            props += [
                Property(_p("PROPID_QM_MACHINE_ID"), self.machine_ids[machine]),
                Property(_p("PROPID_QM_PATHNAME_DNS"), f"{machine.lower()}.corp.example.com"),
                Property(_p("PROPID_QM_SERVICE"), rng.choice((0, 1, 2, 4))),
                Property(_p("PROPID_QM_JOURNAL_QUOTA"), 0xFFFFFFFF),
                Property(_p("PROPID_QM_MACHINE_TYPE"), "Windows Server 2003 - 5.2.3790"),
                Property(_p("PROPID_QM_CREATE_TIME"), rng.randrange(1_500_000_000, 1_700_000_000)),
                Property(_p("PROPID_QM_FOREIGN"), 0),
                Property(_p("PROPID_QM_OS"), rng.choice((0x200, 0x300, 0x400))),
                Property(_p("PROPID_QM_SITE_IDS"), tuple(rng.sample(self.sites, 2))),
                Property(_p("PROPID_QM_ENCRYPTION_PK"), rng.randbytes(rng.randrange(72, 140))),
                Property(_p("PROPID_QM_OUTFRS"), ()),
                Property(_p("PROPID_QM_INFRS"), ()),
            ]
        return props

    def change(self, partition: Guid) -> DirectoryChange:
        """One change as a PSC propagates it: mostly updates, some creates and deletes."""
        rng = self.rng
        prev, seq = self.seqnum(), self.seqnum()
        purged = SequenceNumber(max(0, seq.value - rng.randrange(5_000, 50_000)))
        command = rng.choices((Command.CREATE, Command.UPDATE, Command.DELETE), (25, 60, 15))[0]
        machine = rng.choice(self.machines)
        queue = rng.random() < 0.75
        if command is Command.DELETE:
            props = [Property(_p("PROPID_Q_SEQNUM" if queue else "PROPID_QM_SEQNUM"),
                              rng.randbytes(8))]
            return DirectoryChange(command, partition, prev, seq, purged, props,
                                   guid_identifier=self.guid())
        full = command is Command.CREATE
        props = (self.queue_properties(machine, full) if queue
                 else self.machine_properties(machine, full))
        if not full:  # an update touches a few properties
            props = rng.sample(props, rng.randint(2, len(props)))
        if full or rng.random() < 0.5:  # created (and many updated) objects are named by path
            return DirectoryChange(command, partition, prev, seq, purged, props,
                                   path_name=props[0].value if props[0].propid in (
                                       _p("PROPID_Q_PATHNAME"), _p("PROPID_QM_PATHNAME"))
                                   else f"{machine}\\{self.word(4, 10)}")
        return DirectoryChange(command, partition, prev, seq, purged, props,
                               guid_identifier=self.guid())

    def change_propagation(self) -> ChangePropagationMessage:
        rng = self.rng
        partition = rng.choice((Guid.NULL, *self.sites))
        changes = tuple(self.change(partition) for _ in range(50))
        if rng.random() < 0.5:
            header = SeqNumberHeader(rng.choice(self.machines), tuple(
                PartitionSeqNumbers(p, self.seqnum(), SequenceNumber(self.seq - 40_000))
                for p in rng.sample(self.sites, 2)))
        else:
            header = mqdsrp.EMPTY_SEQ_NUMBER_HEADER
        return ChangePropagationMessage(rng.choice(self.sites), rng.random() < 0.2, changes,
                                        header)

    def sync_reply(self) -> SyncReplyMessage:
        rng = self.rng
        partition = rng.choice(self.sites)
        first = self.seqnum()
        changes = tuple(self.change(partition) for _ in range(500))
        return SyncReplyMessage(rng.choice(self.sites), partition, first, self.seqnum(),
                                SequenceNumber(first.value - 100_000),
                                rng.choice(tuple(CompleteSync0)), changes)

    def server_reply(self) -> mqsd.TopologyServerReply:
        rng = self.rng
        networks = tuple(self.guid() for _ in range(rng.randint(1, 4)))
        mask = 0
        if rng.random() < 0.3:  # an IPX reply: one mask bit per connected network
            mask = sum(1 << b for b in rng.sample(range(32), len(networks)))
        servers = tuple(
            mqsd.DirectoryServiceServer(
                f"{rng.choice(self.machines).lower()}.{self.word(3, 8)}.example.com",
                ip=True, ipx=mask != 0)
            for _ in range(rng.randint(2, 8)))
        return mqsd.TopologyServerReply(self.guid(), networks, mask, rng.choice(self.sites),
                                        servers)


#: kind -> (protocol, builder method, messages in a full run, messages in a quick run)
KINDS = {
    "mqdsrp.ChangePropagationMessage": ("mqdsrp", "change_propagation", 40, 6),
    "mqdsrp.SyncReplyMessage": ("mqdsrp", "sync_reply", 4, 1),
    "mqsd.TopologyServerReply": ("mqsd", "server_reply", 2000, 200),
}
CODECS = {"mqdsrp": (mqdsrp.decode, mqdsrp.encode), "mqsd": (mqsd.decode, mqsd.encode)}


def build_corpus(seed: int, quick: bool) -> dict[str, list]:
    """kind -> model messages, the same for the same seed."""
    builder = CorpusBuilder(seed)
    return {kind: [getattr(builder, method)() for _ in range(quick_n if quick else full_n)]
            for kind, (_, method, full_n, quick_n) in KINDS.items()}


# --- equivalence of the two codecs -----------------------------------------------------------


def check_agreement(corpus: dict[str, list], sample_every: int) -> dict:
    """Compare the two codecs before timing them: construct must build mqspec's bytes for every
    message, and parse every ``sample_every``-th message to the fields mqspec decodes."""
    built = parsed = 0
    mismatches = []
    for kind, messages in corpus.items():
        protocol = KINDS[kind][0]
        decode, encode = CODECS[protocol]
        struct = cb.STRUCTS[protocol]
        for i, msg in enumerate(messages):
            wire = encode(msg)
            built += 1
            if struct.build(cb.to_construct(msg)) != wire:
                mismatches.append(f"{kind}[{i}]: construct builds other bytes than mqspec")
            if i % sample_every == 0:
                parsed += 1
                ours = decode(wire)
                if ours != msg or cb.plain(struct.parse(wire)) != cb.to_construct(ours):
                    mismatches.append(f"{kind}[{i}]: construct parses other fields than mqspec")
                if sb.DECODERS[protocol](wire) != cb.to_construct(ours):
                    mismatches.append(f"{kind}[{i}]: the struct decoder reads other fields than mqspec")
    return {
        "bytes_equal": not any("bytes" in m for m in mismatches),
        "fields_equal": not any("fields" in m for m in mismatches),
        "struct_fields_equal": not any("struct decoder" in m for m in mismatches),
        "messages_built": built,
        "messages_parsed": parsed,
        "mismatches": mismatches[:20],
    }


# --- timing ------------------------------------------------------------------------------------


def _one_pass(fn: Callable[[object], object], items: list, keep_gc: bool,
              before: Callable[[], None] | None = None) -> float:
    """Seconds of one pass of ``fn`` over ``items``, by default with the garbage collector off
    (as timeit does): a collection would charge the whole heap, the corpus included, to
    whichever codec happens to trigger it. ``before`` runs first, untimed (it empties memos)."""
    if before is not None:
        before()
    gc.collect()
    if not keep_gc:
        gc.disable()
    try:
        t0 = time.process_time()
        for x in items:
            fn(x)
        return time.process_time() - t0
    finally:
        gc.enable()


@contextlib.contextmanager
def memos_switched_off() -> Iterator[None]:
    """The codecs without their memos: each DirectoryChange decoded by ``decode_directory_change``
    and encoded by ``_encode_directory_change`` itself, as if ``_decode_known_change`` and
    ``encode_directory_change``'s remembered wire forms did not exist."""
    saved = (mqdsrp._decode_known_change, mqdsrp.encode_directory_change)
    mqdsrp._decode_known_change = mqdsrp.decode_directory_change
    mqdsrp.encode_directory_change = mqdsrp_changes._encode_directory_change
    try:
        yield
    finally:
        mqdsrp._decode_known_change, mqdsrp.encode_directory_change = saved


def _rates(nbytes: int, nmsgs: int, seconds: float) -> dict[str, float]:
    return {"seconds": round(seconds, 6), "mb_per_s": round(nbytes / seconds / 1e6, 3),
            "msgs_per_s": round(nmsgs / seconds, 1)}


#: the operations timed in every repetition, in this order: mqspec's cold decode (every memo
#: emptied first), its warm decode (right after, so that every change is in the memo), its
#: decode with the memos switched off, construct's and the hand struct decoder's; then the same
#: for encode (no struct encoder)
OPS = ("mqspec_decode", "mqspec_decode_warm", "mqspec_decode_memos_off", "construct_decode",
       "struct_decode", "mqspec_encode", "mqspec_encode_warm", "mqspec_encode_memos_off",
       "construct_encode")


def _work(corpus: dict[str, list]) -> dict[str, dict]:
    """kind -> op -> (function, items, what runs untimed before each pass), and the kind's sizes."""
    work = {}
    for kind, messages in corpus.items():
        protocol = KINDS[kind][0]
        decode, encode = CODECS[protocol]
        struct_ = cb.STRUCTS[protocol]
        wires = [encode(m) for m in messages]
        work[kind] = {
            "mqspec_decode": (decode, wires, memos.clear_all),
            "mqspec_decode_warm": (decode, wires, None),
            "mqspec_decode_memos_off": (decode, wires, memos.clear_all),
            "construct_decode": (struct_.parse, wires, None),
            "struct_decode": (sb.DECODERS[protocol], wires, None),
            "mqspec_encode": (encode, messages, memos.clear_all),
            "mqspec_encode_warm": (encode, messages, None),
            "mqspec_encode_memos_off": (encode, messages, memos.clear_all),
            "construct_encode": (struct_.build, [cb.to_construct(m) for m in messages], None),
            "bytes": sum(map(len, wires)), "messages": len(messages),
        }
    return work


def time_passes(corpus: dict[str, list], repeat: int, keep_gc: bool = False,
                ops: tuple[str, ...] = OPS) -> dict[str, dict[str, float]]:
    """kind -> op -> the median CPU seconds of a pass of ``op`` (of :data:`OPS`, in its order)
    over the kind's messages; every repetition runs each op once for each kind, interleaved, so
    that a burst of load on a shared machine falls on all of them."""
    work = _work(corpus)
    ops = tuple(op for op in OPS if op in ops)
    samples: dict[str, dict[str, list[float]]] = {kind: {op: [] for op in ops} for kind in work}
    # the memos-off pass alternates between after and before the cold and warm pair (a pass's place in
    # the repetition shifts its time by several percent), so that neither has the better place each time
    swapped = list(ops)
    for off in (op for op in ops if op.endswith("_memos_off")):
        cold = off.removesuffix("_memos_off")
        if cold in swapped:
            swapped.remove(off)
            swapped.insert(swapped.index(cold), off)
    for repetition in range(repeat):
        for kind, w in work.items():
            for op in (ops if repetition % 2 == 0 else swapped):
                fn, items, before = w[op]
                if op.endswith("_memos_off"):
                    with memos_switched_off():
                        samples[kind][op].append(_one_pass(fn, items, keep_gc, before))
                else:
                    samples[kind][op].append(_one_pass(fn, items, keep_gc, before))
    memos.clear_all()
    return {kind: {op: statistics.median(s) for op, s in per_op.items()} for kind, per_op in samples.items()}


def measure(corpus: dict[str, list], repeat: int, keep_gc: bool = False) -> dict:
    """The figures of every operation on each kind and over the whole corpus (:func:`time_passes`).

    The headline (``mqspec_decode``, ``mqspec_encode``) is cold: every registered memo
    (:mod:`mqspec.memos`) is emptied before each of its passes, so no value decoded or encoded
    in an earlier pass (or the agreement check) is given back. The warm pass follows the cold one
    and finds every change in the memos: the simulator's case, where one change reaches many
    replicas.
    """
    seconds = time_passes(corpus, repeat, keep_gc)
    per_kind = {}
    totals = dict.fromkeys(OPS, 0.0)
    total_bytes = total_msgs = 0
    for kind, messages in corpus.items():
        sec = seconds[kind]
        for op in OPS:
            totals[op] += sec[op]
        nbytes = sum(len(CODECS[KINDS[kind][0]][1](m)) for m in messages)
        nmsgs = len(messages)
        total_bytes += nbytes
        total_msgs += nmsgs
        per_kind[kind] = _figures(nbytes, nmsgs, sec)
    memos.clear_all()
    return {**_figures(total_bytes, total_msgs, totals), "kinds": per_kind}


def _figures(nbytes: int, nmsgs: int, sec: dict[str, float]) -> dict:
    def ratio(peer: str, ours: str) -> float:
        return round(sec[peer] / sec[ours], 2)

    return {
        "decode_ratio_vs_construct": ratio("construct_decode", "mqspec_decode"),
        "encode_ratio_vs_construct": ratio("construct_encode", "mqspec_encode"),
        "decode_ratio_vs_struct": ratio("struct_decode", "mqspec_decode"),
        "messages": nmsgs,
        "bytes": nbytes,
        "mqspec": {"decode": _rates(nbytes, nmsgs, sec["mqspec_decode"]),
                   "encode": _rates(nbytes, nmsgs, sec["mqspec_encode"])},
        "construct": {"decode": _rates(nbytes, nmsgs, sec["construct_decode"]),
                      "encode": _rates(nbytes, nmsgs, sec["construct_encode"])},
        "struct": {"decode": _rates(nbytes, nmsgs, sec["struct_decode"])},
        "warm": {
            "decode_ratio_vs_construct": ratio("construct_decode", "mqspec_decode_warm"),
            "encode_ratio_vs_construct": ratio("construct_encode", "mqspec_encode_warm"),
            "mqspec": {"decode": _rates(nbytes, nmsgs, sec["mqspec_decode_warm"]),
                       "encode": _rates(nbytes, nmsgs, sec["mqspec_encode_warm"])},
        },
        "memos_off": {
            "decode_ratio_vs_construct": ratio("construct_decode", "mqspec_decode_memos_off"),
            "encode_ratio_vs_construct": ratio("construct_encode", "mqspec_encode_memos_off"),
            "mqspec": {"decode": _rates(nbytes, nmsgs, sec["mqspec_decode_memos_off"]),
                       "encode": _rates(nbytes, nmsgs, sec["mqspec_encode_memos_off"])},
        },
        # cold seconds over memos-off seconds: about 1 when the cold figure times no memo hit
        # (a little above: a cold pass also fills the memos), well below 1 when it does
        "cold_over_memos_off": {"decode": round(sec["mqspec_decode"] / sec["mqspec_decode_memos_off"], 3),
                                "encode": round(sec["mqspec_encode"] / sec["mqspec_encode_memos_off"], 3)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--quick", action="store_true", help="a small corpus, 3 repetitions")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeat", type=int, default=None, help="repetitions (default 7, 3 quick)")
    parser.add_argument("--gc", action="store_true",
                        help="leave the garbage collector on while timing (default: off)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 7)

    corpus = build_corpus(args.seed, args.quick)
    agreement = check_agreement(corpus, sample_every=1 if args.quick else 5)
    report = {
        "benchmark": "codec",
        "quick": args.quick,
        "seed": args.seed,
        "repetitions": repeat,
        "statistic": "median",
        "clock": "time.process_time (CPU seconds), one process, one thread",
        "gc_during_timing": args.gc,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "construct": construct.version_string,
        "baseline_agreement": agreement,
    }
    if agreement["mismatches"]:  # timing two different codecs would mean nothing
        print(json.dumps(report, indent=2))
        return 1
    results = measure(corpus, repeat, keep_gc=args.gc)
    report.update({
        "memos_emptied_before_each_cold_pass": sorted(memos.MEMOS),
        "corpus": {kind: {"messages": v["messages"], "bytes": v["bytes"]}
                   for kind, v in results["kinds"].items()},
        "decode_ratio_vs_construct": results.pop("decode_ratio_vs_construct"),
        "encode_ratio_vs_construct": results.pop("encode_ratio_vs_construct"),
        "decode_ratio_vs_struct": results.pop("decode_ratio_vs_struct"),
        "warm": results.pop("warm"),
        "memos_off": results.pop("memos_off"),
        "cold_over_memos_off": results.pop("cold_over_memos_off"),
        "overall": {k: results.pop(k) for k in ("messages", "bytes", "mqspec", "construct", "struct")},
        "kinds": results["kinds"],
    })
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        warm = report["warm"]
        print(f"cold: decode {report['decode_ratio_vs_construct']}x, "
              f"encode {report['encode_ratio_vs_construct']}x construct, decode "
              f"{report['decode_ratio_vs_struct']}x the hand struct decoder "
              f"({report['overall']['bytes']} bytes, {repeat} repetitions, median); "
              f"warm (memos kept): decode {warm['decode_ratio_vs_construct']}x, "
              f"encode {warm['encode_ratio_vs_construct']}x construct")
        for kind, v in results["kinds"].items():
            print(f"  {kind}: decode {v['mqspec']['decode']['mb_per_s']} MB/s "
                  f"({v['decode_ratio_vs_construct']}x), encode "
                  f"{v['mqspec']['encode']['mb_per_s']} MB/s ({v['encode_ratio_vs_construct']}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
