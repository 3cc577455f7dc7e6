"""The invalid codec cases: one per strictness rule, each a valid message with one field broken.

The byte strings are assembled by hand (as the tests in ``tests/model`` assemble theirs), never
by calling an encoder, and each case names the field (and usually the offset) the decoder must
report. The rules are those of ``tests/model/test_mqdsrp_strict.py``, ``test_mqsd.py`` and
``test_mqcn.py``.
"""

from __future__ import annotations

import struct

import attrs

from mqspec.model.examples_mqsd import (
    CLIENT_REQUEST,
    REPLY_LOCAL_SITE,
    REPLY_OTHER_SITE,
)
from mqspec.model.propids import PROPIDS

from .codec import InvalidCase

SITE_LE = "61baeae6" "c6d1" "db11" "baac0003ff4e2d22"
PART_LE = "33221100" "5544" "7766" "8899aabbccddeeff"
OBJ_LE = "0c0d0e0f" "0a0b" "0809" "0706050403020100"
ZERO_SEQ = "00" * 8


def h(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts).replace(" ", ""))


def label(text: str) -> str:
    """A WCHAR buffer with its terminator, as hex (ASCII text only)."""
    return "".join(f"{ord(c):02x}00" for c in text) + "0000"


def le32(n: int) -> str:
    return n.to_bytes(4, "little").hex()


def change_by_path(name: str = "Q", *props: str, n: int | None = None) -> str:
    """A DirectoryChange by path; ``props`` are "PROPID hex:value hex" strings."""
    ids = "".join(x.split(":")[0] for x in props)
    values = "".join(x.split(":")[1] for x in props)
    count = len(props) if n is None else n
    return "00" "00" + label(name) + PART_LE + ZERO_SEQ * 3 + f"{count:02x}" + ids + values


GOLDEN = {
    "AlreadyPurgedMessage": h("00", SITE_LE, "05", PART_LE, "0000000000000102"),
    "ChangeReplyMessage": h("00", SITE_LE, "04", "78563412", "05000780", label("QM1")),
    "SyncRequestMessage": h("00", SITE_LE, "02", PART_LE, ZERO_SEQ * 3, "01", "01", label("AB")),
    "SyncReplyMessage": h("00", SITE_LE, "03", PART_LE, ZERO_SEQ * 3, "01000000", "00000000", change_by_path()),
    "BSCAckMessage": h("00", SITE_LE, "07", OBJ_LE, label("BSC")),
    "PSCAckMessage": h("00", SITE_LE, "06", OBJ_LE, PART_LE, ZERO_SEQ, label("PSC")),
    "ChangeRequestMessage": h("00", SITE_LE, "01", PART_LE, "2a000000", "05000000", label("BSC1"), label("PSC"),
                              change_by_path()),
    "ChangePropagationMessage": h("00", SITE_LE, "00", "00", "0100", change_by_path(), "0100", label("M"), PART_LE,
                                  ZERO_SEQ * 2),
}


def patched(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new):]


def _d(name: str, data: bytes, field: str, offset: int | None, description: str,
       rests_on: tuple[str, ...] = ()) -> InvalidCase:
    return InvalidCase("mqdsrp", name, data, field, description, offset, rests_on=rests_on)


