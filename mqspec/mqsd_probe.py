"""``mqspec mqsd probe``: active conformance testing of a live MS-MQSD server over UDP.

The probe sends a battery of datagrams (:func:`battery`) to the one address it is given (IPv4 or
IPv6), each from a fresh socket, and compares what comes back (a TopologyServerReply, or silence)
with what the reference server (:mod:`mqspec.refimpl.mqsd_server`) configured the same way does
with the same datagram (:func:`expected`). Over UDP a datagram can be lost, so where a reply is
due, silence is retried (the same datagram sent again, up to ``retries`` more times) before it is
judged; where silence is due, any reply within the timeout is a divergence.

After every case whose due outcome is silence, the probe sends a valid request of its own
(``after-<case>``): a server that stopped answering (its receive loop died on the datagram, say)
fails there, naming 3.2.5.1's "MUST send the TopologyServerReply packet to the sender". The
battery also repeats a request whose RequestID the server has answered (a client's retry keeps
its RequestID, 3.1.6.1): 3.2.5.1 keeps no record of RequestIDs, so it is answered again. Once the
server has answered, a port unreachable (nothing listens any more) is a divergence of the case,
not a network error.

Each case names the clause whose rule it exercises and quotes that rule's MUST (``rule``), or,
where no MUST makes the outcome, carries the register entries it rests on (``rests_on``: id and
kind, as :func:`mqspec.errata.mark` gives them; another enterprise's request is dropped by
clarification E-210, a malformed datagram by policy E-211). A divergence is reported with the
clause, what was expected and what was observed. A reply's header Version and Reserved are
compared as mqspec's policy, not as a MUST (MS-MQSD 2.2.1 binds clients only; E-020): a reply
that differs there alone conforms, with a note saying ``policy: E-020``. Each case's socket is
connected to the probed address, so only its replies count: a server that answers from another
address, or to another host or port than the request's sender, is silent to the probe. A port
unreachable before the server ever answered is a network error (nothing listens), not a verdict.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import attrs

from mqspec import errata
from mqspec.model import mqsd
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import to_json
from mqspec.model.mqsd import DirectoryServiceServer, TopologyClientRequest
from mqspec.oracle.diff import field_diff
from mqspec.oracle.replay_mqsd import decode_sent
from mqspec.refimpl import mqsd_server
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.effects import Clarified
from mqspec.refimpl.mqsd_effects import PacketDiscarded, SendReply, Transport

#: a UDP datagram the probe waits for is at most this large (2.2.3 bounds a reply well below it)
MAX_DATAGRAM = 65535
SILENCE = "silence"


@attrs.frozen
class ServerConfig:
    """What the probed server is configured with, as ``mqspec mqsd serve`` takes it (3.2.1)."""

    enterprise: Guid
    site: Guid
    servers: tuple[DirectoryServiceServer, ...] = ()
    networks: tuple[Guid, ...] = ()

    def reference(self) -> mqsd_server.MqsdServer:
        return mqsd_server.MqsdServer(self.enterprise, self.site, self.servers, self.networks)


#: the sentences of the text the cases rest on (quoted verbatim from their sections)
SEND_RULE, SAME_SITE_RULE, OTHER_SITE_RULE, IP_MASK_RULE, PARTIAL_IPX_RULE, VERSION_RULE = (
    mqsd_server.RULES[n][1] for n in ("send", "same_site", "other_site", "ip_mask", "partial_ipx", "version"))


@attrs.frozen
class Case:
    """One datagram of the battery, the clause whose rule it exercises, and what it is about.

    ``rule`` quotes the clause's MUST the expected outcome rests on; ``rests_on`` names register
    entries where no MUST does (the reference adds those its own run names, :func:`expected`).
    """

    name: str
    clause: str
    data: bytes
    about: str
    rule: str = ""
    rests_on: tuple[str, ...] = ()


@attrs.frozen
class CaseResult:
    name: str
    clause: str
    verdict: str  # conform | diverge
    expected: Any  # the reply's JSON form, or "silence"
    observed: Any  # the reply's JSON form, "silence", "unreachable", or {"undecodable": hex, "error": ...}
    attempts: int
    detail: str = ""
    rule: str = ""  # the MUST quoted from the clause
    rests_on: tuple[dict[str, str], ...] = ()  # register marks (errata.mark) where no MUST makes the outcome

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "clause": self.clause, "verdict": self.verdict, "expected": self.expected,
               "observed": self.observed, "attempts": self.attempts}
        if self.rule:
            out["rule"] = self.rule
        if self.rests_on:
            out["rests_on"] = list(self.rests_on)
        if self.detail:
            out["detail"] = self.detail
        return out


@attrs.frozen
class ProbeReport:
    target: str
    cases: tuple[CaseResult, ...]

    @property
    def conformant(self) -> bool:
        return all(c.verdict == "conform" for c in self.cases)

    def to_json(self) -> dict[str, Any]:
        return {"conformant": self.conformant, "target": self.target, "cases": [c.to_json() for c in self.cases]}


def _request(config: ServerConfig, name: str, *, site: Guid | None = None, enterprise: Guid | None = None,
             ipx: tuple[int, ...] = ()) -> TopologyClientRequest:
    return TopologyClientRequest(enterprise_id=enterprise or config.enterprise,
                                 request_id=Guid.from_name(f"mqspec-probe:{name}"),
                                 site_id=site or config.site, ipx_network_numbers=ipx)


def battery(config: ServerConfig) -> list[Case]:
    """The datagrams the probe sends, each with a RequestID of its own (but ``repeated-request-id``)."""
    other_site = Guid.from_name(f"mqspec-probe-other-site:{config.site}")
    other_enterprise = Guid.from_name(f"mqspec-probe-other-enterprise:{config.enterprise}")
    enc = mqsd.encode

    def req(name: str, **kw: Any) -> bytes:
        return enc(_request(config, name, **kw))

    same = req("same-site")
    version = bytearray(req("version-1"))
    version[0], version[2:4] = 1, (7).to_bytes(2, "little")
    malformed = ("E-211",)  # the text says nothing of a datagram that is no request: mqspec's policy drops it
    return [
        Case("same-site", "3.2.5.1", same, "a request from the server's own site: a reply without a server list",
             SAME_SITE_RULE),
        Case("repeated-request-id", "3.2.5.1", same,
             "the same-site request again, its RequestID already answered (a client's retry keeps its RequestID, "
             "3.1.6.1): 3.2.5.1 keeps no record of RequestIDs, so it is answered again", SEND_RULE),
        Case("other-site", "3.2.5.1", req("other-site", site=other_site),
             "a request from another site: RespondingSiteID and the DirectoryServerList", OTHER_SITE_RULE),
        Case("other-enterprise", "3.2.5.1", req("other-enterprise", site=other_site, enterprise=other_enterprise),
             "a request of another enterprise: no step of 3.2.5.1 reads EnterpriseID; clarified, no reply (E-210)",
             SEND_RULE),
        Case("same-site-ipx-list", "3.2.5.1", req("same-site-ipx", ipx=(0x11, 0x22)),
             "a same-site request carrying an IPX network list, received over IP", IP_MASK_RULE),
        Case("other-site-ipx-list", "3.2.5.1", req("other-site-ipx", site=other_site, ipx=(0x33,)),
             "an other-site request carrying an IPX network list, received over IP", IP_MASK_RULE),
        Case("partial-ipx-tail", "3.2.5.1", req("partial-tail") + bytes(5),
             "53..59 bytes: the IPX fields are considered as not present (3.2.5.1, first step)", PARTIAL_IPX_RULE),
        Case("version-1", "2.2.1", bytes(version),
             "a request with Version 1 and Reserved 7: \"MQSD servers MUST ignore this field\"", VERSION_RULE),
        Case("truncated", "3.2.5", same[:40], "a request cut to 40 bytes (E-211: dropped)", rests_on=malformed),
        Case("trailing-bytes", "3.2.5", req("trailing", ipx=(0x44,)) + bytes(4),
             "an IPX-form request with 4 bytes after its array (E-211: dropped)", rests_on=malformed),
        Case("wrong-packet-type", "3.2.5", same[:1] + b"\x03" + same[2:], "header Type 0x03 (E-211: dropped)",
             rests_on=malformed),
        Case("reply-instead-of-request", "3.2.5",
             enc(mqsd.TopologyServerReply(Guid.from_name("mqspec-probe:reply"), (config.site,), 0)),
             "a TopologyServerReply sent to the server (E-211: dropped)", rests_on=malformed),
        Case("oversize", "3.2.5", req("oversize") + bytes(1400), "a request padded to 1452 bytes (E-211: dropped)",
             rests_on=malformed),
        Case("garbage", "3.2.5", b"\x00mqspec probe: not a packet", "bytes that are no MS-MQSD packet (E-211: dropped)",
             rests_on=malformed),
    ]


def liveness_case(config: ServerConfig, after: Case) -> Case:
    """A valid same-site request sent right after ``after`` (whose due outcome was silence)."""
    return Case(f"after-{after.name}", "3.2.5.1", mqsd.encode(_request(config, f"after-{after.name}")),
                f"a valid request right after {after.name}: still answered (3.2.5: the server \"immediately "
                "returns to listening for another TopologyClientRequest packet\")", SEND_RULE)


def expected(config: ServerConfig, data: bytes, mode: Mode) -> tuple[Any, str]:
    """What the reference server does with ``data`` over IP: (reply or None, why when silent)."""
    reply, why, _ = _reference(config, data, mode)
    return reply, why


def _reference(config: ServerConfig, data: bytes, mode: Mode) -> tuple[Any, str, set[str]]:
    """(reply or None, why when silent, the register entries the reference's outcome rests on)."""
    server = config.reference()
    ctx = Context("probe", mode, 0.0)
    mqsd_server.server_initialization(server, ctx)
    ctx.effects.clear()
    mqsd_server.receive_datagram(server, ctx, data, ("probe", 0), Transport.IP)
    reply = next((e.reply for e in ctx.effects if type(e) is SendReply), None)
    why = next((f"{e.detail} ({e.section}{', ' + e.erratum if e.erratum else ''})"
                for e in ctx.effects if type(e) is PacketDiscarded), "")
    entries = {e.erratum for e in ctx.effects if type(e) is PacketDiscarded and e.erratum}
    entries |= {e.erratum for e in ctx.effects if type(e) is Clarified}
    return reply, why, entries


class ProbeError(Exception):
    """A network error the probe cannot judge (exit status 2)."""


#: what :func:`exchange` returns when the port is unreachable (nothing listens there)
UNREACHABLE = "unreachable"


def exchange(target: tuple[str, int], data: bytes, timeout: float) -> bytes | str | None:
    """Send ``data`` from a fresh socket connected to ``target`` (the kernel then delivers only
    datagrams from ``target``, and reports a port unreachable); the first reply within ``timeout``,
    None for silence, :data:`UNREACHABLE` when an ICMP port unreachable came back."""
    from mqspec.mqsd_net import family_of, format_address

    where = format_address(target)
    with socket.socket(family_of(target[0]), socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(target)
            sock.send(data)
        except ConnectionRefusedError:
            return UNREACHABLE
        except OSError as exc:
            raise ProbeError(f"cannot send to {where}: {exc.strerror or exc}") from None
        sock.settimeout(timeout)
        try:
            return sock.recv(MAX_DATAGRAM)
        except TimeoutError:
            return None
        except ConnectionRefusedError:
            return UNREACHABLE  # ICMP port unreachable: nothing listens there
        except OSError as exc:
            raise ProbeError(f"receiving from {where}: {exc.strerror or exc}") from None


def run_case(case: Case, config: ServerConfig, target: tuple[str, int], *, timeout: float, retries: int,
             mode: Mode) -> CaseResult:
    """Send one case (again, while a due reply does not come) and judge what came back."""
    want, why, entries = _reference(config, case.data, mode)
    want_json = to_json(want) if want is not None else SILENCE
    marks = tuple(errata.marks({*case.rests_on, *entries}))
    attempts = 0
    data: bytes | str | None = None
    for attempts in range(1, (retries + 2) if want is not None else 2):
        data = exchange(target, case.data, timeout)
        if data is not None:
            break

    def result(verdict: str, observed: Any, detail: str = "") -> CaseResult:
        return CaseResult(case.name, f"MS-MQSD {case.clause}", verdict, want_json, observed, attempts, detail,
                          case.rule if want is not None or not marks else "", marks)

    if data is UNREACHABLE:
        return result("diverge", UNREACHABLE, "the port is unreachable: nothing listens there any more")
    if data is None:
        if want is None:
            return result("conform", SILENCE)
        return result("diverge", SILENCE, f"no reply after {attempts} attempts of {timeout:g} s")
    try:
        got, note = decode_sent(data)  # type: ignore[arg-type]
    except DecodeError as exc:
        return result("diverge", {"undecodable": data.hex(), "error": str(exc)},  # type: ignore[union-attr]
                      "the reply does not decode" + ("" if want is not None else f"; the reference is silent: {why}"))
    if want is None:
        return result("diverge", to_json(got), f"the reference is silent: {why}")
    if got != want:
        diff = field_diff(to_json(want), to_json(got))
        return result("diverge", to_json(got), "differs in " + ", ".join(d["field"] for d in diff))
    return result("conform", to_json(got), note or "")


def probe(target: tuple[str, int], config: ServerConfig, *, timeout: float = 1.0, retries: int = 2,
          mode: Mode = Mode.CLARIFIED, progress: Callable[[CaseResult], None] | None = None) -> ProbeReport:
    """Run every case of the battery against ``target``, each silent one followed by its liveness
    case; ProbeError on a network error (a port unreachable before the server ever answered)."""
    from mqspec.mqsd_net import format_address

    results: list[CaseResult] = []
    answered = False  # the server answered once: a port unreachable from then on is a verdict
    for case in battery(config):
        followed = [case]
        for c in followed:
            r = run_case(c, config, target, timeout=timeout, retries=retries, mode=mode)
            if r.observed == UNREACHABLE and not answered:
                raise ProbeError(f"nothing is listening at {format_address(target)} (port unreachable)")
            answered = answered or isinstance(r.observed, dict)
            results.append(r)
            if progress is not None:
                progress(r)
            if c is case and r.expected == SILENCE:
                followed.append(liveness_case(config, case))
    return ProbeReport(format_address(target), tuple(results))
