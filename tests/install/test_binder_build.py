"""Binder's build, done here the way mybinder does it (``binder_build.py``, started in the
background when the suite is collected). The environment it leaves must import the
package, list the JupyterLab extension as enabled, and have what the notebooks run."""
from tests.install import binder_build


def test_binder_builds_an_environment_with_the_extension_enabled():
    build = binder_build.start()  # the suite's, or a new one when run alone
    try:
        answers = build.result(timeout=1500)
        # installed into the environment, not read from the copy
        assert str(build.venv) in answers["imported"]
        line = next((x for x in answers["extensions"].splitlines() if "icedtea-jupyter" in x), "")
        assert "enabled" in line and "OK" in line, answers["extensions"]
        assert "TPC-H" in answers["tpchgen"]
    finally:
        build.remove()
