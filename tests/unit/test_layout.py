"""The run store's layout is known to one module, ``store/layout.py``: no other module of
the package names its folders or files, builds a path inside a run or parses a name."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from icedtea_jupyter.store import layout

LAYOUT = Path(layout.__file__).resolve()
PACKAGE = LAYOUT.parents[1]

FOLDERS = {layout.WORKERS, layout.LOCAL, layout.LOGS, layout.INPUTS, layout.OPERATORS,
           layout.CHECKPOINTS, layout.REPLAY, layout.SKEW, layout.DEFAULT_ROOT.split(os.sep)[0]}
FILES = {layout.MANIFEST, layout.ALERTS, layout.INTERACTIONS_LOG, layout.INTERACTIONS,
         layout.SNAPSHOTS, layout.ACTIONS, layout.PLAN, os.path.basename(layout.REPLAY_LOG)}
SUFFIXES = {layout.ARROW, layout.PICKLE, layout.LINES}
PATH_CALLS = {"join", "glob", "iglob", "listdir", "scandir", "walk", "makedirs", "mkdir",
              "open", "Path", "exists", "isfile", "isdir", "remove", "joinpath"}
NAME_SPLITS = {"split", "rsplit", "partition", "rpartition"}
NAME_FIELD = re.compile(r"(^|[^A-Za-z])op$|^-[psat]$")  # f"op{o}-p{p}-...-t{t}"


def layout_violations(source: str) -> list[str]:
    """What in ``source`` knows the store's layout: its names, its paths, its parsing."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        value = _text(node)
        if value is not None and id(node) not in docstrings:
            parts = set(re.split(r"[/\\]", value)) if re.search(r"[/\\]", value) else set()
            if any(name in value for name in FILES | SUFFIXES) or parts & FOLDERS:
                found.append(f"line {node.lineno}: {value!r}")
        found.extend(f"line {node.lineno}: {what}" for what in _built_by_hand(node))
    return found


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _built_by_hand(node: ast.AST) -> list[str]:
    """What ``node`` itself does with the layout: names built, paths joined, names parsed."""
    found = []
    if isinstance(node, ast.JoinedStr):
        for part in map(_text, node.values):
            if part is not None and NAME_FIELD.search(part):
                found.append("a file name built in an f-string")
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        constants = [_text(arg) for arg in node.args]
        if name in PATH_CALLS and set(constants) & FOLDERS:
            found.append("a path built with a store folder")
        if name in NAME_SPLITS and any(c is not None and re.fullmatch(r"-[psat]?", c)
                                       for c in constants):
            found.append("a file name parsed by hand")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            {_text(node.left), _text(node.right)} & FOLDERS:
        found.append("a path built with a store folder")
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and _text(node.value) in FOLDERS:
        found.append("a store folder named outside the layout")
    return found


def test_the_checker_finds_paths_built_by_hand():
    assert layout_violations('os.path.join(run, "logs", name)')
    assert layout_violations('glob.glob(run + "/logs/*.arrow")')
    assert layout_violations('open(os.path.join(path, "manifest.json"))')
    assert layout_violations('key = f"op{op}-t{task}"')
    assert layout_violations('task = int(path.rsplit("-t", 1)[1])')
    assert layout_violations('Path(run) / "checkpoints"')
    assert layout_violations('LOGS_DIR = "logs"')
    assert not layout_violations('"""Reads ``logs/*.arrow``."""\nrow["local"]; emit("replay")')


def test_only_the_layout_module_knows_the_layout():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.resolve() != LAYOUT:
            violations = layout_violations(path.read_text(encoding="utf-8"))
            if violations:
                found[str(path.relative_to(PACKAGE))] = violations
    assert found == {}


def test_names_read_back_as_written(tmp_path):
    worker = {"operator": 3, "partition": 1, "stage": -1, "attempt": 0, "task": 17}
    run = str(tmp_path)
    for path in (layout.replay_log_path(run, worker), layout.recorded_inputs_path(run, worker),
                 layout.checkpoint_path(run, -1, 1, layout.checkpoint_key(3, 17))):
        Path(layout.with_parent(path)).touch()
    assert [tuple(name) for name, _ in layout.replay_logs(run)] == [(3, 1, -1, 0, 17)]
    assert [name.task for name, _ in layout.recorded_inputs(run, 3, 1)] == [17]
    assert list(layout.recorded_inputs(run, 3, 0)) == []
    assert [tuple(name) for name, _ in layout.checkpoints(run)] == [(-1, 1, "op3-t17")]
    assert layout.parse_worker_name("plan.json") is None


def test_the_layout_module_needs_only_the_standard_library():
    code = ("import sys; before = set(sys.modules); import icedtea_jupyter.store.layout;"
            "print('\\n'.join(sorted(set(sys.modules) - before)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    ours = {"icedtea_jupyter", "icedtea_jupyter.store", "icedtea_jupyter.store.layout"}
    assert [m for m in loaded if m not in ours and
            m.split(".")[0].lstrip("_") not in sys.stdlib_module_names and
            m.split(".")[0] not in sys.stdlib_module_names] == []
