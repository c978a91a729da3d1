"""Binder's build, done the way mybinder does it, in the background: a new virtual
environment gets ``binder/requirements.txt``, then ``binder/postBuild`` runs in a copy of
the repository (only the files git tracks, as a clone has).

It is mostly downloading and unpacking wheels, so ``conftest.py`` starts it as soon as
the suite is collected, and it runs while the browser tests wait on their pages; the
test (``test_binder_build.py``) waits for it and checks what it left.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class BinderBuild:
    """One build in a thread: ``result()`` gives the environment's answers to the checks
    (the package's path, ``jupyter labextension list``, ``tpchgen-cli --help``), or raises
    what failed."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="icedtea-binder-"))
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


class DetachedBuild:
    """A build in a process of its own (``start_detached``), which writes its answers,
    or what failed, to ``result.json`` in its folder: under pytest-xdist the build
    starts in the controller, before the workers, and any worker's test reads it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / "env"

    def result(self, timeout: float) -> dict[str, str]:
        done = self.root / "result.json"
        deadline = time.monotonic() + timeout
        while not done.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"binder's build took over {timeout:.0f} s ({self.root})")
            time.sleep(1)
        result = json.loads(done.read_text())
        if result["error"]:
            raise AssertionError(f"binder's build failed: {result['error']}")
        return result["answers"]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


ENVIRONMENT = "ICEDTEA_BINDER_BUILD"  # the detached build's folder, for the workers


def start_detached() -> Path:
    """Start the build in a process of its own; its folder (also in ``ENVIRONMENT``)."""
    root = Path(tempfile.mkdtemp(prefix="icedtea-binder-"))
    subprocess.Popen([sys.executable, "-m", "tests.install.binder_build", str(root)],
                     cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    os.environ[ENVIRONMENT] = str(root)
    return root


_STARTED: list[BinderBuild | DetachedBuild] = []


def start() -> BinderBuild | DetachedBuild:
    """The suite's build: the detached one if the controller started it, else one
    started here on the first call."""
    if not _STARTED:
        detached = os.environ.get(ENVIRONMENT)
        _STARTED.append(DetachedBuild(Path(detached)) if detached else BinderBuild())
    return _STARTED[0]


def _main(root: Path) -> None:
    build = BinderBuild(root)
    try:
        answers, error = build.result(timeout=1500), ""
    except BaseException as exc:  # noqa: BLE001 - written for the test to raise
        answers, error = {}, f"{type(exc).__name__}: {exc}"
    written = root / "result.json.part"
    written.write_text(json.dumps({"answers": answers, "error": error}))
    written.rename(root / "result.json")


if __name__ == "__main__":
    _main(Path(sys.argv[1]))
