"""What a fault matches in a message's decoded content: the ``carrying`` key of drop/duplicate/delay.

``carrying: {site, seq, path}`` (all optional, at least one) selects the replication messages that
hold a DirectoryChange (2.2.4) of that partition (``site``: a site name or ``enterprise``), with
that SeqNumber and that path name; a ChangePropagation (its changes), a SyncReply (its changes)
and a ChangeRequest (its change) hold changes. With ``site`` alone, a message that names the
partition itself matches too: a SyncRequest, SyncReply, PSCAck or AlreadyPurged of that
partition. For example ``drop: {from: PSC1, to: PEC0, carrying: {site: site1, seq: 2}}`` drops
the ChangePropagation that carries SeqNumber 2 of site1, and no other message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid


@attrs.frozen
class Carrying:
    """A parsed ``carrying``: the site name (or "enterprise"), the SeqNumber and the path, each optional."""

    site: str | None = None
    seq: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        parts = [f"{k} {v}" for k, v in (("site", self.site), ("seq", self.seq), ("path", self.path)) if v is not None]
        return ", ".join(parts)


def parse_carrying(fields: Any, site_of: Callable[[object, str], str]) -> Carrying:
    """Validate a ``carrying`` mapping (``fields`` a scenario ``_Fields``; ``site_of`` checks a site name)."""
    from .scenario import ScenarioError

    if not fields.data:
        raise ScenarioError(fields.where, "give at least one of 'site', 'seq' and 'path'")
    site = site_of(fields.data["site"], fields.at("site")) if fields.data.get("site") is not None else None
    seq = fields.opt("seq", int)
    if seq is not None and seq < 0:
        raise ScenarioError(fields.at("seq"), f"expected a sequence number (0 or more), not {seq}")
    return Carrying(site, seq, fields.opt("path", str))


def _changes(message: object) -> tuple[Any, ...]:
    if isinstance(message, (mqdsrp.ChangePropagationMessage, mqdsrp.SyncReplyMessage)):
        return tuple(message.changes)
    if isinstance(message, mqdsrp.ChangeRequestMessage):
        return (message.change,)
    return ()


def carries(body: bytes, carrying: Carrying, partition: Guid | None) -> bool:
    """Whether a replication message body holds what ``carrying`` asks (``partition``: the site's GUID)."""
    try:
        message = mqdsrp.decode(body)
    except DecodeError:
        return False
    for change in _changes(message):
        if partition is not None and change.partition_id != partition:
            continue
        if carrying.seq is not None and change.seq_number.value != carrying.seq:
            continue
        if carrying.path is not None and (change.path_name or "").casefold() != carrying.path.casefold():
            continue
        return True
    if carrying.seq is None and carrying.path is None and partition is not None:
        named = getattr(message, "partition_id", None) or getattr(message, "acked_partition_id", None)
        return named == partition
    return False
