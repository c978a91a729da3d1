"""``s.mitigate()``: re-run the cell with an aggregation's heavy keys split (Reshape's
split by keys, as a rewrite Spark understands: ``executor/salting.py``).

Safe only where the answer cannot change: an associative and commutative aggregation
(``reduceByKey``, ``aggregateByKey``, ``foldByKey``, ``combineByKey``). Its merging
function is checked on records of the heavy keys sampled with Spark; anything else is
refused with the reason, before any job. The new run's results (the variables the cell
assigns) are compared with this run's.
"""
from __future__ import annotations

import ast
import copy
import itertools
import math
from typing import Any

from .advice import AGGREGATIONS

SAMPLE = 12


class MitigationRefused(ValueError):
    """The rewrite is not safe here (or not possible): nothing ran."""


def mitigate(report: Any, salts: int | None, timeout: float) -> Any:
    source, node = report.source, report.key_node
    if report.api not in AGGREGATIONS:
        raise MitigationRefused(
            f"{report.operator!r} is a {report.api}: s.mitigate() splits the heavy keys of "
            f"an associative aggregation ({', '.join(AGGREGATIONS)}) only; see s.advice")
    if source.rerun is None or source.sample is None:
        raise MitigationRefused("this run was not recorded in this kernel (reopened from "
                                "its store): its pipeline is gone; re-run the cell")
    keys = report.keys_sketch
    if not report.keyed:
        raise MitigationRefused(f"no key counts for {report.operator!r}: record the cell "
                                "with %%icedtea --skew")
    heavy = [keys.values[k] for k in keys.heavy()]
    rebuilt = [k for k in heavy if isinstance(k, dict) or not _hashable(k)]
    if rebuilt:
        raise MitigationRefused(
            f"the heavy key {rebuilt[0]!r} came back from the workers as a description, "
            "not the value itself (only plain values travel: str, numbers, tuples...): "
            "salt it by hand with the code of s.advice")
    salts = salts or max(len(report.loads()), 2)
    if salts < 2:
        raise MitigationRefused(f"salts must be at least 2, not {salts}")
    check_associative(source.functions[node.id], source.sample(node.id, heavy))
    new = source.rerun({node.id: (heavy, salts)})
    new.wait(timeout)
    if new.status != "finished":
        raise RuntimeError(f"the mitigated run {new.id} {new.status}: {new.error}")
    same_result, compared = compare_results(source.cell, source.namespace or {},
                                            getattr(new, "namespace", None) or {})
    new.mitigation = {"of": source.run_id, "operator": report.operator, "keys": heavy,
                      "salts": salts, "wall": (source.wall, new.duration),
                      "same_result": same_result, "compared": compared}
    return new


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def check_associative(functions: tuple, records: list) -> None:
    """Refuse unless merging combiners of the sampled records is associative and
    commutative (``(a·b)·c == a·(b·c)`` and ``a·b == b·a`` on every triple tried)."""
    create, _, merge = functions
    combiners = [create(copy.deepcopy(value)) for _, value in records]
    if len(combiners) < 2:
        return
    for a, b, c in itertools.islice(itertools.permutations(combiners, 3), 60):
        left = merge(merge(copy.deepcopy(a), copy.deepcopy(b)), copy.deepcopy(c))
        right = merge(copy.deepcopy(a), merge(copy.deepcopy(b), copy.deepcopy(c)))
        swapped = merge(copy.deepcopy(b), copy.deepcopy(a))
        if not same(left, right) or not same(merge(copy.deepcopy(a), copy.deepcopy(b)),
                                              swapped):
            raise MitigationRefused(
                f"the aggregation is not associative and commutative on the heavy keys' "
                f"values (a={a!r}, b={b!r}, c={c!r}: (a·b)·c={left!r}, a·(b·c)={right!r}); "
                "splitting a key would change its result, so nothing ran")


def same(a: Any, b: Any) -> bool:
    """Equal, floats within a relative 1e-9 (a salted sum adds in another order), lists
    and tuples item by item, and lists of results in any order (``collect()``)."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        except TypeError:
            return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        if isinstance(a, list) and isinstance(b, list):
            return all(same(x, y) for x, y in zip(_sorted(a), _sorted(b)))
        return all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:
        return False


def _sorted(items: list) -> list:
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def assigned_names(cell: str) -> list[str]:
    """The names the cell assigns at its top level (its results)."""
    names: list[str] = []
    for stmt in ast.parse(cell).body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name) and node.id not in names:
                    names.append(node.id)
    return names


def compare_results(cell: str, before: dict, after: dict) -> tuple[bool, list[str]]:
    """Whether every plain value (not an RDD or DataFrame) the cell assigned is the same
    in both namespaces; the names compared."""
    compared = []
    for name in assigned_names(cell):
        if name not in before or name not in after:
            continue
        value = before[name]
        if type(value).__module__.startswith("pyspark"):
            continue
        compared.append(name)
        if not same(value, after[name]):
            return False, compared
    return True, compared
