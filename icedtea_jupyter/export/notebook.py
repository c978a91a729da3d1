"""``run.export_notebook(path)``: a debugging session as a notebook that re-executes.

The notebook holds, in order: the cells that prepared the run's inputs (the kernel's
history up to the run), a Spark session if none of them makes one, the ``%%icedtea``
cell with the same options (and ``--wait``), then every debugging move the user made,
each as its API call with what it showed recorded as its output and a markdown cell
saying what it was. Re-running it (``pytest --nbval``) gives the same states: the
``%%icedtea`` cell pins the run's interactions with ``--interact-at`` (θ's counts per
partition at each, ``run.interaction_points()``), so periodic and manual ones are taken
again at the same records. What the export cannot re-create is said in its first cell:
a local path that no longer exists, a name the cell uses that no exported cell defines.
"""
from __future__ import annotations

import ast
import builtins
import json
import os
import re
import secrets
import shlex
from typing import Any

from ..snapshots.pinned import format_interact_at, points_json
from ..store import layout

_DEBUGGING = re.compile(r"\.debugger\(|\bdbg\.|export_notebook\(|\.snapshot\(|"
                        r"\.trace_(back|forward)\(")
_PATH = re.compile(r"""["']((?:/|\./|~/)[^"'\n]+|[\w./-]+\.(?:csv|parquet|json|txt|orc))["']""")
_SESSION = re.compile(r"SparkSession|getOrCreate\(")
_TRIGGERS = ("--interact-every", "--interact-when", "--interact-at")  # replaced by the pins
_INLINE_POINTS = 2000  # longer --interact-at points go to a JSON file beside the notebook
_DESCRIBE = [
    (re.compile(r"dbg\.jump\((\d+)\)"), "**Jump** to interaction I{0}: θ's chain on every "
                                        "partition as it was then."),
    (re.compile(r"dbg\.jump_to_failure\(\)"), "**Jump to the failure**: θ's chain on the "
                                              "failing partition just before the culprit."),
    (re.compile(r"dbg\.step_over\((.*)\)"), "**Step over** ({0}): θ's next record and its "
                                            "whole scope."),
    (re.compile(r"dbg\.step_into\((.*)\)"), "**Step into** ({0}): one operator processes "
                                            "its next record."),
    (re.compile(r"dbg\.step_out\((.*)\)"), "**Step out** ({0}): the rest of the scope."),
    (re.compile(r"dbg\.jump_to\((.*)\)"), "**Jump to a record** ({0})."),
    (re.compile(r"run\.snapshot\((\d+)\)\.state\((.*)\)"), "**State read** at interaction "
                                                            "I{0}: ({1}), as recorded."),
]


