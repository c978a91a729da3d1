"""The Binder configuration (``binder/``, mybinder's file names) builds what the project
needs: a Java runtime Spark 4 runs on, the JupyterLab the extension was built for, and
the package with its prebuilt extension and the demo notebooks' extras; the quick start
it opens is in the repository, and everything the notebooks import or run is installed."""
import ast
import importlib.metadata
import json
import os
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

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
    assert re.search(r"pip install .*\"\.\[lab,demo\]\"", script.read_text())
    assert (ROOT / "notebooks" / "quickstart.ipynb").is_file()  # what the launch link opens


def binder_distributions() -> set[str]:
    """The distributions ``pip install ".[lab,demo]"`` brings: the package's requirements,
    those two extras, and theirs, transitively (as installed here)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = [Requirement(r) for r in project["dependencies"] + extras["lab"] + extras["demo"]]
    found: set[str] = set()
    while wanted:
        requirement = wanted.pop()
        name = requirement.name.lower().replace("_", "-")
        if name in found or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        found.add(name)
        wanted += [Requirement(r) for r in importlib.metadata.requires(name) or []]
    return found


def notebook_imports(path: Path) -> set[str]:
    """The top-level modules a notebook's code cells import (magics and shell lines aside)."""
    modules = set()
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            code = "".join(line for line in cell["source"]
                           if not line.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    return modules


def test_binder_installs_what_every_notebook_imports_and_runs():
    installed = binder_distributions()
    providers = importlib.metadata.packages_distributions()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        outside = notebook_imports(notebook) - set(sys.stdlib_module_names) - {"icedtea_jupyter"}
        for module in outside:
            dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
            assert dists & installed, f"{notebook.name} imports {module}, not installed"
        if "tpchgen-cli" in notebook.read_text():  # a command the notebook runs
            assert "tpchgen-cli" in installed, f"{notebook.name} runs tpchgen-cli, not installed"
