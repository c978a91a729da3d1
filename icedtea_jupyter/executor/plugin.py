"""Worker plugins: what lives beside a worker host, plugged into its documented hooks.

A ``WorkerHost`` runs one operator on one partition: its record loop (per record, or in
blocks of C iterators — ``loops.py``, ``blocks.py``), its counts, its checks between
records, its end. Everything else a worker does is a plugin, in the manner of
dask.distributed's scheduler plugins: a plain object whose hooks are no-ops here,
overriding only the ones it needs. Time travel (``timetravel.TimeTravel``, registered
for workers of G(θ)) and the run's agents (``agent.AgentPlugin``, which hosts the
progress agent and the user's agents) and lineage capture (``lineage.LineageCapture``,
with ``--lineage``) and live control (``control.LiveControl``: pause, breakpoints) are
plugins; skew counting is meant to plug in the same way.

When each hook is called (``host`` is the ``WorkerHost``; "between two records" means
the operator has finished one input and not started the next, at a record boundary of
the whole task chain — a tuple-consistent moment):

``needs_records(host) -> bool``
    Before the loop starts. True makes the host run its per-record loop (the only one
    that calls ``records``); if no plugin needs records, Python functions run in blocks.
``records(host, records) -> iterable``
    Per-record loop only, once: wrap its input. The wrapper runs per record: keep it
    cheap, and do not raise (the host cannot wrap it without a cost per record).
``feed_input(host, iterator) -> iterable | None``
    In blocks, once, before the loop: a wrapper of the host's input (runs per record:
    keep it cheap, in C where it can be); a host whose input a plugin wraps reads it
    through a feed of its own, in step with its function (not read ahead).
``partition_outputs(host, outputs) -> iterable``
    Once, when a whole-partition function has returned its outputs: wrap them (runs
    per output: keep it cheap, and do not raise).
``outputs_log(host, kind, in_blocks) -> callable | None``
    Once, as the loop starts (``kind``: map, filter, flatMap, operator, partition,
    batches). Per record, a C callable (``array.append``) to log outputs per input
    (IcedTea's output counts): a filter calls it with each dropped input's index, a
    flatMap or ``Operator`` with (index, outputs) where outputs != 1, a whole-partition
    function with its outputs so far at each input it pulls and once at its end. In
    blocks nothing is called per record: use ``boundary``, or ``block_function``.
``block_function(host, kind, f) -> callable | None``
    In blocks, once, after ``outputs_log``: wrap the map, filter or flatMap function
    (called per input record, its first argument the record, as the host's culprit
    finder reads it). For what a C log cannot see: a flatMap's outputs per input.
``first_record(host)``
    At the host's first check, before its first record.
``boundary(host, inputs, outputs)``
    At every check — per-record checks and block boundaries — and when a block feed's
    input runs out: ``inputs`` processed so far, and the ``outputs`` they produced.
``sample(host, index, pickled)``
    At a check that sampled the next input record: its index (from 0), its pickled bytes.
``batch(host, index, batch, rows)``
    A batch function's (mapInPandas, mapInArrow, an iterator UDF) input batch number
    ``index`` (from 0), of ``rows`` rows, after the check before the function takes it.
``beat(host)``
    About four times a second while records flow.
``accepts(host, message) -> bool``
    In the control reader thread, for each coordinator message the host does not handle
    itself (``flush``): queue it for ``control``? Cheap, and touching nothing the task
    thread changes.
``control(host, message) -> bool``
    Between two records, a queued message; True if handled (no later plugin sees it).
``end(host, message) -> bytes | None``
    Once, when the worker has ended (``host.status`` is final): add fields to its
    ``worker_end`` message; return the frame's binary body (one plugin at most has one:
    time travel's replay log).

Plugins are entered in order and unwound in reverse: ``records`` wraps the input in
registration order (the first plugin's wrapper is innermost: it sees each record first),
``end`` runs in reverse registration order; every other hook in registration order.

The host registers its plugins when it starts (``features.plugins_of``: live control
always, time travel in G(θ), lineage, the agents always; a new feature adds its own
there, on a flag of the run's spec), or later with ``host.plugins.add(plugin)``.

What the host offers its plugins: ``spec``, ``worker``, ``channel``, ``loop_kind`` (the
kind of its loop, known at ``needs_records``), ``status``
(``status.WorkerStatus``), ``processed`` (inputs fully processed at the current
boundary), ``counts()``, ``live_count()``, ``state()``, ``plugins.get(cls)`` (another
plugin of the same host), ``alert(source, hook, exc)``, ``handle_control()`` (deliver queued
control messages now) and ``hold(until, timeout)`` (stay between two records, handling
control messages, until ``until()`` — a breakpoint, a conditional interaction).

A hook that raises becomes an alert on the run and the plugin is switched off for that
worker: a plugin never fails a Spark task. Per-record code (``records`` wrappers and the
``outputs_log`` loggers) cannot be wrapped without a cost per record: it must not raise
(the agents plugin wraps each agent's ``observe_record``). A plugin with ``essential = True``
is not wrapped: time travel, whose recording errors fail the task as they always did
(a replay log with a hole in it would replay wrong), and which reports what it can
survive as alerts of its own.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


class WorkerPlugin:
    """Lives beside one worker; override the hooks you need (see the module docstring)."""

    name: str = ""  # names it in alerts; the class name if empty
    essential: bool = False  # True: hook failures propagate instead of becoming alerts

    def plugin_name(self) -> str:
        return self.name or type(self).__name__

    # --- before the loop -------------------------------------------------------------
    def needs_records(self, host: Any) -> bool:
        """Must this plugin see every input record (the per-record loop)?"""
        return False

    def records(self, host: Any, records: Iterable) -> Iterable:
        """The per-record loop's input, wrapped (runs per record: keep it cheap)."""
        return records

    def feed_input(self, host: Any, iterator: Iterable) -> Iterable | None:
        """In blocks: the input of the host's feed, wrapped, or None (not wrapped)."""
        return None

    def partition_outputs(self, host: Any, outputs: Iterable) -> Iterable:
        """A whole-partition function's outputs, wrapped (runs per output: keep it cheap)."""
        return outputs

    def outputs_log(self, host: Any, kind: str, in_blocks: bool) -> Callable | None:
        """The loop starts; per record, a C callable logging outputs per input, or None."""
        return None

    def block_function(self, host: Any, kind: str, f: Callable) -> Callable | None:
        """In blocks: ``f`` (map, filter, flatMap) wrapped, called per input; None: as is."""
        return None

    def output_rows(self, host: Any) -> list | None:
        """A list the host appends each output of its function to (one C call an
        output, in blocks as record by record), for this plugin to read and empty at
        its checks; None: no list."""
        return None

    # --- between records --------------------------------------------------------------
    def first_record(self, host: Any) -> None:
        """The host's first check, before its first record."""

    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        """A check: ``inputs`` processed so far produced ``outputs``."""

    def sample(self, host: Any, index: int, pickled: bytes) -> None:
        """A check sampled input record number ``index`` (from 0): its pickled bytes."""

    def batch(self, host: Any, index: int, batch: Any, rows: int) -> None:
        """A batch function's input batch ``index`` (from 0), of ``rows`` rows."""

    def beat(self, host: Any) -> None:
        """About four times a second while records flow."""

    def accepts(self, host: Any, message: dict) -> bool:
        """In the control reader thread: queue ``message`` for ``control``?"""
        return False

    def control(self, host: Any, message: dict) -> bool:
        """A queued control message, between two records; True if handled."""
        return False

    # --- the end -----------------------------------------------------------------------
    def end(self, host: Any, message: dict) -> bytes | None:
        """The worker ended: add fields to its ``worker_end`` message; the frame's body."""
        return None


