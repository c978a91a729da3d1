"""A worker's input stream with the records agents pick, and no Python code per record
passed over (``Agent.input_picks``).

Each picking agent gives the gaps between the records it wants (a sample by skip
counts); the stream is ``chain.from_iterable`` over segments: an ``islice`` passing the
records up to the next pick of any agent (C code only), then a one-record tuple holding
the record picked, handed to every agent that picked it. One stream serves all the
agents, however many; segments are made when the operator asks for its next record,
so nothing is read ahead.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import Any

Picker = tuple[Iterator[int], Callable[[Any], None]]  # (gaps, take)


def picked_stream(records: Iterable, pickers: list[Picker]) -> Iterator:
    """``records`` unchanged; each picker's ``take(record)`` is called with the record
    after each of its gaps (the first gap counts from the start)."""
    return chain.from_iterable(_segments(iter(records), pickers))


def _segments(records: Iterator, pickers: list[Picker]) -> Iterator:
    due: list[tuple[int, int]] = []  # (index of the next record picked, picker)
    for i, (gaps, _) in enumerate(pickers):
        _schedule(due, gaps, i, 0)
    at = 0  # the index of the next record to pull
    while due:
        index = due[0][0]
        if index > at:
            yield islice(records, index - at)
            at = index
        for record in records:  # the picked record, if the input goes on
            while due and due[0][0] == index:
                _, i = heapq.heappop(due)
                pickers[i][1](record)
                _schedule(due, pickers[i][0], i, index + 1)
            yield (record,)
            at += 1
            break
        else:
            return
    yield records  # no more picks: the rest passes as it is


def _schedule(due: list[tuple[int, int]], gaps: Iterator[int], picker: int, start: int) -> None:
    gap = next(gaps, None)
    if gap is not None:
        heapq.heappush(due, (start + gap, picker))
