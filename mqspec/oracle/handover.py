"""A PSC handover in a trace: the ``handover`` event (format 2) that declares it (modelling E-313).

When a site's PSC moves to another machine (:mod:`mqspec.refimpl.handover`, the scenario step
``move_psc``), the new machine takes over the old PSC's persisted replication state (3.1.1) and
its directory, and the site's BSCs are configured with the new PSC's name. No input of the trace
explains either, so the trace declares them, one ``handover`` event per server concerned, with
``site`` (the site GUID) and ``old`` (the old PSC's machine name):

* at the new PSC (``node``), after its declaration and before its first ``start``: ``state``,
  what it takes over, exactly what :func:`mqspec.refimpl.handover.take_over` transfers::

    {"partitions": [{"partition", "authority", "last_seq", "purged_seq", "allowed_purge_seq",
                     "purge_state"}, ...],
     "psc_neighbors": [{"name", "partition", "acked_seq", "acked_pec_seq", "acked_time"}, ...],
     "bsc_neighbors": [...],
     "tombstones": [{"guid", "partition", "seq", "type", "scope"}, ...],
     "objects": [{"guid", "type", "path", "partition", "seq", "properties": [{"propid", "value"}]}]}

  the persisted attributes of DirectoryPartition (3.1.1.2.3; its site partition names the new
  PSC as authority), DirectoryNeighbor (3.1.1.2.4; ``acked_time`` is LastAckedTime on the trace
  clock) and DeletedObject (3.1.1.2.2), in the old server's collection order (which orders what a
  server sends), and the directory's objects by GUID with their properties by PROPID, less those
  the directory keeps itself (the identity GUID, ``*_PARTITIONID``, ``*_SEQNUM``, the path name).
  What 3.1.1 does not persist (pending changes, AvailableChangeCollection, ChangeMissingWindow) is
  not taken over, so it is not declared;
* at each BSC of the site (``node``): ``new``, the new PSC's name; from now on it is the BSC's
  configured PSC (what 3.1.3.1 computes MyPSCName from at its next initialization).

A handover gives ``state`` or ``new``, never both.

``mqspec check`` builds the new PSC's reference copy from the declared state. When the trace also
replays the old PSC, the declaration must be what the reference hands over from the old PSC's
replayed state at that point; any other declaration, or a site partition that does not name the
new PSC, is a divergence naming 3.1.7.2.11 (modelling E-313). A declaration the reference cannot
take (a node of another site or role, a new PSC that already started, a property value of the
wrong shape) is malformed input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.refimpl import directory as store
from mqspec.refimpl.directory import DirectoryStore
from mqspec.refimpl.handover import take_over
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PurgeState,
    QueueManager,
    Role,
)
from mqspec.refimpl.status import MQ_OK

from .inputs import InputError

if TYPE_CHECKING:
    from .replay import Divergence, NodeReplay


# --- the encoding ---------------------------------------------------------------------------------


def state_of(qm: QueueManager) -> dict[str, Any]:
    """The ``state`` a new PSC holds just after the handover (the canonical encoding)."""
    return {
        "partitions": [{"partition": str(p.partition_id), "authority": p.authority_name,
                        "last_seq": p.last_seq_number.value, "purged_seq": p.purged_seq_number.value,
                        "allowed_purge_seq": p.allowed_purge_seq_number.value, "purge_state": p.purge_state.name}
                       for p in qm.partitions],
        "psc_neighbors": [_neighbor(n) for n in qm.psc_neighbors],
        "bsc_neighbors": [_neighbor(n) for n in qm.bsc_neighbors],
        "tombstones": [{"guid": str(d.identifier) if d.identifier is not None else None,
                        "partition": str(d.partition_id), "seq": d.seq_number.value, "type": d.object_type,
                        "scope": d.scope} for d in qm.deleted_objects],
        "objects": [_object(o) for o in sorted(qm.directory.objects.values(), key=lambda o: str(o.guid))],
    }


def _neighbor(n: DirectoryNeighbor) -> dict[str, Any]:
    # LastAckedTime on the trace clock, which a trace gives to the microsecond (its "t"): the replay's
    # clock reads those rounded times, the recording World's sums of advances do not round
    return {"name": n.machine_name, "partition": str(n.partition_id), "acked_seq": n.acked_seq_number.value,
            "acked_pec_seq": n.acked_pec_seq_number.value, "acked_time": round(n.last_acked_time, 6)}


def _kept_by_the_store(object_type: int) -> set[int | None]:
    return {store.identity_propid(object_type), store.partition_propid(object_type),
            store.seqnum_propid(object_type), store.pathname_propid(object_type)}


def _object(o: Any) -> dict[str, Any]:
    kept = _kept_by_the_store(o.object_type)
    return {"guid": str(o.guid), "type": int(o.object_type), "path": o.path_name, "partition": str(o.partition_id),
            "seq": o.seq_number.value,
            "properties": [converter.unstructure(Property(pid, o.properties[pid]))
                           for pid in sorted(o.properties) if pid not in kept]}


def records(qm: QueueManager, site: Any, old: str, bscs: list[str]) -> list[dict[str, Any]]:
    """The ``handover`` events of a move to ``qm`` (the new PSC, after the take-over): its own with
    the state, then one per BSC of the site (by name); without the trace id, format, event and clock."""
    head = {"site": str(site), "old": old}
    return [{"node": qm.machine_name, **head, "state": state_of(qm)},
            *({"node": name, **head, "new": qm.machine_name} for name in sorted(bscs))]


# --- the replay -----------------------------------------------------------------------------------


def restore(qm: QueueManager, state: dict[str, Any], index: int) -> None:
    """Give a new PSC's reference copy the declared state; InputError for a value it cannot take."""
    qm.partitions = [_partition(p) for p in state["partitions"]]
    qm.psc_neighbors = [_neighbor_of(n) for n in state["psc_neighbors"]]
    qm.bsc_neighbors = [_neighbor_of(n) for n in state["bsc_neighbors"]]
    qm.deleted_objects = [DeletedObject(Guid.parse(d["guid"]) if d["guid"] is not None else None,
                                        Guid.parse(d["partition"]), SequenceNumber(d["seq"]), d["type"], d["scope"])
                          for d in state["tombstones"]]
    directory = DirectoryStore()
    for i, o in enumerate(state["objects"]):
        where = f"state.objects[{i}]"
        properties = []
        for j, p in enumerate(o["properties"]):
            try:
                properties.append(converter.structure(p, Property))
            except (ModelError, ValueError, TypeError, KeyError) as exc:
                raise InputError(index, f"{where}.properties[{j}]", f"not a property value: {exc}") from None
        status = directory.create(o["type"], o["path"], Guid.parse(o["guid"]), properties,
                                  Guid.parse(o["partition"]), SequenceNumber(o["seq"]))
        if status != MQ_OK:
            raise InputError(index, where, f"the directory cannot hold this object (status {status:#010x}: "
                                           "an unknown type, a property of another type, or a GUID or path twice)")
    qm.directory = directory


