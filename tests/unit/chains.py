"""Chains of hosted functions in one task, as PySpark pulls them, and the plain chain."""
from itertools import chain

from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec
from icedtea_jupyter.executor.wrappers import PartitionFunction

from .fakes import RecordingChannel

IN_WORKER = {"on": False}  # set by the ``task_modes`` fixture (conftest.py)


def hosted_chain(monkeypatch, functions, agents=(), theta=None, n=10_000, in_worker=None,
                 source=None):
    """``functions``: (api, f) in chain order, each in its own host of one task; built
    and pulled as PySpark's worker does (inside ``main``) if ``in_worker``, else directly;
    their input ``range(n)``, or ``source`` (Spark's input)."""
    channel = RecordingChannel()
    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    run = RunSpec("run-1", ("127.0.0.1", 1), b"", "/nonexistent", tuple(agents))

    def build():
        stream = iter(range(n) if source is None else source)
        for i, (api, f) in enumerate(functions):
            spec = OperatorSpec(i, run, api, f"op{i}", theta=i == theta,
                                in_g=theta is not None and i >= theta)
            stream = PartitionFunction(spec, api, f)(0, stream)
        return stream

    in_worker = IN_WORKER["on"] if in_worker is None else in_worker
    return (main(build, []) if in_worker else build()), channel


def handle_worker_exception(e, outfile):
    """PySpark's worker reports a task's exception here (before it exits)."""
    outfile.append(e)


def main(build, outfile):
    """PySpark's worker ``main`` as hosts see it (its ``process``): the task's iterator is
    built and pulled inside it and closed if it can be; an exception goes to
    ``handle_worker_exception``. A generator here, so that a test pulls the outputs."""
    try:
        out_iter = build()
        try:
            yield from out_iter  # PySpark's serializer.dump_stream(out_iter, outfile)
        finally:
            if hasattr(out_iter, "close"):
                out_iter.close()
    except GeneratorExit:
        raise
    except BaseException as e:
        handle_worker_exception(e, outfile)
        raise


def plain_chain(functions, n=10_000):
    stream = iter(range(n))
    for api, f in functions:
        stream = {"map": lambda s, f=f: map(f, s), "filter": lambda s, f=f: filter(f, s),
                  "flatMap": lambda s, f=f: chain.from_iterable(map(f, s)),
                  "mapPartitions": lambda s, f=f: f(s)}[api](stream)
    return list(stream)


def ended_by_operator(channel):
    return {m["worker"]["operator"]: m for m in channel.ended}
