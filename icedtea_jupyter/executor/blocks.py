"""Hosts that run their function as C iterators, with Python only between blocks of records.

PySpark chains a task's Python functions as ``map(f, iterator)``, ``filter(f, iterator)``
and so on: C iterators that call the user's function and nothing else. A host of a
Python function keeps that shape, so its per-record cost is a few C calls:

- Its input comes in blocks (``feeds.BlockFeed``): read into a list when the input is Spark's,
  else ``islice`` over it counted by ``compress`` against ``repeat(True, n)``; the block
  iterator's ``length_hint``, readable at any moment, says how many passed. Between two
  blocks —
  every few milliseconds, adapted to the record rate — Python runs the checks of the
  feed's hosts: counts, agents' heartbeats, control messages, θ's interactions. When a
  feed pulls its next block, every host downstream of it in the task is waiting for
  its next input (Spark pulls records through the chain one at a time), so the check is
  at a record boundary of all of them: a tuple-consistent moment.
- Hosts chained after it in the same task join its clock and count nothing per input:
  a host's input count is the output count of the host before it; a map's outputs are
  its inputs; a filter's, flatMap's or ``Operator``'s outputs pass through a counter.
  θ always has a feed of its own (its interactions and input checksums are taken at
  its own record boundaries).
- One guard generator per chain of such hosts (``HostChain``) ends them all when the
  chain is exhausted or closed, and on an exception finds the host whose function
  raised from the traceback, and the record it was processing from that frame.

Functions without Python code (builtins, ``functools.partial``, objects of C classes) keep
the per-record loop of ``loops.py``: a traceback would not name them.
"""
from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from types import FrameType, GeneratorType
from typing import Any

from . import task_failures
from .block_outputs import RESUMABLE, outputs, outputs_ran_out
from .culprits import NOT_HERE, call_method, code_of, culprit_finder, frames_of
from .feeds import RUN, BlockFeed, Counter, TappedOutputs, from_spark
from .map_feed import MapFeed
from .records import NO_RECORD as _NO_RECORD

__all__ = ["RESUMABLE", "RUN", "Counter", "HostChain", "TappedOutputs", "chain_for",
           "code_of", "host_calling", "registered_hosts", "run_in_blocks",
           "run_partition_in_blocks", "runs_in_blocks"]

_GUARDS: weakref.WeakKeyDictionary[Any, HostChain] = weakref.WeakKeyDictionary()


