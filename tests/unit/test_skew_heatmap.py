"""The skew heat map's columns: one a partition up to 40 partitions, else a column of
neighbours showing its heaviest, so a hot partition stays as hot as it is."""
import pytest

from icedtea_jupyter.dag import Dag
from icedtea_jupyter.skew.heatmap import (
    MAX_COLUMNS,
    column_span,
    in_columns,
    partition_cells,
    partition_count,
)


def cells_of(operators: dict[str, int], hot: dict[tuple[str, int], int]) -> list[dict]:
    """Every operator's partitions with 10 records in, ``hot`` cells with more."""
    return [{"operator": op, "partition": p, "records_in": hot.get((op, p), 10),
             "seconds": hot.get((op, p), 10) / 100}
            for op, count in operators.items() for p in range(count)]


def test_up_to_forty_partitions_a_column_is_a_partition():
    cells = cells_of({"map": MAX_COLUMNS, "sum": 8}, {("map", 39): 500})
    assert column_span(MAX_COLUMNS) == 1
    assert in_columns(cells, MAX_COLUMNS) == cells


def test_over_forty_a_column_shows_its_heaviest_partition():
    cells = cells_of({"map": 200, "sum": 200}, {("sum", 137): 9_000, ("map", 3): 70})
    columns = in_columns(cells, 200)
    assert column_span(200) == 5
    for op in ("map", "sum"):
        mine = [c for c in columns if c["operator"] == op]
        assert [c["partition"] for c in mine] == list(range(0, 200, 5))  # 40 columns
        assert all(c["last"] == c["partition"] + 4 for c in mine)
    hot = next(c for c in columns if c["operator"] == "sum" and c["partition"] == 135)
    assert (hot["heaviest"], hot["records_in"], hot["seconds"]) == (137, 9_000, 90.0)
    first = next(c for c in columns if c["operator"] == "map" and c["partition"] == 0)
    assert (first["heaviest"], first["records_in"]) == (3, 70)
    assert max(c["records_in"] for c in columns) == max(c["records_in"] for c in cells)


def test_an_operator_of_fewer_partitions_fills_fewer_columns_and_the_last_is_cut():
    cells = cells_of({"map": 101, "sum": 4}, {})
    columns = in_columns(cells, 101)
    assert column_span(101) == 3
    assert [c["partition"] for c in columns if c["operator"] == "sum"] == [0, 3]
    assert [(c["partition"], c["last"]) for c in columns if c["operator"] == "sum"] == \
        [(0, 2), (3, 5)]
    assert [c["last"] for c in columns if c["operator"] == "map"][-1] == 100


def test_the_span_is_the_most_partitions_spark_said_else_the_most_seen():
    dag = Dag()
    dag.add("source", "jvm", "parallelize", [])
    node = dag.add("map", "python", "map", [0])
    workers = [{"operator": node.id, "partition": p, "records_in": 1, "seconds": 0.1}
               for p in range(3)]
    cells = partition_cells(workers, dag)
    assert partition_count(cells, dag) == 3  # live, before Spark's count is known
    node.partitions = 120
    assert partition_count(cells, dag) == 120
    assert column_span(partition_count(cells, dag)) == 3


@pytest.mark.parametrize("partitions", [41, 200, 2_000])
def test_never_more_than_forty_columns(partitions):
    columns = in_columns(cells_of({"map": partitions}, {}), partitions)
    assert len(columns) <= MAX_COLUMNS
    assert columns[-1]["last"] == partitions - 1
