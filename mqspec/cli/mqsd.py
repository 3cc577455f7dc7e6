"""``mqspec mqsd serve`` and ``mqspec mqsd discover``: MS-MQSD over real UDP sockets.

``serve`` answers TopologyClientRequests as 3.2.5.1 says, logging on standard output (one line
per datagram, at most 20 per ``--log-every`` interval and a summary of the rest; ``--quiet``:
summaries only), until SIGTERM or SIGINT (exit 0), or until its thread terminates (3.2.5: the
socket could not be reopened; exit 1). A socket that cannot be opened at start-up, or a
``--server`` list too long for a reply datagram, is one stderr line and exit 2. ``discover`` runs the client of 3.1 and prints the
DirectoryServerList and ConnectedNetworkIdentifierList; its exit status is 0 when a valid list
was obtained and 1 when not. Bad arguments print one line ``mqspec: usage: ...`` and exit 2.
"""

from __future__ import annotations

import collections
import math
import re
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from mqspec import json64

from mqspec.cli.common import emit, fail
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.mqsd_log import LINES_PER_INTERVAL
from mqspec.wording import plural

DEFAULT_PORT = 1801
_SERVER_SPEC = re.compile(r"^(?P<name>[^:]+?)(?::(?P<proto>ip|ipx|ip\+ipx|ipx\+ip))?$")


def _fail(kind: str, text: str) -> NoReturn:
    # one line even where the text quotes a socket error over several
    fail(kind, " ".join(text.split()))


