"""The local [MS-MQDS] directory that the MC-MQDSRP handlers raise their events on (a model).

[MS-MQDS] is not among the documents provided, so this module is a small, documented model of
the directory events MC-MQDSRP raises (modelling entries E-190 .. E-198):

* Create / Update / Delete / Read Directory Object (3.1.7.2.5 .. 3.1.7.2.8 raise them);
* Begin Directory Lookup / Lookup Directory Next / End Directory Lookup, with an MQRESTRICTION
  and an MQCOLUMNSET (3.2.7.8 Lookup Directory Objects raises them);
* Reset Directory Partition, operation 1 "mark all objects as deleted by setting their sequence
  numbers to MIN_SEQ_NUMBER" (3.3.7.10) and operation 2 "delete all objects whose sequence
  number is MIN_SEQ_NUMBER" (3.3.7.11).

What it covers: one object per GUID, unique (object type, case-insensitive path name) per type,
the per-object partition and sequence number, property values shaped as
:mod:`mqspec.model.propvalue` says. What it does not: security descriptors, replication (the
iReplicate argument is MC-MQDSRP's business, so the store ignores it), tombstones (the
DeletedObjectCollection of MC-MQDSRP 3.1.1.2.2 belongs to the handlers), Active Directory.

The store keeps, in each object's ``properties``, the properties a 3.2.7.8 lookup restricts on
or reads back: the identity GUID, the ``*_PARTITIONID`` GUID, the ``*_SEQNUM`` blob (the 8 bytes of the
sequence number, byte 1 most significant: 3.2.7.8 "PV(UCHAR[8]): a PROPVARIANT with vt=VT_BLOB,
blob.cbSize=8") and the path-name property where the type has one (modelling E-192, E-193).

Everything is deterministic: objects live in a dict in insertion order, lookups return objects
by ascending sequence number and then GUID, and no set is ever iterated.

>>> from mqspec.model.propids import ObjectType
>>> store = DirectoryStore()
>>> site = Guid.from_name("site0")
>>> store.create(ObjectType.MQDS_SITE, "Site0", None, {302: site}, Guid.NULL, SequenceNumber(5))
0
>>> store.find(path_name="SITE0", object_type=ObjectType.MQDS_SITE).guid == site
True
>>> store.properties_of(site)[308].hex()  # PROPID_S_SEQNUM, maintained by the store
'0000000000000005'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from mqspec import memos
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPID_BY_VALUE, PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.query import ColumnSet, Relation, Restriction, SortSet
from mqspec.model.seqnum import MIN_SEQ_NUMBER, SequenceNumber
from mqspec.wording import plural

from .status import (
    MQ_ERROR,
    MQ_ERROR_ILLEGAL_PROPID,
    MQ_OK,
    MQDS_OBJECT_EXISTS,
    MQDS_OBJECT_NOT_FOUND,
)

#: how many objects one Lookup Directory Next returns when the caller does not say (E-196)
DEFAULT_LOOKUP_CHUNK = 100

_PREQ = Relation.PREQ

#: Reset Directory Partition operations (3.3.7.10, 3.3.7.11)
RESET_MARK_DELETED = 1
RESET_DELETE_MARKED = 2


def _p(name: str) -> int:
    return PROPIDS[name].propid  # a misspelt name fails at import, not at the first lookup


_Q, _QM, _S = ObjectType.MQDS_QUEUE, ObjectType.MQDS_MACHINE, ObjectType.MQDS_SITE
_CN, _E, _U, _L = ObjectType.MQDS_CN, ObjectType.MQDS_ENTERPRISE, ObjectType.MQDS_USER, ObjectType.MQDS_ROUTINGLINK

#: the GUID that identifies an object of each type (the LookupPropID second column of 3.2.7.8)
_IDENTITY: dict[int, int] = {
    _Q: _p("PROPID_Q_INSTANCE"), _QM: _p("PROPID_QM_MACHINE_ID"), _S: _p("PROPID_S_SITEID"),
    _CN: _p("PROPID_CN_GUID"), _E: _p("PROPID_E_ID"), _U: _p("PROPID_U_ID"), _L: _p("PROPID_L_ID"),
}
#: the partition property of each type (3.2.7.8: [PREQ, PROPID_x_PARTITIONID, PV(PartitionID)])
_PARTITION: dict[int, int] = {
    _Q: _p("PROPID_Q_PARTITIONID"), _QM: _p("PROPID_QM_PARTITIONID"), _S: _p("PROPID_S_PARTITIONID"),
    _CN: _p("PROPID_CN_PARTITIONID"), _E: _p("PROPID_E_PARTITIONID"), _U: _p("PROPID_U_PARTITIONID"),
    _L: _p("PROPID_L_PARTITIONID"),
}
#: the type whose partition property each ``*_PARTITIONID`` is
_PARTITION_TYPE: dict[int, int] = {propid: object_type for object_type, propid in _PARTITION.items()}
#: the sequence-number blob of each type (3.2.7.8: [PRGE, PROPID_x_SEQNUM, PV(fromSeqNum)])
_SEQNUM: dict[int, int] = {
    _Q: _p("PROPID_Q_SEQNUM"), _QM: _p("PROPID_QM_SEQNUM"), _S: _p("PROPID_S_SEQNUM"),
    _CN: _p("PROPID_CN_SEQNUM"), _E: _p("PROPID_E_SEQNUM"), _U: _p("PROPID_U_SEQNUM"),
    _L: _p("PROPID_L_SEQNUM"),
}
#: the property that holds an object's path name; users and routing links have none (E-192)
_PATH: dict[int, int] = {
    _Q: _p("PROPID_Q_PATHNAME"), _QM: _p("PROPID_QM_PATHNAME"), _S: _p("PROPID_S_PATHNAME"),
    _CN: _p("PROPID_CN_NAME"), _E: _p("PROPID_E_NAME"),
}
#: snapshot names: "queue", "machine", "site", "cn", "enterprise", "user", "routinglink"
_TYPE_NAME: dict[int, str] = {t.value: t.name.removeprefix("MQDS_").lower() for t in ObjectType}


def identity_propid(object_type: int) -> int | None:
    """The PROPID of the GUID that identifies an object of ``object_type`` (None for an unknown type)."""
    return _IDENTITY.get(object_type)


def partition_propid(object_type: int) -> int | None:
    """The ``*_PARTITIONID`` PROPID of ``object_type``."""
    return _PARTITION.get(object_type)


def seqnum_propid(object_type: int) -> int | None:
    """The ``*_SEQNUM`` PROPID of ``object_type`` (a VT_BLOB of the 8 sequence-number bytes)."""
    return _SEQNUM.get(object_type)


def pathname_propid(object_type: int) -> int | None:
    """The PROPID holding the path name of ``object_type``, or None when the type has none (E-192)."""
    return _PATH.get(object_type)


def type_name(object_type: int) -> str:
    """The lowercase name a snapshot uses for ``object_type`` ("queue", "routinglink", ...)."""
    return _TYPE_NAME.get(object_type, str(object_type))


def _type_of_propid(propid: int) -> int:
    # MC-MQDSRP 3.1.1.4: "If propID > 1000: Set rType to ((propID - 1000) / 100). Else: ... (propID / 100)"
    return (propid - 1000) // 100 if propid > 1000 else propid // 100


#: _type_of_propid of every registered PROPID, worked out once (Create and Update test each property)
_PROPID_TYPE: dict[int, int] = {propid: _type_of_propid(propid) for propid in PROPID_BY_VALUE}


def _as_dict(properties: Mapping[int, object] | Iterable[Any] | None) -> dict[int, object]:
    """Properties as a PROPID -> value dict; accepts a mapping or Property-like (propid, value) items."""
    if properties is None:
        return {}
    if type(properties) is tuple:  # a DirectoryChange's Property values (never a Mapping)
        return {p.propid: p.value for p in properties}
    if type(properties) is dict or isinstance(properties, Mapping):
        return dict(properties)
    return {p.propid: p.value for p in properties}


def _key(object_type: int, path_name: str) -> tuple[int, str]:
    # path names compare case-insensitively within one object type (E-192)
    return (object_type, path_name.lower())


@attrs.define(slots=True)
class DirectoryObject:
    """One object of the local directory; ``properties`` maps PROPID to value (propvalue shapes)."""

    guid: Guid
    object_type: int
    path_name: str | None
    partition_id: Guid
    seq_number: SequenceNumber
    properties: dict[int, object] = attrs.field(factory=dict)
    #: ``properties`` is shared with other stores' replicas of the object: the store copies it
    #: before changing it (copy on write), and properties_of hands out a copy of its own
    shared: bool = attrs.field(default=False, eq=False, repr=False)

    def own_properties(self) -> dict[int, object]:
        """``properties``, made this object's own first if it is shared."""
        if self.shared:
            self.properties = dict(self.properties)
            self.shared = False
        return self.properties

    def copy(self) -> DirectoryObject:
        # values are immutable (int, str, bytes, Guid, tuples): a new dict is a deep copy
        return DirectoryObject(
            self.guid, self.object_type, self.path_name, self.partition_id, self.seq_number,
            dict(self.properties),
        )

    def sort_key(self) -> tuple[int, bytes]:
        """Lookup order (E-196): ascending sequence number, then GUID bytes."""
        return (self.seq_number.value, self.guid.bytes_le)


