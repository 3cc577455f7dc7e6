"""One MS-MQSD client's replay: Get Directory Server List, its requests, replies and timer (3.1).

A node declared ``"mqsd": {"role": "client", "enterprise", "site", ...}`` sends
TopologyClientRequests. Each must decode under the strict codec (2.2.1 binds clients) and carry
the declared EnterpriseID and SiteID (and IPX network numbers, when declared), naming 3.1.5.1
otherwise. When the node also logs the higher-layer event that drives it (it ``observes``
``discover``: Get Directory Server List, 3.1.4.1, with the networks it is connected to), the
client is replayed through the reference state machine
(:mod:`mqspec.refimpl.mqsd_client`) on the trace clock:

* ``discover`` (input): 3.1.4.1 with ``networks`` (the NetworkAddressList, in order; ``ras``
  names the Remote Access Service ones). The RequestID of the first request that follows is
  the implementation's "new GUID"; one a previous discovery used breaks 3.1.4.1;
* ``datagram`` received (input): a reply on ``network`` (absent: the network of the last
  request), handed to 3.1.5.2 with its three discard rules and five cases;
* the Wait For Response Timer (3.1.2.1): 15 s (the declaration's ``wait_for_response`` for
  runners that shorten it) after each request; its expiry is 3.1.6.1 No Server Response. The
  timer is not logged: it fires on the trace clock, with ``timer_slack`` seconds (default 1) of
  tolerance either way;
* ``datagram`` sent (output): each request the reference broadcasts must be sent, with the
  RequestID, EnterpriseID and SiteID of 3.1.5.1 (and on the ``network`` it names, when the event
  gives one), within ``timer_slack`` seconds of when the reference sends it. A copy of the
  request just sent on the same network (a broadcast to several destinations) is accepted;
* ``discovered`` (output, when observed): the completion of 3.1.4.1, ``result`` success or
  failure with the DirectoryServerList (``servers``, 3.1.7.1) and ConnectedNetworkIdentifierList
  (``connected_networks``, 3.1.7.2) the client then holds, and the LastSuccessfulNetworkAddress
  (``network``) when it is valid.

A request or completion the reference does not make at that time is an ``unexpected-output``:
it names 3.1.5.2 when the last reply was one the client MUST discard (another network, malformed,
a CorrelationID that is not the RequestID) or one after which it MUST wait (a first reply from
another site), 3.1.6.1 when it comes before the Wait For Response Timer expired (a retry too
early), 3.1.4.1 otherwise. One the reference makes and the trace does
not show in time is a ``missing-output`` naming the event that makes it: 3.1.4.1 (the first
request), 3.1.5.2 (the request or completion a reply calls for, or a reply wrongly discarded),
3.1.6.1 (the retry or completion the timer's expiry calls for: a client that does not retry).
"""

from __future__ import annotations

from typing import Any

from mqspec.clauses import Clause
from mqspec.model import mqsd
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import to_json
from mqspec.model.mqsd import TopologyClientRequest
from mqspec.refimpl import mqsd_client
from mqspec.refimpl.effects import CancelTimer, Context, Mode, StartTimer
from mqspec.refimpl.mqsd_client import MqsdClient
from mqspec.refimpl.mqsd_effects import (
    WAIT_FOR_RESPONSE,
    WAIT_FOR_RESPONSE_TIMEOUT,
    BroadcastRequest,
    DirectoryServerListResult,
    NetworkAddress,
    PacketDiscarded,
    TimerInstances,
)

from . import attribution
from .replay import Divergence, decode_divergence
from .windowed import WindowedReplay

#: the RequestID of a request whose GUID the implementation has yet to show (3.1.4.1 "create a new GUID")
_NEW = Guid.from_name("mqspec:oracle:new-request-id")
#: default tolerance of the Wait For Response Timer on the trace clock, seconds
TIMER_SLACK = 1.0


class _Owed:
    """An output the reference made (a request or a completion) that the trace has yet to show."""

    __slots__ = ("at", "cause", "clause", "effect")

    def __init__(self, effect: Any, at: float, cause: int | None, clause: Clause | None) -> None:
        self.effect, self.at, self.cause, self.clause = effect, at, cause, clause


