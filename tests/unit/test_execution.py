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


def test_the_magics_lineage_flag_is_a_run_option():
    from icedtea_jupyter.magic import parse_options

    options, _ = parse_options("--lineage --wait", {})
    assert options.lineage and options.manifest()["lineage"]
    assert not parse_options("--wait", {})[0].lineage
