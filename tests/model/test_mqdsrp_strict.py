"""MC-MQDSRP section 2: each MUST that bytes can break is a DecodeError naming field and offset.

Each test starts from a hand-assembled valid message (see test_mqdsrp.py), breaks one field
and checks the error's field, absolute offset, section and enclosing structure.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.clauses import covers
from mqspec.model.errors import DecodeError
from mqspec.model.mqdsrp import decode, encode
from tests.model.test_mqdsrp import OBJ_LE, PART_LE, SITE_LE, h, label
from tests.strategies_mqdsrp import replication_messages

ZERO_SEQ = "00" * 8


def change_by_path(name: str = "Q", *props: str, n: int | None = None) -> str:
    """A DirectoryChange by path; ``props`` are (PROPID hex, value hex) strings, PROPIDs first."""
    ids = "".join(p.split(":")[0] for p in props)
    values = "".join(p.split(":")[1] for p in props)
    count = len(props) if n is None else n
    return "00" "00" + label(name) + PART_LE + ZERO_SEQ * 3 + f"{count:02x}" + ids + values


GOLDEN = {
    "AlreadyPurgedMessage": h("00", SITE_LE, "05", PART_LE, "0000000000000102"),
    "ChangeReplyMessage": h("00", SITE_LE, "04", "78563412", "05000780", label("QM1")),
    "SyncRequestMessage": h("00", SITE_LE, "02", PART_LE, ZERO_SEQ * 3, "01", "01", label("AB")),
    "SyncReplyMessage": h("00", SITE_LE, "03", PART_LE, ZERO_SEQ * 3, "01000000", "00000000",
                          change_by_path()),
    "BSCAckMessage": h("00", SITE_LE, "07", OBJ_LE, label("BSC")),
    "PSCAckMessage": h("00", SITE_LE, "06", OBJ_LE, PART_LE, ZERO_SEQ, label("PSC")),
    "ChangeRequestMessage": h("00", SITE_LE, "01", PART_LE, "2a000000", "05000000",
                              label("BSC1"), label("PSC"), change_by_path()),
    "ChangePropagationMessage": h("00", SITE_LE, "00", "00", "0100", change_by_path(),
                                  "0100", label("M"), PART_LE, ZERO_SEQ * 2),
}

SECTION = {
    "ChangePropagationMessage": "MC-MQDSRP 2.2.6.9", "ChangeRequestMessage": "MC-MQDSRP 2.2.6.2",
    "SyncRequestMessage": "MC-MQDSRP 2.2.6.4", "SyncReplyMessage": "MC-MQDSRP 2.2.6.5",
    "ChangeReplyMessage": "MC-MQDSRP 2.2.6.3", "AlreadyPurgedMessage": "MC-MQDSRP 2.2.6.8",
    "PSCAckMessage": "MC-MQDSRP 2.2.6.7", "BSCAckMessage": "MC-MQDSRP 2.2.6.6",
}


def refused(data: bytes) -> DecodeError:
    """Decode ``data``, which must fail, and return the error."""
    with pytest.raises(DecodeError) as info:
        decode(data)
    return info.value


def patched(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new):]


def test_golden_messages_decode():
    """The starting points of every test here are valid messages."""
    for name, wire in GOLDEN.items():
        assert type(decode(wire)).__name__ == name
        assert encode(decode(wire)) == wire


# --- BaseReplicationHeader --------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.5.1")
def test_version_must_be_zero():
    """Version "MUST be set to 0x00": 0x01 is refused at offset 0, in the message it heads."""
    err = refused(patched(GOLDEN["AlreadyPurgedMessage"], 0, b"\x01"))
    assert (err.field, err.offset, err.section) == ("BaseReplicationHeader.Version", 0,
                                                    "MC-MQDSRP 2.2.5.1")
    assert err.path == "AlreadyPurgedMessage.BaseReplicationHeader.Version"


@covers("MC-MQDSRP", "2.2.5.1")
def test_wrong_version_is_reported_first_even_when_short():
    """A wrong Version is the error even when the header is cut short."""
    err = refused(b"\x02" + bytes.fromhex(SITE_LE)[:3])
    assert (err.field, err.offset) == ("BaseReplicationHeader.Version", 0)


@covers("MC-MQDSRP", "2.2.5.1")
@pytest.mark.parametrize("op", [8, 0x7F, 0xFF])
def test_unknown_operation_is_refused(op):
    """Operation "MUST be set to one of the following values" (0x00..0x07)."""
    err = refused(patched(GOLDEN["AlreadyPurgedMessage"], 17, bytes([op])))
    assert (err.field, err.offset, err.section) == ("BaseReplicationHeader.Operation", 17,
                                                    "MC-MQDSRP 2.2.5.1")
    assert f"{op:#04x}" in err.reason


@covers("MC-MQDSRP", "2.2.6.1")
@pytest.mark.parametrize("size", [0, 1, 17])
def test_short_header_is_refused(size):
    """A body shorter than the 18-byte BaseReplicationHeader names the field that runs out."""
    err = refused(GOLDEN["AlreadyPurgedMessage"][:size])
    assert err.field.startswith("BaseReplicationHeader.") and err.section == "MC-MQDSRP 2.2.5.1"


# --- DirectoryChange --------------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.4")
@pytest.mark.parametrize("command", [4, 0x80, 0xFF])
def test_command_must_be_0_to_3(command):
    """Command "MUST be one of the following values" (0x00..0x03)."""
    err = refused(patched(GOLDEN["ChangePropagationMessage"], 21, bytes([command])))
    assert (err.field, err.offset, err.section) == ("DirectoryChange.Command", 21,
                                                    "MC-MQDSRP 2.2.4")
    assert err.path == "ChangePropagationMessage.DirectoryChanges[0].DirectoryChange.Command"


@covers("MC-MQDSRP", "2.2.4")
@pytest.mark.parametrize("use_guid", [2, 0xFF])
def test_use_guid_must_be_0_or_1(use_guid):
    """UseGuid "MUST be set as follows": 0x00 (PathName) or 0x01 (GuidIdentifier)."""
    err = refused(patched(GOLDEN["ChangePropagationMessage"], 22, bytes([use_guid])))
    assert (err.field, err.offset, err.section) == ("DirectoryChange.UseGuid", 22,
                                                    "MC-MQDSRP 2.2.4")


@covers("MC-MQDSRP", "2.2.4")
def test_too_many_properties_fail_before_reading_them():
    """NumberOfProperties 3 with bytes for one property fails at NumberOfProperties."""
    change = change_by_path("Q", "69000000:e8030000", n=3)  # one PROPID_Q_QUOTA, count 3
    wire = h("00", SITE_LE, "00", "00", "0100", change, "0000")
    err = refused(wire)
    n_offset = 21 + 2 + 4 + 16 + 24
    assert (err.field, err.offset, err.section) == ("DirectoryChange.NumberOfProperties",
                                                    n_offset, "MC-MQDSRP 2.2.4")
    assert err.reason == "3 properties declared, bytes for 2"  # 10 bytes left: 2 x 5


@covers("MC-MQDSRP", "2.2.4")
def test_number_of_properties_counts_against_bytes_left():
    """With exactly one property's bytes left, NumberOfProperties 3 says "bytes for 1"."""
    change = h("00", "01", OBJ_LE, PART_LE, ZERO_SEQ * 3, "03", "68000000", "01")
    wire = h("00", SITE_LE, "03", PART_LE, ZERO_SEQ * 3, "01000000", "00000000") + change
    err = refused(wire)
    assert err.field == "DirectoryChange.NumberOfProperties"
    assert err.reason == "3 properties declared, bytes for 1"
    assert err.path == ("SyncReplyMessage.DirectoryChanges[0]."
                        "DirectoryChange.NumberOfProperties")


