"""Handler vectors for MS-MQSD: one discovery client or server event, its state before and after.

The MS-MQSD handlers (``refimpl/mqsd_server.py``, ``refimpl/mqsd_client.py``) act on a small
state each: :class:`~mqspec.refimpl.mqsd_server.MqsdServer` (3.2.1) or
:class:`~mqspec.refimpl.mqsd_client.MqsdClient` (3.1.1). Their JSON form is the attributes of
that class, by name, in the JSON forms of :mod:`mqspec.model.jsonform` (GUIDs as text, a
decoded reply tagged ``"message"``), plus ``"side"`` (``server`` or ``client``). An effect is
its class name under ``"effect"`` and its fields; a packet it carries is also given as bytes
(``data_hex``). A handler argument is ``{"name", "type", "value"}`` as for MC-MQDSRP; the types
are ``bytes`` (hex), ``guid``, ``str``, ``transport`` (``ip``/``ipx``), ``network`` (a network
address, ``{"name", "ras"}``), ``networks`` (a list of them), ``new_guid`` (the GUID "create a
new GUID" gives, 3.1.4.1) and ``request`` (a TopologyClientRequest, JSON and ``hex``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs

from mqspec.model import mqsd
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter, to_json
from mqspec.refimpl import mqsd_client as client
from mqspec.refimpl import mqsd_server as server
from mqspec.refimpl.effects import CancelTimer, StartTimer
from mqspec.refimpl.mqsd_effects import NetworkAddress, Transport

DOC = "MS-MQSD"


@attrs.frozen
class MqsdHandler:
    """One MS-MQSD handler: its section, the function, the side it acts on and its arguments."""

    name: str
    section: str
    function: Callable[..., Any]
    side: str  # server | client
    params: tuple[tuple[str, str], ...]


def _h(section: str, function: Callable[..., Any], side: str, *params: tuple[str, str]) -> MqsdHandler:
    return MqsdHandler(function.__name__, section, function, side, params)


#: every MS-MQSD handler a vector can run, by function name
MQSD_HANDLERS: dict[str, MqsdHandler] = {h.name: h for h in (
    _h("3.2.3", server.server_initialization, "server"),
    _h("3.2.5", server.receive_datagram, "server", ("data", "bytes"), ("sender", "str"), ("transport", "transport")),
    _h("3.2.5", server.send_failed, "server", ("error", "str")),
    _h("3.2.5", server.socket_open_failed, "server", ("error", "str")),
    _h("3.2.5.1", server.receive_topology_client_request, "server", ("request", "request"), ("sender", "str"),
       ("transport", "transport")),
    _h("3.1.3", client.client_initialization, "client", ("enterprise_id", "guid")),
    _h("3.1.4.1", client.get_directory_server_list, "client", ("network_addresses", "networks"),
       ("new_guid", "new_guid")),
    _h("3.1.5.1", client.send_topology_client_request, "client"),
    _h("3.1.5.2", client.receive_topology_server_reply, "client", ("data", "bytes"), ("received_on", "network")),
    _h("3.1.6.1", client.no_server_response, "client"),
    _h("3.1.7.1", client.populate_directory_server_list, "client"),
    _h("3.1.7.2", client.populate_connected_network_identifier_list, "client"),
)}

_SIDES = {"server": server.MqsdServer, "client": client.MqsdClient}


def plain(value: Any) -> Any:
    """The value as plain JSON data (enumerations become their values)."""
    return json.loads(json.dumps(value))


def state_to_json(state: object) -> dict[str, Any]:
    side = next(name for name, cls in _SIDES.items() if type(state) is cls)
    return plain({"side": side, **converter.unstructure(state)})


def state_from_json(d: dict[str, Any]) -> object:
    fields = {k: v for k, v in d.items() if k != "side"}
    return converter.structure(fields, _SIDES[d["side"]])


def effect_to_json(effect: object) -> dict[str, Any]:
    """One effect, tagged with its class; a packet it sends is also given as ``data_hex``."""
    if type(effect) in (StartTimer, CancelTimer):
        out: dict[str, Any] = {"effect": type(effect).__name__, "node": effect.node,  # type: ignore[attr-defined]
                               "timer": effect.timer.kind}  # type: ignore[attr-defined]
        if type(effect) is StartTimer:
            out["delay"] = float(effect.delay)  # type: ignore[attr-defined]
        return out
    out = {"effect": type(effect).__name__, **converter.unstructure(effect)}
    data = getattr(effect, "data", None)
    if isinstance(data, bytes):
        out["data_hex"] = data.hex()
    return plain(out)


def arg_to_json(kind: str, value: object) -> dict[str, Any]:
    if kind == "bytes":
        return {"type": kind, "value": value.hex()}  # type: ignore[attr-defined]
    if kind == "request":
        return {"type": kind, "value": to_json(value), "hex": mqsd.encode(value).hex()}  # type: ignore[arg-type]
    if kind in ("guid", "new_guid"):
        return {"type": kind, "value": str(value)}
    if kind == "transport":
        return {"type": kind, "value": value.value}  # type: ignore[attr-defined]
    if kind == "network":
        return {"type": kind, "value": converter.unstructure(value)}
    if kind == "networks":
        return {"type": kind, "value": [converter.unstructure(n) for n in value]}  # type: ignore[attr-defined]
    if kind == "str":
        return {"type": kind, "value": value}
    raise ModelError(f"unknown MS-MQSD argument type {kind!r}")


def arg_from_json(arg: dict[str, Any]) -> object:
    kind, value = arg["type"], arg["value"]
    if kind == "bytes":
        return bytes.fromhex(value)
    if kind == "request":
        request = mqsd.decode(bytes.fromhex(arg["hex"]))
        if to_json(request) != value:
            raise ModelError("a request argument's JSON and its bytes (hex) disagree")
        return request
    if kind == "guid":
        return Guid.parse(value)
    if kind == "new_guid":
        guid = Guid.parse(value)
        return lambda: guid
    if kind == "transport":
        return Transport(value)
    if kind == "network":
        return converter.structure(value, NetworkAddress)
    if kind == "networks":
        return tuple(converter.structure(n, NetworkAddress) for n in value)
    if kind == "str":
        return value
    raise ModelError(f"unknown MS-MQSD argument type {kind!r}")


def event_json(spec: MqsdHandler, args: dict[str, Any], mode: str, now: float, *, document: str = DOC,
               encode: Callable[[str, Any], dict[str, Any]] | None = None) -> dict[str, Any]:
    """``event.json`` of an MS-MQSD event (or, with ``document`` and ``encode``, of another document's)."""
    if set(args) != {name for name, _ in spec.params}:
        raise TypeError(f"{spec.name} takes {[n for n, _ in spec.params]}, the situation gave {sorted(args)}")
    encode = encode or arg_to_json
    return {"handler": spec.name, "document": document, "section": spec.section, "mode": mode, "now": float(now),
            "args": [{"name": name, **encode(kind, args[name])} for name, kind in spec.params]}


def run_event(pre: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Rebuild the state of ``pre.json``, run the MS-MQSD event of ``event.json``, return post, effects, result."""
    from mqspec.refimpl.effects import Context, Mode

    state = state_from_json(pre)
    spec = MQSD_HANDLERS[event["handler"]]
    if (spec.side, [(a["name"], a["type"]) for a in event["args"]]) != (pre["side"], list(spec.params)):
        raise ValueError(f"{spec.name} acts on a {spec.side} and takes {list(spec.params)}")
    args = [arg_from_json(a) for a in event["args"]]
    ctx = Context("node", Mode(event["mode"]), event["now"])
    returned = spec.function(state, ctx, *args)
    if returned is not None:
        raise ModelError(f"{spec.name} returned {returned!r}; MS-MQSD handlers return nothing")
    return {"post": state_to_json(state), "effects": [effect_to_json(e) for e in ctx.effects], "returned": None}


#: the names :mod:`mqspec.vectors.handlers` looks up in each document's module
TABLE, encode_arg = MQSD_HANDLERS, arg_to_json
