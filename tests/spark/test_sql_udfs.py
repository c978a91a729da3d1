"""Python functions registered for SQL (``spark.udf.register``) are hosted when a
recording cell's ``spark.sql`` query calls them (issue 39): a node named by the
registered name under the query, counts, agents, ``--interesting``; the registration is
Spark's own again after the cell."""
import pytest
from IPython.core.error import UsageError

import icedtea_jupyter

pytestmark = pytest.mark.spark

ROWS = [("a", 1.0), ("b", 2.0), ("a", 3.0), ("c", 4.0), ("b", 5.0)] * 20
QUERY = "SELECT k, SUM(scale(v)) AS s FROM sql_rows GROUP BY k ORDER BY k"


@pytest.fixture
def registered(shell, spark):
    shell.user_ns["ROWS"] = ROWS
    shell.run_cell("spark.createDataFrame(ROWS, 'k string, v double')"
                   ".createOrReplaceTempView('sql_rows')\n"
                   "def scale(v):\n    return v * 10\n"
                   "_ = spark.udf.register('scale', scale, 'double')").raise_error()
    yield shell


def oracle():
    totals = {}
    for k, v in ROWS:
        totals[k] = totals.get(k, 0.0) + v * 10
    return sorted(totals.items())


def test_a_registered_function_called_from_sql_is_hosted(registered, tmp_path):
    registered.run_cell_magic("icedtea", f"--wait --no-panel --store {tmp_path} "
                              "--interesting scale --interact-every 0.2",
                              f"out = spark.sql({QUERY!r}).collect()")
    run = icedtea_jupyter.last_run()
    assert [tuple(r) for r in registered.user_ns["out"]] == oracle()
    scale = run.dag.python_operators
    assert [n.name for n in scale] == ["scale"] and run.dag.interesting.name == "scale"
    [query] = [n for n in run.dag.operators if n.api == "sql"]
    assert scale[0].parents == [query.id]
    metrics = run.metrics()
    assert metrics[metrics["operator"] == "scale"]["records_in"].sum() == len(ROWS)
    assert metrics[metrics["operator"] == "scale"]["records_out"].sum() == len(ROWS)
    # after the cell, Spark's own registration answers again, unhosted
    plain = registered.run_cell(f"spark.sql({QUERY!r}).collect()").result
    assert [tuple(r) for r in plain] == oracle()


def test_a_name_no_registered_function_has_is_refused(registered, tmp_path):
    with pytest.raises(UsageError, match="scael.*[Dd]id you mean 'scale'"):
        registered.run_cell_magic("icedtea", f"--wait --no-panel --store {tmp_path} "
                                  "--interesting scael", f"out = spark.sql({QUERY!r}).collect()")
