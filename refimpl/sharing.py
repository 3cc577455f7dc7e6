"""Values the replicas of an enterprise share: memos of pure functions of immutable inputs.

In an enterprise of N directory servers every server holds every object, so N² replicas are
created from the same few changes. The handlers still run for every change at every replica;
what they share here is representation. Each function below is a pure function of frozen (or
otherwise immutable) inputs returning a frozen value, so equal inputs may get one shared value:

* :func:`sync_change`: the DirectoryChange Lookup Directory Objects (3.2.7.8) builds for one
  looked-up object. A PSC answers the same sync request of each of its BSCs, so every reply carries
  the same change values: built once, encoded once (``encode_directory_change`` keeps the bytes of
  a change object) and, the replies' bytes being equal, decoded once at the receivers
  (``mqdsrp.decode_shared``).
* :func:`with_previous`: a sync change chained to the change before it in a Sync Reply (3.2.7.3).

Each memo is emptied when it holds :data:`LIMIT` entries, so it costs the last few thousand
values. The handler modules keep the protocol's steps (and their guards); this module only
builds values.
"""

from __future__ import annotations

from mqspec import memos
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command, DirectoryChange
from mqspec.model.mqdsrp_changes import unchecked_constructor
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber

LIMIT = 1 << 14

#: sync_change's memo: its arguments -> (the types of the values that matter, the change)
_SYNC_CHANGES: dict[tuple[object, ...], tuple[tuple[type, ...], DirectoryChange]] = {}
#: with_previous's memo: (id(change), previous value) -> (the change, the chained change); an entry
#: holds its change, so no other object takes that id while the entry lives
_CHAINED: dict[tuple[int, int], tuple[DirectoryChange, DirectoryChange]] = {}
memos.register(f"{__name__}._SYNC_CHANGES", "3.2.7.8's arguments -> the sync change built from them", _SYNC_CHANGES)
memos.register(f"{__name__}._CHAINED", "(a change, a PreviousSeqNumber) -> the change chained to it (3.2.7.3)", _CHAINED)


def build_sync_change(
    partition_id: Guid, seq_blob: bytes, purged: SequenceNumber, properties: tuple[tuple[int, object], ...],
    guid: Guid,
) -> DirectoryChange:
    """"Command := 0x03, UseGuid := 0x01 ... SeqNumber := the property value of the first element" (3.2.7.8).

    ``seq_blob`` is the object's ``*_SEQNUM`` blob, ``properties`` the (PROPID, value) pairs the
    handler chose (E-124), ``purged`` the PurgedSeqNumber the reply carries.
    """
    return DirectoryChange(
        Command.SYNC, partition_id, SequenceNumber(0), SequenceNumber.from_bytes(seq_blob), purged,
        tuple(Property(propid, value) for propid, value in properties), guid_identifier=guid,
    )


def sync_change(
    partition_id: Guid, seq_blob: bytes, purged: SequenceNumber, properties: tuple[tuple[int, object], ...],
    guid: Guid,
) -> DirectoryChange:
    """:func:`build_sync_change`, one frozen value for equal arguments of equal types."""
    args = (partition_id, seq_blob, purged, properties, guid)
    try:
        hit = _SYNC_CHANGES.get(args)
    except TypeError:  # a value no dict can key (a store filled by hand): build it afresh
        return build_sync_change(*args)
    # equal is not enough: True == 1, and a Property refuses a bool where it takes an int
    types = (type(partition_id), type(seq_blob), type(guid), *[type(value) for _, value in properties])
    if hit is not None and hit[0] == types:
        return hit[1]
    change = build_sync_change(*args)
    if len(_SYNC_CHANGES) >= LIMIT:
        _SYNC_CHANGES.clear()
    _SYNC_CHANGES[args] = (types, change)
    return change


#: attrs.evolve without the validators: every field but PreviousSeqNumber comes from a
#: DirectoryChange that passed them, and PreviousSeqNumber is a SequenceNumber of the request
#: or of the previous change
_rechained = unchecked_constructor(DirectoryChange)


def with_previous(change: DirectoryChange, previous: SequenceNumber) -> DirectoryChange:
    """``change`` with PreviousSeqNumber ``previous``: one value per (change, previous)."""
    key = (id(change), previous.value)
    hit = _CHAINED.get(key)
    if hit is not None and hit[0] is change:
        return hit[1]
    chained = _rechained(
        change.command, change.partition_id, previous, change.seq_number, change.purged_seq_number,
        change.properties, change.path_name, change.guid_identifier,
    )
    if len(_CHAINED) >= LIMIT:
        _CHAINED.clear()
    _CHAINED[key] = (change, chained)
    return chained
