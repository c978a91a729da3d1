"""Golden logic testing (``--golden "operator: reference_function"``, ``--golden-sample``).

A reference implementation runs beside the operator; every difference is an alert with
the record and both outputs (sampled like row checks: the first few per worker with
their records, the rest counted). "Beside" means:

- map, filter, flatMap, foreach and ``Operator`` subclasses: per input record, the
  reference gets the record and its result is compared with the operator's outputs for
  it (map: ``ref(record) == output``; filter: ``bool(ref(record))`` against whether the
  record was kept; flatMap and ``Operator``: ``list(ref(record)) == outputs``);
  ``--golden-sample 0.01`` tests about 1% of the records, chosen at random. Sampled, a
  map, filter, flatMap or ``Operator`` that runs in blocks shows golden one record at
  random in each group of up to 64 (``outputs_sample``) and runs the others without a
  Python call of ours; each shown record is tested with probability rate × group. The
  alerts' check states the rate (``parse: golden, 1% of records tested``).
- mapPartitions (and mapPartitionsWithIndex, with ``ref(index, iterator)``): per
  partition, the reference gets the partition's inputs and its outputs are compared
  with the operator's, as lists, when the partition ends; ``--golden-sample`` then
  picks partitions (their inputs and outputs are kept in memory until it ends).

The reference function is looked up by name in the notebook's namespace and shipped
to the workers with the run.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from ..executor.agent import Agent
from ..executor.observed import SAMPLE
from .alert_sampler import AlertSampler
from .row_expression import split_flag

PARTITION_APIS = ("mapPartitions", "mapPartitionsWithIndex")


def resolve_golden(text: str, namespace: dict) -> tuple[str, Callable]:
    """``"operator: name"`` -> (operator, the function ``name`` in ``namespace``)."""
    operator, name = split_flag("--golden", text, '"parse: parse_reference"')
    function = namespace.get(name)
    if not callable(function):
        raise ValueError(f"--golden {text!r}: {name!r} is not a function in the notebook "
                         "(define the reference implementation before the cell)")
    return operator, function


def tested(rate: float) -> str:
    """The sample rate as the alerts' check states it ("" when every record is tested)."""
    return "" if rate >= 1.0 else f", {rate * 100:.3g}% of records tested"


class Golden(Agent):
    """Runs the reference beside a per-record operator; alerts on each difference."""

    name = "golden"
    options: dict = {"references": (), "sample": 1.0}

    def init(self, context: Any) -> None:
        found = [f for operator, f in self.options.get("references", ())
                 if operator == context.operator]
        self.reference = found[0] if found else None
        self.rate = float(self.options.get("sample", 1.0))
        self.sampler = AlertSampler(self, f"{context.operator}: golden{tested(self.rate)}")
        self.api = context.api
        self.shown_rate = self.rate  # the chance that a record shown is tested
        self.skip = self._gap()  # records shown until the next one tested

    def _gap(self) -> int:
        """Records shown to the next tested one: 1 when each is tested, else geometric
        with mean 1/shown_rate (one random draw per test)."""
        if self.shown_rate >= 1.0:
            return 1
        return 1 + int(math.log(1.0 - random.random()) / math.log(1.0 - self.shown_rate))

    def observes(self) -> bool:
        return self.reference is not None

    def observe_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        if record is None:  # a whole-partition function's output: GoldenPartitions'
            return
        self.skip -= 1
        if self.skip > 0:
            return
        self.skip = self._gap()
        expected = self._expected(record)
        if expected != outputs:
            self._differs(record, expected, outputs)

    def _expected(self, record: Any) -> list:
        assert self.reference is not None
        result = self.reference(record)
        if self.api == "map":
            return [result]
        if self.api == "filter":
            return [record] if result else []
        return [] if result is None else list(result)

    def _differs(self, record: Any, expected: Any, actual: Any) -> None:
        self.sampler.add(f"the operator's output differs from the reference's: "
                         f"expected {expected!r:.300}, got {actual!r:.300}", record,
                         expected=repr(expected)[:2000], actual=repr(actual)[:2000])

    def heartbeat(self) -> None:
        self.sampler.flush()

    def finish(self) -> None:
        self.sampler.flush(final=True)


class SampledGolden(Golden):
    """``Golden`` for ``--golden-sample`` under 1: where the host can, it shows this
    agent one record at random in each ``group`` and runs the others unwrapped."""

    def init(self, context: Any) -> None:
        super().init(context)
        self.group = min(SAMPLE, max(1, int(1.0 / self.rate)))

    def outputs_sample(self) -> int:
        """One record in ``group`` shown (asked only when the host can show a sample):
        each then tested with probability rate × group."""
        if self.shown_rate == self.rate:  # the first ask: records are sampled
            self.shown_rate = min(1.0, self.rate * self.group)
            self.skip = self._gap()
        return self.group


class GoldenPartitions(Golden):
    """Runs the reference beside a mapPartitions function, on a whole partition: its
    inputs and outputs are kept (on a sample of partitions) and compared at its end.
    A separate agent so that per-record operators are not made to show it their inputs
    (``observe_record`` keeps a worker out of its blocks)."""

    name = "golden-partitions"

    def init(self, context: Any) -> None:
        super().init(context)
        whole = self.api in PARTITION_APIS and random.random() < self.rate
        self.inputs: list | None = [] if whole else None  # a whole partition's, kept
        self.outputs: list = []

    def observes(self) -> bool:
        return self.reference is not None and self.api in PARTITION_APIS

    def observe_record(self, record: Any) -> None:
        if self.inputs is not None:
            self.inputs.append(record)

    def observe_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        if record is not None:  # an Operator, compared per record by Golden
            self.inputs = None
        elif self.inputs is not None:
            self.outputs.extend(outputs)

    def finish(self) -> None:
        if self.inputs is not None and self.reference is not None \
                and self.context is not None:
            source = iter(self.inputs)
            result = self.reference(self.context.partition, source) \
                if self.api == "mapPartitionsWithIndex" else self.reference(source)
            expected = list(result)
            if expected != self.outputs:
                self._differs(f"partition {self.context.partition} "
                              f"({len(self.inputs)} records)", expected, self.outputs)
            self.inputs = None
        super().finish()
