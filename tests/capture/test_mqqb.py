"""The minimal MQQB UserMessage codec: layout, round trips, and the errors bad packets give."""

from __future__ import annotations

import struct

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.capture import mqqb
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.capture.mqqb import (
    DirectQueue,
    MessageProperties,
    PrivateQueue,
    PrivateQueueId,
    PublicQueue,
    QueueType,
    SameAsAdmin,
    SecurityHeader,
    TransactionHeader,
    UserMessage,
    decode_user_message,
    encode_user_message,
)

QM = Guid.from_name("qm-1")
OTHER_QM = Guid.from_name("qm-2")
REPLICATION = DirectQueue("OS:dc1\\private$\\mqis_queue$")


def metasploit_message() -> bytes:
    """The appendix's worked vector (queuejumper ``message_normal``), rebuilt field by field."""
    srmp = struct.pack("<HHI", 0, 0, 0x21B)
    trailer = srmp + bytes(0x964 - 0xE4 - len(srmp))
    return encode_user_message(
        UserMessage(
            destination=DirectQueue("http://192.168.56.113/msmq/private$/queuejumper"),
            base_flags=0x1003,
            user_flags=0x02000001,  # RC = 1, AH = 1; DQ and MP follow from the structure
            properties=MessageProperties(label="poc"),
            trailer=trailer,
        )
    )


def test_worked_vector_offsets_match_the_appendix():
    """Every offset the appendix's table gives for the Metasploit vector holds for the rebuilt packet."""
    data = metasploit_message()
    assert data[:8] == b"\x10\x00\x03\x10LIOR"
    assert struct.unpack_from("<I", data, 8)[0] == 0x964 == len(data)
    assert struct.unpack_from("<I", data, 0x3C)[0] == 0x02201C01
    assert struct.unpack_from("<H", data, 0x40)[0] == 0x60
    assert data[0xA4 + 1] == 4  # LabelLength of "poc" with its NUL
    assert struct.unpack_from("<I", data, 0xA4 + 32)[0] == 0  # MessageSize
    assert struct.unpack_from("<HHI", data, 0xE4) == (0, 0, 0x21B)
    assert data[0xEB] == 0x00  # the DataLength byte the exploit flips


def test_worked_vector_decodes_and_reencodes():
    """The worked vector decodes to its direct destination, label and empty body, and re-encodes byte for byte."""
    data = metasploit_message()
    msg = decode_user_message(data)
    assert msg.destination == DirectQueue("http://192.168.56.113/msmq/private$/queuejumper")
    assert msg.body == b"" and msg.properties.label == "poc"
    assert msg.base_flags == 0x1003 and msg.user_flags == 0x02000001
    assert len(msg.trailer) == 0x964 - 0xE4
    assert encode_user_message(msg) == data


@pytest.mark.parametrize("name_length", range(1, 9))
def test_direct_name_is_padded_to_four_bytes_from_the_user_header(name_length):
    """Whatever the direct name's length, the MessagePropertiesHeader starts 4-aligned after it."""
    name = "OS:m\\" + "q" * name_length
    data = mqqb.build_user_message(DirectQueue(name), b"xyz")
    count = 2 * (len(name) + 1)
    mph = 16 + 48 + 2 + count
    mph += -(mph - 16) % 4
    assert mph % 4 == 0
    assert struct.unpack_from("<I", data, mph + 32)[0] == 3  # MessageSize
    assert decode_user_message(data).destination.name == name


def test_body_offset_is_header_plus_label_plus_extension():
    """Body offset = MPH start + 56 + 2*LabelLength + ExtensionSize, with no alignment in between."""
    props = MessageProperties(label="ab", extension=b"\x01\x02\x03", allocation_body_size=4)
    data = encode_user_message(UserMessage(PublicQueue(QM), b"BODY", properties=props))
    mph = 16 + 48 + 16
    assert data[mph + 56 + 2 * 3 + 3 :][:4] == b"BODY"
    assert decode_user_message(data).body == b"BODY"


