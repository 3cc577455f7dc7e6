"""One MS-MQSD node's replay: its datagrams run through the MQSD reference, its replies matched.

A node whose declaration carries ``"mqsd": {"role": "server", ...}`` is an MQSD server
configured as 3.2.1 says (:class:`~mqspec.refimpl.mqsd_server.MqsdServer`). Every ``datagram``
it receives is handed to 3.2.5 (:func:`~mqspec.refimpl.mqsd_server.receive_datagram`) with its
sender (``from``) and transport; the reference either sends one TopologyServerReply to the sender
or discards the packet and says which rule made it do so. Every datagram the node sends must be
a reply the reference sends, and each reply must appear before the node's next received
datagram (or its ``window``-th next, the header's window) or the end of the trace:

* a reply where the reference is silent (a malformed datagram, a reply, another enterprise) is
  an ``unexpected-output`` naming the rule that discards the packet (3.2.5, or 3.2.5.1 with
  E-210 / E-208); a second reply to one request breaks 3.2.5 ("sends a TopologyServerReply
  packet and then immediately returns to listening");
* a reply with other fields (CorrelationID, a server list in a same-site reply, the mask over IP
  or IPX) is ``output-differs`` with the field-level diff, naming 3.2.5.1; a reply sent to any
  host but the request's sender is ``output-differs`` on ``(destination)``, naming 3.2.5.1;
* no reply at all is ``missing-output`` naming 3.2.5.1.

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
    """A reply the reference sent and the trace has yet to show."""

    __slots__ = ("input_index", "ordinal", "reply", "to")

    def __init__(self, reply: TopologyServerReply, to: str | None, input_index: int, ordinal: int) -> None:
        self.reply, self.to, self.input_index, self.ordinal = reply, to, input_index, ordinal


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
        if self.divergence is not None or record["event"] != "datagram":
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
        mqsd_server.receive_datagram(self.server, ctx, bytes.fromhex(record["body"]), sender, transport)
        self.last_discard = None
        for effect in ctx.effects:
            if type(effect) is SendReply:
                self.pending.append(_Reply(effect.reply, sender, index, self.inputs))
            elif type(effect) is PacketDiscarded:
                self.last_discard = effect
            elif hasattr(effect, "erratum"):
                self.errata.add(effect.erratum)

    def _missing(self, r: _Reply) -> Divergence:
        return Divergence(
            r.input_index + 1, self.name, "missing-output",
            f"{self.name} does not send the TopologyServerReply the reference sends to {r.to or 'the sender'} "
            f"in answer to event {r.input_index} (3.2.5.1: \"MUST send the TopologyServerReply packet to the "
            "sender of the TopologyClientRequest packet\")",
            expected=to_json(r.reply), clause=self._reply_clause, cause=r.input_index)

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
        what = ("to another host than the request's sender" if first == "(destination)"
                else f"that differs from the reference's ({plural(len(diff), 'field')}, first {first})")
        self._diverge(Divergence(
            index, self.name, "output-differs", f"{self.name} sends a {type(actual).__name__} {what}, "
            f"in answer to event {best.input_index}", expected=to_json(best.reply), actual=to_json(actual),
            diff=tuple(diff), clause=self._reply_clause, cause=best.input_index))

    def _unexpected(self, index: int, record: dict[str, Any], actual: Any) -> None:
        cause = self.last_input
        if cause is not None and cause in self.answered:
            why, clause = ("the reference sends one reply to a request and returns to listening (3.2.5)",
                           clause_at("MS-MQSD 3.2.5"))
        elif self.last_discard is not None and cause is not None:
            why = f"the reference discards event {cause}: {self.last_discard.detail} ({self.last_discard.section})"
            clause = clause_at(self.last_discard.section)
        else:
            why, clause = "the reference sends nothing unasked (3.2.5)", clause_at("MS-MQSD 3.2.5")
        self._diverge(Divergence(
            index, self.name, "unexpected-output", f"{self.name} sends a {type(actual).__name__}; {why}",
            actual=to_json(actual), clause=clause, cause=cause))



def _same_host(expected: str | None, actual: str | None) -> bool:
    """Whether a reply went to the sender (unknown on either side: not compared)."""
    return expected is None or actual is None or expected.casefold() == actual.casefold()


def replay_for(name: str, declaration: dict[str, Any], mode: Mode, window: int, *,
               observes: frozenset[str] = frozenset()) -> Any:
    """The replay of a node's ``mqsd`` declaration (``observes``: the kinds the node logs)."""
    if declaration["role"] == "server":
        return MqsdServerReplay(name, declaration, mode, window)
    from .replay_mqsd_client import MqsdClientReplay

    return MqsdClientReplay(name, declaration, mode, window, observes=observes)
