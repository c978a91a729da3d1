"""Checkpoint plans: which interactions to checkpoint so every jump takes at most τ.

The model (IcedTea paper §6): a run has interactions I0..In; I0 is the initial state
and restores for free. A jump to I_k restores the latest checkpoint c ≤ k and replays
the records from c to k, taking ``restore_seconds[c] + replay_seconds[c+1] + … +
replay_seconds[k]`` (no restore for c = 0). A plan checkpoints a set of interactions;
its cost is the sum of their ``checkpoint_bytes`` (I0 never counts).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PLAN_NAMES = ("none", "all", "online", "offline")


@dataclass(frozen=True)
class InteractionCost:
    """What one interaction costs: to checkpoint, to replay up to it, to restore it."""

    index: int
    checkpoint_bytes: int  # cost of a checkpoint at this interaction
    replay_seconds: float  # time to replay from the previous interaction to this one
    restore_seconds: float = 0.0  # time to restore a checkpoint taken here


class InfeasiblePlan(ValueError):
    """No checkpoint plan lets every jump finish within τ."""


def _restore(history: Sequence[InteractionCost], c: int) -> float:
    return 0.0 if c == 0 else history[c].restore_seconds


def _jump(history: Sequence[InteractionCost], c: int, k: int) -> float:
    """Seconds to jump to I_k from a checkpoint at I_c (c ≤ k)."""
    seconds = _restore(history, c)
    for i in range(c + 1, k + 1):
        seconds += history[i].replay_seconds
    return seconds


@dataclass(frozen=True)
class Plan:
    """A checkpoint plan: the interactions checkpointed (I0 is implicit) and its τ."""

    name: str
    tau: float
    checkpoints: frozenset[int]

    def cost(self, history: Sequence[InteractionCost]) -> int:
        """Total checkpoint bytes, I0 excluded."""
        return sum(history[i].checkpoint_bytes for i in self.checkpoints if i != 0)

    def base(self, k: int) -> int:
        """The latest checkpoint at or before I_k (0 when there is none)."""
        return max((c for c in self.checkpoints if c <= k), default=0)

    def jump_seconds(self, history: Sequence[InteractionCost], k: int) -> float:
        """Seconds a jump to I_k takes under this plan."""
        if not 0 <= k < len(history):
            raise ValueError(f"interaction {k} is not in a history of {len(history)}")
        return _jump(history, self.base(k), k)

    def max_jump_seconds(self, history: Sequence[InteractionCost]) -> float:
        """The slowest jump to any interaction; ≤ τ exactly when the plan meets τ."""
        return max(self.jump_seconds(history, k) for k in range(len(history)))


def validate_history(history: Sequence[InteractionCost], tau: float) -> None:
    """Raise ValueError unless ``history`` is I0..In with non-negative costs and τ > 0."""
    if not tau > 0:
        raise ValueError(f"tau must be a positive number of seconds, got {tau!r}")
    if not history:
        raise ValueError("history must hold at least the initial interaction I0")
    for i, step in enumerate(history):
        if step.index != i:
            raise ValueError(f"history[{i}] has index {step.index}; interactions must "
                             f"be numbered 0, 1, 2, … in order")
        for field in ("checkpoint_bytes", "replay_seconds", "restore_seconds"):
            value = getattr(step, field)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"interaction {i}: {field} must be finite and "
                                 f"non-negative, got {value!r}")


def plan_none(history: Sequence[InteractionCost], tau: float) -> Plan:
    """Checkpoint nothing: every jump replays from I0."""
    validate_history(history, tau)
    return Plan("none", tau, frozenset())


def plan_all(history: Sequence[InteractionCost], tau: float) -> Plan:
    """Checkpoint every interaction after I0."""
    validate_history(history, tau)
    return Plan("all", tau, frozenset(range(1, len(history))))


def plan_online(history: Sequence[InteractionCost], tau: float) -> Plan:
    """IcedTea's online plan: checkpoint I_k when the jump to it from the last one exceeds τ.

    Walks the interactions in order, as they happen; only the present one can be
    checkpointed. Best effort: when ``restore_seconds[k] > tau`` it still checkpoints
    I_k (and, as the jump to I_{k+1} then exceeds τ too, the next one), and
    ``max_jump_seconds`` of the plan then exceeds τ.
    """
    validate_history(history, tau)
    checkpoints: set[int] = set()
    seconds = 0.0  # the jump to the current interaction from the latest checkpoint
    for k in range(1, len(history)):
        seconds += history[k].replay_seconds
        if seconds > tau:
            checkpoints.add(k)
            seconds = history[k].restore_seconds
    return Plan("online", tau, frozenset(checkpoints))


_Key = tuple[int, int, tuple[int, ...]]  # (bytes, number of checkpoints, checkpoints)


def plan_offline(history: Sequence[InteractionCost], tau: float) -> Plan:
    """The cheapest plan in which every jump takes at most τ, by dynamic programming.

    ``best[k]`` is the cheapest plan over I0..I_k that checkpoints I_k and reaches every
    interaction up to I_k within τ. Ties go to fewer checkpoints, then to the earlier
    ones (the smaller sorted tuple). O(n²) offers, the tuples compared only on a tie
    in bytes and count. Raises InfeasiblePlan when no plan meets τ.
    """
    validate_history(history, tau)
    n = len(history) - 1
    best: list[_Key | None] = [None] * (n + 1)
    best[0] = (0, 0, ())
    fastest = [math.inf] * (n + 1)  # fastest jump to I_i any valid prefix allows
    finals: list[_Key] = []
    for j, key in enumerate(best):  # best[j] is final once every j' < j has extended
        if key is not None and _extend(history, tau, j, key, best, fastest):
            finals.append(key)
    if not finals:
        _raise_infeasible(history, tau, fastest)
    return Plan("offline", tau, frozenset(min(finals)[2]))


def _extend(history: Sequence[InteractionCost], tau: float, j: int, key: _Key,
            best: list[_Key | None], fastest: list[float]) -> bool:
    """Offer ``key``, the best plan ending at I_j, to every later checkpoint it can precede.

    Returns whether every interaction after I_j is reachable from I_j within τ.
    """
    cost, count, chosen = key
    seconds = _restore(history, j)  # the jump from I_j to I_{k-1}; all before it ≤ τ
    fastest[j] = min(fastest[j], seconds)
    for k in range(j + 1, len(history)):
        if history[k].restore_seconds <= tau:
            offer = (cost + history[k].checkpoint_bytes, count + 1, chosen + (k,))
            current = best[k]
            if current is None or offer < current:
                best[k] = offer
        seconds += history[k].replay_seconds
        fastest[k] = min(fastest[k], seconds)
        if seconds > tau:
            return False
    return True


def _raise_infeasible(history: Sequence[InteractionCost], tau: float,
                      fastest: list[float]) -> None:
    """Name the first interaction no plan reaches within τ, and the seconds it needs."""
    i = next(i for i, seconds in enumerate(fastest) if seconds > tau)
    restore = history[i].restore_seconds
    raise InfeasiblePlan(
        f"no checkpoint plan meets tau={tau:g}s: a jump to interaction {i} needs at "
        f"least {min(fastest[i], restore):g}s (replaying to it {fastest[i]:g}s, "
        f"restoring a checkpoint there {restore:g}s)")


_PLANNERS: dict[str, Callable[[Sequence[InteractionCost], float], Plan]] = {
    "none": plan_none, "all": plan_all, "online": plan_online, "offline": plan_offline,
}


def make_plan(name: str, history: Sequence[InteractionCost], tau: float) -> Plan:
    """Build the plan called ``name``: one of "none", "all", "online", "offline"."""
    planner = _PLANNERS.get(name)
    if planner is None:
        raise ValueError(f"unknown checkpoint plan {name!r}; choose one of "
                         f"{', '.join(PLAN_NAMES)}")
    return planner(history, tau)
