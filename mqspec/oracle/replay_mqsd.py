"""One MS-MQSD node's replay: its datagrams run through the MQSD reference, its replies matched.

A node whose declaration carries ``"mqsd": {"role": "server", ...}`` is an MQSD server
configured as 3.2.1 says (:class:`~mqspec.refimpl.mqsd_server.MqsdServer`). Every ``datagram``
it receives is handed to 3.2.5 (:func:`~mqspec.refimpl.mqsd_server.receive_datagram`) with its
sender (``from``) and transport; the reference either sends one TopologyServerReply to the sender
or discards the packet and says which rule made it do so. Every datagram the node sends must be
a reply the reference sends, and each reply must appear before the node's next received
datagram (or its ``window``-th next, the header's window) or the end of the trace:

* a reply where the reference is silent (a malformed datagram, a reply, another enterprise) is
  an ``unexpected-output`` naming the rule that discards the packet and the register entry it
  rests on, since no MUST of the text forbids the reply (3.2.5 with policy E-211, 3.2.5.1 with
  clarification E-210, errata E-208 / E-209); a second reply to one request, or a reply nobody asked
  for, departs from the loop 3.2.5 describes ("sends a TopologyServerReply packet and then
  immediately returns to listening"), which no MUST states: it rests on policy E-216;
* a reply with other fields (CorrelationID, a server list in a same-site reply, the mask over IP
  or IPX) is ``output-differs`` with the field-level diff, naming 3.2.5.1; a reply sent to
  another host, or to another port of the sender, than the request's source is ``output-differs``
  on ``(destination)``, naming 3.2.5.1 ("MUST send the TopologyServerReply packet to the sender");
* no reply at all is ``missing-output`` naming 3.2.5.1, or 2.2.1 when the request's header
  Version or Reserved is not zero ("MQSD servers MUST ignore this field").

Each divergence quotes the MUST it breaks (``rule``) or names the register entries it rests on.

A reply's header Version and Reserved are compared as mqspec's policy, not as a MUST: MS-MQSD
2.2.1 binds clients only ("MQSD servers MUST ignore this field"), so a reply that differs there
alone is accepted, with a note saying ``policy: E-020``.

An MQSD client (``"role": "client"``) is replayed by :mod:`mqspec.oracle.replay_mqsd_client`.
"""

from __future__ import annotations

from typing import Any

from mqspec.model import mqsd
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import to_json
from mqspec.model.mqsd import DirectoryServiceServer, TopologyServerReply
from mqspec.refimpl import mqsd_server
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqsd_effects import PacketDiscarded, SendReply, Transport
from mqspec.wording import plural

from . import attribution
from .diff import field_diff
from .replay import Divergence, clause_at, decode_divergence
from .windowed import WindowedReplay

#: header fields no MUST binds in a server's reply (MS-MQSD 2.2.1; E-020)
POLICY_FIELDS = ("TopologyPacketHeader.Version", "TopologyPacketHeader.Reserved")
POLICY_NOTE = ("no MUST binds a server's reply header (MS-MQSD 2.2.1: \"MQSD clients MUST set all bit "
               "positions to 0. MQSD servers MUST ignore this field.\"); accepted (policy: E-020)")


def parse_server(text: str) -> DirectoryServiceServer:
    """``NAME[:ip|ipx|ip+ipx]`` (IP when not given) as a DirectoryServerList entry."""
    name, _, proto = text.partition(":")
    kinds = (proto or "ip").split("+")
    return DirectoryServiceServer(name, ip="ip" in kinds, ipx="ipx" in kinds)


def decode_sent(data: bytes) -> tuple[Any, str | None]:
    """A sent datagram decoded strictly, or leniently when only a reply's Version/Reserved
    break the strict rule: (message, policy note or None). DecodeError otherwise."""
    try:
        return mqsd.decode(data), None
    except DecodeError as exc:
        if exc.field not in POLICY_FIELDS or len(data) < 2 or data[1] != mqsd.PacketType.SERVER_REPLY:
            raise
        message = mqsd.decode(data, lenient=True)  # raises for anything else wrong
        return message, f"{exc.field} is {data[0] if exc.offset == 0 else int.from_bytes(data[2:4], 'little'):#x}: " \
                        + POLICY_NOTE


