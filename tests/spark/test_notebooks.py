"""The story notebooks of ``notebooks/`` re-execute in a fresh kernel with the outputs
they were saved with (nbval), as a user opening them would see."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["versions.ipynb", "tpch.ipynb", "product_reviews.ipynb"])
def test_story_notebook_reexecutes_with_its_saved_outputs(name, tmp_path):
    notebook = shutil.copy(ROOT / "notebooks" / name, tmp_path / name)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(notebook), "-q",
                           "-p", "no:cacheprovider", "--nbval-cell-timeout", "300"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
