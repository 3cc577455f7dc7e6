"""[MS-MQSD] section 2 codecs: the section 4 packets, round trips, every strictness rule, leniency."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.clauses import covers
from mqspec.model import mqsd
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.examples_mqsd import (
    CLIENT_REQUEST,
    EXAMPLES,
    EXPECTED_CLIENT_REQUEST,
    EXPECTED_REPLY_LOCAL_SITE,
    EXPECTED_REPLY_OTHER_SITE,
    REPLY_LOCAL_SITE,
    REPLY_OTHER_SITE,
)
from mqspec.model.guid import Guid
from mqspec.model.jsonform import from_json, to_json
from tests import strategies_mqsd as sm

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "MS-MQSD.txt"

H1 = "MS-MQSD 2.2.1"
H2 = "MS-MQSD 2.2.2"
H3 = "MS-MQSD 2.2.3"

ARRAY = "TopologyServerReply.DirectoryServiceServerArray"
G = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")


def refused(data: bytes, *, lenient: bool = False, decoder=mqsd.decode) -> DecodeError:
    """Decode ``data`` expecting a DecodeError, and return it."""
    with pytest.raises(DecodeError) as info:
        decoder(data, lenient=lenient)
    str(info.value)  # the message renders
    return info.value


def reply_bytes(
    *, header: bytes = b"\x00\x02\x00\x00", count: int = 1, mask: int = 0, size: int | None = None,
    networks: int | None = None, site: bool | None = None, array: bytes = b"",
) -> bytes:
    """A TopologyServerReply with chosen (possibly wrong) fields; defaults follow ``array``."""
    size = len(array) if size is None else size
    site = bool(array) if site is None else site
    body = G.bytes_le + struct.pack("<III", count, mask, size)
    body += G.bytes_le * (count if networks is None else networks)
    return header + body + (G.bytes_le if site else b"") + array


def request_bytes(ipx_tail: bytes = b"", header: bytes = b"\x00\x01\x00\x00") -> bytes:
    return header + CLIENT_REQUEST[4:] + ipx_tail


def wchars(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


# --------------------------------------------------------------------------- section 4 (golden)

_LOOKALIKES = str.maketrans({"Α": "A", "А": "A", "Β": "B", "В": "B", "С": "C", "З": "3", "Е": "E"})


def spec_hex_dumps(text: str) -> list[bytes]:
    """The hex dumps of section 4, undoing the text rendering's look-alike letters and split digits."""
    section = text[text.index("4 Protocol Examples\n\nA client") : text.index("5 Security\n\n5.1")]
    dumps: list[bytearray] = []
    for line in section.splitlines():
        m = re.match(r"^(\d{7,8})\s+(.*)$", line)
        if not m:
            continue
        if int(m.group(1), 16) == 0:
            dumps.append(bytearray())
        assert int(m.group(1), 16) == len(dumps[-1]), f"offset {m.group(1)} out of sequence"
        dumps[-1] += bytes.fromhex(re.sub(r"\s", "", m.group(2)).translate(_LOOKALIKES))
    return [bytes(d) for d in dumps]


@covers("MS-MQSD", "2.2.2")
@covers("MS-MQSD", "2.2.3")
@pytest.mark.skipif(not SPEC.exists(), reason="the shared spec folder is not beside the checkout")
def test_example_constants_match_the_spec_hex_dumps():
    """The example constants are the three section 4 hex dumps, byte for byte."""
    assert spec_hex_dumps(SPEC.read_text(encoding="utf-8")) == list(EXAMPLES.values())


def check_header(data: bytes, expected: dict) -> None:
    header = mqsd.decode_header(data[:4])
    assert (header.version, header.type, header.reserved) == (
        expected["version"], expected["type"], expected["reserved"],
    )
    assert len(data) == expected["length"]


@covers("MS-MQSD", "2.2.1")
@covers("MS-MQSD", "2.2.2")
def test_client_request_example_fields():
    """The section 4 request decodes to the field values read from its dump."""
    e = EXPECTED_CLIENT_REQUEST
    check_header(CLIENT_REQUEST, e)
    m = mqsd.decode(CLIENT_REQUEST)
    assert type(m) is mqsd.TopologyClientRequest and not m.is_ipx
    assert str(m.enterprise_id) == e["enterprise_id"]
    assert str(m.request_id) == e["request_id"]
    assert str(m.site_id) == e["site_id"]
    assert m.ipx_network_numbers == e["ipx_network_numbers"]


