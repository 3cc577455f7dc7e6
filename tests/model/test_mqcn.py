"""[MS-MQCN] section 2: Change Notification Message, Notification Update, Notification Body."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import attrs
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.clauses import covers, load_all
from mqspec.errata import Erratum
from mqspec.model import mqcn
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import from_json, to_json
from mqspec.model.mqcn import (
    ChangeNotificationMessage,
    Command,
    Event,
    NotificationBody,
    NotificationUpdate,
    Version,
    decode,
    decode_body,
    encode,
    encode_body,
)
from mqspec.model.propids import PROPIDS
from mqspec.model.propvalue import Property
from tests.strategies_mqcn import messages, notification_bodies, notification_updates

ROOT = Path(__file__).resolve().parents[2]
QUEUE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
MASTER = Guid.parse("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
D_SCOPE = PROPIDS["PROPID_D_SCOPE"].propid
D_OBJTYPE = PROPIDS["PROPID_D_OBJTYPE"].propid


def utf16(text: str) -> bytes:
    return text.encode("utf-16-le")


def body_bytes(
    event="2", guid=str(QUEUE), end="</ObjectGuid>", dc="dc1.example.com", tail=""
) -> bytes:
    """A version 0x02 message whose body text is assembled from the given pieces."""
    text = (
        f"<Notification><Event>{event}</Event><ObjectGuid>{guid}{end}"
        f"<DomainController>{dc}</DomainController></Notification>{tail}"
    )
    return b"\x02\x01" + utf16(text)


def decode_error(data: bytes, **kw) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode(data, **kw)
    return info.value


def delete_update() -> NotificationUpdate:
    """A queue deletion as 3.3.5.2 prepares it: PropertyId = [PROPID_D_SCOPE, PROPID_D_OBJTYPE]."""
    return NotificationUpdate(
        command=Command.DELETE,
        guid_identifier=QUEUE,
        guid_master_id=MASTER,
        properties=(Property(D_SCOPE, 1), Property(D_OBJTYPE, 1)),  # OBJTYPE 1 = MQDS_QUEUE
    )


# --- Change Notification Message (2.2.4) ---------------------------------------------------


@covers("MS-MQCN", "2.2.4")
@given(messages())
def test_messages_round_trip(msg):
    """decode(encode(m)) == m and encode(decode(b)) == b for every message the model allows."""
    wire = encode(msg)
    assert decode(wire) == msg
    assert encode(decode(wire)) == wire


@covers("MS-MQCN", "2.2.4")
@settings(max_examples=50)
@given(messages())
def test_json_form_round_trips(msg):
    """A message survives the JSON form ``mqspec decode`` prints and ``mqspec encode`` reads."""
    assert from_json(to_json(msg), mqcn.MESSAGE_TYPES) == msg


@covers("MS-MQCN", "2.2.4")
@pytest.mark.parametrize("version", [0x00, 0x03, 0xFF])
def test_unknown_version_is_refused(version):
    """Version MUST be 0x01 or 0x02; anything else is a decode error at offset 0."""
    err = decode_error(bytes((version, 1)) + bytes(50))
    assert (err.field, err.offset) == ("ChangeNotificationMessage.Version", 0)
    assert err.section == "MS-MQCN 2.2.4"


@covers("MS-MQCN", "2.2.4")
def test_version_2_count_must_be_one_unless_lenient():
    """Version 0x02 with NumberOfUpdateNotifications != 1 is refused, or read when lenient."""
    data = bytearray(body_bytes())
    data[1] = 3
    err = decode_error(bytes(data))
    assert (err.field, err.offset) == ("ChangeNotificationMessage.NumberOfUpdateNotifications", 1)
    assert decode(bytes(data), lenient=True) == decode(body_bytes())


@covers("MS-MQCN", "2.2.4")
def test_update_count_is_checked_before_reading_updates():
    """A count larger than the bytes left could hold fails at once, naming the count."""
    err = decode_error(
        b"\x01\xff" + encode(ChangeNotificationMessage(version=1, updates=[delete_update()]))[2:]
    )
    assert err.field == "ChangeNotificationMessage.NumberOfUpdateNotifications"
    assert err.reason == "255 Notification Updates declared, bytes for 1"


@covers("MS-MQCN", "2.2.4")
def test_bytes_after_the_last_update_are_refused():
    """Data with more than NumberOfUpdateNotifications updates leaves trailing bytes: an error."""
    wire = encode(ChangeNotificationMessage(version=1, updates=[delete_update(), delete_update()]))
    err = decode_error(b"\x01\x01" + wire[2:])
    assert "trailing bytes" in err.reason and err.offset == 2 + len(wire[2:]) // 2


@covers("MS-MQCN", "2.2.4")
def test_version_1_may_carry_no_updates():
    """A version 0x01 message with a zero count is just the two header bytes."""
    assert decode(b"\x01\x00") == ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE)
    assert decode_error(b"\x01\x00\x00").reason == "1 trailing bytes after the structure"


@covers("MS-MQCN", "2.2.4")
@pytest.mark.parametrize("data", [b"", b"\x01", b"\x02", b"\x02\x01", b"\x02\x01\x3c"])
def test_short_inputs_are_decode_errors(data):
    """Empty and truncated messages raise DecodeError, never another exception."""
    with pytest.raises(DecodeError):
        decode(data)


@covers("MS-MQCN", "2.2.4")
def test_errors_inside_an_update_carry_its_index():
    """A bad field in the second update names Data[1] as its context and its absolute offset."""
    good = encode_bytes_update(delete_update())
    bad = bytearray(good)
    bad[0] = 7  # Command
    err = decode_error(b"\x01\x02" + good + bytes(bad))
    assert err.path == "ChangeNotificationMessage.Data[1].NotificationUpdate.Command"
    assert err.offset == 2 + len(good)


def encode_bytes_update(u: NotificationUpdate) -> bytes:
    return mqcn.encode_notification_update(u)


@covers("MS-MQCN", "2.2.4")
@settings(max_examples=300)
@given(st.binary(max_size=160), st.booleans())
def test_arbitrary_bytes_raise_only_decode_errors(data, lenient):
    """Any byte string either decodes or raises DecodeError (never IndexError, ValueError...)."""
    for candidate in (data, b"\x01" + data, b"\x02\x01" + data):
        for fn in (decode, decode_body):
            with contextlib.suppress(DecodeError):
                fn(candidate, lenient=lenient)


@covers("MS-MQCN", "2.2.4")
@settings(max_examples=300)
@given(messages(), st.data())
def test_damaged_messages_raise_only_decode_errors(msg, data):
    """Truncating, overwriting or extending a valid message yields a message or a DecodeError."""
    wire = bytearray(encode(msg))
    action = data.draw(st.sampled_from(["truncate", "overwrite", "insert"]))
    at = data.draw(st.integers(0, len(wire)))
    if action == "truncate":
        del wire[at:]
    elif action == "overwrite" and at < len(wire):
        wire[at] = data.draw(st.integers(0, 255))
    else:
        wire[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    try:
        again = decode(bytes(wire))
    except DecodeError:
        return
    assert encode(again) == bytes(wire)  # whatever decodes is canonical


# --- Notification Update (2.2.6), PROPID (2.2.2), PROPVALUE (2.2.3) ---------------------------


@covers("MS-MQCN", "2.2.6")
def test_deletion_update_layout():
    """Command, UseGuid, GuidIdentifier, GuidMasterId, Reserved, count, PROPIDs, then values."""
    expected = bytes.fromhex(
        "02 01"  # Command = delete, UseGuid = GuidIdentifier
        "61baeae6c6d1db11baac0003ff4e2d22"  # GuidIdentifier
        "3c2d1e0f5a4b78698796a5b4c3d2e1f0"  # GuidMasterId
        + "00"
        * 24  # Reserved
        + "02"  # NumberOfProperties
        "7b050000 7c050000"  # PROPID_D_SCOPE (1403), PROPID_D_OBJTYPE (1404)
        "01 01"  # their VT_UI1 values
    )
    assert mqcn.encode_notification_update(delete_update()) == expected
    msg = decode(b"\x01\x01" + expected)
    assert msg.updates == (delete_update(),)
    assert msg.updates[0].value_of(D_OBJTYPE) == 1


@covers("MS-MQCN", "2.2.6")
def test_path_name_update_layout():
    """With UseGuid 0x00 a null-terminated UTF-16LE PathName replaces the GuidIdentifier."""
    u = NotificationUpdate(command=Command.CREATE, path_name="m1\\q", guid_master_id=MASTER)
    wire = mqcn.encode_notification_update(u)
    assert wire[:12] == bytes.fromhex("0000 6d0031005c0071000000")
    assert len(wire) == 2 + 10 + 16 + 24 + 1
    assert u.use_guid == 0 and decode(b"\x01\x01" + wire).updates == (u,)


@covers("MS-MQCN", "2.2.6")
@pytest.mark.parametrize(
    ("offset", "value", "field"),
    [(0, 3, "NotificationUpdate.Command"), (1, 2, "NotificationUpdate.UseGuid")],
)
def test_out_of_range_command_and_use_guid_are_refused(offset, value, field):
    """Command MUST be 0x00..0x02 and UseGuid 0x00 or 0x01."""
    wire = bytearray(mqcn.encode_notification_update(delete_update()))
    wire[offset] = value
    err = decode_error(b"\x01\x01" + bytes(wire))
    assert (err.field, err.offset) == (field, 2 + offset)


@covers("MS-MQCN", "2.2.6")
def test_unterminated_path_name_is_refused():
    """PathName MUST be null-terminated; a message that ends inside it is a decode error."""
    err = decode_error(b"\x01\x01\x00\x00" + utf16("m1\\" + "q" * 40))
    assert err.field == "NotificationUpdate.PathName" and "terminator" in err.reason


@covers("MS-MQCN", "2.2.6")
def test_reserved_bytes_are_kept():
    """Reserved "MUST be ignored by the server": any value decodes and encodes back unchanged."""
    u = attrs.evolve(delete_update(), reserved=bytes(range(24)))
    wire = encode(ChangeNotificationMessage(version=1, updates=[u]))
    assert decode(wire).updates[0].reserved == bytes(range(24))


@covers("MS-MQCN", "2.2.6")
def test_property_count_is_checked_before_reading():
    """NumberOfProperties larger than the bytes left could hold fails at once."""
    wire = bytearray(mqcn.encode_notification_update(delete_update()))
    wire[58] = 200  # NumberOfProperties
    err = decode_error(b"\x01\x01" + bytes(wire))
    assert err.field == "NotificationUpdate.NumberOfProperties" and err.offset == 60
    assert err.reason == "200 properties declared, bytes for 2"


@covers("MS-MQCN", "2.2.2")
@pytest.mark.parametrize("propid", [0, 9999, 1204])
def test_unknown_propid_is_a_decode_error_naming_it(propid):
    """A PROPID outside the registry is refused at its own offset, with its number in the reason."""
    wire = bytearray(mqcn.encode_notification_update(delete_update()))
    wire[63:67] = propid.to_bytes(4, "little")  # PropertyId[1]
    err = decode_error(b"\x01\x01" + bytes(wire))
    assert (err.field, err.offset) == ("NotificationUpdate.PropertyId[1]", 65)
    assert err.reason == f"unknown PROPID {propid}" and err.section == "MS-MQCN 2.2.2"


@covers("MS-MQCN", "2.2.3")
def test_truncated_property_value_names_it():
    """A PROPVALUE cut short is a decode error naming PropertyValue[i] and section 2.2.3."""
    u = attrs.evolve(
        delete_update(), properties=(Property(PROPIDS["PROPID_Q_LABEL"].propid, "abc"),)
    )
    wire = encode(ChangeNotificationMessage(version=1, updates=[u]))
    err = decode_error(wire[:-2])
    assert err.field == "NotificationUpdate.PropertyValue[0]" and err.section == "MS-MQCN 2.2.3"


@covers("MS-MQCN", "2.2.6")
@given(notification_updates())
def test_updates_round_trip_alone(u):
    """Each Notification Update decodes back from its own bytes with nothing left over."""
    wire = mqcn.encode_notification_update(u)
    assert decode(b"\x01\x01" + wire).updates == (u,)


@covers("MS-MQCN", "2.2.6")
def test_update_model_refuses_what_the_wire_cannot_carry():
    """Both or neither of PathName/GuidIdentifier, 256 properties or a NUL in PathName: refused."""
    with pytest.raises(ModelError):
        NotificationUpdate(command=0, guid_master_id=MASTER)
    with pytest.raises(ModelError):
        NotificationUpdate(command=0, path_name="a", guid_identifier=QUEUE, guid_master_id=MASTER)
    with pytest.raises(ModelError):
        NotificationUpdate(command=0, path_name="a\x00b", guid_master_id=MASTER)
    with pytest.raises(ModelError):
        NotificationUpdate(command=5, path_name="a", guid_master_id=MASTER)
    with pytest.raises(ModelError):
        attrs.evolve(delete_update(), properties=[Property(D_SCOPE, 1)] * 256)
    with pytest.raises(ModelError):
        ChangeNotificationMessage(version=1, updates=[delete_update()] * 256)


# --- Notification Body (2.2.5) ------------------------------------------------------------------


@covers("MS-MQCN", "2.2.5")
def test_body_layout():
    """Version 0x02, count 0x01, then the ABNF text in UTF-16LE with no terminator."""
    body = NotificationBody(event=Event.QUEUE_CREATED, object_guid=QUEUE, domain_controller="dc1")
    wire = encode(ChangeNotificationMessage(version=Version.QUEUE_MANAGER, body=body))
    assert wire[:10].hex() == "02013c004e006f007400"  # 02 01 "<No"
    assert wire[2:].decode("utf-16-le") == (
        "<Notification><Event>1</Event><ObjectGuid>e6eaba61-d1c6-11db-baac-0003ff4e2d22"
        "</ObjectGuid><DomainController>dc1</DomainController></Notification>"
    )
    assert decode(wire).body == body


@covers("MS-MQCN", "2.2.5")
@pytest.mark.parametrize(("end", "spaced"), [("</ObjectGuid>", False), ("</ObjectGuid >", True)])
def test_both_object_guid_end_tags_are_accepted_and_kept(end, spaced):
    """The ABNF's "</ObjectGuid >" and the spaceless form both decode and re-encode (E-030)."""
    wire = body_bytes(end=end)
    msg = decode(wire)
    assert msg.body.spaced_end_tag is spaced and msg.body.object_guid == QUEUE
    assert encode(msg) == wire


