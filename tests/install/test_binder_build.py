"""Binder's build, done here the way mybinder does it: a new virtual environment gets
``binder/requirements.txt``, then ``binder/postBuild`` runs in a copy of the repository
(only the files git tracks, as a clone has). The environment it leaves must import the
package, list the JupyterLab extension as enabled, and have what the notebooks run."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_binder_builds_an_environment_with_the_extension_enabled(tmp_path):
    repo = _clone(tmp_path / "repo")
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
               VIRTUAL_ENV=str(venv))
    env.pop("PYTHONPATH", None)
    _run(["python", "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"], repo, env)
    _run(["bash", "binder/postBuild"], repo, env)

    imported = _run(["python", "-c", "import icedtea_jupyter, sys; print(icedtea_jupyter.__file__)"],
                    tmp_path, env)
    assert str(venv) in imported  # installed into the environment, not read from the copy
    extensions = _run(["jupyter", "labextension", "list"], tmp_path, env)
    line = next((x for x in extensions.splitlines() if "icedtea-jupyter" in x), "")
    assert "enabled" in line and "OK" in line, extensions
    _run(["tpchgen-cli", "--help"], tmp_path, env)  # notebooks/tpch.ipynb makes its data with it
