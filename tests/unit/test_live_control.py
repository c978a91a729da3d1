"""Live control (Amber) without Spark: workers in threads, a real coordinator side, every
message checked against the protocol. Pause and resume, conditional and exception
breakpoints with skip/replace/resume/stop, global COUNT and SUM breakpoints."""
import time

import pytest

from icedtea_jupyter.control.controller import BadBreakpoint
from icedtea_jupyter.executor.control import RunStopped, SkippedRecord
from icedtea_jupyter.store import control_files
from tests.waiting import wait_until

from .live_wire import Wire


def slow_square(x):
    time.sleep(0.0002)
    return x * x


def running_total(rows):
    total = 0
    for row in rows:
        total += row
        time.sleep(0.0002)
        yield total


@pytest.fixture
def wire(monkeypatch, tmp_path):
    return Wire(monkeypatch, tmp_path)


def test_pause_holds_every_task_states_read_while_paused_and_resume_finishes_as_plain(wire):
    data = list(range(3000))
    wire.run("mapPartitions", running_total, data, partition=0)
    wire.run("map", slow_square, data, partition=1)
    wait_until(lambda: len(wire.outputs[0]) > 50 and len(wire.outputs[1]) > 50, 10,
               "both tasks producing")
    report = wire.controller.pause(timeout=5)
    assert report.complete and report.acknowledged == 2
    frozen = [len(wire.outputs[0]), len(wire.outputs[1])]
    time.sleep(0.3)
    assert [len(wire.outputs[0]), len(wire.outputs[1])] == frozen  # counts stop moving
    state, processed = wire.controller.live_state(0, 0)
    assert state["total"] == sum(range(processed))  # the generator's state between records
    assert wire.controller.resume() >= 0
    wire.join()
    assert wire.outputs[0] == list(running_total_plain(data))
    assert wire.outputs[1] == [x * x for x in data]
    assert not wire.errors


def running_total_plain(rows):
    total = 0
    for row in rows:
        total += row
        yield total


def test_a_conditional_breakpoint_hits_exactly_the_matching_records(wire, tmp_path):
    wire.controller.add("op0", when="row % 50 == 7")
    data = list(range(200))
    wire.run("map", slow_square, data, partition=0)
    hits = [wire.controller.wait_hit(10)]
    assert wire.controller.paused is not None  # a hit pauses the whole job
    assert (hits[0].record, hits[0].partition, hits[0].kind) == (7, 0, "condition")
    time.sleep(0.2)  # held exactly before record 7: records 0-6 out, not one more
    assert wire.outputs[0] == [x * x for x in range(7)]
    hits[0].skip()
    hits.append(wire.controller.wait_hit(10))
    hits[1].replace(1000)
    hits.append(wire.controller.wait_hit(10))
    hits[2].resume()
    hits.append(wire.controller.wait_hit(10))
    hits[3].resume()
    wire.join()
    assert [h.record for h in hits] == [7, 57, 107, 157]
    taken = [1000 if x == 57 else x for x in data if x != 7]
    assert wire.outputs[0] == [x * x for x in taken]
    assert [q["index"] for q in control_files.read(str(tmp_path), "edits")] == [7, 57]
    edits = control_files.edits_of(str(tmp_path), 0, 0)
    assert control_files.apply_edits(data, edits) == taken  # what replay feeds the operator


def test_a_breakpoint_added_while_a_task_runs_in_blocks_takes_effect(wire):
    data = list(range(4000))
    wire.run("map", slow_square, data, partition=0)
    wait_until(lambda: len(wire.outputs[0]) > 100, 10, "the task producing")
    wire.controller.add("op0", when="row >= 3000 and row % 2 == 1")
    hit = wire.controller.wait_hit(10)
    assert hit.record == 3001
    wire.controller.remove(hit.breakpoint)
    hit.skip()
    wire.join()
    assert wire.outputs[0] == [x * x for x in data if x != 3001]


def test_a_breakpoint_added_live_beside_an_armed_one_is_tested_on_records_read_ahead(wire):
    wire.controller.add("op0", when="row == 3900")  # its records are read ahead in lists
    data = list(range(4000))
    wire.run("map", slow_square, data, partition=0)
    wait_until(lambda: len(wire.outputs[0]) > 100, 10, "the task producing")
    assert wire.controller.pause(timeout=5).complete
    done = len(wire.outputs[0])
    wire.controller.add("op0", when="row >= 0")  # holds for every record read ahead too
    wire.controller.resume()
    first = wire.controller.wait_hit(10)
    assert first.record == first.input_index and first.record - done <= 1
    time.sleep(0.2)
    assert wire.outputs[0] == [x * x for x in range(first.record)]  # held before it exactly
    wire.controller.remove(first.breakpoint)
    first.replace(-1)
    second = wire.controller.wait_hit(10)
    assert (second.record, second.input_index) == (3900, 3900)
    second.skip()
    wire.join()
    assert wire.outputs[0] == [1 if x == first.record else x * x for x in data if x != 3900]


