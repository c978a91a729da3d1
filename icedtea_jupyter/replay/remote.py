"""``run.debugger()`` on a machine with ``fork()``: the engine runs in a replay process.

The kernel only sends requests and shows answers, so it stays free while a long replay
runs, and a jump or step can be cancelled (``cancel()``, from any thread). Jumps start
from the parked fork nearest at or before the target (``started_from``): every worker
of every shape restored, generators and workers after a shuffle or a union included.
Right after the debugger starts, the replay process prepares its forks in the
background (``prepare()`` waits for that and returns the plan); a jump made before it
ends works, replaying from the forks parked so far, and says so in its notes.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..executor.state import decode
from ..snapshots.debug_snapshot import DebugSnapshot
from ..store import layout
from . import lifetime
from .client import Link, ReplayCancelled, ReplayHub, remote_error
from .cursor import StepRefused
from .views import apply_view, decode_records

if TYPE_CHECKING:
    from .debugger import Debugger

OnMove = Callable[[str, DebugSnapshot], None]
OnProgress = Callable[[dict], None]


def default_memory_cap() -> int:
    """The smaller of 2 GiB and a quarter of the machine's memory."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return min(2 << 30, total // 4)


def fork_available() -> bool:
    """Whether replay can run in a process with fork checkpoints (not on Windows, and
    not when ``ICEDTEA_REPLAY=kernel`` asks for the in-kernel engine)."""
    return hasattr(os, "fork") and os.environ.get("ICEDTEA_REPLAY", "process") != "kernel"


def debugger_for(run: Any, on_move: OnMove | None = None,
                 on_progress: OnProgress | None = None) -> Debugger | RemoteDebugger:
    """The run's debugger: in a replay process with fork checkpoints where ``fork()``
    exists, else the in-kernel engine with a note saying why jumps may be slow. Replay
    processes are kept for the ``lifetime.MAX_LIVE`` runs debugged last; an older run's
    debugger is closed, and starts again when it is next asked for."""
    if run.status == "running":
        raise RuntimeError(f"run {run.id} is still running: debug it once it has ended "
                           "(run.wait()); while it runs, take interactions with run.interact()")
    if not fork_available():
        from .debugger import Debugger

        in_kernel = Debugger.for_run(run, on_move=on_move)
        in_kernel.why_in_kernel = ("this debugger replays in the kernel (no fork() here, or "
                                   "ICEDTEA_REPLAY=kernel): jumps start from pickled "
                                   "checkpoints (--checkpoint) or from I0")
        return in_kernel
    options = run.options or {}
    memory = options.get("replay_memory")
    debugger = RemoteDebugger(run, on_move, tau=options.get("tau") or 1.0,
                              memory_cap=int(memory * 2**20) if memory else None,
                              on_progress=on_progress)
    lifetime.keep(debugger)
    return debugger