class _Reply:
    """A reply the reference sent and the trace has yet to show (``header``: the request's first 4 bytes)."""

    __slots__ = ("header", "input_index", "ordinal", "reply", "to")

    def __init__(self, reply: TopologyServerReply, to: str | None, input_index: int, ordinal: int,
                 header: bytes = b"") -> None:
        self.reply, self.to, self.input_index, self.ordinal, self.header = reply, to, input_index, ordinal, header


class MqsdServerReplay(WindowedReplay):
    """The reference copy of one MQSD server and the replies it still expects the trace to show."""

    protocol = "mqsd"

    def __init__(self, name: str, declaration: dict[str, Any], mode: Mode, window: int) -> None:
        super().__init__(name, mode, window)
        self.server = mqsd_server.MqsdServer(
            Guid.parse(declaration["enterprise"]), Guid.parse(declaration["site"]),
            tuple(parse_server(s) for s in declaration.get("servers", ())),
            tuple(Guid.parse(g) for g in declaration.get("connected_networks", ())))
        mqsd_server.server_initialization(self.server, Context(name, mode, 0.0))  # 3.2.3: listening
        self.pending: list[_Reply] = []
        self.last_input: int | None = None
        self.last_discard: PacketDiscarded | None = None
        self.answered: set[int] = set()  # inputs whose reply was matched
        self._reply_clause = attribution.clause_of(mqsd_server.receive_topology_client_request)

    @property
    def behavioural(self) -> bool:
        return True

    def event(self, index: int, record: dict[str, Any]) -> None:
        if self.halted or record["event"] != "datagram":
            return
        if record["direction"] == "receive":
            self._receive(index, record)
        else:
            self._send(index, record)

    # --- inputs -------------------------------------------------------------------------------

    def _receive(self, index: int, record: dict[str, Any]) -> None:
        self._next_input()
        self.last_input = index
        transport = Transport(record.get("transport", "ip"))
        ctx = Context(self.name, self.mode, record["t"])
        sender = record.get("from")
        data = bytes.fromhex(record["body"])
        mqsd_server.receive_datagram(self.server, ctx, data, sender, transport)
        self.last_discard = None
        for effect in ctx.effects:
            if type(effect) is SendReply:
                self.pending.append(_Reply(effect.reply, sender, index, self.inputs, data[:4]))
            elif type(effect) is PacketDiscarded:
                self.last_discard = effect
            elif hasattr(effect, "erratum"):
                self.errata.add(effect.erratum)

    def _missing(self, r: _Reply) -> Divergence:
        version, reserved = (r.header[0], int.from_bytes(r.header[2:4], "little")) if len(r.header) == 4 else (0, 0)
        if version or reserved:
            # the request is one but for a header field the server MUST ignore: refusing it breaks 2.2.1
            field, value, name = ("Version", version, "version") if version else ("Reserved", reserved, "reserved")
            return Divergence(
                r.input_index + 1, self.name, "missing-output",
                f"{self.name} does not answer event {r.input_index}, a TopologyClientRequest whose header {field} "
                f"is {value:#x} ({mqsd_server.rule(name)}); the reference sends it a TopologyServerReply",
                expected=to_json(r.reply), clause=clause_at(f"MS-MQSD {mqsd_server.RULES[name][0]}"),
                cause=r.input_index, rule=mqsd_server.RULES[name][1])
        return Divergence(
            r.input_index + 1, self.name, "missing-output",
            f"{self.name} does not send the TopologyServerReply the reference sends to {r.to or 'the sender'} "
            f"in answer to event {r.input_index} ({mqsd_server.rule('send')})",
            expected=to_json(r.reply), clause=self._reply_clause, cause=r.input_index, rule=mqsd_server.RULES["send"][1])

    # --- outputs ------------------------------------------------------------------------------

    def _send(self, index: int, record: dict[str, Any]) -> None:
        self.checked += 1
        try:
            actual, note = decode_sent(bytes.fromhex(record["body"]))
        except DecodeError as exc:
            self._diverge(decode_divergence(self.name, index, record, exc))
            return
        to = record.get("to")
        if type(actual) is TopologyServerReply:
            for r in self.pending:
                if r.reply == actual and _same_host(r.to, to):
                    self.pending.remove(r)
                    self.answered.add(r.input_index)
                    if note is not None:
                        self.notes.append(f"event {index}: {note}")
                    return
        if not self.pending:
            self._unexpected(index, record, actual)
            return
        best = min(self.pending, key=lambda r: (not _same_host(r.to, to),
                                                len(field_diff(to_json(r.reply), to_json(actual))), r.ordinal))
        diff = field_diff(to_json(best.reply), to_json(actual))
        if not _same_host(best.to, to):
            diff = [{"field": "(destination)", "expected": best.to, "actual": to}, *diff]
        first = diff[0]["field"]
        self.pending.remove(best)  # this reply stood for it (check --all goes on from here)
        if first == "(destination)":
            what = f"to {_elsewhere(best.to, to)} than the request's source ({best.to})"
            quoted = mqsd_server.RULES["send"][1]
        else:
            what = f"that differs from the reference's ({plural(len(diff), 'field')}, first {first})"
            quoted = _rule_of_field(first, best.reply)
        self._diverge(Divergence(
            index, self.name, "output-differs", f"{self.name} sends a {type(actual).__name__} {what}, "
            f"in answer to event {best.input_index}", expected=to_json(best.reply), actual=to_json(actual),
            diff=tuple(diff), clause=self._reply_clause, cause=best.input_index, rule=quoted))

    def _unexpected(self, index: int, record: dict[str, Any], actual: Any) -> None:
        cause = self.last_input
        entries: tuple[str, ...] = ()
        if cause is not None and cause in self.answered:
            # no MUST forbids a second reply: mqspec holds the server to 3.2.5's loop (policy E-216)
            why, clause = ("the reference sends one reply to a request and returns to listening (3.2.5; "
                           "no MUST forbids a second reply: it rests on E-216)", clause_at("MS-MQSD 3.2.5"))
            entries = ("E-216",)
        elif self.last_discard is not None and cause is not None:
            discard = self.last_discard
            rests = f"; no MUST forbids a reply: it rests on {discard.erratum}" if discard.erratum else ""
            why = f"the reference discards event {cause}: {discard.detail} ({discard.section}{rests})"
            clause = clause_at(discard.section)
            entries = (discard.erratum,) if discard.erratum else ()
        else:
            why, clause = ("the reference sends nothing unasked (3.2.5; no MUST forbids it: it rests on E-216)",
                           clause_at("MS-MQSD 3.2.5"))
            entries = ("E-216",)
        self._diverge(Divergence(
            index, self.name, "unexpected-output", f"{self.name} sends a {type(actual).__name__}; {why}",
            actual=to_json(actual), clause=clause, cause=cause, rests_on=entries))



