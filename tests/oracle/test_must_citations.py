"""A refusal or a divergence cites a MUST of the section it names, or the register entry it rests on.

The quotes of the specification's sections are committed in docs/spec_text/ (tools/extract_spec.py): each
test below fails when a verdict of mqspec's (an invalid codec vector, an MS-MQSD server's discard, a probe
case, a divergence of an MS-MQSD server in `mqspec check`) names a section whose text has no MUST for it and
carries no register mark (row 5 of issue 24: "no step of 3.2.5.1 reads EnterpriseID").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mqspec.model import mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import TopologyServerReply

from mqspec import errata
from mqspec.mqsd_probe import ServerConfig, _reference, battery, liveness_case
from mqspec.refimpl import mqsd_server
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqsd_effects import Discard, PacketDiscarded, Transport

from .test_check_protocols import (
    ENTERPRISE,
    NETWORK,
    OTHER_SITE,
    SITE,
    exchange,
    reference_reply,
    request,
    server_trace,
    verdict,
)

SPEC_TEXT = Path(__file__).resolve().parents[2] / "docs" / "spec_text"
TEXTS = {doc: {s["section"]: s["text"] for s in json.loads((SPEC_TEXT / f"{doc}.json").read_text())["sections"]}
         for doc in ("MC-MQDSRP", "MS-MQSD", "MS-MQCN")}


def flat(text: str) -> str:
    return " ".join(text.split())


def section_text(document: str, section: str) -> str:
    return flat(TEXTS[document].get(section, ""))


def cites_a_must(document: str, section: str, quote: str) -> bool:
    """The quote is a sentence (or part of one) of the section's text, and holds a MUST."""
    return bool(quote) and "MUST" in quote and flat(quote) in section_text(document, section)


# --- the quoted rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(mqsd_server.RULES))
def test_every_quoted_server_rule_is_a_must_of_its_section(name):
    """refimpl/mqsd_server.RULES, the MUSTs check, probe and discover cite, stand word for word in their sections."""
    section, quote = mqsd_server.RULES[name]
    assert cites_a_must("MS-MQSD", section, quote), (name, section)


def test_the_check_fails_on_a_rule_its_section_does_not_hold():
    """A quote from another section, or without a MUST, is caught (the check can fail)."""
    assert not cites_a_must("MS-MQSD", "3.2.5.1", mqsd_server.RULES["version"][1])  # 2.2.1's sentence
    assert not cites_a_must("MS-MQSD", "3.2.5", "the server sends a TopologyServerReply packet")


# --- probe cases and the server's discards ---------------------------------------------------------


CONFIG = ServerConfig(ENTERPRISE, SITE, (mqsd.DirectoryServiceServer("DS1"),), (NETWORK,))


@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_every_probe_case_rests_on_a_must_or_names_its_register_entry(mode):
    """Each case of the battery, and each liveness case, in both readings."""
    cases = battery(CONFIG)
    for case in [*cases, *(liveness_case(CONFIG, c) for c in cases)]:
        reply, _, entries = _reference(CONFIG, case.data, mode)
        marks = {*case.rests_on, *entries}
        if reply is None and marks:
            continue  # silence resting on E-210, E-211...: the mark says so
        assert cites_a_must("MS-MQSD", case.clause, case.rule), (case.name, mode)


@pytest.mark.parametrize("reason", list(Discard))
def test_every_server_discard_names_a_section_with_a_must_or_its_entry(reason):
    """A discard of the server (3.2.5) without a register entry names a section holding a MUST about it."""
    discards = {
        Discard.MALFORMED: (b"\x00junk", CONFIG),
        Discard.OTHER_ENTERPRISE: (mqsd.encode(request(enterprise=Guid.from_name("x"))), CONFIG),
        Discard.NO_CONFORMANT_REPLY: (mqsd.encode(request(OTHER_SITE)), ServerConfig(CONFIG.enterprise, SITE, (),
                                                                                      (NETWORK,))),
        Discard.NOT_LISTENING: (mqsd.encode(request()), CONFIG),
    }
    if reason not in discards:  # a client's discard: 3.1.5.2's "MUST discard the received packet"
        assert "MUST discard the received packet" in section_text("MS-MQSD", "3.1.5.2")
        return
    data, config = discards[reason]
    server = config.reference()
    ctx = Context("s", Mode.CLARIFIED, 0.0)
    server.listening = reason is not Discard.NOT_LISTENING
    mqsd_server.receive_datagram(server, ctx, data, "c:1", Transport.IP)
    (discard,) = [e for e in ctx.effects if type(e) is PacketDiscarded]
    assert discard.reason is reason
    if discard.erratum is None:
        document, section = discard.section.split(" ")
        assert "MUST" in section_text(document, section), discard
    else:
        assert errata.mark(discard.erratum)


# --- divergences of an MS-MQSD server in mqspec check ------------------------------------------------


