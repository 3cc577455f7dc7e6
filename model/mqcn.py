"""[MS-MQCN] section 2: the Change Notification Message and what it carries.

A Change Notification Message (2.2.4) is a Version byte, a count byte and Data:

* Version 0x01 (sent by an MSMQ Directory Service): Data is that many Notification Updates (2.2.6),
  binary, each a command, the object's path name or GUID, the originating server's GUID, 24
  reserved bytes, then a PROPID array and the matching flat PROPVALUEs (2.2.2, 2.2.3).
* Version 0x02 (sent by a queue manager): Data is one Notification Body (2.2.5), a UTF-16LE text
  ``<Notification><Event>e</Event><ObjectGuid>g</ObjectGuid><DomainController>dc</DomainController>
  </Notification>`` that names the changed object but carries none of its data.

What this module does not cover: the MSMQ message around the notification (3.3.5.3 adds one
unused byte after the message; :func:`decode_body` / :func:`encode_body` handle that byte), and the
client preparation rules of 3.3.5.1/3.3.5.2 (which PROPIDs a create/change/delete must carry, and
that Command 0x00 goes with UseGuid 0x00): section 2 lets any Command use either form, so the codec
does too and those rules belong to the protocol handlers.

``lenient=True`` applies only the leniency the text gives a receiver: a version 0x02 message whose
NumberOfUpdateNotifications is not 1 is still read as one Notification Body (3.2.5 interprets Data
by Version alone; clarification E-033), and :func:`decode_body` ignores a missing unused byte or
extra bytes after the message (3.3.5.3: the byte "MUST not affect the behavior of this protocol").

>>> body = NotificationBody(event=Event.QUEUE_CHANGED, object_guid=Guid.parse(
...     "e6eaba61-d1c6-11db-baac-0003ff4e2d22"), domain_controller="dc1.example.com")
>>> msg = ChangeNotificationMessage(version=Version.QUEUE_MANAGER, body=body)
>>> encode(msg)[:2].hex(), encode(msg)[2:].decode("utf-16-le")[:34]
('0201', '<Notification><Event>2</Event><Obj')
>>> decode(encode(msg)) == msg and decode_body(encode_body(msg)) == msg
True
"""

from __future__ import annotations

import enum
import re
import struct
from typing import Any

import attrs

from mqspec.clauses import clause
from mqspec.wording import plural

from .errors import DecodeError, ModelError
from .guid import Guid
from .propids import PROPID_BY_VALUE, PropertyDef
from .propvalue import Property, decode_value, encode_value, lookup_propid
from .wire import Reader, pack_wstr

S_PROPID = "MS-MQCN 2.2.2"
S_PROPVALUE = "MS-MQCN 2.2.3"
S_MESSAGE = "MS-MQCN 2.2.4"
S_BODY = "MS-MQCN 2.2.5"
S_UPDATE = "MS-MQCN 2.2.6"
S_SEND = "MS-MQCN 3.3.5.3"

#: the smallest Notification Update: Command, UseGuid, an empty PathName (one 0x0000),
#: GuidMasterId, Reserved and NumberOfProperties
UPDATE_MIN_SIZE = 1 + 1 + 2 + 16 + 24 + 1
#: the smallest property: a 4-byte PROPID and a 1-byte value (VT_UI1)
PROPERTY_MIN_SIZE = 4 + 1
RESERVED_SIZE = 24
MAX_UCHAR = 255


class Version(enum.IntEnum):
    """Change Notification Message Version (2.2.4)."""

    DIRECTORY_SERVICE = 0x01  # Data is Notification Updates
    QUEUE_MANAGER = 0x02  # Data is one Notification Body


class Command(enum.IntEnum):
    """Notification Update Command (2.2.6)."""

    CREATE = 0x00
    CHANGE = 0x01
    DELETE = 0x02


class Event(enum.IntEnum):
    """Notification Body Event (2.2.5): what happened to which kind of object."""

    QUEUE_CREATED = 1
    QUEUE_CHANGED = 2
    QUEUE_DELETED = 3
    MACHINE_CHANGED = 4


def _to_enum(kind: type[enum.IntEnum]):
    def convert(value: Any) -> enum.IntEnum:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except ValueError as exc:
            raise ModelError(
                f"{value!r} is not a {kind.__name__} ({list(map(int, kind))})"
            ) from exc

    return convert


