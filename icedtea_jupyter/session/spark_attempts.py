"""Which task attempt Spark kept when one partition ran in several attempts at once.

With ``spark.speculation`` on, Spark launches a copy of a straggling task beside the
original; the first attempt to succeed is the task's result and Spark kills the other.
Both attempts' Python workers report to the coordinator, and a loser whose Python worker
gets to the end before the kill reaches it reports ``ok`` like the winner. Only Spark
knows which attempt won: its status store (the Spark UI's data, kept with the UI off too)
records each task attempt's outcome. After the run, every attempt of an
(operator, stage, partition) that ran more than once is looked up there; the attempts
Spark did not keep become ``killed`` (they count nothing: no counts, snapshots or replay
logs), and the manifest's ``killed_attempts`` names them (``RunStore.worker_table``
applies it, so a loser that still writes to the store later changes nothing).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

LOG = logging.getLogger("icedtea_jupyter")
SUCCESS = "SUCCESS"
WAIT = 3.0  # seconds to wait for Spark's listener bus to record the winner


@dataclass(frozen=True)
class SparkAttempt:
    """Spark's record of one task attempt: its status (``SUCCESS``, ``KILLED``,
    ``FAILED``, ``RUNNING``) and whether it was a speculative copy."""

    status: str
    speculative: bool


def spark_attempts(sc: Any, stage: int, tasks: Iterable[int]) -> dict[int, SparkAttempt]:
    """Spark's record of the task attempts ``tasks`` (task attempt ids) of ``stage``, over
    all the stage's attempts; an id Spark no longer holds is left out."""
    wanted = set(tasks)
    found: dict[int, SparkAttempt] = {}
    try:
        status_store = sc._jsc.sc().statusStore()
        last = status_store.lastStageAttempt(stage).attemptId()
    except Exception as exc:  # a stopped context, or a stage no longer kept
        LOG.debug("icedtea: Spark keeps no stage %s: %s", stage, exc)
        return found
    for attempt in range(last + 1):
        by_id = _stage_tasks(sc, status_store, stage, attempt)
        for task in wanted - found.keys():
            record = by_id.get(task) if by_id is not None else None
            if record is not None and record.isDefined():
                record = record.get()
                found[task] = SparkAttempt(record.status(), record.speculative())
    return found


def succeeded(sc: Any, keys: list[tuple]) -> set[tuple]:
    """The workers (coordinator keys) whose Spark task attempt succeeded: their end was
    sent before the task ended, however late the kernel reads it. Nothing without a
    SparkContext (Spark Connect): its tasks are not known here."""
    if sc is None:
        return set()
    attempts = attempts_of(sc, keys)
    return {key for key in keys if key[4] in attempts and attempts[key[4]].status == SUCCESS}


def attempts_of(sc: Any, keys: Iterable[tuple]) -> dict[int, SparkAttempt]:
    """Spark's record of the task attempts of workers (coordinator keys), stage by stage,
    by task attempt id."""
    by_stage: dict[int, set[int]] = {}
    for key in keys:
        by_stage.setdefault(key[1], set()).add(key[4])
    attempts: dict[int, SparkAttempt] = {}
    for stage, tasks in by_stage.items():
        attempts.update(spark_attempts(sc, stage, tasks))
    return attempts


def _stage_tasks(sc: Any, status_store: Any, stage: int, attempt: int) -> Any:
    """The task records of one stage attempt (a Scala Map keyed by task attempt id, a
    Long: a Python int finds it), or None if Spark has no such stage attempt."""
    jvm = sc._jvm
    try:
        data = status_store.stageAttempt(stage, attempt, True,
                                         jvm.java.util.Collections.emptyList(), False,
                                         sc._gateway.new_array(jvm.double, 0))._1()
        return data.tasks().get()
    except Exception as exc:
        LOG.debug("icedtea: Spark keeps no attempt %s of stage %s: %s", attempt, stage, exc)
        return None


def duplicated(states: Iterable[tuple[tuple, dict]]) -> dict[tuple, list[tuple]]:
    """The worker keys of each (operator, stage, partition) that ran in more than one
    Spark task attempt (coordinator keys: operator, stage, partition, attempt, task)."""
    groups: dict[tuple, list[tuple]] = {}
    for key, _ in states:
        if key[4] >= 0:  # -1: a worker outside Spark's tasks (local replay)
            groups.setdefault(key[:3], []).append(key)
    return {group: keys for group, keys in groups.items() if len({k[4] for k in keys}) > 1}


def losers(groups: dict[tuple, list[tuple]],
           attempts: dict[int, SparkAttempt]) -> list[dict]:
    """The attempts Spark did not keep, in groups where one attempt succeeded: each
    with the task attempt that won and whether it was the speculative copy."""
    found = []
    for keys in groups.values():
        won = [k for k in keys if attempts.get(k[4], SparkAttempt("", False)).status == SUCCESS]
        if not won:
            continue
        winner = max(won, key=lambda k: k[4])
        for key in keys:
            spark = attempts.get(key[4])
            if key in won or (spark is not None and spark.status == "FAILED"):
                continue  # a failure (an executor lost, say) stays what it was
            found.append({"operator": key[0], "stage": key[1], "partition": key[2],
                          "attempt": key[3], "task": key[4],
                          "speculative": bool(spark and spark.speculative),
                          "winner": {"attempt": winner[3], "task": winner[4],
                                     "speculative": attempts[winner[4]].speculative}})
    return found


def _settled(keys: list[tuple], attempts: dict[int, SparkAttempt]) -> bool:
    """Whether Spark recorded the winner of a task, or every attempt of it ended."""
    known = [attempts.get(k[4]) for k in keys]
    return any(a is not None and a.status == SUCCESS for a in known) or \
        all(a is not None and a.status != "RUNNING" for a in known)


def killed_warning(killed: list[dict], names: dict[int, str]) -> list[str]:
    """One warning per operator with attempts Spark killed: which partitions ran twice
    and which attempt the run kept."""
    by_operator: dict[int, list[dict]] = {}
    for attempt in killed:
        by_operator.setdefault(attempt["operator"], []).append(attempt)
    warnings = []
    for operator, attempts in by_operator.items():
        kept = "; ".join(
            f"partition {a['partition']}: attempt {a['winner']['attempt']} "
            f"({'the speculative copy' if a['winner']['speculative'] else 'the original'}) "
            f"won, attempt {a['attempt']} was killed" for a in attempts)
        speculative = any(a["speculative"] or a["winner"]["speculative"] for a in attempts)
        warnings.append(
            f"Spark ran {len(attempts)} task(s) of {names.get(operator, str(operator))!r} "
            f"in two attempts at once{' (spark.speculation)' if speculative else ''} and "
            f"kept the one that finished first: {kept}. The run counts, snapshots and "
            "replays the winning attempt only.")
    return warnings


def killed_attempts(sc: Any, states: list[tuple[tuple, dict]],
                    wait: float = WAIT) -> list[dict]:
    """The task attempts of a finished run that Spark killed because another attempt of
    the same task won (``losers``); waits up to ``wait`` seconds for Spark to record each
    duplicated task's winner. Nothing without a SparkContext (Spark Connect)."""
    groups = duplicated(states)
    if sc is None or not groups:
        return []
    deadline = time.monotonic() + wait
    while True:
        attempts = attempts_of(sc, [key for keys in groups.values() for key in keys])
        if all(_settled(keys, attempts) for keys in groups.values()) \
                or time.monotonic() >= deadline:
            return losers(groups, attempts)
        time.sleep(0.1)
