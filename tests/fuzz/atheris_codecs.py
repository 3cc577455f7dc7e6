"""Coverage-guided fuzzing of the three strict codecs with atheris (libFuzzer for Python).

The first byte of each input picks the protocol (``data[0] % 3``: 0 MC-MQDSRP, 1 MS-MQSD,
2 MS-MQCN) and the rest is fed to every decode entry point of that protocol, strict and
lenient. An input passes when each decoder returns a value that survives a round trip, or
raises :class:`DecodeError`; anything else escapes :func:`TestOneInput` and libFuzzer reports a
crash with the input that caused it.

Seed the fuzzer with valid encodings, then run it::

    .venv/bin/python tests/fuzz/atheris_codecs.py --write-corpus /tmp/mqcorpus
    .venv/bin/python tests/fuzz/atheris_codecs.py /tmp/mqcorpus -runs=200000
    .venv/bin/python tests/fuzz/atheris_codecs.py /tmp/mqcorpus -max_total_time=600

Any other argument is a libFuzzer flag (``-runs``, ``-max_len``, ``-jobs`` ...). Importing this
module needs neither atheris nor hypothesis: the tests call :func:`TestOneInput` directly.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's ``tests`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PROTOCOLS = ("mqdsrp", "mqsd", "mqcn")

#: (decode, encode, strict, the bytes a strict decode must encode back to)
Entry = tuple[Callable[[bytes], object], Callable[[object], bytes], bool, Callable[[bytes], bytes]]


def _same(data: bytes) -> bytes:
    return data


def _body(data: bytes) -> bytes:
    return data[:-1] + b"\x00"  # the unused byte after the message is written as 0x00


@functools.cache
def entry_points() -> tuple[type[Exception], dict[str, tuple[Entry, ...]]]:
    """DecodeError and, by protocol, the decode entry points to feed.

    The codecs are imported here, on first use, and not at the top of the module, so that
    :func:`main` can import them under atheris's instrumentation (it only instruments modules
    imported after it starts).
    """
    from mqspec.model import mqcn, mqdsrp, mqsd
    from mqspec.model.errors import DecodeError

    return DecodeError, {
        "mqdsrp": ((mqdsrp.decode, mqdsrp.encode, True, _same),),  # lenient has no effect
        "mqsd": (
            (mqsd.decode, mqsd.encode, True, _same),
            (functools.partial(mqsd.decode, lenient=True), mqsd.encode, False, _same),
        ),
        "mqcn": (
            (mqcn.decode, mqcn.encode, True, _same),
            (functools.partial(mqcn.decode, lenient=True), mqcn.encode, False, _same),
            (mqcn.decode_body, mqcn.encode_body, True, _body),
            (functools.partial(mqcn.decode_body, lenient=True), mqcn.encode_body, False, _same),
        ),
    }


def TestOneInput(data: bytes) -> None:
    """Feed ``data[1:]`` to every decoder of the protocol ``data[0]`` picks."""
    if not data:
        return
    decode_error, entries = entry_points()
    payload = bytes(data[1:])
    for decode, encode, strict, canonical in entries[PROTOCOLS[data[0] % 3]]:
        try:
            value = decode(payload)
        except decode_error:
            continue
        wire = encode(value)
        if decode(wire) != value:
            raise AssertionError(f"decode(encode(x)) != x for {payload.hex()}")
        if strict and wire != canonical(payload):
            raise AssertionError(f"encode(decode(b)) != b for {payload.hex()}")


def seed_inputs(per_protocol: int = 64) -> list[bytes]:
    """Valid encodings of every message type, prefixed with their protocol byte.

    Drawn from the test strategies by a derandomized hypothesis run, so the corpus is the same
    on every machine; the MS-MQSD examples of the specification are included.
    """
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from mqspec.model import examples_mqsd, mqcn, mqdsrp

    from tests import strategies_mqcn, strategies_mqdsrp, strategies_mqsd

    strategies = {
        "mqdsrp": strategies_mqdsrp.replication_messages().map(mqdsrp.encode),
        "mqsd": strategies_mqsd.packets(),
        "mqcn": st.one_of(strategies_mqcn.messages().map(mqcn.encode),
                          strategies_mqcn.messages().map(mqcn.encode_body)),
    }
    inputs = [bytes([1]) + packet for packet in (
        examples_mqsd.CLIENT_REQUEST, examples_mqsd.REPLY_LOCAL_SITE,
        examples_mqsd.REPLY_OTHER_SITE,
    )]
    for index, protocol in enumerate(PROTOCOLS):
        drawn: list[bytes] = []

        @settings(max_examples=per_protocol, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(strategies[protocol])
        def draw(wire: bytes) -> None:
            drawn.append(wire)  # noqa: B023 - draw() runs before the loop moves on

        draw()
        inputs += [bytes([index]) + wire for wire in drawn]
    return list(dict.fromkeys(inputs))  # without duplicates, in order


def write_corpus(directory: Path, per_protocol: int = 64) -> int:
    """Write the seed inputs to ``directory`` (created if needed), one file each; return how many."""
    directory.mkdir(parents=True, exist_ok=True)
    inputs = seed_inputs(per_protocol)
    for i, data in enumerate(inputs):
        (directory / f"seed-{PROTOCOLS[data[0] % 3]}-{i:04d}").write_bytes(data)
    return len(inputs)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0], add_help=False)
    parser.add_argument("--write-corpus", type=Path, metavar="DIR",
                        help="write valid encodings to DIR as the seed corpus, then exit")
    parser.add_argument("--per-protocol", type=int, default=64,
                        help="seed inputs drawn per protocol (default 64)")
    args, libfuzzer_args = parser.parse_known_args(argv[1:])
    if args.write_corpus is not None:
        n = write_corpus(args.write_corpus, args.per_protocol)
        print(f"wrote {n} seed inputs to {args.write_corpus}")
        return

    import atheris

    with atheris.instrument_imports(include=["mqspec"]):  # coverage feedback from mqspec only
        entry_points()
    atheris.Setup([argv[0], *libfuzzer_args], TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