class HostChain:
    """Hosts chained in one task with nothing but C iterators between them, behind one
    guard that ends them all and names the one that failed.

    In PySpark's worker the guard is a C ``chain`` of the outputs and an end marker
    (nothing per record): the chain learns of a failure from the worker's exception
    handler (``task_failures.py``), of an early close when the guard is dropped.
    Elsewhere (replay, tests driving a chain directly) it is a generator around the
    outputs."""

    def __init__(self) -> None:
        self.hosts: list[Any] = []
        self.kinds: list[str] = []  # each host's: map, filter, flatMap, operator, partition
        self.feed: BlockFeed | None = None
        self.outputs: Iterator = iter(())
        self.created = task_failures.next_order()
        self.in_worker = task_failures.hook_worker_main()
        self.done = False  # ended, one way or another
        self._dropped: weakref.finalize | None = None
        # (f, its feed): the chain is one map reading Spark's input ahead, nothing else
        self._map_alone: tuple[Callable, BlockFeed] | None = None

    def add(self, host: Any, kind: str, f: Callable, iterator: Iterable,
            own_feed: bool) -> Iterator:
        """Chain ``host`` after the others; returns the new guard (the chain's output)."""
        watched = _feed_input(host, iterator)  # a plugin that sees each input (breakpoints)
        if self.feed is None or own_feed or watched is not None:
            read_ahead = watched is None and self._may_read_ahead(iterator)  # else: in step
            if read_ahead and self._map_alone is not None:
                self.feed = host.feed = self._map_feed(host, keep_last=kind == "partition")
            else:
                self.feed = host.feed = BlockFeed(iterator if watched is None else watched,
                                                  host, keep_last=kind == "partition",
                                                  read_ahead=read_ahead)
            host.count_in = self.feed.count
            inputs: Iterable = iter(self.feed)
        else:
            self.feed.hosts.append(host)
            host.count_in = self.hosts[-1].count_out
            inputs = iterator
        self.outputs, counter = outputs(kind, f, inputs, host)
        plain = self.outputs
        self.outputs = host.tap_outputs(self.outputs)  # agents' output rows, if any
        self._map_alone = (f, self.feed) if not self.hosts and kind == "map" \
            and type(self.outputs) is map and self.outputs is plain \
            and self.feed.read_ahead else None
        host.count_out = counter.value if counter is not None else host.outputs_of_map
        host.culprit = culprit_finder(kind, f, host)
        self.hosts.append(host)
        self.kinds.append(kind)
        guard = self._guard()
        _GUARDS[guard] = self
        return guard

    def _map_feed(self, owner: Any, keep_last: bool) -> MapFeed:
        """``owner``'s feed reading the chain's one map ahead itself (``map_feed.py``): the
        map's host rides on it, its own feed is dropped before it started."""
        assert self._map_alone is not None
        f, dropped = self._map_alone
        mapper = self.hosts[0]
        feed = MapFeed(mapper, f, dropped.source, owner, keep_last=keep_last)
        mapper.feed, mapper.count_in = feed.map_input, feed.made
        return feed

    def _may_read_ahead(self, iterator: Iterable) -> bool:
        """Whether a new feed may read its input ahead: Spark's input, or the outputs of
        hosts upstream of θ fed by it (they run a block ahead; only G(θ) must keep in step
        with θ, for its snapshots to be one consistent moment)."""
        if not self.hosts:
            return from_spark(iterator)
        return self.hosts[0].feed.read_ahead and not any(h.spec.in_g for h in self.hosts)

    @property
    def started(self) -> bool:
        """Whether anything was pulled through the chain yet."""
        return self.hosts[0].feed.started

    def _guard(self) -> Iterator:
        if not self.in_worker:
            return self._guarded(self.outputs)
        if self._dropped is not None:
            self._dropped.detach()  # the previous guard: a host joined after it
        guard = _Guard(self.outputs, self._exhausted())
        self._dropped = weakref.finalize(guard, self._end_if_running)
        task_failures.register(self)
        return guard

    def _exhausted(self) -> Iterator:
        """The end marker of the C guard: runs when the outputs are exhausted."""
        self._check_every_input_ran_out()
        self._end(exhausted=True)
        return
        yield

    def _end_if_running(self) -> None:
        if not self.done:
            self._end(exhausted=False)  # closed early: the guard was dropped

    def failed_in_task(self, exc: BaseException, blame_last: bool) -> None:
        """The worker's task failed with ``exc`` (``task_failures.py``)."""
        if not self.done:
            self._failed(exc, blame_last)

    def _guarded(self, outputs: Iterator) -> Iterator:
        try:
            yield from outputs
            self._check_every_input_ran_out()
        except GeneratorExit:
            self._end(exhausted=False)
            raise
        except BaseException as exc:
            self._failed(exc, blame_last=True)
            raise
        self._end(exhausted=True)

    def _check_every_input_ran_out(self) -> None:
        """A function that raises StopIteration ends a C ``map`` or ``filter`` early, as
        if its input had run out; PySpark fails the task then (``fail_on_stopiteration``,
        a Python call per record): so do we, once, at the end. Walking up from the chain's
        end: each map, filter, flatMap or ``Operator`` whose outputs ended must have seen
        its input end; a whole-partition function may stop reading its input early."""
        i = len(self.hosts) - 1  # its outputs ended: the chain's did
        while i >= 0:
            if self.kinds[i] == "partition":
                if not self.hosts[i].feed.ended:
                    return  # it stopped reading: nothing upstream had to end
                i -= 1  # its input ran out: the outputs of the host before it did
                continue
            first = i  # back to the nearest point whose end is known
            while self.hosts[first].feed is None and self.kinds[first - 1] != "partition":
                first -= 1
            feed = self.hosts[first].feed
            if not (feed.ended if feed is not None else outputs_ran_out(self.hosts[first - 1])):
                names = ", ".join(repr(h.spec.name or h.spec.op_id)
                                  for h in self.hosts[first:i + 1])
                error = RuntimeError(
                    f"Caught StopIteration thrown from user's code in one of {names}: its "
                    "outputs ended before its input did; failing the task")
                error._icedtea_culprit = first  # type: ignore[attr-defined]
                raise error
            i = first - 1

    def _end(self, exhausted: bool) -> None:
        self.done = True
        task_failures.forget(self)
        for host in self.hosts:
            host.end_in_blocks(exhausted)

    def _failed(self, exc: BaseException, blame_last: bool) -> None:
        """``exc`` went through the chain (or, learnt from the worker, may have: a chain
        upstream of the failure, with no frame in it, just ends)."""
        owned = getattr(exc, "_icedtea_owner", None) is not None
        failing, record = self._find_culprit(exc, blame_last)
        for i, host in enumerate(self.hosts):
            if i == failing:
                host.fail_in_blocks(exc, record, culprit=True)
            elif (failing is None and owned) or (failing is not None and i > failing):
                host.fail_in_blocks(exc, _NO_RECORD, culprit=False)  # downstream of it
        self._end(exhausted=False)

    def _find_culprit(self, exc: BaseException, blame_last: bool) -> tuple[int | None, Any]:
        """The innermost frame of the traceback that runs a host's function (or pulls a
        feed's input) names the host, and the record it was processing; with no such
        frame, the last host if ``blame_last`` (the exception came out of the chain)."""
        if getattr(exc, "_icedtea_owner", None) is not None:
            return None, _NO_RECORD  # raised upstream of the chain, already reported
        if getattr(exc, "_icedtea_culprit", None) is not None:
            return exc._icedtea_culprit, _NO_RECORD  # type: ignore[attr-defined]
        found: tuple[int | None, Any] = (len(self.hosts) - 1 if blame_last else None,
                                         _NO_RECORD)
        frames = frames_of(exc)
        for depth, frame in enumerate(frames):
            for i, host in enumerate(self.hosts):
                record = host.culprit(frame, frames[depth + 1:])
                if record is not NOT_HERE:
                    found = (i, record)
                elif frame.f_code is _BLOCKS_CODE and host is _puller(frame.f_locals["self"]):
                    found = (i, _NO_RECORD)
        return found