def every_header_message() -> UserMessage:
    return UserMessage(
        destination=PrivateQueue(QM, 1),
        body=b"\x00\x01payload",
        admin=PrivateQueueId(QueueType.PRIVATE_AT_SOURCE, 7),
        response=PrivateQueueId(QueueType.PRIVATE_AT_ADMIN, 9),
        source_qm=OTHER_QM,
        qm_address=QM,
        time_to_reach_queue=300,
        sent_time=1_141_966_310,
        message_id=2286,
        base_flags=0x0105,
        user_flags=0x00000021,
        connector_type=Guid.from_name("connector"),
        transaction=TransactionHeader(1, 2**40, 5, 4, Guid.from_name("cg")),
        security=SecurityHeader(0x2, b"\x01" * 16, b"", b"sig", b"cert12", b"p"),
        properties=MessageProperties(
            flags=1, message_class=0, correlation_id=bytes(range(20)), label="label", extension=b"ext",
            allocation_body_size=64, hash_algorithm=0x8004,
        ),
        trailer=b"\xaa" * 12,
        session_header=bytes(range(16)),
    )


def test_every_optional_header_round_trips():
    """A message with admin, response, connector, transaction, security, trailer and session header round-trips."""
    msg = every_header_message()
    data = encode_user_message(msg)
    assert decode_user_message(data) == msg
    assert encode_user_message(decode_user_message(data)) == data
    assert data[2] & mqqb.BF_SESSION and data.endswith(bytes(range(16)))


def test_response_same_as_admin_takes_no_bytes():
    """RQ = 1 means the response queue is the admin queue and adds nothing to the packet."""
    with_rq = mqqb.build_user_message(REPLICATION, b"b", admin=PrivateQueue(QM, 1), response=SameAsAdmin())
    without = mqqb.build_user_message(REPLICATION, b"b", admin=PrivateQueue(QM, 1))
    assert len(with_rq) == len(without)
    msg = decode_user_message(with_rq)
    assert msg.response == SameAsAdmin()
    assert msg.format_name("response") == f"PRIVATE={QM}\\1"


def test_no_label_and_an_empty_label_differ_on_the_wire():
    """No label is LabelLength 0; an empty label is a lone NUL (LabelLength 1); both round-trip."""
    mph = 16 + 48 + 16
    for label, length in ((None, 0), ("", 1), ("ab", 3)):
        data = encode_user_message(UserMessage(PublicQueue(QM), b"b", properties=MessageProperties(label=label)))
        assert data[mph + 1] == length
        assert decode_user_message(data).properties.label == label


def test_format_names_render_every_queue_type():
    """Each queue type renders as a format name string, private ids resolved against the header's GUIDs."""
    msg = UserMessage(
        PrivateQueueId(QueueType.PRIVATE_AT_DESTINATION, 3),
        admin=PrivateQueueId(QueueType.PRIVATE_AT_SOURCE, 0x1A),
        response=PublicQueue(OTHER_QM),
        source_qm=OTHER_QM,
        qm_address=QM,
    )
    assert msg.format_name() == f"PRIVATE={QM}\\3"
    assert msg.format_name("admin") == f"PRIVATE={OTHER_QM}\\1a"
    assert msg.format_name("response") == f"PUBLIC={OTHER_QM}"
    assert UserMessage(REPLICATION).format_name() == "DIRECT=OS:dc1\\private$\\mqis_queue$"
    assert UserMessage(DirectQueue("DIRECT=TCP:10.0.0.1\\q")).format_name() == "DIRECT=TCP:10.0.0.1\\q"


def test_build_user_message_strips_the_direct_prefix():
    """A DIRECT= format name string given to the builder goes on the wire without its prefix."""
    data = mqqb.build_user_message("direct=OS:dc1\\private$\\notify_queue$", b"x", label="l")
    msg = decode_user_message(data)
    assert msg.destination.name == "OS:dc1\\private$\\notify_queue$"
    assert msg.properties.allocation_body_size == 1 and msg.properties.label == "l"