def _partition(p: dict[str, Any]) -> DirectoryPartition:
    return DirectoryPartition(Guid.parse(p["partition"]), p["authority"], SequenceNumber(p["last_seq"]),
                              SequenceNumber(p["purged_seq"]), SequenceNumber(p["allowed_purge_seq"]),
                              PurgeState[p["purge_state"]])


def _neighbor_of(n: dict[str, Any]) -> DirectoryNeighbor:
    return DirectoryNeighbor(Guid.parse(n["partition"]), n["name"], SequenceNumber(n["acked_seq"]),
                             SequenceNumber(n["acked_pec_seq"]), float(n["acked_time"]))


def take(replay: NodeReplay, index: int, record: dict[str, Any]) -> None:
    """A ``handover`` event at ``replay``'s node: the new PSC takes over the declared state (and it
    is verified), a BSC of the site is configured with the new PSC's name."""
    decl = replay.decl
    new = record.get("new", decl["name"])
    _check_node(decl, record, new, index, replay.qm is not None)
    replay.checked += 1
    replay.errata.add("E-313")
    if "new" in record:
        taker = replay.peers.get(new)
        if taker is not None and taker.behavioural and taker.took_over != (record["site"].lower(), record["old"]):
            raise InputError(index, "new", f"{new} has not taken over site {record['site']} from {record['old']} "
                                           "(the new PSC's handover, with its state, comes first)")
        if replay.qm is None:  # not started yet: it starts with the new name
            replay.decl = {**decl, "psc": new}
        else:
            replay.qm.configured_psc_name = new
        return
    replay._build()
    restore(replay.qm, record["state"], index)
    replay.took_over = (record["site"].lower(), record["old"])
    old = replay.peers.get(record["old"])
    trusted = old is not None and old.qm is not None and old.divergence is None
    expected = expected_state(replay.qm, old.qm) if trusted else None  # type: ignore[union-attr]
    diffs = differences(expected, state_of(replay.qm), record["site"].lower(), new)
    if diffs:
        replay._diverge(_divergence(replay.name, index, record, diffs, trusted))


