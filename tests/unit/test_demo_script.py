"""``scripts/demo.sh`` opens copies of the notebooks in the git-ignored ``demo/``, so that
JupyterLab's autosaves leave the tracked ``notebooks/`` as they are (set-up and JupyterLab
stubbed: the script's own steps run, on a copy of the repository's layout)."""
import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stub(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


def demo_tree(tmp_path: Path) -> Path:
    """The script, the notebooks, a setup.sh that does nothing and a jupyter that says
    where it was started and with what."""
    tree = tmp_path / "repo"
    (tree / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "demo.sh", tree / "scripts" / "demo.sh")
    shutil.copytree(ROOT / "notebooks", tree / "notebooks")
    stub(tree / "scripts" / "setup.sh", "exit 0\n")
    stub(tree / ".venv" / "bin" / "jupyter", f'echo "$PWD $*" > {tmp_path}/started\n')
    return tree


def demo(tree: Path) -> str:
    subprocess.run(["bash", str(tree / "scripts" / "demo.sh")], check=True, timeout=60,
                   env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"))
    return (tree.parent / "started").read_text().strip()


def test_the_demo_opens_copies_in_demo_and_keeps_what_they_saved(tmp_path):
    tree = demo_tree(tmp_path)
    started = demo(tree)
    where, command = started.split(" ", 1)
    assert where == str(tree / "demo") and command.startswith("lab ")
    assert command.split()[-1] == "quickstart.ipynb"  # relative to demo/: the copy
    tracked = sorted(p.name for p in (tree / "notebooks").glob("*.ipynb"))
    assert sorted(p.name for p in (tree / "demo").glob("*.ipynb")) == tracked
    for name in tracked:
        assert (tree / "demo" / name).read_bytes() == (tree / "notebooks" / name).read_bytes()

    saved = tree / "demo" / "quickstart.ipynb"  # JupyterLab autosaves outputs into it
    saved.write_text(saved.read_text().replace('"outputs": []', '"outputs": ["saved"]'))
    demo(tree)
    assert "saved" in saved.read_text()  # kept: newer than notebooks/'s
    original = tree / "notebooks" / "quickstart.ipynb"
    assert "saved" not in original.read_text()
    later = time.time() + 60  # a newer notebook (a git pull) replaces the copy
    os.utime(original, (later, later))
    demo(tree)
    assert saved.read_bytes() == original.read_bytes()


def test_the_demo_folder_is_ignored_by_git():
    for path in ("demo/quickstart.ipynb", "demo/.icedtea/runs/x/manifest.json"):
        ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", path])
        assert ignored.returncode == 0, f"{path} is not git-ignored"
    tracked = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q",
                              "notebooks/quickstart.ipynb"])
    assert tracked.returncode == 1  # the tracked notebooks stay tracked
