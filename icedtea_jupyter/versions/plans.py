"""A DataFrame's analyzed plan, read from Spark's JSON form of its logical plan.

Spark writes a plan (and each expression in it) as a flat pre-order list of nodes,
each with its ``num-children``. ``tree`` rebuilds the nesting. ``plan_fingerprint``
hashes a plan with its leaves replaced by the fingerprints of what they read, so two
plans over the same data built in different cells or kernels compare equal;
``segment`` turns a chain of filters and projections (and one aggregate on top) into
Drove's representation, which ``equivalence.py`` compares with an SMT solver.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .fingerprint import digest

_ARITHMETIC = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/"}
COMPARISONS = {"EqualTo": "==", "LessThan": "<", "LessThanOrEqual": "<=",
               "GreaterThan": ">", "GreaterThanOrEqual": ">=", "EqualNullSafe": "<=>"}
AGGREGATES = {"Count": "count", "Sum": "sum", "Average": "avg", "Min": "min", "Max": "max"}
_VOLATILE = ("jvmId", "resultId", "session", "rdd", "timeZoneId")


def tree(flat: list[dict]) -> dict:
    """The nested form of a pre-order node list: every node gets ``children``."""
    position = 0

    def take() -> dict:
        nonlocal position
        node = dict(flat[position])
        position += 1
        node["children"] = [take() for _ in range(int(node.get("num-children", 0)))]
        return node

    return take()


def kind(node: dict) -> str:
    return str(node.get("class", "")).rsplit(".", 1)[-1]


def expressions(node: dict, key: str) -> list[dict]:
    """A plan node's expression field: one tree per expression (a list field holds a
    list of flat lists, a single one a flat list)."""
    value = node.get(key)
    if not value:
        return []
    if isinstance(value[0], list):
        return [tree(v) for v in value]
    return [tree(value)]


def expr_id(node: dict) -> int:
    """An expression's id (-1 for one without)."""
    ident = node.get("exprId")
    return int(ident["id"]) if isinstance(ident, dict) else -1


def leaf_ids(plan: dict) -> frozenset[int]:
    """The expression ids of a leaf's output columns."""
    return frozenset(expr_id(a) for a in expressions(plan, "output"))


def leaves(plan: dict) -> list[dict]:
    if not plan["children"]:
        return [plan]
    return [leaf for child in plan["children"] for leaf in leaves(child)]


def analyzed(df: Any) -> dict:
    """The DataFrame's analyzed logical plan as a tree."""
    return tree(json.loads(df._jdf.queryExecution().analyzed().toJSON()))


def deterministic(df: Any) -> bool:
    return bool(df._jdf.queryExecution().analyzed().deterministic())


def _normalised(value: Any, ids: dict[int, int]) -> Any:
    """Expression ids renumbered by first appearance; ids of the JVM and sessions gone."""
    if isinstance(value, dict):
        if value.get("product-class", "").endswith("ExprId"):
            return {"expr": ids.setdefault(int(value["id"]), len(ids))}
        return {k: _normalised(v, ids) for k, v in sorted(value.items()) if k not in _VOLATILE}
    if isinstance(value, list):
        return [_normalised(v, ids) for v in value]
    return value


def plan_fingerprint(plan: dict, leaf_prints: dict[frozenset[int], str]) -> str:
    """The plan with expression ids renumbered and each leaf replaced by the fingerprint
    of what it reads (``leaf_prints`` by the leaf's output ids; a leaf not in it keeps its
    exact ids, which name one relation of this Spark application only)."""
    ids: dict[int, int] = {}

    def walk(node: dict) -> Any:
        if not node["children"]:
            known = leaf_prints.get(leaf_ids(node))
            for attr in expressions(node, "output"):
                ids.setdefault(expr_id(attr), len(ids))
            if known is not None:
                return {"leaf": known, "columns": [(a.get("name"), a.get("dataType"))
                                                   for a in expressions(node, "output")]}
            return {"relation": json.dumps(node, sort_keys=True, default=str)}
        body = {k: v for k, v in node.items() if k != "children"}
        children = [walk(c) for c in node["children"]]
        return {"node": _normalised(body, ids), "children": children}

    return digest("plan", json.dumps(walk(plan), sort_keys=True, default=str))


# --- Drove's representation of a segment ------------------------------------------------
@dataclass
class Segment:
    """Rows of ``leaf`` where every ``predicates`` term holds, projected to ``outputs``
    ((name, type, term)); with ``group`` set, aggregated: ``group`` keys' terms and
    ``outputs`` holding ("agg", function, distinct, term) terms too."""

    leaf: str
    columns: list[tuple[str, str]]
    predicates: list[Any] = field(default_factory=list)
    outputs: list[tuple[str, str, Any]] = field(default_factory=list)
    group: list[Any] | None = None

    def to_json(self) -> dict:
        return {"leaf": self.leaf, "columns": self.columns, "predicates": self.predicates,
                "outputs": self.outputs, "group": self.group}

    @classmethod
    def from_json(cls, data: dict) -> Segment:
        return cls(data["leaf"], [tuple(c) for c in data["columns"]],
                   _tuples(data["predicates"]),
                   [(n, t, _tuples(x)) for n, t, x in data["outputs"]],
                   None if data.get("group") is None else _tuples(data["group"]))


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