def check_reply(data: bytes, e: dict) -> mqsd.TopologyServerReply:
    check_header(data, e)
    m = mqsd.decode(data)
    assert type(m) is mqsd.TopologyServerReply
    assert str(m.correlation_id) == e["correlation_id"]
    assert len(m.connected_networks) == e["connected_network_count"]
    assert m.connected_network_mask == e["connected_network_mask"]
    assert m.directory_service_server_size == e["directory_service_server_size"]
    assert tuple(str(g) for g in m.connected_networks) == e["connected_networks"]
    site = None if m.responding_site_id is None else str(m.responding_site_id)
    assert site == e["responding_site_id"]
    assert tuple((s.name, s.ip, s.ipx) for s in m.servers) == e["servers"]
    return m


@covers("MS-MQSD", "2.2.3")
def test_local_site_reply_example_fields():
    """The first section 4 reply (the client's own site) has no RespondingSiteID and size 0 (E-027)."""
    check_reply(REPLY_LOCAL_SITE, EXPECTED_REPLY_LOCAL_SITE)


@covers("MS-MQSD", "2.2.3")
def test_other_site_reply_example_fields():
    """The second section 4 reply lists one server, nt4pec, over IP only, in 18 bytes."""
    check_reply(REPLY_OTHER_SITE, EXPECTED_REPLY_OTHER_SITE)


@covers("MS-MQSD", "2.2.3")
def test_example_replies_answer_the_example_request():
    """Both section 4 replies carry the request's RequestID as their CorrelationID."""
    request = mqsd.decode(CLIENT_REQUEST)
    for reply in (REPLY_LOCAL_SITE, REPLY_OTHER_SITE):
        assert mqsd.decode(reply).correlation_id == request.request_id


@covers("MS-MQSD", "2.2.2")
@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_examples_reencode_byte_for_byte(name):
    """encode(decode(b)) == b for every section 4 packet, in both modes."""
    data = EXAMPLES[name]
    assert mqsd.encode(mqsd.decode(data)) == data
    assert mqsd.decode(data, lenient=True) == mqsd.decode(data)


# --------------------------------------------------------------------------- round trips


@covers("MS-MQSD", "2.2.1")
@given(sm.packet_headers)
def test_header_round_trips(header):
    """decode_header(encode_header(h)) == h for both packet types."""
    data = mqsd.encode_header(header.type)
    assert len(data) == 4
    assert mqsd.decode_header(data) == header


@covers("MS-MQSD", "2.2.2")
@given(sm.client_requests)
def test_client_request_round_trips(msg):
    """A request re-decodes to itself and has the length of its form (52, or 56 + 4n)."""
    data = mqsd.encode_client_request(msg)
    n = len(msg.ipx_network_numbers)
    assert len(data) == (56 + 4 * n if n else 52)
    assert mqsd.decode_client_request(data) == msg
    assert mqsd.encode(mqsd.decode(data)) == data


@covers("MS-MQSD", "2.2.3")
@given(sm.server_arrays)
def test_server_array_round_trips(servers):
    """A DirectoryServiceServerArray re-decodes to the same servers and ends with EndList."""
    data = mqsd.encode_server_array(servers)
    assert data.endswith(b"\x00\x00")
    assert mqsd.decode_server_array(data) == servers


@covers("MS-MQSD", "2.2.3")
@given(sm.server_replies())
def test_server_reply_round_trips(msg):
    """A reply re-decodes to itself; its size field counts the array bytes only."""
    data = mqsd.encode_server_reply(msg)
    assert struct.unpack_from("<I", data, 28)[0] == msg.directory_service_server_size
    assert len(data) == 32 + 16 * len(msg.connected_networks) + (
        16 + msg.directory_service_server_size if msg.servers else 0
    )
    assert mqsd.decode_server_reply(data) == msg
    assert mqsd.encode(mqsd.decode(data)) == data


@covers("MS-MQSD", "2.2.2")
@covers("MS-MQSD", "2.2.3")
@given(sm.messages())
def test_json_round_trip(msg):
    """Every message survives to_json -> json text -> from_json unchanged."""
    data = json.loads(json.dumps(to_json(msg)))
    assert data["message"] == type(msg).__name__
    assert from_json(data, mqsd.MESSAGE_TYPES) == msg


