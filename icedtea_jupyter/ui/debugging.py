"""The panel's debugger controls: the current snapshot, step buttons, refusals.

Every button is one call of the run's debugger (``run.debugger()``, shared with the
sidebar and the user's code), made ``acting_as("panel")`` so the action log says so.
The view follows the debugger wherever it moves from (``update`` on ``moved`` events).
"""
from __future__ import annotations

import html
import reprlib
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..session.actions import acting_as
from ..session.run import Run, StepRefused

MAX_WORKERS = 60  # rows of the snapshot table
MAX_REPR = 90
_CHANGED = "background:#fff3b0"
_REPR = reprlib.Repr()  # bounded: a huge state is not printed whole
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 40, 60
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 8


def _short(value: Any) -> str:
    text = _REPR.repr(value)
    return html.escape(text if len(text) <= MAX_REPR else text[:MAX_REPR] + "…")


def _state_cell(snapshot: Any, operator: str, partition: int) -> str:
    state = snapshot.state(operator, partition)
    changed = snapshot.changed(operator, partition)
    marked = set(changed["variables"]) | set(changed["keys"])
    parts = [f"<span class='icedtea-changed' style='{_CHANGED}'>{html.escape(name)}</span>"
             f" = {_short(value)}" if name in marked else f"{html.escape(name)} = {_short(value)}"
             for name, value in state.items()]
    return "<br>".join(parts) or "<i>no state</i>"


def _waiting_cell(pending: dict, operator: str, partition: int) -> str:
    row = pending.get(partition, {}).get(operator)
    if not row or not row["count"]:
        return ""
    return f"{row['count']} · next {_short(row['records'][0])}" if row["records"] else \
        str(row["count"])


def snapshot_table(snapshot: Any, pending: dict, chain: list[str]) -> str:
    """Each replayed worker's count, waiting records and state (changes highlighted),
    by partition, in pipeline order."""
    order = {name: i for i, name in enumerate(chain)}
    workers = sorted(snapshot.workers(), key=lambda w: (w["partition"],
                                                        order.get(w["operator"], len(order))))
    rows = [f"<tr><td>{html.escape(w['operator'])}</td><td>{w['partition']}</td>"
            f"<td>{w['count']}</td><td>{_waiting_cell(pending, w['operator'], w['partition'])}"
            f"</td><td>{_state_cell(snapshot, w['operator'], w['partition'])}</td></tr>"
            for w in workers[:MAX_WORKERS]]
    more = (f"<tr><td colspan=5>… {len(workers) - MAX_WORKERS} more workers: see "
            "dbg.state(operator, partition)</td></tr>" if len(workers) > MAX_WORKERS else "")
    return ("<table class='icedtea-snapshot'><tr><th>operator</th><th>partition</th>"
            "<th>processed</th><th>waiting</th><th>state</th></tr>"
            f"{''.join(rows)}{more}</table>")


def failure_html(failure: dict | None) -> str:
    """The recorded exception, once a step reproduced it, with its replayed traceback."""
    if not failure:
        return ""
    return (f"<div class='icedtea-replayed-failure' style='color:#d93025'>Partition "
            f"{failure['partition']} ended as in the recorded run: "
            f"<b>{html.escape(failure['operator'])}</b> raised "
            f"{html.escape(failure['exception'])}: {html.escape(failure['message'])} on its "
            f"input #{failure['index']}<details><summary>Traceback (replayed)</summary><pre>"
            f"{html.escape(failure['traceback'])}</pre></details></div>")


