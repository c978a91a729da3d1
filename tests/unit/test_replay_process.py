"""The replay process and its forks, through the real protocol, on in-memory logs.

A root replay process (``replay_driver.py``: the real ``process.main`` and ``Root`` over
``MemoryLogs``) parks forks; the kernel's ``ReplayHub`` asks a parked fork for an active
process, jumps and steps in it, gets refusals back as the API's exceptions, cancels a
long jump by ending its process, and ends every process when it closes.
"""
import os
import socket
import sys

import pytest

from icedtea_jupyter.replay.client import ReplayCancelled, ReplayHub
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.replay.views import apply_view
from icedtea_jupyter.replay.wire import FrameReader, WireError, send_frame
from tests.unit.replay_driver import SCENARIOS
from tests.unit.test_replay_engine import reference_outputs
from tests.waiting import wait_until

DRIVER = [sys.executable, os.path.join(os.path.dirname(__file__), "replay_driver.py")]


class Kernel:
    """The kernel's side: a hub, the events it heard, the parked forks by interaction."""

    def __init__(self, scenario, tmp_path):
        self.events, self.forks = [], {}
        self.hub = ReplayHub(self._on_event)
        self.root = self.hub.start(scenario, str(tmp_path / "replay.log"), DRIVER)
        self.info = self.hub.request(self.root, "info").result(30)

    def _on_event(self, link, event):
        self.events.append(event)
        if event.get("event") == "parked":
            self.forks[event["index"]] = event["link"]
        elif event.get("event") == "dropped":
            for index in event["indices"]:
                self.hub.tell(self.forks.pop(index), "exit")

    def active(self, base):
        return self.hub.request(self.forks[base], "spawn").result(30)

    def ask(self, link, op, **params):
        return self.hub.request(link, op, **params).result(30)


@pytest.fixture
def kernel(tmp_path):
    made = []

    def start(scenario):
        made.append(Kernel(scenario, tmp_path))
        return made[-1]
    yield start
    for k in made:
        k.hub.close()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has ended too
        return stat.read().split()[2] != "Z"


def test_a_jump_from_a_parked_fork_equals_a_jump_from_the_start(kernel):
    k = kernel("small")
    assert k.info["chain"] == ["best", "double", "running"]
    assert k.info["interactions"] == 4 and list(k.forks) == [0]  # I0 is parked at once
    plan = k.ask(k.root, "prepare", tau=10.0, memory_cap=1 << 30)
    assert plan["forks"] == [0] and plan["tau_met"]  # nothing to replay is worth a fork
    views = {}
    for target in range(4):
        process = k.active(0)
        views[target] = apply_view(k.ask(process, "jump", index=target), None, True)
        k.hub.tell(process, "exit")
    assert views[2].state("best", 0) == {"best": {1: 9, 2: 7}, "seen": 4}
    assert views[3].state("running", 1) == {"total": 2 * (4 + 3004 + 8 + 3008 + 1), "x": 2}
    assert views[3].count("best", 0) == 5 and views[1].count("double", 1) == 2


def test_forks_are_parked_where_the_plan_puts_them_and_the_rest_are_dropped(kernel):
    k = kernel("slow")
    # I1 is 0.2 s of replay from I0, I2 7.8 s more: a fork at I2 puts every jump under
    # τ = 1 s (τ well above I1's 0.2 s, so a loaded machine does not make I1 a fork too)
    plan = k.ask(k.root, "prepare", tau=1.0, memory_cap=1 << 30)
    assert plan["forks"] == [0, 2] and plan["tau_met"]
    assert plan["predicted_worst_jump"] < 1.0
    assert plan["replay_seconds"] > 7 and plan["memory_bytes"] > 0
    assert sorted(k.forks) == [0, 2]
    process = k.active(2)
    view = apply_view(k.ask(process, "jump", index=2), None, True)
    assert view.count("slow", 0) == 400 and view.state("slow", 0)["count"] == 400
    done = [e for e in k.events if e.get("event") == "progress"][-1]
    assert (done["done"], done["of"]) == (2, 2)


def test_steps_and_refusals_in_the_active_process(kernel):
    k = kernel("small")
    process = k.active(0)
    jumped = apply_view(k.ask(process, "jump", index=1), None, True)
    stepped = apply_view(k.ask(process, "step_over", partition=0), jumped, False)
    assert stepped.count("best", 0) == 3 and stepped.state("best", 0)["best"] == {1: 5, 2: 7}
    assert stepped.count("best", 1) == 1  # the other partition did not move
    assert stepped.outputs == reference_outputs(SCENARIOS["small"][0][0], 2, 3)
    with pytest.raises(StepRefused, match="not in θ's chain"):
        k.ask(process, "step_into", partition=0, operator="nope")
    with pytest.raises(ValueError, match="cannot go forward"):
        k.ask(process, "jump", index=0)  # a jump is a new process: this one only goes on
    with pytest.raises(ValueError, match="unknown request"):
        k.ask(process, "rm -rf")
    assert k.ask(process, "ended", partition=1) is False  # and it still answers


def test_a_steps_partition_and_operator_cross_as_fields(kernel):
    k = kernel("small")
    process = k.active(0)
    jumped = apply_view(k.ask(process, "jump", index=1), None, True)
    assert (jumped.partition, jumped.operator) == (None, None)
    into = apply_view(k.ask(process, "step_into", partition=1, operator="best"), jumped, False)
    assert (into.partition, into.operator) == (1, "best")
    out = apply_view(k.ask(process, "step_out", partition=1), into, False)
    assert (out.partition, out.operator) == (1, None)


