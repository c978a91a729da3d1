"""JupyterLab in headless Chromium: one server and one browser for the whole session.

The server runs from this interpreter's environment on a free loopback port, with no
token, in a temporary copy of ``notebooks/``. The built extension of this checkout
(``icedtea_jupyter/labextension``) is put first on the labextensions path, so the test
sees the current frontend even when the package is installed some other way, and the
checkout is put first on ``PYTHONPATH`` so that the kernel and Spark's Python workers
import this ``icedtea_jupyter``.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
BUILT_EXTENSION = REPO / "icedtea_jupyter" / "labextension"
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = os.environ.get("ICEDTEA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT = 90.0

def notebook_json(cells: list[str]) -> dict:
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell-{i}",
                   "metadata": {}, "outputs": [], "source": source}
                  for i, source in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)",
                                    "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabServer:
    def __init__(self, url: str, root: Path) -> None:
        self.url = url
        self.root = root


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory, artifacts: Path) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(
        ".ipynb_checkpoints", ".icedtea", "spark-warehouse", "metastore_db"))
    # A notebook that never loads the extension, for the sidebar's empty state.
    (root / "icedtea-plain.ipynb").write_text(json.dumps(notebook_json(["1 + 1"]), indent=1))

    args = []
    if (BUILT_EXTENSION / "package.json").exists():
        labextensions = base / "labextensions"
        labextensions.mkdir()
        (labextensions / "icedtea-jupyter").symlink_to(BUILT_EXTENSION, target_is_directory=True)
        args.append(f"--LabApp.extra_labextensions_path={labextensions}")

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # A fresh settings and workspace state: no layout restored from elsewhere.
    for name, sub in (("JUPYTERLAB_SETTINGS_DIR", "settings"),
                      ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                      ("JUPYTER_RUNTIME_DIR", "runtime")):
        (base / sub).mkdir()
        env[name] = str(base / sub)
    # No "official Jupyter news?" toast over the screenshots.
    notification = base / "settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))

    port = _free_port()
    jupyter = Path(sys.executable).with_name("jupyter")
    command = [str(jupyter) if jupyter.exists() else "jupyter", "lab", "--no-browser",
               "--allow-root", "--IdentityProvider.token=", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.root_dir={root}", *args]
    log_path = artifacts / "jupyter-lab.log"
    log = log_path.open("w")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if server.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {server.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False
    try:
        wait_until(answers, SERVER_START_TIMEOUT, f"jupyter lab to answer (see {log_path})",
                   interval=0.1)
        yield LabServer(url, root)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, artifacts: Path, request: pytest.FixtureRequest):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.console_errors = errors  # type: ignore[attr-defined]
    yield page
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        page.screenshot(path=str(artifacts / f"failed-{request.node.name}.png"))
        (artifacts / f"failed-{request.node.name}.console.txt").write_text("\n".join(errors))
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
