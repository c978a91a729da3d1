"""Record-level lineage capture (Titian) beside a worker host: ``--lineage``.

Within a task PySpark pulls each record through the chain of Python functions, so an
operator's input position on a partition is its upstream's output position there: a
worker needs to record only how its outputs map to its inputs. ``LineageCapture`` is a
worker plugin (``plugin.py``), registered by the host only when the run captures
lineage; with ``--lineage`` off it costs nothing.

Each successful worker writes one Arrow file (``layout.lineage_path``) of *links*:

    out_start, out_count   a range of the worker's outputs on its partition
    input                  which input of the operator (a join's side; else 0)
    in_part                the partition of that input (a reduce side: the map partition)
    in_start, in_count     a range of that input's records
    cross                  false: output out_start+k comes from input in_start+k;
                           true: every output of the range comes from every input of it

Pipelined operators log like time travel: a filter whether it kept each input (in
blocks, through a wrapper of its function: one byte an input), a flatMap the number of
outputs of each input (in blocks, through a counting wrapper of its function: one call
per input, not per output), an ``Operator`` the inputs with other than one output, a
whole-partition function its outputs so far at each input it pulls (an output links to
the input pulled last; outputs after its input ran out link to every input). A filter's
and a flatMap's files hold one column each, ``kept`` and ``out_counts`` (zstd takes the
runs); ``tables.load_links`` expands them into links. Key-based operators link by key
(Titian): a reduce side's output to every combiner of its key, each combiner named by
its map partition and position (tagged by ``input_order.tag_origins``). A join's or
cogroup's reduce side captures nothing per record either: its map side combines as in the
plain run, and its file, no rows, says in its metadata (``LINKED_BY``) that an output of
key K links to every record of key K on each input (Titian's key-based links), which a
trace finds among the inputs' regenerated records. A map side (``combine``) links each input to its combiner: PySpark's merger outputs
the combiners in the order it first saw their keys unless it spilled, so an input's
combiner is its key's number as first seen. Its file's metadata says whether that
order holds (``KEY_ORDER``). When the first ``KEYS_PROBE`` inputs hold at most
``FEW_KEYS`` distinct keys, the worker numbers every input's key (C calls, as a join's
tap) and the file holds them, ``key_out`` (a byte or two an input, zstd takes their
entropy): a trace crosses the map side without a job. With more keys (a Zipf text's
words: their numbers would cost what their entropy costs, 28% of its bytes) the file
has no rows and a trace re-derives the numbers (Titian) in one job over the map side's
regenerated inputs (``KeyNumbers``), or matches keys by value where the merger spilled
(``KeyIndex``).
"""
from __future__ import annotations

import collections
import itertools
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter, not_
from typing import Any

from .artifacts import deliver
from .merge_order import POSITION
from .plugin import WorkerPlugin

JOINS = frozenset({"join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin", "cogroup",
                   "groupWith"})
# the RDD operators whose workers capture lineage (DataFrame operators do not, yet)
RDD_APIS = JOINS | {"map", "flatMap", "filter", "mapPartitions", "mapPartitionsWithIndex", "keyBy",
                    "mapValues", "flatMapValues", "combineByKey", "reduceByKey", "foldByKey",
                    "aggregateByKey", "groupByKey"}
COLUMNS = ("out_start", "out_count", "input", "in_part", "in_start", "in_count", "cross")
KEY_OUT = "key_out"  # a map side's: the output position of each input's combiner
KEYS_PROBE = 4096  # a map side's first inputs, whose distinct keys decide (FEW_KEYS)
FEW_KEYS = 256  # at most this many keys among them: each input's combiner is kept
KEY_ORDER = b"key_order"  # a map side's file's metadata: FIRST_SEEN or SPILLED
FIRST_SEEN, SPILLED = b"first_seen", b"spilled"
LINKED_BY, KEY = b"linked_by", b"key"  # a join's reduce side's file's metadata
KEPT, OUT_COUNTS = "kept", "out_counts"  # a filter's and a flatMap's one column
KEY_COLUMN = "key"  # a join's or its inputs' records' keys, in position order
PARTITIONS = b"partitions"  # a join input's key file: the input's partition count
_KEY, _VALUE, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


