"""MC-MQDSRP section 2: golden bytes for every message, round trips and the JSON form.

The golden byte strings are assembled by hand from the layouts of 2.2.3 .. 2.2.6.9 (never by
calling encode), so they check the codec against the text rather than against itself.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec import clauses
from mqspec.clauses import covers
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import from_json, to_json
from mqspec.model.mqdsrp import (
    MESSAGE_TYPES,
    AlreadyPurgedMessage,
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    Operation,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncReplyMessage,
    SyncRequestMessage,
    decode,
    decode_directory_change,
    decode_shared,
    decode_partition_seq_numbers,
    decode_seq_number_header,
    encode,
    encode_directory_change,
    encode_partition_seq_numbers,
    encode_seq_number_header,
)
from mqspec.model.mqdsrp_changes import _encode_directory_change
from mqspec.model.propids import PROPIDS
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.model.wire import Reader
from tests.strategies_mqdsrp import (
    MESSAGE_STRATEGIES,
    directory_changes,
    partition_seq_numbers,
    replication_messages,
    seq_number_headers,
)

# GUIDs with distinct bytes, so a swapped or mis-ordered field shows; *_LE is the [MS-DTYP]
# 2.3.4 wire form (Data1, Data2, Data3 little-endian, Data4 as is), written out by hand
SITE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
SITE_LE = "61baeae6" "c6d1" "db11" "baac0003ff4e2d22"
PART = Guid.parse("00112233-4455-6677-8899-aabbccddeeff")
PART_LE = "33221100" "5544" "7766" "8899aabbccddeeff"
OBJ = Guid.parse("0f0e0d0c-0b0a-0908-0706-050403020100")
OBJ_LE = "0c0d0e0f" "0a0b" "0809" "0706050403020100"


def seq(v: int) -> SequenceNumber:
    return SequenceNumber(v)


def h(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts).replace(" ", ""))


def label(text: str) -> str:
    """A WCHAR buffer with its terminator, spelled out as hex (ASCII text only)."""
    return "".join(f"{ord(c):02x}00" for c in text) + "0000"


# --- golden bytes, one per message ------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.6.8")
@covers("MC-MQDSRP", "2.2.5.1")
def test_already_purged_golden_bytes():
    """AlreadyPurgedMessage: Version 0, SiteID, Operation 5, PartitionID, PurgedSeqNumber."""
    wire = h("00", SITE_LE, "05", PART_LE, "0000000000000102")
    msg = decode(wire)
    assert type(msg) is AlreadyPurgedMessage
    assert msg.site_id == SITE
    assert msg.partition_id == PART
    assert msg.purged_seq_number == seq(0x0102)
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.3")
def test_change_reply_golden_bytes():
    """ChangeReplyMessage: RequestIdentifier right after the header (E-017), Result, name."""
    wire = h("00", SITE_LE, "04", "78563412", "05000780", label("QM1"))
    msg = decode(wire)
    assert type(msg) is ChangeReplyMessage
    assert msg.site_id == SITE
    assert msg.request_identifier == 0x12345678
    assert msg.result == 0x80070005  # E_ACCESSDENIED, kept as its unsigned bit pattern
    assert msg.requester_name == "QM1"
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.4")
def test_sync_request_golden_bytes():
    """SyncRequestMessage: big-endian sequence numbers (E-018), IsSync0 and Scope bytes, name."""
    wire = h("00", SITE_LE, "02", PART_LE, "0000000000000001", "00000000000000ff",
             "0000000000000000", "01", "01", label("AB"))
    msg = decode(wire)
    assert type(msg) is SyncRequestMessage
    assert msg.site_id == SITE
    assert msg.partition_id == PART
    assert msg.from_seq_number == seq(1)
    assert msg.to_seq_number == seq(255)
    assert msg.known_purged_seq_number == seq(0)
    assert msg.is_sync0 is True
    assert msg.scope is Scope.ENTERPRISE
    assert msg.requester_name == "AB"
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.5")
@covers("MC-MQDSRP", "2.2.5.3")
@covers("MC-MQDSRP", "2.2.4")
def test_sync_reply_golden_bytes():
    """SyncReplyMessage: the 66-byte header then a deletion named by GUID with two UI1 values."""
    change = h("02", "01", OBJ_LE, PART_LE, "0000000000000005", "0000000000000009",
               "0000000000000003", "02", "7b050000", "7c050000", "01", "01")
    wire = h("00", SITE_LE, "03", PART_LE, "0000000000000005", "0000000000000009",
             "0000000000000003", "01000000", "02000000") + change
    msg = decode(wire)
    assert type(msg) is SyncReplyMessage
    assert msg.site_id == SITE
    assert msg.partition_id == PART
    assert msg.from_seq_number == seq(5)
    assert msg.to_seq_number == seq(9)
    assert msg.purged_seq_number == seq(3)
    assert msg.complete_sync0 is CompleteSync0.COMPLETED
    assert wire[62:66] == b"\x02\x00\x00\x00" and len(wire) - len(change) == 66
    (c,) = msg.changes
    assert c.command is Command.DELETE
    assert c.use_guid and c.guid_identifier == OBJ and c.path_name is None
    assert c.partition_id == PART
    assert (c.previous_seq_number, c.seq_number, c.purged_seq_number) == (seq(5), seq(9), seq(3))
    assert c.properties == (Property(1403, 1), Property(1404, 1))  # PROPID_D_SCOPE, _OBJTYPE
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.6")
def test_bsc_ack_golden_bytes():
    """BSCAckMessage: BSCMachineID, BSCName."""
    wire = h("00", SITE_LE, "07", OBJ_LE, label("BSC"))
    msg = decode(wire)
    assert type(msg) is BSCAckMessage
    assert msg.site_id == SITE
    assert msg.bsc_machine_id == OBJ
    assert msg.bsc_name == "BSC"
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.7")
def test_psc_ack_golden_bytes():
    """PSCAckMessage: PSCSiteID, AckedPartitionID, AckedSeqNumber, PSCName."""
    wire = h("00", SITE_LE, "06", OBJ_LE, PART_LE, "0102030405060708", label("PSC"))
    msg = decode(wire)
    assert type(msg) is PSCAckMessage
    assert msg.site_id == SITE
    assert msg.psc_site_id == OBJ
    assert msg.acked_partition_id == PART
    assert msg.acked_seq_number == seq(0x0102030405060708)
    assert msg.psc_name == "PSC"
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.2")
@covers("MC-MQDSRP", "2.2.5.2")
@covers("MC-MQDSRP", "2.2.4")
def test_change_request_golden_bytes():
    """ChangeRequestMessage from a BSC: PSCNameOffset 5 WCHARs ("BSC1" and its terminator),
    PSCName, then a DirectoryChange by path with a VT_LPWSTR and a VT_UI4 value."""
    change = h("00", "00", label("Q"), PART_LE, "0000000000000000", "0000000000000000",
               "0000000000000000", "02", "6c000000", "69000000", label("L"), "e8030000")
    wire = h("00", SITE_LE, "01", PART_LE, "2a000000", "05000000", label("BSC1"),
             label("PSC")) + change
    msg = decode(wire)
    assert type(msg) is ChangeRequestMessage
    assert msg.site_id == SITE
    assert msg.partition_id == PART
    assert msg.request_identifier == 42
    assert msg.requester_name == "BSC1"
    assert msg.psc_name == "PSC"
    assert msg.psc_name_offset == 5
    c = msg.change
    assert c.command is Command.CREATE
    assert not c.use_guid and c.path_name == "Q" and c.guid_identifier is None
    assert c.partition_id == PART
    assert c.seq_number == SequenceNumber.MIN
    assert c.properties == (
        Property(PROPIDS["PROPID_Q_LABEL"].propid, "L"),
        Property(PROPIDS["PROPID_Q_QUOTA"].propid, 1000),
    )
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.5.2")
def test_change_request_from_psc_has_zero_offset_and_no_psc_name():
    """From a PSC, PSCNameOffset is 0 and the DirectoryChange follows RequesterName directly."""
    change = h("01", "01", OBJ_LE, PART_LE, "00" * 24, "00")
    wire = h("00", SITE_LE, "01", PART_LE, "07000000", "00000000", label("PSC")) + change
    msg = decode(wire)
    assert msg.psc_name is None and msg.psc_name_offset == 0
    assert msg.requester_name == "PSC"
    assert msg.change.properties == () and msg.change.guid_identifier == OBJ
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.9")
@covers("MC-MQDSRP", "2.2.5.4")
@covers("MC-MQDSRP", "2.2.3")
def test_change_propagation_golden_bytes():
    """ChangePropagationMessage: Flush, Count, one change, then Count, MachineName and one
    PARTITION_SEQ_NUMBERS in the SeqNumberHeader (E-015)."""
    change = h("01", "00", label("m\\q"), PART_LE, "0000000000000010", "0000000000000011",
               "0000000000000008", "01", "6a000000", "feff")  # PROPID_Q_BASEPRIORITY = -2
    header = h("0100", label("M"), PART_LE, "0000000000000011", "0000000000000008")
    wire = h("00", SITE_LE, "00", "01", "0100") + change + header
    msg = decode(wire)
    assert type(msg) is ChangePropagationMessage
    assert msg.site_id == SITE
    assert msg.flush is True
    (c,) = msg.changes
    assert c.command is Command.UPDATE and c.path_name == "m\\q"
    assert (c.previous_seq_number, c.seq_number, c.purged_seq_number) == (seq(16), seq(17), seq(8))
    assert c.properties == (Property(PROPIDS["PROPID_Q_BASEPRIORITY"].propid, -2),)
    assert msg.seq_numbers.machine_name == "M"
    assert msg.seq_numbers.partitions == (PartitionSeqNumbers(PART, seq(17), seq(8)),)
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.5.4")
def test_empty_seq_number_header_is_two_zero_bytes():
    """A SeqNumberHeader with Count 0 is just 00 00: no MachineName, no array."""
    wire = h("00", SITE_LE, "00", "00", "0000", "0000")
    msg = decode(wire)
    assert msg == ChangePropagationMessage(SITE, False, (), SeqNumberHeader(None, ()))
    assert encode(msg) == wire


@covers("MC-MQDSRP", "2.2.6.1")
def test_operation_selects_the_message_type():
    """decode dispatches on the Operation byte at offset 17; each class knows its Operation."""
    assert {cls.operation for cls in MESSAGE_STRATEGIES} == set(Operation)
    for cls in MESSAGE_STRATEGIES:
        assert MESSAGE_TYPES[cls.__name__] is cls


# --- round trips ------------------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.6.1")
@given(replication_messages())
def test_every_message_round_trips(msg):
    """decode(encode(m)) == m and the bytes start with Version 0 and the class's Operation."""
    wire = encode(msg)
    assert wire[0] == 0 and wire[17] == msg.operation
    assert decode(wire) == msg
    assert encode(decode(wire)) == wire


