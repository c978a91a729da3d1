"""Worker plugins: what lives beside a worker host, plugged into its documented hooks.

A ``WorkerHost`` runs one operator on one partition: its record loop (per record, or in
blocks of C iterators — ``loops.py``, ``blocks.py``), its counts, its checks between
records, its end. Everything else a worker does is a plugin, in the manner of
dask.distributed's scheduler plugins: a plain object whose hooks are no-ops here,
overriding only the ones it needs. Time travel (``timetravel.TimeTravel``, registered
for workers of G(θ)) and the run's agents (``agent.AgentPlugin``, which hosts the
progress agent and the user's agents) are plugins; lineage capture, skew counting and
breakpoints are meant to plug in the same way.

When each hook is called (``host`` is the ``WorkerHost``; "between two records" means
the operator has finished one input and not started the next, at every record boundary
of the whole task chain — a tuple-consistent moment):

=============================================  =============================================
hook                                           called
=============================================  =============================================
``needs_records(host) -> bool``                before the loop starts: True makes the host use
                                               its per-record loop (``records`` is only
                                               called there); False lets it run in blocks
``records(host, records) -> iterable``         per-record loop only, once: wrap the input;
                                               the wrapper runs per record (keep it cheap)
``loop(host, kind, in_blocks) -> callable``    once, as the loop starts; ``kind`` is map,
                                               filter, flatMap, operator, partition or
                                               batches. Per record, return a C callable
                                               (``array.append``) to log outputs per input,
                                               or None: a filter calls it with each dropped
                                               input's index, a flatMap or ``Operator``
                                               with (index, outputs) where outputs != 1, a
                                               whole-partition function with its outputs so
                                               far at each input pull and once at its end
``first_record(host)``                         at the first check, before the first record
``boundary(host, inputs, outputs)``            at every check (per-record checks and block
                                               boundaries) and when a feed's input runs
                                               out: ``inputs`` processed so far, the
                                               ``outputs`` they produced
``sample(host, index, pickled)``               at a check that sampled the next input record
                                               (``index``: its position; its pickled bytes)
``beat(host)``                                 about four times a second while records flow
``accepts(host, message) -> bool``             in the control reader thread, for each
                                               coordinator message the host does not handle
                                               itself: queue it for ``control``? (cheap)
``control(host, message) -> bool``             between two records: a queued message; True
                                               if handled (no later plugin sees it)
``end(host, message) -> bytes | None``         once, when the worker has ended (its status
                                               final): add fields to its ``worker_end``
                                               ``message``; return the frame's binary body
                                               (at most one plugin has one: the replay log)
=============================================  =============================================

Plugins are entered in order and unwound in reverse: ``records`` wraps the input in
registration order (the first plugin's wrapper is innermost: it sees each record first),
``end`` runs in reverse registration order; every other hook in registration order.

What the host offers its plugins: ``spec``, ``worker``, ``channel``, ``status``
(``status.WorkerStatus``), ``processed`` (inputs fully processed at the current
boundary), ``counts()``, ``live_count()``, ``state()``, ``plugin(cls)`` (another plugin
of the same host), ``alert(source, hook, exc)``, ``handle_control()`` (deliver queued
control messages now) and ``hold(until, timeout)`` (stay between two records, handling
control messages, until ``until()`` — a breakpoint, a conditional interaction).

A hook that raises becomes an alert on the run and the plugin is switched off for that
worker: a plugin never fails a Spark task. Per-record code (``records`` wrappers and the
``loop`` loggers) cannot be wrapped without a cost per record: it must not raise (the
agents plugin wraps each agent's ``observe_record``). A plugin with ``essential = True``
is not wrapped: time travel, whose recording errors fail the task as they always did
(a replay log with a hole in it would replay wrong), and which reports what it can
survive as alerts of its own.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable


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

    def loop(self, host: Any, kind: str, in_blocks: bool) -> Callable | None:
        """The loop starts; per record, a C callable logging outputs per input, or None."""
        return None

    # --- between records --------------------------------------------------------------
    def first_record(self, host: Any) -> None:
        """The host's first check, before its first record."""

    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        """A check: ``inputs`` processed so far produced ``outputs``."""

    def sample(self, host: Any, index: int, pickled: bytes) -> None:
        """A check sampled input record number ``index`` (from 0): its pickled bytes."""

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


HOOKS = ("needs_records", "records", "loop", "first_record", "boundary", "sample", "beat",
         "accepts", "control", "end")


def overrides(plugin: WorkerPlugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(WorkerPlugin, hook)
