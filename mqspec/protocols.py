"""The wire protocols mqspec decodes, by the name the CLI uses.

Each codec module exposes ``decode(data, *, lenient=False)``, ``encode(obj)`` and
``MESSAGE_TYPES`` (structure name to model type, for the JSON form).
"""

from __future__ import annotations

import importlib
from types import ModuleType

PROTOCOLS: dict[str, str] = {
    "mqdsrp": "mqspec.model.mqdsrp",
    "mqsd": "mqspec.model.mqsd",
    "mqcn": "mqspec.model.mqcn",
}


def codec(name: str) -> ModuleType:
    """The codec module of protocol ``name``."""
    return importlib.import_module(PROTOCOLS[name])