@covers("MS-MQCN", "2.2.5")
@pytest.mark.parametrize("spelling", [str(QUEUE).upper(), "E6EABA61-d1c6-11DB-baac-0003FF4E2D22"])
def test_guid_spelling_is_kept(spelling):
    """Upper- and mixed-case hex digits are valid HEXDIGs and encode back as written (E-032)."""
    msg = decode(body_bytes(guid=spelling))
    assert msg.body.object_guid == QUEUE and msg.body.object_guid_text == spelling
    assert encode(msg) == body_bytes(guid=spelling)
    assert decode(body_bytes()).body.object_guid_text is None  # canonical lowercase


@covers("MS-MQCN", "2.2.5")
def test_abnf_literal_guid_form_is_refused():
    """8HEXDIG-4HEXDIG-4HEXDIG-12HEXDIG is 28 digits, no GUID; only 8-4-4-4-12 decodes (E-031)."""
    err = decode_error(body_bytes(guid="E6EABA61-D1C6-11DB-0003FF4E2D22"))
    assert err.field == "NotificationBody.ObjectGuid" and "E-031" in err.reason
    assert err.offset == 2 + 2 * len("<Notification><Event>2</Event><ObjectGuid>")


@covers("MS-MQCN", "2.2.5")
@pytest.mark.parametrize("event", ["0", "5", "a", "12", ""])
def test_event_must_be_1_to_4(event):
    """Event MUST be set to 1, 2, 3, or 4."""
    err = decode_error(body_bytes(event=event))
    assert err.path.endswith(("NotificationBody.Event", "NotificationBody.EventEnd"))
    assert err.offset == 2 + 2 * len("<Notification><Event>") + (2 if len(event) > 1 else 0)