def _new_object(
    object_type: int, path_name: str | None, guid: Guid | None,
    properties: Mapping[int, object] | Iterable[Any] | None, partition_id: Guid, seq_number: SequenceNumber,
) -> int | tuple[Guid, str | None, tuple[int, str] | None, dict[int, object]]:
    """What Create Directory Object makes of its arguments, before it looks at the store.

    An error status, or the new object's GUID, path name, path key and properties: the given
    ones with the store's own (identity, partition, sequence number, path: E-193).
    """
    props = _as_dict(properties)
    identity = _IDENTITY.get(object_type)
    if identity is None:
        return MQ_ERROR  # not a directory object type of 3.1.1.4
    if DirectoryStore._illegal(object_type, props):
        return MQ_ERROR_ILLEGAL_PROPID
    if guid is None:
        guid = props.get(identity)  # type: ignore[assignment]
        if not isinstance(guid, Guid):
            return MQ_ERROR
    path_name = created_path(object_type, path_name, props)
    key = None if path_name is None else _key(object_type, path_name)
    # E-193: the store's own properties follow the event's arguments
    props[identity] = guid
    props[_PARTITION[object_type]] = partition_id
    props[_SEQNUM[object_type]] = seq_number.to_bytes()
    if path_name is not None:
        props[_PATH[object_type]] = path_name
    return guid, path_name, key, props


