"""The model of MS-MQSD: the discovery server (3.2) and client (3.1) as transition functions on concrete states.

A state is a plain dict of the abstract data model's elements (3.1.1, 3.2.1); an event is one of
:data:`SERVER_EVENTS` / :data:`CLIENT_EVENTS`; :func:`server_step` and :func:`client_step` return
the next state and what the event emitted, as tuples:

* ``("open",)``, ``("close",)``, ``("terminate",)``: the server's socket (3.2.3, 3.2.5);
* ``("discard", reason, section)``: a packet dropped and which rule dropped it;
* ``("reply", destination, TopologyServerReply, transport)`` (3.2.5.1);
* ``("broadcast", network, TopologyClientRequest)`` (3.1.5.1);
* ``("start", delay)`` / ``("stop",)``: the Wait For Response Timer (3.1.2.1);
* ``("result", success, servers, networks, network)``: Get Directory Server List completes (3.1.4.1);
* ``("clarify", erratum)``: the clarified reading of that register entry changed what happens here.

Each function follows its section's rules in the text's order; where mqspec's register clarifies
the text (E-200 .. E-213) the clarified reading is taken when ``clarified`` is true. The refinement
check (:mod:`mqspec.proofs.refinement.mqsd`) runs the reference's handlers and these on the same
states and compares. The codec (:mod:`mqspec.model.mqsd`) is shared: a pure codec is exempt.
"""

from __future__ import annotations

import re
from typing import Any

from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqsd import (
    MAX_NETWORKS,
    TopologyClientRequest,
    TopologyServerReply,
    decode_client_request,
    decode_server_reply,
    encode_server_array,
)

WAIT = 15.0
SERVER_EVENTS = ("init", "datagram", "send_failed", "open_failed")
CLIENT_EVENTS = ("init", "get_list", "reply", "timeout")

State = dict[str, Any]


# --- 3.2 the server ---------------------------------------------------------------------------


def server_step(s: State, event: tuple[Any, ...], clarified: bool) -> tuple[State, list[tuple[Any, ...]]]:
    """The server after ``event``: ("init",), ("datagram", data, sender, transport), ("send_failed",), ("open_failed",)."""
    s = dict(s)
    out: list[tuple[Any, ...]] = []
    kind = event[0]
    if kind == "init":  # 3.2.3: "The server starts to listen for client requests"
        s["listening"], s["terminated"] = True, False
        out.append(("open",))
    elif kind == "send_failed":  # 3.2.5: "close and reopen the socket"
        out += [("close",), ("open",)]
    elif kind == "open_failed":  # 3.2.5: "If the socket cannot be opened, the server thread MUST terminate"
        s["listening"], s["terminated"] = False, True
        out.append(("terminate",))
    elif kind == "datagram":
        _, data, sender, transport = event
        if not s["listening"]:
            out.append(("discard", "not_listening", "MS-MQSD 3.2.5"))
        else:
            try:  # the Version and Reserved a server ignores, a request without its IPX part (E-021)
                request = decode_client_request(data, lenient=True)
            except DecodeError:
                out.append(("discard", "malformed", "MS-MQSD 3.2.5"))  # clarification E-211
            else:
                out += _answer(s, request, sender, transport, clarified)
    else:
        raise ValueError(kind)
    return s, out


def _answer(s: State, request: TopologyClientRequest, sender: Any, transport: Any,
            clarified: bool) -> list[tuple[Any, ...]]:
    """3.2.5.1 Receiving a TopologyClientRequest."""
    if clarified and request.enterprise_id != s["enterprise_identifier"]:  # clarification E-210
        return [("clarify", "E-210"), ("discard", "other_enterprise", "MS-MQSD 3.2.5.1")]
    networks = tuple(s["connected_network_identifier_list"])
    if not 1 <= len(networks) <= MAX_NETWORKS:  # E-209: ConnectedNetworkCount "MUST be in the range 1 to 32"
        return [("discard", "no_conformant_reply", "MS-MQSD 3.2.5.1")]
    # IP: the mask is 0; IPX: a bit for every network placed in the array (E-207)
    mask = 0 if transport.value == "ip" else (1 << len(networks)) - 1
    if s["site_identifier"] == request.site_id:
        reply = TopologyServerReply(request.request_id, networks, mask)
    elif s["directory_server_list"]:
        reply = TopologyServerReply(request.request_id, networks, mask, s["site_identifier"],
                                    tuple(s["directory_server_list"]))
    elif clarified:  # E-208: no server to list for another site's client: silence
        return [("clarify", "E-208"), ("discard", "no_conformant_reply", "MS-MQSD 3.2.5.1")]
    else:
        reply = TopologyServerReply(request.request_id, networks, mask)
    return [("reply", sender, reply, transport)]


# --- 3.1 the client ---------------------------------------------------------------------------


def _current(s: State) -> Any:
    """NetworkAddressList at CurrentNetworkIndex, counted from 1 (E-200); None when there is none."""
    i = s["current_network_index"]
    return s["network_address_list"][i - 1] if 1 <= i <= s["number_of_network_addresses"] else None


def client_step(s: State, event: tuple[Any, ...], clarified: bool) -> tuple[State, list[tuple[Any, ...]]]:
    """The client after ``event``: ("init", enterprise), ("get_list", addresses, new_guid), ("reply", data,
    received_on), ("timeout",)."""
    s = dict(s)
    out: list[tuple[Any, ...]] = []
    kind = event[0]
    if kind == "init":  # 3.1.3
        s["enterprise_identifier"] = event[1]
        s["valid_last_successful_network_address"] = False
    elif kind == "get_list":
        _get_list(s, out, event[1], event[2], clarified)
    elif kind == "reply":
        _reply(s, out, event[1], event[2], clarified)
    elif kind == "timeout":
        _no_response(s, out, clarified)
    else:
        raise ValueError(kind)
    return s, out


