"""DataFrame lineage: a pipeline of select, filter, a pandas UDF column, groupBy and a
join traced back and forward, against oracles computed here from the input lists."""
import pytest

from tests.spark.test_comm_time_travel import ask, frontend  # noqa: F401 (a fixture)

pytestmark = pytest.mark.spark

SALES = [(i, "abc"[i % 3], (i * 7) % 23) for i in range(24)]  # id, shop, amount
SHOPS = [("a", "Oslo"), ("b", "Lima"), ("c", "Pune")]

PIPELINE = """
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

@pandas_udf("long")
def doubled(v):
    return v * 2

sales = spark.createDataFrame(SALES, "id long, shop string, amount long")
shops = spark.createDataFrame(SHOPS, "shop string, city string")
big = sales.filter(F.col("amount") > 10).withColumn("twice", doubled("amount"))
totals = big.groupBy("shop").agg(F.sum("twice").alias("total"))
out = totals.join(shops, "shop").select("city", "shop", "total")
rows = out.collect()
"""


def oracle_total(shop):
    return sum(2 * amount for _, s, amount in SALES if s == shop and amount > 10)


def test_an_output_row_traces_back_to_its_sales_and_its_shop(record):
    run = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS}, lineage=True)
    assert run.status == "finished", run.error
    row = next(r for r in run.namespace["rows"] if r.shop == "b")
    assert row.total == oracle_total("b") and row.city == "Lima"
    t = run.trace_back(row)
    ends = t.to_pandas()
    sales = ends[ends.operator == "createDataFrame"]
    assert sorted(tuple(r) for r in sales.record) == sorted(
        s for s in SALES if s[1] == "b" and s[2] > 10)
    assert [tuple(r) for r in ends[ends.operator == "createDataFrame#2"].record] == [("b", "Lima")]
    assert len(t) == len(sales) + 1 and t.engine == "duckdb"
    # on the way: the filtered sales rows with their doubled amounts, and one total
    kept = t.at("withColumn")
    assert sorted(tuple(r) for r in kept.record) == sorted(
        (i, s, a, 2 * a) for i, s, a in SALES if s == "b" and a > 10)
    assert [tuple(r) for r in t.at("agg").record] == [("b", oracle_total("b"))]
    assert t.notes and "deterministic" in t.notes[0]


def test_a_sale_goes_forward_to_its_shops_total_and_a_filtered_one_to_nothing(record):
    run = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS}, lineage=True)
    kept = next(s for s in SALES if s[2] > 10)
    f = run.trace_forward(lambda r: tuple(r) == kept, operator="createDataFrame")
    assert [tuple(r) for r in f.to_pandas().record] == [
        ({"a": "Oslo", "b": "Lima", "c": "Pune"}[kept[1]], kept[1], oracle_total(kept[1]))]
    dropped = next(s for s in SALES if s[2] <= 10)
    gone = run.trace_forward(lambda r: tuple(r) == dropped, operator="createDataFrame")
    assert len(gone) == 0 and gone.to_pandas().empty
    assert gone.operators["filter"] == 0
    # a shop row goes into its one output row
    shop = run.trace_forward(lambda r: r.shop == "c", operator="createDataFrame#2")
    assert [r.total for r in shop.to_pandas().record] == [oracle_total("c")]


def test_lineage_leaves_the_cells_result_as_spark_computed_it(record):
    plain = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS})
    traced = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS}, lineage=True)
    traced.trace_back(lambda r: True)  # writes the lineage frames
    for run in (plain, traced):
        assert run.namespace["out"].columns == ["city", "shop", "total"]
    assert traced.namespace["out"].schema == plain.namespace["out"].schema
    assert sorted(traced.namespace["rows"]) == sorted(plain.namespace["rows"])
    assert sorted(traced.namespace["out"].collect()) == sorted(plain.namespace["rows"])


NUMS = [(i, (i * 5) % 11 - 5) for i in range(20)]  # id, v in -5..5