@covers("MS-MQSD", "2.2.1")
@settings(max_examples=300)
@given(st.binary(max_size=120), st.booleans())
def test_arbitrary_bytes_raise_only_decode_error(data, lenient):
    """decode never raises anything but DecodeError, however wrong the bytes."""
    try:
        mqsd.decode(data, lenient=lenient)
    except DecodeError:
        pass


@st.composite
def mutated_packets(draw):
    data = bytearray(draw(sm.packets()))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["set", "cut", "grow"]))
        if kind == "set" and data:
            value = draw(st.sampled_from([0, 1, 2, 0x2C, 0x30, 0x31, 0xFF]))
            data[draw(st.integers(0, len(data) - 1))] = value
        elif kind == "cut":
            del data[draw(st.integers(0, len(data))) :]
        else:
            data += draw(st.binary(min_size=1, max_size=9))
    return bytes(data)


@covers("MS-MQSD", "2.2.3")
@settings(max_examples=400)
@given(mutated_packets())
def test_decoded_values_pass_the_model_validators(data):
    """Whatever strict decoding accepts is canonical and a valid model value (the validators agree)."""
    for lenient in (False, True):
        try:
            msg = mqsd.decode(data, lenient=lenient)
        except DecodeError:
            continue
        assert attrs.evolve(msg) == msg  # re-runs every validator on the decoded fields
        if not lenient:
            assert mqsd.encode(msg) == data
        else:
            assert mqsd.decode(mqsd.encode(msg)) == msg


# --------------------------------------------------------------------------- header (2.2.1)


@covers("MS-MQSD", "2.2.1")
@pytest.mark.parametrize(
    ("packet", "message"),
    [(CLIENT_REQUEST, "TopologyClientRequest"), (REPLY_LOCAL_SITE, "TopologyServerReply")],
)
def test_header_version_must_be_zero(packet, message):
    """A non-zero Version is refused at offset 0 in either packet (E-020)."""
    err = refused(b"\x01" + packet[1:])
    assert (err.field, err.offset, err.section) == ("TopologyPacketHeader.Version", 0, H1)
    assert err.context == (message,)
    assert err.path == f"{message}.TopologyPacketHeader.Version"


@covers("MS-MQSD", "2.2.1")
@pytest.mark.parametrize("packet", [CLIENT_REQUEST, REPLY_OTHER_SITE])
def test_header_reserved_must_be_zero(packet):
    """A non-zero Reserved is refused at offset 2."""
    err = refused(packet[:2] + b"\x00\x80" + packet[4:])
    assert (err.field, err.offset, err.section) == ("TopologyPacketHeader.Reserved", 2, H1)


@covers("MS-MQSD", "2.2.1")
@pytest.mark.parametrize("ptype", [0x00, 0x03, 0xFF])
@pytest.mark.parametrize("lenient", [False, True])
def test_header_type_must_be_1_or_2(ptype, lenient):
    """A Type other than 0x01 or 0x02 is refused at offset 1, leniently too."""
    err = refused(b"\x00" + bytes([ptype]) + CLIENT_REQUEST[2:], lenient=lenient)
    assert (err.field, err.offset, err.section) == ("TopologyPacketHeader.Type", 1, H1)


@covers("MS-MQSD", "2.2.1")
def test_header_type_must_match_the_decoder():
    """decode_client_request refuses a reply, and decode_server_reply a request, at Type."""
    err = refused(REPLY_LOCAL_SITE, decoder=mqsd.decode_client_request)
    assert (err.path, err.offset) == ("TopologyClientRequest.TopologyPacketHeader.Type", 1)
    err = refused(CLIENT_REQUEST, decoder=mqsd.decode_server_reply)
    assert (err.path, err.offset) == ("TopologyServerReply.TopologyPacketHeader.Type", 1)


@covers("MS-MQSD", "2.2.1")
@pytest.mark.parametrize(("data", "field", "offset"), [
    (b"", "TopologyPacketHeader.Version", 0),
    (b"\x00", "TopologyPacketHeader.Type", 1),
    (b"\x00\x02\x00", "TopologyPacketHeader.Reserved", 2),
])
def test_truncated_header_is_refused(data, field, offset):
    """A packet shorter than its header names the header field that is cut."""
    err = refused(data)
    assert (err.field, err.offset, err.section) == (field, offset, H1)


