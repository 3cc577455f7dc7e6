"""Where the pipeline keeps its results: one output folder at one URI, Parquet datasets and files.

``--out`` is a URI (``file:///...``, ``hdfs://...``, ``s3a://...``) or a local path (made a
``file://`` URI). Spark writes the Parquet datasets there; every other file (markers, JSON,
counterexamples, and the traces the executors write) goes through pyarrow's file system for the
same URI (:class:`Location`, usable on the driver and on the executors alike), so nothing lands
beside it under another name. On a cluster the URI must name storage the driver and every executor
share: :mod:`mqspec.pipeline.preflight` checks that before a job.

A campaign computes in *waves* (one Spark job each) and stores each wave in its own folder under
``DIR/_waves``. A wave counts as stored when Spark's ``_SUCCESS`` is there *and* its rows are the
runs its name promises (and the trace files they name exist): a commit whose files the driver
cannot see, or that lost some, is not taken for done. Resuming removes the waves that do not pass
(only folders this module names), then computes what is missing. The datasets a user reads
(``runs/``, ``violations/``, ...) are derived from the stored waves at the end of every invocation,
sorted, so they are the same whatever the waves, the partitioning or the master.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

WAVES = "_waves"
_WAVE = re.compile(r"^wave-(\d{9})-(\d{9})$")
#: URI schemes pyarrow knows by another name than Hadoop
_PYARROW_SCHEME = {"s3a": "s3", "s3n": "s3"}


def to_uri(text: str | Path) -> str:
    """A URI for a ``--out`` or an input: URIs as given, local paths absolute ``file://`` URIs."""
    text = str(text)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text) or text.startswith("file:/"):
        return text
    return Path(text).expanduser().resolve().as_uri()


def is_uri(text: str) -> bool:
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:/", text))


class Location:
    """A file or folder at a URI, read and written through pyarrow's file system for that URI."""

    def __init__(self, uri: str | Path) -> None:
        self.uri = to_uri(uri).rstrip("/") or "/"
        from pyarrow import fs

        parts = urlsplit(self.uri)
        scheme = _PYARROW_SCHEME.get(parts.scheme, parts.scheme)
        self.fs, self.path = fs.FileSystem.from_uri(parts._replace(scheme=scheme).geturl())

    def __repr__(self) -> str:
        return f"Location({self.uri!r})"

    def __str__(self) -> str:
        return self.uri

    def child(self, *names: str) -> Location:
        return Location("/".join([self.uri, *names]))

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[-1]

    def _info(self) -> Any:
        return self.fs.get_file_info(self.path)

    def exists(self) -> bool:
        from pyarrow import fs

        return self._info().type != fs.FileType.NotFound

    def is_dir(self) -> bool:
        from pyarrow import fs

        return self._info().type == fs.FileType.Directory

    def size(self) -> int | None:
        info = self._info()
        return info.size if info.is_file else None

    def names(self) -> list[str]:
        """The names in this folder (none when it does not exist), sorted."""
        from pyarrow import fs

        if not self.is_dir():
            return []
        return sorted(i.base_name for i in self.fs.get_file_info(fs.FileSelector(self.path)))

    def sizes(self) -> dict[str, int]:
        """Name -> size of the files in this folder."""
        from pyarrow import fs

        if not self.is_dir():
            return {}
        return {i.base_name: i.size for i in self.fs.get_file_info(fs.FileSelector(self.path)) if i.is_file}

    def mkdir(self) -> None:
        self.fs.create_dir(self.path, recursive=True)

    def remove(self) -> None:
        """Delete this folder and what it holds, or this file (nothing when it is not there)."""
        from pyarrow import fs

        info = self._info()
        if info.type == fs.FileType.Directory:
            self.fs.delete_dir(self.path)
        elif info.type != fs.FileType.NotFound:
            self.fs.delete_file(self.path)

    def read_bytes(self) -> bytes:
        with self.fs.open_input_stream(self.path) as f:
            return f.read()

    def read_text(self) -> str:
        return self.read_bytes().decode("utf-8")

    def write_bytes(self, data: bytes) -> None:
        """Write through a temporary name, then move it in place (a reader never sees half a file)."""
        parent = self.uri.rsplit("/", 1)[0]
        Location(parent).mkdir()
        tmp = Location(f"{parent}/.{self.name}.{uuid.uuid4().hex[:12]}.tmp")
        with tmp.fs.open_output_stream(tmp.path) as f:
            f.write(data)
        try:
            self.fs.move(tmp.path, self.path)
        except OSError:  # an object store without an atomic move over an existing object
            self.remove()
            self.fs.move(tmp.path, self.path)

    def write_text(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))


def wave_name(first: int, end: int) -> str:
    return f"wave-{first:09d}-{end:09d}"


def wave_range(name: str) -> tuple[int, int] | None:
    m = _WAVE.match(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def wave_folders(out: Location) -> list[str]:
    """The names of the wave folders under ``DIR/_waves`` (committed or not), sorted."""
    return [n for n in out.child(WAVES).names() if _WAVE.match(n)]


def committed(out: Location, name: str) -> bool:
    return out.child(WAVES, name, "_SUCCESS").exists()


def missing_ranges(done: Iterable[tuple[int, int]], total: int, wave: int) -> list[tuple[int, int]]:
    """The runs in [0, total) outside the ``done`` [first, end) ranges, as ranges of at most ``wave`` runs."""
    ranges: list[tuple[int, int]] = []
    run = 0
    for first, end in sorted(done) + [(total, total)]:
        while run < min(first, total):
            stop = min(first, total, run + wave)
            ranges.append((run, stop))
            run = stop
        run = max(run, end)
    return ranges


def write_dataset(df: Any, path: Location, order: list[str]) -> None:
    """Write ``df`` sorted by ``order`` as one Parquet file set, replacing what a previous invocation wrote."""
    df.orderBy(*order).coalesce(1).write.mode("overwrite").parquet(path.uri)


def write_json(path: Location, data: Any) -> None:
    """Deterministic JSON (sorted keys, a final newline), written whole or not at all."""
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Location) -> Any:
    return json.loads(path.read_text())
