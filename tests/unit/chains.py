"""Chains of hosted functions in one task, as PySpark pulls them, and the plain chain."""
from itertools import chain

from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec
from icedtea_jupyter.executor.wrappers import PartitionFunction

from .fakes import RecordingChannel


def hosted_chain(monkeypatch, functions, agents=(), theta=None, n=10_000):
    """``functions``: (api, f) in chain order, each in its own host of one task."""
    channel = RecordingChannel()
    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    run = RunSpec("run-1", ("127.0.0.1", 1), b"", "/nonexistent", tuple(agents))
    stream = iter(range(n))
    for i, (api, f) in enumerate(functions):
        spec = OperatorSpec(i, run, api, f"op{i}", theta=i == theta,
                            in_g=theta is not None and i >= theta)
        stream = PartitionFunction(spec, api, f)(0, stream)
    return stream, channel


def plain_chain(functions, n=10_000):
    stream = iter(range(n))
    for api, f in functions:
        stream = {"map": lambda s, f=f: map(f, s), "filter": lambda s, f=f: filter(f, s),
                  "flatMap": lambda s, f=f: chain.from_iterable(map(f, s)),
                  "mapPartitions": lambda s, f=f: f(s)}[api](stream)
    return list(stream)


def ended_by_operator(channel):
    return {m["worker"]["operator"]: m for m in channel.ended}