class LineageCapture(WorkerPlugin):
    """Links of one worker's outputs to its inputs (see the module docstring)."""

    name = "lineage"
    essential = True  # its hooks' failures fail the task: no run with links silently missing

    def __init__(self, host: Any) -> None:
        spec = host.spec
        self.role = "join" if spec.api in JOINS else spec.phase  # "", combine, merge, join
        self.captured = spec.api in RDD_APIS
        self.kind = "map"
        self.log: array = array("q")  # the loop's log (see outputs_log)
        self.lengths: array | None = None  # a flatMap in blocks: outputs of each input
        self.kept: bytearray | None = None  # a filter in blocks: 1 for each input it kept
        self.keys: dict = defaultdict(itertools.count().__next__)  # key -> its id here
        self.in_keys = array("q")  # key id of every input combiner (a reduce side)
        self.out_keys = array("q")  # key id of every output (a reduce side)
        self.merge_origins: Any = None  # an aggregation's reduce side: the host's Origins
        self.combiners: array | None = None  # a map side with few keys: each input's combiner

    # --- the host's hooks ------------------------------------------------------------
    def needs_records(self, host: Any) -> bool:
        """Per record (an ``Operator``'s outputs), except a map's (in blocks, its output k
        is its input k), a filter's and a flatMap's (in blocks, ``block_function``), a map
        side's and a join's (linked by key) and a reduce side's (by C calls: ``tap_merge``)."""
        if self.role:
            return False
        return self.captured and host.loop_kind not in ("map", "flatMap", "filter")

    def feed_input(self, host: Any, iterator: Iterable) -> Iterable | None:
        """A map side's inputs, unchanged; while their keys are few, each one's key
        numbered as first seen (its combiner's position), by C calls only."""
        if self.role != "combine" or not self.captured:
            return None
        self.combiners = array("q")
        return itertools.chain.from_iterable(self._combine_inputs(iter(iterator)))

    def _combine_inputs(self, inputs: Iterator) -> Iterator[Iterable]:
        """The first ``KEYS_PROBE`` inputs numbered, then the rest numbered too if they
        held at most ``FEW_KEYS`` keys, else as they are (``combiners`` dropped)."""
        assert self.combiners is not None
        number = self.keys.__getitem__
        yield _keys_passing(itertools.islice(inputs, KEYS_PROBE), self.combiners.append, number)
        if len(self.keys) > FEW_KEYS:
            self.combiners = None
            yield inputs
        else:
            yield _keys_passing(inputs, self.combiners.append, number)

    def partition_outputs(self, host: Any, outputs: Iterable) -> Iterable:
        if self.role == "join":  # each output's key, numbered as first seen
            return _keys_passing(outputs, self.out_keys.append, self.keys.__getitem__)
        if self.role != "merge":
            return outputs
        return _keys_passing(outputs, self.out_keys.append, self._output_key)

    def tap_merge(self, combiners: Iterable, origins: Any) -> Iterable:
        """A reduce side's ``(key, combiner)`` inputs, unchanged, each one's key numbered
        (``in_keys``) by C calls only; ``origins``, the host's, names where each came from."""
        if self.role != "merge" or not self.captured:
            return combiners
        self.merge_origins = origins
        return _keys_passing(combiners, self.in_keys.append, self.keys.__getitem__)

    def outputs_log(self, host: Any, kind: str, in_blocks: bool) -> Callable | None:
        self.kind = kind
        if self.role or kind in ("map", "batches"):
            return None
        if kind in ("flatMap", "operator"):
            return self._deviation
        return self.log.append  # a filter's drops; a whole-partition function's outputs so far

    def block_function(self, host: Any, kind: str, f: Callable) -> Callable | None:
        """A flatMap in blocks: its function, counting each input's outputs; a filter's,
        noting whether it kept each input."""
        if self.role or not self.captured:
            return None
        if kind == "flatMap":
            self.lengths = array("q")
            return counting(f, self.lengths.append)
        if kind == "filter":
            self.kept = bytearray()
            return keeping(f, self.kept.append)
        return None

    def end(self, host: Any, message: dict) -> None:
        if not self.captured or host.status.wire != "ok" or not self._recording(host):
            return None
        try:
            table = self._table(host, message)
            deliver(host.spec.run, "lineage", host.worker, table)
        except Exception as exc:  # the run goes on; its traces say what is missing
            host.alert("lineage", "write", exc)
        return None

    def _table(self, host: Any, message: dict) -> Any:
        """This worker's lineage file: a map side's, a join's by key, or its links."""
        if self.role == "combine":
            return self._map_side(host, message["records_in"])
        if self.role == "join":
            return by_key(self.out_keys, list(self.keys))
        return self.links(host.worker["partition"], message["records_in"],
                          message["records_out"])

    def _map_side(self, host: Any, records_in: int) -> Any:
        """A map side's file: each input's combiner (``key_out``) where the keys were few,
        every input was numbered and the merger kept first-seen order; else ``key_order``."""
        order = key_order(host.state_source)
        numbered = self.combiners
        if numbered is None or len(numbered) != records_in or \
                order.schema.metadata[KEY_ORDER] != FIRST_SEEN:
            return order
        return one_column(KEY_OUT, numbered).replace_schema_metadata(order.schema.metadata)

    def _recording(self, host: Any) -> bool:
        """Not after the run (a trace regenerating records with Spark runs the hosts)."""
        from .channel import _run_has_ended

        return not _run_has_ended(host.spec.run)

    # --- per record ------------------------------------------------------------------
    def _deviation(self, index: int, outputs: int) -> None:
        self.log.append(index)
        self.log.append(outputs)

    def _output_key(self, key: Any) -> int:
        return self.keys.get(key, -1)

    # --- the links -------------------------------------------------------------------
    def links(self, part: int, n_in: int, n_out: int) -> Any:
        """This worker's links, a ``pyarrow.Table`` (see the module docstring)."""
        rows = Links(part)
        if self.role:
            self._merge_links(rows)
        elif self.lengths is not None:
            return one_column(OUT_COUNTS, self.lengths)
        elif self.kept is not None:
            return one_column(KEPT, self.kept)
        elif self.kind == "filter":
            rows.kept(self.log, n_in)
        elif self.kind in ("flatMap", "operator"):
            rows.deviations(self.log, n_in, n_out)
        elif self.kind == "partition":
            rows.pulls(self.log, n_in, n_out)
        else:
            rows.add(0, n_out, 0, n_out)
        return rows.table()

    def _merge_links(self, rows: Links) -> None:
        """Every output of a key (its outputs stand together) to each combiner of that key:
        one row a combiner, built by C iterators (no Python code per combiner)."""
        out_keys = self.out_keys
        first = dict(zip(reversed(out_keys), range(len(out_keys) - 1, -1, -1)))
        count = collections.Counter(out_keys)
        in_keys = self.in_keys
        if self.merge_origins is None:  # it read no input
            return
        starts = array("q", map(first.get, in_keys, itertools.repeat(-1)))
        counts = array("q", map(count.get, in_keys, itertools.repeat(0)))
        pairs = self.merge_origins.pairs[:2 * len(in_keys)]  # (partition, position), input 0
        # positions without the mark of a map side that spilled (``merge_order.SPILLED``)
        positions = map(POSITION.__and__, pairs[1::2])
        inputs, parts = itertools.repeat(0), pairs[0::2]
        rows.extend(itertools.compress(zip(starts, counts, positions, inputs, parts), counts))