@covers("MC-MQDSRP", "2.2.4")
def test_unknown_propid_is_refused():
    """A PROPID outside the registry names its PropertyID index and offset."""
    change = change_by_path("Q", "69000000:e8030000", "0f270000:00")  # PROPID 9999
    wire = h("00", SITE_LE, "00", "00", "0100", change, "0000")
    err = refused(wire)
    ids_offset = 21 + 2 + 4 + 16 + 24 + 1
    assert (err.field, err.offset, err.section) == ("DirectoryChange.PropertyID[1]",
                                                    ids_offset + 4, "MC-MQDSRP 2.2.4")
    assert "unknown PROPID 9999" in err.reason


@covers("MC-MQDSRP", "2.2.4")
def test_short_property_value_is_refused():
    """A VT_BLOB value claiming more bytes than remain is an error on that PropertyValue."""
    change = change_by_path("Q", "75000000:ffffff00" + "00" * 4)  # PROPID_Q_SEQNUM, size 16M
    wire = h("00", SITE_LE, "00", "00", "0100", change, "0000")
    err = refused(wire)
    assert err.field == "DirectoryChange.PropertyValue[0]"
    assert err.section == "MC-MQDSRP 2.2.4"
    assert err.offset == 21 + 2 + 4 + 16 + 24 + 1 + 4