# ---------------------------------------------------------------------------------------------
# Notification Update (2.2.6)


def _check_path_name(inst: NotificationUpdate, _attr: attrs.Attribute, value: str | None) -> None:
    if (value is None) == (inst.guid_identifier is None):
        raise ModelError("a Notification Update carries exactly one of PathName and GuidIdentifier")
    if value is not None and (not isinstance(value, str) or "\x00" in value):
        raise ModelError(f"PathName must be a string without NUL, not {value!r}")


def _check_optional_guid(_inst: object, attr: attrs.Attribute, value: object) -> None:
    if value is not None and not isinstance(value, Guid):
        raise ModelError(f"{attr.name} must be a Guid or None, not {value!r}")


def _check_guid(_inst: object, attr: attrs.Attribute, value: object) -> None:
    if not isinstance(value, Guid):
        raise ModelError(f"{attr.name} must be a Guid, not {value!r}")


def _check_reserved(_inst: object, _attr: attrs.Attribute, value: object) -> None:
    if type(value) is not bytes or len(value) != RESERVED_SIZE:
        raise ModelError(f"Reserved is {RESERVED_SIZE} bytes, not {value!r}")


def _check_properties(_inst: object, _attr: attrs.Attribute, value: tuple) -> None:
    if len(value) > MAX_UCHAR:
        raise ModelError(f"NumberOfProperties is a UCHAR: {len(value)} properties do not fit")
    for p in value:
        if not isinstance(p, Property):
            raise ModelError(f"properties must be Property values, not {p!r}")


@attrs.frozen(kw_only=True)
class NotificationUpdate:
    """One change to a queue or machine object, as a directory service reports it (2.2.6).

    Exactly one of ``path_name`` (UseGuid 0x00) and ``guid_identifier`` (UseGuid 0x01) is set.
    ``reserved`` keeps the 24 Reserved bytes as received ("MAY be set to 0 by the client, and
    MUST be ignored by the server"), so a decoded update encodes back to the same bytes.
    """

    command: Command = attrs.field(converter=_to_enum(Command))
    path_name: str | None = attrs.field(default=None, validator=_check_path_name)
    guid_identifier: Guid | None = attrs.field(default=None, validator=_check_optional_guid)
    guid_master_id: Guid = attrs.field(validator=_check_guid)
    reserved: bytes = attrs.field(default=bytes(RESERVED_SIZE), validator=_check_reserved)
    properties: tuple[Property, ...] = attrs.field(
        default=(), converter=tuple, validator=_check_properties
    )

    @property
    def use_guid(self) -> int:
        """The UseGuid byte: 0x01 when GuidIdentifier names the object, 0x00 for PathName."""
        return 0 if self.guid_identifier is None else 1

    def value_of(self, propid: int) -> object:
        """The value of the first property ``propid`` (the text's ``IndexOf``); KeyError if none."""
        for p in self.properties:
            if p.propid == propid:
                return p.value
        raise KeyError(propid)


@clause("MS-MQCN", "2.2.2", "PROPID")
def decode_propids(r: Reader, n: int, field: str) -> list[PropertyDef]:
    """Read ``n`` PROPIDs; each "MUST be filled with a valid property identifier" (2.2.2).

    An identifier outside the registry is a decode error naming it: without its VARTYPE the
    length of its PROPVALUE, and so everything after it, is unknown.
    """
    start = r.pos
    ids = struct.unpack(f"<{n}I", r.raw(4 * n, field, S_PROPID))
    return [
        lookup_propid(pid, r, f"{field}[{i}]", S_PROPID, start + 4 * i) for i, pid in enumerate(ids)
    ]


@clause("MS-MQCN", "2.2.3", "PROPVALUE")
def decode_propvalues(r: Reader, pdefs: list[PropertyDef], field: str) -> tuple[Property, ...]:
    """Read one flat PROPVALUE per PROPID: "A PROPVARIANT type is determined by the PROPID"."""
    return tuple(
        Property(pdef.propid, decode_value(r, pdef, f"{field}[{i}]", S_PROPVALUE))
        for i, pdef in enumerate(pdefs)
    )


