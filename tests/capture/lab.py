"""What the lab-capture tests share: MS-MQSD exchanges, a server's declaration, and checking a capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mqspec.cli.check import check
from mqspec.model import examples_mqsd, mqsd
from mqspec.oracle.check import check_text
from mqspec.oracle.from_pcap import convert
from mqspec.oracle.topology import load

REQUEST, REPLY = examples_mqsd.CLIENT_REQUEST, examples_mqsd.REPLY_LOCAL_SITE
PARSED_REQUEST, PARSED_REPLY = mqsd.decode(REQUEST), mqsd.decode(REPLY)
MQSD_SERVER = {"role": "server", "enterprise": str(PARSED_REQUEST.enterprise_id),
               "site": str(PARSED_REQUEST.site_id),
               "connected_networks": [str(g) for g in PARSED_REPLY.connected_networks]}


def server(name: str = "DC1", *addresses: str) -> dict[str, Any]:
    """An MS-MQSD server declared as the section 4 reply's server is configured."""
    return {"name": name, "addresses": list(addresses or ["10.0.0.1"]), "mqsd": dict(MQSD_SERVER)}


def judged(path: Path, **topology: Any) -> Any:
    """The checker's report on a capture converted with ``topology`` (a sidecar's JSON fields)."""
    return check_text(convert(path, topology=load(topology, "topology")), str(path), coverage=False)[0]


def check_cli(*args: str) -> tuple[int, str, list[str]]:
    """`mqspec check ARGS`: (exit status, stdout, stderr lines)."""
    result = CliRunner().invoke(check, [*args, "--no-coverage"])
    return result.exit_code, result.stdout, result.stderr.splitlines()


def sidecar(capture: Path, **topology: Any) -> None:
    """Write ``capture``'s topology sidecar (``lab.pcap`` -> ``lab.topology.json``)."""
    name = capture.name.split(".")[0]
    (capture.parent / f"{name}.topology.json").write_text(json.dumps(topology))
