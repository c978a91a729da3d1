"""Conditional breakpoints tested on lists of records read ahead, not record by record.

A breakpoint's handler called on every record (a C ``map``) costs one Python call a
record, and keeps the operator's input from being read ahead. Here the input is read
ahead in lists of ``READ_AHEAD`` records from Spark's input (reading it ahead runs no
operator's code earlier than Spark would); each armed condition is compiled once into a
loop over a list (``compile_scan``) that finds the first record it holds for. Records
before that one pass on as a list iterator (C calls only); the watches' handlers run on
the matching record alone, when the operator pulls it — so a hit still holds the task
exactly before that record, with every earlier record processed.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from operator import length_hint
from typing import Any

READ_AHEAD = 256  # records read ahead and tested at once

_SCAN = """
def first_match(rows, start):
    i = start
    try:
        for i, row in enumerate(rows[start:] if start else rows, start):
            if ({expression}):
                return i
    except Exception:
        return i  # the handler raises it again there: the breakpoint is reported broken
    return -1
"""


_MATCHES = """
def matches(rows):
    found = []
    for i, row in enumerate(rows):
        try:
            if ({expression}):
                found.append(i)
        except Exception:
            found.append(i)
    return found
"""


def compile_scan(expression: str) -> Callable[[list, int], int]:
    """``first_match(rows, start)``: the index of the first of ``rows[start:]`` that
    ``expression`` (over ``row``) holds for, or raises on; -1 if none."""
    return _compiled(_SCAN, expression, "<breakpoint>")


def compile_matches(expression: str, what: str = "<check>") -> Callable[[list], list[int]]:
    """``matches(rows)``: the indexes of all ``rows`` that ``expression`` (over ``row``)
    holds for, or raises on (one loop over the list, the expression inline: no call a
    row). ``what`` names the code in tracebacks."""
    return _compiled(_MATCHES, expression, what)


def _compiled(template: str, expression: str, what: str) -> Callable:
    names: dict = {}
    exec(compile(template.format(expression=expression), what, "exec"), names)
    return names[template.split("(")[0].split()[-1]]


class ScannedInput:
    """``source`` read ahead in lists; ``first_match(rows, start)`` finds the next record
    where ``at_match(record, index)`` must run (it gives the record to pass on, or
    ``skip`` to drop it). ``rescan()`` takes the conditions armed now into account for
    the records read ahead but not yet passed on."""

    def __init__(self, source: Iterable, first_match: Callable[[list, int], int],
                 at_match: Callable[[Any, int], Any], skip: object, base: int) -> None:
        self.source = iter(source)
        self.first_match, self.at_match, self.skip = first_match, at_match, skip
        self.rows: list = []  # the records read ahead ...
        self.next = 0  # ... rows[next:] not handed on yet (but what ``piece`` holds)
        self.piece: Iterator = iter(())  # the run of records handed on last
        self.index = base  # the input index of rows[0]

    def __iter__(self) -> Iterator:
        return chain.from_iterable(self._pieces())

    def _pieces(self) -> Iterator[Iterable]:
        while True:
            rows = self.rows
            if self.next >= len(rows):
                self.index += len(rows)
                self.rows = rows = list(islice(self.source, READ_AHEAD))
                self.next = 0
                if not rows:
                    return
            start = self.next
            match = self.first_match(rows, start)
            stop = len(rows) if match < 0 else match
            if stop > start:
                self.piece = iter(rows if start == 0 and stop == len(rows) else rows[start:stop])
                self.next = stop
                yield self.piece
                continue  # a rescan may have changed the records left (then: test them again)
            self.next = match + 1
            record = self.at_match(rows[match], self.index + match)
            if record is not self.skip:
                yield (record,)

    def pending(self) -> list:
        """The records read ahead that the consumer has not pulled yet."""
        return self.rows[self.next - length_hint(self.piece):]

    def rescan(self) -> None:
        """Between two records: the records read ahead and not pulled are tested again
        (with the conditions armed now) before they are handed on."""
        left = self.pending()
        deque(self.piece, maxlen=0)  # the consumer's next pull comes back here
        self.index += len(self.rows) - len(left)
        self.rows, self.next = left, 0
