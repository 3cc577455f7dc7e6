"""Pipeline test fixtures: one local[2] Spark session for the module tests that need Spark."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession bound to 127.0.0.1 (made by the pipeline's own factory), stopped at the end."""
    from mqspec.pipeline.session import session

    spark = session("local[2]", app_name="mqspec-tests")
    yield spark
    spark.stop()
