"""The panel's interaction timeline: one button per interaction; a click jumps to it."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

WINDOW = 50  # buttons shown at once; a slider pages through longer timelines


class TimelineRow:
    """Buttons for a window of ``WINDOW`` interactions (the latest, unless paged back).

    The buttons are a fixed pool, relabelled on each update, so a long run does not
    leave thousands of dead widgets behind; ``on_jump(index)`` is called on a click."""

    def __init__(self, on_jump: Callable[[int], None]) -> None:
        self.on_jump = on_jump
        self.pool: list[widgets.Button] = []
        self.indices: list[int] = []  # the interaction each pool button shows
        self.interactions: list[Any] = []
        self.current: int | None = None
        self.enabled = False
        self._shown: tuple = ()
        self.row = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap"))
        self.slider = widgets.IntSlider(0, min=0, max=0, description="from I",
                                        continuous_update=False,
                                        layout=widgets.Layout(display="none", width="360px"))
        self.slider.observe(lambda change: self._render(), names="value")
        # the slider is shown (and drawn: its first drawing forces the page's layout)
        # only once the timeline is longer than a window
        self.widget = widgets.VBox([self.row])
        self.widget.add_class("icedtea-timeline")

    @property
    def buttons(self) -> list[widgets.Button]:
        """The buttons shown now, oldest first."""
        return list(self.row.children)

    def update(self, interactions: list[Any], current: int | None, enabled: bool) -> None:
        """Show ``interactions``; ``current`` is highlighted; jumps need ``enabled``."""
        following = self.slider.value >= self.slider.max
        self.interactions, self.current, self.enabled = interactions, current, enabled
        self.slider.max = max(len(interactions) - WINDOW, 0)
        paged = len(interactions) > WINDOW
        self.slider.layout.display = "" if paged else "none"
        self.widget.children = (self.row, self.slider) if paged else (self.row,)
        if following and self.slider.value != self.slider.max:
            self.slider.value = self.slider.max  # renders through the observer
        else:
            self._render()

    def _render(self) -> None:
        shown = self.interactions[self.slider.value:self.slider.value + WINDOW]
        key = (tuple((i.index, i.trigger, i.complete) for i in shown), self.current,
               self.enabled)
        if key == self._shown:
            return
        self._shown = key
        while len(self.pool) < len(shown):
            self._add_button()
        self.indices = [i.index for i in shown]
        for button, interaction in zip(self.pool, shown):
            self._label(button, interaction)
        self.row.children = self.pool[:len(shown)]

    def _add_button(self) -> None:
        slot = len(self.pool)
        button = widgets.Button(layout=widgets.Layout(width="auto", min_width="42px"))
        button.add_class("icedtea-jump")
        button.on_click(lambda _button: self.on_jump(self.indices[slot]))
        self.pool.append(button)

    def _label(self, button: widgets.Button, interaction: Any) -> None:
        when = time.strftime("%H:%M:%S", time.localtime(interaction.time))
        pending = "" if interaction.complete else ", snapshot incomplete"
        button.description = f"I{interaction.index}"
        button.tooltip = f"jump to I{interaction.index}: {interaction.trigger} at {when}{pending}"
        button.button_style = "info" if interaction.index == self.current else ""
        button.disabled = not self.enabled
