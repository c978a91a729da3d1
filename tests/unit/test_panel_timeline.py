"""The panel's timeline row: a fixed pool of jump buttons paging through long timelines."""
from dataclasses import dataclass

from icedtea_jupyter.ui.timeline import WINDOW, TimelineRow


@dataclass
class Moment:
    index: int
    time: float = 0.0
    trigger: str = "periodic"
    complete: bool = True


def moments(n):
    return [Moment(i) for i in range(n)]


def test_a_long_timeline_shows_the_latest_window_and_pages_back():
    jumps = []
    row = TimelineRow(jumps.append)
    row.update(moments(120), current=None, enabled=True)
    labels = [b.description for b in row.buttons]
    assert labels == [f"I{i}" for i in range(70, 120)] and len(row.pool) == WINDOW
    assert row.slider.layout.display == "" and row.slider.max == 70
    assert row.widget.children == (row.row, row.slider)
    row.buttons[-1].click()
    row.slider.value = 0  # page back to the start
    assert [b.description for b in row.buttons][:2] == ["I0", "I1"]
    row.buttons[3].click()
    assert jumps == [119, 3]
    row.update(moments(130), current=3, enabled=True)  # paged back: stays put
    assert row.buttons[0].description == "I0" and row.buttons[3].button_style == "info"
    assert len(row.pool) == WINDOW  # relabelled, not rebuilt


def test_the_window_follows_new_interactions_at_the_end_and_disables_while_recording():
    row = TimelineRow(lambda index: None)
    row.update(moments(3), current=None, enabled=False)
    assert row.slider.layout.display == "none" and all(b.disabled for b in row.buttons)
    assert row.widget.children == (row.row,)  # no slider drawn in the cell
    row.update(moments(60), current=None, enabled=False)
    assert row.buttons[-1].description == "I59" and row.slider.value == 10
    row.update(moments(61), current=None, enabled=True)
    assert row.buttons[-1].description == "I60" and not row.buttons[0].disabled
