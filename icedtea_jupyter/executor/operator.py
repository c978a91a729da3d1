"""``Operator``: a stateful Python operator whose instance attributes are its state."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class Operator:
    """Subclass and implement ``process``; an instance is a valid ``mapPartitions`` function.

    ``open()`` runs before the first record of a partition, ``process(record)`` yields
    (or returns an iterable of) outputs for one record, ``close()`` may yield a final
    flush. Each partition gets its own copy of the instance (Spark ships it with the
    task), so instance attributes are per-worker state::

        class RunningMax(Operator):
            def open(self):
                self.best = {}
            def process(self, row):
                self.best[row.key] = max(self.best.get(row.key, 0), row.value)
                yield row.key, self.best[row.key]

        rdd.mapPartitions(RunningMax())      # works with and without %%icedtea

    Set the class attribute ``name`` to name the operator explicitly.
    """

    name: str | None = None

    def open(self) -> None:
        """Prepare state before the partition's first record."""

    def process(self, record: Any) -> Iterable[Any] | None:
        """Handle one record; yield or return its outputs."""
        raise NotImplementedError(f"{type(self).__name__} must implement process(record)")

    def close(self) -> Iterable[Any] | None:
        """Flush after the partition's last record; yield or return final outputs."""
        return None

    def __call__(self, records: Iterable[Any]) -> Iterator[Any]:
        self.open()
        for record in records:
            outputs = self.process(record)
            if outputs is not None:
                yield from outputs
        final = self.close()
        if final is not None:
            yield from final
