"""Which Python Spark's workers run: this kernel's, or one that can import icedtea_jupyter.

``%load_ext icedtea_jupyter`` before the SparkSession points the workers at the kernel's
Python (``PYSPARK_PYTHON``). Loaded after it, the context already has its workers'
Python (``SparkContext.pythonExec``, read each time PySpark wraps a function for a job).
If that one cannot import icedtea_jupyter, a context whose workers run on this machine
is pointed at the kernel's Python; on a cluster the run is refused before any job, with
the fix.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any
from urllib.parse import urlparse

_IMPORTS: dict[str, bool] = {}  # interpreter -> it imports icedtea_jupyter and pyarrow
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class WorkersCannotImport(RuntimeError):
    """Spark's workers run a Python without icedtea_jupyter, and cannot be re-pointed."""


def environment(python: str) -> str:
    """The ``sys.prefix`` that ``python`` runs with, found as Python finds it, without
    starting it: a virtualenv's folder (``pyvenv.cfg`` one level above the binary or beside
    it, before links are followed; a venv's ``python`` is a link to its base interpreter,
    so the resolved binaries of the two are the same), else the installation the resolved
    binary lives in (``<prefix>/bin/python3``)."""
    path = os.path.abspath(shutil.which(python) or python)
    for folder in (os.path.dirname(os.path.dirname(path)), os.path.dirname(path)):
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return os.path.realpath(folder)
    return os.path.dirname(os.path.dirname(os.path.realpath(path)))


def same_environment(python: str) -> bool:
    """Whether ``python`` runs in this kernel's environment, so it imports what we do.
    With ``PYTHONHOME`` set, Python skips the venv look-up: no shortcut then."""
    return (not os.environ.get("PYTHONHOME")
            and environment(python) == os.path.realpath(sys.prefix))


def imports_icedtea(python: str) -> bool:
    """Whether ``python`` can import icedtea_jupyter and pyarrow, with this environment."""
    if python not in _IMPORTS:
        try:
            done = subprocess.run([python, "-c", "import icedtea_jupyter, pyarrow"],
                                  capture_output=True, timeout=60, check=False)
            _IMPORTS[python] = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _IMPORTS[python] = False
    return _IMPORTS[python]


def workers_on_this_machine(sc: Any) -> bool:
    master = str(getattr(sc, "master", "") or "")
    return master.startswith("local") or urlparse(master).hostname in LOCAL_HOSTS


def point_workers_here(sc: Any) -> list[str]:
    """Make ``sc``'s Python workers able to run icedtea's code; returns notes for the
    run's warnings. Raises ``WorkersCannotImport`` (with the fix) where it cannot."""
    worker = getattr(sc, "pythonExec", None) if sc is not None else None
    if not worker or same_environment(worker) or imports_icedtea(worker):
        return []
    if not workers_on_this_machine(sc):
        raise WorkersCannotImport(
            f"Spark's Python workers run {worker!r}, which cannot import icedtea_jupyter, and "
            f"they run on the cluster's machines (master {sc.master}); nothing ran. Install "
            "icedtea-jupyter (and pyarrow) for the workers' Python, or restart the kernel, "
            f"set PYSPARK_PYTHON to a Python that has it and run %load_ext icedtea_jupyter "
            "before creating the SparkSession")
    sc.pythonExec = sys.executable  # read whenever PySpark wraps a function for a job
    return [f"Spark's Python workers ran {worker!r}, which cannot import icedtea_jupyter "
            f"(the extension was loaded after the SparkSession): this context's workers now "
            f"run this kernel's Python ({sys.executable})"]
