"""The published shape of a node's replication state, and the comparison ``mqspec check`` makes.

A ``snapshot`` event carries ``state``, any part of::

    {"role": "PSC", "site": GUID,
     "partitions": {PartitionID: {"authority", "last_seq", "purged_seq", "allowed_purge_seq",
                                  "purge_state", "pending", "objects": {GUID: {"type", "path", "seq"}}}},
     "psc_neighbors": [{"name", "partition", "acked_seq", "acked_pec_seq", "available"}],
     "bsc_neighbors": [...], "tombstones": [{"guid", "partition", "seq", "type", "scope"}]}

which are the 3.1.1 data elements: DirectoryPartition (3.1.1.2.3), the partition's directory
objects, DirectoryNeighbor (3.1.1.2.4, ``available`` counts AvailableChangeCollection) and
DeletedObject (3.1.1.2.2). Only what is given is compared: a partition not listed, a field left
out. Collections given are compared whole: ``objects`` key by key, the neighbor and tombstone
lists as multisets of the fields their elements give (every element gives the same fields).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from mqspec.model.guid import Guid
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    QueueManager,
)
from mqspec.wording import plural

#: the 3.1.1 element each top-level part of a state describes (for divergence reports)
STATE_SECTIONS = {
    "role": "3.1.1.3", "site": "3.1.1.3", "partitions": "3.1.1.2.3", "objects": "3.1.1.2.3",
    "psc_neighbors": "3.1.1.2.4", "bsc_neighbors": "3.1.1.2.4", "tombstones": "3.1.1.2.2",
}


@attrs.frozen
class StateDiff:
    """One field of a snapshot that differs: the reference's value (expected) and the trace's (actual)."""

    field: str
    expected: Any
    actual: Any

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "expected": self.expected, "actual": self.actual}


_PARTITION: dict[str, Callable[[DirectoryPartition], Any]] = {
    "authority": lambda p: p.authority_name,
    "last_seq": lambda p: p.last_seq_number.value,
    "purged_seq": lambda p: p.purged_seq_number.value,
    "allowed_purge_seq": lambda p: p.allowed_purge_seq_number.value,
    "purge_state": lambda p: p.purge_state.name,
    "pending": lambda p: len(p.pending_changes),
}
_NEIGHBOR: dict[str, Callable[[DirectoryNeighbor], Any]] = {
    "name": lambda n: n.machine_name,
    "partition": lambda n: str(n.partition_id),
    "acked_seq": lambda n: n.acked_seq_number.value,
    "acked_pec_seq": lambda n: n.acked_pec_seq_number.value,
    "available": lambda n: len(n.available_changes),
}
_TOMBSTONE: dict[str, Callable[[DeletedObject], Any]] = {
    "guid": lambda d: str(d.identifier) if d.identifier is not None else None,
    "partition": lambda d: str(d.partition_id),
    "seq": lambda d: d.seq_number.value,
    "type": lambda d: d.object_type,
    "scope": lambda d: d.scope,
}
_GUID_FIELDS = frozenset(("partition", "guid", "site"))


def node_state(qm: QueueManager) -> dict[str, Any]:
    """The whole published state of one node (what a full snapshot carries)."""
    partitions = {}
    for p in qm.partitions:
        entry = {name: get(p) for name, get in _PARTITION.items()}
        entry["objects"] = {str(o.guid): {"type": int(o.object_type), "path": o.path_name, "seq": o.seq_number.value}
                            for o in sorted(qm.directory.objects_in(p.partition_id), key=lambda o: str(o.guid))}
        partitions[str(p.partition_id)] = entry
    return {
        "role": qm.role.value,
        "site": str(qm.site_identifier),
        "partitions": partitions,
        "psc_neighbors": [{k: get(n) for k, get in _NEIGHBOR.items()} for n in qm.psc_neighbors],
        "bsc_neighbors": [{k: get(n) for k, get in _NEIGHBOR.items()} for n in qm.bsc_neighbors],
        "tombstones": [{k: get(d) for k, get in _TOMBSTONE.items()} for d in qm.deleted_objects],
    }


def compare_state(given: dict[str, Any], qm: QueueManager) -> list[StateDiff]:
    """Every difference between the fields ``given`` (a trace's snapshot) and the reference node."""
    diffs: list[StateDiff] = []
    for part, value in given.items():
        if part == "role":
            _same(diffs, "role", qm.role.value, value)
        elif part == "site":
            _same(diffs, "site", str(qm.site_identifier), _lower(value))
        elif part == "partitions":
            for pid, fields in value.items():
                _compare_partition(diffs, pid, fields, qm)
        elif part in ("psc_neighbors", "bsc_neighbors"):
            _compare_multiset(diffs, part, value, getattr(qm, part), _NEIGHBOR)
        elif part == "tombstones":
            _compare_multiset(diffs, part, value, qm.deleted_objects, _TOMBSTONE)
        # "x-" extensions are not compared
    return diffs


def _same(diffs: list[StateDiff], field: str, expected: Any, actual: Any) -> None:
    if expected != actual:
        diffs.append(StateDiff(field, expected, actual))


def _lower(value: Any) -> Any:
    return value.lower() if type(value) is str else value


def _compare_partition(diffs: list[StateDiff], pid: str, fields: dict[str, Any], qm: QueueManager) -> None:
    where = f"partitions.{pid}"
    partition = qm.find_partition(Guid.parse(pid))
    if partition is None:
        diffs.append(StateDiff(where, None, "present"))
        return
    for name, value in fields.items():
        if name == "objects":
            _compare_objects(diffs, where, partition, value, qm)
        elif name in _PARTITION:
            _same(diffs, f"{where}.{name}", _PARTITION[name](partition), value)


def _compare_objects(diffs: list[StateDiff], where: str, partition: DirectoryPartition,
                     given: dict[str, Any], qm: QueueManager) -> None:
    reference = {str(o.guid): o for o in qm.directory.objects_in(partition.partition_id)}
    seen = set()
    for guid, fields in given.items():
        key = guid.lower()
        seen.add(key)
        obj = reference.get(key)
        if obj is None:
            diffs.append(StateDiff(f"{where}.objects.{guid}", None, fields))
            continue
        values = {"type": int(obj.object_type), "path": obj.path_name, "seq": obj.seq_number.value}
        for name, value in fields.items():
            if name in values:
                _same(diffs, f"{where}.objects.{guid}.{name}", values[name], value)
    for key in sorted(reference.keys() - seen):
        obj = reference[key]
        diffs.append(StateDiff(f"{where}.objects.{key}",
                               {"type": int(obj.object_type), "path": obj.path_name, "seq": obj.seq_number.value},
                               None))


def _compare_multiset(diffs: list[StateDiff], part: str, given: list[dict[str, Any]], items: list[Any],
                      getters: dict[str, Callable[[Any], Any]]) -> None:
    """A collection given as a list: the multiset of the projected elements must be equal."""
    keys = [k for k in (given[0] if given else {}) if k in getters]
    mine = Counter(tuple(_lower(e[k]) if k in _GUID_FIELDS else e[k] for k in keys) for e in given)
    theirs = Counter(tuple(getters[k](item) for k in keys) for item in items)
    if mine == theirs:
        return
    missing = sorted((theirs - mine).elements(), key=repr)
    extra = sorted((mine - theirs).elements(), key=repr)
    diffs.append(StateDiff(
        part,
        [dict(zip(keys, t)) for t in missing] if keys else plural(len(items), "element"),
        [dict(zip(keys, t)) for t in extra] if keys else plural(len(given), "element"),
    ))


def state_paths(state: dict[str, Any]) -> list[tuple[str, ...]]:
    """Every leaf of a state as a key path (what a mutation test perturbs)."""
    out: list[tuple[str, ...]] = []

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(v, (*path, k))
        elif isinstance(value, list) and value:
            for i, v in enumerate(value):
                walk(v, (*path, str(i)))
        else:
            out.append(path)

    walk(state, ())
    return out


def reference_value(qm: QueueManager, field: str) -> Any:
    """The reference node's current value at a diff's field path (for attributing a change)."""
    parts = field.split(".")
    if parts[0] in ("psc_neighbors", "bsc_neighbors"):
        return sorted(tuple(g(n) for g in _NEIGHBOR.values()) for n in getattr(qm, parts[0]))
    if parts[0] == "tombstones":
        return sorted((tuple(g(d) for g in _TOMBSTONE.values()) for d in qm.deleted_objects), key=repr)
    if parts[0] in ("role", "site"):
        return qm.role.value if parts[0] == "role" else str(qm.site_identifier)
    partition = qm.find_partition(Guid.parse(parts[1]))
    if partition is None:
        return None
    if len(parts) == 2:
        return True
    if parts[2] == "objects":
        objects = {str(o.guid): (int(o.object_type), o.path_name, o.seq_number.value)
                   for o in qm.directory.objects_in(partition.partition_id)}
        return objects.get(parts[3].lower()) if len(parts) > 3 else sorted(objects.items())
    return _PARTITION[parts[2]](partition)