def test_on_error_pause_replaces_or_skips_the_culprit_and_resume_fails_the_task(
        monkeypatch, tmp_path):
    def inverse(x):
        return 100 // (x - 13)

    for action, expected in (("replace", [100 // (x - 13) for x in range(30) if x != 13]),
                             ("skip", None), ("resume", None)):
        wire = Wire(monkeypatch, tmp_path / action, on_error="pause")
        wire.run("map", inverse, range(30), partition=0)
        hit = wire.controller.wait_hit(10)
        assert (hit.kind, hit.record, hit.error["exception"]) == ("error", 13, "ZeroDivisionError")
        if action == "replace":
            hit.replace(113)
            expected = [100 // (x - 13) if x != 13 else 1 for x in range(30)]
        else:
            getattr(hit, action)()
        wire.join()
        if action == "resume":
            assert isinstance(wire.errors[0], ZeroDivisionError)
        elif action == "skip":
            assert wire.outputs[0] == [100 // (x - 13) for x in range(30) if x != 13]
        else:
            assert wire.outputs[0] == expected
    edits = control_files.edits_of(str(tmp_path / "skip"), 0, 0)
    replay = control_files.apply_edits(list(range(30)), edits)
    assert isinstance(replay[13], SkippedRecord) and len(replay) == 30  # taken: counted


def test_recorded_inputs_with_a_raw_culprit_replay_the_replacement_after_earlier_skips(
        monkeypatch, tmp_path):
    def inverse(x):
        return 100 // (x - 13)

    wire = Wire(monkeypatch, tmp_path, on_error="pause")
    wire.controller.add("op0", when="row in (4, 9)")
    wire.run("map", inverse, range(30), partition=0)
    for _ in range(2):
        wire.controller.wait_hit(10).skip()  # never taken: not in the recorded inputs
    hit = wire.controller.wait_hit(10)
    assert (hit.kind, hit.record) == ("error", 13)
    hit.replace(113)
    wire.join()
    recorded = [x for x in range(30) if x not in (4, 9)]  # as taken: the culprit raw
    replayed = control_files.apply_error_edits(recorded,
                                               control_files.edits_of(str(tmp_path), 0, 0))
    assert replayed == [113 if x == 13 else x for x in recorded]
    assert [inverse(x) for x in replayed] == wire.outputs[0]  # what the run gave


def test_stop_ends_held_tasks(wire):
    wire.run("map", slow_square, list(range(5000)), partition=0)
    wait_until(lambda: len(wire.outputs[0]) > 10, 10, "the task producing")
    wire.controller.pause()
    wire.controller.stop()
    wire.join()
    assert isinstance(wire.errors[0], RunStopped)


def test_a_global_count_breakpoint_stops_at_exactly_its_target(wire):
    wire.controller.add("op0", kind="count", target=3000)
    for partition in range(3):
        wire.run("map", slow_square, list(range(2500)), partition)
    hit = wire.controller.wait_hit(20)
    assert hit.kind == "count" and hit.total == 3000
    report = wire.controller.pause()
    assert report.complete
    produced = sum(len(out) for out in wire.outputs.values())
    assert 3000 - 3 <= produced <= 3000  # a task held at a check has taken one not processed
    wire.controller.resume()
    wire.join()
    assert sum(len(out) for out in wire.outputs.values()) == 7500


def test_a_global_sum_breakpoint_stops_within_one_record_per_worker_of_its_target(wire):
    wire.controller.add("op0", kind="sum", sum_of="row", target=1_000_000)
    for partition in range(2):
        wire.run("map", slow_square, list(range(2000)), partition)
    hit = wire.controller.wait_hit(20)
    assert 1_000_000 <= hit.total < 1_000_000 + 2 * 2000
    wire.controller.resume()
    wire.join()
    assert not wire.errors


def test_bad_breakpoints_are_refused_and_change_nothing(wire, tmp_path):
    with pytest.raises(BadBreakpoint, match="no operator 'nope'"):
        wire.controller.add("nope", when="row > 1")
    with pytest.raises(BadBreakpoint, match="not a Python expression"):
        wire.controller.add("op0", when="row >")
    with pytest.raises(BadBreakpoint, match="target above 0"):
        wire.controller.add("op0", kind="count", target=0)
    wire.dag.add("double", "python", "udf", [])
    with pytest.raises(BadBreakpoint, match="'double' is a row @udf column.*--on-error pause"):
        wire.controller.add("double", when="row[0] == 13")
    assert wire.controller.breakpoints == {}
    assert control_files.read(str(tmp_path), "breakpoints") == []


def test_the_magics_live_control_flags_and_their_refusals():
    from IPython.core.error import UsageError

    from icedtea_jupyter.magic import parse_options

    options, _ = parse_options('--break-when "detect: row.amount > 10_000" --break-when '
                               '"enrich: row.currency == \'¥\'" --on-error pause', {})
    assert options.break_when == ["detect: row.amount > 10_000", "enrich: row.currency == '¥'"]
    assert options.on_error == "pause" and parse_options("", {})[0].on_error == "fail"
    with pytest.raises(UsageError, match="write it as"):
        parse_options('--break-when "row.amount > 1"', {})
    with pytest.raises(UsageError, match="is not a Python expression"):
        parse_options('--break-when "detect: row.amount >"', {})
    with pytest.raises(UsageError, match="invalid choice"):
        parse_options("--on-error skip", {})


def test_the_kernels_interrupt_under_wait_stops_the_run(monkeypatch):
    from icedtea_jupyter import magic

    class InterruptedRun:
        stopped, waits = False, 0

        def wait(self, timeout=None):
            self.waits += 1
            if self.waits == 1:
                raise KeyboardInterrupt  # the user interrupts the kernel while it waits
            return self

        def stop(self):
            self.stopped = True

    run = InterruptedRun()
    monkeypatch.setattr(magic, "start_run", lambda cell, ns, options, context=None: run)
    magics = magic.IcedteaMagics(shell=None)
    monkeypatch.setattr(magics, "_namespace", lambda: {})
    with pytest.raises(KeyboardInterrupt):
        magics.icedtea("--wait --no-panel", "sc.parallelize([1]).count()")
    assert run.stopped and run.waits == 2  # stopped, then waited for its end
