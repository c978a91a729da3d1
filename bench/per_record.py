"""The per-record path of Spark's Python workers, without Spark: the hosted loops against
the functions PySpark itself would chain, in one process, and where the time goes.

The chain of ``bench/shapes.py``'s first workload (a dict-state ``Operator``, a filter, a
map) runs over one partition of integers the way a PySpark task pulls it: plain (the
``Operator`` called as ``mapPartitions`` does, ``filter`` and ``map`` as PySpark's own
``filter(f, iterator)`` and ``map(f, iterator)``), and hosted (each function in its
``WorkerHost`` loop, θ the operator, so all three are in G(θ) and log for replay).
Prints seconds per million records for each, their ratio, and cProfile's top items
for the hosted run. ``--shape wordcount --lineage``: a word count's map side (split
lines into words, pair them, combine them by key) hosted as ``%%icedtea --lineage`` runs
it, against PySpark's ``chain.from_iterable(map(f, ...))``, ``map`` and ``ExternalMerger``
(issue 12's capture budget).

    .venv/bin/python bench/per_record.py [--records 2000000] [--keep 0.66] [--lineage]

``--agents samples,summaries``: every host carries those built-in agents (bench/
agent_data.py's instruction counts). ``--tool check`` (tolerate, check-table, golden, latency, overhead; ``bench/agents.py``'s
tools, on the filter ``keep``) hosts that built-in agent too, with the progress agent.

``--only plain|hosted|setup`` runs one of them once and exits, for instruction counts
that do not depend on the machine's load (``valgrind --tool=callgrind``; ``setup`` builds
the records only: subtract it). ``--worker``: the hosts see PySpark's worker ``main``
(their chains' guard is a C ``chain``, as in Spark), not the guard generator used
outside a worker. ``--interact-every RECORDS``: θ's host receives an
``interact`` message every RECORDS records (the hosts' messages are encoded as the
control channel's frames are), for the cost of the interactions themselves. Under
valgrind, ``--check-period 5``: a host sizes its blocks by its record rate (about 50 ms
of records, at most 4,096), and valgrind's slowdown would shrink them a hundredfold.
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from collections.abc import Iterator
from itertools import chain, islice
from operator import add

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from icedtea_jupyter.executor import host as host_module  # noqa: E402
from icedtea_jupyter.executor import protocol  # noqa: E402
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec  # noqa: E402
from icedtea_jupyter.executor.wrappers import CombineFunction, PartitionFunction  # noqa: E402
from icedtea_jupyter.store import layout  # noqa: E402
from tests.unit.fakes import RecordingChannel  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shapes import Totals, parse, running, seen_users, streaks  # noqa: E402 - bench/shapes.py's


def operator_chain(keep: float) -> list:
    """bench/shapes.py's first workload: a dict-state ``Operator`` θ, a filter, a map."""
    modulus = max(1, round(1 / (1 - keep))) if keep < 1 else 0
    if modulus:
        def kept(r):
            return r[0] % modulus != 0
    else:
        def kept(r):
            return True
    return [("mapPartitions", "totals", Totals()), ("filter", "keep", kept),
            ("map", "pair", lambda r: (r[0] % 100, r[1]))]


def generator_chain(keep: float) -> list:
    """A pipeline as users write it: parse strings, a generator θ holding a set, a filter
    keeping ``keep`` of the records, a map (bench/shapes.py's parse workload)."""
    limit = round(997 * keep)
    return [("map", "parse", parse), ("mapPartitions", "seen", seen_users),
            ("filter", "keep", lambda r: r[1] < limit), ("map", "pair", lambda r: (r[0], r[1]))]


def shuffle_chain(keep: float) -> list:
    """bench/shapes.py's partitionBy workload without the shuffle: a generator θ, a map
    to pairs, then (after the shuffle, in the run) a generator and a filter."""
    return [("mapPartitions", "running", running), ("map", "pair", lambda x: (x % 1000, x)),
            ("mapPartitions", "streaks", streaks), ("filter", "long", lambda r: r[1] > 3)]