class DebugControls:
    """Partition and operator choices, step buttons, a message line and the snapshot."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.partition = widgets.Dropdown(description="partition", options=[],
                                          layout=widgets.Layout(width="170px"))
        self.operator = widgets.Dropdown(description="operator", options=[],
                                         layout=widgets.Layout(width="230px"))
        self.step_over = self._button("Step over", "θ's next record and its whole scope",
                                      lambda dbg, p: dbg.step_over(partition=p))
        self.step_into = self._button("Step into", "the operator processes its next record",
                                      lambda dbg, p: dbg.step_into(
                                          partition=p, operator=self.operator.value))
        self.step_out = self._button("Step out", "the rest of the current scope",
                                     lambda dbg, p: dbg.step_out(partition=p))
        self.cancel = widgets.Button(description="Cancel", tooltip="Stop this jump or step",
                                     layout=widgets.Layout(display="none"))
        self.cancel.add_class("icedtea-cancel")
        self.cancel.on_click(lambda _button: self._cancel())
        self.header = widgets.HTML()
        self.message = widgets.HTML()
        self.message.add_class("icedtea-debug-message")
        self.progress = widgets.HTML()
        self.progress.add_class("icedtea-preparing")
        self.snapshot = widgets.HTML()
        controls = widgets.HBox([self.partition, self.operator, self.step_over,
                                 self.step_into, self.step_out, self.cancel])
        self._body = widgets.VBox([self.header, controls, self.message, self.snapshot])
        # in the cell only once the debugger has jumped: hidden from the run's start, its
        # dropdowns and buttons were still drawn there (their labels typeset by MathJax)
        self.widget = widgets.VBox([], layout=widgets.Layout(display="none"))
        self.widget.add_class("icedtea-debugger")
        self._busy: threading.Thread | None = None  # the move in progress, off the kernel's thread
        self._lock = threading.Lock()

    def _button(self, label: str, tooltip: str, step: Callable[[Any, int], Any]) -> Any:
        button = widgets.Button(description=label, tooltip=tooltip)
        button.add_class("icedtea-" + label.lower().replace(" ", "-"))
        button.on_click(lambda _button: self.act(lambda dbg: step(dbg, self.partition.value)))
        return button

    def act(self, move: Callable[[Any], Any]) -> None:
        """Make one debugger call as the panel, on a thread of its own (the kernel goes on
        answering, *Cancel* shows meanwhile); a refusal shows its reason."""
        with self._lock:
            if self._busy is not None:
                self._say("The debugger is still busy with the last move: wait, or Cancel")
                return
            self._busy = threading.Thread(target=self._act, args=(move,), daemon=True,
                                          name="icedtea-panel-move")
            self.cancel.layout.display = ""
            self._busy.start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the move in progress has ended (for scripts and tests)."""
        busy = self._busy
        if busy is not None:
            busy.join(timeout)

    def _act(self, move: Callable[[Any], Any]) -> None:
        try:
            with acting_as("panel"):
                move(self.run.debugger())
        except StepRefused as exc:
            self._say(f"Refused: {exc}")
        except (LookupError, RuntimeError, ValueError) as exc:
            self._say(f"{type(exc).__name__}: {exc}")
        else:
            self.message.value = ""
        finally:
            with self._lock:
                self._busy = None
                self.cancel.layout.display = "none"

    def _cancel(self) -> None:
        dbg = self.run.current_debugger
        if dbg is not None:
            dbg.cancel()

    def show_progress(self, progress: dict | None) -> None:
        """The replay process placing its fork checkpoints: how far it is."""
        progress = progress or {}
        state = progress.get("state")
        if state in ("starting", "preparing"):
            done, of = progress.get("done", 0), progress.get("of", 0)
            text = f"{100 * done // of}%" if of else "starting…"
            self.progress.value = f"<span class='icedtea-muted'>Preparing time travel: {text}</span>"
        elif state == "failed":
            self._say(f"Time travel could not be prepared: {progress.get('error', '')}")
            self.progress.value = ""
        else:
            self.progress.value = ""

    def _say(self, text: str) -> None:
        self.message.value = f"<span style='color:#d93025'>{html.escape(text)}</span>"

    def update(self) -> None:
        """Show where the run's debugger stands (hidden until it has jumped)."""
        dbg = self.run.current_debugger
        if dbg is None or dbg.current is None:
            return
        with dbg.lock:
            snapshot, chain = dbg.snapshot(), dbg.chain
            self._choices(dbg.partitions(chain[0]), chain)
            where = (f"at I{snapshot.index}" if snapshot.index is not None
                     else "just before the culprit record"
                     if snapshot.step.startswith("jump to the failure")
                     else "stepped away from its last jump")
            notes = "".join(f"<br>⚠ {html.escape(n)}" for n in snapshot.notes)
            self.header.value = (f"<b>Debugger</b> {where} · last: "
                                 f"{html.escape(snapshot.step)}{notes}"
                                 f"{failure_html(snapshot.failure)}")
            if snapshot.partition in self.partition.options:  # a step's, or the failure's
                self.partition.value = snapshot.partition
            self.snapshot.value = snapshot_table(snapshot, dbg.pending(limit=1), chain)
        self.widget.children = (self._body,)
        self.widget.layout.display = ""

    def _choices(self, partitions: list[int], chain: list[str]) -> None:
        for dropdown, options in ((self.partition, partitions), (self.operator, chain)):
            if list(dropdown.options) != options:
                dropdown.options = options
            if dropdown.value not in options and options:
                dropdown.value = options[0]
