"""When a run writes checkpoints: ``--checkpoint none|all|online|offline``.

With ``all`` and ``online`` θ's workers write them during the run, for their whole
chain, at the interactions the coordinator marks (``CheckpointPolicy``), and each
worker once more when its partition ends (``executor/timetravel.py``). With
``offline`` the checkpointing phase (``phase.py``) writes them after the run.
"""
from __future__ import annotations

from .file import CheckpointStore

DURING_RUN = ("all", "online")  # the plans θ's workers take during the run


class CheckpointPolicy:
    """When θ's workers checkpoint during a run: at every interaction (``all``), or when a
    jump from the latest checkpoint would take longer than τ (``online``, IcedTea §6.2).
    The online estimate is the work since that checkpoint: seconds elapsed times θ's
    running workers, as the kernel replays partitions one after another about as fast
    as Spark's workers ran them."""

    def __init__(self, plan: str, tau: float, started: float) -> None:
        self.plan, self.tau = plan, tau
        self.last = started

    @classmethod
    def during_run(cls, plan: str, tau: float, started: float) -> CheckpointPolicy | None:
        """The policy of ``plan`` if its checkpoints are taken during the run, else None."""
        return cls(plan, tau, started) if plan in DURING_RUN else None

    def __call__(self, running: int, now: float) -> bool:
        if self.plan == "all" or (now - self.last) * running > self.tau:
            self.last = now
            return True
        return False


def summarise_run(store_path: str, plan: str, tau: float, interactions: list[dict]) -> dict:
    """After a run whose workers checkpointed: the interactions marked and those written,
    kept as the store's plan; returns it (for the manifest)."""
    store = CheckpointStore(store_path)
    written = {k for found in store.available().values() for k in found}
    marked = [i["index"] for i in interactions if i.get("checkpoint")]
    # a marked interaction whose workers all ended before their next check has none
    summary = {"plan": plan, "tau": tau, "taken": "during the run", "marked": marked,
               "checkpoints": [k for k in marked if k in written]}
    store.save_plan(summary)
    return summary
