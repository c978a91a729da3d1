"""A feed that runs the ``map`` upstream of its owner itself: one feed where there were two.

In a chain ``map(f, Spark's input)`` then a host with a feed of its own (θ, a generator),
the map's host would own a feed reading Spark's input ahead, and the next host a feed
reading the map's outputs ahead: two lists, two ``islice`` and two
``chain.from_iterable`` a record. A ``MapFeed`` is the second feed reading
``map(f, Spark's input)`` ahead itself; the map's host rides on it (``upstream``):

- its count is the feed's count plus the outputs read ahead and not yet pulled, exact at
  any moment (the lists fill by ``list.extend``, which keeps what it appended when ``f``
  raises: the record ``f`` failed on is the next one);
- it is checked at the feed's boundaries, before the owner, with the input of the
  block's first record as its sample (``f`` is called on that one record in Python);
- a breakpoint armed live on it wraps ``f``'s input (``MapInput``, the feed ``control.py``
  sees as its host's): the map is rebuilt on the wrapped input at the boundary; once the
  owner's own input was handed to a breakpoint, ``f``'s input is read through a
  generator that follows such rewrapping (a Python call a record, breakpoints only);
- the end of Spark's input is noted by a marker after it (``input_ended``): ``f`` raising
  StopIteration ends the map early, as in PySpark's ``map``, and fails the task at the
  chain's end (``blocks.HostChain``);
- a failure of Spark's input is blamed on the map's host (the feed's ``_blocks`` frame
  names ``upstream[0]``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from operator import length_hint
from typing import Any

from .feeds import BlockFeed
from .records import NO_RECORD as _NO_RECORD


class MapFeed(BlockFeed):
    """``owner``'s feed reading ``map(function, source)`` ahead, ``mapper`` (the map's
    host) riding on it."""

    def __init__(self, mapper: Any, function: Callable, source: Iterable, owner: Any,
                 keep_last: bool = False) -> None:
        self.function = function
        self.input_ended = False  # Spark's input ran out (its end marker was reached)
        self._input: Iterator = chain(source, self._end_marker())  # f's input
        self._mapped: Iterator = map(function, self._input)
        self._following = False  # f's input is read through ``_followed`` ...
        self._followed_from = 0  # ... from this record on ...
        self._followed_count = 0  # ... this many so far
        super().__init__(self._mapped, owner, keep_last=keep_last, read_ahead=True)
        self.upstream = [mapper]
        self.map_input = MapInput(self, mapper)
        self._pending = 0  # 1 while a block's first record is pulled, not yet counted
        self._filling: list = []  # the list being read ahead
        self._broken = 0  # 1: reading failed, ``f`` (or its input) on the record after
        self._sample: Any = _NO_RECORD  # the input of the block's first record

    def made(self) -> int:
        """Records ``f`` took so far (outputs made, and the one it failed on, if it did)."""
        if self._following:
            return self._followed_from + self._followed_count
        made = self.count() + self._pending + self._broken
        if self.read_ahead:
            made += length_hint(self._block) + len(self._filling)
        return made

    @property
    def source(self) -> Iterator:
        """The owner's input, handed to live control (a breakpoint armed on the owner):
        from now on ``f``'s input is read through ``_followed``."""
        if self._source is self._mapped and not self._following:
            self._followed_from = self.made()
            self._following = True
            self._mapped = self._source = map(self.function, self._followed())
        return self._source

    @source.setter
    def source(self, source: Iterator) -> None:
        self._source = source

    def set_input(self, wrapped: Iterator) -> None:
        """``f``'s input wrapped (a breakpoint armed live on the map's host)."""
        self._input = wrapped
        if not self._following:
            self._mapped = self._source = map(self.function, wrapped)

    def _followed(self) -> Iterator:
        while True:
            source = self._input
            for record in source:
                self._followed_count += 1
                yield record
                if self._input is not source:
                    break
            else:
                return

    def _end_marker(self) -> Iterator:
        self.input_ended = True
        return
        yield

    def _pull_first(self, source: Iterator) -> Any:
        if source is not self._mapped or self._following:
            self._sample = _NO_RECORD
            return self._noting_failure(next, source)  # through the owner's breakpoints
        self._sample = record = self._noting_failure(next, self._input)
        return self._noting_failure(self.function, record)  # StopIteration: the map ends

    def _noting_failure(self, call: Callable, argument: Any) -> Any:
        """``call(argument)``; an exception but the input's end is noted (``made``)."""
        try:
            return call(argument)
        except StopIteration:
            if call is next:
                raise  # the input ran out
            self._broken = 1
            raise
        except BaseException:
            self._broken = 1
            raise

    def _read(self, source: Iterator, size: int) -> list:
        rest: list = []
        self._filling = rest
        try:
            rest.extend(islice(source, size))
        except BaseException:
            self._broken = 1
            raise
        self._filling = []
        return rest

    def _boundary(self, first: Any) -> int:
        """The map's host first, with the input of ``first`` as its sample."""
        self._pending = 1
        try:
            for host in self.upstream:
                host.block_boundary(sample=self._sample)
            self._sample = _NO_RECORD
            return super()._boundary(first)
        finally:
            self._pending = 0


class MapInput:
    """What the map's host sees as its feed (``host.feed``): ``f``'s input, its count,
    its end; ``control.py`` wraps ``source`` in a breakpoint's watches."""

    def __init__(self, feed: MapFeed, owner: Any) -> None:
        self.feed = feed
        self.owner = owner
        self.read_ahead = True  # Spark's input: a breakpoint may test it on lists read ahead

    @property
    def started(self) -> bool:
        return self.feed.started

    @property
    def ended(self) -> bool:
        """Whether Spark's input ran out (not the map: ``f`` may raise StopIteration)."""
        return self.feed.input_ended

    def count(self) -> int:
        """As ``BlockFeed.count`` while a boundary is checked: records taken before the
        last one ``f`` made."""
        return self.feed.made() - 1

    @property
    def source(self) -> Iterator:
        return self.feed._input

    @source.setter
    def source(self, wrapped: Iterator) -> None:
        self.feed.set_input(wrapped)
