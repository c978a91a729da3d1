"""Live control in the cell's run panel: Pause/Resume, and the hit waiting for a decision
with Skip, Resume and Stop (replacing a record needs its editor: the sidebar, or
``hit.replace(record)``). Every button is one call of the run's API, recorded as coming
from the panel."""
from __future__ import annotations

import html
import logging
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..session.actions import acting_as

LOG = logging.getLogger("icedtea_jupyter")


class ControlBar:
    """Pause/Resume and the pending hit of a running run (``run.pause()``...)."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.pause_button = widgets.Button(description="Pause", icon="pause",
                                           tooltip="every running task holds between two "
                                                   "records (run.pause())")
        self.pause_button.add_class("icedtea-pause")
        self.pause_button.on_click(lambda _: self._act(self._toggle))
        self.status = widgets.HTML()
        self.hit = widgets.HTML()
        self.hit_buttons = []
        for action in ("skip", "resume", "stop"):
            button = widgets.Button(description=action.capitalize(),
                                    layout=widgets.Layout(width="auto"))
            button.add_class(f"icedtea-hit-{action}")
            button.on_click(lambda _, a=action: self._act(lambda: self._decide(a)))
            self.hit_buttons.append(button)
        self.hit_row = widgets.HBox([self.hit, *self.hit_buttons])
        self._bar = widgets.HBox([self.pause_button, self.status])
        self.widget = widgets.VBox([self._bar])  # the hit's row only while a hit waits
        self.update()

    def _toggle(self) -> None:
        if self.run.paused:
            seconds = self.run.resume()
            self.status.value = f"&nbsp;resumed in {seconds * 1000:.0f} ms"
        else:
            report = self.run.pause()
            self.status.value = f"&nbsp;{html.escape(repr(report))}"

    def _decide(self, action: str) -> None:
        pending = [hit for hit in self.run.breakpoints if hit.pending]
        if pending:
            getattr(pending[0], action)()

    def _act(self, call: Callable[[], None]) -> None:
        """Off the kernel's thread: a pause waits for the workers' answers."""
        def act() -> None:
            try:
                with acting_as("panel"):
                    call()
            except (RuntimeError, ValueError) as exc:  # the run ended meanwhile
                LOG.warning("icedtea: the panel's live control did nothing: %s", exc)
            self.update()
        threading.Thread(target=act, daemon=True).start()

    def update(self) -> None:
        run = self.run
        running = run.status == "running"
        self.pause_button.disabled = not running
        self.pause_button.description = "Resume" if run.paused else "Pause"
        self.pause_button.icon = "play" if run.paused else "pause"
        pending = [hit for hit in run.breakpoints if hit.pending] if running else []
        self.widget.children = (self._bar, self.hit_row) if pending else (self._bar,)
        if pending:
            hit = pending[0]
            where = f"partition {hit.partition}" if hit.partition is not None else \
                f"total {hit.total:g}"
            record = "" if hit.record is None else f": <code>{html.escape(repr(hit.record))}</code>"
            self.hit.value = (f"<b>{html.escape(hit.kind)}</b> breakpoint on "
                              f"<b>{html.escape(hit.operator)}</b>, {where}{record}&nbsp;")
            for button in self.hit_buttons[:1]:  # a global hit has no record to skip
                button.disabled = hit.kind in ("count", "sum")
