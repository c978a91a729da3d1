"""``--interact-at``: interactions pinned to θ's per-partition counts.

An interaction is a point: for each partition it names, how many of θ's input records
that partition has processed when θ's chain is snapshotted (``end``: when the partition
ends). Interaction k of the run is the k-th point, whatever the timing, so a run
recorded with the points of an earlier run (``run.interaction_points()``, what an
exported notebook passes) snapshots every named partition at the same records: jump k
shows the same states. θ's partitions a point does not name report where they are once
the named ones have (as at a manual interaction).

Written ``"0:1000 1:end, 0:2000"``: points separated by commas, each a list of
``PARTITION:COUNT`` separated by spaces; or the path of a JSON file holding a list of
``{"PARTITION": COUNT or "end"}`` objects (or ``{"interactions": [...]}``).
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence

Point = dict[int, int | None]  # partition -> records processed (None: at its end)
END = "end"


class BadInteractAt(ValueError):
    """``--interact-at`` could not be read: the message says where and why."""


def parse_interact_at(text: str) -> tuple[Point, ...]:
    """The points of ``--interact-at`` (inline, or a JSON file's path)."""
    text = text.strip()
    if not text:
        raise BadInteractAt("--interact-at is empty: give points such as \"0:1000 1:500, "
                            "0:2000\" or the path of a JSON file")
    if text.endswith(".json") or os.path.isfile(text):
        return _from_file(text)
    return tuple(_point(part, n) for n, part in enumerate(text.split(","), 1))


def format_interact_at(points: Sequence[Point]) -> str:
    """The inline form of ``points`` (``parse_interact_at`` reads it back)."""
    return ", ".join(" ".join(f"{p}:{END if c is None else c}" for p, c in sorted(point.items()))
                     for point in points)


def points_json(points: Sequence[Point]) -> list[dict[str, int | str]]:
    """``points`` as the JSON file form."""
    return [{str(p): END if c is None else c for p, c in sorted(point.items())}
            for point in points]


def _from_file(path: str) -> tuple[Point, ...]:
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise BadInteractAt(f"--interact-at: no file {path!r}") from None
    except (OSError, ValueError) as exc:
        raise BadInteractAt(f"--interact-at: cannot read {path!r}: {exc}") from None
    if isinstance(data, dict):
        data = data.get("interactions")
    if not isinstance(data, list):
        raise BadInteractAt(f"--interact-at: {path!r} holds no list of interactions (a "
                            "list of {\"PARTITION\": COUNT} objects, or {\"interactions\": "
                            "[...]})")
    points = []
    for n, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise BadInteractAt(f"--interact-at: interaction {n} in {path!r} is not an "
                                f"object of partition: count ({item!r})")
        points.append(_point(" ".join(f"{p}:{c}" for p, c in item.items()), n))
    return tuple(points)


def _point(text: str, n: int) -> Point:
    words = text.split()
    if not words:
        raise BadInteractAt(f"--interact-at: interaction {n} is empty (two commas in a row?)")
    point: Point = {}
    for word in words:
        partition, colon, count = word.partition(":")
        if not colon:
            raise BadInteractAt(f"--interact-at: {word!r} in interaction {n} is not "
                                "PARTITION:COUNT (e.g. 0:1000, or 0:end)")
        p = _whole(partition, f"the partition in {word!r} (interaction {n})")
        if p in point:
            raise BadInteractAt(f"--interact-at: interaction {n} names partition {p} twice; "
                                "separate interactions with commas")
        point[p] = None if count.strip().lower() == END else \
            _whole(count, f"the count in {word!r} (interaction {n})")
    return point


def _whole(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise BadInteractAt(f"--interact-at: {what} is not a whole number") from None
    if value < 0:
        raise BadInteractAt(f"--interact-at: {what} is negative")
    return value
