"""The later stage: an aggregation's reduce side (and what PySpark pipelines after it).

Its workers receive exactly the records that descend from the records θ has processed —
the combiners the map sides (the ends of θ's chains) have emitted — in the order the
shuffle delivered them in the run, and process them at once: a step's scope runs to its
end, across the shuffle. When every map side has ended and every logged record has
arrived, the reduce side ends too and emits its results.
"""
from __future__ import annotations

from typing import Any, Callable

from .cursor import PartitionCursor
from .order import OriginOrder


class LaterStage:
    def __init__(self, partitions: list[int], make_cursor: Callable[[int], PartitionCursor],
                 origins_of: Callable[[int], Any]) -> None:
        self.cursors = {q: make_cursor(q) for q in partitions}
        self.orders = {q: OriginOrder(origins_of(q)) for q in partitions}

    def feed(self, map_sides: dict[int, PartitionCursor]) -> list[int]:
        """Hand each reduce partition what has arrived and process it; returns the
        partitions that changed."""
        emitted = {m: cursor.sink for m, cursor in map_sides.items()}
        all_ended = all(cursor.ended for cursor in map_sides.values())
        changed = []
        for q, cursor in self.cursors.items():
            arrived = self.orders[q].next_records(emitted)
            if arrived:
                cursor.inputs.extend(arrived)
                cursor.advance_to(len(cursor.inputs))
                changed.append(q)
            if all_ended and self.orders[q].complete and not cursor.ended:
                cursor.finish()
                changed.append(q)
        return changed

    def abandon(self) -> None:
        for cursor in self.cursors.values():
            cursor.abandon()
