"""Which of the kernel's earlier cells an exported notebook runs before the ``%%icedtea``
cell: only those the debugged run needs, in order.

Going back from the run's cell, a cell is needed when it defines (assigns, imports,
defines a function or class) a name a needed cell reads before defining it, changes
such a name in place (``x[k] = v``, ``x.a = v``, ``x.append(v)``, ``x += v``), or names
a file path a needed cell names (it may write what the pipeline reads). Never kept,
each with why: a cell that raised when it ran, one whose ``%%icedtea`` run failed or
never ended (it paused at a breakpoint, or was stopped), and cells that debugged or
traced runs. An earlier ``%%icedtea`` cell that is kept runs as plain PySpark (its
body without the magic): only the names it defines are needed, and recording it again
could pause at its breakpoints.
"""
from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass, field
from typing import Any

DEBUGGING = re.compile(r"\.debugger\(|\bdbg\.|export_notebook\(|\.snapshot\(|"
                       r"\.trace_(back|forward)\(")
PATH = re.compile(r"""["']((?:/|\./|~/)[^"'\n]+|[\w./-]+\.(?:csv|parquet|json|txt|orc))["']""")
_SESSION_NAMES = {"spark", "sc"}  # made by the export's own session cell when no cell is kept


@dataclass
class Earlier:
    """One cell the kernel ran before the run's: its text and what became of it."""

    source: str
    error: str | None = None  # the exception's name when the cell raised
    run: str | None = None  # the id of the run a ``%%icedtea`` cell started

    @classmethod
    def of(cls, source: str, outcome: dict | None) -> Earlier:
        outcome = outcome or {}
        return cls(source, outcome.get("error"), outcome.get("run"))


@dataclass
class Chosen:
    """The cells kept (in order, as they run in the export), and those left out with
    why (``reasons``: a line per reason, naming the cells by their position)."""

    kept: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def choose(history: list[Earlier], cell: str, status: Any) -> Chosen:
    """The cells of ``history`` that ``cell`` needs (see the module); ``status(run_id)``:
    the status of an earlier ``%%icedtea`` cell's run (None: unknown)."""
    needed = free_names(cell)
    paths = set(PATH.findall(cell))
    kept: list[tuple[int, str]] = []
    left: dict[str, list[int]] = {}
    for number in range(len(history), 0, -1):
        earlier = history[number - 1]
        body = plain(earlier.source)
        defines, changes = defined_names(body), changed_names(body)
        if not (needed & (defines | changes) or paths & set(PATH.findall(body))):
            continue  # nothing the run needs: left out without a word
        why = _refused(earlier, status)
        if why is not None:
            left.setdefault(why, []).append(number)
            continue
        kept.append((number, body))
        needed = (needed - (defines - changes)) | free_names(body)
        paths |= set(PATH.findall(body))
    chosen = Chosen([body for _, body in sorted(kept)])
    for why, numbers in sorted(left.items(), key=lambda item: min(item[1])):
        cells = ", ".join(f"#{n}" for n in sorted(numbers))
        chosen.reasons.append(f"earlier cell(s) {cells} of the kernel's history, though "
                              f"the run uses what they define: {why}")
    return chosen


def _refused(earlier: Earlier, status: Any) -> str | None:
    """Why a needed cell cannot be re-run, or None."""
    if DEBUGGING.search(earlier.source) or earlier.source.lstrip().startswith("%icedtea "):
        return "it debugged or traced a run"
    if earlier.error:
        return f"it raised {earlier.error} when it ran"
    if earlier.run is not None:
        state = status(earlier.run)
        if state == "failed":
            return "its %%icedtea run failed"
        if state == "running":
            return ("its %%icedtea run has not ended (it waits at a breakpoint, or is "
                    "paused): run again, it would wait forever")
        if state not in ("finished", None):
            return (f"its %%icedtea run was {state} before it ended (at a breakpoint, or "
                    "interrupted): run again, it would not end by itself")
    return None