@covers("MS-MQCN", "2.2.5")
@pytest.mark.parametrize(
    ("dc", "reason"),
    [
        ("", "empty"),
        ("d" * 257, "257 characters"),
        ("dc one", "not a VCHAR"),
        ("dc\u00e9", "not a VCHAR"),
        ("dc\u4e2d", "U+4E2D"),
    ],
)
def test_domain_controller_is_1_to_256_vchars(dc, reason):
    """DirectoryServiceServer = 1*256(VCHAR): printable ASCII, no spaces, 1 to 256 characters."""
    err = decode_error(body_bytes(dc=dc))
    assert reason in err.reason


@covers("MS-MQCN", "2.2.5")
def test_domain_controller_is_delimited_by_the_end_of_the_message():
    """VCHAR includes "<" and "/", so the name runs to the final closing tags (E-035)."""
    for dc in ("a</DomainController>", "<" * 256, "d" * 256):
        msg = decode(body_bytes(dc=dc))
        assert msg.body.domain_controller == dc and encode(msg) == body_bytes(dc=dc)


@covers("MS-MQCN", "2.2.5")
@pytest.mark.parametrize(
    "wire",
    [
        body_bytes()[:-1],  # odd number of bytes
        body_bytes(tail="\x00"),  # a UTF-16 terminator: not part of the ABNF (E-035)
        body_bytes().replace(utf16("<Event>"), utf16("<event>")),  # tags are exact (E-032)
        body_bytes().replace(utf16("</Event>"), utf16("</Event>\r\n")),  # no whitespace (E-038)
        b"\x02\x01" + utf16("<Notification><Event>2</Event>"),
    ],
)
def test_text_outside_the_abnf_is_refused(wire):
    """Odd lengths, terminators, other tag spellings and whitespace are decode errors."""
    err = decode_error(wire)
    assert err.section == "MS-MQCN 2.2.5" and err.message == "ChangeNotificationMessage"


