"""Pipeline test fixtures: one local[2] Spark session, and the campaigns several tests read."""

from __future__ import annotations

import pytest

from mqspec.pipeline.runs import Campaign
from mqspec.pipeline.store import Location

SAY = [].append  # progress lines are not what the tests look at
#: the clarified campaign the local tests and the cluster test compare against
CLARIFIED = Campaign(runs=4, seed=9, traces=True)


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession bound to 127.0.0.1 (made by the pipeline's own factory), stopped at the end."""
    from mqspec.pipeline.session import session

    spark = session("local[2]", app_name="mqspec-tests")
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """A wheel of this checkout, built once (tests of other install locations and of shipping mqspec)."""
    from .installs import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def literal(spark, tmp_path_factory):
    """A 2-run literal-mode campaign: every run violates an invariant the register explains (E-142, E-108)."""
    from mqspec.pipeline.explore import explore

    out = tmp_path_factory.mktemp("explore") / "literal"
    summary = explore(spark, Campaign(runs=2, seed=9, mode="literal", shrink_replays=1), Location(out),
                      master="local[2]", progress=SAY)
    return out, summary


@pytest.fixture(scope="session")
def clarified(spark, tmp_path_factory):
    """The 4-run clarified campaign with traces (CLARIFIED), computed in one wave."""
    from mqspec.pipeline.explore import explore

    out = tmp_path_factory.mktemp("explore") / "one-wave"
    return out, explore(spark, CLARIFIED, Location(out), master="local[2]", wave=4, progress=SAY)


@pytest.fixture(scope="session")
def checked(spark, clarified, tmp_path_factory):
    """The mixed corpus and the clarified campaign's traces checked on local[2]: (corpus root, out, summary)."""
    from mqspec.pipeline.check import check, list_inputs

    from .corpus import make_corpus

    root = tmp_path_factory.mktemp("check")
    expected = make_corpus(root / "in")
    listing = list_inputs(spark, [(root / "in").as_uri(), (clarified[0] / "traces").as_uri()])
    summary = check(spark, listing, Location(root / "out"), master="local[2]", parallelism=2)
    return root, expected, summary
