"""The plugins a worker host starts with (``plugin.py``), in order.

Live control comes first: its ``records`` wrapper is innermost, so the records it skips
or replaces at a breakpoint are, for time travel, lineage and the agents, the records
the operator saw.
"""
from __future__ import annotations

from typing import Any

from .agent import AgentPlugin
from .control import LiveControl
from .lineage import LineageCapture
from .plugin import WorkerPlugin
from .skew import SkewCounter, keyed_worker
from .timetravel import TimeTravel


def plugins_of(host: Any) -> list[WorkerPlugin]:
    """Live control always, time travel in G(θ), lineage with ``--lineage``, key counts of
    key-partitioned workers with ``--skew``, the agents."""
    plugins: list[WorkerPlugin] = [LiveControl(host)]
    if host.spec.in_g:
        plugins.append(TimeTravel(host))
    if host.spec.run.lineage:
        plugins.append(LineageCapture(host))
    if host.spec.run.skew and keyed_worker(host.spec):
        plugins.append(SkewCounter(host))
    plugins.append(AgentPlugin(host))
    return plugins