def mqdsrp_invalid() -> list[InvalidCase]:
    g = GOLDEN
    cns = le32(PROPIDS["PROPID_QM_CNS"].propid)
    cases = [
        _d("version-not-zero", patched(g["AlreadyPurgedMessage"], 0, b"\x01"), "BaseReplicationHeader.Version", 0,
           'Version "MUST be set to 0x00".'),
        _d("version-not-zero-short", b"\x02" + bytes.fromhex(SITE_LE)[:3], "BaseReplicationHeader.Version", 0,
           "A wrong Version is the error even when the header is cut short."),
        _d("header-empty", b"", "BaseReplicationHeader.Version", 0, "An empty body has no header."),
        _d("header-1-byte", g["AlreadyPurgedMessage"][:1], "BaseReplicationHeader.SiteID", 1, "The header cut in SiteID."),
        _d("header-17-bytes", g["AlreadyPurgedMessage"][:17], "BaseReplicationHeader.Operation", 17,
           "The header cut before Operation."),
        *(_d(f"operation-{op:02x}", patched(g["AlreadyPurgedMessage"], 17, bytes([op])),
             "BaseReplicationHeader.Operation", 17, 'Operation "MUST be set to one of the following values".')
          for op in (8, 0xFF)),
        *(_d(f"command-{c:02x}", patched(g["ChangePropagationMessage"], 21, bytes([c])), "DirectoryChange.Command", 21,
             'Command "MUST be one of the following values" (0x00..0x03).') for c in (4, 0xFF)),
        _d("use-guid-02", patched(g["ChangePropagationMessage"], 22, b"\x02"), "DirectoryChange.UseGuid", 22,
           'UseGuid "MUST be set as follows": 0x00 or 0x01.'),
        _d("number-of-properties-too-large", h("00", SITE_LE, "00", "00", "0100",
                                               change_by_path("Q", "69000000:e8030000", n=3), "0000"),
           "DirectoryChange.NumberOfProperties", 67, "3 properties declared, bytes for 2: fails before reading them."),
        _d("number-of-properties-bytes-for-1", h("00", SITE_LE, "03", PART_LE, ZERO_SEQ * 3, "01000000", "00000000",
                                                 "00", "01", OBJ_LE, PART_LE, ZERO_SEQ * 3, "03", "68000000", "01"),
           "DirectoryChange.NumberOfProperties", None, "NumberOfProperties counts against the bytes left."),
        _d("unknown-propid", h("00", SITE_LE, "00", "00", "0100",
                               change_by_path("Q", "69000000:e8030000", "0f270000:00"), "0000"),
           "DirectoryChange.PropertyID[1]", 72, "A PROPID outside the registry (9999)."),
        _d("blob-size-beyond-bytes", h("00", SITE_LE, "00", "00", "0100",
                                       change_by_path("Q", "75000000:ffffff00" + "00" * 4), "0000"),
           "DirectoryChange.PropertyValue[0]", 72, "A VT_BLOB value claiming more bytes than remain."),
        _d("clsid-vector-count-beyond-bytes", h("00", SITE_LE, "00", "00", "0100",
                                                change_by_path("Q", f"{cns}:05000000" + OBJ_LE), "0000"),
           "DirectoryChange.PropertyValue[0]", 72, "A VT_CLSID|VT_VECTOR count larger than the GUIDs present."),
        _d("string-value-unterminated", h("00", SITE_LE, "00", "00", "0100", change_by_path("Q", "6c000000:4c00")),
           "DirectoryChange.PropertyValue[0]", 21 + 2 + 4 + 41 + 4, "A VT_LPWSTR value without its terminator."),
        _d("change-count-ffff", h("00", SITE_LE, "00", "00", "ffff"), "ChangePropagationMessage.Count", 19,
           "A 21-byte message claiming 65,535 changes fails at Count before building anything."),
        _d("sync-reply-count-huge", patched(g["SyncReplyMessage"], 58, b"\xff\xff\xff\xff"), "SyncReplyHeader.Count", 58,
           "Count 0xFFFFFFFF with one change's bytes."),
        _d("fewer-changes-than-count", patched(g["ChangePropagationMessage"], 19, b"\x02\x00"),
           "ChangePropagationMessage.Count", 19, "Count 2 with one change and a SeqNumberHeader left."),
        _d("seq-number-header-count-too-large", h("00", SITE_LE, "00", "00", "0000", "0500", label("M"), PART_LE,
                                                  ZERO_SEQ * 2), "SeqNumberHeader.Count", 21,
           "SeqNumberHeader.Count 5 with one PARTITION_SEQ_NUMBERS."),
        _d("seq-number-header-missing", h("00", SITE_LE, "00", "00", "0000"), "SeqNumberHeader.Count", 21,
           "A ChangePropagationMessage that ends after its changes lacks its SeqNumberHeader (E-016).", ("E-016",)),
        _d("machine-name-with-zero-count", h("00", SITE_LE, "00", "00", "0000", "0000", label("M")),
           "ChangePropagationMessage", 23, 'MachineName "MUST NOT be present if Count is set to 0x0000".'),
        _d("is-sync0-02", patched(g["SyncRequestMessage"], 58, b"\x02"), "SyncRequestMessage.IsSync0", 58,
           'IsSync0 "MUST be set to one of the following values" (0x00, 0x01).'),
        _d("scope-02", patched(g["SyncRequestMessage"], 59, b"\x02"), "SyncRequestMessage.Scope", 59,
           'Scope "MUST be set to one of the following values" (0x00, 0x01; E-019).'),
        _d("flush-02", patched(g["ChangePropagationMessage"], 18, b"\x02"), "ChangePropagationMessage.Flush", 18,
           'Flush "MUST be set to one of the following values" (0x00, 0x01).'),
        _d("complete-sync0-03", patched(g["SyncReplyMessage"], 62, bytes.fromhex("03000000")),
           "SyncReplyHeader.CompleteSync0", 62, 'CompleteSync0 "MUST be set to one of the following values" (E-014).'),
        *(_d(f"psc-name-offset-{o:x}", patched(g["ChangeRequestMessage"], 38, o.to_bytes(4, "little")),
             "ChangeRequestHeader.PSCNameOffset", 38,
             "A nonzero PSCNameOffset must be RequesterName's WCHAR length plus one (E-013).", ("E-013",))
          for o in (1, 0xFFFFFFFF)),
        _d("psc-name-offset-zero-with-psc-name", patched(g["ChangeRequestMessage"], 38, bytes(4)),
           "DirectoryChange.Command", 52, "With PSCNameOffset 0 a PSCName left there is read as the change."),
    ]
    for cut, field in ((1, "PartitionID"), (4, "PreviousSeqNumber"), (6, "SeqNumber"), (9, "PurgedSeqNumber")):
        change = bytes.fromhex(change_by_path())
        header = h("00", SITE_LE, "01", PART_LE, "00000000", "00000000", label("R"))
        cases.append(_d(f"change-cut-in-{field.lower()}", header + change[: 8 + cut * 4], f"DirectoryChange.{field}",
                        None, "A DirectoryChange cut inside its fixed fields names the field that runs out."))
    unterminated = [
        ("change-reply-requester", h("00", SITE_LE, "04", "00000000", "00000000", "41004200"),
         "ChangeReplyMessage.RequesterName", 26),
        ("sync-request-requester", h("00", SITE_LE, "02", PART_LE, ZERO_SEQ * 3, "00", "00", "4100"),
         "SyncRequestMessage.RequesterName", 60),
        ("bsc-ack-name", h("00", SITE_LE, "07", OBJ_LE, "42"), "BSCAckMessage.BSCName", 34),
        ("psc-ack-name-straddling-pair", h("00", SITE_LE, "06", OBJ_LE, PART_LE, ZERO_SEQ, "4100" "0041"),
         "PSCAckMessage.PSCName", 58),
        ("change-request-requester", h("00", SITE_LE, "01", PART_LE, "00000000", "00000000", "4200"),
         "ChangeRequestHeader.RequesterName", 42),
        ("change-request-psc-name", h("00", SITE_LE, "01", PART_LE, "00000000", "02000000", label("B"), "5000"),
         "ChangeRequestHeader.PSCName", 46),
        ("change-path-name", h("00", SITE_LE, "01", PART_LE, "00000000", "00000000", label("R"), "00", "00", "5100"),
         "DirectoryChange.PathName", 48),
        ("seq-number-header-machine-name", h("00", SITE_LE, "00", "00", "0000", "0100", "4d00"),
         "SeqNumberHeader.MachineName", 23),
    ]
    for name, data, field, offset in unterminated:
        cases.append(_d(f"unterminated-{name}", data, field, offset,
                        "A null-terminated WCHAR buffer without its 0x0000 is refused where it starts."))
    for name, wire in g.items():
        cases.append(_d(f"trailing-byte-{name}", wire + b"\x00", name, len(wire),
                        "Bytes after a complete message are refused where they start."))
    return cases


