"""Trial runs (``%%icedtea --trial 1%``): the cell's pipeline on a sample of each source
first, with every selected agent, its alerts and summaries reported before the full run.

The trial is a run of its own in the store (its manifest's ``options.trial`` is the
fraction; the full run's ``trial_run`` names it). Each source the cell makes — an RDD of
``parallelize``, ``range``, ``textFile``..., a DataFrame of ``spark.read``,
``createDataFrame``, ``spark.range``, ``spark.sql``... — is replaced by its
``sample(False, fraction, seed)`` while the trial records (``instrument/``). Limits:
RDDs and DataFrames made before the cell are not sampled; the cell's actions and side
effects run twice (trial, then full); an operator that needs every record of a key
sees only a sample of them.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..agents.summaries import SummariesAgent, SummariesOfEveryRecord
from .execution import RunOptions, start_run
from .live_run import LiveRun


class TrialFailed(RuntimeError):
    """The trial run raised: the full run was not started."""


def parse_fraction(text: str) -> float:
    """``"1%"`` or ``"0.01"`` -> 0.01; ValueError unless it is a share in (0, 1)."""
    value = text.strip()
    try:
        fraction = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise ValueError(f"--trial {text!r}: write a share of each source, e.g. 1% or "
                         "0.01") from None
    if not 0 < fraction < 1:
        raise ValueError(f"--trial {text!r}: the share must be more than 0 and less than 100%")
    return fraction


def run_trial(code: str, namespace: dict, options: RunOptions,
              context: dict | None = None) -> LiveRun:
    """Record ``code`` on a ``options.trial`` sample of each source and wait for it (the
    summaries agent sketches every record of that sample)."""
    agents = [SummariesOfEveryRecord if agent is SummariesAgent else agent
              for agent in options.agents]
    trial_options = replace(options, wait=True, reuse=False, prepare=False, agents=agents)
    run = start_run(code, namespace, trial_options, context)
    run.wait()
    return run


def trial_report(run: LiveRun) -> str:
    """What the trial found: its status, error and alerts, and where its summaries are."""
    fraction = run.options.get("trial") or 0.0
    lines = [f"icedtea trial run {run.id} on {fraction:.2%} of each source: {run.status}"]
    if run.error:
        lines.append(f"  error: {run.error.get('operator')!r} raised "
                     f"{run.error.get('exception')}: {run.error.get('message')}")
    alerts = run.alerts().to_dict("records")
    lines.append(f"  {len(alerts)} alert(s)" + (":" if alerts else ""))
    lines += [f"  - [{a.get('operator')}] {a.get('message')}" for a in alerts[:10]]
    if run.stored_summaries():
        names = ", ".join(run.stored_summaries())
        lines.append(f"  summaries of {names}: icedtea_jupyter.open_run({run.path!r})"
                     ".summaries(operator)")
    return "\n".join(lines)


def trial_then_full(code: str, namespace: dict, options: RunOptions,
                    context: dict | None = None, say: Any = print) -> LiveRun:
    """The trial, its report, then the full run (linked to the trial) unless the trial
    raised and ``options.trial_continue`` is off (raises TrialFailed)."""
    trial = run_trial(code, namespace, options, dict(context or {}))
    say(trial_report(trial))
    failed = trial.status == "failed" or trial.cell_exception is not None
    if failed and not options.trial_continue:
        raise TrialFailed(f"icedtea: the trial run {trial.id} raised "
                          f"({type(trial.cell_exception).__name__ if trial.cell_exception else 'failed'}"
                          "): the full run was not started. Fix the cell, or add "
                          "--trial-continue to run it anyway.")
    return start_run(code, namespace, replace(options, trial=None),
                     dict(context or {}, trial_run=trial.id))