def export_notebook(run: Any, path: str) -> list[str]:
    """Write the notebook; returns what needs the user's hand (also in its first cell)."""
    manifest = run.manifest
    history = list(manifest.get("history") or [])
    hand: list[str] = []
    if manifest.get("history") is None:
        hand.append("the run was not recorded from a notebook cell: the cells that "
                    "prepared its inputs are not known; add them before the %%icedtea cell")
    kept, left_out = _preparing(history)
    if left_out:
        hand.append(f"{len(left_out)} earlier cell(s) that debugged or traced runs are "
                    "left out")
    cells: list[dict] = []
    setup = _session_cell(manifest, kept)
    if setup:
        cells.append(_code(setup, ignore=True))
    pinned = _pinned(run, path)
    for source, needs in _preparing_cells(kept, run, pinned):
        if needs:  # said where it matters, and in the first cell with the cell's number
            number = sum(c["cell_type"] == "code" for c in cells) + 1
            needs = [f"cell [{number}]: {need}" for need in needs]
            cells.append(_markdown("**Needs your hand** before the next cell runs:\n\n"
                                   + "\n".join(f"- {need}" for need in needs)))
            hand.extend(needs)
        cells.append(_code(source, ignore=True))
    if pinned is None:
        hand.extend(_interactions_note(run))
    cells.append(_code("import icedtea_jupyter\nfrom icedtea_jupyter.export.states import "
                       "shown, stable\n\nrun = icedtea_jupyter.last_run().wait()\n"
                       "dbg = run.debugger()", ignore=True))
    cells.extend(_moves(run.actions))
    cells.insert(0, _markdown(_title(run, hand)))
    for count, cell in enumerate((c for c in cells if c["cell_type"] == "code"), 1):
        cell["execution_count"] = count  # nbval checks the outputs of cells that ran
    notebook = {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    with open(path, "w", encoding="utf-8") as out:
        json.dump(notebook, out, indent=1, ensure_ascii=False)
        out.write("\n")
    return hand


def _preparing_cells(kept: list[str], run: Any,
                     pinned: str | None) -> list[tuple[str, list[str]]]:
    """The cells that prepare the run, then its ``%%icedtea`` cell, each with what it
    needs from the user to re-create the run: data gone, names no cell defines."""
    cells = [(_waiting(c), _missing_paths(c)) for c in kept]
    cells.append((_icedtea_cell(run, pinned),
                  _missing_paths(run.cell) + _undefined(kept, run.cell)))
    return cells


def _preparing(history: list[str]) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    left: list[str] = []
    for cell in history:
        (left if _DEBUGGING.search(cell) or cell.lstrip().startswith("%icedtea ")
         else kept).append(cell)
    return kept, left


def _session_cell(manifest: dict, kept: list[str]) -> str:
    lines = []
    if not any("load_ext icedtea_jupyter" in c for c in kept):
        lines.append("%load_ext icedtea_jupyter")
    spark = manifest.get("spark") or {}
    if not any(_SESSION.search(c) for c in kept):
        lines += ["import os", 'os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")',
                  "from pyspark.sql import SparkSession", "",
                  f"spark = (SparkSession.builder.master({spark.get('master', 'local[2]')!r})"
                  f".appName({spark.get('app', 'icedtea export')!r})",
                  '         .config("spark.ui.showConsoleProgress", "false").getOrCreate())',
                  "sc = spark.sparkContext", 'sc.setLogLevel("ERROR")']
    return "\n".join(lines)


def _waiting(cell: str) -> str:
    """An earlier ``%%icedtea`` cell blocks until its run ends (the next cells use it)."""
    first, _, rest = cell.partition("\n")
    if first.startswith("%%icedtea") and "--wait" not in first.split():
        return f"{first} --wait --no-panel\n{rest}"
    return cell


def _icedtea_cell(run: Any, pinned: str | None) -> str:
    """The run's cell with its options; ``pinned``: its interactions as ``--interact-at``
    (instead of the triggers that took them)."""
    line = run.manifest.get("line")
    if line is None:
        line = _options_line(run.options)
    words = _without(shlex.split(line), ("--wait", "--no-panel", "--reuse"),
                     _TRIGGERS if pinned is not None else ())
    if pinned is not None:
        words += ["--interact-at", pinned]
    line = " ".join(shlex.quote(w) for w in ["--wait", "--no-panel", *words])
    return f"%%icedtea {line}\n{run.cell.rstrip()}"


def _without(words: list[str], flags: tuple[str, ...], valued: tuple[str, ...]) -> list[str]:
    """``words`` less ``flags`` and ``valued`` flags with their values."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in valued:
            skip = True
        elif word not in flags and word.split("=")[0] not in valued:
            kept.append(word)
    return kept


def _pinned(run: Any, path: str) -> str | None:
    """The run's interactions as ``--interact-at`` points, so that the re-executed run
    takes each at the same records: inline, or in a JSON file beside the notebook when
    long. None if an interaction has no count of θ to pin it to."""
    points = run.interaction_points()
    if not points or not all(points):
        return None
    inline = format_interact_at(points)
    if len(inline) <= _INLINE_POINTS:
        return inline
    pins = layout.exported_points_path(path)
    with open(pins, "w", encoding="utf-8") as out:
        json.dump({"run": run.id, "interactions": points_json(points)}, out)
    return os.path.basename(pins)  # the kernel runs beside the notebook


def _options_line(options: dict) -> str:
    """The flags of a run started from the API, not the magic."""
    words = []
    for flag, key in (("--interesting", "interesting"), ("--interact-every", "interact_every"),
                      ("--interact-when", "interact_when"),
                      ("--interact-at", "interact_at")):
        if options.get(key) is not None:
            words += [flag, str(options[key])]
    for flag, key in (("--record-inputs", "record_inputs"), ("--lineage", "lineage")):
        if options.get(key):
            words.append(flag)
    if options.get("checkpoint", "none") != "none":
        words += ["--checkpoint", options["checkpoint"], "--tau", str(options.get("tau", 1.0))]
    return " ".join(shlex.quote(w) for w in words)


def _interactions_note(run: Any) -> list[str]:
    """Unpinned, periodic and manual interactions happen at other moments in a new run."""
    loose = [i.index for i in run.interactions if i.trigger in ("periodic", "manual")]
    if not loose:
        return []
    return [f"interactions {', '.join(f'I{k}' for k in loose)} were periodic or manual: the "
            "re-executed run takes its own at other moments, so jumps to them may show "
            "other states (interactions from --interact-when are taken at the same records)"]


def _moves(actions: list[dict]) -> list[dict]:
    cells = []
    for action in actions:
        call = action["call"]
        if call.startswith("run.interact("):
            cells.append(_markdown("A manual interaction was taken here while the run "
                                   "recorded (`run.interact()`)."))
            continue
        cells.append(_markdown(_describe(call, action.get("source", "api"))))
        shown = action.get("shown")
        code = (f"print(stable({call}))" if call.startswith("run.snapshot(") else
                f"{call}\nprint(shown(dbg.snapshot()))")
        cells.append(_code(code, ignore=shown is None, output=shown))
    return cells


def _describe(call: str, source: str) -> str:
    where = {"sidebar": " (made in the sidebar)", "panel": " (made in the cell's panel)"}
    for pattern, text in _DESCRIBE:
        match = pattern.fullmatch(call)
        if match:
            return text.format(*(g or "" for g in match.groups())) + where.get(source, "")
    return f"`{call}`{where.get(source, '')}"


def _missing_paths(cell: str) -> list[str]:
    """The local paths ``cell`` names that no longer exist."""
    gone = {path for path in _PATH.findall(cell)
            if not os.path.exists(os.path.expanduser(path))}
    return [f"the data at {path!r} no longer exists: point this cell at a copy"
            for path in sorted(gone)]


def _undefined(kept: list[str], cell: str) -> list[str]:
    """Names the pipeline reads that neither it nor an exported cell defines (a closure
    over an object made some other way)."""
    defined = {"spark", "sc", "icedtea_jupyter"} | set(dir(builtins))
    for source in [*kept, cell]:
        defined |= _assigned(source)
    used = _loaded(cell)
    return [f"the %%icedtea cell uses {name!r}, which no exported cell defines (an object "
            "made some other way): define it before this cell" for name in sorted(used - defined)]


def _python(source: str) -> ast.AST | None:
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _assigned(source: str) -> set[str]:
    tree = _python(source)
    names: set[str] = set()
    for node in ast.walk(tree) if tree is not None else []:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _loaded(source: str) -> set[str]:
    tree = _python(source)
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)} if tree is not None else set()


def _title(run: Any, hand: list[str]) -> str:
    text = [f"# Debugging session: run {run.id} ({run.version})", "",
            "Exported by icedtea-jupyter. Run all cells in a fresh kernel: the pipeline is "
            "recorded again and every debugging move is made again, printing the states "
            "it showed (`pytest --nbval` checks them)."]
    if hand:
        text += ["", "**Needs your hand:**", ""] + [f"- {item}" for item in hand]
    return "\n".join(text)


def _markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": secrets.token_hex(4), "metadata": {},
            "source": text}


def _code(source: str, ignore: bool = False, output: str | None = None) -> dict:
    outputs = [] if output is None else [
        {"output_type": "stream", "name": "stdout", "text": output + "\n"}]
    tags = ["nbval-ignore-output"] if ignore else []
    return {"cell_type": "code", "id": secrets.token_hex(4), "execution_count": None,
            "metadata": {"tags": tags} if tags else {}, "outputs": outputs,
            "source": source}
