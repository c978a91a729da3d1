import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


import pytest  # noqa: E402

from tests.waiting import FileGate  # noqa: E402


@pytest.fixture
def gate(tmp_path):
    """A closed ``FileGate`` in this test's tmp dir; opened at teardown, so that nothing
    stays held at it when a test fails before opening it."""
    made = FileGate(tmp_path / "gate")
    yield made
    made.open()