def _puller(feed: BlockFeed) -> Any:
    """The host that takes a feed's input records: a map riding on it, else its owner (a
    failure reading the input is blamed on it)."""
    return feed.upstream[0] if feed.upstream else feed.owner


def registered_hosts() -> list[Any]:
    """The hosts of the chains registered in this worker (no guard frame of theirs is on
    the stack): read once per walk up the stack, for ``host_calling``."""
    return [host for chain_ in task_failures.live_chains() for host in chain_.hosts]


def host_calling(frame: FrameType, inner: list[FrameType], registered: list[Any]) -> Any:
    """The host in blocks whose function runs in ``frame`` or in one of the ``inner``
    frames (innermost first): when ``frame`` is a chain's guard generator, or (chains in
    a worker) when ``frame`` runs the function of one of the ``registered`` hosts."""
    if frame.f_code is _GUARDED_CODE:
        hosts = frame.f_locals["self"].hosts
        for depth, candidate in enumerate(inner):
            for host in hosts:
                if host.culprit(candidate, inner[depth + 1:]) is not NOT_HERE:
                    return host
        return None
    outer_first = inner[::-1] if registered else inner
    for host in registered:
        if host.culprit(frame, outer_first) is not NOT_HERE:
            return host
    return None


def chain_for(iterator: Iterable) -> HostChain:
    """The chain whose (not yet started) guard ``iterator`` is, or a new chain."""
    if not isinstance(iterator, (GeneratorType, _Guard)):
        return HostChain()
    existing = _GUARDS.pop(iterator, None)
    return existing if existing is not None and not existing.started else HostChain()


def _feed_input(host: Any, iterator: Iterable) -> Iterable | None:
    """The plugins' wrapper of the input of a feed ``host`` would own (``feed_input``),
    or None: no plugin wraps it."""
    wrapped = None
    for plugin in host.plugins.by_hook["feed_input"]:
        result = host.plugins.call(plugin, "feed_input", iterator if wrapped is None else wrapped)
        wrapped = wrapped if result is None else result
    return wrapped


def run_in_blocks(host: Any, kind: str, f: Callable, iterator: Iterable) -> Iterator:
    """``host`` running ``f`` (a map, filter, flatMap or ``Operator``) in blocks."""
    chain_ = chain_for(iterator)
    source = chain_.outputs if chain_.hosts else iterator
    return chain_.add(host, kind, f, source, own_feed=bool(host.spec.theta))


def run_partition_in_blocks(host: Any, fn: Callable, iterator: Iterable) -> Iterator:
    """``host`` running a whole-partition function ``fn`` in blocks, on a feed of its own
    (it may stop reading early, and its failures name the record it pulled last)."""
    chain_ = chain_for(iterator)
    source = chain_.outputs if chain_.hosts else iterator
    return chain_.add(host, "partition", fn, source, own_feed=True)


def runs_in_blocks(f: Any) -> bool:
    """Whether a traceback names ``f``: a Python function or method, an object whose class
    defines ``__call__`` in Python (``culprits.call_method``), or an ``Operator``."""
    from .operator import Operator

    if isinstance(f, Operator):
        return type(f).__call__ is Operator.__call__
    return inspect.isfunction(f) or (inspect.ismethod(f) and inspect.isfunction(f.__func__)) \
        or call_method(f) is not None


class _Guard(chain):
    """A chain's outputs then its end marker, in C; weakly referable (``_GUARDS``, the
    finalizer that notices an early close)."""

    __slots__ = ("__weakref__",)


_BLOCKS_CODE = BlockFeed._blocks.__code__
_GUARDED_CODE = HostChain._guarded.__code__