@covers("MS-MQCN", "2.2.5")
@given(notification_bodies())
def test_bodies_round_trip(body):
    """Every body the model allows decodes from its own bytes, spelling and end tag included."""
    wire = b"\x02\x01" + mqcn.encode_notification_body(body)
    assert decode(wire).body == body


@covers("MS-MQCN", "2.2.5")
def test_body_model_refuses_what_the_abnf_forbids():
    """A bad server name, a GUID spelling of another GUID, or a canonical spelling are refused."""
    for kw in (
        {"domain_controller": "a b"},
        {"domain_controller": ""},
        {"object_guid_text": str(MASTER).upper()},
        {"object_guid_text": str(QUEUE)},
        {"event": 0},
    ):
        with pytest.raises(ModelError):
            NotificationBody(**{"event": 1, "object_guid": QUEUE, "domain_controller": "dc", **kw})
    with pytest.raises(ModelError):
        ChangeNotificationMessage(version=2)
    with pytest.raises(ModelError):
        ChangeNotificationMessage(
            version=1, body=NotificationBody(event=1, object_guid=QUEUE, domain_controller="dc")
        )


# --- The MSMQ message body (3.3.5.3) -----------------------------------------------------------


@covers("MS-MQCN", "2.2.4")
@given(messages(), st.integers(0, 255))
def test_body_is_the_message_plus_one_unused_byte(msg, unused):
    """decode_body strips exactly one trailing byte of any value; encode_body writes it as 0x00."""
    assert encode_body(msg) == encode(msg) + b"\x00"
    assert decode_body(encode(msg) + bytes((unused,))) == msg