PYTHON_OPERATORS = """
import pandas as pd
from pyspark.sql.functions import udf

@udf("string")
def label(n):
    return "even" if n % 2 == 0 else "odd"

def positive(batches):
    for pdf in batches:
        yield pdf[pdf.v > 0]  # a filter: its rows keep their index

def spread(pdf):
    return pd.DataFrame({"kind": [pdf.kind.iloc[0]], "n": [len(pdf)], "top": [int(pdf.v.max())]})

nums = spark.createDataFrame(NUMS, "id long, v long")
kinds = nums.mapInPandas(positive, "id long, v long").withColumn("kind", label("id"))
out = kinds.groupBy("kind").applyInPandas(spread, "kind string, n long, top long")
rows = out.collect()
"""


def test_map_in_pandas_a_udf_and_apply_in_pandas_trace_row_by_row_and_by_group(record):
    run = record(PYTHON_OPERATORS, {"NUMS": NUMS}, lineage=True)
    assert run.status == "finished", run.error
    even = [n for n in NUMS if n[1] > 0 and n[0] % 2 == 0]
    row = next(r for r in run.namespace["rows"] if r.kind == "even")
    assert (row.n, row.top) == (len(even), max(v for _, v in even))
    t = run.trace_back(row)
    assert sorted(tuple(r) for r in t.to_pandas().record) == sorted(even)
    assert sorted(tuple(r) for r in t.at("withColumn").record) == sorted(
        (i, v, "even") for i, v in even)
    odd = next(n for n in NUMS if n[1] > 0 and n[0] % 2 == 1)
    f = run.trace_forward(lambda r: tuple(r) == odd)
    assert [r.kind for r in f.to_pandas().record] == ["odd"]
    dropped = next(n for n in NUMS if n[1] <= 0)
    assert len(run.trace_forward(lambda r: tuple(r) == dropped)) == 0


def test_the_sidebars_requests_trace_a_dataframe_row_as_the_api_does(record, frontend):  # noqa: F811
    run = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS}, lineage=True)
    outputs = ask(frontend, "lineage.outputs", run=run.id)
    assert outputs["operator"] == "select" and outputs["page"]["total"] == 3
    row = next(r for r in outputs["page"]["rows"] if "Pune" in str(r["record"]))
    back = ask(frontend, "lineage.trace_back", run=run.id, partition=row["partition"],
               position=row["position"])
    api = run.trace_back(lambda r: r.city == "Pune")
    assert back["total"] == len(api) == sum(1 for s in SALES if s[1] == "c" and s[2] > 10) + 1
    assert {s["operator"]: s["count"] for s in back["operators"]} == api.operators


def test_spark_sql_and_duckdb_trace_a_dataframe_run_alike(record):
    from icedtea_jupyter.config import config
    from icedtea_jupyter.lineage.dataframe import dataframe_lineage
    from icedtea_jupyter.lineage.frame_trace import frame_trace_back, frame_trace_forward

    run = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS}, lineage=True)
    traces = {}
    try:
        for engine in ("duckdb", "spark"):
            config.lineage_engine = engine
            lineage = dataframe_lineage(run)
            back = frame_trace_back(lineage, lambda r: r.city == "Oslo")
            forward = frame_trace_forward(lineage, lambda r: r[0] in (3, 4, 5),
                                          operator="createDataFrame")
            assert back.engine == forward.engine == engine
            traces[engine] = [(t.operators, t.to_pandas().values.tolist()) for t in (back, forward)]
    finally:
        config.lineage_engine = None
    assert traces["spark"] == traces["duckdb"]


def test_an_operator_lineage_does_not_make_again_is_named(record):
    run = record("""
from pyspark.sql import functions as F
ordered = spark.createDataFrame(SALES, "id long, shop string, amount long").orderBy("amount")
rows = ordered.filter(F.col("amount") > 20).collect()
""", {"SALES": SALES}, lineage=True)
    with pytest.raises(LookupError, match="'orderBy' .* is not traced in DataFrame lineage"):
        run.trace_back(lambda r: True)
