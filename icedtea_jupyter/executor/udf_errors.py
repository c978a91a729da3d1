"""Exception policies on DataFrame UDF columns: ``--on-error pause`` and ``--tolerate N``.

A UDF cannot drop a row of its DataFrame: it gives the row's column value. So on a UDF
column a record that raises and is skipped (``hit.skip()``) or quarantined
(``--tolerate``) gives the value **null**; the row stays, and the run's quarantine lists
it. ``hit.replace(arguments)`` calls the UDF again with the replacement *arguments* (the
argument itself for a UDF of one, a tuple or list of them for a UDF of several), as
``replace`` feeds a corrected input record to any operator; the column gets what the
UDF returns for them. ``resume()`` lets the task fail as without the flag; ``stop()``
ends the run.

- A row ``@udf``: the record is one row's arguments.
- A scalar ``@pandas_udf`` (or Arrow UDF): Spark calls it per batch. When a batch
  raises, the function is run again on halves of the batch, down to single rows, to
  find the rows that raise alone. If it then gives, on the batch without those rows,
  the values its pieces gave (elementwise, as far as this batch shows), each culprit row
  is a record as for a row UDF. Otherwise (no single row raises, or the values depend on
  the batch: a mean, a rank) the **batch** is the record: skip or quarantine makes the
  whole batch's values null, and replace is not offered.

- A group: ``applyInPandas`` (grouped or cogrouped) calls its function per group, and a
  grouped-aggregate ``@pandas_udf`` per group's Series: the **group** is the record
  (``group_errors.py``). Skip or quarantine gives no rows (applyInPandas) or null (the
  aggregate); ``replace`` calls the function with the replacement group.

Replay (time travel with a UDF θ) meets the same exceptions on the same rows: the calls
holding rows the run edited are ``EditedCall``s, which answer them with the run's edits
(``EditAnswers``) through the same code.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .agent import AgentPlugin
from .control import _SKIP, LiveControl, _row
from .group_errors import group_record, group_rows, plain, replaced_group, skipped_group
from .state import decode

BATCH_ACTIONS = ("skip", "resume", "stop")
BATCH_REFUSAL = ("the whole batch raised and its rows cannot be told apart (no single row "
                 "raises alone, or the function's values depend on the batch): skip() makes "
                 "the batch's values null, resume() lets the task fail, stop() ends the run")
_RAISE = object()  # the policy declined: the exception fails the task


class UdfErrors:
    """What a UDF host does with an exception: ``answer(record, exc, index, batch)``
    gives _SKIP (the value null), a replacement, or _RAISE. In a run, the user's
    decision at a hit (``--on-error pause``) or the agents' (``--tolerate``:
    ``LiveAnswers``); in replay, the run's own decisions (``EditAnswers``)."""

    def __init__(self, host: Any, answer: Callable[[Any, Exception, int, bool], Any]) -> None:
        self.host, self.answer = host, answer

    @classmethod
    def of(cls, host: Any) -> UdfErrors | None:
        """The host's policy, or None when a UDF's exception just fails its task."""
        control = host.plugins.get(LiveControl)
        if control is not None and not control.on_error:
            control = None
        agents = host.plugins.get(AgentPlugin)
        on_failure = agents.on_failure if agents is not None and agents.failure_handlers \
            else None
        if control is None and on_failure is None:
            return None
        return cls(host, LiveAnswers(host, control, on_failure))

    def outcome(self, record: Any, exc: Exception, index: int, batch: bool = False,
                end: int | None = None) -> Any:
        """_SKIP, a replacement record or _RAISE; ``index``: the record's (first) row in
        the partition's input. Meanwhile the host is seen with its record processed (a
        snapshot then counts it, as replay will): the row, or the batch up to ``end``."""
        with _at_input(self.host, index if end is None else end - 1):
            return self.answer(record, exc, index, batch)

    # --- a row UDF ------------------------------------------------------------------------
    def row(self, f: Callable, args: tuple, exc: Exception) -> Any:
        """The value of the row whose call ``f(*args)`` raised ``exc`` (None: skipped),
        or the exception raised again."""
        index, record = self.host.records_in - 1, _record(args)
        while True:
            out = self.outcome(record, exc, index)
            if out is _RAISE:
                raise exc
            if out is _SKIP:
                return None
            try:
                return f(*_arguments(out, len(args)))
            except Exception as again:  # the replacement raised: a new hit
                record, exc = out, again

    # --- a scalar pandas or Arrow UDF -------------------------------------------------------
    def batch(self, f: Callable, args: tuple, exc: Exception) -> Any:
        """The result of the batch whose call raised ``exc``: rows that raise alone get
        their own outcome; else the batch is one record."""
        if not args:
            raise exc
        rows, first = len(args[0]), self.host.records_in
        pieces, culprits = _bisect(f, args, list(range(rows)), exc)
        good = [p for p in range(rows) if p not in culprits]
        elementwise, rest = _elementwise(f, args, good, pieces) if culprits else (False, None)
        if not elementwise:  # the batch is the record
            if self.outcome(_record(args), exc, first, batch=True, end=first + rows) is _RAISE:
                raise exc
            return _assembled(_empty_result(f, args), args, {})
        values = dict(zip(good, _values(rest) if good else []))
        for position, raised in culprits.items():
            values[position] = self._culprit(f, args, (first + position, first + rows),
                                             position, raised)
        return _assembled(rest, args, values)

    def group(self, f: Callable, args: tuple, exc: Exception, aggregate: bool) -> Any:
        """The result of a group whose call raised ``exc`` (``group_errors.py``): no
        rows or null when skipped, ``f`` on the replacement group when replaced."""
        index, rows = self.host.records_in, group_rows(args, aggregate)
        record = group_record(args, aggregate)
        while True:
            out = self.outcome(record, exc, index, end=index + max(rows, 1))
            if out is _RAISE:
                raise exc
            if out is _SKIP:
                return None if aggregate else skipped_group(args)
            try:
                return f(*replaced_group(args, out, aggregate))
            except Exception as again:  # the replacement raised (or was malformed): a hit
                record, exc = out, again

    def _culprit(self, f: Callable, args: tuple, where: tuple[int, int], position: int,
                 exc: Exception) -> Any:
        """One row of a batch that raised alone (``where``: its input index, and the
        batch's end): its value (None: skipped)."""
        record = _record(tuple(_value_at(a, position) for a in args))
        while True:
            out = self.outcome(record, exc, where[0], end=where[1])
            if out is _RAISE:
                raise exc
            if out is _SKIP:
                return None
            try:
                replaced = _arguments(out, len(args))
                result = f(*(_one_row(a, position, v) for a, v in zip(args, replaced)))
                return _values(result)[0]
            except Exception as again:  # the replacement raised: a new hit
                record, exc = out, again


