"""Mutations of a recorded trace for the oracle's mutation tests: flip, drop, perturb.

A trace here is its list of events (one trace, the header first), so event index i is line
i + 1 of its NDJSON text. Each mutation returns a new list of events (the events it does not
touch are shared).
"""

from __future__ import annotations

import json
from typing import Any

from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import ChangeRequestMessage

from mqspec.oracle.state import state_paths
from mqspec.oracle.trace_format import PURGE_STATES, ROLES


def parse(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def dump(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)


def indices(events: list[dict[str, Any]], kind: str) -> list[int]:
    return [i for i, e in enumerate(events) if e["event"] == kind]


def flip(events: list[dict[str, Any]], index: int, offset: int) -> list[dict[str, Any]]:
    """Event ``index`` (a send) with byte ``offset`` of its body inverted."""
    body = bytearray.fromhex(events[index]["body"])
    body[offset] ^= 0xFF
    return [*events[:index], {**events[index], "body": body.hex()}, *events[index + 1:]]


def drop(events: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    return events[:index] + events[index + 1:]


def free_offsets(event: dict[str, Any]) -> frozenset[int]:
    """Byte offsets of a send the implementation chooses: the RequestIdentifier of a change
    request the node originates (3.1.7.1.1, "an internal value"); a flip there is allowed
    until a later event contradicts it."""
    body = bytes.fromhex(event["body"])
    try:
        message = mqdsrp.decode(body)
    except DecodeError:
        return frozenset()
    if type(message) is not ChangeRequestMessage or message.requester_name != event["node"]:
        return frozenset()
    other = mqdsrp.encode(ChangeRequestMessage(message.site_id, message.partition_id,
                                               message.request_identifier ^ 0xFFFFFFFF, message.requester_name,
                                               message.psc_name, message.change))
    return frozenset(i for i, (a, b) in enumerate(zip(body, other)) if a != b)


def snapshot_leaves(events: list[dict[str, Any]], index: int) -> list[tuple[str, ...]]:
    """Every value a snapshot gives, and every key of its keyed collections."""
    state = events[index]["state"]
    leaves = state_paths(state)
    keys = [("partitions", pid, "(key)") for pid in state.get("partitions", {})]
    keys += [("partitions", pid, "objects", guid, "(key)")
             for pid, p in state.get("partitions", {}).items() for guid in p.get("objects", {})]
    return leaves + keys


def perturb(events: list[dict[str, Any]], index: int, path: tuple[str, ...]) -> list[dict[str, Any]]:
    """Event ``index`` (a snapshot) with the value (or key) at ``path`` changed to another valid one."""
    event = json.loads(json.dumps(events[index]))
    state = event["state"]
    if path[-1] == "(key)":
        parent = _at(state, path[:-2])
        old = path[-2]
        parent[str(Guid.from_name(f"perturbed:{old}"))] = parent.pop(old)
    else:
        parent = _at(state, path[:-1])
        key: Any = int(path[-1]) if isinstance(parent, list) else path[-1]
        parent[key] = _other(path, parent[key])
    return [*events[:index], event, *events[index + 1:]]


def _at(state: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        state = state[int(part)] if isinstance(state, list) else state[part]
    return state


def _other(path: tuple[str, ...], value: Any) -> Any:
    name = path[-1]
    if isinstance(value, dict):  # an empty objects collection gains one
        return {str(Guid.from_name("perturbed:object")): {"type": 1, "path": "x", "seq": 1}}
    if isinstance(value, list):  # an empty neighbor or tombstone collection gains one
        if path[-1] == "tombstones":
            return [{"guid": str(Guid.from_name("perturbed")), "partition": str(Guid.NULL), "seq": 1, "type": 1,
                     "scope": 1}]
        return [{"name": "PERTURBED", "partition": str(Guid.NULL), "acked_seq": 0, "acked_pec_seq": 0, "available": 0}]
    if name in ("partition", "guid", "site"):
        return str(Guid.from_name(f"perturbed:{value}"))
    if name == "purge_state":
        return PURGE_STATES[(PURGE_STATES.index(value) + 1) % len(PURGE_STATES)]
    if name == "role":
        return ROLES[(ROLES.index(value) + 1) % len(ROLES)]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and value.isdigit():  # a sequence number, as format 3 writes it
        return str(int(value) + 1)
    if value is None:
        return "x"
    return value + "x"


def apply_twice(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """A node that applies a duplicated change again: after the second receipt of the same bytes,
    the directory event the first receipt raised is raised once more. Returns the trace and the
    index of that event."""
    first_seen: dict[tuple[str, str], int] = {}
    for i, e in enumerate(events):
        if e["event"] != "receive":
            continue
        key = (e["node"], e["body"])
        if key not in first_seen:
            first_seen[key] = i
            continue
        raised = _directory_after(events, first_seen[key])
        if raised is not None and _directory_after(events, i) is None:
            at = i + 1
            return [*events[:at], {**raised, "t": e["t"]}, *events[at:]], at
    raise LookupError("no duplicated change in the trace")


def _directory_after(events: list[dict[str, Any]], i: int) -> dict[str, Any] | None:
    """The first directory update or create the node raised in answer to input ``i``."""
    node = events[i]["node"]
    for e in events[i + 1:]:
        if e.get("node") != node:
            continue
        if e["event"] in ("start", "crash", "client_request", "receive", "timer"):
            return None
        if e["event"] == "directory" and e["operation"] in ("create", "update"):
            return e
    return None


def complete_early(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """A BSC that completes a directory client's request before the change reply arrives: its
    request_completed moved to right after the request. Returns the trace and its new index."""
    for i, e in enumerate(events):
        if e["event"] != "client_request" or not e["node"].startswith("BSC"):
            continue
        j = next((j for j in range(i + 1, len(events)) if events[j]["event"] == "request_completed"
                  and events[j]["node"] == e["node"] and events[j]["request"] == e["request"]), None)
        received = j is not None and any(events[k]["event"] == "receive" and events[k]["node"] == e["node"]
                                         for k in range(i + 1, j))
        if received:
            at = i + 1
            done = {**events[j], "t": e["t"]}
            return [*events[:at], done, *events[at:j], *events[j + 1:]], at
    raise LookupError("no BSC client request answered by a reply in the trace")