@clause("MS-MQCN", "2.2.6", "Notification Update")
def decode_notification_update(r: Reader) -> NotificationUpdate:
    """Read one Notification Update.

    Enforces: Command "MUST be set to 0x00, 0x01, or 0x02"; UseGuid "MUST be set to 0x01 ...
    Otherwise, this field MUST be set to 0x00"; PathName "MUST be a null-terminated Unicode string"
    and "MUST NOT be present if UseGuid is set to 0x01"; PropertyId and PropertyValue each have
    NumberOfProperties elements (the PROPID array first, then the values; clarification E-034).
    """
    at = r.pos
    command = r.u8("NotificationUpdate.Command", S_UPDATE)
    if command > Command.DELETE:
        raise r.fail(
            "NotificationUpdate.Command",
            S_UPDATE,
            f"Command {command:#04x} is not 0x00 (create), 0x01 (change) or 0x02 (delete)",
            at,
        )
    at = r.pos
    use_guid = r.u8("NotificationUpdate.UseGuid", S_UPDATE)
    path_name: str | None = None
    guid_identifier: Guid | None = None
    if use_guid == 0:
        path_name = r.wstr("NotificationUpdate.PathName", S_UPDATE)
    elif use_guid == 1:
        guid_identifier = r.guid("NotificationUpdate.GuidIdentifier", S_UPDATE)
    else:
        raise r.fail(
            "NotificationUpdate.UseGuid",
            S_UPDATE,
            f"UseGuid {use_guid:#04x} is not 0x00 (PathName) or 0x01 (GuidIdentifier)",
            at,
        )
    guid_master_id = r.guid("NotificationUpdate.GuidMasterId", S_UPDATE)
    reserved = r.raw(RESERVED_SIZE, "NotificationUpdate.Reserved", S_UPDATE)
    at = r.pos
    n = r.u8("NotificationUpdate.NumberOfProperties", S_UPDATE)
    r.count(
        n, PROPERTY_MIN_SIZE, "NotificationUpdate.NumberOfProperties", S_UPDATE, "properties", at
    )
    pdefs = decode_propids(r, n, "NotificationUpdate.PropertyId")
    properties = decode_propvalues(r, pdefs, "NotificationUpdate.PropertyValue")
    return NotificationUpdate(
        command=Command(command),
        path_name=path_name,
        guid_identifier=guid_identifier,
        guid_master_id=guid_master_id,
        reserved=reserved,
        properties=properties,
    )


def encode_notification_update(u: NotificationUpdate) -> bytes:
    """The wire form of one Notification Update (2.2.6)."""
    name = pack_wstr(u.path_name) if u.guid_identifier is None else u.guid_identifier.bytes_le
    n = len(u.properties)
    return b"".join(
        (
            bytes((u.command, u.use_guid)),
            name,
            u.guid_master_id.bytes_le,
            u.reserved,
            bytes((n,)),
            struct.pack(f"<{n}I", *(p.propid for p in u.properties)),
            *(encode_value(PROPID_BY_VALUE[p.propid], p.value) for p in u.properties),
        )
    )


# ---------------------------------------------------------------------------------------------
# Notification Body (2.2.5)

#: the GUID text mqspec reads: the standard 8-4-4-4-12 form (the ABNF's 8-4-4-12 holds only
#: 28 hex digits, erratum E-031); hex digits in either case (ABNF strings are case-insensitive)
_GUID_TEXT = re.compile(
    r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
)
_VCHAR = re.compile(r"[\x21-\x7e]{1,256}")
_DC_MAX = 256

_OPEN = "<Notification><Event>"
_EVENT_END = "</Event><ObjectGuid>"
_GUID_END = "</ObjectGuid>"
_GUID_END_SPACED = "</ObjectGuid >"  # the ABNF's literal, with its stray space (erratum E-030)
_DC_OPEN = "<DomainController>"
_CLOSE = "</DomainController></Notification>"


def _check_domain_controller(_inst: object, _attr: attrs.Attribute, value: object) -> None:
    if not isinstance(value, str) or not _VCHAR.fullmatch(value):
        raise ModelError(
            f"DirectoryServiceServer is 1*256(VCHAR), printable ASCII without spaces: {value!r}"
        )


