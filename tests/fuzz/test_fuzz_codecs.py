"""Mutation fuzzing of the three strict codecs: bad bytes raise DecodeError and nothing else.

For each protocol, hypothesis draws valid messages of every type from the shared strategies
(derandomized by the ``ci`` profile), encodes them, and feeds each encoding and 80 deterministic
mutants of it (tests/fuzz/mutate.py: bit flips, truncation, extension, huge counts, slices
deleted or duplicated) to every decode entry point of the protocol, strict and lenient. Every
input must either decode or raise :class:`DecodeError`; whatever decodes must survive a round
trip (``decode(encode(x)) == x``, and ``encode(decode(b)) == b`` for the strict decoders, which
accept only canonical bytes); no input may take more than a generous time bound.

One campaign per protocol runs once per session (they are cached) and the tests read its
tally, so the total over the three protocols is checked without running anything twice.
"""

from __future__ import annotations

import functools
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from mqspec.model import mqcn, mqdsrp, mqsd
from mqspec.model.errors import DecodeError

from tests import strategies_mqcn, strategies_mqdsrp, strategies_mqsd
from tests.fuzz.mutate import mutants

EXAMPLES = 450  # valid messages drawn per protocol
MUTANTS = 80  # mutants of each
MAX_SECONDS_PER_INPUT = 0.5
MIN_TOTAL_INPUTS = 100_000


@attrs.define
class Tally:
    """What one protocol's campaign fed to its decoders and how they answered."""

    inputs: int = 0
    decoded: int = 0
    refused: int = 0
    max_seconds: float = 0.0
    by_type: Counter = attrs.field(factory=Counter)


@attrs.frozen
class Decoder:
    """One decode entry point, the encoder that inverts it, and whether it is strict."""

    name: str
    decode: Callable[[bytes], object]
    encode: Callable[[object], bytes]
    strict: bool
    #: the bytes a strict decode must give back on encode (the input, less any unused byte)
    canonical: Callable[[bytes], bytes] = lambda b: b


def _mqcn_type(msg: mqcn.ChangeNotificationMessage) -> str:
    return f"ChangeNotificationMessage.v{int(msg.version)}"


#: protocol -> (strategy of valid messages, the type name of a message, every type name,
#: the decoders to feed, how to encode the drawn message for them)
PROTOCOLS = {
    "mqdsrp": (
        strategies_mqdsrp.replication_messages(),
        lambda m: type(m).__name__,
        {cls.__name__ for cls in strategies_mqdsrp.MESSAGE_STRATEGIES},
        # lenient has no effect in MC-MQDSRP (section 2 gives a receiver no leniency)
        (Decoder("decode", mqdsrp.decode, mqdsrp.encode, strict=True),),
        mqdsrp.encode,
    ),
    "mqsd": (
        st.one_of(strategies_mqsd.client_requests_ip, strategies_mqsd.client_requests_ipx,
                  strategies_mqsd.server_replies()),
        lambda m: type(m).__name__ + (".ipx" if getattr(m, "is_ipx", False) else ""),
        {"TopologyClientRequest", "TopologyClientRequest.ipx", "TopologyServerReply"},
        (
            Decoder("decode", mqsd.decode, mqsd.encode, strict=True),
            Decoder("decode lenient", functools.partial(mqsd.decode, lenient=True), mqsd.encode,
                    strict=False),
        ),
        mqsd.encode,
    ),
    "mqcn": (
        strategies_mqcn.messages(),
        _mqcn_type,
        {"ChangeNotificationMessage.v1", "ChangeNotificationMessage.v2"},
        (
            Decoder("decode", mqcn.decode, mqcn.encode, strict=True),
            Decoder("decode lenient", functools.partial(mqcn.decode, lenient=True), mqcn.encode,
                    strict=False),
            # the MSMQ message body: the message and one unused byte of any value (3.3.5.3)
            Decoder("decode_body", mqcn.decode_body, mqcn.encode_body, strict=True,
                    canonical=lambda b: b[:-1] + b"\x00"),
            Decoder("decode_body lenient", functools.partial(mqcn.decode_body, lenient=True),
                    mqcn.encode_body, strict=False),
        ),
        mqcn.encode_body,  # a body carries the message, so both decode and decode_body see it
    ),
}


def _feed(decoder: Decoder, data: bytes, tally: Tally) -> None:
    """Decode ``data``; anything but a value or a DecodeError fails, as does a bad round trip."""
    started = time.perf_counter()
    try:
        value = decoder.decode(data)
    except DecodeError:
        tally.refused += 1
        return
    except Exception as exc:
        raise AssertionError(
            f"{decoder.name} raised {type(exc).__name__}, not DecodeError, on {data.hex()}\n"
            + traceback.format_exc()
        ) from exc
    finally:
        tally.max_seconds = max(tally.max_seconds, time.perf_counter() - started)
    tally.decoded += 1
    wire = decoder.encode(value)
    assert decoder.decode(wire) == value, f"{decoder.name}: decode(encode(x)) != x for {data.hex()}"
    if decoder.strict:
        assert wire == decoder.canonical(data), (
            f"{decoder.name}: encode(decode(b)) != b for {data.hex()}"
        )


@functools.cache
def campaign(protocol: str) -> Tally:
    """Run the protocol's campaign once: EXAMPLES messages, each with MUTANTS mutants."""
    strategy, type_of, _types, decoders, encode = PROTOCOLS[protocol]
    tally = Tally()

    @settings(max_examples=EXAMPLES)
    @given(message=strategy, seed=st.integers(0, 2**32 - 1))
    def run(message: object, seed: int) -> None:
        tally.by_type[type_of(message)] += 1
        wire = encode(message)
        for data in (wire, *mutants(wire, random.Random(seed), MUTANTS)):
            tally.inputs += 1
            for decoder in decoders:
                _feed(decoder, data, tally)

    run()
    return tally


def _check(protocol: str) -> Tally:
    tally = campaign(protocol)
    types = PROTOCOLS[protocol][2]
    assert set(tally.by_type) == types, f"message types never drawn: {types - set(tally.by_type)}"
    # the mutants reach both outcomes: some still decode, most are refused
    assert tally.decoded > 0 and tally.refused > 0
    assert tally.max_seconds < MAX_SECONDS_PER_INPUT, f"an input took {tally.max_seconds:.3f} s"
    return tally


def test_mqdsrp_mutants_decode_or_raise_decode_error():
    """Every mutant of every MC-MQDSRP message type decodes (and round-trips) or raises DecodeError."""
    _check("mqdsrp")


def test_mqsd_mutants_decode_or_raise_decode_error():
    """Every mutant of every MS-MQSD packet decodes (and round-trips) or raises DecodeError, strict and lenient."""
    _check("mqsd")


def test_mqcn_mutants_decode_or_raise_decode_error():
    """Every mutant of every MS-MQCN message and body decodes (and round-trips) or raises DecodeError."""
    _check("mqcn")


def test_campaigns_feed_at_least_100000_inputs():
    """The three campaigns together feed at least 100,000 inputs to the decoders."""
    total = sum(campaign(p).inputs for p in PROTOCOLS)
    assert total >= MIN_TOTAL_INPUTS, f"only {total} fuzz inputs"