class RemoteDebugger:
    """The same API as the in-kernel ``Debugger``: ``jump``, ``jump_to_failure``, ``step_over``, ``step_into``,
    ``step_out``, ``pending``, ``step_options``, ``state``, ``snapshot``; plus
    ``prepare()``, ``progress`` and ``cancel()``."""

    def __init__(self, run: Any, on_move: OnMove | None = None, tau: float = 1.0,
                 memory_cap: int | None = None, on_progress: OnProgress | None = None,
                 prepare_now: bool = True) -> None:
        self.run = run
        self.on_move = on_move
        self.on_progress = on_progress
        self.tau = tau
        self.memory_cap = memory_cap or default_memory_cap()
        self.lock = threading.RLock()
        self.current: DebugSnapshot | None = None
        self.restored_from: dict[int, int | None] = {}
        self.started_from: int | None = None  # the parked fork the last jump started from
        self.plan: dict | None = None
        self.inputs: Any = None
        self.forks: dict[int, Link] = {}  # interaction -> its parked fork
        self._info: dict = {}
        self._active: Link | None = None
        self._busy: Link | None = None  # the process working on the current request
        self._moves = 0  # moves (jumps, steps) under way: a cancel may come before _busy
        self._cancel_asked = False  # cancel() before the move reached a replay process
        self._cancel_lock = threading.Lock()
        self._state: dict[str, Any] = {"state": "starting", "done": 0, "of": 0}
        self._ready = threading.Event()
        self._prepared = threading.Event()
        self._phase_wanted = threading.Event()  # prepare_now, or the first prepare()
        if prepare_now:
            self._phase_wanted.set()
        self._failure: BaseException | None = None  # the replay process could not start
        self._phase_failure: BaseException | None = None  # the pass stopped part way
        self.closed = False
        self._hub = ReplayHub(self._on_event)
        threading.Thread(target=self._start, daemon=True, name="icedtea-replay-start").start()

    # --- starting and preparing ----------------------------------------------------------
    def _start(self) -> None:
        try:
            from .inputs import ReplayInputs
            from .logs import RunLogs

            self.inputs = ReplayInputs(self.run, RunLogs(self.run))
            self.inputs.stage()  # regenerates with Spark what was not recorded
            log_file = layout.with_parent(layout.replay_log_file(self.run.path))
            root = self._hub.start(self.run.path, log_file)
            self._info = self._hub.request(root, "info").result()
            self._ready.set()
            if not self._phase_wanted.is_set():
                self._set_state("waiting")  # for prepare(): only I0 is parked
            self._phase_wanted.wait()
            self._set_state("preparing")
            self.plan = self._hub.request(root, "prepare", tau=self.tau,
                                          memory_cap=self.memory_cap).result()
            self._set_state("ready")
        except BaseException as exc:  # noqa: BLE001 - kept, and raised by the API calls
            if self.closed:
                return
            if not self._ready.is_set():  # no replay process: every call says why
                self._failure = self._failure or exc
            else:  # the pass failed: the forks parked so far still serve jumps
                self._phase_failure = exc
            self._set_state("failed", error=f"{type(exc).__name__}: {exc}")
            self._ready.set()
        finally:
            self._prepared.set()

    def _on_event(self, link: Link, event: dict) -> None:
        kind = event.get("event")
        if kind == "parked":
            self.forks[event["index"]] = event["link"]
        elif kind == "dropped":
            for index in event["indices"]:
                fork = self.forks.pop(index, None)
                if fork is not None:
                    self._hub.tell(fork, "exit")
        elif kind == "progress":
            self._set_state(self._state["state"], done=event["done"], of=event["of"])
        elif kind == "failed":
            self._failure = remote_error(event["error"])
        elif kind == "closed" and link.role == "parked" and link.index is not None:
            if self.forks.get(link.index) is link:
                del self.forks[link.index]

    def _set_state(self, state: str, **more: Any) -> None:
        self._state = dict(self._state, state=state, **more)
        if self.on_progress is not None:
            self.on_progress(self.progress)

    @property
    def progress(self) -> dict:
        """``{"state", "done", "of"}``: the checkpointing pass, interactions replayed of
        all; ``state`` is "starting", "waiting" (for ``prepare()``, with ``prepare_now``
        off), "preparing", "ready" or "failed" (then ``error`` says why)."""
        return dict(self._state)

    def prepare(self, timeout: float | None = None) -> dict:
        """Wait for the replay process to place its fork checkpoints; returns the plan:
        ``forks`` (interactions), ``memory_bytes``, ``predicted_worst_jump``, ``tau_met``."""
        self._phase_wanted.set()
        if not self._prepared.wait(timeout):
            raise TimeoutError(f"time travel is still being prepared ({self._percent()})")
        self._raise_failure()
        if self._phase_failure is not None:
            raise self._phase_failure
        return dict(self.plan or {})

    def _percent(self) -> str:
        state = self._state
        return f"{100 * state['done'] // max(state['of'], 1)}%" if state["of"] else state["state"]

    def _wait_ready(self) -> None:
        while not self._ready.wait(0.05):
            self._raise_if_cancelled()
        self._raise_failure()

    @contextmanager
    def _move(self) -> Iterator[None]:
        """A jump or step, under the lock; ``cancel()`` may stop it at any point."""
        with self.lock:
            with self._cancel_lock:
                self._moves += 1
            try:
                yield
            finally:
                with self._cancel_lock:
                    self._moves -= 1
                    if not self._moves:
                        self._cancel_asked = False

    def _raise_if_cancelled(self) -> None:
        if self._cancel_asked:
            raise ReplayCancelled("the move was cancelled before it reached a replay process")

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    # --- moves ------------------------------------------------------------------------------
    def jump(self, index: int) -> DebugSnapshot:
        """Every worker of θ's tree, on every partition, as it was at interaction ``index``."""
        with self._move():
            self._wait_ready()
            count = self._info["interactions"]
            if not 0 <= index < count:
                raise IndexError(f"no interaction I{index}: this run has I0..I{count - 1}")
            return self._moved(f"dbg.jump({index})", self._jump(index, "jump"))

    def jump_to_failure(self) -> DebugSnapshot:
        """A failed run: θ's chain just before the culprit record (see
        ``Debugger.jump_to_failure``); the next step-over reproduces the exception."""
        with self._move():
            self._wait_ready()
            before = self._info.get("failure")
            if before is None:
                raise StepRefused(self._info.get("no_failure") or "no failure to jump to")
            return self._moved("dbg.jump_to_failure()", self._jump(before, "jump_to_failure"))

    def _jump(self, index: int, op: str) -> DebugSnapshot:
        """``op`` (a jump to interaction ``index``, or to the failure after it) in a new
        active process forked at or before ``index``."""
        base, process = self._spawn(index)
        try:
            message = self._call(process, op, index=index)
        except BaseException:
            self._hub.tell(process, "exit")
            raise
        if self._active is not None:
            self._hub.tell(self._active, "exit")
        self._active, self.started_from = process, base
        theta = self._info["chain"][0]
        self.restored_from = {p: base or None for p in self._info["partitions"][theta]}
        snapshot = apply_view(message, self.current, True)
        snapshot.started_from = base
        if not self._prepared.is_set() and base < index:  # why it may have been slower
            snapshot.preparing = (f"time travel is still being prepared "
                                  f"({self._percent()}): this jump replayed from I{base}")
        return snapshot

    def _spawn(self, index: int) -> tuple[int, Link]:
        """A new active process, forked from the parked fork nearest at or before
        ``index`` (the next one if that fork was just closed: thinned out)."""
        while True:
            base = max(i for i in list(self.forks) if i <= index)
            try:
                return base, self._hub.request(self.forks[base], "spawn").result()
            except ReplayCancelled:
                if base == 0:
                    raise
                self.forks.pop(base, None)

    def jump_to(self, target: Any) -> DebugSnapshot:
        """θ's chain just before θ processes ``target`` (see ``Debugger.jump_to``)."""
        from .jump_to import jump_to_input
        from .logs import RunLogs

        return jump_to_input(self, RunLogs(self.run), target)

    def step_over(self, partition: int) -> DebugSnapshot:
        """θ's next record on ``partition`` and its whole scope (Def. 4.5)."""
        return self._step(f"dbg.step_over(partition={partition})", "step_over",
                          partition=partition)

    def step_into(self, partition: int, operator: str) -> DebugSnapshot:
        """``operator`` processes its next waiting record on ``partition`` (Def. 4.6)."""
        return self._step(f"dbg.step_into(partition={partition}, operator={operator!r})",
                          "step_into", partition=partition, operator=operator)

    def step_out(self, partition: int) -> DebugSnapshot:
        """The rest of the current scope on ``partition``."""
        return self._step(f"dbg.step_out(partition={partition})", "step_out",
                          partition=partition)

    def cancel(self) -> bool:
        """Stop the jump or step in progress (from any thread); True if one was. A
        cancelled jump leaves the debugger where it was; after a cancelled step, jump."""
        with self._cancel_lock:
            busy = self._busy
            if busy is None:
                self._cancel_asked = self._moves > 0  # it has not reached a process yet
                return self._cancel_asked
        self._hub.kill(busy)
        return True

    def _step(self, call: str, op: str, **params: Any) -> DebugSnapshot:
        with self._move():
            process = self._need_active()
            message = self._call(process, op, **params)
            return self._moved(call, apply_view(message, self.current, False))

    def _moved(self, call: str, snapshot: DebugSnapshot) -> DebugSnapshot:
        self.current = snapshot
        if self.on_move is not None:
            self.on_move(call, snapshot)
        return snapshot

    def _call(self, process: Link, op: str, **params: Any) -> Any:
        with self._cancel_lock:
            self._raise_if_cancelled()
            self._busy = process
        try:
            return self._hub.request(process, op, **params).result()
        except ReplayCancelled:
            if process is self._active:
                self._active, self.current = None, None
            raise
        finally:
            self._busy = None

    def _need_active(self) -> Link:
        if self.current is None or self._active is None:
            raise StepRefused("jump to an interaction first: dbg.jump(k)")
        return self._active

    # --- views ------------------------------------------------------------------------------
    def pending(self, partition: int | None = None, limit: int = 20) -> dict:
        """The records waiting at each worker (see ``Debugger.pending``)."""
        with self.lock:
            return decode_records(self._call(self._need_active(), "pending",
                                             partition=partition, limit=limit))

    def step_options(self) -> dict:
        """How many step-overs and step-intos are possible now, and why others are not."""
        with self.lock:
            return decode(self._call(self._need_active(), "step_options"))

    def ended(self, partition: int) -> bool:
        """Whether θ's tree on ``partition`` has ended (see ``Debugger.ended``)."""
        with self.lock:
            return bool(self._call(self._need_active(), "ended", partition=partition))

    def state(self, operator: str, partition: int) -> dict:
        return self.snapshot().state(operator, partition)

    def snapshot(self) -> DebugSnapshot:
        if self.current is None:
            raise StepRefused("jump to an interaction first: dbg.jump(k)")
        return self.current

    def partitions(self, operator: str) -> list[int]:
        """The partitions of ``operator`` the debugger replays."""
        self._wait_ready()
        try:
            return list(self._info["partitions"][operator])
        except KeyError:
            raise KeyError(f"the debugger does not replay {operator!r} (it replays "
                           f"{', '.join(self.chain)})") from None

    @property
    def chain(self) -> list[str]:
        self._wait_ready()
        return list(self._info["chain"])

    def take_checkpoints(self, plan: str = "offline", tau: float = 1.0) -> dict:
        """Pickled checkpoints (``--checkpoint``), which survive a kernel restart."""
        from .debugger import Debugger

        engine = Debugger.for_run(self.run)
        try:
            return engine.take_checkpoints(plan, tau)
        finally:
            engine.close()

    def close(self) -> None:
        """End every replay process of this debugger."""
        self.closed = True
        self._phase_wanted.set()  # the starting thread ends too
        self._hub.close()
        lifetime.forget(self)
        if not self._ready.is_set():  # closed while it started: calls say so, never wait
            self._failure = self._failure or ReplayCancelled("the debugger was closed")
            self._ready.set()

    def __repr__(self) -> str:
        return f"<RemoteDebugger {self.run.id}: {self._state['state']}, forks {sorted(self.forks)}>"
