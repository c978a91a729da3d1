"""The Binder configuration (``binder/``, mybinder's file names) builds what the project
needs: a Java runtime Spark 4 runs on, the JupyterLab the extension was built for, and
the package with its prebuilt extension; the quick start it opens is in the repository."""
import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def test_binder_installs_a_java_runtime_spark_4_supports():
    packages = (BINDER / "apt.txt").read_text().split()
    versions = [int(m.group(1)) for p in packages if (m := re.match(r"openjdk-(\d+)-jre", p))]
    assert versions and min(versions) >= 17  # Spark 4 needs Java 17 or later


def test_binder_jupyterlab_is_the_one_the_extension_is_built_for():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = project["project"]["optional-dependencies"]["lab"]
    listed = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert [r for r in listed if r.startswith("jupyterlab")] == wanted


def test_binder_post_build_installs_the_package_with_its_lab_extra():
    script = BINDER / "postBuild"
    assert os.access(script, os.X_OK)  # mybinder runs it as an executable
    assert re.search(r"pip install .*\"\.\[lab\]\"", script.read_text())
    assert (ROOT / "notebooks" / "quickstart.ipynb").is_file()  # what the launch link opens
