"""Live breakpoints on a map whose records a generator's feed reads ahead
(executor/map_feed.py): armed while the task runs, they hold on exactly the matching
input of the map, beside a breakpoint on the generator too."""
import time

import pytest

from tests.waiting import wait_until

from .live_wire import Wire
from .test_live_control import running_total_plain as running_total


def slow_increment(x):
    time.sleep(0.0002)
    return x + 1


def totals(records):
    return list(running_total(x + 1 for x in records))


@pytest.fixture
def wire(monkeypatch, tmp_path):
    return Wire(monkeypatch, tmp_path, operators=("op0", "op1"))


def test_a_breakpoint_armed_live_on_the_map_holds_on_its_matching_input(wire):
    data = list(range(4000))
    wire.run_chain([("map", slow_increment), ("mapPartitions", running_total)], data, 0)
    wait_until(lambda: len(wire.outputs[0]) > 100, 10, "the task producing")
    wire.controller.add("op0", when="row >= 3000 and row % 2 == 1")
    hit = wire.controller.wait_hit(10)
    assert (hit.operator, hit.record, hit.input_index) == ("op0", 3001, 3001)
    wire.controller.remove(hit.breakpoint)
    hit.skip()
    wire.join()
    assert not wire.errors
    assert wire.outputs[0] == totals(x for x in data if x != 3001)


def test_breakpoints_armed_live_on_the_generator_then_on_the_map_both_hold(wire):
    data = list(range(5000))
    wire.run_chain([("map", slow_increment), ("mapPartitions", running_total)], data, 0)
    wait_until(lambda: len(wire.outputs[0]) > 100, 10, "the task producing")
    wire.controller.add("op1", when="row == 2500")  # the generator's input: the map's output
    first = wire.controller.wait_hit(10)
    assert (first.operator, first.record, first.input_index) == ("op1", 2500, 2499)
    wire.controller.remove(first.breakpoint)
    wire.controller.add("op0", when="row == 4000")  # its input is now read in step
    first.resume()
    second = wire.controller.wait_hit(10)
    assert (second.operator, second.record, second.input_index) == ("op0", 4000, 4000)
    second.replace(-1)
    wire.join()
    assert not wire.errors
    assert wire.outputs[0] == totals(-1 if x == 4000 else x for x in data)  # -1 + 1