def _check_guid_text(inst: NotificationBody, _attr: attrs.Attribute, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not _GUID_TEXT.fullmatch(value):
        raise ModelError(f"object_guid_text {value!r} is not XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX")
    if Guid.parse(value) != inst.object_guid:
        raise ModelError(f"object_guid_text {value!r} does not spell {inst.object_guid}")
    if value == str(inst.object_guid):
        raise ModelError("object_guid_text is only for a non-canonical spelling; leave it None")


@attrs.frozen(kw_only=True)
class NotificationBody:
    """A queue manager's notice that an object changed (2.2.5), parsed from its ABNF.

    ``object_guid_text`` keeps the GUID exactly as written when that is not the canonical
    lowercase form (upper or mixed case; clarification E-032), and ``spaced_end_tag`` records
    that the body used the ABNF's literal ``</ObjectGuid >`` rather than ``</ObjectGuid>``
    (erratum E-030), so that a decoded body encodes back to the same bytes.
    """

    event: Event = attrs.field(converter=_to_enum(Event))
    object_guid: Guid = attrs.field(validator=_check_guid)
    domain_controller: str = attrs.field(validator=_check_domain_controller)
    object_guid_text: str | None = attrs.field(default=None, validator=_check_guid_text)
    spaced_end_tag: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    @property
    def text(self) -> str:
        """The body as the Unicode string the ABNF describes."""
        guid = self.object_guid_text or str(self.object_guid)
        end = _GUID_END_SPACED if self.spaced_end_tag else _GUID_END
        return (
            f"{_OPEN}{int(self.event)}{_EVENT_END}{guid}{end}"
            f"{_DC_OPEN}{self.domain_controller}{_CLOSE}"
        )


def _body_text(r: Reader) -> tuple[str, int]:
    """The rest of the message as text, checking it is UTF-16LE of ASCII characters only.

    Every character the ABNF allows is ASCII (VCHAR is %x21-7E), so every code unit has a zero
    high byte; the low bytes are the characters.
    """
    start = r.pos
    raw = r.raw(r.remaining, "NotificationBody", S_BODY)
    if len(raw) % 2:
        raise DecodeError(
            "NotificationBody",
            start,
            S_BODY,
            f"a Unicode string is whole 16-bit code units; {plural(len(raw), 'byte')} is odd (E-035)",
        )
    high = raw[1::2]
    if high.count(0) != len(high):
        i = next(i for i, b in enumerate(high) if b)
        unit = int.from_bytes(raw[2 * i : 2 * i + 2], "little")
        raise DecodeError(
            "NotificationBody",
            start + 2 * i,
            S_BODY,
            f"character U+{unit:04X} is outside the ABNF's alphabet (ASCII only)",
        )
    return raw[0::2].decode("latin-1"), start


@clause("MS-MQCN", "2.2.5", "Notification Body")
def decode_notification_body(r: Reader) -> NotificationBody:
    """Read the Notification Body that fills the rest of the message.

    "Notification body MUST be set to a Unicode string in the format specified by the following
    Augmented Backus-Naur Form (ABNF) rule" (2.2.5). Enforces each literal in turn, Event "MUST be
    set to 1, 2, 3, or 4", the GUID form, and DirectoryServiceServer = 1*256(VCHAR). The text has
    no length or terminator: it ends where the message ends (clarification E-035), which also
    delimits the server name, since VCHAR includes "<" and "/".
    """
    text, start = _body_text(r)
    pos = 0

    def fail(field: str, at: int, reason: str) -> DecodeError:
        return DecodeError(f"NotificationBody.{field}", start + 2 * at, S_BODY, reason)

    def expect(literal: str, field: str) -> None:
        nonlocal pos
        if not text.startswith(literal, pos):
            found = text[pos : pos + len(literal)]
            raise fail(field, pos, f"expected {literal!r}, found {found!r}")
        pos += len(literal)

    expect(_OPEN, "Open")
    event = text[pos : pos + 1]
    if event not in ("1", "2", "3", "4"):
        raise fail("Event", pos, f"Event {event!r} MUST be 1, 2, 3, or 4")
    pos += 1
    expect(_EVENT_END, "EventEnd")
    guid_text = text[pos : pos + 36]
    if not _GUID_TEXT.fullmatch(guid_text):
        raise fail(
            "ObjectGuid",
            pos,
            f"{text[pos : pos + 40]!r}... is not a GUID 8-4-4-4-12 hex digits (E-031)",
        )
    guid_at = pos
    pos += 36
    spaced = text.startswith(_GUID_END_SPACED, pos)
    expect(_GUID_END_SPACED if spaced else _GUID_END, "ObjectGuidEnd")
    expect(_DC_OPEN, "DomainControllerOpen")
    end = len(text) - len(_CLOSE)
    if end < pos or not text.endswith(_CLOSE):
        raise fail(
            "Close",
            max(end, pos),
            f"the body MUST end with {_CLOSE!r}, found {text[-len(_CLOSE) :]!r}",
        )
    dc = text[pos:end]
    if not dc:
        raise fail("DomainController", pos, "DirectoryServiceServer is 1*256(VCHAR); it is empty")
    if len(dc) > _DC_MAX:
        raise fail(
            "DomainController",
            pos,
            f"DirectoryServiceServer is 1*256(VCHAR); it has {len(dc)} characters",
        )
    bad = next((i for i, c in enumerate(dc) if not "\x21" <= c <= "\x7e"), None)
    if bad is not None:
        raise fail(
            "DomainController",
            pos + bad,
            f"character {dc[bad]!r} is not a VCHAR (%x21-7E) in DirectoryServiceServer",
        )
    object_guid = Guid.parse(guid_text)
    try:
        return NotificationBody(
            event=Event(int(event)),
            object_guid=object_guid,
            domain_controller=dc,
            object_guid_text=None if guid_text == str(object_guid) else guid_text,
            spaced_end_tag=spaced,
        )
    except ModelError as exc:  # unreachable if the checks above match the model's validators
        raise fail("ObjectGuid", guid_at, str(exc)) from exc


def encode_notification_body(b: NotificationBody) -> bytes:
    """The wire form of a Notification Body: its text in UTF-16LE, no terminator (E-035)."""
    return b.text.encode("utf-16-le")


# ---------------------------------------------------------------------------------------------
# Change Notification Message (2.2.4)


def _check_updates(_inst: object, _attr: attrs.Attribute, value: tuple) -> None:
    if len(value) > MAX_UCHAR:
        raise ModelError(f"NumberOfUpdateNotifications is a UCHAR: {len(value)} updates do not fit")
    if not all(isinstance(u, NotificationUpdate) for u in value):
        raise ModelError("updates must be NotificationUpdate values")


@attrs.frozen(kw_only=True)
class ChangeNotificationMessage:
    """A notification's payload (2.2.4): Notification Updates (v1) or one Notification Body (v2).

    NumberOfUpdateNotifications is not stored: it is ``len(updates)`` for version 0x01 and
    "MUST be set to 1" for version 0x02.
    """

    version: Version = attrs.field(converter=_to_enum(Version))
    updates: tuple[NotificationUpdate, ...] = attrs.field(
        default=(), converter=tuple, validator=_check_updates
    )
    body: NotificationBody | None = attrs.field(default=None)

    def __attrs_post_init__(self) -> None:
        if self.version is Version.DIRECTORY_SERVICE and self.body is not None:
            raise ModelError("a version 0x01 message carries Notification Updates, not a body")
        if self.version is Version.QUEUE_MANAGER:
            if not isinstance(self.body, NotificationBody):
                raise ModelError("a version 0x02 message carries exactly one Notification Body")
            if self.updates:
                raise ModelError("a version 0x02 message carries no Notification Updates")


def _read_message(r: Reader, lenient: bool) -> ChangeNotificationMessage:
    at = r.pos
    version = r.u8("ChangeNotificationMessage.Version", S_MESSAGE)
    if version not in (Version.DIRECTORY_SERVICE, Version.QUEUE_MANAGER):
        raise r.fail(
            "ChangeNotificationMessage.Version",
            S_MESSAGE,
            f"Version {version:#04x} MUST be 0x01 (directory service) or 0x02 (queue manager)",
            at,
        )
    at = r.pos
    count = r.u8("ChangeNotificationMessage.NumberOfUpdateNotifications", S_MESSAGE)
    if version == Version.DIRECTORY_SERVICE:
        r.count(
            count,
            UPDATE_MIN_SIZE,
            "ChangeNotificationMessage.NumberOfUpdateNotifications",
            S_MESSAGE,
            "Notification Updates",
            at,
        )
        updates = []
        for i in range(count):
            try:
                updates.append(decode_notification_update(r))
            except DecodeError as e:
                raise e.within(f"ChangeNotificationMessage.Data[{i}]") from None
        return ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE, updates=updates)
    if count != 1 and not lenient:
        raise r.fail(
            "ChangeNotificationMessage.NumberOfUpdateNotifications",
            S_MESSAGE,
            f"is {count}; if Version is set to 0x02, this field MUST be set to 1",
            at,
        )
    try:
        body = decode_notification_body(r)
    except DecodeError as e:
        raise e.within("ChangeNotificationMessage.Data") from None
    return ChangeNotificationMessage(version=Version.QUEUE_MANAGER, body=body)