class Links:
    """Link rows (``COLUMNS``) of one worker on partition ``part``, in typed arrays."""

    def __init__(self, part: int) -> None:
        self.part = part
        self.columns = {name: array("b" if name == "cross" else "q") for name in COLUMNS}

    def add(self, out_start: int, out_count: int, in_start: int, in_count: int,
            cross: bool = False, source: int = 0, part: int | None = None) -> None:
        if out_count <= 0 or in_count <= 0:
            return
        c = self.columns
        c["out_start"].append(out_start)
        c["out_count"].append(out_count)
        c["input"].append(source)
        c["in_part"].append(self.part if part is None else part)
        c["in_start"].append(in_start)
        c["in_count"].append(in_count)
        c["cross"].append(cross)

    def extend(self, rows: Iterable[tuple[int, int, int, int, int]]) -> None:
        """Rows (out_start, out_count, in_start, input, in_part), each from one input
        record to every output of its range (``cross``, ``in_count`` 1)."""
        c = self.columns
        before = len(c["out_start"])
        for name, values in zip(("out_start", "out_count", "in_start", "input", "in_part"),
                                zip(*rows)):
            c[name].extend(values)
        added = len(c["out_start"]) - before
        c["in_count"].extend(itertools.repeat(1, added))
        c["cross"].extend(itertools.repeat(1, added))

    def table(self) -> Any:
        """The rows as a ``pyarrow.Table`` (built from the arrays' buffers: nothing here
        may make pyarrow import pandas in Spark's workers)."""
        import pyarrow as pa

        arrays = {}
        for name, kind in link_types(pa):
            values = self.columns[name]
            raw = pa.int8() if name == "cross" else pa.int64()
            column = pa.Array.from_buffers(raw, len(values), [None, pa.py_buffer(values)])
            arrays[name] = column.cast(kind)
        return pa.table(arrays)

    def kept(self, drops: Iterable[int], n_in: int) -> None:
        """A filter: the runs of inputs between the dropped ones, one output each."""
        out = nxt = 0
        for dropped in drops:
            self.add(out, dropped - nxt, nxt, dropped - nxt)
            out += max(dropped - nxt, 0)
            nxt = dropped + 1
        self.add(out, n_in - nxt, nxt, n_in - nxt)

    def deviations(self, log: array, n_in: int, n_out: int) -> None:
        """A flatMap or ``Operator``: (input, outputs) where outputs != 1; an Operator's
        outputs from ``close`` come from every input."""
        out = nxt = 0
        for j in range(0, len(log), 2):
            index, k = log[j], log[j + 1]
            self.add(out, index - nxt, nxt, index - nxt)
            out += index - nxt
            self.add(out, k, index, 1, cross=True)
            out += k
            nxt = index + 1
        self.add(out, n_in - nxt, nxt, n_in - nxt)
        out += max(n_in - nxt, 0)
        self.add(out, n_out - out, 0, n_in, cross=True)

    def pulls(self, log: array, n_in: int, n_out: int) -> None:
        """A whole-partition function: outputs so far at each input pulled (and at its
        end); an output comes from the input pulled last, or from all of them if it
        came before the first or after the input ran out."""
        bounds = list(log[:n_in])
        if not bounds:
            self.add(0, n_out, 0, n_in, cross=True)
            return
        self.add(0, bounds[0], 0, n_in, cross=True)
        ends = bounds[1:] + [log[n_in] if len(log) > n_in else n_out]
        run = 0  # the first input of the current run of one-output inputs
        for i in range(n_in):
            k = ends[i] - bounds[i]
            if k != 1:
                self.add(bounds[run], i - run, run, i - run)
                self.add(bounds[i], k, i, 1, cross=True)
                run = i + 1
        self.add(bounds[run] if run < n_in else 0, n_in - run, run, n_in - run)
        self.add(ends[-1], n_out - ends[-1], 0, n_in, cross=True)