HOOKS = ("needs_records", "records", "feed_input", "partition_outputs", "outputs_log",
         "block_function", "output_rows", "first_record", "boundary", "sample", "batch", "beat", "accepts",
         "control", "end")


def overrides(plugin: WorkerPlugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(WorkerPlugin, hook)


class PluginSet:
    """A host's plugins in registration order, indexed by the hooks they override (a
    hook no plugin overrides costs nothing); calls them with their failures isolated."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.plugins: list[WorkerPlugin] = []
        self.by_hook: dict[str, tuple[WorkerPlugin, ...]] = {hook: () for hook in HOOKS}

    def add(self, plugin: WorkerPlugin) -> None:
        """Plug ``plugin`` in, after the others."""
        self.plugins.append(plugin)
        self._index()

    def remove(self, plugin: WorkerPlugin) -> None:
        if plugin in self.plugins:
            self.plugins.remove(plugin)
            self._index()

    def get(self, cls: type) -> Any:
        """The plugin of class ``cls``, or None."""
        for plugin in self.plugins:
            if isinstance(plugin, cls):
                return plugin
        return None

    def _index(self) -> None:
        # a new dict of new tuples: the control reader thread may be iterating the old
        self.by_hook = {hook: tuple(p for p in self.plugins if overrides(p, hook))
                        for hook in HOOKS}

    def call(self, plugin: WorkerPlugin, hook: str, *args: Any) -> Any:
        """``plugin.hook(host, *args)``; if it raises, an alert, the plugin switched off
        and None (an essential plugin's exception propagates)."""
        if plugin.essential:
            return getattr(plugin, hook)(self.host, *args)
        try:
            return getattr(plugin, hook)(self.host, *args)
        except Exception as exc:
            self.host.alert(plugin.plugin_name(), hook, exc, kind="plugin")
            self.remove(plugin)
            return None

    def run(self, hook: str, *args: Any) -> None:
        """Every plugin's ``hook``, in registration order."""
        for plugin in self.by_hook[hook]:
            self.call(plugin, hook, *args)

    def results(self, hook: str, *args: Any) -> list:
        """What every plugin's ``hook`` returned, in registration order."""
        return [self.call(plugin, hook, *args) for plugin in self.by_hook[hook]]
