import os

from tests.install import binder_build


def pytest_collection_finish(session):
    """Binder's build runs in the background from the start of the suite, if its test
    was collected: the test then finds it done (or waits for the rest). Under
    pytest-xdist every worker collects every test: the worker that runs it builds."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if any(item.path.name == "test_binder_build.py" for item in session.items):
        binder_build.start()