@covers("MS-MQCN", "2.2.4")
@pytest.mark.parametrize(
    "msg_wire", [body_bytes(), b"\x01\x01" + mqcn.encode_notification_update(delete_update())]
)
def test_body_without_the_unused_byte_is_refused_unless_lenient(msg_wire):
    """A body that is just the message lacks the byte 3.3.5.3 requires; lenient ignores that."""
    with pytest.raises(DecodeError) as info:
        decode_body(msg_wire)
    assert info.value.section == "MS-MQCN 3.3.5.3" and "unused byte" in info.value.reason
    assert decode_body(msg_wire, lenient=True) == decode(msg_wire)


@covers("MS-MQCN", "2.2.4")
def test_lenient_body_ignores_whatever_follows_the_message():
    """Lenient reading accepts a UTF-16 terminator, padding or extra bytes after the message."""
    expected = decode(body_bytes())
    for extra in (b"\x00", b"\x00\x00", b"\x00\x00\x00", b"\xaa" * 7):
        assert decode_body(body_bytes() + extra, lenient=True) == expected
        if len(extra) > 1:
            with pytest.raises(DecodeError):
                decode_body(body_bytes() + extra)
    v1 = encode(ChangeNotificationMessage(version=1, updates=[delete_update()]))
    assert decode_body(v1 + b"\x00" * 5, lenient=True) == decode(v1)
    with pytest.raises(DecodeError, match="empty"):
        decode_body(b"")


# --- Registry and register -----------------------------------------------------------------------


@covers("MS-MQCN", "2.2.4")
def test_every_section_2_structure_is_registered():
    """Sections 2.2.2 to 2.2.6 each map to the mqcn code that implements them."""
    registered = {(c.document, c.section): c.code for c in load_all()}
    for section in ("2.2.2", "2.2.3", "2.2.4", "2.2.5", "2.2.6"):
        assert registered[("MS-MQCN", section)].startswith("model/mqcn.py:")


def test_errata_cited_by_the_codec_are_in_its_register():
    """Every E-03x the codec cites has an entry in mqcn-wire.yaml; every entry is well formed."""
    raw = yaml.safe_load((ROOT / "mqspec/register/mqcn-wire.yaml").read_text(encoding="utf-8"))
    entries = {
        e["id"]: Erratum(**{k: v.strip() if isinstance(v, str) else v for k, v in e.items()})
        for e in raw
    }
    assert all(re.fullmatch(r"E-03\d", i) for i in entries)
    cited = set(re.findall(r"E-03\d", (ROOT / "model/mqcn.py").read_text(encoding="utf-8")))
    assert cited <= set(entries)
