"""θ's inputs regenerated for replay, kept for the replay process (``replay/inputs/``).

Without ``--record-inputs`` the kernel regenerates θ's inputs on a partition with Spark
when a run is first debugged, checks them against the run's logs and writes them here,
for the replay process (which has no Spark) and for debugging after a kernel restart.
Pickled with cloudpickle, like the operator images: the user's own records; load them
only from run stores you trust.
"""
from __future__ import annotations

from typing import Any

from . import layout


def write_staged_inputs(store_path: str, partition: int, records: list,
                        side: int | None = None) -> None:
    """Keep ``records``: θ's inputs on ``partition``, or a join's map side (``side``)."""
    from pyspark import cloudpickle

    with layout.whole_file(layout.staged_inputs_path(store_path, partition, side)) as tmp, \
            open(tmp, "wb") as out:
        cloudpickle.dump(records, out)


def read_staged_inputs(store_path: str, partition: int, side: int | None = None) -> list[Any]:
    """The staged records; ``LookupError`` when none were staged for ``partition``."""
    import pickle

    from pyspark import cloudpickle  # noqa: F401 - registers what the records need

    try:
        with open(layout.staged_inputs_path(store_path, partition, side), "rb") as f:
            return pickle.load(f)
    except FileNotFoundError:
        raise LookupError(f"no staged inputs for partition {partition}") from None


def write_staged_links(store_path: str, operator: int, links: dict[int, list[int]] | None,
                       why: str = "") -> None:
    """Keep the rows each of θ's batches gives ``operator`` (by partition), or ``why``
    they cannot be known (``links`` None)."""
    import json

    payload = {"why": why} if links is None else \
        {"links": {str(p): rows for p, rows in links.items()}}
    with layout.whole_file(layout.staged_links_path(store_path, operator)) as tmp, \
            open(tmp, "w") as out:
        json.dump(payload, out)


def read_staged_links(store_path: str, operator: int) -> dict[int, list[int]] | str:
    """The staged links, or why there are none; ``LookupError`` when nothing was staged."""
    import json

    try:
        with open(layout.staged_links_path(store_path, operator)) as f:
            payload = json.load(f)
    except FileNotFoundError:
        raise LookupError(f"no staged links for operator {operator}") from None
    if "links" not in payload:
        return str(payload.get("why", ""))
    return {int(p): [int(r) for r in rows] for p, rows in payload["links"].items()}
