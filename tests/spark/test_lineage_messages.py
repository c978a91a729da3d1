"""What a trace says when there is nothing to trace: never "recorded without --lineage" of
a run recorded with it."""
import pytest

from icedtea_jupyter.lineage.tables import NoLineage

pytestmark = pytest.mark.spark

ROWS = [("k40", None), ("k40", None), ("k5", 46), ("k5", -19)]


def test_a_lineage_run_without_python_operators_says_so(record):
    """Found by the pipeline generator: distinct and partitionBy alone, --lineage."""
    run = record("out = sc.parallelize(ROWS, 4).distinct().partitionBy(3).collect()",
                 {"ROWS": ROWS}, lineage=True)
    assert sorted(run.namespace["out"], key=repr) == sorted(set(ROWS), key=repr)
    with pytest.raises(NoLineage) as why:
        run.trace_back(("k5", 46))
    assert "recorded without --lineage" not in str(why.value)
    assert "recorded with --lineage" in str(why.value) and "no hosted Python operator" in \
        str(why.value) and "distinct" in str(why.value)

