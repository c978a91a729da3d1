"""Agents: small objects living beside a worker, shown every record (Inspector Gadget).

Subclass ``Agent`` (``agent_api.py``, re-exported here) and override only the hooks you
need; every hook is a no-op there. The host calls ``observe_record``, ``observe_outputs`` and ``record_failed`` only
for agents that override them, so an agent that just reports counts on ``heartbeat``
costs nothing per record. ``Agent.with_options(...)`` gives a configured subclass (the
options travel to the workers with the run); ``alert(...)`` puts an alert on the run's
one alert stream. A hook
that raises becomes an alert on the run and the agent is switched off for the
rest of that worker; the Spark task never fails because of an agent. A worker hosts
its agents through one plugin (``AgentPlugin``, see ``plugin.py``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from time import perf_counter
from typing import Any

from .agent_api import Agent, AgentContext, overrides
from .picks import picked_stream
from .plugin import WorkerPlugin

__all__ = ["Agent", "AgentContext", "AgentPlugin", "overrides", "rows_of"]


class AgentPlugin(WorkerPlugin):
    """The run's agents beside one worker (``RunSpec.agents``, the progress agent first).

    Each hook of each agent is wrapped: an agent that raises becomes an alert and is
    switched off for this worker. ``observe_record`` runs only for agents that override
    it, and only then does the worker keep its per-record loop; ``observe_outputs`` and
    ``record_failed`` only for agents that override them (the host then wraps the
    operator's function: ``observed.py``). An agent class with ``times_agents = True``
    (``--agent overhead``) makes this plugin time every agent's hooks (``overhead()``)."""

    name = "agents"

    def __init__(self, host: Any) -> None:
        self.host = host
        self.tags: dict[str, dict[str, int]] = {}  # per agent: its tags' counts
        self.spent: dict[str, list[float]] = {}  # per agent: seconds and calls in its hooks
        names = host.channel.operator_names
        spec, worker = host.spec, host.worker
        context = AgentContext(
            run_id=spec.run.run_id, operator_id=spec.op_id,
            operator=spec.name or names.get(spec.op_id, str(spec.op_id)),
            partition=worker["partition"], stage=worker["stage"],
            attempt=worker["attempt"], counts=host.counts, state=host.state,
            overhead=self.overhead, taken=host.live_count, api=spec.api, wait=host.hold)
        self.agents: list[Agent] = []
        self.quiet: list[Agent] = []  # agents that declined the per-record hooks
        self._output_hooks: tuple[tuple[Agent, Callable], ...] = ()
        self.rows: list = []  # outputs not yet shown to ``observe_output_rows``
        self._timed = False
        if any(getattr(cls, "times_agents", False) for cls in spec.run.agents):
            self._call = self._timed_call  # type: ignore[method-assign]
            self._timed = True
        for cls in spec.run.agents:
            try:
                agent = cls()
            except Exception as exc:
                host.alert(cls.agent_name(), "__init__", exc)
                continue
            agent._send = self._sender(cls.agent_name())
            agent._alert = self._alerter(cls.agent_name())
            agent.context = context
            self.agents.append(agent)
        for agent in list(self.agents):
            self._call(agent, "init", context)
        self.quiet = [a for a in list(self.agents) if self._call(a, "observes") is False]
        self._index()

    def _index(self) -> None:
        observing = [a for a in self.agents if a not in self.quiet]
        self.observers = [a for a in observing if overrides(a, "observe_record")]
        self.output_observers = [a for a in observing if overrides(a, "observe_outputs")]
        self.failure_handlers = [a for a in observing if overrides(a, "record_failed")]
        self.row_observers = [a for a in observing if overrides(a, "observe_output_rows")]
        # per record: the bound hooks, called directly (timed when an agent asks)
        self._output_hooks = tuple((a, self.hook(a, "observe_outputs"))
                                   for a in self.output_observers)  # a new one: a loop
        # over the old one goes on when an agent is switched off
        # what the function wrapper calls: the one observer's hook itself (its failure
        # comes back through ``outputs_failed``), else every observer's in turn
        self.notify = self._output_hooks[0][1] if len(self._output_hooks) == 1 \
            else self.on_outputs

    def _sender(self, name: str) -> Callable[[dict], None]:
        host = self.host

        def send(fields: dict) -> None:
            host.channel.send({"type": "agent", "worker": host.worker, "agent": name, **fields})
        return send

    def _alerter(self, name: str) -> Callable[[dict], None]:
        host = self.host

        def alert(fields: dict) -> None:
            host.channel.send({**fields, "type": "alert", "worker": host.worker,
                               "source": name, "message": str(fields["message"])})
        return alert

    def _call(self, agent: Agent, hook: str, *args: Any) -> Any:
        try:
            return getattr(agent, hook)(*args)
        except Exception as exc:
            self._switch_off(agent, hook, exc)
            return None

    def _timed_call(self, agent: Agent, hook: str, *args: Any) -> Any:
        started = perf_counter()
        try:
            return getattr(agent, hook)(*args)
        except Exception as exc:
            self._switch_off(agent, hook, exc)
            return None
        finally:
            spent = self.spent.setdefault(agent.agent_name(), [0.0, 0])
            spent[0] += perf_counter() - started
            spent[1] += 1

    def _switch_off(self, agent: Agent, hook: str, exc: Exception) -> None:
        self.host.alert(agent.agent_name(), hook, exc)
        if agent in self.agents:
            self.agents.remove(agent)
            self._index()

    def overhead(self) -> dict[str, dict]:
        """Per agent: the seconds spent in its hooks and the calls, so far (timed only
        when an agent sets ``times_agents``)."""
        return {name: {"seconds": s, "calls": n} for name, (s, n) in self.spent.items()}

    # --- what the host's function wrapper calls (observed.py) --------------------------
    def sees_processing(self) -> bool:
        """Must the operator's function be wrapped (outputs, timing, failures)?"""
        return bool(self.output_observers or self.failure_handlers)

    def samples_outputs(self) -> bool:
        """May a block loop show ``observe_outputs`` a sample (``SampledTiming``)?"""
        return len(self.output_observers) == 1 and not self.failure_handlers \
            and overrides(self.output_observers[0], "outputs_sample")

    def hook(self, agent: Agent, hook: str) -> Callable:
        """``agent``'s bound ``hook``, timed into ``spent`` if this host times agents
        (``--agent overhead`` times the path the run takes without it: sampled too)."""
        bound = getattr(agent, hook)
        if not self._timed:
            return bound
        spent = self.spent.setdefault(agent.agent_name(), [0.0, 0])

        def timed(*args: Any) -> Any:
            started = perf_counter()
            try:
                return bound(*args)
            finally:
                spent[0] += perf_counter() - started
                spent[1] += 1
        return timed

    def outputs_failed(self, exc: Exception) -> None:
        """The one output observer's hook raised (``notify``): it is switched off."""
        if len(self._output_hooks) == 1:
            self._switch_off(self._output_hooks[0][0], "observe_outputs", exc)

    def on_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        for agent, hook in self._output_hooks:
            try:
                hook(record, outputs, seconds)
            except Exception as exc:
                self._switch_off(agent, "observe_outputs", exc)

    def on_failure(self, record: Any, exc: Exception) -> bool:
        """True if an agent took the failing record (quarantined: skip it)."""
        return any([self._call(agent, "record_failed", record, exc) is True
                    for agent in list(self.failure_handlers)])

    # --- hooks -------------------------------------------------------------------------
    def needs_records(self, host: Any) -> bool:
        return bool(self.observers)

    def records(self, host: Any, records: Iterable) -> Iterable:
        records = self.feed_input(host, records) or records
        return self._observe(records) if self.observers else records

    def feed_input(self, host: Any, iterator: Iterable) -> Iterable | None:
        """The worker's input with the agents' picks (``input_picks``), if any."""
        pickers = []
        for agent in list(self.agents):
            if overrides(agent, "input_picks"):
                gaps = self._call(agent, "input_picks")
                if gaps is not None:
                    pickers.append((iter(gaps), self._guarded_take(agent)))
        return picked_stream(iterator, pickers) if pickers else None

    def _guarded_take(self, agent: Agent) -> Callable[[Any], None]:
        def take(record: Any) -> None:
            if agent in self.agents:
                self._call(agent, "take", record)
        return take

    def _observe(self, records: Iterable) -> Iterator:
        for record in records:
            for agent in list(self.observers):
                tag = self._call(agent, "observe_record", record)
                if tag is not None:
                    counts = self.tags.setdefault(agent.agent_name(), {})
                    counts[str(tag)] = counts.get(str(tag), 0) + 1
            yield record

    def partition_outputs(self, host: Any, outputs: Iterable) -> Iterable:
        """A whole-partition function's outputs, shown one by one to ``observe_outputs``
        (not a batch function's: its outputs are batches, not records)."""
        if self.output_observers and host.loop_kind == "partition":
            return self._outputs(outputs)
        return outputs

    def _outputs(self, outputs: Iterable) -> Iterator:
        """A whole-partition function's outputs, each shown to ``observe_outputs``."""
        started = perf_counter()
        for out in outputs:
            self.on_outputs(None, [out], perf_counter() - started)
            yield out
            started = perf_counter()

    def output_rows(self, host: Any) -> list | None:
        return self.rows if self.row_observers else None

    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        if self.rows:
            self.hand_rows(host)

    def hand_rows(self, host: Any) -> None:
        """The outputs listed since the last call, to each ``observe_output_rows``."""
        rows = self.rows[:]
        self.rows.clear()  # the list the host appends to stays the same
        if host.loop_kind == "batches" or host.per_call:
            rows = [row for value in rows for row in rows_of(value)]
        for agent in list(self.row_observers):
            self._call(agent, "observe_output_rows", rows)

    def beat(self, host: Any) -> None:
        if self.rows:
            self.hand_rows(host)
        for agent in list(self.agents):
            self._call(agent, "heartbeat")

    def accepts(self, host: Any, message: dict) -> bool:
        return message["type"] == "to_agent"

    def control(self, host: Any, message: dict) -> bool:
        if message["type"] != "to_agent":
            return False
        for agent in self.agents:
            if agent.agent_name() == message["agent"]:
                self._call(agent, "receive_message", message["payload"])
        return True

    def end(self, host: Any, message: dict) -> None:
        """A last beat, then each agent's ``finish``; the tags counted travel in
        ``worker_end``."""
        self.beat(host)
        for agent in list(self.agents):
            self._call(agent, "finish")
        message["tags"] = self.tags


def rows_of(value: Any) -> list:
    """The rows of a batch function's output or a DataFrame UDF's result: a pandas
    DataFrame's as named tuples, a Series' values, an Arrow batch's as dicts; else the
    value itself (a row UDF's result)."""
    if hasattr(value, "itertuples"):
        return list(value.itertuples(index=False, name="Row"))
    if hasattr(value, "to_pylist"):
        return value.to_pylist()
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) == 1:  # not a numpy scalar
        return list(value.tolist())
    return [value]
