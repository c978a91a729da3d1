"""DataFrame Python operators: pandas/Arrow maps, grouped maps and UDFs are hosted."""
import pytest

pytestmark = pytest.mark.spark


def totals(run):
    return run.metrics().groupby("operator")[["records_in", "records_out"]].sum()


def test_map_in_pandas_and_arrow_count_rows(record):
    code = """
df = spark.range(1000).repartition(2)
def double(batches):
    for pdf in batches:
        yield pdf.assign(id=pdf.id * 2)
def evens(batches):
    for batch in batches:
        yield batch.filter(pc.equal(pc.bit_wise_and(batch.column(0), 1), 0))
out = df.mapInPandas(double, "id long").mapInArrow(evens, "id long").count()
"""
    import pyarrow.compute as pc

    run = record(code, {"pc": pc})
    assert run.status == "finished", run.error
    assert run.namespace["out"] == 1000
    t = totals(run)
    assert tuple(t.loc["double"]) == (1000, 1000)
    assert tuple(t.loc["evens"]) == (1000, 1000)
    assert ("double", "evens") in run.dag.edges


def test_apply_in_pandas_counts_rows_per_group(record):
    code = """
df = spark.createDataFrame([(k % 3, float(k)) for k in range(30)], "k long, v double")
def centre(pdf):
    return pdf.assign(v=pdf.v - pdf.v.mean())
out = df.groupBy("k").applyInPandas(centre, "k long, v double").collect()
"""
    run = record(code)
    assert run.status == "finished", run.error
    assert len(run.namespace["out"]) == 30
    assert tuple(totals(run).loc["centre"]) == (30, 30)


def test_row_and_pandas_udfs_are_hosted_and_linked_to_their_dataframe(record):
    code = """
from pyspark.sql.functions import udf, pandas_udf, col
import pandas as pd

@udf("long")
def plus_one(x):
    return x + 1

@pandas_udf("double")
def halve(s: pd.Series) -> pd.Series:
    return s / 2

df = spark.range(100)
out = df.select(plus_one(col("id")).alias("a"), halve(col("id")).alias("b")).collect()
"""
    run = record(code)
    assert run.status == "finished", run.error
    assert sorted(r.a for r in run.namespace["out"]) == list(range(1, 101))
    t = totals(run)
    assert tuple(t.loc["plus_one"]) == (100, 100)
    assert tuple(t.loc["halve"]) == (100, 100)
    assert ("plus_one", "select") in run.dag.edges
    assert ("range", "plus_one") in run.dag.edges


def test_jvm_dataframe_operators_are_opaque_nodes(record):
    code = "out = spark.range(10).filter('id > 3').groupBy().count().collect()"
    run = record(code)
    assert [(op.name, op.kind) for op in run.dag.operators] == [
        ("range", "jvm"), ("filter", "jvm"), ("groupBy", "jvm"), ("count", "jvm")]
    assert run.metrics().empty and run.warnings == []