def created_path(object_type: int, path_name: str | None, props: Mapping[int, object]) -> str | None:
    """The path name Create Directory Object gives a new object: ``path_name``, else its path-name
    property when that is a string; None for a type named by GUID only (E-192)."""
    path_prop = _PATH.get(object_type)
    if path_prop is None:
        return None  # E-192: users and routing links are named by GUID only
    if path_name is None:
        value = props.get(path_prop)
        return value if isinstance(value, str) else None
    return path_name


#: _new_object's results for a tuple of Property values: the tuple's id -> (the tuple, the other
#: arguments, the result); an entry holds its tuple, so no other tuple takes that id while it
#: lives. Emptied when it holds SHARED_OBJECTS_LIMIT entries.
_NEW_OBJECTS: dict[int, tuple[tuple[Any, ...], tuple[Any, ...], Any]] = {}
SHARED_OBJECTS_LIMIT = 1 << 14
memos.register(f"{__name__}._NEW_OBJECTS", "a change's properties tuple (and the other arguments) -> the new object's parts",
               _NEW_OBJECTS)


def _new_object_shared(
    object_type: int, path_name: str | None, guid: Guid | None, properties: tuple[Any, ...],
    partition_id: Guid, seq_number: SequenceNumber,
) -> tuple[int | tuple[Guid, str | None, tuple[int, str] | None, dict[int, object]], bool]:
    """:func:`_new_object` for a tuple, and whether the result is shared: one result for the same inputs.

    Every replica applies the same decoded change (one shared tuple of properties) with the same
    partition and sequence number, so every replica's object gets the same properties dict:
    the store shares it between them and copies it before it changes it (DirectoryObject.shared).
    Only a tuple of (frozen) Property values is shared; the other arguments are compared as a
    dict key would compare them (equal values; the same objects, as a replica passes them,
    compare at once).
    """
    args = (object_type, path_name, guid, partition_id, seq_number)
    hit = _NEW_OBJECTS.get(id(properties))
    if hit is not None and hit[0] is properties and hit[1] == args:
        return hit[2], True
    made = _new_object(object_type, path_name, guid, properties, partition_id, seq_number)
    if not all(type(p) is Property for p in properties):
        return made, False
    if type(made) is not int:
        if len(_NEW_OBJECTS) >= SHARED_OBJECTS_LIMIT:
            _NEW_OBJECTS.clear()
        _NEW_OBJECTS[id(properties)] = (properties, args, made)
    return made, True


