"""The host's taps for its plugins: their wrappers of its input, outputs and
whole-partition outputs, their logs of outputs, and the C taps of a shuffle's sides
(``WorkerHost`` inherits them)."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .feeds import TappedOutputs
from .lineage import LineageCapture
from .plugin import PluginSet
from .skew import SkewCounter


class PluginTaps:
    """What a ``WorkerHost``'s plugins see of its records, besides its checks."""

    plugins: PluginSet
    order: Any
    inputs_gen: Any
    user_function: Any
    feed: Any
    user_generator: Any
    final_locals: dict | None

    def tap_outputs(self, outputs: Iterator) -> Iterator:
        """``outputs`` appended as they pass to the plugins' ``output_rows`` lists."""
        for rows in self.plugins.results("output_rows"):
            if rows is not None:
                outputs = TappedOutputs(rows.append, outputs)
        return outputs

    def keyed(self, records: Iterable) -> Iterable:
        """A map side's ``(key, value)`` input, its keys counted by the skew counter
        (``--skew``): as its own feed reads them ahead in lists, if it does (a C slice a
        list), else through C iterators. (Lineage links it by key at trace time.)"""
        counter = self.plugins.get(SkewCounter)
        if counter is None:
            return records
        feed = self.feed
        if feed is not None and feed.owner is self and feed.read_ahead and not feed.started:
            feed.keys = counter
            return records
        return counter.tap(records)

    def keyed_batches(self, batches: Iterable[list]) -> Iterable[list]:
        """A shuffle read's batches of ``(key, value)`` records, tapped by the skew
        counter (``--skew``): Python once a batch."""
        counter = self.plugins.get(SkewCounter)
        return batches if counter is None else counter.tap_batches(batches)

    def merged(self, combiners: Iterable) -> Iterable:
        """A reduce side's untagged ``(key, combiner)`` input, tapped by the lineage
        capture (``--lineage``: its keys numbered by C calls)."""
        capture = self.plugins.get(LineageCapture)
        return combiners if capture is None else capture.tap_merge(combiners, self.order)

    def keyed_groups(self, groups: Iterable) -> Iterable:
        """A reduce side's ``(key, values)`` groups, counted by the skew counter, if any."""
        counter = self.plugins.get(SkewCounter)
        return groups if counter is None else counter.count_groups(groups)

    def observed(self, iterator: Iterable) -> Iterable:
        """The per-record loop's input, wrapped by the plugins that see every record."""
        for plugin in self.plugins.by_hook["records"]:
            wrapped = self.plugins.call(plugin, "records", iterator)
            iterator = iterator if wrapped is None else wrapped
        return iterator

    def outputs_log(self, kind: str, in_blocks: bool) -> Callable | None:
        """The loop of ``kind`` starts: the plugins' log of outputs per input, if any."""
        logs = [log for log in self.plugins.results("outputs_log", kind, in_blocks)
                if log is not None]
        if len(logs) <= 1:
            return logs[0] if logs else None

        def log_all(*args: Any) -> None:
            for log in logs:
                log(*args)
        return log_all

    def started_partition(self, outputs: Any) -> Any:
        """What a whole-partition function returned: a generator's frame is its state
        (unless it is the input it was given: ``lambda rows: rows`` has no state)."""
        if inspect.isgenerator(outputs) and outputs is not self.inputs_gen \
                and not _is_operator(self.user_function):
            self.user_generator = outputs
        for plugin in self.plugins.by_hook["partition_outputs"]:
            wrapped = self.plugins.call(plugin, "partition_outputs", outputs)
            outputs = outputs if wrapped is None else wrapped
        return outputs

    def keep_final_locals(self) -> None:
        """A generator's locals when its input runs out, before its frame closes: the
        state of a finished worker (the frame is gone once the generator returns)."""
        frame = getattr(self.user_generator, "gi_frame", None)
        if frame is not None:
            self.final_locals = dict(frame.f_locals)



def _is_operator(f: Any) -> bool:
    from .operator import Operator

    return isinstance(f, Operator)