@covers("MS-MQSD", "2.2.1")
def test_decode_header_refuses_trailing_bytes():
    """decode_header takes exactly 4 bytes."""
    err = refused(CLIENT_REQUEST[:5], decoder=mqsd.decode_header)
    assert (err.field, err.offset, err.section) == ("TopologyPacketHeader", 4, H1)


# --------------------------------------------------------------------------- request (2.2.2)


@covers("MS-MQSD", "2.2.2")
@pytest.mark.parametrize(("length", "field", "offset"), [
    (4, "EnterpriseID", 4), (19, "EnterpriseID", 4), (20, "RequestID", 20), (51, "SiteID", 36),
])
def test_request_truncated_fields_are_named(length, field, offset):
    """A request cut inside its GUIDs names the GUID that is cut."""
    err = refused(CLIENT_REQUEST[:length])
    assert (err.field, err.offset, err.section) == (f"TopologyClientRequest.{field}", offset, H2)


@covers("MS-MQSD", "2.2.2")
@pytest.mark.parametrize("count", [0, 33, 0xFFFFFFFF])
def test_request_ipx_count_outside_1_to_32_is_refused(count):
    """IPXNetworkCount MUST be in the range 1 to 32, inclusive."""
    err = refused(request_bytes(struct.pack("<I", count) + bytes(4 * 33)))
    assert (err.field, err.offset, err.section) == ("TopologyClientRequest.IPXNetworkCount", 52, H2)
    assert "range 1 to 32" in err.reason


@covers("MS-MQSD", "2.2.2")
def test_request_ipx_count_beyond_bytes_is_refused():
    """An IPXNetworkCount larger than the entries present is refused at the count."""
    err = refused(request_bytes(struct.pack("<III", 3, 7, 8)))
    assert (err.field, err.offset, err.section) == ("TopologyClientRequest.IPXNetworkCount", 52, H2)
    assert err.reason == "3 IPX network numbers declared, bytes for 2"


@covers("MS-MQSD", "2.2.2")
def test_request_trailing_bytes_after_ipx_array_are_refused():
    """Bytes after the IPXNetworkCount entries are refused where they start."""
    err = refused(request_bytes(struct.pack("<III", 2, 7, 8) + b"\x01"))
    assert (err.field, err.offset, err.section) == ("TopologyClientRequest", 64, H2)


@covers("MS-MQSD", "2.2.2")
@pytest.mark.parametrize("extra", range(1, 8))
def test_request_partial_ipx_tail_is_refused(extra):
    """A strict decoder refuses 1..7 bytes after the IP form: a cut IPX count or array (E-021)."""
    err = refused(request_bytes(b"\x01" + bytes(extra - 1)))
    assert (err.field, err.offset, err.section) == ("TopologyClientRequest.IPXNetworkCount", 52, H2)


@covers("MS-MQSD", "2.2.2")
def test_request_ipx_form_is_decoded():
    """A 60-byte request with IPXNetworkCount 1 is the IPX form with one network number."""
    m = mqsd.decode(request_bytes(struct.pack("<II", 1, 0x12345678)))
    assert m.is_ipx and m.ipx_network_numbers == (0x12345678,)


# --------------------------------------------------------------------------- reply (2.2.3)


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize(("length", "field", "offset"), [
    (4, "CorrelationID", 4), (22, "ConnectedNetworkCount", 20),
    (24, "ConnectedNetworkMask", 24), (31, "DirectoryServiceServerSize", 28),
])
def test_reply_truncated_fixed_fields_are_named(length, field, offset):
    """A reply cut inside its fixed fields names the field that is cut."""
    err = refused(REPLY_LOCAL_SITE[:length])
    assert (err.field, err.offset, err.section) == (f"TopologyServerReply.{field}", offset, H3)


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize("count", [0, 33, 0xFFFFFFFF])
def test_reply_count_outside_1_to_32_is_refused(count):
    """ConnectedNetworkCount MUST be in the range 1 to 32, inclusive (E-023)."""
    err = refused(reply_bytes(count=count, networks=1))
    assert (err.field, err.offset, err.section) == ("TopologyServerReply.ConnectedNetworkCount", 20, H3)


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize(("count", "mask"), [(1, 0x3), (2, 0x1), (3, 0xFFFFFFFF)])
def test_reply_mask_popcount_must_equal_count(count, mask):
    """A non-zero mask MUST have ConnectedNetworkCount bits set (E-022)."""
    err = refused(reply_bytes(count=count, mask=mask))
    assert (err.field, err.offset, err.section) == ("TopologyServerReply.ConnectedNetworkMask", 24, H3)


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize(("count", "mask"), [(1, 0x80000000), (1, 0x1), (2, 0x00010001), (32, 0xFFFFFFFF)])
def test_reply_mask_any_bits_with_the_right_count_are_accepted(count, mask):
    """Any IPX mask with the right number of bits decodes and re-encodes unchanged (E-022)."""
    data = reply_bytes(count=count, mask=mask)
    assert mqsd.decode(data).connected_network_mask == mask
    assert mqsd.encode(mqsd.decode(data)) == data