def _keys_passing(records: Iterable, append: Callable, number: Callable) -> Iterator:
    """The records, unchanged, the number of each one's key passed to ``append`` by C
    calls only (``compress`` pulls the record, then its selector: the same record's)."""
    passing, keyed = itertools.tee(records)
    return itertools.compress(passing, _noting(append, map(number, map(_KEY, keyed))))


def _noting(append: Callable, values: Iterable) -> Iterator[bool]:
    """``values`` passed to ``append`` as they are pulled, each yielding True (C calls)."""
    return map(not_, map(append, values))


def counting(f: Callable, append: Callable[[int], None]) -> Callable:
    """``f`` (a flatMap's function) whose outputs for each input are counted (``append``)."""
    def counted(record: Any) -> list:  # the host's culprit finder reads ``record``
        outputs = f(record)
        if type(outputs) is not list:
            outputs = list(outputs)
        append(len(outputs))
        return outputs
    return counted


def keeping(f: Callable, append: Callable[[int], None]) -> Callable:
    """``f`` (a filter's function) noting whether it kept each input (``append``: 1 or 0)."""
    def kept(record: Any) -> bool:  # the host's culprit finder reads ``record``
        keep = bool(f(record))
        append(keep)
        return keep
    return kept


def one_column(name: str, values: array | bytearray) -> Any:
    """A filter's ``kept`` or a flatMap's ``out_counts``, one value an input, in the
    narrowest unsigned type that holds them (zstd, on writing, takes their runs). Built
    from buffers: Python scalars would make pyarrow import pandas."""
    import pyarrow as pa

    top = max(values, default=0)
    code, kind = next((code, kind) for code, kind in (("B", pa.uint8()), ("H", pa.uint16()),
                                                      ("I", pa.uint32()), ("Q", pa.uint64()))
                      if top < 1 << 8 * array(code).itemsize)
    packed = values if isinstance(values, bytearray) else array(code, values)
    column = pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(packed)])
    return pa.table({name: column})


