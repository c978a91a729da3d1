"""The debugging moves of an exported notebook: each logged action as the cell that
makes it again and prints what it showed (``states.py``), for nbval to compare.

- a jump or step (``dbg.…``) prints the debugger's view after it, ``shown``;
- a state read (``run.snapshot(k).state(op, p)``) prints the state, ``stable``;
- a trace (``run.trace_back(…)``, ``run.trace_forward(…)``) prints what it reached,
  ``traced``; its ``.replay()`` the outputs it gave;
- a view or value too large to keep whole was logged bounded (``bounded``): the cell
  prints the same bounded form, and a note says so; one not kept at all runs with its
  output unchecked, and a note says why;
- what cannot be made again is left out with a note: a call that uses a name no
  exported cell defines, a breakpoint's decision (the re-run does not pause).
"""
from __future__ import annotations

import re
import secrets

from .cells import free_names, parsed

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
    (re.compile(r"run\.trace_back\((.*)\)\.replay\(\)"), "**Replay** of the backward trace "
                                                         "({0}): its outputs."),
    (re.compile(r"run\.trace_back\((.*)\)"), "**Trace back** ({0}): the records it comes "
                                             "from, at every operator."),
    (re.compile(r"run\.trace_forward\((.*)\)"), "**Trace forward** ({0}): the rows it went "
                                                "into, at every operator."),
]
_LIVE = ("run.breakpoints", "run.pause(", "run.resume(", "run.stop(", "run.add_",
         "run.remove_breakpoint(", "run.replace_operator(")  # made while the run recorded
MOVE_NAMES = {"run", "dbg", "Row", "shown", "stable", "bounded", "traced", "icedtea_jupyter"}
BOUNDED_NOTE = ("The states it showed were too large to keep whole (over 200,000 "
                "characters): each long one is printed as its first 1,000 characters, its "
                "length and the SHA-256 digest of all of it, which nbval compares.")


def moves(actions: list[dict], defined: set[str]) -> list[dict]:
    """The cells of the logged ``actions``; ``defined``: the names the exported cells
    before them define (a call that needs another is left out)."""
    cells = []
    for action in actions:
        call = action["call"]
        if call.startswith("run.interact("):
            cells.append(markdown("A manual interaction was taken here while the run "
                                  "recorded (`run.interact()`)."))
            continue
        code = _code_of(call, bool(action.get("bounded")))
        if code is None:
            cells.append(markdown(f"Left out: `{call}`{_where(action)} was made while the "
                                  "run recorded, and the re-executed run does not pause "
                                  "or wait for a hand." if call.startswith(_LIVE)
                                  else f"Left out: `{call}`{_where(action)} is not a move "
                                  "the export makes again."))
            continue
        missing = sorted(free_names(call) - defined - MOVE_NAMES)
        if missing or parsed(call) is None:
            names = ", ".join(f"`{n}`" for n in missing) or "a function without a name"
            cells.append(markdown(f"Left out: `{call}`{_where(action)} uses {names}, which "
                                  "no exported cell defines (a name made in a debugging "
                                  "cell, or after the run)."))
            continue
        text = _describe(call) + _where(action)
        shown = action.get("shown")
        if action.get("bounded"):
            text += "\n\n" + BOUNDED_NOTE
        elif action.get("unshown"):
            text += (f"\n\nWhat it showed was not kept ({action['unshown']}): the cell runs "
                     "again with its output unchecked.")
        cells.append(markdown(text))
        cells.append(code_cell(code, ignore=shown is None, output=shown))
    return cells


def _code_of(call: str, bounded: bool) -> str | None:
    """The cell that makes ``call`` again and prints what it showed; None: not made."""
    if call.startswith("dbg."):
        return (f"{call}\nprint(shown(dbg.snapshot(), bounded_states=True))" if bounded
                else f"{call}\nprint(shown(dbg.snapshot()))")
    if call.startswith("run.snapshot(") or call.endswith(".replay()"):
        return f"print(bounded(stable({call})))" if bounded else f"print(stable({call}))"
    if call.startswith(("run.trace_back(", "run.trace_forward(")):
        return f"print(traced({call}))"
    return None


def _where(action: dict) -> str:
    return {"sidebar": " (made in the sidebar)",
            "panel": " (made in the cell's panel)"}.get(action.get("source", "api"), "")


def _describe(call: str) -> str:
    for pattern, text in _DESCRIBE:
        match = pattern.fullmatch(call)
        if match:
            return text.format(*(g or "" for g in match.groups()))
    return f"`{call}`"


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": secrets.token_hex(4), "metadata": {},
            "source": text}


def code_cell(source: str, ignore: bool = False, output: str | None = None) -> dict:
    outputs = [] if output is None else [
        {"output_type": "stream", "name": "stdout", "text": output + "\n"}]
    tags = ["nbval-ignore-output"] if ignore else []
    return {"cell_type": "code", "id": secrets.token_hex(4), "execution_count": None,
            "metadata": {"tags": tags} if tags else {}, "outputs": outputs,
            "source": source}