@covers("MS-MQSD", "2.2.3")
def test_reply_odd_server_size_is_refused():
    """A DirectoryServiceServerSize that is not a whole number of WCHARs is refused at the size."""
    err = refused(reply_bytes(array=wchars("10ab\x00") + b"\x00", size=11))
    assert (err.field, err.offset, err.section) == ("TopologyServerReply.DirectoryServiceServerSize", 28, H3)


@covers("MS-MQSD", "2.2.3")
def test_reply_connected_network_array_too_short_is_refused():
    """Fewer ConnectedNetworkArray GUIDs than ConnectedNetworkCount is refused at the count."""
    err = refused(reply_bytes(count=3, networks=2))
    assert (err.field, err.offset, err.reason) == (
        "TopologyServerReply.ConnectedNetworkCount", 20, "3 connected network IDs declared, bytes for 2",
    )


@covers("MS-MQSD", "2.2.3")
def test_reply_trailing_bytes_after_local_site_reply_are_refused():
    """With DirectoryServiceServerSize 0, nothing (no RespondingSiteID) may follow the networks."""
    err = refused(REPLY_LOCAL_SITE + G.bytes_le)
    assert (err.field, err.offset, err.section) == ("TopologyServerReply", 48, H3)
    assert "MUST NOT be present" in err.reason


@covers("MS-MQSD", "2.2.3")
def test_reply_missing_responding_site_is_refused():
    """A non-zero DirectoryServiceServerSize needs RespondingSiteID (E-024)."""
    err = refused(REPLY_OTHER_SITE[:56])
    assert (err.field, err.offset, err.section) == ("TopologyServerReply.RespondingSiteID", 48, H3)


@covers("MS-MQSD", "2.2.3")
def test_reply_server_size_beyond_bytes_is_refused():
    """A DirectoryServiceServerSize larger than the bytes left is refused at the size."""
    err = refused(REPLY_OTHER_SITE[:28] + struct.pack("<I", 20) + REPLY_OTHER_SITE[32:])
    assert (err.field, err.offset, err.section) == ("TopologyServerReply.DirectoryServiceServerSize", 28, H3)
    assert err.reason == "20 bytes of DirectoryServiceServerArray declared, 18 left"


@covers("MS-MQSD", "2.2.3")
def test_reply_trailing_bytes_after_server_array_are_refused():
    """Bytes after DirectoryServiceServerSize bytes of array are refused where they start."""
    err = refused(REPLY_OTHER_SITE + b"\x00\x00")
    assert (err.field, err.offset, err.section) == ("TopologyServerReply", 82, H3)


# --------------------------------------------------------------------------- server list ABNF (2.2.3)


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize(("text", "index", "field", "offset"), [
    ("20a\x00", 0, "Entry.IP", 64),
    ("1xa\x00", 0, "Entry.IPX", 66),
    ("10a,1xb\x00", 1, "Entry.IPX", 64 + 8 + 2),
    ("10a,,10b\x00", 1, "Entry.IP", 64 + 8),
    ("10a,\x00", 1, "Entry.IP", 64 + 8),
    ("10\x00", 0, "Entry.NameChar", 68),
    ("\x00", 0, "Entry.IP", 64),
])
def test_server_array_entry_must_be_ip_ipx_and_a_name(text, index, field, offset):
    """Each Entry is IP ("0"/"1"), IPX ("0"/"1") and 1*NameChar; errors name the entry and its offset."""
    err = refused(reply_bytes(array=wchars(text)))
    assert (err.field, err.offset, err.section) == (field, offset, H3)
    assert err.path == f"TopologyServerReply.DirectoryServiceServerArray[{index}].{field}"


