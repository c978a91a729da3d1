"""Filters Spark runs beneath a Python UDF's evaluation, read from an optimized plan."""
from types import SimpleNamespace

from icedtea_jupyter.replay.pushdown import filters_below_python, filters_of, pushed_below

# Spark 4.3's optimized plan of
# df.select(col("v"), running(col("v")).alias("t")).filter("v > 100"), df = range(...) / 2
PUSHED = """Project [v#1, pythonUDF0#4 AS t#3]
+- ArrowEvalPython [running(v#1)#2], [pythonUDF0#4], 101
   +- Project [(cast(id#0L as double) / 2.0) AS v#1]
      +- Filter ((cast(id#0L as double) / 2.0) > 100.0)
         +- Range (0, 100, step=1, splits=Some(2))"""
AFTER = """Filter (t#3 > 1.0)
+- Project [v#1, pythonUDF0#4 AS t#3]
   +- BatchEvalPython [running(v#1)#2], [pythonUDF0#4]
      +- Project [(cast(id#0L as double) / 2.0) AS v#1]
         +- Range (0, 100, step=1, splits=Some(2))"""
INPUT = """Project [(cast(id#0L as double) / 2.0) AS v#1]
+- Range (0, 100, step=1, splits=Some(2))"""


def test_only_filters_beneath_the_udf_evaluation_count():
    assert filters_below_python(PUSHED) == ["((cast(id#0L as double) / 2.0) > 100.0)"]
    assert filters_below_python(AFTER) == []  # on the UDF's result: after it, as written
    assert filters_of(AFTER) == {"(t#3 > 1.0)"}


def frame(plan):
    """A DataFrame as ``optimized_plan`` reads it: its optimized plan, printed."""
    printed = SimpleNamespace(toString=lambda: plan)
    execution = SimpleNamespace(optimizedPlan=lambda: printed)
    return SimpleNamespace(_jdf=SimpleNamespace(queryExecution=lambda: execution))


def test_a_filter_the_udfs_own_dataframe_has_is_not_a_pushdown():
    recorder = SimpleNamespace(udf_frames={3: frame(INPUT)}, action_frames=[frame(PUSHED)])
    assert pushed_below(recorder, 3) == ["((cast(id#0L as double) / 2.0) > 100.0)"]
    recorder.udf_frames[3] = frame(PUSHED.split("\n", 2)[2].replace("   +- ", "", 1))
    assert pushed_below(recorder, 3) == []  # the filter was written before the UDF
    assert pushed_below(None, 3) == []  # a reopened run: the DataFrames are gone