@covers("MC-MQDSRP", "2.2.4")
@pytest.mark.parametrize("cut", range(1, 10))
def test_truncated_fixed_fields_name_the_field(cut):
    """A DirectoryChange cut inside its fixed fields names the field that runs out."""
    change = bytes.fromhex(change_by_path())
    header = h("00", SITE_LE, "01", PART_LE, "00000000", "00000000", label("R"))
    wire = header + change[: 8 + cut * 4]
    err = refused(wire)
    expected = ["PartitionID"] * 3 + ["PreviousSeqNumber"] * 2 + ["SeqNumber"] * 2 + \
        ["PurgedSeqNumber"] * 2
    assert err.field == f"DirectoryChange.{expected[cut - 1]}"
    assert (err.section, err.message) == ("MC-MQDSRP 2.2.4", "ChangeRequestMessage")


# --- missing terminators ----------------------------------------------------------------------

UNTERMINATED = [
    ("ChangeReplyMessage", h("00", SITE_LE, "04", "00000000", "00000000", "41004200"),
     "ChangeReplyMessage.RequesterName", 26, "MC-MQDSRP 2.2.6.3"),
    ("SyncRequestMessage", h("00", SITE_LE, "02", PART_LE, ZERO_SEQ * 3, "00", "00", "4100"),
     "SyncRequestMessage.RequesterName", 60, "MC-MQDSRP 2.2.6.4"),
    ("BSCAckMessage", h("00", SITE_LE, "07", OBJ_LE, "42"),
     "BSCAckMessage.BSCName", 34, "MC-MQDSRP 2.2.6.6"),
    ("PSCAckMessage", h("00", SITE_LE, "06", OBJ_LE, PART_LE, ZERO_SEQ, "4100" "0041"),
     "PSCAckMessage.PSCName", 58, "MC-MQDSRP 2.2.6.7"),  # a 00 00 pair straddling two WCHARs
    ("ChangeRequestMessage", h("00", SITE_LE, "01", PART_LE, "00000000", "00000000", "4200"),
     "ChangeRequestHeader.RequesterName", 42, "MC-MQDSRP 2.2.5.2"),
    ("ChangeRequestMessage", h("00", SITE_LE, "01", PART_LE, "00000000", "02000000", label("B"),
                               "5000"),
     "ChangeRequestHeader.PSCName", 46, "MC-MQDSRP 2.2.5.2"),
    ("ChangeRequestMessage", h("00", SITE_LE, "01", PART_LE, "00000000", "00000000", label("R"),
                               "00", "00", "5100"),
     "DirectoryChange.PathName", 48, "MC-MQDSRP 2.2.4"),
    ("ChangePropagationMessage", h("00", SITE_LE, "00", "00", "0000", "0100", "4d00"),
     "SeqNumberHeader.MachineName", 23, "MC-MQDSRP 2.2.5.4"),
    ("ChangePropagationMessage",
     h("00", SITE_LE, "00", "00", "0100", change_by_path("Q", "6c000000:4c00")),
     "DirectoryChange.PropertyValue[0]", 21 + 2 + 4 + 41 + 4, "MC-MQDSRP 2.2.4"),
]


@covers("MC-MQDSRP", "2.2.5.2")
@covers("MC-MQDSRP", "2.2.5.4")
@covers("MC-MQDSRP", "2.2.6.3")
@pytest.mark.parametrize(("message", "wire", "field", "offset", "section"), UNTERMINATED,
                         ids=[f"{u[0]}-{u[2]}" for u in UNTERMINATED])
def test_missing_terminator_is_refused(message, wire, field, offset, section):
    """A null-terminated WCHAR buffer without its 0x0000 is refused where the buffer starts."""
    err = refused(wire)
    assert (err.field, err.offset, err.section) == (field, offset, section)
    assert "terminator" in err.reason
    assert err.message == message


# --- flags and enumerations -------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.6.4")
@pytest.mark.parametrize("value", [2, 0xFF])
def test_is_sync0_must_be_0_or_1(value):
    """IsSync0 "MUST be set to one of the following values" (0x00, 0x01)."""
    err = refused(patched(GOLDEN["SyncRequestMessage"], 58, bytes([value])))
    assert (err.field, err.offset, err.section) == ("SyncRequestMessage.IsSync0", 58,
                                                    "MC-MQDSRP 2.2.6.4")


