"""Binder's build, done the way mybinder does it, in the background: a new virtual
environment gets ``binder/requirements.txt``, then ``binder/postBuild`` runs in a copy of
the repository (only the files git tracks, as a clone has).

It is mostly downloading and unpacking wheels, so ``conftest.py`` starts it as soon as
the suite is collected, and it runs while the browser tests wait on their pages; the
test (``test_binder_build.py``) waits for it and checks what it left.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class BinderBuild:
    """One build in a thread: ``result()`` gives the environment's answers to the checks
    (the package's path, ``jupyter labextension list``, ``tpchgen-cli --help``), or raises
    what failed."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="icedtea-binder-"))
        self.venv = self.root / "env"
        self._answers: dict[str, str] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, daemon=True, name="binder-build")
        self._thread.start()

    def result(self, timeout: float) -> dict[str, str]:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"binder's build took over {timeout:.0f} s")
        if self._error is not None:
            raise self._error
        return self._answers

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _build(self) -> None:
        try:
            repo = _clone(self.root / "repo")
            subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
            env = dict(os.environ, PATH=f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
                       VIRTUAL_ENV=str(self.venv))
            env.pop("PYTHONPATH", None)
            _run(["python", "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"],
                 repo, env)
            _run(["bash", "binder/postBuild"], repo, env)
            elsewhere = self.root  # not the copy: the package must come from the environment
            self._answers = {
                "imported": _run(["python", "-c", "import icedtea_jupyter; "
                                  "print(icedtea_jupyter.__file__)"], elsewhere, env),
                "extensions": _run(["jupyter", "labextension", "list"], elsewhere, env),
                # notebooks/tpch.ipynb makes its data with it
                "tpchgen": _run(["tpchgen-cli", "--help"], elsewhere, env),
            }
        except BaseException as exc:  # noqa: BLE001 - the test raises it
            self._error = exc


def _clone(into: Path) -> Path:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        source, target = ROOT / name, into / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def _run(command: list[str], cwd: Path, env: dict) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1200)
    if done.returncode != 0:
        raise AssertionError(
            f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout + done.stderr


_STARTED: list[BinderBuild] = []


def start() -> BinderBuild:
    """The suite's build: started once, on the first call."""
    if not _STARTED:
        _STARTED.append(BinderBuild())
    return _STARTED[0]
