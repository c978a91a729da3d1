"""Which UDFs ``--tolerate`` sees (``agents/coverage.py``): row, scalar and aggregate
pandas UDFs and applyInPandas, not iterator ones, which a run with the flag is warned
about."""
from types import SimpleNamespace

from pyspark.util import PythonEvalType

from icedtea_jupyter.agents.coverage import operator_api, skipped_operators


def udf(eval_type):
    return SimpleNamespace(evalType=eval_type)


def test_tolerate_warns_about_iterator_udfs_and_batch_apis_only():
    operators = [
        ("parse", operator_api("udf", udf(PythonEvalType.SQL_BATCHED_UDF))),
        ("scaled", operator_api("udf", udf(PythonEvalType.SQL_SCALAR_PANDAS_UDF))),
        ("running", operator_api("udf", udf(PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF))),
        ("mean", operator_api("udf", udf(PythonEvalType.SQL_GROUPED_AGG_PANDAS_UDF))),
        ("halve", operator_api("mapInPandas")),
        ("per_group", operator_api("applyInPandas"))]
    [warning] = skipped_operators(["tolerate"], operators)
    for name in ("'running'", "'halve'"):
        assert name in warning
    for name in ("'parse'", "'scaled'", "'mean'", "'per_group'"):
        assert name not in warning


def test_tools_that_skip_every_udf_still_name_all_of_them():
    operators = [("parse", operator_api("udf", udf(PythonEvalType.SQL_BATCHED_UDF))),
                 ("running", operator_api("udf", udf(PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF)))]
    [warning] = skipped_operators(["golden"], operators)
    assert "'parse'" in warning and "'running'" in warning
