"""``run.export_notebook(path)``: a debugging session as a notebook that re-executes.

The notebook holds, in order: the earlier cells of the kernel that the run's cell
needs (``cells.py``: those defining what it uses, never one that failed or would wait
forever), a Spark session if none of them makes one, the ``%%icedtea`` cell with the same
options (and ``--wait``, without breakpoints), then every debugging move the user made,
each as its API call with what it showed recorded as its output and a markdown cell
saying what it was. Re-running it (``pytest --nbval``) gives the same states: the
``%%icedtea`` cell pins the run's interactions with ``--interact-at`` (θ's counts per
partition at each, ``run.interaction_points()``), so periodic and manual ones are taken
again at the same records. What the export cannot re-create is said in its first cell:
a local path that no longer exists, a name the cell uses that no exported cell defines;
what it left out, and why, too.
"""
from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from typing import Any

from ..snapshots.pinned import format_interact_at, points_json
from ..store import layout
from .cells import PATH, Earlier, choose, defined_names, undefined
from .moves import code_cell, markdown, moves

_SESSION = re.compile(r"SparkSession|getOrCreate\(")
_TRIGGERS = ("--interact-every", "--interact-when", "--interact-at")  # replaced by the pins
_PAUSING = ("--break-when", "--on-error")  # a re-executed run must never wait for a hand
_INLINE_POINTS = 2000  # longer --interact-at points go to a JSON file beside the notebook