def _same_host(expected: str | None, actual: str | None) -> bool:
    """Whether a reply went to the sender (unknown on either side: not compared)."""
    return expected is None or actual is None or expected.casefold() == actual.casefold()


def _elsewhere(expected: str | None, actual: str | None) -> str:
    """``another port`` when a reply went to the sender's host but not to its source port, else ``another host``."""
    from mqspec.mqsd_net import split_address

    try:
        (want_host, want_port), (got_host, got_port) = split_address(expected or ""), split_address(actual or "")
    except ValueError:
        return "another host"
    if want_host.casefold() == got_host.casefold() and want_port != got_port:
        return "another port"
    return "another host"


def _rule_of_field(field: str, expected: TopologyServerReply) -> str:
    """The quoted MUST of 3.2.5.1 that sets ``field`` of the reply the reference sends."""
    top = field.split(".")[0].split("[")[0]
    if top == "correlation_id":
        name = "correlation"
    elif top == "connected_networks":
        name = "networks"
    elif top == "connected_network_mask":
        name = "ipx_mask" if expected.connected_network_mask else "ip_mask"
    elif top in ("responding_site_id", "servers"):
        name = "other_site" if expected.responding_site_id is not None else "same_site"
    else:
        name = "send"
    return mqsd_server.RULES[name][1]


def replay_for(name: str, declaration: dict[str, Any], mode: Mode, window: int, *,
               observes: frozenset[str] = frozenset()) -> Any:
    """The replay of a node's ``mqsd`` declaration (``observes``: the kinds the node logs)."""
    if declaration["role"] == "server":
        return MqsdServerReplay(name, declaration, mode, window)
    from .replay_mqsd_client import MqsdClientReplay

    return MqsdClientReplay(name, declaration, mode, window, observes=observes)