def _departures() -> dict[str, str]:
    """One trace per way a server can depart from the reference."""
    same, other = request(rid="a"), request(OTHER_SITE, rid="b")
    good = mqsd.encode(reference_reply(same))
    return {
        "wrong CorrelationID": server_trace(exchange(mqsd.encode(same), mqsd.encode(
            TopologyServerReply(Guid.from_name("z"), (NETWORK,), 0)))),
        "server list to its own site": server_trace(exchange(mqsd.encode(same), mqsd.encode(reference_reply(
            request(OTHER_SITE, rid="a"))))),
        "mask over IP": server_trace(exchange(mqsd.encode(same), mqsd.encode(TopologyServerReply(
            same.request_id, (NETWORK,), 1)))),
        "no server list to another site": server_trace(exchange(mqsd.encode(other), good)),
        "reply to another host": server_trace(exchange(mqsd.encode(same), good, to="127.0.0.9:50000")),
        "reply to another port": server_trace(exchange(mqsd.encode(same), good, to="127.0.0.1:1801")),
        "no reply": server_trace(exchange(mqsd.encode(same), None)),
        "no reply to Version 1": server_trace(exchange(b"\x01" + mqsd.encode(same)[1:], None)),
        "reply to garbage": server_trace(exchange(b"\x00junk", good)),
        "reply to another enterprise": server_trace(exchange(mqsd.encode(request(
            enterprise=Guid.from_name("x"), rid="a")), good)),
        "second reply": server_trace(exchange(mqsd.encode(same), good) + [exchange(mqsd.encode(same), good)[1]]),
        "reply unasked": server_trace([exchange(mqsd.encode(same), good)[1]]),
    }


@pytest.mark.parametrize("departure", sorted(_departures()))
def test_every_server_divergence_quotes_a_must_of_its_clause_or_names_its_entry(departure):
    """Each divergence of check's MS-MQSD server replay cites a MUST of its clause's section, or rests on a
    register entry (E-210, E-211, E-216) and says so."""
    d = verdict(_departures()[departure]).divergence
    assert d is not None, departure
    if d.rests_on:
        assert all(errata.mark(e) for e in d.rests_on)
        assert re.search(r"E-\d{3}", d.summary), d.summary
        return
    if d.kind == "decode":
        assert "MUST" in section_text(d.clause.document, d.clause.section)
        return
    assert cites_a_must(d.clause.document, d.clause.section, d.rule), (departure, d.clause.section, d.rule)


# --- invalid codec vectors ------------------------------------------------------------------------

#: a field the text names otherwise than mqspec's error does
ALIASES = {"propertyid": "property identifier", "propertyvalue": "property value"}
_HEADING = re.compile(r"(?:^|\n)\s*(?:-\s*)?([A-Za-z][A-Za-z0-9_]*)\s*\([^)]*\):")
_MISSING_BYTES = re.compile(r"needs \d+ bytes?|bytes for|declared|left|no terminator|without|cut|ends")


def _paragraph(text: str, name: str) -> str | None:
    """The paragraph that defines field ``name`` (from its ``Name (n bytes):`` heading to the next)."""
    heads = list(_HEADING.finditer(text))
    for i, m in enumerate(heads):
        if m.group(1).lower() == name.lower():
            return text[m.start():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
    return None


def refusal_cites_a_must(error: dict) -> bool:
    """Whether an error.json's section has a MUST for the refused field: the field's paragraph holds one, or a
    sentence naming the field does, or the bytes are missing for a field the section defines, or the section's
    ABNF (which the text says the bytes MUST follow) is what they break; a structure-level error (bytes left
    over) needs a MUST in the section."""
    raw = TEXTS[error["document"]].get(error["section"], "")
    text = flat(raw)
    if "." not in error["field"]:
        return "MUST" in text
    name = re.sub(r"\[\d+\]", "", error["field"].rsplit(".", 1)[1])
    spoken = ALIASES.get(name.lower(), name)
    paragraph = _paragraph(raw, name)
    if paragraph is not None and "MUST" in paragraph:
        return True
    if any("MUST" in s and spoken.lower() in s.lower() for s in re.split(r"(?<=[.:;])\s+", text)):
        return True
    if _MISSING_BYTES.search(error["reason"]) and (paragraph is not None or spoken.lower() in text.lower()):
        return True  # the section defines the field; the bytes to hold it are not there
    return "ABNF" in text and re.search(r"MUST (?:be formatted|be set to a Unicode string in the format)", text) \
        is not None


def test_every_invalid_codec_vector_cites_a_must_or_names_its_entry():
    """Every refusal of the (reduced) codec vectors either rests on a register entry it names or cites a
    section whose text has a MUST for the refused field."""
    from mqspec.vectors.codec import codec_vectors

    uncited = [(v.protocol, v.name, v.error["field"], v.section) for v in codec_vectors(reduced=True)
               if not v.valid and not v.rests_on and not refusal_cites_a_must(v.error)]
    assert uncited == []


def test_the_codec_citation_check_can_fail():
    """A refusal of a field whose section says nothing binding about it is caught."""
    assert not refusal_cites_a_must({"document": "MS-MQSD", "section": "3.2.5", "field": "TopologyServerReply.X",
                                     "reason": "a value"})
    assert refusal_cites_a_must({"document": "MS-MQSD", "section": "2.2.2",
                                 "field": "TopologyClientRequest.IPXNetworkCount", "reason": "33"})
