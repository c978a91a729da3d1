"""The per-record loops of a worker host: one skeleton, an inner loop per kind of operator.

A host runs per record when its function has no Python code a traceback would name (a
builtin, a ``partial``, a callable object) or when a plugin must see every input record
(an agent's ``observe_record``, ``--record-inputs``, ``--interact-when``); otherwise it
runs in blocks (``blocks.py``). Per record, the cost of the host is a local counter and
one comparison against ``host.box[0]``: when the counter reaches it, the host checks
(counts, control messages, plugins' hooks) between two records.

``record_loop`` is the one skeleton: it starts the kind's inner loop, marks the host
exhausted when that loop ends, names the record on which it failed, and ends the host
whatever happened. The inner loops are written out inside it, one per kind, so that no
call is added per record; their locals are read from outside while the loop is
suspended: ``n`` (inputs taken, ``WorkerHost.live_count``) and ``host`` (``log_result``
finds the host whose function made the call).
"""
from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from . import feeds, task_failures
from .records import NO_RECORD as _NO_RECORD
from .status import EXHAUSTED_EVENT


def record_loop(  # noqa: C901 - the kinds' inner loops are written out in it
        host: Any, kind: str, f: Any, iterator: Iterable) -> Iterator:
    """``host`` running ``f`` record by record. ``kind``: ``map``, ``filter``,
    ``flatMap``, ``operator`` (``f`` an ``Operator``: open, process each, close), or
    ``partition``/``batches`` (``f`` a whole-partition function: it pulls its inputs
    through ``partition_inputs``/``input_batches``, and they count and check)."""
    box, n, n_out, record = host.box, 0, 0, _NO_RECORD
    log = host.outputs_log(kind, in_blocks=False)  # plugins' log of outputs per input
    inputs: Generator | None = None
    counter: feeds.Counter | None = None
    if kind in ("partition", "batches"):
        inputs = partition_inputs(host, iterator, log) if kind == "partition" \
            else input_batches(host, iterator)
        host.inputs_gen = inputs
        # outputs counted in C, unless each input logs the outputs so far
        counter = feeds.Counter() if kind == "partition" and log is None else None
    else:
        records = host.observed(iterator)
    try:
        if kind == "map":
            for record in records:
                n += 1
                if n >= box[0]:
                    host.check(n, n - 1, record)
                yield f(record)
        elif kind == "filter":
            for record in records:
                n += 1
                if n >= box[0]:
                    host.check(n, n_out, record)
                if f(record):
                    n_out += 1
                    yield record
                elif log is not None:
                    log(n - 1)
        elif kind == "flatMap":
            for record in records:
                n += 1
                if n >= box[0]:
                    host.check(n, n_out, record)
                k = 0
                for out in f(record):
                    k += 1
                    yield out
                n_out += k
                if k != 1 and log is not None:
                    log(n - 1, k)
        elif kind == "operator":  # logs the inputs whose number of outputs is not one
            f.open()
            for record in records:
                n += 1
                if n >= box[0]:
                    host.check(n, n_out, record)
                outputs = f.process(record)
                k = 0
                if outputs is not None:
                    for out in outputs:
                        k += 1
                        yield out
                n_out += k
                if k != 1 and log is not None:
                    log(n - 1, k)
            record = _NO_RECORD
            final = f.close()
            if final is not None:
                for out in final:
                    n_out += 1
                    yield out
        else:  # a whole-partition function: its inputs count and check themselves
            outputs = host.started_partition(f(inputs))
            if outputs is not None and counter is not None:
                host.count_out = counter.value
                yield from counter.tap(outputs)
            elif outputs is not None:
                batches = kind == "batches"
                for out in outputs:
                    n_out += batch_rows(out) if batches else 1
                    host.records_out = n_out
                    yield out
        host.advance(EXHAUSTED_EVENT)
    except GeneratorExit:
        raise
    except BaseException as exc:
        task_failures.task_failed(exc, before=host.created)  # chains upstream name theirs
        if inputs is None:
            host.records_in = n  # the culprit counts: the error's records_before is its index
        host.fail(exc, record if inputs is None else _pulled_last(inputs))
        raise
    finally:
        if inputs is not None:
            inputs.close()
            n = host.records_in
            n_out = counter.value() if counter is not None else n_out
        elif kind == "map":  # one output per input, none for the one it failed on
            n_out = n - 1 if host.status.failed else n
        host.end(n, n_out)


def partition_inputs(host: Any, iterator: Iterable, log: Callable | None) -> Generator:
    """A whole-partition function's input, record by record; ``log``: the outputs so far
    at each input and at the end."""
    box, n = host.box, 0
    try:
        for record in host.observed(iterator):
            n += 1
            if log is not None:
                log(host.records_out)
            if n >= box[0]:
                host.check(n, host.count_out() if host.count_out else host.records_out,
                           record)
            yield record
        if log is not None:
            log(host.records_out)
        host.keep_final_locals()
    finally:
        host.records_in = n


def input_batches(host: Any, iterator: Iterable) -> Generator:
    """A batch function's input (mapInPandas, mapInArrow): counts rows, checks per batch."""
    n, index = 0, 0
    batch_hooks = host.plugins.by_hook["batch"]
    try:
        for record in host.observed(iterator):
            rows = batch_rows(record)
            n += rows
            host.bytes_in += _batch_bytes(record)
            host.check(n, host.records_out, _NO_RECORD, processed=n - rows)
            if batch_hooks:
                host.plugins.run("batch", index, record, rows)
            index += 1
            yield record
        host.keep_final_locals()
    finally:
        host.records_in = n


def _pulled_last(inputs: Generator) -> Any:
    """The record a whole-partition function pulled last (its inputs' frame holds it)."""
    frame = getattr(inputs, "gi_frame", None)
    return frame.f_locals.get("record", _NO_RECORD) if frame else _NO_RECORD


def batch_rows(batch: Any) -> int:
    """The rows of a batch function's input batch."""
    if isinstance(batch, tuple):  # several columns of an iterator UDF
        batch = batch[0] if batch else ()
    try:
        return len(batch)
    except TypeError:
        return 1


def _batch_bytes(batch: Any) -> int:
    if isinstance(batch, tuple):
        return sum(_batch_bytes(part) for part in batch)
    nbytes = getattr(batch, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    try:
        return int(batch.memory_usage(index=False, deep=False).sum())
    except Exception:
        return 0


LOOP_CODES = frozenset({record_loop.__code__})  # the frames whose ``host`` runs a function
