"""One step of a trace over the lineage links, in DuckDB.

A step maps a set of positions on one side of an operator to the other side: back,
from its outputs to its inputs; forward, from one of its inputs to its outputs. Both
are joins of the positions with the operator's links, pruned by partition (the join
key), a ``cross`` link fanning out to its whole range.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from .records import Positions

_BACK = """
SELECT DISTINCT input, part, pos FROM (
  SELECT l.input AS input, l.in_part AS part,
         unnest(CASE WHEN l."cross" THEN range(l.in_start, l.in_start + l.in_count)
                     ELSE [l.in_start + s.pos - l.out_start] END) AS pos
  FROM wanted s JOIN links l
    ON l.op = $op AND l.part = s.part
   AND s.pos >= l.out_start AND s.pos < l.out_start + l.out_count)
"""

_FORWARD = """
SELECT DISTINCT part, pos FROM (
  SELECT l.part AS part,
         unnest(CASE WHEN l."cross" THEN range(l.out_start, l.out_start + l.out_count)
                     ELSE [l.out_start + s.pos - l.in_start] END) AS pos
  FROM wanted s JOIN links l
    ON l.op = $op AND l.input = $input AND l.in_part = s.part
   AND s.pos >= l.in_start AND s.pos < l.in_start + l.in_count)
"""


class DuckEngine:
    """Steps over a run's links (``tables.load_links``) in an embedded DuckDB."""

    name = "duckdb"

    def __init__(self, con: Any) -> None:
        self.con = con

    def back(self, op: int, positions: Positions) -> dict[int, Positions]:
        """Input index -> the positions of that input that ``positions`` of ``op``'s
        outputs come from."""
        found: dict[int, Positions] = {}
        for index, part, pos in self._run(_BACK, positions, op=op):
            found.setdefault(index, {}).setdefault(part, set()).add(pos)
        return found

    def forward(self, op: int, index: int, positions: Positions) -> Positions:
        """The outputs of ``op`` that ``positions`` of its input ``index`` went into."""
        found: Positions = {}
        for part, pos in self._run(_FORWARD, positions, op=op, input=index):
            found.setdefault(part, set()).add(pos)
        return found

    def _run(self, query: str, positions: Positions, **params: int) -> list[tuple]:
        parts = [p for p, ps in positions.items() for _ in ps]
        poss = [x for ps in positions.values() for x in ps]
        if not poss:
            return []
        wanted = pa.table({"part": pa.array(parts, pa.int32()), "pos": pa.array(poss, pa.int64())})
        self.con.register("wanted", wanted)
        try:
            return self.con.execute(query, params).fetchall()
        finally:
            self.con.unregister("wanted")
