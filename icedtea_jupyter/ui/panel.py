"""The live run panel shown as the output of a ``%%icedtea`` cell (ipywidgets).

Progress, "interact now", the interaction timeline (a click jumps there once the run
has ended), the debugger's snapshot and step buttons: the essentials of the sidebar
for users outside JupyterLab. Every action is a call of the run's API."""
from __future__ import annotations

import html
import logging
import threading
import time
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from ..session.actions import acting_as
from ..session.run import Run
from .control import ControlBar
from .debugging import DebugControls
from .operators import OperatorRows
from .timeline import TimelineRow

LOG = logging.getLogger("icedtea_jupyter")
REFRESH_PERIOD = 0.25
_STATUS_COLOURS = {"running": "#1a73e8", "finished": "#188038", "failed": "#d93025",
                   "stopped": "#b06000"}


_TRIGGERS = ["initial", "manual", "periodic", "condition"]


def _plural(n: int, noun: str) -> str:
    """``"1 interaction"``, ``"2 interactions"``, ``"1,077 interactions"``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


class RunPanel:
    """Progress per operator, status, elapsed time, error, warnings and alerts of a run."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.header = widgets.HTML()
        self.operators = OperatorRows()
        self.interact_button = widgets.Button(description="Interact now", icon="camera",
                                              tooltip="a tuple-consistent snapshot of G(θ) now")
        self.interact_button.add_class("icedtea-interact")
        self.interact_button.on_click(self._interact)
        self.timeline = widgets.HTML()
        self.messages = widgets.HTML()
        self.debug_failure = widgets.Button(
            description="Debug this failure", icon="bug",
            layout=widgets.Layout(display="none", width="auto"),
            tooltip="θ's chain on the failing partition just before the culprit record "
                    "(dbg.jump_to_failure()); Step over then reproduces the exception")
        self.debug_failure.add_class("icedtea-debug-failure")
        self.debug_failure.on_click(self._debug_failure)
        self.debug = DebugControls(run)
        self.control = ControlBar(run)
        self.timeline_row = TimelineRow(self._jump)
        controls = widgets.HBox([self.interact_button, self.timeline])
        self.widget = widgets.VBox([
            self.header, self.operators.widget, self.control.widget, controls,
            self.timeline_row.widget, self.debug.progress, self.debug.widget, self.messages,
            self.debug_failure])
        self.widget.add_class("icedtea-panel")
        self._dirty = threading.Event()
        run.subscribe(self._on_event)
        self.refresh()
        self.debug.update()
        debugger = run.current_debugger
        self.debug.show_progress(debugger.progress if debugger is not None else None)
        threading.Thread(target=self._loop, daemon=True, name=f"icedtea-panel-{run.id}").start()

    def _loop(self) -> None:
        while self.run.status == "running":
            self._dirty.wait(1.0)
            self._dirty.clear()
            self.refresh()
            time.sleep(REFRESH_PERIOD)
        self.refresh()

    def _on_event(self, kind: str, data: dict) -> None:
        self._dirty.set()
        if kind == "moved":  # from the panel, the sidebar or the user's code
            self.debug.update()
            self._timeline_row(self.timeline_row.interactions)
        elif kind == "replay":  # the replay process placing its fork checkpoints
            self.debug.show_progress(data)

    def _interact(self, _button: Any = None) -> None:
        """Take the interaction off the kernel's thread: the workers answer within ms."""
        def interact() -> None:
            try:
                with acting_as("panel"):
                    self.run.interact()
            except RuntimeError as exc:  # the run ended between the click and the call
                LOG.warning("icedtea: 'Interact now' did nothing: %s", exc)
            self._dirty.set()
        threading.Thread(target=interact, daemon=True).start()

    def _debug_failure(self, _button: Any = None) -> None:
        self.debug.act(lambda dbg: dbg.jump_to_failure())

    def _jump(self, index: int) -> None:
        self.debug.act(lambda dbg: dbg.jump(index))

    def _timeline_row(self, interactions: list) -> None:
        dbg = self.run.current_debugger
        current = dbg.current.index if dbg is not None and dbg.current is not None else None
        can_jump = self.run.status != "running" and self.run.dag.interesting is not None
        self.timeline_row.update(interactions, current, can_jump)

    def _timeline(self, interactions: list) -> str:
        shown = interactions[-12:]
        marks = " ".join(f"<span class='icedtea-mark' title='{i.trigger} at "
                         f"{time.strftime('%H:%M:%S', time.localtime(i.time))}'>"
                         f"I{i.index}<sub>{i.trigger[0]}</sub></span>" for i in shown)
        more = f"… {len(interactions) - 12} earlier · " if len(interactions) > 12 else ""
        present = {i.trigger for i in shown}  # the subscripts' legend: the triggers shown
        triggers = [t for t in _TRIGGERS if t in present] + sorted(present - set(_TRIGGERS))
        legend = (" <span class='icedtea-legend' style='color:#666'>("
                  + ", ".join(f"<sub>{t[0]}</sub> {html.escape(t)}" for t in triggers)
                  + ")</span>") if triggers else ""
        theta = self.run.dag.interesting
        return (f"&nbsp;θ = <b>{html.escape(theta.name) if theta else '—'}</b> · "
                f"{_plural(len(interactions), 'interaction')}: {more}{marks}{legend}")

    def refresh(self) -> None:
        run = self.run
        colour = _STATUS_COLOURS.get(run.status, "#555")
        self.header.value = (
            f"<div class='icedtea-header'><b>icedtea</b> run <code>{run.id}</code> · "
            f"<span class='icedtea-status' style='color:{colour}'><b>{run.status}</b></span> · "
            f"{run.duration:.1f} s · {_plural(len(run.dag.python_operators), 'Python operator')}"
            "</div>")
        self.operators.update(run.progress())
        self.messages.value = self._messages()
        self.control.update()
        interactions = run.interaction_marks()
        self.timeline.value = self._timeline(interactions)
        self._timeline_row(interactions)
        self.interact_button.disabled = run.status != "running" or run.dag.interesting is None
        failed_in_operator = run.status == "failed" and bool((run.error or {}).get("operator"))
        self.debug_failure.layout.display = "" if failed_in_operator and \
            run.dag.interesting is not None else "none"

    def _messages(self) -> str:
        parts = []
        error = self.run.error
        if error:
            record = (error.get("record") or {}).get("repr")
            where = (f" in operator <b>{html.escape(str(error['operator']))}</b>, partition "
                     f"{error.get('partition')}" if error.get("operator") else "")
            culprit = f"<br>culprit record: <code>{html.escape(record)}</code>" if record else ""
            parts.append(f"<div class='icedtea-error' style='color:#d93025'>Failed{where}: "
                         f"{html.escape(error.get('message', ''))}{culprit}</div>")
        for note in self.run.manifest.get("notes") or []:  # versions: a reused answer
            parts.append(f"<div class='icedtea-note' style='color:#1a73e8'>↺ "
                         f"{html.escape(note)}</div>")
        for warning in self.run.warnings:
            parts.append(f"<div class='icedtea-warning' style='color:#b06000'>⚠ "
                         f"{html.escape(warning)}</div>")
        parts.extend(alert_group_html(group) for group in self.run.alert_groups(PANEL_RECORDS))
        return "".join(parts)


PANEL_RECORDS = 3  # records shown per group of alerts in the panel


def alert_group_html(group: dict) -> str:
    """One tool's alerts on one check and operator: count, latest message, records."""
    color = {"error": "#d93025", "info": "#555"}.get(group["level"], "#b06000")
    where = f" on {group['operator']}" if group["operator"] else ""
    what = html.escape(f"{group['check'] or ''}{where}")
    records = "".join(f"<li>p{r['partition']} <code>{html.escape(r['repr'])}</code></li>"
                      for r in group["records"])
    return (f"<div class='icedtea-alert' data-tool='{html.escape(group['tool'])}'>"
            f"🔔 <b style='color:{color}'>{html.escape(group['tool'])}</b> {what} "
            f"×{group['count']}: {html.escape(group['message'])}"
            f"{f'<ul>{records}</ul>' if records else ''}</div>")


def show_panel(run: Run) -> Any:
    panel = RunPanel(run)
    run.panel = panel
    display(panel.widget)
    return panel
