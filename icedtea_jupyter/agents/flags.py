"""The built-in agents the magic's flags select, configured (``Agent.with_options``).

``--tolerate N`` → ``tolerate``; ``--check`` → ``check``; ``--check-table`` →
``check-table``; ``--golden`` (``--golden-sample``) → ``golden``. Each flag's text is
checked here, before anything runs: a ValueError says what is wrong and how to write it.
"""
from __future__ import annotations

from typing import Any

from ..executor.agent import Agent
from .golden import Golden, resolve_golden
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
        if not 0 < options.golden_sample <= 1:
            raise ValueError(f"--golden-sample {options.golden_sample}: a fraction of the "
                             "records, more than 0 and at most 1 (e.g. 0.01)")
        agents.append(Golden.with_options(
            references=tuple(resolve_golden(text, namespace) for text in options.golden),
            sample=float(options.golden_sample)))
    return agents
