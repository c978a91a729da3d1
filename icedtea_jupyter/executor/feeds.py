"""A host's input in blocks, and counts kept by C iterators (``blocks.py`` chains hosts
on them).

A feed hands its records on in blocks; Python runs between two blocks only (the checks
of the hosts that share the feed). Its count is exact at any moment without Python code
per record: a list iterator's or a ``repeat``'s ``length_hint`` says how far a block got.
"""
from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from itertools import chain, compress, filterfalse, islice, repeat
from operator import length_hint
from typing import Any

from .records import NO_RECORD as _NO_RECORD

RUN = 4096  # the longest block
READ_AHEAD = 256  # the most records read ahead at once


class Counter:
    """Counts the items that pass through ``tap`` without Python code per item: the
    items are ``compress``-ed against ``repeat(True, n)``, whose ``length_hint`` says
    how many are left of ``n``."""

    def __init__(self) -> None:
        self._trues = repeat(True, sys.maxsize)

    def tap(self, iterable: Iterable) -> Iterator:
        return compress(iterable, self._trues)

    def value(self) -> int:
        return sys.maxsize - length_hint(self._trues)


class BlockFeed:
    """A host's input, pulled in blocks; the checks of ``hosts`` run between blocks.

    Two ways to pull a block, both C calls per record:

    - ``read_ahead`` (the input is Spark's, not a host's: its deserializer, a range, a
      shuffle read): the block is read into a list as it starts, and taken from a list
      iterator, whose ``length_hint`` counts and whose list names the record pulled last.
    - else (a host's outputs feed it: they must run no further than it pulls): ``islice``
      counted by ``compress`` against ``repeat(True, n)``; ``keep_last`` keeps the record
      pulled last by a C call per record (a whole-partition function's failure names it:
      no frame of ours holds it).
    """

    def __init__(self, source: Iterable, owner: Any, keep_last: bool = False,
                 read_ahead: bool = False) -> None:
        self.read_ahead = read_ahead
        self.last: deque = deque(maxlen=1)
        self._source: Iterator = filterfalse(self.last.append, source) \
            if keep_last and not read_ahead else iter(source)
        self.owner = owner  # its record rate sets the block size
        self.hosts = [owner]  # upstream first: the owner, then the hosts that joined
        self.upstream: list = []  # hosts upstream of the owner whose function it runs
        self.started = False  # its first record was asked for
        self.ended = False  # its input ran out
        self._base = 0  # records pulled up to the current block's first
        self._block: Iterator = iter(())  # the current block's progress ...
        self._block_len = 0  # ... out of this many
        self._first: Any = _NO_RECORD  # read ahead: the block's first record, pulled alone
        self._rest: list = []  # read ahead: the block's other records
        self.keys: Any = None  # --skew: the skew counter taking the keys of what it reads

    @property
    def source(self) -> Iterator:
        """What the feed pulls (live control wraps it in a breakpoint's watches)."""
        return self._source

    @source.setter
    def source(self, source: Iterator) -> None:
        self._source = source

    def count(self) -> int:
        """Records pulled so far, exact at any moment (while a block's boundary is checked,
        its first record, pulled, is not counted yet)."""
        return self._base + self._block_len - length_hint(self._block)

    def last_pulled(self) -> Any:
        """The record pulled last (a failing whole-partition function's), or NO_RECORD."""
        if not self.read_ahead:
            return self.last[0] if self.last else _NO_RECORD
        taken = self._block_len - length_hint(self._block)
        return self._rest[taken - 1] if taken else self._first

    def __iter__(self) -> Iterator:
        return chain.from_iterable(self._blocks())

    def _blocks(self) -> Iterator:
        self.started = True
        source = self._source
        while True:
            try:
                first = self._pull_first(source)
            except StopIteration:
                break
            self._base = self.count()  # ``first`` is not counted yet: nobody has it
            if self.keys is not None:
                self.keys.take((first,))
            self._start_block(first)
            step = min(self._boundary(first), RUN + 1)
            source = self._source  # a check may have wrapped it (a breakpoint armed live)
            self._base += 1
            yield (first,)
            if step > 1 and (yield from self._rest_of_block(source, step - 1)):
                break  # the source ran out
        self._base = self.count()
        self._block, self._block_len = iter(()), 0
        self.ended = True
        for host in (*self.upstream, *self.hosts):
            host.block_boundary(ended=True)

    def _pull_first(self, source: Iterator) -> Any:
        """A block's first record (StopIteration: the source ran out)."""
        return next(source)

    def _read(self, source: Iterator, size: int) -> list:
        """Up to ``size`` records read ahead."""
        return list(islice(source, size))

    def _start_block(self, first: Any) -> None:
        self._first, self._rest = first, []
        self._block, self._block_len = iter(self._rest), 0

    def _rest_of_block(self, source: Iterator, size: int) -> Generator[Iterator, None, bool]:
        """The block's records after its first, as C iterators; returns whether the source
        ran out. Read ahead in lists of at most ``READ_AHEAD``: records wait in them, and
        many waiting records make the garbage collector's young generation slow."""
        if not self.read_ahead:
            self._block, self._block_len = repeat(True, size), size
            pulled = islice(source, size)
            yield compress(pulled if self.keys is None else self.keys.take_all(pulled),
                           self._block)
            return self._block_len - length_hint(self._block) < size
        while size > 0:
            self._base = self.count()
            self._block, self._block_len = iter(()), 0  # nothing counted twice while reading
            part = min(size, READ_AHEAD)
            self._rest = rest = self._read(source, part)
            if self.keys is not None:
                self.keys.take(rest)
            self._block, self._block_len = iter(rest), len(rest)
            yield self._block
            if len(rest) < part:
                return True
            size -= part
        return False

    def _boundary(self, first: Any) -> int:
        """Every host of the feed is between two records: check them, upstream first."""
        step = self.owner.block_check(self._base + 1, first)
        for host in self.hosts[1:]:
            host.block_boundary()
        return step


class TappedOutputs(filterfalse):
    """A host's outputs, each appended to a list as it passes (``filterfalse`` of the
    list's ``append``: a C call an output; ``WorkerHost.tap_outputs``)."""

    __slots__ = ()


def from_spark(iterator: Iterable) -> bool:
    """Whether ``iterator`` is Spark's (a deserializer, a range, a shuffle read), not a
    generator of this package (a host's outputs, replay's feed of a worker): reading
    it ahead runs no operator's code earlier than Spark would."""
    if isinstance(iterator, TappedOutputs):
        return False
    code = getattr(iterator, "gi_code", None)
    return code is None or not code.co_filename.startswith(_PACKAGE)


# the package's folder, as its code objects name it
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "")
