"""The valid codec cases: fixed constructions and seeded random messages of every type.

Random values come from ``random.Random(seed)`` with fixed seeds, so the bytes never change.
The invalid cases are in :mod:`mqspec.vectors.codec_invalid`.
"""

from __future__ import annotations

import random
import struct
from collections import defaultdict
from collections.abc import Callable

from mqspec.model import mqcn, mqdsrp, mqsd
from mqspec.model.examples_mqsd import (
    CLIENT_REQUEST,
    REPLY_LOCAL_SITE,
    REPLY_OTHER_SITE,
)
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
from mqspec.model.propids import PROPID_BY_VALUE, PROPIDS, PropertyDef, VarType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER, SequenceNumber

from .codec import ValidCase
from .codec_invalid import invalid_cases  # noqa: F401  (re-exported: codec_vectors reads both here)

SITE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
PART = Guid.parse("00112233-4455-6677-8899-aabbccddeeff")
OBJ = Guid.parse("0f0e0d0c-0b0a-0908-0706-050403020100")

#: PROPIDs by VARTYPE, in PROPID order: a property of each VARTYPE the registry has
BY_VARTYPE: dict[VarType, list[PropertyDef]] = defaultdict(list)
for _pdef in sorted(PROPID_BY_VALUE.values(), key=lambda p: p.propid):
    BY_VARTYPE[_pdef.vartype].append(_pdef)

_INT_RANGES = {
    VarType.VT_I1: (-(1 << 7), (1 << 7) - 1), VarType.VT_UI1: (0, 0xFF), VarType.VT_I2: (-(1 << 15), (1 << 15) - 1),
    VarType.VT_UI2: (0, 0xFFFF), VarType.VT_BOOL: (0, 0xFFFF), VarType.VT_I4: (-(1 << 31), (1 << 31) - 1),
    VarType.VT_UI4: (0, 0xFFFFFFFF), VarType.VT_I8: (-(1 << 63), (1 << 63) - 1), VarType.VT_UI8: (0, (1 << 64) - 1),
}
#: characters random strings draw from: ASCII, Latin-1, CJK, an astral emoji (a surrogate pair), a backslash
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 \\-_.\u00e9\u00fc\u4e2d\u6587\U0001f600"


def seq(n: int) -> SequenceNumber:
    return SequenceNumber(n)


def p(name: str, value: object) -> Property:
    return Property(PROPIDS[name].propid, value)


