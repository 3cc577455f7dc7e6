"""``mqspec mqsd probe``: test a live MS-MQSD server against the reference (:mod:`mqspec.mqsd_probe`).

Exit status 0 when every case conforms, 1 on any divergence, 2 on a usage or network error
(one line on standard error).
"""

from __future__ import annotations

import json
import sys

import click

from mqspec.cli.common import emit
from mqspec.cli.mqsd import MODE_OPTION, Seconds, _fail, _required, parse_host_port, server_config, server_options
from mqspec.wording import plural


@click.command()
@click.option("--to", "to_text", metavar="HOST:PORT",
              help="The server to probe, HOST:PORT or [IPV6]:PORT (required; only this address is sent to).")
@server_options("The server's")
@click.option("--timeout", type=Seconds(min=0.01, max=60.0), default=1.0, show_default=True, metavar="S",
              help="How long to wait for each reply (a due reply is asked for 3 times before it is judged missing).")
@click.option("--json", "as_json", is_flag=True, help="Print {\"conformant\": bool, \"cases\": [...]}.")
@MODE_OPTION
def probe(to_text: str | None, enterprise_text: str | None, site_text: str | None, server_texts: tuple[str, ...],
          network_texts: tuple[str, ...], timeout: float, as_json: bool, mode: str) -> None:
    """Send a battery of requests to one MS-MQSD server and compare each reply (or silence) with the reference's.

    Configure the probe as the server is configured (its enterprise, site, directory servers and
    connected networks). Each case is reported with its name, the clause it exercises, the verdict,
    what the reference does and what the server did; a case whose outcome rests on an errata
    register entry rather than a MUST says so ("rests on E-211 (policy)"). After each case that
    expects silence, a valid request checks that the server still answers (after-CASE).
    """
    from mqspec.errata import mark_text
    from mqspec.model.errors import ModelError
    from mqspec.mqsd_probe import ProbeError, ServerConfig
    from mqspec.mqsd_probe import probe as run_probe
    from mqspec.refimpl.effects import Mode

    target = parse_host_port(_required(to_text, "--to"))
    try:
        config = ServerConfig(*server_config(enterprise_text, site_text, server_texts, network_texts))
    except ModelError as exc:
        _fail("usage", str(exc))

    def show(r) -> None:  # type: ignore[no-untyped-def]
        if not as_json:
            line = f"{'ok  ' if r.verdict == 'conform' else 'FAIL'} {r.name:30} {r.clause:15}"
            if r.rests_on:
                line += f" [rests on {mark_text(r.rests_on)}]"
            if r.verdict != "conform":
                line += f" expected {_brief(r.expected)}, observed {_brief(r.observed)}"
                line += f" ({r.detail})" if r.detail else ""
            click.echo(line)

    try:
        report = run_probe(target, config, timeout=timeout, mode=Mode(mode), progress=show)
    except ProbeError as exc:
        _fail("network error", str(exc))
    if as_json:
        emit(report.to_json())
    else:
        bad = sum(c.verdict != "conform" for c in report.cases)
        click.echo(f"{report.target}: " + ("conformant" if not bad else f"{plural(bad, 'case')} of {len(report.cases)} diverge{'s' if bad == 1 else ''}"))
    sys.exit(0 if report.conformant else 1)


def _brief(value: object) -> str:
    if isinstance(value, dict):
        keep = {k: v for k, v in value.items() if k in ("message", "correlation_id", "connected_network_mask",
                                                          "responding_site_id", "error")}
        if "servers" in value:
            keep["servers"] = len(value["servers"])
        return json.dumps(keep)
    return str(value)
