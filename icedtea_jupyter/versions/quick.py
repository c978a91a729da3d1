"""Quick keys of a DataFrame's plan, for ``--reuse`` to search the store before Spark runs.

Spark renders an analyzed plan as JSON in tens of milliseconds (``plans.analyzed``) but
as its tree string in one or two. The tree string, with expression ids renumbered by
first appearance and each leaf's source fingerprint beside it, is the quick key of the
plan; that of the canonical plan (what ``sameSemantics`` compares) is the quick key of
the second check. A quick key only narrows the search: the tree string prints a string
literal like a column and elides long field lists, so an earlier result is used only
when the exact fingerprints, computed for that candidate alone, agree (``tracker.py``).
"""
from __future__ import annotations

import re
from typing import Any

from .fingerprint import digest

_ID = re.compile(r"#(\d+)")
_NODE = re.compile(r"[A-Za-z!]")  # where a tree string line's node starts


def quick_keys(df: Any, leaf_prints: dict[frozenset[int], str]) -> dict[str, Any]:
    """``quick`` and ``canonical_quick``: digests of the plan's and the canonical plan's
    tree strings; ``leaves``: the source fingerprint of each leaf (None: unknown)."""
    analyzed = df._jdf.queryExecution().analyzed()
    text = analyzed.treeString()
    leaves = [leaf_prints.get(ids) for ids in _leaf_ids(text)]
    return {"quick": digest("quick", renumbered(text), *map(str, leaves)),
            "canonical_quick": digest("quick canonical",
                                      renumbered(analyzed.canonicalized().treeString()),
                                      *map(str, leaves)),
            "leaves": leaves}


def renumbered(text: str) -> str:
    ids: dict[str, int] = {}
    return _ID.sub(lambda m: f"#{ids.setdefault(m.group(1), len(ids))}", text)


def _leaf_ids(text: str) -> list[frozenset[int]]:
    """The expression ids on each leaf's line of a tree string (a line whose next line
    is no deeper)."""
    lines = [line for line in text.splitlines() if line.strip()]
    depths = [_depth(line) for line in lines]
    return [frozenset(int(i) for i in _ID.findall(line))
            for n, line in enumerate(lines)
            if n + 1 == len(lines) or depths[n + 1] <= depths[n]]


def _depth(line: str) -> int:
    node = _NODE.search(line)
    return node.start() if node else len(line)
