"""The session factory: the user's Spark settings win, and Spark's start-up chatter stays off the terminal."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mqspec.pipeline.session import SessionError, executor_python, parse_conf

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