@covers("MS-MQSD", "2.2.3")
def test_server_array_surrogate_pair_offsets_count_code_units():
    """Offsets after a name holding a surrogate pair count 2-byte code units, not characters."""
    err = refused(reply_bytes(array=wchars("10\U0001f600,1zb\x00")))
    # "1" "0" U+D83D U+DE00 is 4 code units (8 bytes), "," 2 more; then IP, then IPX
    assert (err.field, err.offset) == ("Entry.IPX", 64 + 8 + 2 + 2)


@covers("MS-MQSD", "2.2.3")
def test_server_array_without_endlist_is_refused():
    """An array that does not end with EndList (0x0000) is refused at its end."""
    err = refused(reply_bytes(array=wchars("10ab")))
    assert (err.path, err.offset, err.section) == (f"{ARRAY}.EndList", 72, H3)


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize("lenient", [False, True])
def test_server_array_bytes_after_endlist_are_refused(lenient):
    """A second 0x0000 inside the array is not a separator: the bytes after EndList are refused (E-026)."""
    err = refused(reply_bytes(array=wchars("10a\x0010b\x00")), lenient=lenient)
    assert (err.path, err.offset, err.section) == (f"{ARRAY}.EndList", 72, H3)


def abnf_namechars() -> set[int]:
    """NameChar expanded from R1..R6 and X1..X4 of 2.2.3, octets taken low byte first."""
    r1, r2, r3 = range(0x01, 0x2C), range(0x2C, 0x2D), range(0x00, 0x100)
    r4, r5, r6 = range(0x01, 0x100), range(0x2D, 0x100), range(0x00, 0x01)
    xs = [{a | b << 8 for a in lo for b in hi} for lo, hi in ((r1, r3), (r2, r4), (r5, r3), (r6, r4))]
    assert sum(len(x) for x in xs) == len(set().union(*xs))  # the four alternatives are disjoint
    return set().union(*xs)


@covers("MS-MQSD", "2.2.3")
def test_abnf_namechar_is_every_code_unit_but_nul_and_comma():
    """NameChar is every code unit but 0x0000 and 0x002C, and the decoder accepts them all (E-025)."""
    allowed = abnf_namechars()
    assert set(range(0x10000)) - allowed == {0x0000, 0x002C}
    units = sorted(allowed)
    name_bytes = struct.pack(f"<{len(units)}H", *units)
    reply = mqsd.decode(reply_bytes(array=wchars("11") + name_bytes + b"\x00\x00"))
    (server,) = reply.servers
    assert wchars(server.name) == name_bytes and server.ip and server.ipx
    for bad in (b"\x00\x00", b",\x00"):
        with pytest.raises(DecodeError):
            mqsd.decode(reply_bytes(array=wchars("11a") + bad + wchars("b\x00")))


@covers("MS-MQSD", "2.2.3")
def test_server_array_decodes_several_entries_and_flags():
    """A three-entry list gives three servers with their IP/IPX flags, in order."""
    servers = mqsd.decode_server_array(wchars("10a,01bb,11c c,00d\x00"))
    assert [(s.name, s.ip, s.ipx) for s in servers] == [
        ("a", True, False), ("bb", False, True), ("c c", True, True), ("d", False, False),
    ]


# --------------------------------------------------------------------------- leniency


@covers("MS-MQSD", "2.2.1")
@given(sm.client_requests, sm.any_versions, sm.any_reserved)
def test_lenient_request_ignores_version_and_reserved(msg, version, reserved):
    """"MQSD servers MUST ignore" Version and Reserved: lenient decoding of a request skips them."""
    header = mqsd.encode_header(mqsd.PacketType.CLIENT_REQUEST, version=version, reserved=reserved)
    data = header + mqsd.encode(msg)[4:]
    assert mqsd.decode(data, lenient=True) == msg


@covers("MS-MQSD", "2.2.1")
@given(sm.server_replies(), sm.any_versions, sm.any_reserved)
def test_lenient_reply_ignores_version_and_reserved(msg, version, reserved):
    """No MUST constrains a reply's Version and Reserved, so lenient decoding skips them (E-020)."""
    header = mqsd.encode_header(mqsd.PacketType.SERVER_REPLY, version=version, reserved=reserved)
    data = header + mqsd.encode(msg)[4:]
    assert mqsd.decode(data, lenient=True) == msg