@pytest.mark.parametrize("cls", list(MESSAGE_STRATEGIES), ids=lambda c: c.__name__)
@settings(max_examples=40)
@given(data=st.data())
def test_each_message_type_round_trips(cls, data):
    """Every message type on its own survives encode then decode unchanged."""
    msg = data.draw(MESSAGE_STRATEGIES[cls])
    assert decode(encode(msg)) == msg


@covers("MC-MQDSRP", "2.2.4")
@given(directory_changes(max_properties=8))
def test_directory_change_round_trips(change):
    """A DirectoryChange read back from its bytes is the same change and uses all the bytes."""
    wire = encode_directory_change(change)
    r = Reader(wire)
    assert decode_directory_change(r) == change
    assert r.remaining == 0


@covers("MC-MQDSRP", "2.2.6.1")
@given(replication_messages())
def test_equal_bytes_decode_to_one_shared_value(msg):
    """decode_shared gives decode's value, the same object for equal bytes, and no value for bad bytes."""
    wire = encode(msg)
    shared = decode_shared(wire)
    assert shared == decode(wire) and decode_shared(bytes(bytearray(wire))) is shared
    with pytest.raises(DecodeError):
        decode_shared(wire + b"\x00")  # trailing bytes: refused on every call, never remembered
    with pytest.raises(DecodeError):
        decode_shared(wire + b"\x00")


