"""Codec vectors: bytes and what decoding them gives, for MC-MQDSRP, MS-MQSD and MS-MQCN.

Valid vectors pair bytes with the decoded message in the JSON form of
:mod:`mqspec.model.jsonform` (``expected.json``). They cover every message type of the three
codecs, every PROPID VARTYPE a property can have, the MS-MQSD section 4 packets byte for byte,
and the leniency a receiver is allowed (``lenient: true`` in the manifest). Invalid vectors pair
bytes with the error a strict decoder must report (``error.json``): the field, its absolute byte
offset, the document section whose MUST the bytes break, and mqspec's reason. There is one per
strictness rule of the codecs (the rules the tests in ``tests/model`` check), each built by
hand from a valid message with one field broken; :func:`invalid_vectors` checks that the
decoder still reports the field (and offset) each case was built to break.

Everything is built from fixed constructions and ``random.Random(seed)``: the same bytes every
run. :mod:`mqspec.vectors.codec_cases` holds the case tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from mqspec.model import mqcn, mqdsrp, mqsd
from mqspec.model.errors import DecodeError
from mqspec.model.jsonform import from_json, to_json

#: the decoders a vector names in its manifest: (protocol, entry) -> (decode, encode)
ENTRIES: dict[tuple[str, str], tuple[Callable[..., Any], Callable[[Any], bytes]]] = {
    ("mqdsrp", "message"): (mqdsrp.decode, mqdsrp.encode),
    ("mqsd", "message"): (mqsd.decode, mqsd.encode),
    ("mqcn", "message"): (mqcn.decode, mqcn.encode),
    # MS-MQCN 3.3.5.3: the MSMQ message body is the message plus one unused byte
    ("mqcn", "msmq-body"): (mqcn.decode_body, mqcn.encode_body),
}
MESSAGE_TYPES = {"mqdsrp": mqdsrp.MESSAGE_TYPES, "mqsd": mqsd.MESSAGE_TYPES, "mqcn": mqcn.MESSAGE_TYPES}

#: the section that defines each top-level structure (for valid vectors)
STRUCTURE_SECTION = {
    "ChangeRequestMessage": ("MC-MQDSRP", "2.2.6.2"), "ChangeReplyMessage": ("MC-MQDSRP", "2.2.6.3"),
    "SyncRequestMessage": ("MC-MQDSRP", "2.2.6.4"), "SyncReplyMessage": ("MC-MQDSRP", "2.2.6.5"),
    "BSCAckMessage": ("MC-MQDSRP", "2.2.6.6"), "PSCAckMessage": ("MC-MQDSRP", "2.2.6.7"),
    "AlreadyPurgedMessage": ("MC-MQDSRP", "2.2.6.8"), "ChangePropagationMessage": ("MC-MQDSRP", "2.2.6.9"),
    "TopologyClientRequest": ("MS-MQSD", "2.2.2"), "TopologyServerReply": ("MS-MQSD", "2.2.3"),
    "ChangeNotificationMessage": ("MS-MQCN", "2.2.4"),
}


@attrs.frozen
class ValidCase:
    """Bytes that decode; ``data`` is the input, ``description`` one sentence on what it shows."""

    protocol: str
    name: str
    data: bytes
    description: str
    lenient: bool = False
    entry: str = "message"


@attrs.frozen
class InvalidCase:
    """Bytes a decoder must refuse at ``field`` (and ``offset`` when given)."""

    protocol: str
    name: str
    data: bytes
    field: str
    description: str
    offset: int | None = None
    lenient: bool = False
    entry: str = "message"
    #: the register entries the refusal rests on rather than a MUST of the text (E-020: mqspec's policy)
    rests_on: tuple[str, ...] = ()


@attrs.frozen
class CodecVector:
    """One codec vector ready to be written: the manifest fields and the files' JSON."""

    protocol: str
    name: str
    entry: str
    lenient: bool
    valid: bool
    document: str
    section: str
    description: str
    data: bytes
    expected: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    canonical: bool = False
    rests_on: tuple[str, ...] = ()


def split_section(section: str) -> tuple[str, str]:
    """"MC-MQDSRP 2.2.4" -> ("MC-MQDSRP", "2.2.4")."""
    document, _, number = section.partition(" ")
    return document, number


def error_json(err: DecodeError) -> dict[str, Any]:
    """``error.json``: what a strict decoder reports (field path, offset, section, reason)."""
    document, section = split_section(err.section)
    return {"field": err.field, "path": err.path, "context": list(err.context), "offset": err.offset,
            "document": document, "section": section, "reason": err.reason}


def decode_entry(protocol: str, entry: str, data: bytes, lenient: bool) -> object:
    decode, _ = ENTRIES[(protocol, entry)]
    return decode(data, lenient=lenient)


def valid_vector(case: ValidCase) -> CodecVector:
    """Decode the case's bytes (they must decode) and record the JSON and whether they are canonical."""
    msg = decode_entry(case.protocol, case.entry, case.data, case.lenient)
    expected = to_json(msg)
    _, encode = ENTRIES[(case.protocol, case.entry)]
    if from_json(expected, MESSAGE_TYPES[case.protocol]) != msg:
        raise ValueError(f"{case.name}: the JSON form does not rebuild the message")
    document, section = STRUCTURE_SECTION[type(msg).__name__]
    if case.entry == "msmq-body":
        section = "3.3.5.3"
    return CodecVector(case.protocol, case.name, case.entry, case.lenient, True, document, section,
                       case.description, case.data, expected=expected, canonical=encode(msg) == case.data)


def invalid_vector(case: InvalidCase) -> CodecVector:
    """Decode the case's bytes (they must fail at the field the case breaks) and record the error."""
    try:
        decode_entry(case.protocol, case.entry, case.data, case.lenient)
    except DecodeError as err:
        if err.field != case.field or (case.offset is not None and err.offset != case.offset):
            raise ValueError(f"{case.name}: expected {case.field} at {case.offset}, "
                             f"the decoder says {err.field} at {err.offset}") from None
        document, section = split_section(err.section)
        return CodecVector(case.protocol, case.name, case.entry, case.lenient, False, document, section,
                           case.description, case.data, error=error_json(err), rests_on=case.rests_on)
    raise ValueError(f"{case.name}: the bytes decode, but the case says {case.field} is broken")


def codec_vectors(*, reduced: bool = False) -> Iterator[CodecVector]:
    """Every codec vector: the valid ones, then the invalid ones, protocol by protocol."""
    from .codec_cases import invalid_cases, valid_cases

    for case in valid_cases(random_count=2 if reduced else 12):
        yield valid_vector(case)
    for bad in invalid_cases():
        yield invalid_vector(bad)
