"""One step of a trace over the lineage links, in DuckDB.

A step maps a set of positions on one side of an operator to the other side: back,
from its outputs to its inputs; forward, from one of its inputs to its outputs. Both
are joins of the positions with the operator's links on (partition, block of
positions), then the range, a ``cross`` link fanning out to its whole range.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from .records import Positions

BLOCK_BITS = 10  # a step joins positions with links on (partition, block of 1,024 positions)

# Each link is listed under every block its side's range touches (``blocks``): the join
# is an equi-join on (partition, block), then a range filter. A join on the partition
# alone with the range as its condition compares every wanted position with every link
# of its partition (52k positions x 125k links a step at 5M words).
_BACK = """
WITH l AS (
  SELECT *, unnest(range(out_start >> $bits, ((out_start + out_count - 1) >> $bits) + 1))
         AS block
  FROM links WHERE op = $op AND part IN (SELECT DISTINCT part FROM wanted))
SELECT DISTINCT input, part, pos FROM (
  SELECT l.input AS input, l.in_part AS part,
         unnest(CASE WHEN l."cross" THEN range(l.in_start, l.in_start + l.in_count)
                     ELSE [l.in_start + s.pos - l.out_start] END) AS pos
  FROM wanted s JOIN l
    ON l.part = s.part AND l.block = s.pos >> $bits
   AND s.pos >= l.out_start AND s.pos < l.out_start + l.out_count)
"""

_FORWARD = """
WITH l AS (
  SELECT *, unnest(range(in_start >> $bits, ((in_start + in_count - 1) >> $bits) + 1))
         AS block
  FROM links WHERE op = $op AND input = $input
   AND in_part IN (SELECT DISTINCT part FROM wanted))
SELECT DISTINCT part, pos FROM (
  SELECT l.part AS part,
         unnest(CASE WHEN l."cross" THEN range(l.out_start, l.out_start + l.out_count)
                     ELSE [l.out_start + s.pos - l.in_start] END) AS pos
  FROM wanted s JOIN l
    ON l.in_part = s.part AND l.block = s.pos >> $bits
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
            return self.con.execute(query, {**params, "bits": BLOCK_BITS}).fetchall()
        finally:
            self.con.unregister("wanted")
