"""The session factory: the user's Spark settings win, and Spark's start-up chatter stays off the terminal."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from mqspec.pipeline.session import SessionError, _forward, executor_python, parse_conf

#: what Spark and its JVM print at every start unless told otherwise (issue 26 row 1)
CHATTER = ("Using incubator modules", "Setting default log level", "To adjust logging level")


def test_the_executors_python_is_the_users_when_given(monkeypatch):
    """spark.pyspark.python wins, then $PYSPARK_PYTHON, then the interpreter running mqspec."""
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert executor_python({}) == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "./environment/bin/python")
    assert executor_python({}) == "./environment/bin/python"
    assert executor_python({"spark.pyspark.python": "./env/bin/python"}) == "./env/bin/python"


def test_conf_pairs_are_key_value():
    """--conf KEY=VALUE pairs become a dict (a value may hold '='); anything else is refused by name."""
    assert parse_conf(["spark.executor.memory=2g", "spark.x=a=b"]) == {"spark.executor.memory": "2g", "spark.x": "a=b"}
    with pytest.raises(SessionError, match="expected KEY=VALUE"):
        parse_conf(["spark.executor.memory"])


def test_a_pipeline_command_prints_no_spark_start_up_lines(tmp_path):
    """explore on local Spark: stderr holds the progress lines and none of Spark's or the JVM's notices."""
    done = subprocess.run([sys.executable, "-m", "mqspec", "pipeline", "explore", "--runs", "1", "--master", "local[1]",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "explore: 1/1 runs" in done.stderr
    assert not [line for line in done.stderr.splitlines() if any(c in line for c in CHATTER)], done.stderr


#: what pyspark's daemon prints for a worker it forked as a failing job closed the connection (seen on CI)
ABANDONED = """Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/daemon.py", line 264, in manager
  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/daemon.py", line 65, in worker
  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 565, in loads
    length = read_int(stream)
             ^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 604, in read_int
    raise EOFError
EOFError
"""


def test_the_jvms_stderr_loses_only_its_start_up_warning_and_an_abandoned_forks_traceback():
    """The incubator warning and an abandoned fork's EOFError traceback are dropped; every other line passes, and
    any other traceback passes whole (a worker's error, the same frames ending in another exception)."""
    other = ABANDONED.replace("EOFError\n", "ValueError: a worker's own error\n").replace("raise EOFError", "raise X")
    lines = ["WARNING: Using incubator modules: jdk.incubator.vector\n", "before\n", ABANDONED, "between\n", other,
             "Traceback (most recent call last):\n", '  File "x.py", line 1, in worker\n']
    out = io.StringIO()
    _forward(io.BytesIO("".join(lines).encode()), out)
    assert out.getvalue() == "before\nbetween\n" + other + 'Traceback (most recent call last):\n  File "x.py", line 1, in worker\n'
