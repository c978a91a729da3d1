"""Which output rows a trace selects: a predicate, or the rows equal to a record."""
from pyspark.sql import Row

from icedtea_jupyter.lineage.trace import is_predicate


def test_a_function_is_a_predicate():
    assert is_predicate(lambda row: row[1] > 1000)


def test_a_spark_row_is_a_record_though_it_is_callable():
    row = Row(word="zzrare", count=1)
    assert callable(row) and not is_predicate(row)


def test_tuples_and_strings_are_records():
    assert not is_predicate(("zzrare", 1)) and not is_predicate("zzrare")
