"""``--interesting``: whether the cell's code may still create the named operator, and
the refusal when it names none, with a "did you mean" for a close name."""
from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable

_PHASE = re.compile(r" \((combine|merge)\)$")


def named_in_code(wanted: str, cell: str) -> bool:
    """Whether ``wanted`` (or, for "count (combine)", "count") is a word of the cell's
    code: a later job of the cell may create it. An aggregation ships its map side
    (partitionBy) before the cell's ``.setName("count")``."""
    named = _PHASE.sub("", wanted)
    return re.search(rf"(?<!\w){re.escape(named)}(?!\w)", cell) is not None


def code_names(cell: str) -> list[str]:
    """The strings and identifiers of the cell's code (what a name may be meant as)."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:  # the cell's own error comes when it runs
        return re.findall(r"\w+", cell)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
    return list(dict.fromkeys(found))


def refusal(wanted: str, operators: Iterable[str], cell: str) -> str:
    """The message of an ``--interesting`` that names no Python operator of the cell."""
    names = list(dict.fromkeys(operators))
    close = difflib.get_close_matches(wanted, names, n=1) or \
        difflib.get_close_matches(wanted, [n for n in code_names(cell) if n not in names], n=1)
    hint = f"Did you mean {close[0]!r}? " if close else ""
    return (f"--interesting {wanted!r} names no Python operator of this cell (its Python "
            f"operators: {', '.join(names) or 'none'}); nothing ran. {hint}Name one of them, "
            f"or give yours that name with .setName({wanted!r})")
