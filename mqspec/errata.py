"""The errata and clarifications register: every place mqspec departs from, or pins down, the text.

Entries live in ``mqspec/register/*.yaml`` (one file per area, each a list of entries) so that
each chapter's work adds its own file. Every entry quotes the literal text, says what is wrong,
gives evidence a reader can run, and states the resolution mqspec implements.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

import attrs
import yaml

from mqspec import memos

#: erratum: the text is wrong; clarification: it is unclear and mqspec pins one reading down; policy: the
#: text leaves the choice free and mqspec makes one (an implementation choosing otherwise conforms to the
#: text); modelling: mqspec models what the text does not describe
KINDS = ("erratum", "clarification", "policy", "modelling")
_ID = re.compile(r"^E-\d{3}$")

#: ids taken out of the register because the entry was wrong about the text, with why; an id here is
#: never given to another entry, and ``mqspec errata`` answers it with the reason, so a reader who meets
#: the id in an older report, vector or trace learns what became of it
WITHDRAWN = {
    "E-138": "withdrawn 2026-11-28: it said MC-MQDSRP 3.3.7.11 (Complete Sync0 State) ends at \"Set "
             "iPartition.ChangeMissingWindow to MIN_SEQ_NUMBER\", leaving the changes queued during sync0 waiting; "
             "the section's last step is \"Raise a Check Pending Changes event\", so both modes raise it, as the "
             "text does",
}


def _non_empty(_inst: object, attr: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"errata field {attr.name!r} must be non-empty text")


@attrs.frozen
class Erratum:
    """One register entry; ``kind`` says whether the text is wrong, unclear, or silent."""

    id: str = attrs.field(validator=attrs.validators.matches_re(_ID))
    document: str = attrs.field(validator=_non_empty)
    section: str = attrs.field(validator=_non_empty)
    title: str = attrs.field(validator=_non_empty)
    literal: str = attrs.field(validator=_non_empty)
    problem: str = attrs.field(validator=_non_empty)
    evidence: str = attrs.field(validator=_non_empty)
    resolution: str = attrs.field(validator=_non_empty)
    kind: str = attrs.field(default="erratum", validator=attrs.validators.in_(KINDS))

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def load() -> list[Erratum]:
    """Read every register file, check ids are unique, and return the entries sorted by id."""
    entries: list[Erratum] = []
    folder = resources.files("mqspec") / "register"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if not item.name.endswith(".yaml"):
            continue
        try:
            raws = yaml.safe_load(item.read_text(encoding="utf-8")) or []
        except yaml.YAMLError as exc:
            raise ValueError(f"register/{item.name}: not valid YAML: {exc}") from exc
        for raw in raws:
            try:
                entries.append(Erratum(**{k: (v.strip() if isinstance(v, str) else v) for k, v in raw.items()}))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"register/{item.name}: entry {raw.get('id', '?')}: {exc}") from exc
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            raise ValueError(f"errata id {e.id} is used twice")
        if e.id in WITHDRAWN:
            raise ValueError(f"errata id {e.id} was withdrawn and is not given again ({WITHDRAWN[e.id]})")
        seen.add(e.id)
    return sorted(entries, key=lambda e: e.id)


def by_id() -> dict[str, Erratum]:
    return dict(_by_id())


@functools.cache
def _by_id() -> dict[str, Erratum]:
    return {e.id: e for e in load()}


memos.register_cache(_by_id, "the register read once, by id (the marks of verdicts and vectors)")


def mark(entry: str) -> dict[str, str]:
    """The mark a verdict, vector or probe case carries when it rests on register entry ``entry`` rather
    than on a MUST of the text: ``{"id", "kind", "title"}`` (KeyError for an id the register lacks)."""
    e = _by_id()[entry]
    return {"id": e.id, "kind": e.kind, "title": e.title}


def marks(entries: Iterable[str]) -> list[dict[str, str]]:
    """:func:`mark` of each entry, once each, in id order."""
    return [mark(e) for e in sorted(set(entries))]


def mark_text(found: Iterable[dict[str, str]]) -> str:
    """Marks as one line of human output: ``E-210 (clarification), E-211 (policy)``."""
    return ", ".join(f"{m['id']} ({m['kind']})" for m in found)
