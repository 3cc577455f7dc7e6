"""What the MS-MQSD and MS-MQCN replays share: outputs owed by inputs, and the window that closes them.

Each protocol replay (:mod:`.replay_mqsd`, :mod:`.replay_mqsd_client`, :mod:`.replay_mqcn`,
:mod:`.replay_mqcn_client`) runs its node's inputs through the reference and keeps the outputs
the reference made and the trace has yet to show (``pending``: objects with ``input_index``, the
event that made them, and ``ordinal``, which input of the node it was). An output is owed until
the node's ``window``-th next input after its own, or the end of the trace; then it is a
``missing-output`` (:meth:`WindowedReplay._missing` says which). The first divergence is kept (every
one, with ``check --all``: :class:`~mqspec.oracle.replay.DivergenceLog`).
"""

from __future__ import annotations

from typing import Any

from mqspec.refimpl.effects import Mode

from .replay import Divergence, DivergenceLog


class WindowedReplay(DivergenceLog):
    """The state and the window rule of one node's protocol replay (see the module docstring)."""

    def __init__(self, name: str, mode: Mode, window: int) -> None:
        self.name = name
        self.mode = mode
        self.window = window
        self.pending: list[Any] = []
        self.inputs = 0
        self.checked = 0
        self._init_log()
        self.errata: set[str] = set()
        self.notes: list[str] = []

    def owes_before(self, index: int) -> bool:
        """Whether an input before ``index`` still owes an output (the checker follows the node)."""
        return not self.halted and any(o.input_index < index for o in self.pending)

    def finish(self, end: int, clock: float | None = None) -> None:
        """The trace ended: every output still owed is missing."""
        if not self.halted:
            self._close(self.inputs + self.window + 2)

    def _next_input(self) -> None:
        """A new input of the node: close what the window no longer covers, and count it."""
        self._close(self.inputs + 1)
        self.inputs += 1
        self.checked += 1

    def _close(self, upto: int) -> None:
        """Outputs of inputs up to ordinal ``upto - window - 1`` had to be seen by now."""
        last = upto - self.window - 1
        for owed in [o for o in self.pending if o.ordinal <= last]:
            self.pending.remove(owed)
            self._diverge(self._missing(owed))

    def _missing(self, owed: Any) -> Divergence:
        raise NotImplementedError