def key_order(merger: Any) -> Any:
    """A map side's file: no rows, its metadata whether PySpark's merger output its
    combiners in the order it first saw their keys (it did unless it spilled)."""
    import pyarrow as pa

    spilled = getattr(merger, "spills", 0) or getattr(merger, "pdata", None)
    schema = pa.schema([], metadata={KEY_ORDER: SPILLED if spilled else FIRST_SEEN})
    return schema.empty_table()


def by_key(numbers: array | None = None, keys: list | None = None) -> Any:
    """A join's or cogroup's reduce side's file: its metadata says that its outputs link
    by key (an output of key K to every record of key K on each input); its one column,
    ``key``, each output's key (``key_column``), or no rows if the keys are not plain
    strings or integers."""
    import pyarrow as pa

    column = key_column(numbers, keys) if numbers is not None and keys is not None else None
    if column is None:
        return pa.schema([], metadata={LINKED_BY: KEY}).empty_table()
    return pa.table({KEY_COLUMN: column}).replace_schema_metadata({LINKED_BY: KEY})


def key_column(numbers: array, keys: list) -> Any:
    """Records' keys as an Arrow dictionary column: ``numbers`` (each record's key
    numbered as first seen) the indices into ``keys`` (first-seen order); None unless
    every key is a ``str`` or an ``int`` within 64 bits. Built from buffers (Python
    scalars would make pyarrow import pandas in the worker)."""
    import pyarrow as pa

    dictionary = _plain_array(pa, keys)
    if dictionary is None:
        return None
    kinds = {"B": pa.uint8(), "H": pa.uint16(), "I": pa.uint32(), "q": pa.int64()}
    code = next(code for code in "BHI" if len(keys) <= 1 << 8 * array(code).itemsize)
    indices = pa.Array.from_buffers(kinds[numbers.typecode], len(numbers),
                                    [None, pa.py_buffer(numbers)])
    if numbers.typecode != code:  # narrowed in C++ (array(code, numbers) is a Python loop)
        indices = indices.cast(kinds[code])
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _plain_array(pa: Any, keys: list) -> Any:
    """``keys`` as an Arrow large_string or int64 array, or None (other values)."""
    if all(type(key) is str for key in keys):
        try:
            data = [key.encode() for key in keys]
        except UnicodeEncodeError:
            return None
        offsets = array("q", itertools.accumulate(map(len, data), initial=0))
        return pa.Array.from_buffers(pa.large_string(), len(keys),
                                     [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])
    if keys and all(type(key) is int for key in keys):
        try:
            values = array("q", keys)
        except OverflowError:
            return None
        return pa.Array.from_buffers(pa.int64(), len(keys), [None, pa.py_buffer(values)])
    return None


def write_links(path: str, table: Any) -> str:
    """One worker's links as an Arrow IPC file, zstd (atomically)."""
    from .worker_file import _write_atomically

    return _write_atomically(table, path)


def link_types(pa: Any) -> list[tuple[str, Any]]:
    return [("out_start", pa.int64()), ("out_count", pa.int64()), ("input", pa.int32()),
            ("in_part", pa.int32()), ("in_start", pa.int64()), ("in_count", pa.int64()),
            ("cross", pa.bool_())]