def _check_node(decl: dict[str, Any], record: dict[str, Any], new: str, index: int, started: bool) -> None:
    """The server a handover names must be the new PSC, not yet started, or a BSC of the site."""
    name, site = decl["name"], record["site"].lower()
    if decl["site"].lower() != site:
        raise InputError(index, "site", f"{name} is declared in site {decl['site']}, not {record['site']}")
    if new == record["old"]:
        raise InputError(index, "new" if "new" in record else "old", f"the new PSC is the old one ({new})")
    if "state" in record:
        if decl["role"] != Role.PSC.value:
            raise InputError(index, "node", f"the new PSC {name} is declared as a {decl['role']}, not a PSC")
        if started:
            raise InputError(index, "node", f"the new PSC {name} has already started (or taken over): it takes "
                                            "over once, before its first start")
    elif decl["role"] != Role.BSC.value:
        raise InputError(index, "node", f"{name} learns the new PSC's name (new), but it is a {decl['role']}, "
                                        "not a BSC")


def expected_state(new: QueueManager, old: QueueManager) -> dict[str, Any]:
    """What the reference hands ``new`` from the old PSC's (replayed) state, encoded."""
    scratch = QueueManager(new.machine_name, new.identifier, new.site_identifier, new.role, new.pec_name)
    take_over(scratch, old)
    return state_of(scratch)


def differences(expected: dict[str, Any] | None, declared: dict[str, Any], site: str,
                new: str) -> list[dict[str, Any]]:
    """Field-level differences of a declared state (encoded by :func:`state_of`) from the expected
    one; with no expected state (the old PSC not replayed), only what every handover keeps: the
    site partition names the new PSC."""
    if expected is None:
        return [{"field": f"partitions.{p['partition']}.authority", "expected": new, "actual": p["authority"]}
                for p in declared["partitions"] if p["partition"] == site and p["authority"] != new]
    diffs: list[dict[str, Any]] = []
    for part, key in (("partitions", "partition"), ("objects", "guid")):
        mine = {e[key]: e for e in expected[part]}
        theirs = {e[key]: e for e in declared[part]}
        for k in sorted(mine.keys() | theirs.keys()):
            a, b = mine.get(k), theirs.get(k)
            if a is None or b is None:
                diffs.append({"field": f"{part}.{k}", "expected": a, "actual": b})
            else:
                diffs.extend({"field": f"{part}.{k}.{f}", "expected": a[f], "actual": b[f]}
                             for f in a if a[f] != b[f])
    for part in ("psc_neighbors", "bsc_neighbors", "tombstones"):
        mine_list, theirs_list = sorted(expected[part], key=repr), sorted(declared[part], key=repr)
        if mine_list != theirs_list:
            diffs.append({"field": part, "expected": [e for e in mine_list if e not in theirs_list],
                          "actual": [e for e in theirs_list if e not in mine_list]})
    return diffs


def _divergence(name: str, index: int, record: dict[str, Any], diffs: list[dict[str, Any]],
                trusted: bool) -> Divergence:
    from mqspec.refimpl.mqdsrp_objects import handle_site_update

    from .attribution import clause_of
    from .replay import Divergence

    first = diffs[0]
    why = (f"the reference hands over {first['expected']!r} from {record['old']}'s replayed state" if trusted
           else f"the new PSC owns its site partition ({first['expected']!r})")
    return Divergence(
        index, name, "handover",
        f"{name} takes over {first['field']} {first['actual']!r} from {record['old']}; {why} (modelling E-313)",
        expected=first["expected"], actual=first["actual"], diff=tuple(diffs), clause=clause_of(handle_site_update))
