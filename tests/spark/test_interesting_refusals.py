"""``--interesting`` with pipelines PySpark builds jobs for (a sort's sampling, a zip's
count) and pipelines built by a function of an earlier cell: θ is waited for while
PySpark builds a transformation, and a name that matches nothing is refused before the
cell's first action runs a task, with every operator known then and a close name."""
from operator import add

import pytest

from tests.spark.test_dag_cuts import CLICKS, SESSIONS, Sessionize

pytestmark = pytest.mark.spark

LINES = ["to be or not to be", "that is the question", "be quick"] * 10
# what θ ("pair") sees comes after the transformation that runs a job of its own
BEFORE_THETA = {
    "sortBy": lambda words: words.sortBy(lambda w: w, numPartitions=2),
    "sortByKey": lambda words: words.map(lambda w: (w, 0)).sortByKey(numPartitions=2).keys(),
    "zipWithIndex": lambda words: words.zipWithIndex().keys()}


def builder(transformation):
    """A function defined outside the cell (an earlier cell's) that builds the pipeline:
    θ's name is not in the cell's code."""
    def build(lines):
        moved = transformation(lines.flatMap(str.split).setName("split"))
        return moved.map(lambda w: (w, 1)).setName("pair").reduceByKey(add).setName("count")
    return build


def expected_counts():
    counts = {}
    for word in " ".join(LINES).split():
        counts[word] = counts.get(word, 0) + 1
    return counts


@pytest.mark.parametrize("api", BEFORE_THETA)
def test_theta_built_after_a_transformation_that_runs_a_job_is_found(record, api):
    run = record("out = build(sc.parallelize(LINES, 2)).collect()",
                 {"build": builder(BEFORE_THETA[api]), "LINES": LINES}, interesting="pair")
    assert run.status == "finished", run.error
    assert dict(run.namespace["out"]) == expected_counts()
    assert run.dag.interesting.name == "pair"
    assert [n.name for n in run.dag.g_theta] == ["pair", "count (combine)", "shuffle", "count"]


@pytest.mark.parametrize("api", BEFORE_THETA)
def test_a_name_that_matches_nothing_is_refused_before_the_first_actions_tasks(
        record, sc, api):
    seen = sc.accumulator(0)

    def build(lines):
        def tally(pair):
            seen.add(1)
            return pair
        return builder(BEFORE_THETA[api])(lines).map(tally).setName("tally")

    run = record("out = build(sc.parallelize(LINES, 2)).collect()",
                 {"build": build, "LINES": LINES}, interesting="nope")
    assert run.status == "failed" and "out" not in run.namespace
    known = "split, map, pair" if api == "sortByKey" else "split, pair"
    assert run.error["message"] == (
        f"--interesting 'nope' names no Python operator of this cell (its Python operators: "
        f"{known}, count (combine), count, tally); nothing ran. Name one of them, or give "
        "yours that name with .setName('nope')")
    assert seen.value == 0  # not one record reached the last operator
    assert "tally" not in set(run.metrics()["operator"])


def test_a_typo_lists_every_operator_and_suggests_the_close_one(record):
    run = record(SESSIONS, {"CLICKS": CLICKS, "Sessionize": Sessionize, "add": add},
                 lineage=True, skew=True, interesting="sessionise")
    assert run.status == "failed" and "out" not in run.namespace
    assert run.error["message"] == (
        "--interesting 'sessionise' names no Python operator of this cell (its Python "
        "operators: key by user, time, sessionize, clicks per session (combine), clicks per "
        "session, map, sessions per user (combine), sessions per user); nothing ran. Did you "
        "mean 'sessionize'? Name one of them, or give yours that name with "
        ".setName('sessionise')")
    assert run.manifest["jobs"] == [] and run.metrics().empty  # no job, no task


def test_a_close_name_of_a_later_job_is_suggested_from_the_cells_code(record):
    run = record("n = sc.parallelize(range(4)).map(str).setName('first').count()\n"
                 "out = sc.parallelize(range(4)).map(abs).setName('score').collect()",
                 interesting="scroe")
    assert run.status == "failed" and "n" not in run.namespace
    assert run.error["message"] == (
        "--interesting 'scroe' names no Python operator of this cell (its Python operators: "
        "first); nothing ran. Did you mean 'score'? Name one of them, or give yours that "
        "name with .setName('scroe')")