def _get_list(s: State, out: list[tuple[Any, ...]], addresses: tuple[Any, ...], new_guid: Guid,
              clarified: bool) -> None:
    """3.1.4.1 Get Directory Server List."""
    s["network_address_list"] = tuple(addresses)
    s["number_of_network_addresses"] = len(addresses)
    if s["valid_last_successful_network_address"] and not any(a.ras for a in addresses):
        # the lists obtained before still hold, unless (clarified, E-206) their network is gone
        if clarified and s["last_successful_network_address"] not in addresses:
            out.append(("clarify", "E-206"))
        else:
            _complete(s, out, True, clarified)
            return
    if clarified and not addresses:  # E-201: nowhere to broadcast
        out.append(("clarify", "E-201"))
        s["valid_last_successful_network_address"] = False
        _complete(s, out, False, clarified)
        return
    s["request_id"] = new_guid
    s["current_network_index"] = 0
    s["topology_server_reply_received"] = False
    if clarified:
        s["earlier_network_reply"] = None  # E-204
    _send(s, out, clarified)


def _send(s: State, out: list[tuple[Any, ...]], clarified: bool) -> None:
    """3.1.5.1 Sending a TopologyClientRequest: next network, LastTopologyServerReply empty, the timer, the broadcast."""
    s["current_network_index"] += 1
    if clarified and s["last_topology_server_reply"] is not None:
        s["earlier_network_reply"] = s["last_topology_server_reply"]  # E-204
    s["last_topology_server_reply"] = None
    out.append(("start", s["wait_for_response_timeout"]))
    request = TopologyClientRequest(s["enterprise_identifier"],
                                    s["request_id"] if s["request_id"] is not None else Guid.NULL,
                                    s["site_identifier"])
    network = _current(s)
    if network is not None:
        out.append(("broadcast", network, request))


def _remember(s: State, network: Any) -> None:
    s["last_successful_network_address"] = network
    s["valid_last_successful_network_address"] = True


def _reply(s: State, out: list[tuple[Any, ...]], data: bytes, received_on: Any, clarified: bool) -> None:
    """3.1.5.2 Receiving a TopologyServerReply: the three discard rules, then cases (A) .. (E)."""
    if received_on != _current(s):
        out.append(("discard", "wrong_network", "MS-MQSD 3.1.5.2"))
        return
    try:
        reply = decode_server_reply(data, lenient=True)
    except DecodeError:
        out.append(("discard", "malformed", "MS-MQSD 3.1.5.2"))
        return
    if reply.correlation_id != s["request_id"]:
        out.append(("discard", "wrong_correlation", "MS-MQSD 3.1.5.2"))
        return
    last_network = s["current_network_index"] == s["number_of_network_addresses"]
    local = reply.directory_service_server_size == 0
    empty = s["last_topology_server_reply"] is None
    if not last_network and local:  # (A)
        s["last_topology_server_reply"] = reply
        s["topology_server_reply_received"] = True
        _remember(s, received_on)
        out.append(("stop",))
        _send(s, out, clarified)
    elif not last_network and not empty and not local:  # (B)
        if clarified:
            out += [("clarify", "E-205"), ("stop",)]
        _send(s, out, clarified)
    elif last_network and local:  # (C)
        out.append(("stop",))
        _remember(s, received_on)
        if clarified and empty:
            out.append(("clarify", "E-203"))
            s["last_topology_server_reply"] = reply
        _populate(s)
        _complete(s, out, True, clarified)
    elif empty and not local:  # (D)
        s["last_topology_server_reply"] = reply
        s["topology_server_reply_received"] = True
        _remember(s, received_on)
        out += [("stop",), ("start", s["wait_for_response_timeout"])]
    else:  # (E)
        out.append(("stop",))
        _populate(s)
        _remember(s, received_on)
        _complete(s, out, True, clarified)


def _no_response(s: State, out: list[tuple[Any, ...]], clarified: bool) -> None:
    """3.1.6.1 No Server Response."""
    if s["current_network_index"] != s["number_of_network_addresses"]:
        _send(s, out, clarified)
        return
    if s["last_topology_server_reply"] is None and not s["topology_server_reply_received"]:
        s["valid_last_successful_network_address"] = False
        _complete(s, out, False, clarified)
        return
    if clarified and s["last_topology_server_reply"] is None and s["earlier_network_reply"] is not None:
        out.append(("clarify", "E-204"))
        s["last_topology_server_reply"] = s["earlier_network_reply"]
    _populate(s)
    _complete(s, out, True, clarified)


_SEPARATORS = re.compile("[,\x00]")


def _populate(s: State) -> None:
    """3.1.7.1 (when the reply lists servers) and 3.1.7.2."""
    last = s["last_topology_server_reply"]
    if last is not None and last.directory_service_server_size != 0:
        s["directory_server_list"] = ()
        if last.servers:  # "remove the first two Unicode characters" of each item
            items = _SEPARATORS.split(encode_server_array(last.servers).decode("utf-16-le", "surrogatepass"))
            s["directory_server_list"] = tuple(item[2:] for item in items[:-1])
    s["connected_network_identifier_list"] = tuple(last.connected_networks) if last is not None else ()


def _complete(s: State, out: list[tuple[Any, ...]], success: bool, clarified: bool) -> None:
    network = s["last_successful_network_address"] if s["valid_last_successful_network_address"] else None
    out.append(("result", success, tuple(s["directory_server_list"]),
                tuple(s["connected_network_identifier_list"]), network))
    if clarified:
        s["request_id"] = None  # E-202: late replies fail the correlation check
