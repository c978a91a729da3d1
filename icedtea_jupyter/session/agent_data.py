"""What the samples and summaries agents stored, on the run: ``run.samples(operator)``,
``run.summaries(operator)``, ``run.summary_diff(other)``."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..store import agent_files, layout
from ..summaries import Thresholds, summary_diff, summary_frame

if TYPE_CHECKING:
    from ..dag import Dag

SAMPLES_AGENT, SUMMARIES_AGENT = "SamplesAgent", "SummariesAgent"


class RunAgentData:
    """Mixed into ``Run``: the samples and summaries its agents stored."""

    manifest: dict
    dag: Dag

    @property
    def path(self) -> str:  # Run's: the run's store directory
        raise NotImplementedError

    @property
    def trial(self) -> float | None:
        """The share of each source this run sampled, if it is a trial run (``--trial``)."""
        return self.manifest.get("options", {}).get("trial")

    @property
    def trial_run(self) -> str | None:
        """The id of the trial run that preceded this run (``--trial``), if any."""
        return self.manifest.get("trial_run")

    def samples(self, operator: str) -> pd.DataFrame:
        """A uniform sample of ``operator``'s input records (``--agent samples``), one row
        per record, its fields as columns and ``_partition``."""
        table = agent_files.read_sample(self.path, self.dag.node(operator).id)
        if table is None:
            raise LookupError(self._missing("samples", operator))
        return table.to_pandas()

    sample = samples

    def summaries(self, operator: str) -> pd.DataFrame:
        """Per field of ``operator``'s input (``--agent summaries``): kind, count, nulls,
        distinct, min, max, mean, std, quantiles and a histogram."""
        stored = agent_files.read_summary(self.path, self.dag.node(operator).id)
        if stored is None:
            raise LookupError(self._missing("summaries", operator))
        return summary_frame(stored)

    def stored_summaries(self) -> dict[str, dict]:
        """Operator name → its stored summary, for the operators that have one."""
        return stored_summaries(self.path, self.dag.names())

    def summary_diff(self, other: Any, **thresholds: float) -> pd.DataFrame:
        """What changed from ``other`` (an earlier run of the same cell: a run, its id or
        its store path) to this run, per operator and field: shifted distributions,
        fields that became null, changed counts. ``thresholds``: ``ks``, ``sigmas``,
        ``nulls`` (``summaries.Thresholds``)."""
        before = self._summaries_of(other)
        after = self.stored_summaries()
        if not before or not after:
            which = "this run" if not after else f"run {other!r}"
            raise LookupError(f"no summaries in {which}: record both runs with "
                              "--agent summaries to compare them")
        return summary_diff(before, after, Thresholds(**thresholds))

    def summary_chart(self, other: Any, operator: str, field: str) -> Any:
        """An Altair chart of ``field`` of ``operator``'s input in ``other`` and in this
        run (their distributions as CDF lines)."""
        from ..summaries.chart import shift_chart
        from ..summaries.frame import load_fields

        before = self._summaries_of(other)
        label = getattr(other, "id", str(other))
        sketches = [load_fields(summaries[operator])[field]
                    for summaries in (before, self.stored_summaries())]
        return shift_chart(operator, field, (label, sketches[0]),
                           (str(self.manifest.get("id")), sketches[1]))

    def _summaries_of(self, other: Any) -> dict[str, dict]:
        if hasattr(other, "stored_summaries"):
            return other.stored_summaries()
        return stored_summaries_at(self._other_path(str(other)))

    def _other_path(self, other: str) -> str:
        path = other if os.path.isdir(other) else layout.run_dir(os.path.dirname(self.path),
                                                                  other)
        if not os.path.isfile(layout.manifest_path(path)):
            raise LookupError(f"no run {other!r} beside {self.path!r}")
        return path

    def _missing(self, what: str, operator: str) -> str:
        agent = SAMPLES_AGENT if what == "samples" else SUMMARIES_AGENT
        if not any(name.startswith(agent[:-5])
                   for name in self.manifest.get("options", {}).get("agents", [])):
            return (f"no {what} in run {self.manifest.get('id')}: record it with "
                    f"%%icedtea --agent {what}")
        return (f"no {what} of {operator!r} in run {self.manifest.get('id')}: no successful "
                "task of it reported them (see run.alerts)")


def stored_summaries(path: str, names: dict[int, str]) -> dict[str, dict]:
    found = {names[op]: agent_files.read_summary(path, op) for op in names}
    return {name: stored for name, stored in found.items() if stored is not None}


def stored_summaries_at(path: str) -> dict[str, dict]:
    """The stored summaries of the run at ``path``, by operator name."""
    from ..dag import Dag
    from ..store.run_store import RunStore

    manifest = RunStore.open(path).read_manifest()
    return stored_summaries(path, Dag.from_json(manifest.get("dag", {})).names())
