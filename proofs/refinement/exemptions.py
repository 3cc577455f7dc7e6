"""What the refinement check leaves out on purpose, each with its reason: the one list `mqspec prove` prints.

Everything else a server runs is checked: every event of a World (Initialization, a directory
client's request, every message 3.1.5.1 dispatches, every Nack, every timer) against the model's
transition for it (:mod:`mqspec.proofs.server_events`), and the MS-MQSD and MS-MQCN handlers
against theirs (:mod:`mqspec.proofs.refinement.mqsd`, :mod:`mqspec.proofs.refinement.mqcn`).
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Exemption:
    """Something a server does that no refinement row checks: what, where, and why not."""

    what: str
    where: str
    reason: str


EXEMPTIONS: tuple[Exemption, ...] = (
    Exemption(
        "the codecs (encode and decode of every message)", "mqspec.model (MC-MQDSRP 2.2, MS-MQSD 2.2, MS-MQCN 2.2)",
        "a pure codec: the model decodes with the same codec, whose round trips, strict refusals and the "
        "specifications' example packets are tested on their own (tests/model, the codec vectors, the fuzzers)"),
    Exemption(
        "the local directory (Create/Update/Delete/Read Directory Object, lookups, Reset Directory Partition)",
        "refimpl/directory.py ([MS-MQDS], modelling E-190 .. E-198)",
        "the environment of MC-MQDSRP, not part of it: the model raises the same [MS-MQDS] events on a copy of "
        "the server's directory run by the same store, and every event's arguments and status and the "
        "directory it leaves are compared"),
    Exemption(
        "a crash (what 3.1.1 does not persist is lost)", "refimpl/mqdsrp_state.py lose_volatile_state (3.1.1)",
        "not an event handler: which attributes persist is data (the persisted marks of 3.1.1's classes); the "
        "Initialization that follows the restart (3.2.3, 3.3.3) is checked on the state the crash left"),
    Exemption(
        "the PSC handover's copying of the old PSC's state", "refimpl/handover.py take_over (modelling E-313)",
        "what MC-MQDSRP leaves to the implementation (an administrator moving the directory database), "
        "modelled by the simulator; the new PSC's Initialization, the site update that follows and Handle "
        "Site Update's take_site_authority (E-315) are checked"),
    Exemption(
        "the runs the World's fast path skips", "refimpl/fastpath.py",
        "no handler runs: Change Propagation Timer firings and empty propagations that change nothing are "
        "stood in for (tests/refimpl/test_fastpath.py shows the same states and verdicts); the campaign of "
        "`mqspec prove` runs half its seeds with the fast path off, so that every firing runs and is checked"),
    Exemption(
        "the records of the clarifications taken, in MC-MQDSRP", "refimpl/effects.py Clarified",
        "annotations of a trace (which register entry a handler followed), not protocol behaviour: no "
        "message, state or directory event depends on them (the MS-MQSD and MS-MQCN checks compare them by "
        "register entry)"),
)


def lines() -> list[str]:
    """The list as `mqspec prove` prints it: one line per exemption."""
    return [f"not checked: {e.what} ({e.where}): {e.reason}" for e in EXEMPTIONS]
