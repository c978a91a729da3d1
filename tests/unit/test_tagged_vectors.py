"""The tagged-JSON codec (``executor/state.py``) against the vectors the jest suite reads
too (``tests/vectors/tagged_json.json``)."""
import datetime
import decimal
import json
import math
import pathlib

import numpy
import pytest
from pyspark.sql import Row

from icedtea_jupyter.executor.state import ObjectView, Summary, decode, encode, encode_described

VECTORS = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "tagged_json.json")
                     .read_text(encoding="utf-8"))


class Model:
    __module__ = "shop"

    def __init__(self, depth):
        self.depth = depth

    def __repr__(self):
        return f"Model(depth={self.depth})"


NAMES = {"datetime": datetime, "decimal": decimal, "numpy": numpy, "Row": Row, "Model": Model,
         "Summary": Summary, "ObjectView": ObjectView,
         "__builtins__": {"float": float, "set": set, "range": range}}


def python(expression: str):
    return eval(expression, dict(NAMES))  # the vectors file's own expressions only


def equal(a, b) -> bool:
    """Equal, with nan equal to itself."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_encode_gives_the_vectors_tagged_json_and_decode_the_value_back(vector):
    value = python(vector["python"])
    encoded = encode(value)
    assert json.dumps(encoded, sort_keys=True) == json.dumps(vector["tagged"], sort_keys=True)
    assert equal(decode(vector["tagged"]), python(vector.get("decoded", vector["python"])))


@pytest.mark.parametrize("vector", VECTORS["described"], ids=lambda v: v["name"])
def test_records_described_by_workers_are_tagged_by_the_same_codec(vector):
    assert encode_described(vector["described"]) == vector["tagged"]