@covers("MC-MQDSRP", "2.2.6.5")
@covers("MC-MQDSRP", "2.2.4")
@given(st.lists(directory_changes(max_properties=4), min_size=1, max_size=6), st.data())
def test_changes_decoded_before_decode_the_same_in_any_message_and_cut_short_still_fail(changes, data):
    """A change's bytes met again (another batch, another offset) give the change; cut short they are refused."""
    def reply(batch):
        return SyncReplyMessage(SITE, PART, seq(1), seq(9), seq(0), CompleteSync0.NOT_IN_SYNC0, tuple(batch))

    assert decode(encode(reply(changes))) == reply(changes)
    batch = data.draw(st.lists(st.sampled_from(changes), min_size=1, max_size=6))
    wire = encode(reply(batch))
    assert decode(wire) == reply(batch)
    with pytest.raises(DecodeError):
        decode(wire[:-1])  # the last change one byte short: never taken for the one seen whole


@covers("MC-MQDSRP", "2.2.4")
@given(st.lists(directory_changes(max_properties=4), min_size=1, max_size=8))
def test_a_change_encodes_to_its_own_bytes_however_often_objects_come_and_go(changes):
    """The wire form kept per change object is that change's: fresh objects (reused ids) never get another's."""
    for change in changes:
        twin = attrs.evolve(change)  # a new object, built and dropped each round
        assert encode_directory_change(twin) == _encode_directory_change(change)
        assert encode_directory_change(change) == encode_directory_change(change)


