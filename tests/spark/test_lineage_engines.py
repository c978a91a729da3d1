"""The Spark SQL engine of lineage traces: the same traces as DuckDB's over the same
links, chosen by size (``it.config.lineage_spark_threshold_bytes``) or forced."""
import os
from operator import add

import pytest

from icedtea_jupyter.config import config
from icedtea_jupyter.lineage.trace import Lineage, trace_back, trace_forward

pytestmark = pytest.mark.spark

LINES = ["spark a", "# skip b spark", "b spark", "spark zzrare c", "spark spark", "c a"]

JOINED = """
counts = (sc.parallelize(LINES, 3).filter(lambda l: not l.startswith("#")).setName("kept")
            .flatMap(lambda line: line.split()).setName("split")
            .map(lambda word: (word, 1)).setName("pair")
            .reduceByKey(add, 2).setName("count"))
sizes = sc.parallelize([("spark", "big"), ("a", "small"), ("c", "small")], 2)
out = counts.join(sizes).mapValues(lambda v: f"{v[1]}:{v[0]}").setName("label").collect()
"""


@pytest.fixture
def engine_setting():
    saved = (config.lineage_engine, config.lineage_spark_threshold_bytes)
    yield config
    config.lineage_engine, config.lineage_spark_threshold_bytes = saved


def traced(run, engine):
    """Backward traces of every output row and forward traces of every line, with
    ``engine`` forced: their engines, paths and source/output records."""
    config.lineage_engine = engine
    lineage = Lineage(run)
    outputs = run.namespace["out"]
    back = [trace_back(lineage, row) for row in outputs]
    forward = [trace_forward(lineage, line) for line in LINES[:3]]
    return ([t.engine for t in back + forward],
            [(t.operators, t.to_pandas().values.tolist()) for t in back + forward])


def test_spark_sql_and_duckdb_give_the_same_traces(record, engine_setting):
    run = record(JOINED, {"LINES": LINES, "add": add}, lineage=True)
    assert run.status == "finished", run.error
    duck_engines, duck = traced(run, "duckdb")
    spark_engines, spark = traced(run, "spark")
    assert set(duck_engines) == {"duckdb"} and set(spark_engines) == {"spark"}
    assert spark == duck
    # an oracle by hand: ('spark', ('big', ...)) comes from the four lines with "spark"
    # that the filter kept; the filtered line goes nowhere
    row = next(r for r in run.namespace["out"] if r[0] == "spark")
    assert row == ("spark", "big:5")
    back = trace_back(Lineage(run), row)
    ends = back.to_pandas()
    assert sorted(ends[ends.operator == "parallelize"]["record"]) == [
        "b spark", "spark a", "spark spark", "spark zzrare c"]
    assert ends[ends.operator == "parallelize#2"]["record"].tolist() == [("spark", "big")]
    assert len(trace_forward(Lineage(run), "# skip b spark")) == 0
    assert os.path.exists(os.path.join(run.path, "lineage", "links.parquet"))


def test_the_engine_is_chosen_by_the_lineage_size(record, engine_setting):
    run = record(JOINED, {"LINES": LINES, "add": add}, lineage=True)
    config.lineage_engine = None
    config.lineage_spark_threshold_bytes = 1  # any lineage is larger
    assert run.trace_back(("a", "small:2")).engine == "spark"
    config.lineage_spark_threshold_bytes = 1 << 40
    run._lineage_cache = None  # a new Lineage chooses again
    assert run.trace_back(("a", "small:2")).engine == "duckdb"
    config.lineage_engine = "sqlite"
    run._lineage_cache = None
    with pytest.raises(ValueError, match="lineage_engine is 'sqlite'"):
        run.trace_back(("a", "small:2"))