@clause("MS-MQCN", "2.2.4", "Change Notification Message")
def decode(data: bytes, *, lenient: bool = False) -> ChangeNotificationMessage:
    """Decode one Change Notification Message; bytes after it are an error.

    Enforces: Version "MUST be set to the value 0x01 ... and to the value 0x02"; for version 0x01
    NumberOfUpdateNotifications "MUST be set to the number of update notifications contained in
    the field Data" (the count is checked against the bytes left before anything is read, and
    bytes left over after that many updates are refused); for version 0x02 "this field MUST be
    set to 1" (relaxed when ``lenient``, clarification E-033).
    """
    r = Reader(data)
    msg = _read_message(r, lenient)
    r.finish("ChangeNotificationMessage", S_MESSAGE)
    return msg


def encode(msg: ChangeNotificationMessage) -> bytes:
    """The wire form of a Change Notification Message (2.2.4)."""
    if msg.version is Version.QUEUE_MANAGER:
        return b"\x02\x01" + encode_notification_body(msg.body)  # type: ignore[arg-type]
    return bytes((1, len(msg.updates))) + b"".join(map(encode_notification_update, msg.updates))


# ---------------------------------------------------------------------------------------------
# The message body of the MSMQ message (3.3.5.3)

_CLOSE_WIRE = "</Notification>".encode("utf-16-le")