@covers("MC-MQDSRP", "2.2.5.4")
@given(seq_number_headers(max_partitions=5))
def test_seq_number_header_round_trips(header):
    """A SeqNumberHeader read back from its bytes is the same header and uses all the bytes."""
    r = Reader(encode_seq_number_header(header))
    assert decode_seq_number_header(r) == header
    assert r.remaining == 0


@covers("MC-MQDSRP", "2.2.3")
@given(partition_seq_numbers())
def test_partition_seq_numbers_round_trip(p):
    """PARTITION_SEQ_NUMBERS is 32 bytes and reads back unchanged."""
    wire = encode_partition_seq_numbers(p)
    assert len(wire) == 32
    assert decode_partition_seq_numbers(Reader(wire)) == p


@given(replication_messages())
def test_decoded_values_equal_validated_ones(msg):
    """Values the decoder builds without validators hash and compare like validated ones."""
    decoded = decode(encode(msg))
    assert hash(decoded) == hash(msg)
    assert repr(decoded) == repr(msg)


# --- JSON form --------------------------------------------------------------------------------

@settings(max_examples=60)
@given(replication_messages())
def test_json_round_trip(msg):
    """to_json then from_json gives the same message back (enums as numbers, GUIDs as text)."""
    data = to_json(msg)
    assert data["message"] == type(msg).__name__
    assert from_json(data, MESSAGE_TYPES) == msg


@settings(max_examples=30)
@given(directory_changes(), seq_number_headers(), partition_seq_numbers())
def test_nested_structures_json_round_trip(change, header, p):
    """DirectoryChange, SeqNumberHeader and PartitionSeqNumbers also round-trip through JSON."""
    for value in (change, header, p):
        assert from_json(to_json(value), MESSAGE_TYPES) == value


