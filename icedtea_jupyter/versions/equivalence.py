"""Drove's equivalence check of two segments, with an SMT solver (z3).

Both segments read the same leaf (same fingerprint, same columns). A row is kept when
its predicates are TRUE under SQL's three-valued logic: every term is encoded as a
value and a null flag, every condition as a pair (is TRUE, is FALSE), doubles with a
NaN flag ordered above every number as Spark orders it. The segments are equivalent
when, for every possible row, both keep it or both drop it, and every output column
(group key, aggregate argument) has the same value on the rows they keep. Arithmetic
and casts of columns are uninterpreted functions: equal only when built alike, so a
proof never leans on what overflow or rounding would do.
"""
from __future__ import annotations

from typing import Any

import z3

from .plans import Segment

_INTEGRAL = ("integer", "long", "short", "byte", "date", "timestamp")
_REAL = ("double", "float")


def equivalent(a: Segment, b: Segment, timeout_ms: int = 2000) -> bool:
    """Whether ``a`` and ``b`` give the same result on every input (proven; False when
    the solver finds a difference or cannot decide in time)."""
    if a.leaf != b.leaf or list(a.columns) != list(b.columns):
        return False
    if [(n, t) for n, t, _ in a.outputs] != [(n, t) for n, t, _ in b.outputs]:
        return False
    if (a.group is None) != (b.group is None) or \
            (a.group is not None and len(a.group) != len(b.group or [])):
        return False
    try:
        enc = _Encoder(a.columns)
        keep_a = z3.And(*[enc.truth(p)[0] for p in a.predicates])
        keep_b = z3.And(*[enc.truth(p)[0] for p in b.predicates])
        goals = [keep_a == keep_b]
        pairs = [(x, y) for (_, _, x), (_, _, y) in zip(a.outputs, b.outputs)]
        pairs += list(zip(a.group or [], b.group or []))
        for x, y in pairs:
            goals.append(z3.Implies(keep_a, enc.same(x, y)))
    except _Refused:
        return False
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(z3.Not(z3.And(*goals)))
    return solver.check() == z3.unsat


class _Refused(Exception):
    """Two terms that cannot be compared (different shapes of aggregate, say)."""


class _Value:
    def __init__(self, value: Any, null: Any, nan: Any = None) -> None:
        self.value, self.null, self.nan = value, null, nan


