"""The panel's progress of each Python operator: one HTML widget holding a table (a
row an operator: its name, a progress bar over its partitions, its counts and rate).

One widget, not three a row: at 12 operators the panel's first drawing created 36
widget views in one of the page's tasks, and every refresh sent up to 36 updates."""
from __future__ import annotations

import html

import ipywidgets as widgets

_BAR_COLOURS = {"failed": "#d93025", "done": "#188038", "running": "#1a73e8"}


def fmt_count(n: float) -> str:
    """``1.23M``, ``12.3k``, ``950``."""
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= 1e4:
        return f"{n / 1e3:.1f}k"
    return f"{int(n)}"


def counts_text(row: dict) -> str:
    """``3/4 partitions · in 1.2k · out 1.2k, 500/s`` (the average rate once it ended)."""
    total = row["done"] + row["running"] + row["failed"]
    average = row.get("average_rate") or 0
    rate = (f", {fmt_count(row['rate'])}/s" if row["running"] else
            f", {fmt_count(average)}/s on average" if average else "")
    return (f"{row['done']}/{total} partitions · in {fmt_count(row['records_in'])}"
            f" · out {fmt_count(row['records_out'])}{rate}")


def row_html(row: dict) -> str:
    """One operator's table row; its bar red if a partition failed, green once all ended."""
    total = row["done"] + row["running"] + row["failed"]
    state = "failed" if row["failed"] else "done" if total and row["done"] == total \
        else "running"
    name = html.escape(str(row["operator"]))
    return (f"<tr class='icedtea-operator' data-operator='{name}' data-state='{state}'>"
            f"<td style='width:180px'><b>{name}</b></td>"
            f"<td style='width:160px'><progress value='{row['done']}' max='{max(total, 1)}' "
            f"style='width:150px;accent-color:{_BAR_COLOURS[state]}' "
            f"aria-label='{name}: {row['done']} of {total} partitions'></progress></td>"
            f"<td>{html.escape(counts_text(row))}</td></tr>")


class OperatorRows:
    """The table of every operator's progress; ``update`` redraws it only if it changed."""

    def __init__(self) -> None:
        self.widget = widgets.HTML()
        self.widget.add_class("icedtea-operators")

    def update(self, progress: list[dict]) -> None:
        value = ("<table style='border-collapse:collapse'>"
                 + "".join(row_html(row) for row in progress) + "</table>") if progress else ""
        self.widget.value = value  # traitlets sends nothing for an equal value
