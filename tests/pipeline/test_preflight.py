"""Before a job, the executors are probed: what they lack is one line and exit 5, in seconds (issue 23 row 1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from mqspec.pipeline import probe
from mqspec.pipeline.preflight import preflight, reason
from mqspec.pipeline.store import Location

from .installs import ROOT, unpack


def test_local_executors_run_this_mqspec_and_share_out(spark, tmp_path):
    """On local[2] the probe finds this interpreter and this checkout's mqspec, writes under --out, and
    leaves nothing there."""
    found = preflight(spark, tasks=2, out=Location(tmp_path))
    (host, python, where), = found["executors"]
    assert python == sys.executable and where.startswith(str(ROOT))
    assert list(tmp_path.iterdir()) == []


def test_the_code_digest_does_not_depend_on_where_mqspec_is_installed(wheel, tmp_path):
    """The digest of mqspec's code is the same from the checkout and from the wheel built from it, so the
    pre-flight check tells a shipped copy of this mqspec from another one, not from another layout."""
    site = unpack(wheel, tmp_path / "site-packages")
    code = "from mqspec.pipeline.probe import code_digest; import json; print(json.dumps(code_digest()))"
    env = {**os.environ, "PYTHONPATH": str(site)}
    where, digest = json.loads(subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True,
                                              capture_output=True, text=True).stdout)
    assert where.startswith(str(site)) and digest == probe.code_digest()[1]


def _bare_python(folder):
    """A Python of the same version without mqspec or any library (a venv of the base interpreter)."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    return folder / "bin" / "python"


def _explore(tmp_path, *conf):
    done = subprocess.run([sys.executable, "-m", "mqspec", "pipeline", "explore", "--runs", "2", "--master", "local[1]",
                           "--out", str(tmp_path / "out"), *conf], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    return done


def test_executors_without_mqspec_stop_the_job_with_one_line(tmp_path):
    """Executors whose Python lacks mqspec, or that cannot run the Python named, end the command in seconds
    with one line naming what is missing and how to ship it, exit status 5, before any run is computed."""
    bare = _bare_python(tmp_path / "bare")
    done = _explore(tmp_path, "--conf", f"spark.pyspark.python={bare}")
    assert done.returncode == 5, done.stderr[-3000:]
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith("mqspec: pre-flight: the executors cannot import mqspec") and "--archives" in line
    assert not (tmp_path / "out" / "_waves").exists()
    assert float(re.search(r"\[after ([0-9.]+) s\]$", line).group(1)) < 60  # the check itself, Spark's start aside
    done = _explore(tmp_path, "--conf", "spark.pyspark.python=/nonexistent/bin/python3")
    assert done.returncode == 5, done.stderr[-3000:]
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert "cannot run Python /nonexistent/bin/python3" in line


def test_a_spark_failure_is_said_in_one_line():
    """The reason of a failed job is the line that says what went wrong, not a stack."""
    text = ('An error occurred while calling o57.collectToPython.\n: org.apache.spark.SparkException: Job aborted '
            'due to stage failure: Task 0 in stage 0.0 failed 1 times, most recent failure: Lost task 0.0: '
            'java.io.IOException: Cannot run program "/opt/x/python": error=2, No such file or directory\n\tat java')
    assert reason(RuntimeError(text)) == "the executors cannot run Python /opt/x/python"
    text = "Job aborted: java.io.FileNotFoundException: File file:/lab/a.ndjson does not exist\n\tat org.apache"
    assert reason(RuntimeError(text)) == "an input or output is not readable there: File file:/lab/a.ndjson does not exist"