def test_json_form_is_readable():
    """The JSON form names PROPIDs, prints GUIDs dashed and enums as numbers."""
    msg = decode(h("00", SITE_LE, "02", PART_LE, "00" * 24, "00", "01", label("A")))
    data = to_json(msg)
    assert data["site_id"] == str(SITE) and data["scope"] == 1 and data["is_sync0"] is False
    assert from_json({**data, "scope": 0}, MESSAGE_TYPES).scope is Scope.NONE


# --- model values that cannot go on the wire --------------------------------------------------

def _change(**kw) -> DirectoryChange:
    fields = dict(command=Command.UPDATE, partition_id=PART, previous_seq_number=seq(0),
                  seq_number=seq(1), purged_seq_number=seq(0), properties=(), path_name="q")
    fields.update(kw)
    return DirectoryChange(**fields)


@pytest.mark.parametrize(
    "kw",
    [
        {"path_name": None},  # neither name nor GUID
        {"guid_identifier": OBJ},  # both (path_name="q" by default)
        {"properties": (Property(105, 1),) * 256},  # NumberOfProperties is a UCHAR
        {"path_name": "a\x00b"},  # a NUL would end the WCHAR buffer
        {"command": 4},
        {"partition_id": "not a guid"},
        {"seq_number": 5},
    ],
    ids=["no-name", "two-names", "256-properties", "nul", "command", "guid", "seqnum"],
)
def test_unencodable_directory_change_is_a_model_error(kw):
    """A DirectoryChange that no bytes could express is refused at construction."""
    with pytest.raises(ModelError):
        _change(**kw)


def test_255_properties_are_allowed():
    """NumberOfProperties 255 is the largest count the UCHAR holds, and it round-trips."""
    c = _change(properties=(Property(104, 1),) * 255)
    assert decode_directory_change(Reader(encode_directory_change(c))) == c


def test_command_accepts_its_integer_value():
    """Scenarios and JSON may give Command as a number; it becomes the enum member."""
    assert _change(command=2).command is Command.DELETE


@pytest.mark.parametrize(
    "build",
    [
        lambda: SeqNumberHeader("M", ()),
        lambda: SeqNumberHeader(None, (PartitionSeqNumbers(PART, seq(1), seq(0)),)),
        lambda: ChangeReplyMessage(SITE, 1 << 32, 0, "r"),
        lambda: ChangeReplyMessage(SITE, 0, -1, "r"),
        lambda: SyncRequestMessage(SITE, PART, seq(0), seq(0), seq(0), 1, Scope.NONE, "r"),
        lambda: SyncRequestMessage(SITE, PART, seq(0), seq(0), seq(0), True, 2, "r"),
        lambda: SyncReplyMessage(SITE, PART, seq(0), seq(0), seq(0), 3, ()),
        lambda: ChangePropagationMessage(SITE, False, (None,)),
        lambda: ChangeRequestMessage(SITE, PART, 0, "r", "p\x00", _change()),
        lambda: BSCAckMessage(SITE, OBJ, None),
    ],
    ids=["name-without-partitions", "partitions-without-name", "request-id", "negative-result",
         "int-flag", "scope", "complete-sync0", "not-a-change", "nul-psc-name", "no-bsc-name"],
)
def test_unencodable_message_is_a_model_error(build):
    """Messages whose fields do not fit their wire form are refused at construction."""
    with pytest.raises(ModelError):
        build()


def test_encode_refuses_other_objects():
    """encode takes only the eight replication messages."""
    with pytest.raises(ModelError):
        encode(_change())


def test_every_section_2_structure_is_registered():
    """2.2.3 .. 2.2.6.9 each have exactly one registered decode function (2.2.2 is seqnum's)."""
    # the registry itself, not load_all(): this module's clauses only, whatever else is loaded
    ours = {s: c for (d, s), c in clauses._REGISTRY.items()
            if d == "MC-MQDSRP" and c.code.startswith("model/mqdsrp")}
    sections = set(ours)
    expected = {"2.2.3", "2.2.4", "2.2.5.1", "2.2.5.2", "2.2.5.3", "2.2.5.4",
                *(f"2.2.6.{i}" for i in range(1, 10))}
    assert sections == expected