class MqsdClientReplay(WindowedReplay):
    """An MQSD client checked on what it sends, and with ``discover`` inputs replayed (module docstring)."""

    protocol = "mqsd"

    def __init__(self, name: str, declaration: dict[str, Any], mode: Mode, window: int, *,
                 observes: frozenset[str] = frozenset()) -> None:
        super().__init__(name, mode, window)
        self.enterprise = Guid.parse(declaration["enterprise"])
        self.site = Guid.parse(declaration["site"])
        self.ipx = tuple(declaration["ipx_networks"]) if "ipx_networks" in declaration else None
        self.behavioural = "discover" in observes
        self.results = "discovered" in observes
        self.slack = float(declaration.get("timer_slack", TIMER_SLACK))
        self.client = MqsdClient(site_identifier=self.site,
                                 wait_for_response_timeout=float(declaration.get("wait_for_response",
                                                                                 WAIT_FOR_RESPONSE_TIMEOUT)))
        mqsd_client.client_initialization(self.client, Context(name, mode, 0.0), self.enterprise)  # 3.1.3
        self.timer = TimerInstances(WAIT_FOR_RESPONSE)
        self.owed: list[_Owed] = []
        self.used_ids: set[Guid] = set()
        self.last_sent: tuple[bytes, str | None, float] | None = None  # a broadcast's copies are accepted
        self.last_input: int | None = None
        self.last_discard: PacketDiscarded | None = None
        self.last_handler = ""  # the reference's last handler run, and whether it made no output
        self.last_quiet = False
        self.now = 0.0
        self._clause = {f: attribution.clause_of(getattr(mqsd_client, f)) for f in (
            "get_directory_server_list", "send_topology_client_request", "receive_topology_server_reply",
            "no_server_response", "populate_directory_server_list", "populate_connected_network_identifier_list")}

    def owes_before(self, index: int) -> bool:
        return not self.halted and bool(self.owed)

    def finish(self, end: int, clock: float | None = None) -> None:
        """The trace ended at ``clock`` (its last event, any node's): a Wait For Response Timer due
        more than the slack before then has expired (3.1.6.1), and what its expiry owes is missing."""
        if not self.halted and self.behavioural:
            self._fire(max(self.now, clock if clock is not None else self.now) - self.slack)
            self._overdue(float("inf"), end)

    def event(self, index: int, record: dict[str, Any]) -> None:
        if self.halted:
            return
        kind = record["event"]
        if kind not in ("datagram", "discover", "discovered"):
            return
        self.now = t = record["t"]
        if not self.behavioural:
            if kind == "datagram" and record["direction"] == "send":
                self.checked += 1
                self._request(index, record)
            return
        self.checked += 1
        if kind == "discover" or record.get("direction") == "receive":
            self._fire(t - self.slack)
            if self._overdue(t, index):
                return
            self._input(index, record)
            return
        self._fire(t - self.slack)
        if self._overdue(t, index):
            return
        if kind == "discovered":
            self._output(index, record, t, self._result)
        else:
            self._output(index, record, t, self._request)

    # --- the reference's inputs ----------------------------------------------------------------

    def _run(self, handler: str, index: int | None, at: float, *args: Any) -> None:
        ctx = Context(self.name, self.mode, at)
        getattr(mqsd_client, handler)(self.client, ctx, *args)
        clause = self._clause[handler]
        self.last_discard = None
        self.last_handler, self.last_quiet = handler, True
        for effect in ctx.effects:
            kind = type(effect)
            if kind is StartTimer or kind is CancelTimer:
                self.timer.apply(effect, at)
            elif kind is BroadcastRequest:
                self.owed.append(_Owed(effect, at, index, clause))
                self.last_quiet = False
            elif kind is DirectoryServerListResult:
                self.last_quiet = False
                if self.results:
                    self.owed.append(_Owed(effect, at, index, clause))
            elif kind is PacketDiscarded:
                self.last_discard = effect
            elif hasattr(effect, "erratum"):
                self.errata.add(effect.erratum)

    def _fire(self, upto: float) -> None:
        """Expire every Wait For Response Timer instance due by ``upto`` (3.1.6.1)."""
        while (due := self.timer.next_due()) is not None and due <= upto:
            self.timer.pop_due(due)
            self._run("no_server_response", None, due)

    def _input(self, index: int, record: dict[str, Any]) -> None:
        self.last_input = index
        if record["event"] == "discover":
            ras = set(record.get("ras", ()))
            networks = [NetworkAddress(n, ras=n in ras) for n in record["networks"]]
            self._run("get_directory_server_list", index, record["t"], networks, lambda: _NEW)
            return
        name = record.get("network")
        current = self.client.current_network()
        if name is None:
            network = current or NetworkAddress("")
        else:
            network = next((n for n in self.client.network_address_list if n.name == name), NetworkAddress(name))
        self._run("receive_topology_server_reply", index, record["t"], bytes.fromhex(record["body"]), network)

    # --- the node's outputs --------------------------------------------------------------------

    def _overdue(self, t: float, index: int) -> bool:
        """An output the reference made more than the slack before ``t`` and still unseen: missing."""
        for o in self.owed:
            if o.at + self.slack < t:
                self.owed.remove(o)
                what = ("the TopologyClientRequest" if type(o.effect) is BroadcastRequest
                        else "the completion of Get Directory Server List")
                cause = f"event {o.cause}" if o.cause is not None else \
                    f"the Wait For Response Timer's expiry at t={o.at:g} (3.1.6.1)"
                self._diverge(Divergence(
                    index, self.name, "missing-output",
                    f"{self.name} does not make {what} the reference makes at t={o.at:g} in answer to {cause}",
                    expected=_plain(o.effect), clause=o.clause, cause=o.cause))
                return True
        return False

    def _output(self, index: int, record: dict[str, Any], t: float, compare: Any) -> None:
        # an output the reference owes now, else one it owes once the timer expires (within the slack)
        if compare(index, record, dry=True):
            return
        while (due := self.timer.next_due()) is not None and due <= t + self.slack:
            self.timer.pop_due(due)
            self._run("no_server_response", None, due)
            if compare(index, record, dry=True):
                return
        compare(index, record, dry=False)

    def _request(self, index: int, record: dict[str, Any], dry: bool = False) -> bool:
        """A sent datagram: True when it is a request the reference owes (or a copy of the last one)."""
        data = bytes.fromhex(record["body"])
        try:
            actual = mqsd.decode(data)  # strict: 2.2.1 binds clients
        except DecodeError as exc:
            self._diverge(decode_divergence(self.name, index, record, exc))
            return True
        if type(actual) is not TopologyClientRequest:
            self._diverge(Divergence(index, self.name, "unexpected-output",
                                     f"{self.name}, an MQSD client, sends a {type(actual).__name__}",
                                     actual=to_json(actual), clause=self._clause["send_topology_client_request"]))
            return True
        network = record.get("network")
        if not self.behavioural:
            self._fields(index, actual, None, None, network)
            return True
        if self.last_sent is not None and self.last_sent[:2] == (data, network) \
                and record["t"] - self.last_sent[2] <= self.slack:
            return True  # one broadcast, sent to several destinations of its network
        owed = next((o for o in self.owed if type(o.effect) is BroadcastRequest), None)
        if owed is None:
            if not dry:
                self._unexpected(index, record, to_json(actual), "a TopologyClientRequest")
            return False
        self.owed.remove(owed)
        self.last_sent = (data, network, record["t"])
        self._fields(index, actual, owed, owed.effect.network.name, network)
        return True

    def _fields(self, index: int, actual: TopologyClientRequest, owed: _Owed | None, want_network: str | None,
                network: str | None) -> None:
        """The fields 3.1.5.1 sets (RequestID: 3.1.4.1's new GUID the first time), and the network."""
        request_id = self.client.request_id if owed is not None else actual.request_id
        if owed is not None and request_id == _NEW:
            # the first request of this Get Directory Server List: its RequestID is the new GUID
            if actual.request_id in self.used_ids:
                self._diverge(Divergence(
                    index, self.name, "output-differs",
                    f"{self.name} starts Get Directory Server List with RequestID {actual.request_id}, which an "
                    "earlier one used (3.1.4.1: \"MUST create a new GUID and assign it to the RequestID\")",
                    expected={"request_id": "a new GUID"}, actual={"request_id": str(actual.request_id)},
                    diff=({"field": "request_id", "expected": "a new GUID", "actual": str(actual.request_id)},),
                    clause=self._clause["get_directory_server_list"], cause=owed.cause))
                return
            request_id = self.client.request_id = actual.request_id
            self.used_ids.add(request_id)
        wrong = [(f, x, a) for f, x, a in (
            ("enterprise_id", str(self.enterprise), str(actual.enterprise_id)),
            ("site_id", str(self.site), str(actual.site_id)),
            ("request_id", str(request_id), str(actual.request_id)),
            *((("ipx_network_numbers", list(self.ipx), list(actual.ipx_network_numbers)),) if self.ipx is not None
              else ()),
            *((("(network)", want_network, network),) if want_network is not None and network is not None else ()),
        ) if x != a]
        if wrong:
            self._diverge(Divergence(
                index, self.name, "output-differs",
                f"{self.name} sends a TopologyClientRequest with " + ", ".join(f"{f} {a}" for f, _, a in wrong)
                + " (the reference's " + ", ".join(f"{f} {x}" for f, x, _ in wrong) + ")",
                expected={f: x for f, x, _ in wrong}, actual={f: a for f, _, a in wrong},
                diff=tuple({"field": f, "expected": x, "actual": a} for f, x, a in wrong),
                clause=self._clause["send_topology_client_request"], cause=owed.cause if owed else None))

    def _result(self, index: int, record: dict[str, Any], dry: bool = False) -> bool:
        """A ``discovered``: True when it is the completion the reference owes."""
        owed = next((o for o in self.owed if type(o.effect) is DirectoryServerListResult), None)
        actual = {k: record[k] for k in ("result", "servers", "connected_networks", "network") if k in record}
        if owed is None:
            if not dry:
                self._unexpected(index, record, actual, "the completion of Get Directory Server List")
            return False
        self.owed.remove(owed)
        want: DirectoryServerListResult = owed.effect
        expected = {**_plain(want), "network": want.network.name if want.network is not None else None}
        clauses = {"result": owed.clause, "servers": self._clause["populate_directory_server_list"],
                   "connected_networks": self._clause["populate_connected_network_identifier_list"],
                   "network": owed.clause}
        diff = [{"field": k, "expected": expected[k], "actual": v} for k, v in actual.items()
                if (v if k != "connected_networks" else [g.lower() for g in v]) != expected[k]]
        if diff:
            self._diverge(Divergence(
                index, self.name, "output-differs",
                f"{self.name} completes Get Directory Server List otherwise than the reference (first "
                f"{diff[0]['field']})", expected=expected, actual=actual, diff=tuple(diff),
                clause=clauses[diff[0]["field"]], cause=owed.cause))
        return True

    def _unexpected(self, index: int, record: dict[str, Any], actual: Any, what: str) -> None:
        t = record["t"]
        if self.last_discard is not None:
            why = (f"the reference discards event {self.last_input}: {self.last_discard.detail} "
                   f"({self.last_discard.section}: \"MUST discard the received packet and perform no further "
                   "processing for it\")")
            clause = self._clause["receive_topology_server_reply"]
        elif self.last_handler == "receive_topology_server_reply" and self.last_quiet:
            why = (f"the reference takes event {self.last_input} and waits: a first reply from another site "
                   "restarts the Wait For Response Timer (3.1.5.2: \"MUST stop and start the Wait For Response "
                   "Timer\" ... \"MUST stop performing any further processing\")")
            clause = self._clause["receive_topology_server_reply"]
        elif (due := self.timer.next_due()) is not None:
            why = (f"the Wait For Response Timer ({self.client.wait_for_response_timeout:g} s, 3.1.5.1) runs until "
                   f"t={due:g}; only its expiry (3.1.6.1) or a reply leads to another request")
            clause = self._clause["no_server_response"]
        else:
            why = "the reference makes none (no Get Directory Server List is in progress)"
            clause = self._clause["get_directory_server_list"]
        self._diverge(Divergence(index, self.name, "unexpected-output", f"{self.name} makes {what} at t={t:g}; {why}",
                                 actual=actual, clause=clause, cause=self.last_input))



def _plain(effect: Any) -> Any:
    if type(effect) is BroadcastRequest:
        return {"network": effect.network.name, "request": to_json(effect.request)}
    return {"result": "success" if effect.success else "failure", "servers": list(effect.directory_server_list),
            "connected_networks": [str(g) for g in effect.connected_network_identifier_list]}
