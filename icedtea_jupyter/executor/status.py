"""A worker's status: one enum, its transitions in one table, applied by one method.

A worker (one operator on one partition) starts RUNNING. Three events move it:

- ``exhausted``: its loop ran to its end — every input processed, every output handed on;
- ``failed``: an exception went through its loop (its own, or one raised upstream in the
  same task: then it fails without blame);
- ``ended``: it reported, with ``worker_end``; it reports once, whatever happened.

=============  ==============  ==============  ==============
status         on exhausted    on failed       on ended
=============  ==============  ==============  ==============
RUNNING        EXHAUSTED       FAILING         STOPPED
EXHAUSTED      —               FAILING         FINISHED
FAILING        —               FAILING         FAILED
FINISHED       —               —               —
STOPPED        —               —               —
FAILED         —               —               —
=============  ==============  ==============  ==============

A dash is no transition: the status stays as it is (a failed worker is never exhausted,
an ended worker stays as it ended — a per-call host ended by a flush that then sees its
call fail was already reported). ``WorkerStatus.after`` applies the table;
``WorkerHost.advance`` is the one place a host's status changes.

On the wire (``worker_end``) the three ended statuses are ``status`` and ``exhausted``:

=========  ==========  ===========
status     ``status``  ``exhausted``
=========  ==========  ===========
FINISHED   ``"ok"``      true
STOPPED    ``"ok"``      false (whoever pulled its outputs stopped first)
FAILED     ``"failed"``  false
=========  ==========  ===========

The coordinator, the run store and the UI read those strings; they do not change.
"""
from __future__ import annotations

import enum

EXHAUSTED_EVENT = "exhausted"
FAILED_EVENT = "failed"
ENDED_EVENT = "ended"


class WorkerStatus(enum.Enum):
    RUNNING = "running"
    EXHAUSTED = "exhausted"  # ran to its end, not yet reported
    FAILING = "failing"  # an exception went through it, not yet reported
    FINISHED = "finished"  # reported: ran to its end
    STOPPED = "stopped"  # reported: stopped before its end, without an error
    FAILED = "failed"  # reported: failed

    def after(self, event: str) -> WorkerStatus | None:
        """The status after ``event`` (the table above), or None: no such transition."""
        return _TRANSITIONS.get((self, event))

    @property
    def ended(self) -> bool:
        """It has reported (``worker_end`` sent)."""
        return self in _ENDED

    @property
    def failed(self) -> bool:
        return self is WorkerStatus.FAILING or self is WorkerStatus.FAILED

    @property
    def exhausted(self) -> bool:
        return self is WorkerStatus.EXHAUSTED or self is WorkerStatus.FINISHED

    @property
    def wire(self) -> str:
        """``worker_end``'s ``status`` string: ``"ok"`` or ``"failed"`` (``"running"``
        before it ends)."""
        if self.failed:
            return "failed"
        return "ok" if self.ended or self.exhausted else "running"


_S = WorkerStatus
_TRANSITIONS: dict[tuple[WorkerStatus, str], WorkerStatus] = {
    (_S.RUNNING, EXHAUSTED_EVENT): _S.EXHAUSTED,
    (_S.RUNNING, FAILED_EVENT): _S.FAILING,
    (_S.RUNNING, ENDED_EVENT): _S.STOPPED,
    (_S.EXHAUSTED, FAILED_EVENT): _S.FAILING,
    (_S.EXHAUSTED, ENDED_EVENT): _S.FINISHED,
    (_S.FAILING, FAILED_EVENT): _S.FAILING,
    (_S.FAILING, ENDED_EVENT): _S.FAILED,
}
_ENDED = frozenset({_S.FINISHED, _S.STOPPED, _S.FAILED})
