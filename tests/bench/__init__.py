"""The benchmarks' tests; :func:`load` imports a benchmark script as a module."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

#: the folder of the benchmark scripts
BENCH = Path(__file__).resolve().parents[2] / "bench"


@functools.cache
def load(name: str) -> ModuleType:
    """``bench/<name>.py`` as a module, loaded once (bench/codec.py puts bench/ on sys.path for its baselines)."""
    spec = importlib.util.spec_from_file_location(f"mqspec_bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  # so its functions pickle (a forked pool's jobs)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module
