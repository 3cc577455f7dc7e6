"""The errors every codec raises: one type for bad bytes, one for bad use of the model."""

from __future__ import annotations

import attrs


@attrs.define(auto_exc=True, eq=False)
class DecodeError(Exception):
    """Bytes that section 2 of a document forbids.

    ``field`` is ``Structure.Field`` of the innermost structure being read, ``offset`` the byte
    offset (from the start of the decoded buffer) where the bad field starts, ``section`` the
    document and section whose MUST the bytes break, and ``context`` the path of enclosing
    structures, outermost first (e.g. ``("ChangePropagationMessage.DirectoryChanges[3]",)``).
    """

    field: str
    offset: int
    section: str
    reason: str
    context: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """The full field path, outermost structure first."""
        return ".".join((*self.context, self.field))

    @property
    def message(self) -> str:
        """The name of the outermost structure (the message) being decoded."""
        return self.path.split(".", 1)[0].split("[", 1)[0]

    def within(self, where: str) -> DecodeError:
        """Return this error with ``where`` prepended to its context (used by array loops)."""
        self.context = (where, *self.context)
        return self

    def __str__(self) -> str:
        text = f"{self.field} at offset {self.offset} ({self.section}): {self.reason}"
        if self.context:
            text += f" [in {'.'.join(self.context)}]"
        return text


class ModelError(ValueError):
    """A value that cannot be represented on the wire (a model-usage error, not bad bytes)."""
