"""Run set-up checks that need no Spark."""
import sys
import types

from icedtea_jupyter.session import execution


def test_workers_on_another_python_are_warned_about(monkeypatch):
    context = types.SimpleNamespace(pythonExec="/usr/bin/python3")
    monkeypatch.setattr(execution, "_spark_context", lambda: context)
    (warning,) = execution._interpreter_warnings()
    assert "/usr/bin/python3" in warning and "PYSPARK_PYTHON" in warning
    context.pythonExec = sys.executable
    assert execution._interpreter_warnings() == []