class _OneLineUsage(click.Group):
    """A group whose subcommands report every usage error as one line and exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            _fail("usage", exc.format_message())


# --------------------------------------------------------------------------- argument parsing


def parse_guid(text: str, option: str) -> Guid:
    try:
        return Guid.parse(text)
    except ModelError:
        raise click.BadParameter(f"{text!r} is not a GUID", param_hint=option) from None


def parse_server(text: str) -> Any:
    """``NAME[:ip|ipx|ip+ipx]`` -> DirectoryServiceServer (IP only by default)."""
    from mqspec.model.mqsd import DirectoryServiceServer

    m = _SERVER_SPEC.match(text)
    if m is None:
        raise click.BadParameter(f"{text!r} is not NAME[:ip|ipx|ip+ipx]", param_hint="--server")
    proto = m.group("proto") or "ip"
    try:
        return DirectoryServiceServer(m.group("name"), ip="ip" in proto.split("+"), ipx="ipx" in proto.split("+"))
    except ModelError as exc:
        raise click.BadParameter(f"{text!r}: {exc}", param_hint="--server") from None


def parse_port(text: str, option: str, *, allow_zero: bool) -> int:
    low = 0 if allow_zero else 1
    if not text.isdigit() or not low <= int(text) <= 65535:
        raise click.BadParameter(f"{text!r} is not a port number ({low}..65535)", param_hint=option)
    return int(text)


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPV6]:PORT`` (``HOST``, ``[IPV6]`` or a bare IPv6 address alone mean port 1801),
    resolved to an address to send to (IPv4 first for a host name)."""
    from mqspec.mqsd_net import split_address

    try:
        host, port = split_address(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--to") from None
    port = port if port is not None else str(DEFAULT_PORT)
    if not host or any(c.isspace() for c in host) or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise click.BadParameter(f"{text!r} is not HOST:PORT or [IPV6]:PORT (PORT 1..65535)", param_hint="--to")
    error: Exception | None = None
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.getaddrinfo(host, int(port), family, socket.SOCK_DGRAM)[0][4][0], int(port)
        except (OSError, UnicodeError) as exc:
            error = error or exc
    raise click.BadParameter(f"{text!r}: cannot resolve {host!r} ({error})", param_hint="--to") from None


class Seconds(click.FloatRange):
    """A number of seconds in a range; ``nan`` is refused too (FloatRange lets it through)."""


    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if math.isnan(rv):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return rv


def _check_reply_fits(site: Guid, servers: tuple[Any, ...], networks: tuple[Guid, ...]) -> None:
    """The longest reply (to another site's client: every server listed) must fit one UDP datagram."""
    from mqspec.model.mqsd import TopologyServerReply, encode
    from mqspec.mqsd_net import MAX_UDP_PAYLOAD

    if not servers:
        return
    try:
        size = len(encode(TopologyServerReply(site, networks, 0, site, servers)))
    except ModelError as exc:
        raise click.BadParameter(str(exc), param_hint="--server") from None
    if size > MAX_UDP_PAYLOAD:
        raise click.BadParameter(
            f"the DirectoryServerList ({plural(len(servers), 'server')}) makes a reply of {size:,} bytes to a "
            f"client of another site; a UDP datagram holds at most {MAX_UDP_PAYLOAD:,}: use fewer or shorter names",
            param_hint="--server")


def _required(value: Any, option: str) -> Any:
    if value is None:
        raise click.UsageError(f"{option} is required")
    return value


# --------------------------------------------------------------------------- the commands


@click.group(cls=_OneLineUsage)
def mqsd() -> None:
    """MS-MQSD directory service discovery over real UDP sockets."""


MODE_OPTION = click.option(
    "--mode", type=click.Choice(["clarified", "literal"]), default="clarified", show_default=True,
    help="Run the clarified reading of the errata register or the literal text.",
)


def server_options(whose: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options that configure an MQSD server (3.2.1), as ``serve`` takes them and ``probe`` mirrors
    them: ``--enterprise``, ``--site``, ``--server`` (repeatable), ``--connected-network`` (repeatable)."""
    options = (
        click.option("--enterprise", "enterprise_text", metavar="GUID", help=f"{whose} Enterprise.Identifier (required)."),
        click.option("--site", "site_text", metavar="GUID", help=f"{whose} Site.Identifier (required)."),
        click.option("--server", "server_texts", multiple=True, metavar="NAME[:ip|ipx|ip+ipx]",
                     help=f"An entry of {whose.lower()} DirectoryServerList (repeatable; IP only by default)."),
        click.option("--connected-network", "network_texts", multiple=True, metavar="GUID",
                     help=f"An entry of {whose.lower()} ConnectedNetworkIdentifierList (repeatable)."),
    )

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def server_config(enterprise_text: str | None, site_text: str | None, server_texts: tuple[str, ...],
                  network_texts: tuple[str, ...]) -> tuple[Guid, Guid, tuple[Any, ...], tuple[Guid, ...]]:
    """(enterprise, site, DirectoryServerList, ConnectedNetworkIdentifierList) from :func:`server_options`."""
    return (parse_guid(_required(enterprise_text, "--enterprise"), "--enterprise"),
            parse_guid(_required(site_text, "--site"), "--site"),
            tuple(parse_server(t) for t in server_texts),
            tuple(parse_guid(t, "--connected-network") for t in network_texts))


@mqsd.command()
@click.option("--host", default="0.0.0.0", show_default=True,
              help="Address to listen on (an IPv6 address such as ::1 listens over IPv6).")
@click.option("--port", "port_text", default=str(DEFAULT_PORT), show_default=True, metavar="PORT",
              help="UDP port (0: any free port, printed at start).")
@server_options("This server's")
@MODE_OPTION
@click.option("--quiet", is_flag=True, help="No line per datagram: the start, a summary per --log-every "
              "interval in which datagrams came, and the stop.")
@click.option("--log-every", "log_every", type=Seconds(min=0.1, max=86_400.0), default=5.0, show_default=True,
              metavar="S", help=f"Print at most {LINES_PER_INTERVAL} datagram lines per S seconds, and summarise "
              "in one line an interval that left some out.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object a line: listening (address, port, site, counts, mode), each log line "
                   "(log, text), and at the end stopped (datagrams, replies, discards by reason, errors, and the "
                   "reason the server thread terminated, if it did).")
def serve(host: str, port_text: str, enterprise_text: str | None, site_text: str | None,
          server_texts: tuple[str, ...], network_texts: tuple[str, ...], mode: str, quiet: bool,
          log_every: float, as_json: bool) -> None:
    """Answer TopologyClientRequests over UDP as MS-MQSD 3.2.5.1 says, until SIGTERM or SIGINT.

    A socket that cannot be opened (a port in use) is one error line; a server thread that
    terminates later (3.2.5) ends the command.
    """
    from mqspec.model.mqsd import MAX_NETWORKS
    from mqspec.mqsd_log import ServeLog
    from mqspec.mqsd_net import UdpResponder, format_address
    from mqspec.refimpl.effects import Mode
    from mqspec.refimpl.mqsd_server import MqsdServer

    enterprise, site, servers, networks = server_config(enterprise_text, site_text, server_texts, network_texts)
    port = parse_port(port_text, "--port", allow_zero=True)
    if not 1 <= len(networks) <= MAX_NETWORKS:
        # a reply's ConnectedNetworkCount "MUST be in the range 1 to 32" (2.2.3; errata E-209)
        raise click.UsageError(f"give 1 to {MAX_NETWORKS} --connected-network GUIDs, not {len(networks)}")
    _check_reply_fits(site, servers, networks)

    def say(event: str, text: str, **fields: Any) -> None:
        if as_json:
            click.echo(json64.dumps({"event": event, **fields} if fields else {"event": event, "text": text}))
        else:
            click.echo(f"mqspec mqsd: {text}")
        sys.stdout.flush()

    def log(line: str) -> None:
        say("log", line)

    state = MqsdServer(enterprise, site, servers, networks)
    # no log until the socket is open: a port in use is one error line, not a log line too
    responder = UdpResponder(state, host, port, mode=Mode(mode))
    serve_log = ServeLog(log, responder.stats, interval=log_every, quiet=quiet)
    responder.tick = (log_every, serve_log.tick)

    def on_signal(signum: int, _frame: Any) -> None:
        responder.stop()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if not responder.open():
            _fail("error", f"{responder.termination}")
        responder.log = serve_log.line
        say("listening", f"listening on {format_address(responder.address)} (site {site}, "
            f"{plural(len(servers), 'directory server')}, {plural(len(networks), 'connected network')}, {mode})",
            address=format_address(responder.address), port=responder.address[1], site=str(site),
            servers=len(servers), networks=len(networks), mode=mode)
        responder.serve()
        serve_log.tick()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        responder.close()
    st = responder.stats
    if responder.termination:
        click.echo(f"mqspec: error: server thread terminated: {responder.termination}", err=True)
    say("stopped", f"stopped: {plural(st.datagrams, 'datagram')}, {plural(st.replies, 'reply', 'replies')}, "
        f"{sum(st.discarded.values())} dropped, {plural(st.send_errors, 'send error')}",
        datagrams=st.datagrams, replies=st.replies, dropped=sum(st.discarded.values()),
        discarded=dict(sorted((str(getattr(k, "value", k)), n) for k, n in st.discarded.items())),
        send_errors=st.send_errors, receive_errors=st.receive_errors, reopens=st.reopens,
        terminated=responder.termination)
    sys.exit(1 if responder.termination else 0)


@mqsd.command()
@click.option("--to", "to_texts", multiple=True, metavar="HOST:PORT[,HOST:PORT...]",
              help="One network address per --to: the destinations of its broadcast ([IPV6]:PORT for IPv6; "
                   "the same destinations may be given again: another network that reaches the same server) "
                   "(default: the broadcast address of each local interface, port 1801).")
@click.option("--enterprise", "enterprise_text", metavar="GUID", help="Enterprise.Identifier (required).")
@click.option("--site", "site_text", metavar="GUID", help="Site.Identifier of this client (required).")
@click.option("--timeout", type=Seconds(min=0.001, max=3600.0), default=15.0, show_default=True,
              metavar="S", help="The Wait For Response Timer, in seconds (3.1.2.1).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Also write the run as a trace (format 2) that `mqspec check` replays.")
@MODE_OPTION
def discover(to_texts: tuple[str, ...], enterprise_text: str | None, site_text: str | None, timeout: float,
             as_json: bool, trace_path: str | None, mode: str) -> None:
    """Run the MS-MQSD client (Get Directory Server List) over UDP and print the lists it obtained."""
    from mqspec.mqsd_net import MQSD_PORT, Network, local_broadcast_addresses
    from mqspec.mqsd_net import discover as run_discovery
    from mqspec.refimpl.effects import Mode
    from mqspec.refimpl.mqsd_client import MqsdClient

    enterprise = parse_guid(_required(enterprise_text, "--enterprise"), "--enterprise")
    site = parse_guid(_required(site_text, "--site"), "--site")
    if to_texts:
        seen: collections.Counter[tuple[Any, ...]] = collections.Counter()
        networks = []
        for text in to_texts:
            destinations = tuple(parse_host_port(part) for part in _split_destinations(text))
            seen[destinations] += 1  # the same server on two networks: a network of its own each
            networks.append(Network.to(*destinations, nth=seen[destinations]))
            try:
                networks[-1].family
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--to") from None
    else:
        networks = [Network.to((address, MQSD_PORT)) for address in local_broadcast_addresses()]

    client = MqsdClient(enterprise_identifier=enterprise, site_identifier=site, wait_for_response_timeout=timeout)
    notes: list[str] = []
    events: list[dict[str, Any]] = []
    try:
        outcome = run_discovery(client, networks, mode=Mode(mode), log=notes.append, record=events.append)
    except OSError as exc:  # a network error, as probe reports it: one line, status 2
        _fail("network error", str(exc))
    if trace_path is not None:
        _write_discovery_trace(trace_path, events, enterprise, site, timeout, mode)
    result = outcome.result
    success = outcome.success
    last = client.last_topology_server_reply
    # a reply with no server list comes from a server of the client's own site (2.2.3, 3.1.5.2)
    same_site = success and last is not None and last.directory_service_server_size == 0
    report = {
        "success": success,
        "same_site_reply": same_site,
        "directory_server_list": list(result.directory_server_list if result else client.directory_server_list),
        "connected_network_identifier_list": [
            str(g) for g in (result.connected_network_identifier_list if result else client.connected_network_identifier_list)
        ],
        "last_successful_network_address": str(result.network) if result and result.network else None,
        "networks": [str(n.address) for n in networks],
        "requests_sent": outcome.requests,
        "replies_discarded": dict(sorted(outcome.discarded.items())),
        "elapsed_seconds": round(outcome.elapsed, 3),
        "warnings": list(outcome.warnings),
    }
    for warning in outcome.warnings:
        click.echo(f"mqspec: warning: {warning}", err=True)
    if as_json:
        emit(report)
    else:
        if same_site:
            click.echo("result: a directory server of this client's site answered (a same-site reply lists no "
                       "servers: MS-MQSD 2.2.3)")
            click.echo(f"directory servers: {', '.join(report['directory_server_list']) or 'none listed'}"
                       f" (the one that answered is reached via {report['last_successful_network_address']})")
        else:
            click.echo(f"result: {'valid list obtained' if success else 'no valid list obtained'}")
            click.echo(f"directory servers: {', '.join(report['directory_server_list']) or '(none)'}")
        click.echo(f"connected networks: {', '.join(report['connected_network_identifier_list']) or '(none)'}")
        if report["last_successful_network_address"]:
            click.echo(f"via network: {report['last_successful_network_address']}")
    sys.exit(0 if success else 1)


def _split_destinations(text: str) -> list[str]:
    """The comma-separated destinations of one --to (a comma never occurs inside [IPV6])."""
    return [part.strip() for part in text.split(",")]


def _write_discovery_trace(path: str, events: list[dict[str, Any]], enterprise: Guid, site: Guid, timeout: float,
                           mode: str) -> None:
    """The run of ``discover`` as a trace: the client declared, its events; one stderr line and exit 2 on failure."""
    from mqspec.oracle.trace_format import TraceWriter, header

    node = {"name": "mqsd-client", "observes": ["discover", "datagram", "discovered"],
            "mqsd": {"role": "client", "enterprise": str(enterprise), "site": str(site),
                     "wait_for_response": timeout, "timer_slack": min(1.0, timeout / 2)}}
    try:
        with open(path, "w", encoding="utf-8") as f:
            write = TraceWriter("mqsd-discover", f.write)
            write(header(source="mqspec mqsd discover", mode=mode, nodes=[node]))
            for event in events:
                write(event)
    except OSError as exc:
        _fail("error", f"cannot write the trace {path}: {exc.strerror or exc}")

