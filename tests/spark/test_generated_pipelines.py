"""Pipelines nobody here wrote (issue 37): drawn from a grammar (``tests/pipelines``), run
plain and under ``%%icedtea`` in a real IPython shell, every promise checked against an
oracle computed without the product. A bounded run with a fixed seed; ``bench/pipelines.py``
runs thousands. A pipeline that broke a promise is kept below as a regression test."""
import pytest
from hypothesis import HealthCheck, given, seed, settings

from tests.pipelines.grammar import pipelines
from tests.pipelines.oracles import Runner, check_pipeline

pytestmark = pytest.mark.spark

EXAMPLES = 40


@pytest.fixture(scope="module")
def runner(shell, tmp_path_factory):
    return Runner(shell, str(tmp_path_factory.mktemp("generated") / "runs"))


@seed(20261201)
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(pipeline=pipelines())
def test_every_promise_holds_on_drawn_pipelines(runner, pipeline):
    violations = check_pipeline(runner, pipeline, reuse="Tally" in pipeline.cell())
    assert not violations, pipeline.describe() + "\n" + "\n".join(violations)
