"""Write the sample inputs the README's examples use (``samples/``), from mqspec's own scenarios and codecs.

    python tools/make_samples.py [--out samples]

* ``change-propagation.bin``: one MC-MQDSRP ChangePropagationMessage, the first with changes that the
  PEC sends in the section 4.1 example (scenarios/4.1-adding-a-site.yaml, clarified, seed 0);
* ``change-propagation.json``: that message as ``mqspec decode --protocol mqdsrp`` prints it;
* ``adding-a-site.ndjson``: the trace of that run (``mqspec trace record``), which ``mqspec check`` replays;
* ``replication.pcap``: a small capture on port 1801, written with mqspec's pcap writer
  (mqspec.capture.writer): every replication message of that run as an MQQB UserMessage over TCP
  to port 1801 (one connection per pair of servers), then an MS-MQSD request and the server's reply
  over UDP port 1801 (the section 4 packets);
* ``replication.topology.json``: the capture's node declarations (``trace from-pcap --topology``;
  ``pipeline check`` reads it beside the capture): the MS-MQSD server, so that its reply is checked
  against MS-MQSD 3.2.5.1.

The bytes are the same on every run; ``tests/test_samples.py`` checks that the committed files are what
this tool writes.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "4.1-adding-a-site.yaml"
#: where the capture puts each server of the example (the names come from the format names DIRECT=OS:<name>)
ADDRESS = {"PEC0": "10.0.0.1", "PSC1": "10.0.0.2", "PSC2": "10.0.0.3"}
#: the MS-MQSD server and the client of the capture's discovery exchange
MQSD_SERVER, MQSD_CLIENT = ("DC1", "10.0.0.4"), ("10.0.0.9", 50000)


def trace_text() -> str:
    """The 4.1 example's trace, as ``mqspec trace record scenarios/4.1-adding-a-site.yaml`` writes it."""
    from mqspec.oracle.record import record_scenario
    from mqspec.refimpl.effects import Mode
    from mqspec.refimpl.scenario import load

    out = io.StringIO()
    record_scenario(load(SCENARIO), mode=Mode.CLARIFIED, seed=0, write=out.write)
    return out.getvalue()


def message(sends: list[dict]) -> bytes:
    """The first ChangePropagationMessage carrying changes that the PEC sends."""
    from mqspec.model import mqdsrp

    for e in sends:
        body = bytes.fromhex(e["body"])
        decoded = mqdsrp.decode(body)
        if e["node"] == "PEC0" and type(decoded).__name__ == "ChangePropagationMessage" and decoded.changes:
            return body
    raise SystemExit("make_samples: the 4.1 example sends no ChangePropagationMessage with changes")


def capture(sends: list[dict]) -> bytes:
    """The replication messages over TCP port 1801, then the section 4 discovery exchange over UDP port 1801."""
    from mqspec.capture import mqqb
    from mqspec.capture.writer import MSMQ_PORT, TcpConversation, pcap_bytes, udp_frame
    from mqspec.model.examples_mqsd import CLIENT_REQUEST, REPLY_LOCAL_SITE

    conversations: dict[tuple[str, str], TcpConversation] = {}
    frames: list[bytes] = []
    for e in sends:
        pair = (e["node"], e["to"])
        if pair not in conversations:
            conversations[pair] = TcpConversation((ADDRESS[pair[0]], 40000 + len(conversations)),
                                                  (ADDRESS[pair[1]], MSMQ_PORT))
            frames += conversations[pair].handshake()
        packet = mqqb.build_user_message(e["queue"], bytes.fromhex(e["body"]), base_flags=e["priority"])
        frames += conversations[pair].send(True, packet)
    frames.append(udp_frame(*MQSD_CLIENT, MQSD_SERVER[1], MSMQ_PORT, CLIENT_REQUEST))
    frames.append(udp_frame(MQSD_SERVER[1], MSMQ_PORT, *MQSD_CLIENT, REPLY_LOCAL_SITE))
    return pcap_bytes(frames)


def topology() -> dict:
    """The capture's MS-MQSD server, configured as the section 4 server of the client's site."""
    from mqspec.model import mqsd
    from mqspec.model.examples_mqsd import CLIENT_REQUEST, REPLY_LOCAL_SITE

    request, reply = mqsd.decode(CLIENT_REQUEST), mqsd.decode(REPLY_LOCAL_SITE)
    return {"nodes": [{"name": MQSD_SERVER[0], "addresses": [MQSD_SERVER[1]],
                       "mqsd": {"role": "server", "enterprise": str(request.enterprise_id), "site": str(request.site_id),
                                "connected_networks": [str(g) for g in reply.connected_networks]}}]}


def samples() -> dict[str, bytes]:
    """Every sample file's name and bytes."""
    from mqspec import json64
    from mqspec.model import mqdsrp
    from mqspec.model.jsonform import to_json

    text = trace_text()
    sends = [e for e in map(json.loads, text.splitlines()) if e["event"] == "send"]
    body = message(sends)
    return {
        "change-propagation.bin": body,
        "change-propagation.json": (json64.dumps(to_json(mqdsrp.decode(body)), indent=2) + "\n").encode(),
        "adding-a-site.ndjson": text.encode(),
        "replication.pcap": capture(sends),
        "replication.topology.json": (json.dumps(topology(), indent=2) + "\n").encode(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "samples")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in samples().items():
        (args.out / name).write_bytes(data)
        print(f"{args.out / name}: {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