def _bisect(f: Callable, args: tuple, positions: list[int],
            raised: Exception | None = None) -> tuple[list, dict]:
    """``f`` on the rows at ``positions`` (unless it ``raised`` on them already) and,
    where that raises, on halves of them down to single rows: the pieces that gave
    results (in order) and the rows that raised alone, with their exceptions."""
    if not positions:
        return [], {}
    if raised is None:
        try:
            return [f(*_take(args, positions))], {}
        except Exception as exc:
            raised = exc
    if len(positions) == 1:
        return [], {positions[0]: raised}
    half = len(positions) // 2
    pieces, culprits = _bisect(f, args, positions[:half])
    more, also = _bisect(f, args, positions[half:])
    return pieces + more, {**culprits, **also}


def _elementwise(f: Callable, args: tuple, good: list[int], pieces: list) -> tuple[bool, Any]:
    """Does ``f`` give, on the rows at ``good``, the values its pieces gave (elementwise
    on this batch)? And that result (None if it has no rows and no shape)."""
    if not good:
        return True, _empty_result(f, args)
    try:
        rest = f(*_take(args, good))
    except Exception:
        return False, None
    values = [v for piece in pieces for v in _values(piece)]
    return repr(_values(rest)) == repr(values), rest


def _take(args: tuple, positions: list[int]) -> list:
    """The UDF's arguments (pandas Series or DataFrames, Arrow arrays) at ``positions``."""
    return [a.iloc[positions] if hasattr(a, "iloc") else a.take(positions) for a in args]


def _value_at(arg: Any, position: int) -> Any:
    """One row's argument as a plain value (a dict for a DataFrame's row)."""
    if hasattr(arg, "columns"):
        return {str(k): plain(v) for k, v in arg.iloc[position].items()}
    if hasattr(arg, "iloc"):
        return plain(arg.iloc[position])
    return arg[position].as_py()


def _one_row(arg: Any, position: int, value: Any) -> Any:
    """``arg``'s row at ``position`` as a one-row argument holding ``value``."""
    if hasattr(arg, "iloc"):
        row = arg.iloc[[position]].copy()
        if hasattr(arg, "columns"):
            value = [value[str(c)] for c in arg.columns] if isinstance(value, dict) \
                else list(value)
        row.iloc[0] = value
        return row
    import pyarrow as pa

    return pa.array([value], type=arg.type)


def _values(result: Any) -> list:
    """A UDF's result (a Series, a DataFrame, an Arrow array) as a list of row values."""
    if hasattr(result, "columns"):
        return result.to_dict("records")
    if hasattr(result, "tolist"):
        return result.tolist()
    return result.to_pylist()


def _empty_result(f: Callable, args: tuple) -> Any:
    """``f`` on no rows (the result's shape: its columns, its type), or None."""
    try:
        return f(*_take(args, []))
    except Exception:
        return None


def _assembled(like: Any, args: tuple, values: dict[int, Any]) -> Any:
    """A result as long as the batch ``args``, shaped as ``like``: ``values`` by
    position, null where none is given (a DataFrame's row: its fields null)."""
    listed = [values.get(p) for p in range(len(args[0]))]
    if like is not None and not hasattr(like, "iloc"):  # an Arrow array
        import pyarrow as pa

        return pa.array(listed, type=like.type)
    if like is not None and hasattr(like, "columns"):
        blank = dict.fromkeys(like.columns)
        return type(like)([blank if v is None else v for v in listed], columns=like.columns)
    series = type(like) if like is not None else _series_type(args)
    if series is None:  # Arrow arguments, no result to shape: nulls of no type
        import pyarrow as pa

        return pa.nulls(len(listed))
    return series(listed, dtype=object)


