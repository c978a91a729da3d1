"""How long replay processes live: one set per debugged run, ended when the run is
replaced by a re-run of its cell or deleted, and when the kernel exits."""
import pytest

from icedtea_jupyter.replay import lifetime
from icedtea_jupyter.replay.remote import RemoteDebugger
from tests.processes import group, replay_processes
from tests.waiting import wait_until

pytestmark = pytest.mark.spark

CODE = ("out = sc.parallelize(range(400), 2).mapPartitions(tally).setName('tally')"
        ".map(lambda x: x + 1).setName('inc').count()")
OPTIONS = {"interesting": "tally", "interact_when": "row % 100 == 50"}


def tally(records):
    seen = 0
    for x in records:
        seen += 1
        yield x


def processes_of(dbg):
    return group(dbg._hub.process.pid)


def settled(dbg, count):
    """Until ``dbg``'s processes number ``count`` (a replaced active one exits by itself)."""
    wait_until(lambda: len(processes_of(dbg)) == count, 20,
               f"{count} replay processes, not {processes_of(dbg)}")


def test_debugging_one_run_again_and_again_keeps_one_set_of_processes(record):
    run = record(CODE, {"tally": tally}, **OPTIONS)
    assert len(run.interactions) == 5
    dbg = run.debugger()
    assert isinstance(dbg, RemoteDebugger)
    dbg.prepare(120)
    dbg.jump(2)
    one_jump = len(processes_of(dbg))
    assert one_jump >= 3  # the root, the fork parked at I0, the jump's active process
    assert set(processes_of(dbg)) <= set(replay_processes())
    for k in (1, 3, 4, 2):
        assert run.debugger() is dbg
        run.debugger().jump(k)
    settled(dbg, one_jump)


def test_a_rerun_of_the_cell_ends_the_replaced_runs_processes(record):
    first = record(CODE, {"tally": tally}, **OPTIONS)
    dbg = first.debugger()
    dbg.jump(1)
    replaced = set(processes_of(dbg))
    assert len(replaced) >= 3 and replaced <= set(replay_processes())
    second = record(CODE, {"tally": tally}, **OPTIONS)  # the same cell, run again
    wait_until(lambda: not replaced & set(replay_processes()), 20,
               "the replaced run's replay processes to end")
    assert dbg.closed and first.current_debugger is dbg
    assert second.debugger().jump(1).index == 1
    again = first.debugger()  # asked for again: started again
    assert again is not dbg and again.jump(1).index == 1
    other = record(CODE.replace("400", "300"), {"tally": tally}, **OPTIONS)  # another cell
    assert not other.debugger().closed and not again.closed


def test_a_deleted_run_and_a_kernel_exit_end_every_replay_process(record):
    run = record(CODE, {"tally": tally}, **OPTIONS)
    dbg = run.debugger()
    dbg.jump(1)
    kept = record(CODE.replace("400", "200"), {"tally": tally}, **OPTIONS).debugger()
    kept.jump(1)
    run.delete()
    wait_until(lambda: not processes_of(dbg), 20, "the deleted run's replay processes to end")
    assert processes_of(kept)
    lifetime.close_all()  # what the kernel's exit runs (atexit)
    wait_until(lambda: not replay_processes(), 20,
               f"every replay process to end, not {replay_processes()}")
    assert kept.closed