class _Encoder:
    def __init__(self, columns: list[tuple[str, str]]) -> None:
        self.columns = columns
        self._symbols: dict[str, Any] = {}

    def symbol(self, key: str, sort: Any) -> Any:
        if key not in self._symbols:
            self._symbols[key] = z3.Const(key, sort)
        return self._symbols[key]

    # --- values ----------------------------------------------------------------------
    def value(self, t: Any) -> _Value:
        tag = t[0]
        if tag == "var":
            i, kind = t[1], str(t[2])
            null = self.symbol(f"null{i}", z3.BoolSort())
            if kind in _INTEGRAL:
                return _Value(self.symbol(f"v{i}", z3.IntSort()), null)
            if kind in _REAL or kind.startswith("decimal"):
                nan = self.symbol(f"nan{i}", z3.BoolSort()) if kind in _REAL else z3.BoolVal(False)
                return _Value(self.symbol(f"v{i}", z3.RealSort()), null, nan)
            if kind == "string":
                return _Value(self.symbol(f"v{i}", z3.StringSort()), null)
            if kind == "boolean":
                return _Value(self.symbol(f"v{i}", z3.BoolSort()), null)
            return _Value(self.symbol(f"v{i}:{kind}", z3.IntSort()), null)  # opaque order
        if tag == "lit":
            return self.literal(t[1], str(t[2]))
        if tag in ("fn", "agg"):  # uninterpreted: one symbol per distinct term
            key = repr(t)
            return _Value(self.symbol(f"term{key}", z3.IntSort()),
                          self.symbol(f"termnull{key}", z3.BoolSort()))
        truth, falsity = self.truth(t)
        return _Value(truth, z3.And(z3.Not(truth), z3.Not(falsity)))

    def literal(self, v: Any, kind: str) -> _Value:
        null = z3.BoolVal(v is None)
        if v is None:
            return _Value(z3.IntVal(0), null)
        if kind in _INTEGRAL:
            return _Value(z3.IntVal(int(v)), null)
        if kind in _REAL or kind.startswith("decimal"):
            if v == "NaN":
                return _Value(z3.RealVal(0), null, z3.BoolVal(True))
            return _Value(z3.RealVal(str(v)), null, z3.BoolVal(False))
        if kind == "string":
            return _Value(z3.StringVal(str(v)), null)
        if kind == "boolean":
            return _Value(z3.BoolVal(bool(v)), null)
        raise _Refused(kind)

    def same(self, x: Any, y: Any) -> Any:
        """Both null, or both not null and equal (NaN equal to NaN, as Spark has it)."""
        if x[0] == "agg" or y[0] == "agg":
            if x[0] != y[0] or x[1:3] != y[1:3] or len(x[3]) != len(y[3]):
                raise _Refused("different aggregates")
            return z3.And(*[self.same(p, q) for p, q in zip(x[3], y[3])])
        a, b = self.value(x), self.value(y)
        if a.value.sort() != b.value.sort():
            raise _Refused("different types")
        equal = a.value == b.value
        if a.nan is not None and b.nan is not None:
            equal = z3.Or(z3.And(a.nan, b.nan), z3.And(z3.Not(a.nan), z3.Not(b.nan), equal))
        return z3.Or(z3.And(a.null, b.null), z3.And(z3.Not(a.null), z3.Not(b.null), equal))

    # --- conditions: (is TRUE, is FALSE) -----------------------------------------------------
    def truth(self, t: Any) -> tuple[Any, Any]:
        tag = t[0]
        if tag == "and":
            (ta, fa), (tb, fb) = self.truth(t[1]), self.truth(t[2])
            return z3.And(ta, tb), z3.Or(fa, fb)
        if tag == "or":
            (ta, fa), (tb, fb) = self.truth(t[1]), self.truth(t[2])
            return z3.Or(ta, tb), z3.And(fa, fb)
        if tag == "not":
            ta, fa = self.truth(t[1])
            return fa, ta
        if tag in ("isnull", "isnotnull"):
            null = self.value(t[1]).null
            return (null, z3.Not(null)) if tag == "isnull" else (z3.Not(null), null)
        if tag == "cmp":
            return self.compare(t[1], self.value(t[2]), self.value(t[3]))
        v = self.value(t)
        if v.value.sort() != z3.BoolSort():
            raise _Refused("not a condition")
        return z3.And(z3.Not(v.null), v.value), z3.And(z3.Not(v.null), z3.Not(v.value))

    def compare(self, op: str, a: _Value, b: _Value) -> tuple[Any, Any]:
        if a.value.sort() != b.value.sort():
            raise _Refused("comparison of different types")
        if op == "<=>":  # null-safe equality is never null
            same = z3.Or(z3.And(a.null, b.null),
                         z3.And(z3.Not(a.null), z3.Not(b.null), self._order("==", a, b)))
            return same, z3.Not(same)
        holds = self._order(op, a, b)
        known = z3.And(z3.Not(a.null), z3.Not(b.null))
        return z3.And(known, holds), z3.And(known, z3.Not(holds))

    def _order(self, op: str, a: _Value, b: _Value) -> Any:
        x, y = a.value, b.value
        if op == "==":
            base = x == y
        elif x.sort() == z3.StringSort():
            base = {"<": z3.StrLT(x, y), "<=": z3.StrLE(x, y), ">": z3.StrLT(y, x),
                    ">=": z3.StrLE(y, x)}[op]
        elif x.sort() == z3.BoolSort():
            raise _Refused("ordering of booleans")
        else:
            base = {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]
        if a.nan is None or b.nan is None:
            return base
        both, neither = z3.And(a.nan, b.nan), z3.And(z3.Not(a.nan), z3.Not(b.nan))
        nan_result = {"==": both, "<": z3.And(z3.Not(a.nan), b.nan),
                      "<=": z3.Or(both, z3.And(z3.Not(a.nan), b.nan)),
                      ">": z3.And(a.nan, z3.Not(b.nan)),
                      ">=": z3.Or(both, z3.And(a.nan, z3.Not(b.nan)))}[op]
        return z3.Or(z3.And(neither, base), nan_result)
