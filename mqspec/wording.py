"""Counts in messages: ``plural(1, "test")`` is "1 test", ``plural(3, "test")`` is "3 tests"."""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """A count and its noun in the right number (``nouns`` for irregular plurals).

    >>> plural(1, "byte"), plural(0, "byte"), plural(2, "entry", "entries")
    ('1 byte', '0 bytes', '2 entries')
    """
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"