def test_a_cancelled_jump_fails_with_replay_cancelled_and_the_forks_stay(kernel, gate):
    k = kernel(f"held:{gate.directory}")  # "slow", but θ waits at the gate at record 200
    process = k.active(0)
    pending = k.hub.request(process, "jump", index=2)  # 400 records of replay
    wait_until(lambda: str(process.pid) in gate.held(), 30,
               "the jump's process to replay up to the gate")
    k.hub.kill(process)
    with pytest.raises(ReplayCancelled, match="cancelled"):
        pending.result(5)
    again = k.active(0)  # the parked fork is untouched
    assert apply_view(k.ask(again, "jump", index=1), None, True).count("slow", 0) == 10


def test_closing_the_hub_ends_every_replay_process(kernel):
    k = kernel("small")
    process = k.active(0)
    pids = [k.root.pid, k.forks[0].pid, process.pid]
    assert all(alive(pid) for pid in pids)
    k.hub.close()
    wait_until(lambda: not any(alive(pid) for pid in pids), 10, "every replay process to end")


def open_files():
    """This process's open files, as (descriptor, what it is)."""
    files = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            files.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return files


def test_a_closed_hub_keeps_no_file_open_in_the_kernel(kernel):
    """A kernel debugging run after run closes older runs' replay processes: their
    sockets, selectors and pipes must go with them, or a long session runs out."""
    ReplayHub(lambda link, event: None).close()  # never started
    before = open_files()
    for _ in range(3):
        k = kernel("small")
        k.ask(k.active(0), "jump", index=2)
        k.hub.close()
        k.hub._thread.join(10)
    left = open_files() - before  # files other threads close meanwhile do not count
    assert not left, left


def test_frames_carry_descriptors_and_refuse_garbage():
    a, b = socket.socketpair()
    extra, other = socket.socketpair()
    send_frame(a, {"n": 1})
    send_frame(a, {"n": 2, "fds": 1}, [extra.fileno()])
    reader = FrameReader(b)
    assert reader.read() == ({"n": 1}, [])
    message, fds = reader.read()
    assert message["n"] == 2 and len(fds) == 1
    passed = socket.socket(fileno=fds[0])
    passed.sendall(b"ping")
    assert other.recv(4) == b"ping"
    a.sendall(b"\x00\x00\x00\x05hello")
    with pytest.raises(WireError, match="not JSON"):
        reader.read()
    a.sendall(b"\xff\xff\xff\xff")
    with pytest.raises(WireError, match="over the limit"):
        reader.read()
    a.close()
    with pytest.raises(WireError):
        FrameReader(b).read()
    for s in (b, extra, other, passed):
        s.close()


def test_a_root_process_that_dies_says_why_from_its_log(tmp_path):
    hub = ReplayHub(lambda link, event: None)
    crash = [sys.executable, "-c",
             "import sys, time; print('cannot open the run: disk full'); sys.exit(3)"]
    root = hub.start("run", str(tmp_path / "replay.log"), crash)
    try:
        with pytest.raises(ReplayCancelled, match="(?s)ended.*cannot open the run: disk full"):
            hub.request(root, "info").result(30)
    finally:
        hub.close()


def test_a_kernel_with_more_than_1024_files_open_still_jumps(kernel):
    """A long notebook session holds many files and sockets: its replay processes get
    socket numbers past 1023, where ``select`` raised and the root died at start."""
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        k = kernel("small")
        process = k.active(0)
        view = apply_view(k.ask(process, "jump", index=2), None, True)
        assert view.state("best", 0) == {"best": {1: 9, 2: 7}, "seen": 4}
    finally:
        for fd in held:
            os.close(fd)


KERNEL_THAT_DIES = """
import sys
sys.path.insert(0, {repo!r})
from icedtea_jupyter.replay.client import ReplayHub
forks = {{}}
hub = ReplayHub(lambda link, event: event.get("event") == "parked"
                and forks.setdefault(event["index"], event["link"]))
root = hub.start({scenario!r}, {log!r}, {driver!r})
hub.request(root, "info").result(30)
active = hub.request(forks[0], "spawn").result(30)
busy = {{"active": active, "root": root}}[{busy!r}]  # held at the gate: deaf to its socket
hub.request(busy, *{{"active": ("jump",), "root": ("prepare",)}}[{busy!r}],
            index=2, tau=1.0, memory_cap=1 << 30)
print(root.pid, forks[0].pid, active.pid, flush=True)
sys.stdin.read()  # until killed
"""


@pytest.mark.parametrize("busy", ["active", "root"])
def test_replay_processes_end_with_their_kernel_even_one_busy_replaying(tmp_path, gate, busy):
    """A kernel killed (no atexit): the root sees it go and ends its group, with the
    process held mid-replay (a jump's active process, or the root in its checkpointing
    pass), which would not read its socket until done."""
    import subprocess

    from tests.processes import group, replay_processes

    script = KERNEL_THAT_DIES.format(
        repo=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        scenario=f"held:{gate.directory}", log=str(tmp_path / "replay.log"), driver=DRIVER,
        busy=busy)
    kernel = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        root, parked, active = map(int, kernel.stdout.readline().split())
        held = {"active": active, "root": root}[busy]
        wait_until(lambda: str(held) in gate.held(), 30, f"the {busy} process to reach the gate")
        assert sorted(replay_processes(kernel.pid)) == sorted([root, parked, active])
        assert group(root) == sorted([root, parked, active])  # one group, the root's
    finally:
        kernel.kill()
        kernel.wait(10)
    wait_until(lambda: not group(root), 10, "the dead kernel's replay processes to end")
