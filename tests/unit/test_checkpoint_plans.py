"""Checkpoint plans (paper §6): none, all, online and the offline DP against brute force."""
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icedtea_jupyter.checkpoints.planner import (
    InfeasiblePlan,
    InteractionCost,
    Plan,
    make_plan,
    plan_all,
    plan_none,
    plan_offline,
    plan_online,
)

FAST = settings(max_examples=200, deadline=None)
TAUS = st.floats(0.5, 3.0)


def seconds_between(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def histories(draw, max_restore: float = 0.3) -> list[InteractionCost]:
    """I0..In, n ≤ 10; I0's bytes and restore are random to check they are ignored."""
    n = draw(st.integers(0, 10))
    return [InteractionCost(i, draw(st.integers(0, 1000)),
                            0.0 if i == 0 else draw(seconds_between(0.0, 2.0)),
                            draw(seconds_between(0.0, max_restore)))
            for i in range(n + 1)]


def uniform(replays: list[float], restore: float = 0.0, nbytes: list[int] | None = None):
    """A history whose I_i replays in ``replays[i-1]`` seconds."""
    nbytes = nbytes or [10] * (len(replays) + 1)
    return [InteractionCost(i, nbytes[i], 0.0 if i == 0 else replays[i - 1], restore)
            for i in range(len(replays) + 1)]


def model_jump(history, checkpoints, k: int) -> float:
    """The paper's model, written out again: restore the latest checkpoint, replay to k.

    It adds the seconds in the same order as the module, so float rounding agrees.
    """
    c = max((x for x in checkpoints if x <= k), default=0)
    seconds = 0.0 if c == 0 else history[c].restore_seconds
    for i in range(c + 1, k + 1):
        seconds += history[i].replay_seconds
    return seconds


def meets_tau(history, checkpoints, tau: float) -> bool:
    return all(model_jump(history, checkpoints, k) <= tau for k in range(len(history)))


def brute_force(history, tau: float):
    """The best (bytes, count, checkpoints) over every subset of I1..In, or None."""
    feasible = [(sum(history[i].checkpoint_bytes for i in chosen), r, chosen)
                for r in range(len(history))
                for chosen in combinations(range(1, len(history)), r)
                if meets_tau(history, chosen, tau)]
    return min(feasible, default=None)


@FAST
@pytest.mark.parametrize("max_restore", [0.3, 4.0])  # 4.0 makes some histories infeasible
@given(data=st.data(), tau=TAUS)
def test_offline_plan_is_the_cheapest_feasible_subset(max_restore, data, tau):
    history = data.draw(histories(max_restore))
    expected = brute_force(history, tau)
    if expected is None:
        with pytest.raises(InfeasiblePlan, match=r"interaction \d+ needs at least"):
            plan_offline(history, tau)
        return
    plan = plan_offline(history, tau)
    assert plan.cost(history) == expected[0]
    assert plan.checkpoints == frozenset(expected[2])  # same tie-break: fewer, then earlier
    assert meets_tau(history, plan.checkpoints, tau)
    assert plan.max_jump_seconds(history) <= tau


@FAST
@given(data=st.data(), tau=TAUS)
def test_offline_never_costs_more_than_a_feasible_online_plan(data, tau):
    history = data.draw(histories(max_restore=4.0))
    online = plan_online(history, tau)
    if online.max_jump_seconds(history) <= tau:
        assert plan_offline(history, tau).cost(history) <= online.cost(history)
    else:  # online only misses τ where restoring one of its checkpoints alone exceeds it
        assert any(history[c].restore_seconds > tau for c in online.checkpoints)


@FAST
@given(history=histories(max_restore=0.3), tau=TAUS)  # every restore ≤ 0.3 < τ
def test_online_plan_meets_tau_and_checkpoints_only_when_forced(history, tau):
    plan = plan_online(history, tau)
    assert meets_tau(history, plan.checkpoints, tau)
    assert 0 not in plan.checkpoints
    for k in plan.checkpoints:  # without I_k the jump to it from the one before is > τ
        assert model_jump(history, plan.checkpoints - {k}, k) > tau


def test_online_and_offline_on_a_hand_made_history():
    # I1..I5 each replay in 0.4 s, tau = 1.0 s, restores free.
    # Online: from I0, I1 takes 0.4 s and I2 0.8 s, but I3 would take 1.2 s > 1.0, so it
    # checkpoints I3; from I3, I4 takes 0.4 s and I5 0.8 s: plan {3}, 100 bytes.
    # Offline: I3 needs a checkpoint in {1, 2, 3}; from I1 or I2 the end is still 1.2 s
    # away, so one checkpoint must be I3 (100), while two cheap ones do better:
    # {1, 4} reaches I3 in 0.8 s and I5 in 0.4 s for 10 + 10 = 20 bytes.
    history = uniform([0.4] * 5, nbytes=[0, 10, 50, 100, 10, 10])
    online, offline = plan_online(history, 1.0), plan_offline(history, 1.0)
    assert online.checkpoints == {3} and online.cost(history) == 100
    assert offline.checkpoints == {1, 4} and offline.cost(history) == 20
    assert [online.base(k) for k in range(6)] == [0, 0, 0, 3, 3, 3]
    assert online.jump_seconds(history, 5) == pytest.approx(0.8)
    assert offline.max_jump_seconds(history) == pytest.approx(0.8)


def test_offline_breaks_ties_by_fewer_then_earlier_checkpoints():
    # Same shape as above: {1, 4}, {2, 4} and {2, 5} all cost 20; {1, 4} is earliest.
    history = uniform([0.4] * 5, nbytes=[0, 10, 10, 30, 10, 10])
    assert plan_offline(history, 1.0).checkpoints == {1, 4}
    # Free checkpoints: {3} is the only single one that works, so it beats any pair.
    free = uniform([0.4] * 5, nbytes=[0] * 6)
    assert plan_offline(free, 1.0).checkpoints == {3}


def test_offline_names_the_interaction_no_plan_reaches():
    # I1 replays in 1.5 s and restoring it takes 2.0 s: neither fits tau = 1.0.
    history = [InteractionCost(0, 0, 0.0), InteractionCost(1, 5, 1.5, 2.0),
               InteractionCost(2, 5, 0.1, 0.0)]
    with pytest.raises(InfeasiblePlan, match=r"interaction 1 needs at least 1\.5s"):
        plan_offline(history, 1.0)
    # Online, best effort: it checkpoints I1 all the same; I2 is then 2.0 + 0.1 s from
    # I1, over tau, so it checkpoints I2 too. The jump to I1 still takes 2.0 s > tau.
    online = plan_online(history, 1.0)
    assert online.checkpoints == {1, 2}
    assert online.max_jump_seconds(history) == 2.0 > online.tau


def test_none_and_all_plans():
    history = uniform([0.5, 1.0, 0.25], restore=0.125, nbytes=[999, 1, 2, 3])
    none, every = plan_none(history, 1.0), plan_all(history, 1.0)
    assert none.cost(history) == 0 and none.checkpoints == frozenset()
    assert every.cost(history) == 6 and every.checkpoints == {1, 2, 3}  # I0 never counts
    assert [none.jump_seconds(history, k) for k in range(4)] == [0.0, 0.5, 1.5, 1.75]
    assert [every.jump_seconds(history, k) for k in range(4)] == [0.0, 0.125, 0.125, 0.125]
    assert none.max_jump_seconds(history) == 1.75  # none ignores τ


def test_make_plan_dispatches_by_name():
    history = uniform([0.4] * 5)
    for name in ("none", "all", "online", "offline"):
        plan = make_plan(name, history, 1.0)
        assert isinstance(plan, Plan) and plan.name == name and plan.tau == 1.0
    assert make_plan("online", history, 1.0).checkpoints == {3}
    with pytest.raises(ValueError, match="none, all, online, offline"):
        make_plan("greedy", history, 1.0)


@pytest.mark.parametrize("history, tau, message", [
    ([InteractionCost(0, 0, 0.0), InteractionCost(2, 1, 0.1)], 1.0, r"history\[1\] has index 2"),
    ([InteractionCost(1, 0, 0.0)], 1.0, r"history\[0\] has index 1"),
    ([InteractionCost(0, 0, 0.0), InteractionCost(1, -5, 0.1)], 1.0,
     r"interaction 1: checkpoint_bytes must be finite and non-negative, got -5"),
    ([InteractionCost(0, 0, 0.0), InteractionCost(1, 5, -0.1)], 1.0, "replay_seconds"),
    ([InteractionCost(0, 0, 0.0), InteractionCost(1, 5, 0.1, float("nan"))], 1.0,
     "restore_seconds"),
    (uniform([0.4]), 0.0, "tau must be a positive number of seconds, got 0.0"),
    (uniform([0.4]), -1.0, "tau must be a positive"),
    ([], 1.0, "at least the initial interaction I0"),
])
@pytest.mark.parametrize("name", ["none", "all", "online", "offline"])
def test_bad_input_is_refused_with_a_clear_message(name, history, tau, message):
    with pytest.raises(ValueError, match=message):
        make_plan(name, history, tau)


def test_jump_to_an_interaction_outside_the_history_is_refused():
    history = uniform([0.4] * 2)
    with pytest.raises(ValueError, match="interaction 3 is not in a history of 3"):
        plan_none(history, 1.0).jump_seconds(history, 3)