@covers("MC-MQDSRP", "2.2.6.4")
@pytest.mark.parametrize("value", [2, 0xFF])
def test_scope_must_be_0_or_1(value):
    """Scope "MUST be set to one of the following values" (0x00, 0x01; E-019)."""
    err = refused(patched(GOLDEN["SyncRequestMessage"], 59, bytes([value])))
    assert (err.field, err.offset, err.section) == ("SyncRequestMessage.Scope", 59,
                                                    "MC-MQDSRP 2.2.6.4")


@covers("MC-MQDSRP", "2.2.6.9")
@pytest.mark.parametrize("value", [2, 0xFF])
def test_flush_must_be_0_or_1(value):
    """Flush "MUST be set to one of the following values" (0x00, 0x01)."""
    err = refused(patched(GOLDEN["ChangePropagationMessage"], 18, bytes([value])))
    assert (err.field, err.offset, err.section) == ("ChangePropagationMessage.Flush", 18,
                                                    "MC-MQDSRP 2.2.6.9")


@covers("MC-MQDSRP", "2.2.5.3")
@pytest.mark.parametrize("value", ["03000000", "00000001", "ffffffff"])
def test_complete_sync0_must_be_0_to_2(value):
    """CompleteSync0 "MUST be set to one of the following values" (0, 1, 2; E-014)."""
    err = refused(patched(GOLDEN["SyncReplyMessage"], 62, bytes.fromhex(value)))
    assert (err.field, err.offset, err.section) == ("SyncReplyHeader.CompleteSync0", 62,
                                                    "MC-MQDSRP 2.2.5.3")
    assert err.path == "SyncReplyMessage.SyncReplyHeader.CompleteSync0"


# --- PSCNameOffset ----------------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.5.2")
@pytest.mark.parametrize("offset", [1, 4, 6, 10, 0xFFFFFFFF])
def test_psc_name_offset_inconsistent_is_refused(offset):
    """A nonzero PSCNameOffset must be RequesterName's WCHAR length plus one (E-013)."""
    err = refused(patched(GOLDEN["ChangeRequestMessage"], 38, offset.to_bytes(4, "little")))
    assert (err.field, err.offset, err.section) == ("ChangeRequestHeader.PSCNameOffset", 38,
                                                    "MC-MQDSRP 2.2.5.2")
    assert err.path == "ChangeRequestMessage.ChangeRequestHeader.PSCNameOffset"


@covers("MC-MQDSRP", "2.2.5.2")
def test_zero_psc_name_offset_means_no_psc_name():
    """With PSCNameOffset 0 the bytes after RequesterName are the DirectoryChange, so a PSCName
    left there is read as one and refused."""
    wire = patched(GOLDEN["ChangeRequestMessage"], 38, bytes(4))
    err = refused(wire)  # "P" (0x50) is read as a Command
    assert (err.field, err.offset) == ("DirectoryChange.Command", 42 + 10)


# --- counts -----------------------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.6.9")
def test_huge_change_count_fails_at_once():
    """A 21-byte message claiming 65,535 changes fails at Count before building anything."""
    wire = h("00", SITE_LE, "00", "00", "ffff")
    assert len(wire) == 21
    started = time.perf_counter()
    err = refused(wire)
    assert time.perf_counter() - started < 0.05
    assert (err.field, err.offset, err.section) == ("ChangePropagationMessage.Count", 19,
                                                    "MC-MQDSRP 2.2.6.9")
    assert err.reason == "65535 changes declared, bytes for 0"


@covers("MC-MQDSRP", "2.2.6.5")
def test_huge_sync_reply_count_fails_at_once():
    """SyncReplyHeader.Count 0xFFFFFFFF with one change's bytes fails at Count (2.2.6.5)."""
    wire = patched(GOLDEN["SyncReplyMessage"], 58, b"\xff\xff\xff\xff")
    err = refused(wire)
    assert (err.field, err.offset, err.section) == ("SyncReplyHeader.Count", 58,
                                                    "MC-MQDSRP 2.2.6.5")
    assert err.reason == "4294967295 changes declared, bytes for 1"
    assert err.path == "SyncReplyMessage.SyncReplyHeader.Count"


@covers("MC-MQDSRP", "2.2.6.9")
def test_fewer_changes_than_count_is_refused():
    """Count 2 with one change and a SeqNumberHeader left: too few bytes for a second change."""
    wire = patched(GOLDEN["ChangePropagationMessage"], 19, b"\x02\x00")
    err = refused(wire)
    assert (err.field, err.offset) == ("ChangePropagationMessage.Count", 19)
    assert err.reason == "2 changes declared, bytes for 1"