def wordcount_chain(keep: float) -> list:
    """A word count's map side: lines split into words, each word paired with 1, the
    pairs combined by key (``reduceByKey(add)``'s map side)."""
    return [("flatMap", "split", lambda line: line.split()), ("map", "pair", lambda w: (w, 1)),
            ("combine", "count", add)]


def _combining(f) -> tuple:
    """``reduceByKey(f)``'s aggregator functions, PySpark's merger memory and serializer."""
    from pyspark.serializers import AutoBatchedSerializer, CPickleSerializer

    return (lambda v: v, f, f), 512.0, AutoBatchedSerializer(CPickleSerializer())


def plain_combine(f, stream):
    """PySpark's map side of ``reduceByKey(f)``: its ``ExternalMerger``'s items."""
    from pyspark.shuffle import Aggregator, ExternalMerger

    functions, memory, serializer = _combining(f)
    merger = ExternalMerger(Aggregator(*functions), memory, serializer)
    merger.mergeValues(stream)
    return merger.items()


def zipf_lines(n: int) -> list[str]:
    """``n`` words, ten a line (bench/lineage_capture.py's input)."""
    from lineage_capture import zipf_lines as lines

    return lines(n)


SHAPES = {"operator": (operator_chain, lambda n: range(n), 0),
          "shuffle": (shuffle_chain, lambda n: range(n), 0),
          "wordcount": (wordcount_chain, zipf_lines, -1),
          "generator": (generator_chain, lambda n: [f"u{i % 50_000},{i % 997}" for i in range(n)],
                        1)}


def plain(shape: str, records: list, keep: float) -> int:
    stream = source(records)
    for api, _, f in SHAPES[shape][0](keep):
        if api == "flatMap":
            stream = chain.from_iterable(map(f, stream))
        elif api == "combine":
            stream = plain_combine(f, stream)
        else:
            stream = f(stream) if api == "mapPartitions" else \
                (map if api == "map" else filter)(f, stream)
    return sum(1 for _ in stream)


CHANNEL: list = []  # what the hosts send to, instead of a coordinator
STORE = ["/nonexistent"]  # --lineage: a directory for the links the hosts write
STORE_TOKEN = "bench-per-record"  # its token (executor/store_check.py)
AGENTS: list = []  # --agents or --tool: the agent classes the hosts run with


def tool_agents(tool: str, shape: str, keep: float) -> list:
    """The progress agent and ``tool`` configured as ``bench/agents.py`` does, on the
    filter ``keep`` (the golden reference: the filter's own function)."""
    from agents import TOOLS

    from icedtea_jupyter.agents.flags import flag_agents
    from icedtea_jupyter.agents.progress import ProgressAgent
    from icedtea_jupyter.session.execution import RunOptions

    fields = {name: [text.replace("near max", "keep") for text in value]
              if name in ("checks", "table_checks", "golden") else value
              for name, value in TOOLS[tool].items()}
    options = RunOptions(**fields)
    reference = {name: f for _, name, f in SHAPES[shape][0](keep)}["keep"]
    return [ProgressAgent, *options.agents, *flag_agents(options, {"near_max": reference})]


INTERACT_EVERY = [0]  # --interact-every: records of θ's input between two interactions


