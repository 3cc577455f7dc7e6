"""Hypothesis strategies for every MC-MQDSRP section-2 structure (reused by fuzz and refimpl tests).

Every strategy draws valid model values, so ``encode`` accepts them and ``decode`` gives them
back. Sizes stay small so that a test can draw hundreds of examples quickly; pass larger
``max_*`` arguments when a test needs bigger messages.
"""

from __future__ import annotations

from hypothesis import strategies as st

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propids import PROPID_BY_VALUE, PropertyDef, VarType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber

__all__ = [
    "already_purged_messages", "bsc_ack_messages", "change_propagation_messages",
    "change_reply_messages", "change_request_messages", "directory_changes", "guids",
    "partition_seq_numbers", "properties", "psc_ack_messages", "replication_messages",
    "seq_number_headers", "sequence_numbers", "sync_reply_messages", "sync_request_messages",
    "wstrs", "MESSAGE_STRATEGIES",
]


def guids() -> st.SearchStrategy[Guid]:
    """Any GUID, with GUID_NULL drawn often (it is PEC_PARTITION_ID)."""
    return st.one_of(st.just(Guid.NULL), st.binary(min_size=16, max_size=16).map(Guid))


def sequence_numbers() -> st.SearchStrategy[SequenceNumber]:
    """Any SEQUENCE_NUMBER, the extremes included."""
    return st.integers(0, (1 << 64) - 1).map(SequenceNumber)


def wstrs(max_size: int = 16) -> st.SearchStrategy[str]:
    """Text a null-terminated WCHAR buffer can hold: no NUL, no lone surrogate code points."""
    return st.text(
        st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=max_size
    )


def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


_VALUES: dict[VarType, st.SearchStrategy[object]] = {
    VarType.VT_I1: _ints(-(1 << 7), (1 << 7) - 1),
    VarType.VT_UI1: _ints(0, (1 << 8) - 1),
    VarType.VT_I2: _ints(-(1 << 15), (1 << 15) - 1),
    VarType.VT_UI2: _ints(0, (1 << 16) - 1),
    VarType.VT_BOOL: _ints(0, (1 << 16) - 1),
    VarType.VT_I4: _ints(-(1 << 31), (1 << 31) - 1),
    VarType.VT_UI4: _ints(0, (1 << 32) - 1),
    VarType.VT_I8: _ints(-(1 << 63), (1 << 63) - 1),
    VarType.VT_UI8: _ints(0, (1 << 64) - 1),
    VarType.VT_LPWSTR: wstrs(),
    VarType.VT_BLOB: st.binary(max_size=24),
    VarType.VT_UI1_VECTOR: st.binary(max_size=24),
    VarType.VT_CLSID: guids(),
    VarType.VT_CLSID_VECTOR: st.lists(guids(), max_size=3).map(tuple),
    VarType.VT_UI4_VECTOR: st.lists(_ints(0, (1 << 32) - 1), max_size=3).map(tuple),
    VarType.VT_LPWSTR_VECTOR: st.lists(wstrs(8), max_size=3).map(tuple),
}

#: every registered PROPID with a flat encoding, in PROPID order
FLAT_PROPIDS: tuple[PropertyDef, ...] = tuple(
    pdef for _, pdef in sorted(PROPID_BY_VALUE.items()) if pdef.vartype in _VALUES
)


def properties() -> st.SearchStrategy[Property]:
    """A (PROPID, value) pair for any registered PROPID, the value of its VARTYPE."""
    return st.sampled_from(FLAT_PROPIDS).flatmap(
        lambda pdef: _VALUES[pdef.vartype].map(lambda v: Property(pdef.propid, v))
    )


