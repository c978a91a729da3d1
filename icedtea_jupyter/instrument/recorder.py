"""The per-run state of instrumentation: the DAG being built and the operators' specs."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..dag import UNTRACKED, Dag, OperatorNode
from ..executor import shipping
from ..executor.spec import OperatorSpec, RunSpec
from ..store.operator_images import write_operator_image
from .interesting import named_in_code, refusal
from .naming import default_name
from .nondeterminism import nondeterminism_warnings
from .patching import node_of, own, tag

LOG = logging.getLogger("icedtea_jupyter")


class InterestingNotFound(shipping.ShippingRefused):
    """``--interesting`` names no Python operator of the job about to run."""


MADE = "_icedtea_made"  # an RDD constructed while the run recorded: the run's id
TRIAL_SEED = 20261124  # trial runs (--trial) sample each source with this seed


class Recorder:
    """Adds nodes to ``dag`` as the cell calls PySpark; ``depth`` > 0 inside PySpark,
    ``building`` > 0 while PySpark builds one of the cell's transformations."""

    def __init__(self, dag: Dag, run: RunSpec, interesting: str | None = None) -> None:
        self.dag = dag
        self.run = run
        self.interesting = interesting
        self.functions: list[tuple[int, Any]] = []  # (node, the user's function)
        self.depth = 0
        self.building = 0
        self.specs: dict[int, OperatorSpec] = {}
        self.companions: dict[int, list[int]] = {}  # node -> nodes renamed with it
        self.udfs: dict[int, str] = {}  # a UDF call's node -> its column's expression text
        self.udf_calls: dict[int, tuple[Any, tuple]] = {}  # node -> (the udf, its arguments)
        self.upstreams: dict[int, Any] = {}  # node -> the RDD it reads (to regenerate inputs)
        self.unreplayable: dict[int, str] = {}  # node -> why the run kept no copy of it
        self.kept: dict[int, Any] = {}  # node -> the wrapper Spark runs, kept for replay
        self.shipped: set[int] = set()  # nodes whose image was taken as Spark pickled them
        self.cell = ""  # the cell's code: a name in it may still come in a later job
        self.outputs: dict[int, Any] = {}  # node -> the RDD it produces (lineage's records)
        self.shuffles: dict[int, tuple] = {}  # map side -> (partitions, partitionFunc)
        self.splits: dict[int, tuple] = {}  # map side -> (heavy keys, salts): s.mitigate()
        self.details: dict[int, dict] = {}  # node -> what else defines it (versions' prints)
        self.on_action: Any = None  # runs the cell's actions (instrument/actions.py)
        self.trial: float | None = None  # a trial run: each source is sampled to this share
        self.action_frames: list = []  # the DataFrames of the cell's actions (their plans)
        self.udf_frames: dict[int, Any] = {}  # UDF node -> the DataFrame it is computed on
        self.on_g_grew: Any = None  # tells connected workers G(θ) grew (a UDF after θ)
        self.windows: dict[str, Any] = {}  # a UDF call's expression -> its .over(window)
        self.notes: list[str] = []  # what the cell did that the run cannot replay, and why
        self.on_close: list[Any] = []  # undone when the cell ends (a SQL function re-hosted)

    def sampled(self, source: Any) -> Any:
        """A source RDD or DataFrame the cell made: in a trial run, its sample."""
        if not self.trial or not hasattr(source, "sample"):
            return source
        with self.inside():
            return source.sample(False, self.trial, TRIAL_SEED)

    @contextmanager
    def inside(self) -> Iterator[None]:
        """PySpark's own calls made while this block runs are not instrumented."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    @contextmanager
    def transforming(self) -> Iterator[None]:
        """PySpark builds one of the cell's transformations: ``inside``, and the jobs it
        runs and the operators it pickles are not the cell's actions."""
        self.building += 1
        try:
            with self.inside():
                yield
        finally:
            self.building -= 1

    # --- nodes ---------------------------------------------------------------------
    def parents(self, *objs: Any) -> list[int]:
        return [self.node_for(o) for o in objs if o is not None]

    def node_for(self, obj: Any) -> int:
        """The node that produced ``obj``; a source node for anything made elsewhere."""
        node = node_of(obj, self.run.run_id)
        ancestor = own(obj, "prev")  # rdd.values() and friends: PySpark's own maps
        while node is None and ancestor is not None:
            node = node_of(ancestor, self.run.run_id)
            ancestor = own(ancestor, "prev")
        if node is None:
            node = self._outside(obj)
            self.outputs[node] = obj
        tag(obj, self.run.run_id, node)
        return node

    def _outside(self, obj: Any) -> int:
        """A node for ``obj``, which no call of the cell that the recorder follows made:
        made before the cell (by an earlier cell: the cell's input, a source), or built
        by PySpark in this cell by a call no patch sees (``untracked``: lineage stops
        there, saying so, rather than call its records source records)."""
        root = obj
        while own(root, "prev") is not None:
            root = own(root, "prev")
        if own(root, MADE) == self.run.run_id:
            return self.dag.add("rdd built by an untracked call", "jvm", UNTRACKED, []).id
        kind = type(obj).__name__
        if kind not in ("RDD", "PipelinedRDD"):
            return self.dag.add("dataframe source" if kind == "DataFrame" else "source",
                                "jvm", "source", []).id
        name = _rdd_name(obj) or _rdd_name(root)
        return self.dag.add(f"{name or 'rdd'} (made before the cell)", "jvm", "source", []).id

    def python(self, api: str, f: Any, parents: list[int], phase: str = "",
               name: str | None = None) -> tuple[OperatorNode, OperatorSpec]:
        node = self.dag.add(name or default_name(f, api), "python", api, parents, phase)
        spec = OperatorSpec(node.id, self.run, api, node.name, in_g=node.in_g, phase=phase)
        self.specs[node.id] = spec
        if self.dag.interesting is None and (self.interesting is None
                                             or self.interesting == node.name):
            self._make_interesting(node.id)
        self.functions.append((node.id, f))
        return node, spec

    def keep_for_replay(self, node_id: int, wrapper: Any, upstream: Any) -> None:
        """Keep the operator for replay, as Spark takes it (its image is written when
        PySpark pickles it for a job), and the RDD it reads."""
        self.upstreams[node_id] = upstream
        self.kept[node_id] = wrapper
        shipping.listen(self.run.run_id, self._shipped)

    def _shipped(self, wrapper: Any) -> None:
        """Spark is pickling ``wrapper`` for a job: its image is the operator as it runs."""
        self.check_interesting()
        node_id = wrapper.spec.op_id
        if node_id in self.kept:
            self._write_image(node_id, wrapper)
            self.shipped.add(node_id)

    def _write_image(self, node_id: int, wrapper: Any) -> None:
        try:
            write_operator_image(self.run.store_path, node_id, wrapper)
        except Exception as exc:  # an unpicklable closure: the run still records
            self.unreplayable[node_id] = f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        """The cell has ended: operators no job shipped are kept as they are now, and
        later pickling (another cell's job) changes nothing."""
        shipping.forget(self.run.run_id)
        for node_id, wrapper in self.kept.items():
            if node_id not in self.shipped:
                self._write_image(node_id, wrapper)
        while self.on_close:
            try:
                self.on_close.pop()()
            except Exception as exc:  # noqa: BLE001 - the cell has ended: say so, go on
                LOG.warning("icedtea: could not undo a change at the cell's end: %s", exc)

    def unkept_udfs(self) -> dict[str, dict]:
        """The UDFs of G(θ) the run kept no copy of, by node id, and why: ``window`` (an
        aggregate UDF called over a window) or ``unpicklable`` (with the ``error``)."""
        found: dict[str, dict] = {}
        for node_id in self.udf_calls:
            if not self.dag.node(node_id).in_g:
                continue
            if node_id in self.unreplayable:
                found[str(node_id)] = {"kind": "unpicklable",
                                       "error": self.unreplayable[node_id]}
            elif node_id not in self.kept:
                found[str(node_id)] = {"kind": "window"}  # dataframe._keep_udf: the rest
        return found

    def check_interesting(self) -> None:
        """A job of the cell is about to run: ``--interesting`` naming no Python operator
        is refused now, before its first task, unless the name is in the cell's code (a
        later job of the cell may create it; the run's warnings say so at its end).
        Not while PySpark builds a transformation: what it pickles then, and the jobs it
        runs (a sort's sampling), come before the cell's later operators exist."""
        wanted, theta = self.interesting, self.dag.interesting
        if wanted is None or self.building or (theta is not None and theta.name == wanted) \
                or named_in_code(wanted, self.cell):
            return
        raise InterestingNotFound(refusal(wanted, [n.name for n in self.dag.python_operators],
                                          self.cell))

    def _make_interesting(self, node_id: int) -> None:
        self.dag.set_interesting(node_id)
        for node in self.dag.operators:
            spec = self.specs.get(node.id)
            if spec is not None:
                spec.theta, spec.in_g = node.theta, node.in_g

    def attach(self, node_id: int, parent: int) -> None:
        """A UDF's node gets the node its column is computed on. If that puts it in G(θ),
        its spec says so (replay's copy) and so do the workers: PySpark pickled the spec
        when the column was made, so they learn it from the coordinator (``on_g_grew``,
        and the welcome of a worker connecting later)."""
        joined = self.dag.attach(node_id, parent)
        for joined_id in joined:
            spec = self.specs.get(joined_id)
            if spec is not None:
                spec.in_g = True
        if joined and self.on_g_grew is not None:
            self.on_g_grew()

    def jvm(self, api: str, parents: list[int], name: str | None = None) -> OperatorNode:
        return self.dag.add(name or api, "jvm", api, parents)

    def produced(self, obj: Any, node: OperatorNode | int) -> Any:
        node_id = node if isinstance(node, int) else node.id
        self.outputs.setdefault(node_id, obj)
        count = getattr(type(obj), "getNumPartitions", None)  # an RDD's
        if callable(count) and self.dag.node(node_id).partitions is None:
            try:
                self.dag.node(node_id).partitions = int(count(obj))
            except Exception as exc:  # the DAG shows no partition count: that is all
                LOG.debug("icedtea: no partition count for %r: %s: %s",
                          self.dag.node(node_id).name, type(exc).__name__, exc)
        return tag(obj, self.run.run_id, node_id)

    def warnings(self) -> list[str]:
        """Operators whose replay may differ from the run (checked with their final names),
        and what the cell did that the run cannot replay (``notes``)."""
        found: list[str] = list(dict.fromkeys(self.notes))
        for node_id, f in self.functions:
            found.extend(nondeterminism_warnings(self.dag.node(node_id).name, f))
        return found

    def rename(self, obj: Any, name: str) -> None:
        node = node_of(obj, self.run.run_id)
        if node is None:
            return
        self.dag.rename(node, name)
        for other in self.companions.get(node, []):
            phase = self.dag.node(other).phase
            self.dag.rename(other, f"{name} ({phase})" if phase else name)
        for renamed in (node, *self.companions.get(node, [])):  # "count (combine)" too
            if self.interesting is not None and self.interesting == self.dag.node(renamed).name \
                    and self.dag.node(renamed).kind == "python":
                self._make_interesting(renamed)
        for renamed in (node, *self.companions.get(node, [])):
            if renamed in self.specs:  # shipped with the next job: agents see the name
                self.specs[renamed].name = self.dag.node(renamed).name


def _rdd_name(rdd: Any) -> str | None:
    """The RDD's ``setName``, if its JVM RDD exists (never built here: that would pickle
    its operators)."""
    jrdd = own(rdd, "_jrdd_val") if "PipelinedRDD" in type(rdd).__name__ else own(rdd, "_jrdd")
    try:
        return jrdd.name() if jrdd is not None else None
    except Exception:  # py4j: a stopped context; the node is named without it
        return None
