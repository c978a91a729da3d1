"""The built-in agents the magic's flags select, configured (``Agent.with_options``).

``--tolerate N`` → ``tolerate``; ``--check`` → ``check``; ``--check-table`` →
``check-table``; ``--golden`` (``--golden-sample``) → ``golden`` (within a budget of the operator's
time unless ``--golden-sample`` is given) and ``golden-partitions``; ``--latency-factor F``
→ ``latency`` with F. Each flag's text is
checked here, before anything runs: a ValueError says what is wrong and how to write it.
"""
from __future__ import annotations

from typing import Any

from ..executor.agent import Agent
from .golden import Golden, GoldenPartitions, SampledGolden, resolve_golden
from .golden_budget import BudgetGolden
from .latency import LatencyAgent
from .row_checks import RowChecks, parse_check
from .table_checks import TableChecks, parse_table_check
from .tolerate import Quarantine


def flag_agents(options: Any, namespace: dict) -> list[type[Agent]]:
    """The configured agent classes for ``options`` (a ``RunOptions``)."""
    agents: list[type[Agent]] = []
    if options.tolerate is not None:
        if options.tolerate < 0:
            raise ValueError(f"--tolerate {options.tolerate}: the number of records to "
                             "quarantine must be 0 or more")
        agents.append(Quarantine.with_options(limit=int(options.tolerate)))
    if options.checks:
        agents.append(RowChecks.with_options(
            checks=tuple(parse_check(text) for text in options.checks)))
    if options.table_checks:
        agents.append(TableChecks.with_options(
            checks=tuple(parse_table_check(text) for text in options.table_checks)))
    if options.golden:
        agents.extend(golden_agents(options.golden, options.golden_sample, namespace))
    named = {cls.agent_name() for cls in options.agents}
    if options.latency_factor is not None:
        if "latency" in named:
            raise ValueError("--latency-factor selects the latency agent already: drop "
                             "--agent latency")
        if options.latency_factor <= 1:
            raise ValueError(f"--latency-factor {options.latency_factor}: a record is slow "
                             "at more than F times the average; F must be more than 1")
        agents.append(LatencyAgent.with_options(factor=float(options.latency_factor)))
    return agents


def golden_agents(golden: list[str], sample: float | None,
                  namespace: dict) -> list[type[Agent]]:
    """``--golden`` with ``--golden-sample``: every record (1), a fixed share (under 1),
    or, without it, as many as golden's budget allows (``BudgetGolden``)."""
    if sample is not None and not 0 < sample <= 1:
        raise ValueError(f"--golden-sample {sample}: a fraction of the records, more "
                         "than 0 and at most 1 (e.g. 0.01; 1 tests every record)")
    references = tuple(resolve_golden(text, namespace) for text in golden)
    per_record = BudgetGolden if sample is None else Golden if sample >= 1 else SampledGolden
    rate = 1.0 if sample is None else float(sample)
    return [tool.with_options(references=references, sample=rate)
            for tool in (per_record, GoldenPartitions)]
