"""Run set-up checks that need no Spark: which Python Spark's workers run."""
import os
import subprocess
import sys
import types

import pytest

from icedtea_jupyter.session import interpreter


def context(master="local[2]", python="/usr/bin/python3"):
    return types.SimpleNamespace(master=master, pythonExec=python)


def test_workers_on_this_kernels_python_are_left_alone():
    sc = context(python=sys.executable)
    assert interpreter.point_workers_here(sc) == [] and sc.pythonExec == sys.executable


def test_workers_whose_python_has_icedtea_are_left_alone(monkeypatch):
    monkeypatch.setattr(interpreter, "imports_icedtea", lambda python: True)
    sc = context()
    assert interpreter.point_workers_here(sc) == [] and sc.pythonExec == "/usr/bin/python3"


@pytest.mark.parametrize("master", ["local[2]", "local[2,2]", "spark://127.0.0.1:7077"])
def test_local_workers_without_icedtea_are_pointed_at_this_kernels_python(monkeypatch, master):
    monkeypatch.setattr(interpreter, "imports_icedtea", lambda python: False)
    sc = context(master)
    (note,) = interpreter.point_workers_here(sc)
    assert sc.pythonExec == sys.executable
    assert "'/usr/bin/python3', which cannot import icedtea_jupyter" in note and \
        sys.executable in note


def test_cluster_workers_without_icedtea_are_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(interpreter, "imports_icedtea", lambda python: False)
    sc = context("spark://cluster.example:7077")
    with pytest.raises(interpreter.WorkersCannotImport, match="nothing ran") as refused:
        interpreter.point_workers_here(sc)
    assert "run %load_ext icedtea_jupyter before creating the SparkSession" in str(refused.value)
    assert sc.pythonExec == "/usr/bin/python3"


def virtualenv(folder):
    """A real virtualenv (no pip: seconds); returns its ``python`` and its base's."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    return python, os.path.realpath(python)


def prefix_of(python):
    return subprocess.run([python, "-c", "import sys; print(sys.prefix)"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_a_virtualenvs_python_and_its_base_are_two_environments(tmp_path):
    python, base = virtualenv(tmp_path / "env")
    assert os.path.realpath(python) == os.path.realpath(base)  # one binary, resolved
    assert interpreter.environment(python) == os.path.realpath(prefix_of(python)) == \
        os.path.realpath(tmp_path / "env")
    assert interpreter.environment(base) == os.path.realpath(prefix_of(base))
    assert interpreter.environment(str(tmp_path / "env" / "bin" / "python3")) == \
        interpreter.environment(python)


def test_a_kernel_in_a_virtualenv_points_workers_on_its_base_python_here(
        tmp_path, monkeypatch):
    python, base = virtualenv(tmp_path / "kernel-env")
    monkeypatch.setattr(sys, "executable", python)  # the kernel runs in the venv
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "kernel-env"))
    monkeypatch.delenv("PYTHONHOME", raising=False)
    asked = []
    monkeypatch.setattr(interpreter, "imports_icedtea",
                        lambda worker: asked.append(worker) or False)
    sc = context(python=base)  # PYSPARK_PYTHON set to the venv's base, globally
    (note,) = interpreter.point_workers_here(sc)
    assert asked == [base] and sc.pythonExec == python
    assert f"{base!r}, which cannot import icedtea_jupyter" in note
    sc = context(python=str(tmp_path / "kernel-env" / "bin" / "python3"))
    assert interpreter.point_workers_here(sc) == [] and asked == [base]  # same venv: no ask


def test_a_python_without_pyarrow_cannot_import_icedtea(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    assert not interpreter.imports_icedtea(str(python))
    assert interpreter.imports_icedtea(sys.executable)


def test_the_magics_lineage_flag_is_a_run_option():
    from icedtea_jupyter.magic import parse_options

    options, _ = parse_options("--lineage --wait", {})
    assert options.lineage and options.manifest()["lineage"]
    assert not parse_options("--wait", {})[0].lineage


@pytest.mark.parametrize("line, hint", [
    ("--linage", "--linage (did you mean --lineage?)"),
    ("--interact-evry=2", "--interact-evry=2 (did you mean --interact-every?)"),
    ("--interact-evry 2 --wiat", "--interact-evry 2 --wiat "
                                 "(did you mean --interact-every or --wait?)"),
])
def test_a_misspelt_flag_is_answered_with_the_flag_it_resembles(line, hint):
    from IPython.core.error import UsageError

    from icedtea_jupyter.magic import parse_options

    with pytest.raises(UsageError) as refused:
        parse_options(line, {})
    first, usage = str(refused.value).split("\n", 1)
    assert first == f"%%icedtea: unrecognized arguments: {hint}"
    assert usage.startswith("usage: %%icedtea")
    with pytest.raises(UsageError) as unlike:
        parse_options("--lineage --frobnicate", {})
    assert str(unlike.value).splitlines()[0] == "%%icedtea: unrecognized arguments: --frobnicate"


def test_workers_that_cannot_import_icedtea_get_the_fix_not_the_workers_traceback():
    from icedtea_jupyter.session.execution import _cell_error

    worker_failure = RuntimeError(
        "[PYTHON_EXCEPTION] An exception was thrown from the Python worker.\n"
        "Traceback (most recent call last):\n  ...\n"
        "ModuleNotFoundError: No module named 'icedtea_jupyter'")
    error = _cell_error(worker_failure, None, ran_jobs=True)
    assert error["message"].startswith("Spark's Python workers cannot import icedtea_jupyter")
    assert "the server's PYSPARK_PYTHON" in error["message"]
    assert "No module named 'icedtea_jupyter'" in error["traceback"]  # kept, for the details
    other = _cell_error(RuntimeError("boom"), None, ran_jobs=False)
    assert other["message"] == "the cell raised before any Spark job: RuntimeError: boom"


def test_a_connect_server_on_another_machine_is_told_to_bind(monkeypatch):
    from icedtea_jupyter.session import connect

    def server_on(host):
        session = types.SimpleNamespace(client=types.SimpleNamespace(host=host))
        monkeypatch.setattr(connect, "connect_session", lambda: session)

    server_on("spark.example.com")
    notes = connect.connect_notes(lineage=False, bind=None)
    assert len(notes) == 1 and notes[0].startswith(
        "The Spark Connect server runs on spark.example.com: its Python workers cannot reach")
    assert "--bind ADDRESS" in notes[0]
    assert connect.connect_notes(lineage=False, bind="10.0.0.5") == []
    server_on("127.0.0.1")
    assert connect.connect_notes(lineage=False, bind=None) == []


def test_a_session_of_the_connect_clients_own_builder_is_a_connect_session(monkeypatch):
    import pyspark.sql.connect.session  # noqa: F401 - the client, imported as a session does
    from pyspark import SparkContext

    from icedtea_jupyter.session import connect

    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED", raising=False)
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    monkeypatch.setattr(connect, "connect_session", lambda: None)
    assert not connect.is_connect()
    monkeypatch.setattr(connect, "connect_session", lambda: object())
    assert connect.is_connect()
    monkeypatch.setattr(SparkContext, "_active_spark_context", object())  # classic runs too
    assert not connect.is_connect()
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")  # PySpark's own mark decides
    assert connect.is_connect()