class _Lookup:
    """An open Begin Directory Lookup: the rows taken when it began and how far Next has read."""

    __slots__ = ("rows", "position")

    def __init__(self, rows: list[list[object]], position: int = 0) -> None:
        self.rows = rows
        self.position = position


_SUM_MOD = 1 << 64


class _Partition(dict):  # type: ignore[type-arg]
    """The objects of one partition by GUID, and ``digest``, the sum of their content digests."""

    __slots__ = ("digest",)

    def __init__(self) -> None:
        super().__init__()
        self.digest = 0


def _content_hash(obj: DirectoryObject) -> int:
    """A 64-bit digest of what a snapshot shows of an object: GUID, type, path name, sequence number.

    Python's hash of the tuple: the process's hash seed changes the values, never whether two
    equal contents agree (unequal ones collide with probability about 2**-64).
    """
    return hash((obj.guid.bytes_le, obj.object_type, obj.path_name, obj.seq_number.value))


class DirectoryStore:
    """The objects of one queue manager's local directory and its open lookups.

    Besides the objects, the store keeps an index by partition and, per partition, the sum of
    the objects' content digests (:meth:`partition_digest`): whether a partition's objects
    changed is then a comparison of two numbers, not of every object (the simulator's settle).
    Every change to an object goes through the methods below, which keep both up to date.
    """

    __slots__ = ("objects", "_by_path", "_lookups", "_next_handle", "_parts")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by content

    def __init__(self) -> None:
        self.objects: dict[Guid, DirectoryObject] = {}
        self._by_path: dict[tuple[int, str], Guid] = {}
        self._lookups: dict[int, _Lookup] = {}
        self._next_handle = 1
        self._parts: dict[Guid, _Partition] = {}  # partition -> its objects and their digest

    # --- the partition index -------------------------------------------------------------
    def _index(self, obj: DirectoryObject) -> None:
        pid = obj.partition_id
        part = self._parts.get(pid)
        if part is None:
            part = self._parts[pid] = _Partition()
        part[obj.guid] = obj
        part.digest = (part.digest + _content_hash(obj)) % _SUM_MOD

    def _unindex(self, obj: DirectoryObject) -> None:
        self._drop(obj.partition_id, obj.guid, _content_hash(obj))

    def _drop(self, pid: Guid, guid: Guid, content_hash: int) -> None:
        """Take object ``guid``, whose content digest is ``content_hash``, out of partition ``pid``'s index."""
        part = self._parts[pid]
        del part[guid]
        if part:
            part.digest = (part.digest - content_hash) % _SUM_MOD
        else:
            del self._parts[pid]

    def _reindex(self, obj: DirectoryObject, old_partition: Guid, old_hash: int) -> None:
        """Index ``obj`` again after a change: it was in ``old_partition`` with content digest ``old_hash``."""
        pid = obj.partition_id
        if pid == old_partition:
            part = self._parts[pid]
            part.digest = (part.digest - old_hash + _content_hash(obj)) % _SUM_MOD
            return
        self._drop(old_partition, obj.guid, old_hash)
        self._index(obj)

    def partition_digest(self, partition_id: Guid) -> int:
        """A digest of the objects of one partition (GUID, type, path, sequence number); 0 when none.

        Equal contents give equal digests; unequal contents give unequal ones but with
        probability about 2**-64.
        """
        part = self._parts.get(partition_id)
        return 0 if part is None else part.digest

    # --- finding objects ----------------------------------------------------------------
    def find(
        self, *, guid: Guid | None = None, path_name: str | None = None, object_type: int | None = None
    ) -> DirectoryObject | None:
        """The object with ``guid`` if given, else the one with (``object_type``, path name).

        A given ``object_type`` must match: an object of another type is not found.
        """
        if guid is not None:
            obj = self.objects.get(guid)
            if obj is None or (object_type is not None and obj.object_type != object_type):
                return None
            return obj
        if path_name is None or object_type is None:
            return None
        found = self._by_path.get(_key(object_type, path_name))
        return None if found is None else self.objects[found]

    def properties_of(self, guid: Guid) -> dict[int, object]:
        """The properties of the object with ``guid`` (KeyError when there is none)."""
        return self.objects[guid].own_properties()

    def _locate(
        self, object_type: int, path_name: str | None, guid: Guid | None, properties: Mapping[int, object]
    ) -> tuple[int, DirectoryObject | None]:
        """Resolve an event's object: by GUID, else by path name, else by identity property (E-195)."""
        if object_type not in _IDENTITY:
            return MQ_ERROR, None
        if guid is None and path_name is None:
            guid = properties.get(_IDENTITY[object_type])  # type: ignore[assignment]
            if not isinstance(guid, Guid):
                return MQ_ERROR, None  # nothing names the object
        obj = self.find(guid=guid, path_name=path_name, object_type=object_type)
        return (MQ_OK, obj) if obj is not None else (MQDS_OBJECT_NOT_FOUND, None)

    @staticmethod
    def _illegal(object_type: int, properties: Iterable[int]) -> bool:
        # a PROPID of another object type (3.1.1.4) cannot be a property of this object (E-194)
        for propid in properties:
            kind = _PROPID_TYPE.get(propid)
            if kind is None:
                kind = _type_of_propid(propid)
            if kind != object_type:
                return True
        return False

    # --- Create / Update / Delete / Read Directory Object -------------------------------------
    def create(
        self,
        object_type: int,
        path_name: str | None,
        guid: Guid | None,
        properties: Mapping[int, object] | Iterable[Any] | None,
        partition_id: Guid,
        seq_number: SequenceNumber,
    ) -> int:
        """Create Directory Object: add one object, MQDS_OBJECT_EXISTS if its GUID or path is taken.

        3.1.7.2.5 passes no GUID, so the identity comes from the type's identity property when
        ``guid`` is None (E-191); without one the event fails with MQ_ERROR.
        """
        if not isinstance(partition_id, Guid) or not isinstance(seq_number, SequenceNumber):
            raise ModelError("create takes a Guid partition_id and a SequenceNumber seq_number")
        if type(properties) is tuple:
            made, shared = _new_object_shared(object_type, path_name, guid, properties, partition_id, seq_number)
        else:
            made, shared = _new_object(object_type, path_name, guid, properties, partition_id, seq_number), False
        if type(made) is int:
            return made
        guid, made_path, key, props = made  # type: ignore[misc]
        if guid in self.objects or (key is not None and key in self._by_path):
            return MQDS_OBJECT_EXISTS
        if made_path is not None:
            if path_name is not None:
                made_path = path_name  # the caller's own name (a shared entry holds an equal one)
            self._by_path[key] = guid  # type: ignore[index]
        obj = self.objects[guid] = DirectoryObject(
            guid, object_type, made_path, partition_id, seq_number, props, shared=shared)
        self._index(obj)
        return MQ_OK

    def update(
        self,
        object_type: int,
        path_name: str | None,
        guid: Guid | None,
        properties: Mapping[int, object] | Iterable[Any] | None,
        partition_id: Guid | None,
        seq_number: SequenceNumber | None,
    ) -> int:
        """Update Directory Object: merge ``properties`` into the object and set its partition and sequence.

        MQDS_OBJECT_NOT_FOUND when no such object exists; a new path-name property renames the
        object (MQDS_OBJECT_EXISTS when another object of the type holds that name); an identity
        property naming another GUID is MQ_ERROR (E-195). None keeps the partition / sequence.
        """
        props = _as_dict(properties)
        status, obj = self._locate(object_type, path_name, guid, props)
        if obj is None:
            return status
        if self._illegal(object_type, props):
            return MQ_ERROR_ILLEGAL_PROPID
        identity = _IDENTITY[object_type]
        if identity in props and props[identity] != obj.guid:
            return MQ_ERROR  # an object's identity never changes
        path_prop = _PATH.get(object_type)
        new_path = props.get(path_prop) if path_prop is not None else None
        # the partition index and digest follow the object once, after its path, partition and
        # sequence number changed (nothing below fails once the object starts changing)
        old_partition, old_hash = obj.partition_id, _content_hash(obj)
        if isinstance(new_path, str) and new_path != obj.path_name:
            key = _key(object_type, new_path)
            holder = self._by_path.get(key)
            if holder is not None and holder != obj.guid:
                return MQDS_OBJECT_EXISTS
            if obj.path_name is not None:
                del self._by_path[_key(object_type, obj.path_name)]
            self._by_path[key] = obj.guid
            obj.path_name = new_path
        obj.own_properties().update(props)
        if partition_id is not None:
            obj.partition_id = partition_id
        if seq_number is not None:
            obj.seq_number = seq_number
        self._reindex(obj, old_partition, old_hash)
        # E-193: the maintained properties follow the object, whatever the caller passed
        obj.properties[identity] = obj.guid
        obj.properties[_PARTITION[object_type]] = obj.partition_id
        obj.properties[_SEQNUM[object_type]] = obj.seq_number.to_bytes()
        if path_prop is not None:
            if obj.path_name is None:
                obj.properties.pop(path_prop, None)
            else:
                obj.properties[path_prop] = obj.path_name
        return MQ_OK

    def delete(
        self, object_type: int, path_name: str | None, guid: Guid | None
    ) -> tuple[int, DirectoryObject | None]:
        """Delete Directory Object: remove the object and return it (MQDS_OBJECT_NOT_FOUND when absent).

        The store keeps no tombstone: MC-MQDSRP's DeletedObjectCollection records deletions (E-198).
        """
        status, obj = self._locate(object_type, path_name, guid, {})
        if obj is None:
            return status, None
        self._remove(obj)
        return MQ_OK, obj

    def _remove(self, obj: DirectoryObject) -> None:
        del self.objects[obj.guid]
        self._unindex(obj)
        if obj.path_name is not None:
            del self._by_path[_key(obj.object_type, obj.path_name)]

    def read(
        self, object_type: int, path_name: str | None, guid: Guid | None, propids: Iterable[int]
    ) -> tuple[int, list[object]]:
        """Read Directory Object: the values of ``propids`` in that order (None for a property the object lacks).

        MQDS_OBJECT_NOT_FOUND when there is no such object; MQ_ERROR_ILLEGAL_PROPID when a PROPID
        belongs to another object type (E-198).
        """
        propids = list(propids)
        status, obj = self._locate(object_type, path_name, guid, {})
        if obj is None:
            return status, []
        if self._illegal(object_type, propids):
            return MQ_ERROR_ILLEGAL_PROPID, []
        values = obj.properties
        return MQ_OK, [values.get(propid) for propid in propids]

    # --- Begin / Next / End Directory Lookup -------------------------------------------------
    def begin_lookup(
        self,
        restriction: Restriction | None,
        columns: ColumnSet | Iterable[int],
        *,
        sort: SortSet | None = None,
        object_type: int | None = None,
    ) -> int:
        """Begin Directory Lookup: select the objects ``restriction`` matches and return a descriptor.

        The rows (the ``columns`` values of each object, None where the object lacks one) are
        taken now, in ascending sequence number then GUID order (E-196), or in ``sort``'s order
        with that order breaking ties. A None ``restriction`` matches every object (as an empty
        MQRESTRICTION does); ``object_type`` optionally narrows the scan to one type. 3.2.7.8
        passes no object type: its restriction names the type's own ``*_PARTITIONID`` and ``*_SEQNUM``,
        which objects of other types lack, and a missing property matches no relation.
        """
        cols = _column_ids(columns)
        matches = None if restriction is None else restriction.matcher()
        chosen = [
            obj
            for obj in self._candidates(restriction)
            if (object_type is None or obj.object_type == object_type)
            and (matches is None or matches(obj.properties))
        ]
        chosen.sort(key=DirectoryObject.sort_key)
        if sort is not None and sort.keys:
            by_props = sort.sort(obj.properties for obj in chosen)  # stable: ties keep (seq, GUID)
            position = {id(obj.properties): obj for obj in chosen}
            chosen = [position[id(props)] for props in by_props]
        rows = [list(map(obj.properties.get, cols)) for obj in chosen]
        handle = self._next_handle
        self._next_handle += 1
        self._lookups[handle] = _Lookup(rows)
        return handle

    def _candidates(self, restriction: Restriction | None) -> Iterable[DirectoryObject]:
        """The objects a lookup must test: one partition's when the restriction begins with one.

        A restriction whose first term is ``PROPID_x_PARTITIONID == p`` (3.2.7.8's) matches only
        objects of type x in partition p: the store keeps that property equal to the object's
        partition, objects of other types cannot hold it (E-194), and the first term is tested
        first, so no other object gets as far as the later terms.
        """
        first = restriction.restrictions[0] if restriction is not None and restriction.restrictions else None
        if first is None or first.relation != _PREQ or first.propid not in _PARTITION_TYPE:
            return self.objects.values()
        if not isinstance(first.value, Guid):
            return self.objects.values()
        object_type = _PARTITION_TYPE[first.propid]
        return [obj for obj in self._parts.get(first.value, {}).values() if obj.object_type == object_type]

    def lookup_next(self, handle: int, max_objects: int = DEFAULT_LOOKUP_CHUNK) -> list[list[object]]:
        """Lookup Directory Next: up to ``max_objects`` more rows; an empty list when all were read."""
        lookup = self._lookups.get(handle)
        if lookup is None:
            raise ModelError(f"no open directory lookup {handle}")
        if type(max_objects) is not int or max_objects < 1:
            raise ModelError(f"max_objects must be a positive int, not {max_objects!r}")
        start = lookup.position
        lookup.position = min(start + max_objects, len(lookup.rows))
        return [list(row) for row in lookup.rows[start : lookup.position]]

    def end_lookup(self, handle: int) -> int:
        """End Directory Lookup: close the descriptor (MQ_ERROR when it is not open)."""
        return MQ_OK if self._lookups.pop(handle, None) is not None else MQ_ERROR

    @property
    def open_lookups(self) -> list[int]:
        """The descriptors of the lookups begun and not yet ended."""
        return list(self._lookups)

    # --- Reset Directory Partition ------------------------------------------------------------
    def reset_partition(self, partition_id: Guid, operation: int) -> int:
        """Reset Directory Partition (3.3.7.10 operation 1, 3.3.7.11 operation 2) on ``partition_id``'s objects.

        1: "mark all objects as deleted by setting their sequence numbers to MIN_SEQ_NUMBER";
        2: "delete all objects whose sequence number is MIN_SEQ_NUMBER"; anything else is MQ_ERROR
        (E-197). Both touch only the objects of the given partition.
        """
        if operation == RESET_MARK_DELETED:
            blob = MIN_SEQ_NUMBER.to_bytes()
            for obj in list(self._parts.get(partition_id, {}).values()):
                self._unindex(obj)
                obj.seq_number = MIN_SEQ_NUMBER
                obj.own_properties()[_SEQNUM[obj.object_type]] = blob
                self._index(obj)
            return MQ_OK
        if operation == RESET_DELETE_MARKED:
            doomed = [
                obj
                for obj in self._parts.get(partition_id, {}).values()
                if obj.seq_number == MIN_SEQ_NUMBER
            ]
            for obj in doomed:
                self._remove(obj)
            return MQ_OK
        return MQ_ERROR

    # --- views, copies, comparison ---------------------------------------------------------
    def objects_in(self, partition_id: Guid) -> list[DirectoryObject]:
        """The objects of one partition, in lookup order (sequence number, then GUID)."""
        found = list(self._parts.get(partition_id, {}).values())
        found.sort(key=DirectoryObject.sort_key)
        return found

    def snapshot(self) -> dict[str, dict[str, object]]:
        """A JSON-ready view: GUID text -> type, path, sequence number and partition, sorted by GUID."""
        return {
            str(obj.guid): {
                "type": type_name(obj.object_type),
                "path": obj.path_name,
                "seq": obj.seq_number.value,
                "partition": str(obj.partition_id),
            }
            for obj in sorted(self.objects.values(), key=lambda o: str(o.guid))
        }

    def copy(self) -> DirectoryStore:
        """A deep copy: objects, the path index and the open lookups."""
        other = DirectoryStore()
        other.objects = {guid: obj.copy() for guid, obj in self.objects.items()}
        other._by_path = dict(self._by_path)
        other._lookups = {h: _Lookup(list(lk.rows), lk.position) for h, lk in self._lookups.items()}
        other._next_handle = self._next_handle
        for obj in other.objects.values():
            other._index(obj)
        return other

    def __eq__(self, other: object) -> bool:
        """Equal content: the same objects (open lookups are transient and not compared)."""
        if not isinstance(other, DirectoryStore):
            return NotImplemented
        return self.objects == other.objects

    def __len__(self) -> int:
        return len(self.objects)

    def __repr__(self) -> str:
        return f"DirectoryStore({plural(len(self.objects), 'object')}, {plural(len(self._lookups), 'open lookup')})"


def _column_ids(columns: ColumnSet | Iterable[int]) -> list[int]:
    """The PROPIDs of a column set: an MQCOLUMNSET (:class:`ColumnSet`) or any iterable of PROPIDs."""
    if isinstance(columns, ColumnSet):
        return list(columns.columns)
    return [int(c) for c in columns]
