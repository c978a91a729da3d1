import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


import pytest  # noqa: E402

from tests.jvm_options import set_for_this_process_and_its_children  # noqa: E402
from tests.waiting import FileGate  # noqa: E402

set_for_this_process_and_its_children()


def pytest_configure(config):
    """Under pytest-xdist, the controller starts Binder's build (``tests/install``) in a
    process of its own before the workers start, when the run includes its test: it
    downloads and unpacks for minutes while the workers test, and its test reads it."""
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(config.option, "numprocesses",
                                                            None):
        return
    if config.option.keyword or config.option.markexpr:
        return
    binder = os.path.join("tests", "install", "test_binder_build.py")
    if any(binder.startswith(os.path.normpath(arg).split("::")[0]) for arg in config.args):
        from tests.install import binder_build

        binder_build.start_detached()


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (``scripts/test.sh`` runs two workers): the browser tests go to
    one worker, one after another (each drives JupyterLab and Chromium at about a core's
    worth of CPU), and every other file stays whole on one worker (its module fixtures
    made once; a notebook's cells in order, in one kernel)."""
    from xdist.scheduler import LoadScopeScheduling

    class BrowserTogetherFilesWhole(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "browser" if path.startswith("tests/browser/") else path

    return BrowserTogetherFilesWhole(config, log)


@pytest.fixture
def gate(tmp_path):
    """A closed ``FileGate`` in this test's tmp dir; opened at teardown, so that nothing
    stays held at it when a test fails before opening it."""
    made = FileGate(tmp_path / "gate")
    yield made
    made.open()
