"""The outputs of a host's function in blocks, as C iterators: ``map``, ``filter``,
``chain.from_iterable`` of a flatMap, an ``Operator``'s or a whole-partition function's,
counted by a ``Counter`` where they are not one a record (``blocks.py`` chains them)."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import chain
from typing import Any

from . import resumed
from .culprits import culprit_record
from .feeds import Counter

RESUMABLE = ("map", "filter", "operator")  # kinds whose loop resumes after a taken record


def outputs(kind: str, f: Callable, inputs: Iterable,
            host: Any) -> tuple[Iterator, Counter | None]:
    """``f``'s outputs on ``inputs`` as ``host`` runs it, and their counter (None: a map's
    outputs are its inputs)."""
    on_failure = getattr(host, "on_failure", None)
    if on_failure is not None and kind in RESUMABLE:  # --tolerate (resumed.py)
        counter = Counter()
        if kind == "operator":
            return counter.tap(resumed.resumed_operator(f, inputs, on_failure)), counter
        return counter.tap(resumed.resumed(kind, f, inputs, partial(culprit_record, host),
                                            on_failure)), counter
    sampled = getattr(host, "sampled", None)
    if sampled is not None and kind in ("map", "filter", "flatMap", "operator"):
        # an agent times one record in 64
        outputs = sampled.operator_outputs(f, inputs) if kind == "operator" \
            else sampled.outputs(inputs)
        if kind == "map":
            return outputs, None
        counter = Counter()
        return counter.tap(outputs), counter
    if kind == "map":
        return map(f, inputs), None
    counter = Counter()
    if kind == "partition":
        return counter.tap(_partition_outputs(host, f, inputs)), counter
    if kind == "filter":
        return counter.tap(filter(f, inputs)), counter
    if kind == "flatMap":
        return counter.tap(chain.from_iterable(map(f, inputs))), counter
    return counter.tap(f(inputs)), counter  # an Operator: its own __call__


def _partition_outputs(host: Any, f: Callable, inputs: Iterable) -> Iterator:
    """A whole-partition function's outputs. A generator function is called at once (that
    runs none of its code) and its generator handed on as it is, with no layer of ours
    per output (unless a plugin wraps it); any other function is called when its outputs
    are first pulled."""
    if not inspect.isgeneratorfunction(f):
        return chain.from_iterable(_partition(host, f, inputs))
    outputs = host.started_partition(f(inputs))
    if outputs is not None and outputs is host.user_generator:
        return outputs  # its end is its frame's (``outputs_ran_out``)
    return chain(() if outputs is None else outputs, _noting_the_end(host))


def _noting_the_end(host: Any) -> Iterator:
    host.outputs_ended = True
    return
    yield


def outputs_ran_out(host: Any) -> bool:
    """Whether a whole-partition host's outputs ran out: noted at their end, or its
    generator, handed on as it is, has returned."""
    generator = host.user_generator
    return host.outputs_ended or (generator is not None and generator.gi_frame is None)


def _partition(host: Any, f: Callable, inputs: Iterable) -> Iterator[Iterable]:
    """The outputs of a whole-partition function, as one item: ``f`` is called when they
    are first pulled (as a generator would start), and their end is noted."""
    outputs = host.started_partition(f(inputs))
    yield () if outputs is None else outputs
    host.outputs_ended = True