@covers("MS-MQSD", "2.2.2")
@pytest.mark.parametrize("extra", range(1, 8))
def test_lenient_request_ignores_a_partial_ipx_tail(extra):
    """Under 60 bytes the IPX fields "are considered as not present and MUST be ignored" (3.2.5.1)."""
    assert mqsd.decode(request_bytes(b"\x05" + bytes(extra - 1)), lenient=True) == mqsd.decode(CLIENT_REQUEST)


@covers("MS-MQSD", "2.2.2")
@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize(("data", "field"), [
    (request_bytes(struct.pack("<II", 0, 1)), "TopologyClientRequest.IPXNetworkCount"),
    (request_bytes(struct.pack("<II", 2, 1)), "TopologyClientRequest.IPXNetworkCount"),
    (request_bytes(struct.pack("<II", 1, 1) + b"\x00"), "TopologyClientRequest"),
    (CLIENT_REQUEST[:51], "TopologyClientRequest.SiteID"),
    (reply_bytes(count=0, networks=1), "TopologyServerReply.ConnectedNetworkCount"),
    (reply_bytes(count=1, mask=3), "TopologyServerReply.ConnectedNetworkMask"),
    (reply_bytes(array=wchars("21a\x00")), "Entry.IP"),
    (REPLY_OTHER_SITE + b"\x00", "TopologyServerReply"),
])
def test_lenient_keeps_every_other_rule(data, field):
    """Leniency covers only the header and the short IPX tail: every other rule still applies."""
    assert refused(data, lenient=True).field == field


# --------------------------------------------------------------------------- the model


@covers("MS-MQSD", "2.2.3")
@pytest.mark.parametrize("build", [
    lambda: mqsd.TopologyClientRequest(G, G, G, range(33)),
    lambda: mqsd.TopologyClientRequest(G, G, G, (1 << 32,)),
    lambda: mqsd.TopologyClientRequest(G, "not a guid", G),
    lambda: mqsd.TopologyServerReply(G, ()),
    lambda: mqsd.TopologyServerReply(G, (G,) * 33),
    lambda: mqsd.TopologyServerReply(G, (G,), 0b11),
    lambda: mqsd.TopologyServerReply(G, (G,), 0, G, ()),
    lambda: mqsd.TopologyServerReply(G, (G,), 0, None, (mqsd.DirectoryServiceServer("a"),)),
    lambda: mqsd.DirectoryServiceServer(""),
    lambda: mqsd.DirectoryServiceServer("a,b"),
    lambda: mqsd.DirectoryServiceServer("a\x00b"),
    lambda: mqsd.DirectoryServiceServer("\ud83d\ude00"),
    lambda: mqsd.DirectoryServiceServer("a", ip=1),
    lambda: mqsd.TopologyPacketHeader(256, 1, 0),
])
def test_model_refuses_unencodable_values(build):
    """A value that has no conformant encoding cannot be built (ModelError)."""
    with pytest.raises(ModelError):
        build()


@covers("MS-MQSD", "2.2.3")
def test_encode_refuses_non_messages_and_empty_arrays():
    """encode takes only the two messages; an empty server array has no encoding."""
    with pytest.raises(ModelError):
        mqsd.encode(mqsd.TopologyPacketHeader(0, 1, 0))
    with pytest.raises(ModelError):
        mqsd.encode_server_array(())


@covers("MS-MQSD", "2.2.2")
def test_message_types_name_the_messages():
    """MESSAGE_TYPES maps each structure name to its model type."""
    assert {name: t.__name__ for name, t in mqsd.MESSAGE_TYPES.items()} == {
        "TopologyClientRequest": "TopologyClientRequest", "TopologyServerReply": "TopologyServerReply",
    }


@covers("MS-MQSD", "2.2.2")
def test_decode_accepts_bytearray_and_memoryview():
    """decode copies non-bytes buffers and decodes them like bytes."""
    expected = mqsd.decode(REPLY_OTHER_SITE)
    assert mqsd.decode(bytearray(REPLY_OTHER_SITE)) == expected
    assert mqsd.decode(memoryview(REPLY_OTHER_SITE)) == expected