def plain(source: str) -> str:
    """An earlier ``%%icedtea`` cell's body (recorded again, it could wait forever at a
    breakpoint); any other cell as it is."""
    first, _, rest = source.partition("\n")
    return rest if first.startswith("%%icedtea") else source


def python(source: str) -> str:
    """``source`` without IPython's magic and shell lines (kept blank: lines keep their
    numbers)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(python(source))
    except SyntaxError:
        return None


def free_names(source: str) -> set[str]:
    """The names ``source`` reads that it does not define first: at its top level in
    statement order, and in its functions and lambdas the globals it never assigns."""
    tree = parsed(source)
    if tree is None:
        return set()
    top = defined_names(source)
    free = {name for name in _nested_globals(source) if name not in top}
    defined: set[str] = set()
    for statement in tree.body:
        free |= _top_level_loads(statement) - defined
        defined |= _stored(statement)
    return free - set(dir(builtins)) - {"__name__", "__file__"}


def _nested_globals(source: str) -> set[str]:
    try:
        table = symtable.symtable(python(source), "<cell>", "exec")
    except SyntaxError:
        return set()
    found: set[str] = set()
    pending = list(table.get_children())
    while pending:
        scope = pending.pop()
        found |= {s.get_name() for s in scope.get_symbols()
                  if s.is_referenced() and (s.is_global() or s.is_free())
                  and not s.is_assigned()}
        pending.extend(scope.get_children())
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _top_level_loads(node: ast.AST) -> set[str]:
    """Names read by ``node`` outside its nested scopes (their globals: _nested_globals)."""
    found: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            found.add(current.id)
        if isinstance(current, _SCOPES) and current is not node:
            # decorators, defaults, bases and a comprehension's first iterable run here
            pending.extend(getattr(current, "decorator_list", []))
            pending.extend(getattr(current, "bases", []))
            arguments = getattr(current, "args", None)
            if isinstance(arguments, ast.arguments):
                pending.extend(arguments.defaults + [d for d in arguments.kw_defaults if d])
            generators = getattr(current, "generators", None)
            if generators:
                pending.append(generators[0].iter)
            continue
        if isinstance(current, _SCOPES):
            continue  # a top-level def's body: its reads are _nested_globals'
        pending.extend(ast.iter_child_nodes(current))
    return found


def _stored(node: ast.AST) -> set[str]:
    """Names ``node`` (a top-level statement) binds in the cell's namespace."""
    names: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    pending: list[ast.AST] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Store):
            names.add(current.id)
        elif isinstance(current, (ast.Import, ast.ImportFrom)):
            names |= _stored(current)
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(current.name)
        if not isinstance(current, _SCOPES):
            pending.extend(ast.iter_child_nodes(current))
    return names


def defined_names(source: str) -> set[str]:
    """Every name ``source`` binds at its top level."""
    tree = parsed(source)
    return set().union(*(_stored(s) for s in tree.body)) if tree is not None else set()


def changed_names(source: str) -> set[str]:
    """Names whose object ``source`` changes in place at its top level: ``x[k] = v``,
    ``x.a = v``, ``x += v``, or a method call on ``x`` as a statement."""
    tree = parsed(source)
    names: set[str] = set()
    for statement in tree.body if tree is not None else []:
        targets: list[ast.AST] = []
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = list(statement.targets) if isinstance(statement, ast.Assign) \
                else [statement.target]
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            targets = [statement.value.func]
        for target in targets:
            if isinstance(statement, ast.AugAssign) and isinstance(target, ast.Name):
                names.add(target.id)
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return names


def undefined(kept: list[str], cell: str) -> set[str]:
    """Names ``cell`` reads that neither it nor a kept cell defines (the export makes
    ``spark`` and ``sc`` itself)."""
    defined = set(_SESSION_NAMES) | {"icedtea_jupyter"}
    for source in kept:
        defined |= defined_names(source)
    return free_names(cell) - defined