def _s(name: str, data: bytes, field: str, offset: int | None, description: str, lenient: bool = False, *,
       rests_on: tuple[str, ...] = ()) -> InvalidCase:
    return InvalidCase("mqsd", name, data, field, description, offset, lenient, rests_on=rests_on)


def _reply(*, count: int = 1, mask: int = 0, size: int | None = None, networks: int | None = None,
           site: bool | None = None, array: bytes = b"") -> bytes:
    size = len(array) if size is None else size
    site = bool(array) if site is None else site
    g = bytes.fromhex(SITE_LE)
    body = g + struct.pack("<III", count, mask, size) + g * (count if networks is None else networks)
    return b"\x00\x02\x00\x00" + body + (g if site else b"") + array


def _w(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def mqsd_invalid() -> list[InvalidCase]:
    req, rep = CLIENT_REQUEST, REPLY_LOCAL_SITE
    cases = [
        _s("request-version", b"\x01" + req[1:], "TopologyPacketHeader.Version", 0, "A client MUST zero Version."),
        # no MUST binds a reply's Version and Reserved: refusing them is mqspec's policy (E-020)
        attrs.evolve(_s("reply-version", b"\x01" + rep[1:], "TopologyPacketHeader.Version", 0,
                        "Strictly a reply's Version is 0: mqspec's policy, no MUST (E-020)."), rests_on=("E-020",)),
        _s("request-reserved", req[:2] + b"\x00\x80" + req[4:], "TopologyPacketHeader.Reserved", 2,
           "Reserved MUST be 0x0000."),
        attrs.evolve(_s("reply-reserved", REPLY_OTHER_SITE[:2] + b"\x00\x80" + REPLY_OTHER_SITE[4:],
                        "TopologyPacketHeader.Reserved", 2,
                        "Strictly a reply's Reserved is 0: mqspec's policy, no MUST (E-020)."), rests_on=("E-020",)),
        *(_s(f"type-{t:02x}", b"\x00" + bytes([t]) + req[2:], "TopologyPacketHeader.Type", 1,
             "Type is 0x01 or 0x02.") for t in (0, 3)),
        _s("lenient-type-ff", b"\x00\xff" + req[2:], "TopologyPacketHeader.Type", 1,
           "Leniency never covers Type: it says what follows.", True),
        _s("header-empty", b"", "TopologyPacketHeader.Version", 0, "An empty datagram."),
        _s("header-1-byte", b"\x00", "TopologyPacketHeader.Type", 1, "A datagram cut in the header."),
        _s("header-3-bytes", b"\x00\x02\x00", "TopologyPacketHeader.Reserved", 2, "A datagram cut in Reserved."),
        *(_s(f"request-cut-{n}", req[:n], f"TopologyClientRequest.{f}", o, "A request cut inside its GUIDs.")
          for n, f, o in ((4, "EnterpriseID", 4), (20, "RequestID", 20), (51, "SiteID", 36))),
        *(_s(f"request-ipx-count-{c}", req + struct.pack("<I", c) + bytes(4 * 33), "TopologyClientRequest.IPXNetworkCount",
             52, "IPXNetworkCount MUST be in the range 1 to 32.") for c in (0, 33)),
        _s("request-ipx-count-beyond-bytes", req + struct.pack("<III", 3, 7, 8), "TopologyClientRequest.IPXNetworkCount",
           52, "3 IPX network numbers declared, bytes for 2."),
        _s("request-trailing-after-ipx", req + struct.pack("<III", 2, 7, 8) + b"\x01", "TopologyClientRequest", 64,
           "Bytes after the IPX network numbers."),
        *(_s(f"request-partial-ipx-tail-{n}", req + b"\x01" + bytes(n - 1), "TopologyClientRequest.IPXNetworkCount", 52,
             "Strictly, 1..7 bytes after the IP form are a cut IPX count or array (E-021).", rests_on=("E-021",))
          for n in (1, 7)),
        *(_s(f"reply-cut-{n}", rep[:n], f"TopologyServerReply.{f}", o, "A reply cut inside its fixed fields.")
          for n, f, o in ((4, "CorrelationID", 4), (22, "ConnectedNetworkCount", 20), (24, "ConnectedNetworkMask", 24),
                          (31, "DirectoryServiceServerSize", 28))),
        *(_s(f"reply-count-{c}", _reply(count=c, networks=1), "TopologyServerReply.ConnectedNetworkCount", 20,
             "ConnectedNetworkCount MUST be in the range 1 to 32 (E-023).") for c in (0, 33)),
        _s("reply-mask-popcount", _reply(count=1, mask=3), "TopologyServerReply.ConnectedNetworkMask", 24,
           "A non-zero mask MUST have ConnectedNetworkCount bits set (E-022)."),
        _s("reply-odd-server-size", _reply(array=_w("10ab\x00") + b"\x00", size=11),
           "TopologyServerReply.DirectoryServiceServerSize", 28, "A size that is not whole WCHARs."),
        _s("reply-networks-short", _reply(count=3, networks=2), "TopologyServerReply.ConnectedNetworkCount", 20,
           "Fewer ConnectedNetworkArray GUIDs than ConnectedNetworkCount."),
        _s("reply-trailing-local-site", rep + bytes.fromhex(SITE_LE), "TopologyServerReply", 48,
           "With DirectoryServiceServerSize 0 no RespondingSiteID may follow."),
        _s("reply-missing-responding-site", REPLY_OTHER_SITE[:56], "TopologyServerReply.RespondingSiteID", 48,
           "A non-zero DirectoryServiceServerSize needs RespondingSiteID (E-024).", rests_on=("E-024",)),
        _s("reply-server-size-beyond-bytes", REPLY_OTHER_SITE[:28] + struct.pack("<I", 20) + REPLY_OTHER_SITE[32:],
           "TopologyServerReply.DirectoryServiceServerSize", 28, "20 bytes declared, 18 left."),
        _s("reply-trailing-after-array", REPLY_OTHER_SITE + b"\x00\x00", "TopologyServerReply", 82,
           "Bytes after DirectoryServiceServerSize bytes of array."),
        _s("array-without-endlist", _reply(array=_w("10ab")), "DirectoryServiceServerArray.EndList", 72,
           "The array does not end with EndList (0x0000)."),
        _s("array-bytes-after-endlist", _reply(array=_w("10a\x0010b\x00")), "DirectoryServiceServerArray.EndList", 72,
           "A second 0x0000 is not a separator: the bytes after EndList are refused (E-026)."),
        _s("lenient-array-bytes-after-endlist", _reply(array=_w("10a\x0010b\x00")),
           "DirectoryServiceServerArray.EndList", 72, "Leniency does not cover the server list.", True),
        _s("array-surrogate-pair-offsets", _reply(array=_w("10\U0001f600,1zb\x00")), "Entry.IPX", 76,
           "Offsets after a surrogate pair count 2-byte code units."),
        _s("lenient-request-ipx-count-0", req + struct.pack("<II", 0, 1), "TopologyClientRequest.IPXNetworkCount", 52,
           "Leniency covers only the header and a short IPX tail.", True),
        _s("lenient-reply-count-0", _reply(count=0, networks=1), "TopologyServerReply.ConnectedNetworkCount", 20,
           "Leniency covers only the header.", True),
        _s("lenient-reply-trailing", REPLY_OTHER_SITE + b"\x00", "TopologyServerReply", 82,
           "Leniency covers only the header.", True),
    ]
    entries = (("20a", "Entry.IP", 64), ("1xa", "Entry.IPX", 66), ("10a,1xb", "Entry.IPX", 74),
               ("10a,,10b", "Entry.IP", 72), ("10a,", "Entry.IP", 72), ("10", "Entry.NameChar", 68), ("", "Entry.IP", 64))
    for i, (text, field, offset) in enumerate(entries):
        cases.append(_s(f"array-entry-{i}", _reply(array=_w(text + "\x00")), field, offset,
                        'Each Entry is IP ("0"/"1"), IPX ("0"/"1") and 1*NameChar.'))
    cases.append(_s("lenient-array-entry-ip", _reply(array=_w("21a\x00")), "Entry.IP", 64,
                    "Leniency does not cover the server list.", True))
    return cases


QUEUE_HEX = "61baeae6c6d1db11baac0003ff4e2d22"
MASTER_HEX = "3c2d1e0f5a4b78698796a5b4c3d2e1f0"
#: a deletion update: Command 2, UseGuid 1, the queue, the master, Reserved, 2 properties (D_SCOPE, D_OBJTYPE)
DELETE_UPDATE = h("02", "01", QUEUE_HEX, MASTER_HEX, "00" * 24, "02",
                  le32(PROPIDS["PROPID_D_SCOPE"].propid), le32(PROPIDS["PROPID_D_OBJTYPE"].propid), "01", "01")


def _body(event: str = "2", guid: str = "e6eaba61-d1c6-11db-baac-0003ff4e2d22", end: str = "</ObjectGuid>",
          dc: str = "dc1.example.com", tail: str = "", count: int = 1) -> bytes:
    text = (f"<Notification><Event>{event}</Event><ObjectGuid>{guid}{end}"
            f"<DomainController>{dc}</DomainController></Notification>{tail}")
    return bytes((2, count)) + text.encode("utf-16-le", "surrogatepass")


def _c(name: str, data: bytes, field: str, offset: int | None, description: str, *, lenient: bool = False,
       entry: str = "message", rests_on: tuple[str, ...] = ()) -> InvalidCase:
    return InvalidCase("mqcn", name, data, field, description, offset, lenient, entry, rests_on)


def mqcn_invalid() -> list[InvalidCase]:
    u = DELETE_UPDATE
    bad_command = b"\x07" + u[1:]
    label_update = h("01", "01", QUEUE_HEX, MASTER_HEX, "00" * 24, "01", le32(PROPIDS["PROPID_Q_LABEL"].propid),
                     label("abc"))
    event_offset = 2 + 2 * len("<Notification><Event>")
    guid_offset = 2 + 2 * len("<Notification><Event>2</Event><ObjectGuid>")
    cases = [
        *(_c(f"version-{v:02x}", bytes((v, 1)) + bytes(50), "ChangeNotificationMessage.Version", 0,
             "Version MUST be 0x01 or 0x02.") for v in (0, 3)),
        _c("v2-count-3", _body(count=3), "ChangeNotificationMessage.NumberOfUpdateNotifications", 1,
           "If Version is 0x02 the count MUST be 1 (strict; E-033)."),
        _c("v1-count-beyond-bytes", b"\x01\xff" + u, "ChangeNotificationMessage.NumberOfUpdateNotifications", 1,
           "255 Notification Updates declared, bytes for 1."),
        _c("v1-trailing-update", b"\x01\x01" + u + u, "ChangeNotificationMessage", 2 + len(u),
           "More updates than NumberOfUpdateNotifications leave trailing bytes."),
        _c("v1-trailing-byte", b"\x01\x00\x00", "ChangeNotificationMessage", 2, "A zero count then a byte."),
        _c("empty", b"", "ChangeNotificationMessage.Version", 0, "An empty message."),
        _c("v1-no-count", b"\x01", "ChangeNotificationMessage.NumberOfUpdateNotifications", 1, "A message cut after Version."),
        _c("v2-no-body", b"\x02\x01", "NotificationBody.Open", 2, "A version 0x02 message with no body."),
        _c("v2-odd-body", b"\x02\x01\x3c", "NotificationBody", 2, "A body of an odd number of bytes (E-035).",
           rests_on=("E-035",)),
        _c("second-update-command", b"\x01\x02" + u + bad_command, "NotificationUpdate.Command", 2 + len(u),
           "A bad field in the second update names Data[1] and its absolute offset."),
        _c("command-03", b"\x01\x01\x03" + u[1:], "NotificationUpdate.Command", 2, "Command MUST be 0x00..0x02."),
        _c("use-guid-02", b"\x01\x01\x02\x02" + u[2:], "NotificationUpdate.UseGuid", 3, "UseGuid MUST be 0x00 or 0x01."),
        _c("path-name-unterminated", b"\x01\x01\x00\x00" + _w("m1\\" + "q" * 40), "NotificationUpdate.PathName", 4,
           "PathName MUST be null-terminated."),
        _c("property-count-beyond-bytes", b"\x01\x01" + u[:58] + b"\xc8" + u[59:], "NotificationUpdate.NumberOfProperties",
           60, "200 properties declared, bytes for 2."),
        _c("unknown-propid", b"\x01\x01" + u[:63] + (9999).to_bytes(4, "little") + u[67:], "NotificationUpdate.PropertyId[1]",
           65, "A PROPID outside the registry (MS-MQCN 2.2.2)."),
        _c("property-value-cut", b"\x01\x01" + label_update[:-2], "NotificationUpdate.PropertyValue[0]", None,
           "A PROPVALUE cut short (MS-MQCN 2.2.3)."),
        _c("abnf-guid-form", _body(guid="E6EABA61-D1C6-11DB-0003FF4E2D22"), "NotificationBody.ObjectGuid", guid_offset,
           "The ABNF's 8-4-4-12 form is 28 digits, no GUID (E-031).", rests_on=("E-031",)),
        *(_c(f"event-{name}", _body(event=e), "NotificationBody.Event", event_offset, "Event MUST be 1, 2, 3, or 4.")
          for name, e in (("0", "0"), ("5", "5"), ("a", "a"), ("empty", ""))),
        _c("event-12", _body(event="12"), "NotificationBody.EventEnd", event_offset + 2, "Event is one digit."),
        _c("dc-empty", _body(dc=""), "NotificationBody.DomainController", None, "DirectoryServiceServer is 1*256(VCHAR)."),
        _c("dc-257", _body(dc="d" * 257), "NotificationBody.DomainController", None, "257 characters are too many."),
        _c("dc-space", _body(dc="dc one"), "NotificationBody.DomainController", None, "A space is not a VCHAR."),
        _c("dc-latin1", _body(dc="dc\u00e9"), "NotificationBody.DomainController", None, "U+00E9 is not a VCHAR."),
        _c("dc-cjk", _body(dc="dc\u4e2d"), "NotificationBody", None, "U+4E2D is outside the ABNF's alphabet."),
        _c("body-terminator", _body(tail="\x00"), "NotificationBody.Close", None,
           "A UTF-16 terminator is not part of the ABNF (E-035).", rests_on=("E-035",)),
        # ABNF quoted strings are case-insensitive (RFC 5234 2.3): refusing "<event>" is mqspec's policy (E-032)
        _c("tag-case", _body().replace(_w("<Event>"), _w("<event>")), "NotificationBody.Open", 2,
           "Tags are matched exactly as printed: mqspec's policy, no MUST (E-032).", rests_on=("E-032",)),
        _c("whitespace", _body().replace(_w("</Event>"), _w("</Event>\r\n")), "NotificationBody.EventEnd", event_offset + 2,
           "No whitespace between elements (E-038)."),
        _c("body-cut", b"\x02\x01" + _w("<Notification><Event>2</Event>"), "NotificationBody.EventEnd", event_offset + 2,
           "A body that ends early."),
        _c("msmq-body-empty", b"", "ChangeNotificationMessage", 0, "The MSMQ body is the message plus one unused byte.",
           entry="msmq-body"),
        _c("msmq-body-no-unused-byte", _body(), "ChangeNotificationMessage", len(_body()),
           "Strictly the unused byte MUST follow the message (3.3.5.3, E-036).", entry="msmq-body"),
        _c("msmq-body-two-extra-bytes", _body() + b"\x00\x00", "NotificationBody", 2,
           "Strictly exactly one byte follows the message: the other makes the body odd.", entry="msmq-body"),
    ]
    return cases




def invalid_cases() -> list[InvalidCase]:
    return [*mqdsrp_invalid(), *mqsd_invalid(), *mqcn_invalid()]