def _series_type(args: tuple) -> Any:
    """pandas' Series class, from the batch's arguments (no import of pandas here)."""
    for arg in args:
        if hasattr(arg, "columns") and arg.shape[1]:
            return type(arg.iloc[:, 0])
        if hasattr(arg, "iloc"):
            return type(arg)
    return None


class LiveAnswers:
    """A run's answers: the user's at a hit (``--on-error pause``), else the agents'."""

    def __init__(self, host: Any, control: LiveControl | None,
                 on_failure: Callable[[Any, Exception], bool] | None) -> None:
        self.host, self.control, self.on_failure = host, control, on_failure

    def __call__(self, record: Any, exc: Exception, index: int, batch: bool) -> Any:
        if self.control is not None:
            error = {"exception": type(exc).__name__, "message": str(exc)[:2000]}
            if batch:
                out = self.control.ask("error", record, -1, error, actions=BATCH_ACTIONS,
                                       refused=BATCH_REFUSAL, index=index)
            else:
                out = self.control.ask("error", record, -1, error, index=index)
            return _RAISE if out is record else out
        assert self.on_failure is not None
        with _at_input(self.host, index):  # the agents' context.taken() - 1: its index
            return _SKIP if self.on_failure(record, exc) else _RAISE


class EditAnswers:
    """Replay's answers: the run's edits at its hits (``store/control_files.py``), in
    the order they were made, by input index (a replacement that raised was decided on
    again)."""

    def __init__(self, edits: list[dict]) -> None:
        self.edits: dict[int, list[dict]] = {}
        for edit in edits:
            self.edits.setdefault(edit["index"], []).append(edit)

    def __call__(self, record: Any, exc: Exception, index: int, batch: bool) -> Any:
        made = self.edits.get(index)
        if not made:
            return _RAISE
        edit = made.pop(0)
        if edit["action"] == "skip":
            return _SKIP
        return decode(edit.get("replacement"), _row)


class EditedCall:
    """In replay's input, a UDF call (a row's arguments, a batch's, a group's) holding
    rows the run skipped or replaced after they raised: replayed with the run's
    decisions. ``first``: its first row's index in the partition's input; ``group``:
    ``group`` or ``agg`` for a group's call."""

    def __init__(self, args: tuple, first: int, edits: list[dict], batch: bool,
                 group: str | None = None) -> None:
        self.args, self.first, self.edits, self.batch = args, first, edits, batch
        self.group = group

    def __repr__(self) -> str:
        return f"<UDF call at row {self.first}, edited at its hits>"

    def replayed(self, f: Callable) -> Any:
        errors = UdfErrors(_Seen(self.first + (0 if self.batch or self.group else 1)),
                           EditAnswers(self.edits))
        try:
            return f(*self.args)
        except Exception as exc:
            if self.group:
                return errors.group(f, self.args, exc, aggregate=self.group == "agg")
            return errors.batch(f, self.args, exc) if self.batch \
                else errors.row(f, self.args, exc)


class _Seen:
    """A replayed call's position, as a host's input count (``records_in``)."""

    def __init__(self, records_in: int) -> None:
        self.records_in = records_in


def _is_batch(args: tuple) -> bool:
    """A pandas or Arrow UDF's call (Series, DataFrames or Arrow arrays), not a row's."""
    return bool(args) and (hasattr(args[0], "iloc") or hasattr(args[0], "to_pylist"))


def edited_calls(calls: list, edits: list[dict], group: str | None = None) -> list:
    """A UDF's calls (replay's records) with those holding edited rows made
    ``EditedCall``s; ``edits``: those made after an exception (kind ``error``);
    ``group``: ``group`` (applyInPandas) or ``agg`` when a call is a group."""
    errors = [e for e in edits if e["kind"] == "error"]
    if not errors:
        return calls
    out, first = [], 0
    for call in calls:
        args = call.args if type(call) is EditedCall else call  # staged for replay: made
        batch = _is_batch(args)
        rows = group_rows(args, group == "agg") if group else len(args[0]) if batch else 1
        mine = [e for e in errors if first <= e["index"] < first + max(rows, 1)]
        out.append(EditedCall(args, first, mine, batch, group) if mine else args)
        first += rows
    return out


@contextmanager
def _at_input(host: Any, index: int) -> Iterator[None]:
    """The host seen at input ``index`` (its hit's index, the quarantine's), then back."""
    kept = host.records_in
    host.records_in = index + 1
    try:
        yield
    finally:
        host.records_in = kept


def _record(args: tuple) -> Any:
    return args[0] if len(args) == 1 else args


def _arguments(replacement: Any, count: int) -> tuple:
    if count == 1:
        return (replacement,)
    if isinstance(replacement, (tuple, list)) and len(replacement) == count:
        return tuple(replacement)
    raise TypeError(f"replace() on a UDF of {count} arguments takes a tuple of {count} "
                    f"values, not {replacement!r}")
