"""The handler steps of one replica change alone, outside the World: what scale.py's time per change cannot go below.

An authority (a PSC, its site partition holding ``--objects`` machine objects) runs Lookup Directory
Objects (3.2.7.8) as it does for each BSC that asks for a sync; the changes are chained as a Sync Reply
chains them (3.2.7.3), encoded and decoded; a BSC then applies each through Handle Directory Change
(3.1.7.2.2 -> 3.1.7.2.3 -> 3.1.7.2.8 -> Read and Create Directory Object -> the directory store). Every
memo is emptied before each repetition. No World, no messages, no timers, no garbage collector (off
while timing, as timeit does). Prints CPU microseconds per object for each part, medians of
``--repeat`` repetitions:

    python bench/replica_floor.py --json [--objects 2000] [--repeat 7]

The queue managers come from the handler tests' fixtures (tests/refimpl/mqdsrp_fixtures.py), so it runs
from a checkout.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mqspec import memos  # noqa: E402
from mqspec.model import mqdsrp  # noqa: E402
from mqspec.model.propids import ObjectType  # noqa: E402
from mqspec.model.seqnum import SequenceNumber  # noqa: E402
from mqspec.refimpl import sharing  # noqa: E402
from mqspec.refimpl.mqdsrp_common import handle_directory_change  # noqa: E402
from mqspec.refimpl.mqdsrp_server import lookup_directory_objects  # noqa: E402
from tests.refimpl.mqdsrp_fixtures import (  # noqa: E402
    MACHINE, SITE1, add_object, bsc_node, context, guid_of, machine_props, psc_node,
)

PARTS = ("lookup_at_the_authority", "encode_and_decode", "apply_at_the_replica")


def once(n: int) -> dict[str, float]:
    """CPU seconds of each part for ``n`` objects, every memo emptied first."""
    memos.clear_all()
    psc = psc_node()
    for i in range(n):
        add_object(psc, MACHINE, f"M{i}", guid_of(f"M{i}"), machine_props(f"M{i}", SITE1, 0, guid_of(f"M{i}")),
                   SITE1, at=i + 1)
    seconds = {}
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        changes = lookup_directory_objects(psc, context(psc), psc.find_partition(SITE1), ObjectType.MQDS_MACHINE,
                                           SequenceNumber(1), SequenceNumber(n), 0)
        seconds["lookup_at_the_authority"] = time.process_time() - start
        chained, previous = [], SequenceNumber(0)
        for change in changes:
            chained.append(sharing.with_previous(change, previous))
            previous = change.seq_number
        reply = mqdsrp.SyncReplyMessage(SITE1, SITE1, SequenceNumber(1), SequenceNumber(n), SequenceNumber(0),
                                        mqdsrp.CompleteSync0.NOT_IN_SYNC0, tuple(chained))
        memos.clear_all()
        start = time.process_time()
        decoded = mqdsrp.decode(mqdsrp.encode(reply))
        seconds["encode_and_decode"] = time.process_time() - start
        bsc = bsc_node()
        partition, ctx = bsc.find_partition(SITE1), context(bsc)
        start = time.process_time()
        for change in decoded.changes:
            handle_directory_change(bsc, ctx, partition, change, False)
        seconds["apply_at_the_replica"] = time.process_time() - start
    finally:
        gc.enable()
    if partition.last_seq_number != SequenceNumber(n) or len(bsc.directory) < n:
        raise SystemExit(f"the replica applied {partition.last_seq_number} of {n} changes")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    runs = [once(args.objects) for _ in range(args.repeat)]
    us = {part: round(statistics.median(r[part] for r in runs) / args.objects * 1e6, 2) for part in PARTS}
    result = {"benchmark": "replica_floor", "objects": args.objects, "repeat": args.repeat,
              "us_per_object": us,
              "handler_steps_per_replica_us": round(us["lookup_at_the_authority"] + us["apply_at_the_replica"], 2),
              "load_average": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version()}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for part, value in us.items():
            print(f"{part:26} {value:8.2f} us/object")
        print(f"{'handler steps per replica':26} {result['handler_steps_per_replica_us']:8.2f} us")


if __name__ == "__main__":
    main()
