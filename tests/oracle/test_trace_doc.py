"""The trace format's specification page (docs/trace_format.rst): an example of every event, words for every field."""

from __future__ import annotations

import copy

import pytest

from mqspec.oracle import trace_doc
from mqspec.oracle.trace_format import EVENTS, FORMAT_VERSION, validate


@pytest.mark.parametrize("kind", list(EVENTS))
def test_every_event_has_an_example_line_the_reader_accepts(kind):
    """The page's example of each event kind is a valid line of the format mqspec writes."""
    example = trace_doc.EXAMPLES[kind]
    assert example["event"] == kind and example["format"] == FORMAT_VERSION
    validate(copy.deepcopy(example))


def test_every_field_of_every_event_is_described():
    """Each field the reader accepts says what it holds (in its specification or in trace_doc.NOTES), so the
    page has no blank cell; NOTES names no field the format lacks."""
    undescribed = [(kind, name) for kind, (fields, _) in EVENTS.items() for name, spec in fields.items()
                   if not getattr(spec, "description", "") and (kind, name) not in trace_doc.NOTES]
    assert undescribed == []
    assert all(name in EVENTS[kind][0] for kind, name in trace_doc.NOTES)


def test_the_examples_show_the_64_bit_form_and_the_ipv6_address_form():
    """A sequence number is written as a decimal string; an IPv6 address as [ADDRESS]:PORT."""
    assert trace_doc.EXAMPLES["directory"]["seq"] == "18446744073709551615"
    assert trace_doc.EXAMPLES["datagram"]["from"].startswith("[::1]:")
