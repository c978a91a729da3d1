"""The agent API (Inspector Gadget): ``Agent``, the worker side of an agent, and
``AgentContext``, what it knows of its worker. Subclass ``Agent`` and override only the
hooks you need; every hook is a no-op here. ``icedtea_jupyter.Agent`` is this class;
``agent.py``'s ``AgentPlugin`` hosts a worker's agents.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .records import NO_RECORD, describe_record


@dataclass
class AgentContext:
    """What an agent knows about its worker."""

    run_id: str
    operator_id: int
    operator: str
    partition: int
    stage: int
    attempt: int
    counts: Callable[[], dict]  # live records_in, records_out, bytes_in, seconds
    state: Callable[[], dict] = dict  # the worker's state variables now (live objects)
    overhead: Callable[[], dict] = dict  # per agent: seconds, calls in its hooks (timed runs)
    taken: Callable[[], int] = int  # inputs taken so far, the one being processed included
    api: str = ""  # the API that made the operator: map, filter, mapPartitions, ...
    # stay between two records, handling messages (``receive_message``) as they come,
    # until ``until()`` or ``timeout`` seconds: to wait for a coordinator's answer
    wait: Callable[[Callable[[], bool], float], None] = lambda until, timeout: None


class Agent:
    """Worker side of an agent. ``coordinator`` names its coordinator-side class."""

    coordinator: type | None = None
    options: dict = {}  # set by ``with_options``; read by both sides

    def __init__(self) -> None:
        self._send: Callable[[dict], None] | None = None
        self._alert: Callable[[dict], None] | None = None
        self.context: AgentContext | None = None

    @classmethod
    def agent_name(cls) -> str:
        return getattr(cls, "name", None) or cls.__name__

    @classmethod
    def with_options(cls, **options: Any) -> type[Agent]:
        """A subclass of this agent whose ``options`` (also its coordinator side's) are
        ``options``: how a flag configures a built-in agent. The class is shipped to the
        workers by value, so the options must pickle."""
        return type(cls.__name__, (cls,), {
            "options": {**cls.options, **options}, "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}.with_options"})

    # --- hooks (no-ops) -------------------------------------------------------------
    def init(self, context: AgentContext) -> None:
        """Called once when the worker starts, before its first record."""

    def observe_record(self, record: Any) -> Any:
        """Called with every input record; returns the record's tags (or None)."""
        return None

    def observes(self) -> bool:
        """Asked once after ``init``: False spares this worker the agent's per-record
        hooks (``observe_record``, ``observe_outputs``, ``record_failed``), e.g. an
        agent configured for other operators. The other hooks still run."""
        return True

    def observe_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        """After the operator processed one input. Per-record operators (map, filter,
        flatMap, foreach, ``Operator``): once per input ``record``, with its ``outputs``
        (a list; a filter's is ``[record]`` or ``[]``) and the ``seconds`` the operator
        took on it. Whole-partition functions (mapPartitions...): once per output,
        ``record`` None, ``outputs`` that one output, ``seconds`` the time the function
        took to produce it."""

    def outputs_sample(self) -> int:
        """Override to let ``observe_outputs`` see a sample of a map, filter, flatMap or
        ``Operator`` that runs in blocks: N in 2..64 shows it one record (at random) of
        the next N and runs the others without a Python call of ours, then asks again;
        1 shows the next 64. Honoured when this agent is the worker's only
        ``observe_outputs`` and nothing handles failures; else every record is shown."""
        return 1

    def observe_output_rows(self, rows: list) -> None:
        """The operator's outputs since the last call, in order: between two blocks
        (every few milliseconds), at heartbeats and before ``finish``. The worker
        appends each output to a list by a C call, so the operator keeps its C block
        loop: cheaper than ``observe_outputs`` when neither the input record nor the
        time is needed. A batch function's (mapInPandas, mapInArrow) outputs come as
        their rows (pandas: named tuples; Arrow: dicts); a DataFrame UDF's as its
        results (a row UDF's value, a pandas UDF's Series values, applyInPandas' rows).
        ``rows`` is emptied after the call: keep what you need."""

    def record_failed(self, record: Any, exception: Exception) -> bool:
        """A per-record operator raised ``exception`` processing ``record``. True skips
        the record (it has no output) and the task goes on; False (every agent's
        answer by default) fails the task as without agents. Whole-partition
        functions cannot skip a record: their exceptions fail the task."""
        return False

    def receive_message(self, message: Any) -> None:
        """A message from the coordinator side or from another agent."""

    def heartbeat(self) -> None:
        """Called about four times a second while the worker processes records."""

    def finish(self) -> None:
        """Called once when the worker has processed its last record (or failed)."""

    def input_picks(self) -> Iterator[int] | None:
        """The gaps between the input records this agent wants to see, for a sample by
        skip counts: ``take(record)`` is called with the record after each gap (the
        first gap counts from the start). None (the default): no picks.

        The records passed over cost no Python code (``picks.py``): the worker keeps its
        fast block loop. Called once, after ``init``; keep the gaps' code from raising:
        it runs inside the Spark task."""
        return None

    def take(self, record: Any) -> None:
        """A record of the worker's input this agent picked (``input_picks``)."""

    # --- what an agent can do -----------------------------------------------------
    def send_to_coordinator(self, payload: Any) -> None:
        """Send a JSON-able payload to this agent's coordinator side."""
        if self._send is not None:
            self._send({"payload": payload})

    def alert(self, message: str, record: Any = NO_RECORD, check: str | None = None,
              count: int = 1, level: str = "warning", **fields: Any) -> None:
        """An alert on the run's one stream (``run.alerts()``, the panel, the sidebar),
        from this worker: ``record`` (described: repr, value, type) and ``check`` (what
        was checked) if any, ``count`` (the alerts this one stands for: sampled alerts
        count the ones not sent). ``fields``: anything JSON-able besides."""
        if self._alert is None:
            return
        alert = {"message": message, "level": level, "check": check, "count": count,
                 **fields}
        if record is not NO_RECORD:
            alert["record"] = describe_record(record)
        self._alert(alert)

    def send_to_agent(self, operator: str, payload: Any, partition: int | None = None) -> None:
        """Send a payload to this agent's twin beside ``operator`` (via the coordinator)."""
        if self._send is not None:
            self._send({"payload": payload, "forward": {"operator": operator, "partition": partition}})


def overrides(agent: Agent, hook: str) -> bool:
    return getattr(type(agent), hook) is not getattr(Agent, hook)