def _patch(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


GOOD = mqqb.build_user_message(REPLICATION, b"hello", label="x")
FLAGS_AT = 16 + 44


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (b"\x11" + GOOD[1:], "BaseHeader.VersionNumber"),
        (GOOD[:4] + b"LIOX" + GOOD[8:], "BaseHeader.Signature"),
        (_patch(GOOD, 8, "<I", 12), "BaseHeader.PacketSize"),
        (_patch(GOOD, 8, "<I", len(GOOD) + 4), "BaseHeader.PacketSize"),
        (_patch(GOOD, 2, "<H", 0x000B), "BaseHeader.Flags"),
        (_patch(GOOD, FLAGS_AT, "<I", 0x1C00), "UserHeader.Flags.MP"),
        (_patch(GOOD, FLAGS_AT, "<I", 0x200000 | 1 << 10), "UserHeader.Flags.DQ"),
        (_patch(GOOD, FLAGS_AT, "<I", 0x200000 | 7 << 10 | 4 << 13), "UserHeader.Flags.AQ"),
        (_patch(GOOD, FLAGS_AT, "<I", 0x200000 | 7 << 10 | 1 << 16), "UserHeader.Flags.RQ"),
        (_patch(GOOD, 64, "<H", 7), "UserHeader.DestinationQueue.Count"),
        (_patch(GOOD, 64, "<H", 0), "UserHeader.DestinationQueue.Count"),
        (_patch(GOOD, 64, "<H", 4), "UserHeader.DestinationQueue.DirectFormatName"),
    ],
)
def test_bad_packets_name_the_field(bad, field):
    """Each broken header field gives a DecodeError naming that field."""
    with pytest.raises(DecodeError) as err:
        decode_user_message(bad)
    assert err.value.field == field


def test_body_longer_than_the_packet_is_refused():
    """A MessageSize running past PacketSize is an error naming MessageSize."""
    mph = len(GOOD) - 8 - 56 - 4  # body "hello" + 3 padding, label "x" (4 bytes)
    bad = _patch(GOOD, mph + 32, "<I", 9)
    with pytest.raises(DecodeError, match="9 body bytes declared") as err:
        decode_user_message(bad)
    assert err.value.field == "MessagePropertiesHeader.MessageSize"


def test_unterminated_label_is_refused():
    """A label whose last WCHAR is not NUL is an error naming the label."""
    mph = len(GOOD) - 8 - 56 - 4
    bad = bytearray(GOOD)
    bad[mph + 56 + 2 : mph + 56 + 4] = b"y\x00"
    with pytest.raises(DecodeError) as err:
        decode_user_message(bytes(bad))
    assert err.value.field == "MessagePropertiesHeader.Label"


def test_every_truncation_raises_only_decode_error():
    """Every prefix of a full-featured packet fails with DecodeError, whether or not PacketSize agrees."""
    msg = attrs.evolve(every_header_message(), trailer=b"", session_header=None)
    data = encode_user_message(msg)
    body_end = data.index(msg.body) + len(msg.body)
    for n in range(len(data)):
        with pytest.raises(DecodeError):
            decode_user_message(data[:n])  # PacketSize says more than there is
        if 12 <= n < body_end:
            with pytest.raises(DecodeError):  # PacketSize agrees: the structure runs out
                decode_user_message(_patch(data[:n], 8, "<I", max(n, 16)))


def test_model_refuses_values_the_wire_cannot_carry():
    """Flags the codec derives, impossible queue types and a short session header are model errors."""
    with pytest.raises(ModelError):
        UserMessage(REPLICATION, base_flags=mqqb.BF_INTERNAL)
    with pytest.raises(ModelError):
        UserMessage(REPLICATION, user_flags=mqqb.UF_TRANSACTION)
    with pytest.raises(ModelError):
        UserMessage(PrivateQueueId(QueueType.PRIVATE_AT_SOURCE, 1))
    with pytest.raises(ModelError):
        UserMessage(REPLICATION, admin=PrivateQueueId(QueueType.PRIVATE_AT_ADMIN, 1))
    with pytest.raises(ModelError):
        UserMessage(REPLICATION, session_header=b"short")
    with pytest.raises(ModelError):
        PrivateQueueId(QueueType.PUBLIC, 1)
    with pytest.raises(ModelError):
        TransactionHeader(flags=1)
    with pytest.raises(ModelError):
        DirectQueue("a\x00b")