class Values:
    """Random model values from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text(self, low: int = 1, high: int = 12) -> str:
        return "".join(self.rng.choice(_ALPHABET) for _ in range(self.rng.randint(low, high)))

    def guid(self) -> Guid:
        return Guid(self.rng.randbytes(16))

    def seq(self) -> SequenceNumber:
        return seq(self.rng.choice((0, 1, 255, 256, 2**32, 2**64 - 1, self.rng.getrandbits(64))))

    def value(self, pdef: PropertyDef) -> object:
        vt, rng = pdef.vartype, self.rng
        if vt in _INT_RANGES:
            low, high = _INT_RANGES[vt]
            return rng.choice((low, high, 0, rng.randint(low, high)))
        if vt is VarType.VT_LPWSTR:
            return self.text(0, 16)
        if vt is VarType.VT_CLSID:
            return self.guid()
        if vt in (VarType.VT_BLOB, VarType.VT_UI1_VECTOR):
            return rng.randbytes(rng.randint(0, 12))
        if vt is VarType.VT_CLSID_VECTOR:
            return tuple(self.guid() for _ in range(rng.randint(0, 3)))
        if vt is VarType.VT_UI4_VECTOR:
            return tuple(rng.getrandbits(32) for _ in range(rng.randint(0, 3)))
        if vt is VarType.VT_LPWSTR_VECTOR:
            return tuple(self.text(0, 6) for _ in range(rng.randint(0, 3)))
        raise ValueError(f"{pdef.name}: {vt.name} has no flat encoding")

    def properties(self, n: int) -> tuple[Property, ...]:
        pdefs = [pd for pd in PROPID_BY_VALUE.values() if pd.vartype is not VarType.VT_VARIANT_VECTOR]
        pdefs.sort(key=lambda pd: pd.propid)
        return tuple(Property(pd.propid, self.value(pd)) for pd in (self.rng.choice(pdefs) for _ in range(n)))

    def every_vartype(self) -> tuple[Property, ...]:
        """One property of each VARTYPE the registry holds (the first PROPID of each)."""
        return tuple(Property(pds[0].propid, self.value(pds[0])) for vt, pds in sorted(BY_VARTYPE.items())
                     if vt is not VarType.VT_VARIANT_VECTOR)

    def change(self, n_props: int | None = None) -> DirectoryChange:
        rng = self.rng
        named_by_guid = rng.random() < 0.5
        return DirectoryChange(
            Command(rng.randint(0, 3)), self.guid(), self.seq(), self.seq(), self.seq(),
            self.properties(rng.randint(0, 4) if n_props is None else n_props),
            path_name=None if named_by_guid else self.text(0, 20), guid_identifier=self.guid() if named_by_guid else None,
        )

    def header(self) -> SeqNumberHeader:
        n = self.rng.randint(0, 3)
        if not n:
            return SeqNumberHeader(None, ())
        return SeqNumberHeader(self.text(), tuple(PartitionSeqNumbers(self.guid(), self.seq(), self.seq())
                                                  for _ in range(n)))

    def replication_message(self, kind: type) -> object:
        rng, t = self.rng, self.text
        builders: dict[type, Callable[[], object]] = {
            ChangeRequestMessage: lambda: ChangeRequestMessage(self.guid(), self.guid(), rng.getrandbits(32), t(),
                                                               rng.choice((None, t())), self.change()),
            ChangeReplyMessage: lambda: ChangeReplyMessage(self.guid(), rng.getrandbits(32), rng.getrandbits(32), t()),
            SyncRequestMessage: lambda: SyncRequestMessage(self.guid(), self.guid(), self.seq(), self.seq(), self.seq(),
                                                           rng.random() < 0.5, Scope(rng.randint(0, 1)), t()),
            SyncReplyMessage: lambda: SyncReplyMessage(self.guid(), self.guid(), self.seq(), self.seq(), self.seq(),
                                                       CompleteSync0(rng.randint(0, 2)),
                                                       tuple(self.change() for _ in range(rng.randint(0, 4)))),
            BSCAckMessage: lambda: BSCAckMessage(self.guid(), self.guid(), t()),
            PSCAckMessage: lambda: PSCAckMessage(self.guid(), self.guid(), self.guid(), self.seq(), t()),
            AlreadyPurgedMessage: lambda: AlreadyPurgedMessage(self.guid(), self.guid(), self.seq()),
            ChangePropagationMessage: lambda: ChangePropagationMessage(
                self.guid(), rng.random() < 0.5, tuple(self.change() for _ in range(rng.randint(0, 4))), self.header()),
        }
        return builders[kind]()


MQDSRP_TYPES = (ChangePropagationMessage, ChangeRequestMessage, SyncRequestMessage, SyncReplyMessage,
                ChangeReplyMessage, AlreadyPurgedMessage, PSCAckMessage, BSCAckMessage)


def _mqdsrp(name: str, msg: object, description: str) -> ValidCase:
    return ValidCase("mqdsrp", name, mqdsrp.encode(msg), description)  # type: ignore[arg-type]


def mqdsrp_cases(random_count: int) -> list[ValidCase]:
    v = Values(2024)
    by_path = DirectoryChange(Command.CREATE, PART, seq(4), seq(5), seq(0), v.every_vartype(), path_name="C14\\testq")
    by_guid = DirectoryChange(Command.UPDATE, PART, seq(5), seq(6), seq(0),
                              (p("PROPID_Q_LABEL", "\u6587 label"),), guid_identifier=OBJ)
    delete = DirectoryChange(Command.DELETE, PART, seq(6), seq(7), seq(1),
                             (p("PROPID_D_SCOPE", 1), p("PROPID_D_OBJTYPE", 1)), guid_identifier=OBJ)
    sync = DirectoryChange(Command.SYNC, PART, seq(0), seq(2**64 - 2), seq(2**32),
                           (p("PROPID_QM_PATHNAME", "pec0"), p("PROPID_QM_SERVICE", 4)), guid_identifier=OBJ)
    header = SeqNumberHeader("PEC0", (PartitionSeqNumbers(Guid.NULL, seq(300), seq(0)),
                                      PartitionSeqNumbers(PART, MAX_SEQ_NUMBER, seq(256))))
    cases = [
        _mqdsrp("change-request-psc", ChangeRequestMessage(SITE, PART, 1, "PSC1", None, by_path),
                "A PSC's request (PSCNameOffset 0) carrying one property of every VARTYPE."),
        _mqdsrp("change-request-bsc", ChangeRequestMessage(SITE, PART, 0xFFFFFFFF, "BSC11", "PSC1", by_guid),
                "A BSC's request: PSCNameOffset is RequesterName's WCHARs plus one, PSCName follows."),
        _mqdsrp("change-request-delete", ChangeRequestMessage(SITE, PART, 7, "PSC2", None, delete),
                "A delete carries the scope and object type as its two properties."),
        _mqdsrp("change-reply-ok", ChangeReplyMessage(SITE, 42, 0, "PSC1"), "A reply with MQ_OK."),
        _mqdsrp("change-reply-hresult", ChangeReplyMessage(SITE, 42, 0x80070005, "BSC11"),
                "Result is the HRESULT's 32 bits, read unsigned."),
        _mqdsrp("sync-request", SyncRequestMessage(SITE, PART, seq(5), MAX_SEQ_NUMBER, seq(0), False,
                                                   Scope.ENTERPRISE, "PSC1"),
                "A PSC asks for everything after 5 (ToSeqNumber MAX_SEQ_NUMBER), enterprise scope."),
        _mqdsrp("sync-request-sync0-bsc", SyncRequestMessage(SITE, Guid.NULL, seq(0), seq(40), seq(40), True,
                                                             Scope.NONE, "BSC11"),
                "A BSC in sync0 (IsSync0 0x01, Scope 0x00)."),
        _mqdsrp("sync-reply-empty", SyncReplyMessage(SITE, PART, seq(3), seq(7), seq(0), CompleteSync0.NOT_IN_SYNC0,
                                                     ()), "A reply with Count 0."),
        _mqdsrp("sync-reply-changes", SyncReplyMessage(SITE, PART, seq(0), seq(7), seq(1), CompleteSync0.COMPLETING,
                                                       (by_path, by_guid, delete, sync)),
                "A reply with four changes, one of each Command, CompleteSync0 1."),
        _mqdsrp("sync-reply-completed", SyncReplyMessage(SITE, PART, seq(0), seq(2), seq(0), CompleteSync0.COMPLETED,
                                                         (sync,)), "CompleteSync0 2."),
        _mqdsrp("bsc-ack", BSCAckMessage(SITE, OBJ, "BSC11"), "A BSC's acknowledgement."),
        _mqdsrp("psc-ack", PSCAckMessage(SITE, SITE, Guid.NULL, seq(512), "PSC1"), "A PSC's acknowledgement."),
        _mqdsrp("already-purged", AlreadyPurgedMessage(SITE, PART, seq(0x0102)), "The purge horizon."),
        _mqdsrp("change-propagation-empty", ChangePropagationMessage(SITE, False, ()),
                "No changes and a SeqNumberHeader with Count 0 (E-016)."),
        _mqdsrp("change-propagation-flush-header", ChangePropagationMessage(SITE, True, (by_path, sync), header),
                "Flush 0x01, two changes, a SeqNumberHeader with two partitions."),
        ValidCase("mqdsrp", "wchar-surrogate-pair", bytes.fromhex(
            "00" + SITE.bytes_le.hex() + "01" + PART.bytes_le.hex() + "00000000" + "03000000"
            + "00d800dc0000" + "41000000" + "00" "00" + "5100" "0000" + PART.bytes_le.hex() + "00" * 24 + "00"),
            "WCHAR buffers are UTF-16 code units: a surrogate pair counts two in PSCNameOffset."),
        ValidCase("mqdsrp", "wchar-lone-high-surrogate", bytes.fromhex(
            "00" + SITE.bytes_le.hex() + "06" + OBJ.bytes_le.hex() + PART.bytes_le.hex() + "00" * 8 + "24b9a7db0000"),
            "A lone high surrogate at the end of PSCName decodes (JSON escape \\udba7) and encodes back."),
        ValidCase("mqdsrp", "wchar-lone-low-surrogate", bytes.fromhex(
            "00" + SITE.bytes_le.hex() + "07" + OBJ.bytes_le.hex() + "00dc41000000"),
            "A lone low surrogate first in BSCName decodes (JSON escape \\udc00) and encodes back."),
    ]
    for i in range(random_count):
        kind = MQDSRP_TYPES[i % len(MQDSRP_TYPES)]
        msg = Values(1000 + i).replication_message(kind)
        cases.append(_mqdsrp(f"random-{i:02d}-{kind.__name__}", msg, f"A random {kind.__name__} (seed {1000 + i})."))
    return cases


def _reply_bytes(count: int, mask: int, networks: int, array: bytes = b"") -> bytes:
    body = SITE.bytes_le + struct.pack("<III", count, mask, len(array)) + OBJ.bytes_le * networks
    return b"\x00\x02\x00\x00" + body + (PART.bytes_le + array if array else b"")


def mqsd_cases(random_count: int) -> list[ValidCase]:
    def wchars(text: str) -> bytes:
        return text.encode("utf-16-le", "surrogatepass")

    cases = [
        ValidCase("mqsd", "section4-client-request", CLIENT_REQUEST, "MS-MQSD section 4: the TopologyClientRequest."),
        ValidCase("mqsd", "section4-reply-local-site", REPLY_LOCAL_SITE,
                  "MS-MQSD section 4: the reply from the client's own site (no server list)."),
        ValidCase("mqsd", "section4-reply-other-site", REPLY_OTHER_SITE,
                  "MS-MQSD section 4: the reply from another site, listing server nt4pec."),
        ValidCase("mqsd", "client-request-ipx-1", CLIENT_REQUEST + struct.pack("<II", 1, 0x12345678),
                  "The IPX form: IPXNetworkCount 1 and one network number."),
        ValidCase("mqsd", "client-request-ipx-32", CLIENT_REQUEST + struct.pack("<33I", 32, *range(32)),
                  "The IPX form with the most network numbers (32)."),
        ValidCase("mqsd", "reply-ipx-mask", _reply_bytes(2, 0x00010001, 2), "An IPX reply: mask with 2 bits for 2 networks."),
        ValidCase("mqsd", "reply-32-networks", _reply_bytes(32, 0xFFFFFFFF, 32), "32 connected networks, all mask bits."),
        ValidCase("mqsd", "reply-several-servers", _reply_bytes(1, 0, 1, wchars("10a,01bb,11c c,00d\x00")),
                  "Four entries with every IP/IPX flag pair."),
        ValidCase("mqsd", "reply-astral-name", _reply_bytes(1, 0, 1, wchars("10\U0001f600srv\x00")),
                  "A server name with a surrogate pair."),
        ValidCase("mqsd", "lenient-request-version-reserved", b"\x07\x01\x34\x12" + CLIENT_REQUEST[4:],
                  "MQSD servers MUST ignore a request's Version and Reserved.", lenient=True),
        ValidCase("mqsd", "lenient-request-short-ipx-tail", CLIENT_REQUEST + b"\x05\x00\x00",
                  "Under 60 bytes the IPX fields are considered not present (3.2.5.1).", lenient=True),
        ValidCase("mqsd", "lenient-reply-version", b"\x01\x02\x00\x01" + REPLY_LOCAL_SITE[4:],
                  "A reply's Version and Reserved bind no receiver (E-020).", lenient=True),
    ]
    for i in range(random_count):
        v = Values(2000 + i)
        if i % 2 == 0:
            msg: object = mqsd.TopologyClientRequest(v.guid(), v.guid(), v.guid(),
                                                     tuple(v.rng.getrandbits(32) for _ in range(v.rng.randint(0, 4))))
        else:
            n = v.rng.randint(1, 4)
            servers = tuple(mqsd.DirectoryServiceServer(v.text().replace(",", "x"), v.rng.random() < 0.5,
                                                        v.rng.random() < 0.5) for _ in range(v.rng.randint(0, 3)))
            msg = mqsd.TopologyServerReply(v.guid(), tuple(v.guid() for _ in range(n)),
                                           (1 << n) - 1 if v.rng.random() < 0.5 else 0,
                                           v.guid() if servers else None, servers)
        cases.append(ValidCase("mqsd", f"random-{i:02d}-{type(msg).__name__}", mqsd.encode(msg),  # type: ignore[arg-type]
                               f"A random {type(msg).__name__} (seed {2000 + i})."))
    return cases


QUEUE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
MASTER = Guid.parse("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")


def body_bytes(event: str = "2", guid: str = str(QUEUE), end: str = "</ObjectGuid>", dc: str = "dc1.example.com",
               tail: str = "", count: int = 1) -> bytes:
    """A version 0x02 message whose body text is assembled from the given pieces."""
    text = (f"<Notification><Event>{event}</Event><ObjectGuid>{guid}{end}"
            f"<DomainController>{dc}</DomainController></Notification>{tail}")
    return bytes((2, count)) + text.encode("utf-16-le")


def delete_update() -> mqcn.NotificationUpdate:
    """A queue deletion as MS-MQCN 3.3.5.2 prepares it."""
    return mqcn.NotificationUpdate(command=mqcn.Command.DELETE, guid_identifier=QUEUE, guid_master_id=MASTER,
                                   properties=(p("PROPID_D_SCOPE", 1), p("PROPID_D_OBJTYPE", 1)))


def _v1(*updates: mqcn.NotificationUpdate) -> bytes:
    return mqcn.encode(mqcn.ChangeNotificationMessage(version=1, updates=updates))


def mqcn_cases(random_count: int) -> list[ValidCase]:
    v = Values(3000)
    create = mqcn.NotificationUpdate(command=mqcn.Command.CREATE, path_name="m1\\q\u00e9", guid_master_id=MASTER,
                                     properties=v.every_vartype())
    kept = mqcn.NotificationUpdate(command=mqcn.Command.CHANGE, guid_identifier=QUEUE, guid_master_id=MASTER,
                                   reserved=bytes(range(24)), properties=(p("PROPID_Q_LABEL", "x"),))
    cases = [
        ValidCase("mqcn", "v1-no-updates", b"\x01\x00", "A version 0x01 message with no updates."),
        ValidCase("mqcn", "v1-delete", _v1(delete_update()), "A deletion: PROPID_D_SCOPE and PROPID_D_OBJTYPE."),
        ValidCase("mqcn", "v1-create-every-vartype", _v1(create), "A create by path with a property of every VARTYPE."),
        ValidCase("mqcn", "v1-reserved-kept", _v1(kept), "Reserved MUST be ignored: any bytes decode and are kept."),
        ValidCase("mqcn", "v1-two-updates", _v1(delete_update(), kept), "Two updates."),
        *(ValidCase("mqcn", f"v2-event-{e}", body_bytes(event=str(e)), f"A Notification Body with Event {e}.")
          for e in range(1, 5)),
        ValidCase("mqcn", "v2-spaced-end-tag", body_bytes(end="</ObjectGuid >"),
                  "The ABNF's literal </ObjectGuid > is accepted and kept (E-030)."),
        ValidCase("mqcn", "v2-uppercase-guid", body_bytes(guid=str(QUEUE).upper()),
                  "An uppercase GUID is kept as written (E-032)."),
        ValidCase("mqcn", "v2-dc-with-tags", body_bytes(dc="a</DomainController>"),
                  "VCHAR includes < and /: the server name runs to the final closing tags (E-035)."),
        ValidCase("mqcn", "v2-dc-256", body_bytes(dc="d" * 256), "The longest DirectoryServiceServer (256 VCHARs)."),
        ValidCase("mqcn", "msmq-body-unused-byte", body_bytes() + b"\xaa",
                  "The MSMQ body is the message plus one unused byte of any value (3.3.5.3).", entry="msmq-body"),
        ValidCase("mqcn", "msmq-body-v1", _v1(delete_update()) + b"\x00", "A version 0x01 MSMQ body.",
                  entry="msmq-body"),
        ValidCase("mqcn", "lenient-v2-count-3", body_bytes(count=3),
                  "A receiver reads Data by Version alone: count 3 is read as one body (E-033).", lenient=True),
        ValidCase("mqcn", "lenient-msmq-body-no-unused-byte", body_bytes(), "Lenient: the unused byte may be missing.",
                  lenient=True, entry="msmq-body"),
        ValidCase("mqcn", "lenient-msmq-body-padding", body_bytes() + b"\x00\x00\x00",
                  "Lenient: whatever follows the message is ignored.", lenient=True, entry="msmq-body"),
    ]
    for i in range(random_count):
        r = Values(4000 + i)
        updates = []
        for _ in range(r.rng.randint(0, 3)):
            by_guid = r.rng.random() < 0.5
            updates.append(mqcn.NotificationUpdate(
                command=mqcn.Command(r.rng.randint(0, 2)), path_name=None if by_guid else r.text(0, 10),
                guid_identifier=r.guid() if by_guid else None, guid_master_id=r.guid(),
                reserved=r.rng.randbytes(24) if r.rng.random() < 0.3 else bytes(24), properties=r.properties(3)))
        cases.append(ValidCase("mqcn", f"random-{i:02d}-v1", _v1(*updates), f"A random version 0x01 message (seed {4000 + i})."))
    return cases


def valid_cases(random_count: int = 12) -> list[ValidCase]:
    return [*mqdsrp_cases(random_count), *mqsd_cases(random_count), *mqcn_cases(random_count)]