class Unsupported(Exception):
    """The plan leaves Drove's representation (its equivalence needs identical plans)."""


def segment(plan: dict, leaf_prints: dict[frozenset[int], str]) -> Segment:
    """Drove's representation of a chain of Filter and Project over one known leaf,
    optionally under one Aggregate; raises Unsupported for anything else."""
    chain = []
    node = plan
    while node["children"]:
        if len(node["children"]) != 1:
            raise Unsupported(f"{kind(node)} has {len(node['children'])} inputs")
        chain.append(node)
        node = node["children"][0]
    leaf = leaf_prints.get(leaf_ids(node))
    if leaf is None:
        raise Unsupported(f"the leaf {kind(node)} reads data of unknown content")
    attrs = expressions(node, "output")
    env: dict[int, Any] = {expr_id(a): ("var", i, a.get("dataType")) for i, a in
                           enumerate(attrs)}
    seg = Segment(leaf, [(str(a.get("name")), str(a.get("dataType"))) for a in attrs])
    seg.outputs = [(str(a.get("name")), str(a.get("dataType")), env[expr_id(a)])
                   for a in attrs]
    for position, step in enumerate(reversed(chain)):
        name = kind(step)
        if name == "Filter":
            seg.predicates.extend(_conjuncts(term(expressions(step, "condition")[0], env)))
        elif name == "Project":
            seg.outputs = [_named(e, env) for e in expressions(step, "projectList")]
            env = {i: t for i, (_, _, t) in zip(_ids(step, "projectList"), seg.outputs)}
        elif name == "Aggregate" and position == len(chain) - 1:
            seg.group = [term(e, env) for e in expressions(step, "groupingExpressions")]
            seg.outputs = [_named(e, env) for e in expressions(step, "aggregateExpressions")]
        else:
            raise Unsupported(f"{name} is outside filters, projections and aggregates")
    return seg


def _ids(step: dict, key: str) -> list[int]:
    return [expr_id(e) for e in expressions(step, key)]


def _named(expr: dict, env: dict[int, Any]) -> tuple[str, str, Any]:
    if kind(expr) == "Alias":
        value = term(expr["children"][0], env)
        return expr.get("name", ""), _type_of(expr["children"][0], value), value
    value = term(expr, env)
    return expr.get("name", ""), _type_of(expr, value), value


def _type_of(expr: dict, value: Any) -> str:
    return str(expr.get("dataType") or (value[2] if value[0] in ("var", "lit") else "?"))


def _conjuncts(value: Any) -> list[Any]:
    if value[0] == "and":
        return _conjuncts(value[1]) + _conjuncts(value[2])
    return [value]


def term(expr: dict, env: dict[int, Any]) -> Any:
    """An expression as a nested tuple over the leaf's columns (``("var", i, type)``)."""
    name = kind(expr)
    kids = expr["children"]
    if name == "AttributeReference":
        ident = expr_id(expr)
        if ident not in env:
            raise Unsupported(f"column {expr.get('name')!r} is not an input of this step")
        return env[ident]
    if name == "Literal":
        return ("lit", _literal(expr.get("value"), expr.get("dataType")), expr.get("dataType"))
    if name == "Cast" and kids and kind(kids[0]) == "Literal":
        lit = term(kids[0], env)
        return ("lit", _literal(None if lit[1] is None else str(lit[1]), expr.get("dataType")),
                expr.get("dataType"))
    if name in COMPARISONS:
        return ("cmp", COMPARISONS[name], term(kids[0], env), term(kids[1], env))
    if name in ("And", "Or"):
        return (name.lower(), term(kids[0], env), term(kids[1], env))
    if name in ("Not", "IsNull", "IsNotNull"):
        return (name.lower(), term(kids[0], env))
    if name == "AggregateExpression":
        function = kids[0]
        fn = AGGREGATES.get(kind(function))
        if fn is None:
            raise Unsupported(f"aggregate {kind(function)}")
        args = tuple(term(k, env) for k in function["children"])
        return ("agg", fn, bool(expr.get("isDistinct")), args)
    if name in _ARITHMETIC or name == "Cast":  # uninterpreted: equal only when identical
        return ("fn", name, str(expr.get("dataType")), tuple(term(k, env) for k in kids))
    raise Unsupported(f"expression {name}")


def _literal(value: Any, data_type: Any) -> Any:
    if value is None:
        return None
    kind_ = str(data_type)
    if kind_ in ("integer", "long", "short", "byte", "date", "timestamp"):
        return int(value)
    if kind_ in ("double", "float") or kind_.startswith("decimal"):
        return str(float(value)) if value not in ("NaN",) else "NaN"
    if kind_ == "boolean":
        return str(value).lower() == "true"
    return str(value)