def export_notebook(run: Any, path: str,
                    known: Callable[[str], str | None] | None = None) -> list[str]:
    """Write the notebook; returns what needs the user's hand (also in its first cell).
    ``known(run_id)``: the status of a run this kernel holds (None: not held)."""
    manifest = run.manifest
    hand: list[str] = []
    if manifest.get("history") is None:
        hand.append("the run was not recorded from a notebook cell: the cells that "
                    "prepared its inputs are not known; add them before the %%icedtea cell")
    chosen = choose(_earlier(manifest), run.cell, lambda other: _status(run, other, known))
    kept, left_out = chosen.kept, list(chosen.reasons)
    cells: list[dict] = []
    setup = _session_cell(manifest, kept)
    if setup:
        cells.append(code_cell(setup, ignore=True))
    pinned = _pinned(run, path)
    line, dropped = _icedtea_cell(run, pinned)
    left_out.extend(dropped)
    for source, needs in _preparing_cells(kept, run, line):
        if needs:  # said where it matters, and in the first cell with the cell's number
            number = sum(c["cell_type"] == "code" for c in cells) + 1
            needs = [f"cell [{number}]: {need}" for need in needs]
            cells.append(markdown("**Needs your hand** before the next cell runs:\n\n"
                                  + "\n".join(f"- {need}" for need in needs)))
            hand.extend(needs)
        cells.append(code_cell(source, ignore=True))
    if pinned is None:
        hand.extend(_interactions_note(run))
    cells.append(code_cell("import icedtea_jupyter\nfrom pyspark.sql import Row\n"
                           "from icedtea_jupyter.export.states import bounded, shown, "
                           "stable, traced\n\nrun = icedtea_jupyter.last_run().wait()\n"
                           "dbg = run.debugger()", ignore=True))
    defined = set().union(*(defined_names(c) for c in [*kept, run.cell]))
    cells.extend(moves(run.actions, defined))
    cells.insert(0, markdown(_title(run, hand, left_out)))
    for count, cell in enumerate((c for c in cells if c["cell_type"] == "code"), 1):
        cell["execution_count"] = count  # nbval checks the outputs of cells that ran
    notebook = {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    with open(path, "w", encoding="utf-8") as out:
        json.dump(notebook, out, indent=1, ensure_ascii=False)
        out.write("\n")
    return hand


def _earlier(manifest: dict) -> list[Earlier]:
    """The kernel's cells before the run, with what became of each (a run recorded
    before outcomes were kept: none known)."""
    history = list(manifest.get("history") or [])
    outcomes = list(manifest.get("history_outcomes") or [])
    outcomes += [None] * (len(history) - len(outcomes))
    return [Earlier.of(source, outcome) for source, outcome in zip(history, outcomes)]


def _status(run: Any, other: str, known: Callable[[str], str | None] | None) -> str | None:
    """The status of run ``other`` (an earlier cell's): this kernel's, else its store's."""
    status = known(other) if known is not None else None
    if status is not None:
        return status
    try:
        with open(layout.manifest_path(layout.run_dir(run.root, other)),
                  encoding="utf-8") as stream:
            return json.load(stream).get("status")
    except (OSError, ValueError):
        return None


def _preparing_cells(kept: list[str], run: Any, line: str) -> list[tuple[str, list[str]]]:
    """The cells that prepare the run, then its ``%%icedtea`` cell, each with what it
    needs from the user to re-create the run: data gone, names no cell defines."""
    cells = [(c, _missing_paths(c)) for c in kept]
    cells.append((line, _missing_paths(run.cell) + _undefined(kept, run.cell)))
    return cells


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


def _icedtea_cell(run: Any, pinned: str | None) -> tuple[str, list[str]]:
    """The run's cell with its options; ``pinned``: its interactions as ``--interact-at``
    (instead of the triggers that took them). Breakpoints are left out (the re-run would
    wait at each forever): also returned, what was left out and why."""
    line = run.manifest.get("line")
    if line is None:
        line = _options_line(run.options)
    words = shlex.split(line)
    on_error = _valued(words, "--on-error")
    kept = _without(words, ("--wait", "--no-panel", "--reuse"),
                    (*(_TRIGGERS if pinned is not None else ()), *_PAUSING))
    dropped = []
    if any(w.split("=")[0] == "--break-when" for w in words):
        dropped.append("the --break-when breakpoints of the %%icedtea cell: the re-executed "
                       "run must not pause and wait for a hand")
    if on_error and on_error[-1].endswith("pause"):
        dropped.append("--on-error pause of the %%icedtea cell: the re-executed run must not "
                       "pause and wait for a hand (a record that raises fails it instead)")
    else:
        kept += on_error
    if pinned is not None:
        kept += ["--interact-at", pinned]
    line = " ".join(shlex.quote(w) for w in ["--wait", "--no-panel", *kept])
    return f"%%icedtea {line}\n{run.cell.rstrip()}", dropped


def _valued(words: list[str], flag: str) -> list[str]:
    """``flag`` and its value as they appear in ``words`` (nothing if absent)."""
    for i, word in enumerate(words):
        if word == flag and i + 1 < len(words):
            return [word, words[i + 1]]
        if word.startswith(flag + "="):
            return [word]
    return []


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


def _missing_paths(cell: str) -> list[str]:
    """The local paths ``cell`` names that no longer exist."""
    gone = {path for path in PATH.findall(cell)
            if not os.path.exists(os.path.expanduser(path))}
    return [f"the data at {path!r} no longer exists: point this cell at a copy"
            for path in sorted(gone)]


def _undefined(kept: list[str], cell: str) -> list[str]:
    """Names the pipeline reads that neither it nor an exported cell defines (a closure
    over an object made some other way, or in a cell the export left out)."""
    return [f"the %%icedtea cell uses {name!r}, which no exported cell defines (an object "
            "made some other way, or in a cell left out): define it before this cell"
            for name in sorted(undefined(kept, cell))]


def _title(run: Any, hand: list[str], left_out: list[str]) -> str:
    text = [f"# Debugging session: run {run.id} ({run.version})", "",
            "Exported by icedtea-jupyter. Run all cells in a fresh kernel: the pipeline is "
            "recorded again and every debugging move is made again, printing the states "
            "it showed (`pytest --nbval` checks them)."]
    if hand:
        text += ["", "**Needs your hand:**", ""] + [f"- {item}" for item in hand]
    if left_out:
        text += ["", "**Left out:**", ""] + [f"- {item}" for item in left_out]
    return "\n".join(text)