def test_split_packets_frames_a_stream_and_stops_at_a_cut_packet():
    """Internal, user and session-header packets are framed in order; a cut last packet is not yielded."""
    internal = mqqb.encode_internal_packet(b"\x00" * 12)
    user = encode_user_message(every_header_message())
    stream = internal + user + GOOD + GOOD[:20]
    packets = list(mqqb.split_packets(stream))
    assert [p.offset for p in packets] == [0, len(internal), len(internal) + len(user)]
    assert [p.internal for p in packets] == [True, False, False]
    assert packets[1].data == user and packets[2].data == GOOD


def test_find_signature_skips_to_the_next_base_header():
    """find_signature returns the next offset holding version 0x10 and 'LIOR', or -1."""
    stream = b"LIOR" + b"\x00" * 5 + GOOD
    assert mqqb.find_signature(stream, 0) == 9
    assert mqqb.find_signature(stream, 10) == -1
    assert mqqb.find_signature(GOOD, 0) == 0


def queues(*, destination: bool = False) -> st.SearchStrategy:
    private_ids = st.builds(
        PrivateQueueId, st.sampled_from([3] if destination else [2, 3]), st.integers(0, 2**32 - 1)
    )
    guids = st.binary(min_size=16, max_size=16).map(Guid)
    return st.one_of(
        private_ids,
        st.builds(PublicQueue, guids),
        st.builds(PrivateQueue, guids, st.integers(0, 2**32 - 1)),
        st.builds(DirectQueue, st.text(st.characters(blacklist_characters="\x00"), max_size=40)),
    )


@st.composite
def user_messages(draw) -> UserMessage:
    admin = draw(st.none() | queues())
    response_choices = st.none() | queues()
    if admin is not None:
        response_choices = response_choices | st.just(SameAsAdmin())
    return UserMessage(
        destination=draw(queues(destination=True)),
        body=draw(st.binary(max_size=40)),
        admin=admin,
        response=draw(response_choices),
        base_flags=draw(st.integers(0, 0xFFFF).map(lambda f: f & ~(mqqb.BF_INTERNAL | mqqb.BF_SESSION))),
        user_flags=draw(st.integers(0, 2**32 - 1).map(lambda f: f & ~mqqb.UF_DERIVED)),
        connector_type=draw(st.none() | st.just(QM)),
        transaction=draw(st.none() | st.just(TransactionHeader(0, 1, 2, 3))),
        security=draw(st.none() | st.builds(SecurityHeader, st.integers(0, 0xFFFF), st.binary(max_size=9))),
        properties=MessageProperties(
            label=draw(st.none() | st.text(st.characters(blacklist_characters="\x00"), max_size=10)),
            extension=draw(st.binary(max_size=7)),
        ),
        trailer=draw(st.binary(max_size=8).map(lambda b: b + bytes(-len(b) % 4))),
        session_header=draw(st.none() | st.just(bytes(16))),
    )


@settings(max_examples=150)
@given(user_messages())
def test_decode_inverts_encode(msg):
    """decode(encode(m)) == m for any message the model accepts, and read_destination agrees."""
    data = encode_user_message(msg)
    assert decode_user_message(data) == msg
    assert mqqb.read_destination(data) == msg.destination


def test_a_decoded_message_has_every_field_its_class_declares():
    """decode_user_message builds its values without re-running the validators: it must still give every
    field of UserMessage and MessageProperties, and equal what the validating constructor builds."""
    packet = mqqb.build_user_message(REPLICATION, b"body", admin=PrivateQueue(QM, 1), label="l")
    message = mqqb.decode_user_message(packet)
    for value, cls in ((message, mqqb.UserMessage), (message.properties, mqqb.MessageProperties)):
        assert all(hasattr(value, f.name) for f in attrs.fields(cls))
    assert message == attrs.evolve(message) and hash(message) == hash(attrs.evolve(message))