def source(records: list, theta_host: list | None = None) -> Iterator:
    """``records`` in parts of ``INTERACT_EVERY`` (one C ``chain`` for plain and hosted
    runs alike); before each part but the first, ``theta_host[0]`` (once the chain is
    built) receives an interaction as the coordinator's ``interact`` message reaches a
    worker."""
    every = INTERACT_EVERY[0]
    if not every:
        return iter(records)

    def parts() -> Iterator:
        records_left = iter(records)
        for index in range(0, (len(records) + every - 1) // every):
            if index and theta_host:
                theta_host[0].deliver({"type": "interact", "index": index, "trigger": "timer",
                                       "request": None, "origin": None, "checkpoint": False})
            yield islice(records_left, every)
    return chain.from_iterable(parts())


def hosted(shape: str, records: list, keep: float) -> int:
    """Each function in its ``WorkerHost``, θ and everything after it in G(θ)."""
    functions, _, theta = SHAPES[shape]
    run = RunSpec("bench", ("127.0.0.1", 1), b"", STORE[0], tuple(AGENTS),
                  lineage=STORE[0] != "/nonexistent", store_token=STORE_TOKEN)
    theta_host: list = []
    registered = len(CHANNEL[0].hosts)
    stream = source(records, theta_host)
    for i, (api, name, f) in enumerate(functions(keep)):
        if api == "combine":
            spec = OperatorSpec(i, run, "reduceByKey", name, theta=i == theta,
                                in_g=i >= theta, phase="combine")
            functions, memory, serializer = _combining(f)
            stream = CombineFunction(spec, "combine", functions, memory, serializer,
                                     False)(0, stream)
            continue
        spec = OperatorSpec(i, run, api, name, theta=i == theta, in_g=i >= theta)
        stream = PartitionFunction(spec, api, f)(0, stream)
    theta_host += [h for h in CHANNEL[0].hosts[registered:] if h.spec.theta]
    return sum(1 for _ in stream)


class EncodingChannel(RecordingChannel):
    """Keeps what the hosts send, encoded as the control channel's frames are."""

    def send(self, message: dict, body: bytes = b"") -> None:
        protocol.encode(message, body)
        super().send(message, body)


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--keep", type=float, default=0.66, help="share the filter keeps")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="operator")
    parser.add_argument("--lineage", action="store_true", help="hosts capture lineage")
    parser.add_argument("--agents", default="", metavar="NAMES",
                        help="built-in agents every host carries, e.g. samples,summaries")
    parser.add_argument("--tool", help="host this built-in agent too (bench/agents.py's)")
    parser.add_argument("--only", choices=["plain", "hosted", "setup"],
                        help="run this once and exit (for valgrind)")
    parser.add_argument("--interact-every", type=int, default=0, metavar="RECORDS",
                        help="an interaction every RECORDS of θ's input")
    parser.add_argument("--check-period", type=float, default=host_module.CHECK_PERIOD,
                        metavar="SECONDS", help="the hosts' time between two checks (under "
                        "valgrind, ~100x slower, 5 keeps blocks as long as in a worker)")
    parser.add_argument("--worker", action="store_true",
                        help="hosts built as in PySpark's worker (a C guard, no generator)")
    args = parser.parse_args()
    if args.worker:  # task_failures.hook_worker_main finds this in main()'s globals
        globals()["handle_worker_exception"] = lambda exc, *rest: None
    if args.lineage:
        import tempfile

        STORE[0] = tempfile.mkdtemp(prefix="icedtea-per-record-")
        with open(layout.store_token_path(STORE[0]), "w") as out:  # the hosts share it:
            out.write(STORE_TOKEN)  # they write their links there, as on the kernel's disk
    if args.agents:
        from icedtea_jupyter.agents.registry import built_in_agents

        AGENTS[:] = [built_in_agents()[name] for name in args.agents.split(",")]
    if args.tool:
        AGENTS[:] = tool_agents(args.tool, args.shape, args.keep)
    INTERACT_EVERY[0] = args.interact_every
    host_module.CHECK_PERIOD = args.check_period
    channel = EncodingChannel()
    CHANNEL[:] = [channel]
    host_module.channel_for = lambda run: channel  # no coordinator: what would be sent is kept
    records = SHAPES[args.shape][1](args.records)
    if args.only:
        if args.only != "setup":
            {"plain": plain, "hosted": hosted}[args.only](args.shape, records, args.keep)
        return
    assert plain(args.shape, records, args.keep) == hosted(args.shape, records, args.keep)
    times = {"plain": [], "hosted": []}
    for _ in range(args.repeat):
        times["plain"].append(timed(plain, args.shape, records, args.keep))
        times["hosted"].append(timed(hosted, args.shape, records, args.keep))
    best = {name: min(values) for name, values in times.items()}
    per_million = {name: 1e6 * s / args.records for name, s in best.items()}
    print(f"{args.shape}: {args.records:,} records, filter keeps {args.keep:.0%}: plain "
          f"{per_million['plain']:.3f} s, hosted {per_million['hosted']:.3f} s a million "
          f"(best of {args.repeat}); ratio {best['hosted'] / best['plain']:.3f}")
    profiler = cProfile.Profile()
    profiler.runcall(hosted, args.shape, records, args.keep)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-1400:])


if __name__ == "__main__":
    main()