@st.composite
def directory_changes(draw, max_properties: int = 4) -> DirectoryChange:
    """A DirectoryChange naming its object by path (UseGuid 0) or by GUID (UseGuid 1)."""
    by_guid = draw(st.booleans())
    return DirectoryChange(
        command=draw(st.sampled_from(Command)),
        partition_id=draw(guids()),
        previous_seq_number=draw(sequence_numbers()),
        seq_number=draw(sequence_numbers()),
        purged_seq_number=draw(sequence_numbers()),
        properties=tuple(draw(st.lists(properties(), max_size=max_properties))),
        path_name=None if by_guid else draw(wstrs(24)),
        guid_identifier=draw(guids()) if by_guid else None,
    )


def partition_seq_numbers() -> st.SearchStrategy[PartitionSeqNumbers]:
    return st.builds(PartitionSeqNumbers, guids(), sequence_numbers(), sequence_numbers())


@st.composite
def seq_number_headers(draw, max_partitions: int = 3) -> SeqNumberHeader:
    """A SeqNumberHeader: Count 0 (no MachineName) or a machine name and 1.. partitions."""
    partitions = tuple(draw(st.lists(partition_seq_numbers(), max_size=max_partitions)))
    return SeqNumberHeader(draw(wstrs()) if partitions else None, partitions)


def _changes(max_changes: int) -> st.SearchStrategy[tuple[DirectoryChange, ...]]:
    return st.lists(directory_changes(), max_size=max_changes).map(tuple)


def change_request_messages() -> st.SearchStrategy[ChangeRequestMessage]:
    """From a PSC (no PSCName) or from a BSC (PSCName set)."""
    return st.builds(ChangeRequestMessage, guids(), guids(), _ints(0, (1 << 32) - 1), wstrs(),
                     st.none() | wstrs(), directory_changes())


def change_reply_messages() -> st.SearchStrategy[ChangeReplyMessage]:
    return st.builds(ChangeReplyMessage, guids(), _ints(0, (1 << 32) - 1),
                     st.sampled_from([0, 0x80070005, 0xC00E0001]) | _ints(0, (1 << 32) - 1),
                     wstrs())


def sync_request_messages() -> st.SearchStrategy[SyncRequestMessage]:
    return st.builds(SyncRequestMessage, guids(), guids(), sequence_numbers(), sequence_numbers(),
                     sequence_numbers(), st.booleans(), st.sampled_from(Scope), wstrs())


def sync_reply_messages(max_changes: int = 3) -> st.SearchStrategy[SyncReplyMessage]:
    return st.builds(SyncReplyMessage, guids(), guids(), sequence_numbers(), sequence_numbers(),
                     sequence_numbers(), st.sampled_from(CompleteSync0), _changes(max_changes))


def bsc_ack_messages() -> st.SearchStrategy[BSCAckMessage]:
    return st.builds(BSCAckMessage, guids(), guids(), wstrs())


def psc_ack_messages() -> st.SearchStrategy[PSCAckMessage]:
    return st.builds(PSCAckMessage, guids(), guids(), guids(), sequence_numbers(), wstrs())


def already_purged_messages() -> st.SearchStrategy[AlreadyPurgedMessage]:
    return st.builds(AlreadyPurgedMessage, guids(), guids(), sequence_numbers())


def change_propagation_messages(
    max_changes: int = 3,
) -> st.SearchStrategy[ChangePropagationMessage]:
    return st.builds(ChangePropagationMessage, guids(), st.booleans(), _changes(max_changes),
                     seq_number_headers())


#: message class -> strategy drawing it
MESSAGE_STRATEGIES: dict[type, st.SearchStrategy] = {
    ChangeRequestMessage: change_request_messages(),
    ChangeReplyMessage: change_reply_messages(),
    SyncRequestMessage: sync_request_messages(),
    SyncReplyMessage: sync_reply_messages(),
    BSCAckMessage: bsc_ack_messages(),
    PSCAckMessage: psc_ack_messages(),
    AlreadyPurgedMessage: already_purged_messages(),
    ChangePropagationMessage: change_propagation_messages(),
}


def replication_messages() -> st.SearchStrategy:
    """Any of the eight replication messages."""
    return st.one_of(*MESSAGE_STRATEGIES.values())
