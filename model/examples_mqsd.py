"""The three packets of [MS-MQSD] section 4 (Protocol Examples), as bytes, with what they say.

Section 4 shows one exchange "sent over TCP/IP" (UDP, see E-027): a TopologyClientRequest and
two TopologyServerReply packets answering it. The bytes below are the hex dumps of section 4
copied byte for byte; the plain-text rendering of the document prints a few hex digits as
look-alike letters (Greek "Α"/"Β", Cyrillic "В"/"Е"/"С"/"З") and splits "4F" and "2D" in two,
which ``tests/model/test_mqsd.py::test_example_constants_match_the_spec_hex_dumps`` undoes
when it checks these constants against the text.

The ``EXPECTED_*`` dictionaries are the field values read by hand from the dumps, following
the field order of 2.2.1-2.2.3 and the [MS-DTYP] 2.3.4 GUID layout (Data1, Data2, Data3
little-endian): they are written here independently of the decoder, which the golden tests
check against them.
"""

from __future__ import annotations

#: MS-MQSD 4, "The TopologyClientRequest data packet has the following content." (offsets
#: 0x00-0x33, 52 bytes: the IP form, no IPXNetworkCount)
CLIENT_REQUEST = bytes.fromhex(
    "00 01 00 00 61 BA EA E6 C6 D1 DB 11 BA AC 00 03"
    "FF 4E 2D 22 03 A1 91 F2 3C E3 4F AB A9 30 BE 3A"
    "33 E4 32 DD F6 1B C5 DC AD D4 43 45 87 39 71 56"
    "8E 8F 91 28"
)

#: MS-MQSD 4, "The first TopologyServerReply data packet is from the local site server and
#: does not contain a list of MSMQ Directory Service servers." (offsets 0x00-0x2F, 48 bytes)
REPLY_LOCAL_SITE = bytes.fromhex(
    "00 02 00 00 03 A1 91 F2 3C E3 4F AB A9 30 BE 3A"
    "33 E4 32 DD 01 00 00 00 00 00 00 00 00 00 00 00"
    "62 BA EA E6 C6 D1 DB 11 BA AC 00 03 FF 4E 2D 22"
)

#: MS-MQSD 4, "The second TopologyServerReply data packet is from a site server of which the
#: client is not a member and thus contains a list of MSMQ Directory Service servers"
#: (offsets 0x00-0x51, 82 bytes)
REPLY_OTHER_SITE = bytes.fromhex(
    "00 02 00 00 03 A1 91 F2 3C E3 4F AB A9 30 BE 3A"
    "33 E4 32 DD 01 00 00 00 00 00 00 00 12 00 00 00"
    "62 BA EA E6 C6 D1 DB 11 BA AC 00 03 FF 4E 2D 22"
    "60 BA EA E6 C6 D1 DB 11 BA AC 00 03 FF 4E 2D 22"
    "31 00 30 00 6E 00 74 00 34 00 70 00 65 00 63 00"
    "00 00"
)

#: every section 4 packet by a short name, in the order the section shows them
EXAMPLES: dict[str, bytes] = {
    "client_request": CLIENT_REQUEST,
    "reply_local_site": REPLY_LOCAL_SITE,
    "reply_other_site": REPLY_OTHER_SITE,
}

# The request: header 00 01 00 00 (Version 0, Type 0x01, Reserved 0), then three GUIDs.
EXPECTED_CLIENT_REQUEST = {
    "version": 0x00,
    "type": 0x01,
    "reserved": 0x0000,
    # 61 BA EA E6 | C6 D1 | DB 11 | BA AC | 00 03 FF 4E 2D 22
    "enterprise_id": "e6eaba61-d1c6-11db-baac-0003ff4e2d22",
    # 03 A1 91 F2 | 3C E3 | 4F AB | A9 30 | BE 3A 33 E4 32 DD
    "request_id": "f291a103-e33c-ab4f-a930-be3a33e432dd",
    # F6 1B C5 DC | AD D4 | 43 45 | 87 39 | 71 56 8E 8F 91 28
    "site_id": "dcc51bf6-d4ad-4543-8739-71568e8f9128",
    "ipx_network_numbers": (),
    "length": 52,
}

# Both replies: header 00 02 00 00, CorrelationID = the request's RequestID bytes,
# ConnectedNetworkCount 01 00 00 00, ConnectedNetworkMask 00 00 00 00 (IP).
EXPECTED_REPLY_LOCAL_SITE = {
    "version": 0x00,
    "type": 0x02,
    "reserved": 0x0000,
    "correlation_id": "f291a103-e33c-ab4f-a930-be3a33e432dd",
    "connected_network_count": 1,
    "connected_network_mask": 0x00000000,
    "directory_service_server_size": 0,
    # 62 BA EA E6 | C6 D1 | DB 11 | BA AC | 00 03 FF 4E 2D 22
    "connected_networks": ("e6eaba62-d1c6-11db-baac-0003ff4e2d22",),
    "responding_site_id": None,
    "servers": (),
    "length": 48,
}

EXPECTED_REPLY_OTHER_SITE = {
    "version": 0x00,
    "type": 0x02,
    "reserved": 0x0000,
    "correlation_id": "f291a103-e33c-ab4f-a930-be3a33e432dd",
    "connected_network_count": 1,
    "connected_network_mask": 0x00000000,
    # 12 00 00 00: 18 bytes = 9 WCHARs "1" "0" "n" "t" "4" "p" "e" "c" 0x0000
    "directory_service_server_size": 0x12,
    "connected_networks": ("e6eaba62-d1c6-11db-baac-0003ff4e2d22",),
    # 60 BA EA E6 | C6 D1 | DB 11 | BA AC | 00 03 FF 4E 2D 22
    "responding_site_id": "e6eaba60-d1c6-11db-baac-0003ff4e2d22",
    # "10nt4pec": IP supported ("1"), IPX not supported ("0"), name "nt4pec"
    "servers": (("nt4pec", True, False),),
    "length": 82,
}
