"""An executor that dies ends the job with one line and its own exit status, never a hang (issue 23 row 10)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from /proc), nearest first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_a_python_worker_killed_mid_wave_ends_explore_with_one_line(tmp_path):
    """A task's Python worker killed (SIGKILL) while a wave runs: the command ends within seconds with exit
    status 6 and one line on stderr (no traceback), the wave is not taken as stored."""
    process = subprocess.Popen([sys.executable, "-m", "mqspec", "pipeline", "explore", "--runs", "8", "--wave", "8",
                                "--master", "local[2]", "--out", str(tmp_path / "out")], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline, killed = time.monotonic() + 600, None
        while time.monotonic() < deadline and process.poll() is None:
            if (tmp_path / "out" / "_waves").is_dir():  # the wave's job is writing: its tasks are running
                # the forked workers (a pyspark.daemon whose parent is the daemon): every one, as long as
                # the command runs, so that a worker running a task is among them
                daemons = [p for p in _descendants(process.pid) if "pyspark.daemon" in _cmdline(p)]
                for pid in [p for p in daemons if any(p in _descendants(d) for d in daemons if d != p)]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed = killed or time.monotonic()
            time.sleep(0.2)
        assert killed is not None, "no Python worker was seen running a task"
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    assert process.returncode == 6, err[-3000:]
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("explore: ")]
    assert len(lines) == 1 and lines[0].startswith("mqspec: spark: explore failed: "), err[-3000:]
    assert "Traceback" not in err and time.monotonic() - killed < 240
    assert not list((tmp_path / "out" / "_waves").glob("*/_SUCCESS"))