@covers("MC-MQDSRP", "2.2.5.4")
def test_seq_number_header_count_too_large_is_refused():
    """SeqNumberHeader.Count 5 with one PARTITION_SEQ_NUMBERS fails at that Count."""
    wire = h("00", SITE_LE, "00", "00", "0000", "0500", label("M"), PART_LE, ZERO_SEQ * 2)
    err = refused(wire)
    assert (err.field, err.offset, err.section) == ("SeqNumberHeader.Count", 21,
                                                    "MC-MQDSRP 2.2.5.4")
    assert err.reason == "5 partition sequence numbers declared, bytes for 1"
    assert err.path == "ChangePropagationMessage.SeqNumberHeader.Count"


@covers("MC-MQDSRP", "2.2.6.9")
def test_missing_seq_number_header_is_refused():
    """A ChangePropagationMessage that ends after its changes lacks its SeqNumberHeader (E-016)."""
    err = refused(h("00", SITE_LE, "00", "00", "0000"))
    assert (err.field, err.offset, err.section) == ("SeqNumberHeader.Count", 21,
                                                    "MC-MQDSRP 2.2.5.4")


# --- trailing bytes ---------------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.6.1")
@pytest.mark.parametrize("name", list(GOLDEN))
def test_trailing_bytes_are_refused(name):
    """Bytes after a complete message are refused, naming the message and where they start."""
    wire = GOLDEN[name]
    err = refused(wire + b"\x00")
    assert (err.field, err.offset, err.section) == (name, len(wire), SECTION[name])
    assert "1 trailing bytes" in err.reason


@covers("MC-MQDSRP", "2.2.5.4")
def test_machine_name_with_zero_count_is_trailing():
    """MachineName "MUST NOT be present if Count is set to 0x0000": it is left over and refused."""
    wire = h("00", SITE_LE, "00", "00", "0000", "0000", label("M"))
    err = refused(wire)
    assert (err.field, err.offset) == ("ChangePropagationMessage", 23)


# --- any bytes at all -------------------------------------------------------------------------

@covers("MC-MQDSRP", "2.2.6.1")
@settings(max_examples=60)
@given(replication_messages())
def test_every_truncation_is_a_decode_error(msg):
    """Every proper prefix of a valid message raises DecodeError, never another exception."""
    wire = encode(msg)
    for end in range(len(wire)):
        with pytest.raises(DecodeError):
            decode(wire[:end])


@covers("MC-MQDSRP", "2.2.6.1")
@settings(max_examples=300)
@given(replication_messages(), st.data())
def test_mutated_bytes_decode_canonically_or_fail(msg, data):
    """After changing one byte, decode either raises DecodeError or gives a message that encodes
    back to exactly the changed bytes (every accepted byte string is canonical)."""
    wire = bytearray(encode(msg))
    i = data.draw(st.integers(0, len(wire) - 1))
    wire[i] = data.draw(st.integers(0, 255))
    try:
        decoded = decode(bytes(wire))
    except DecodeError:
        return
    assert encode(decoded) == bytes(wire)


@covers("MC-MQDSRP", "2.2.6.1")
@settings(max_examples=300)
@given(st.sampled_from(list(range(8))), st.binary(max_size=120))
def test_random_bodies_only_raise_decode_error(op, body):
    """Any body after a valid header decodes canonically or raises DecodeError."""
    wire = h("00", SITE_LE, f"{op:02x}") + body
    try:
        decoded = decode(wire)
    except DecodeError:
        return
    assert encode(decoded) == wire


def test_lenient_has_no_effect():
    """Section 2 gives receivers no leniency: lenient=True accepts and refuses the same bytes."""
    wire = GOLDEN["SyncRequestMessage"]
    assert decode(wire, lenient=True) == decode(wire)
    with pytest.raises(DecodeError):
        decode(wire + b"\x00", lenient=True)


@pytest.mark.parametrize(
    "wire",
    [
        h("00", SITE_LE, "06", OBJ_LE, PART_LE, ZERO_SEQ, "24b9a7db0000"),  # trailing high
        h("00", SITE_LE, "07", OBJ_LE, "00dc41000000"),  # lone low surrogate first
        h("00", SITE_LE, "01", PART_LE, "00000000", "03000000", "00d800dc0000", "4100" "0000",
          change_by_path()),  # a surrogate pair: 2 WCHARs, so PSCNameOffset 3
    ],
    ids=["trailing-high-surrogate", "lone-low-surrogate", "pair-counts-two-wchars"],
)
def test_unpaired_surrogates_survive_a_round_trip(wire):
    """WCHAR buffers are UTF-16 code units: lone surrogates decode and encode back unchanged."""
    assert encode(decode(wire)) == wire