def decode_body(body: bytes, *, lenient: bool = False) -> ChangeNotificationMessage:
    """Decode the MSMQ message body that carries a Change Notification Message.

    "The sender MUST create a buffer of bytes of the size of the Change Notification Message plus
    1. This additional byte is unused and MUST not affect the behavior of this protocol. The
    Change Notification Message MUST be included at the beginning of the created buffer" (3.3.5.3).
    Strictly, the body is the message and exactly one more byte, of any value (clarification
    E-036). With ``lenient`` the message is read from the start of the body and whatever follows
    it (nothing, the unused byte, a UTF-16 terminator, padding) is ignored.
    """
    body = bytes(body)
    if not lenient:
        if not body:
            raise DecodeError(
                "ChangeNotificationMessage",
                0,
                S_SEND,
                "the body is the Change Notification Message plus one unused byte; it is empty",
            )
        r = Reader(body, end=len(body) - 1)
        try:
            msg = _read_message(r, lenient=False)
            r.finish("ChangeNotificationMessage", S_MESSAGE)
        except DecodeError:
            if _decodes(body):  # say what is wrong rather than which field ran short
                raise DecodeError(
                    "ChangeNotificationMessage",
                    len(body),
                    S_SEND,
                    "the body holds the message but not the unused byte that MUST follow it",
                ) from None
            raise
        return msg
    end = len(body)
    if body[:1] == b"\x02":
        # a version 0x02 message runs to its last "</Notification>" (on the UTF-16 grid)
        i = body.rfind(_CLOSE_WIRE)
        while i > 0 and i % 2:
            i = body.rfind(_CLOSE_WIRE, 0, i + len(_CLOSE_WIRE) - 1)
        if i > 0:
            end = i + len(_CLOSE_WIRE)
    return _read_message(Reader(body, end=end), lenient=True)


def _decodes(data: bytes) -> bool:
    try:
        decode(data)
    except DecodeError:
        return False
    return True


def encode_body(msg: ChangeNotificationMessage) -> bytes:
    """The MSMQ message body for ``msg``: the message then the one unused byte, written as 0x00."""
    return encode(msg) + b"\x00"


#: structure name -> model type, for the JSON form (``mqspec decode/encode --protocol mqcn``)
MESSAGE_TYPES: dict[str, type] = {"ChangeNotificationMessage": ChangeNotificationMessage}

__all__ = [
    "MESSAGE_TYPES",
    "ChangeNotificationMessage",
    "Command",
    "Event",
    "NotificationBody",
    "NotificationUpdate",
    "Version",
    "decode",
    "decode_body",
    "decode_notification_body",
    "decode_notification_update",
    "encode",
    "encode_body",
    "encode_notification_body",
    "encode_notification_update",
]
