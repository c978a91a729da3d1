"""A map fed by Spark's input, then a host with a feed of its own (θ, a generator): one
feed runs both (executor/map_feed.py). What a user relies on stays as with two feeds:
PySpark's outputs and exact counts, StopIteration inside the map failing the task, a
failure blamed on the map with its record (its own or its input's), its checks."""
import pytest

from icedtea_jupyter.executor.feeds import RUN
from icedtea_jupyter.executor.map_feed import MapFeed

from .chains import ended_by_operator, hosted_chain, plain_chain

pytestmark = pytest.mark.usefixtures("task_modes")  # each test guarded and in a worker


def seen(rows):
    users = set()
    for x in rows:
        users.add(x % 97)
        if x % 3:
            yield x, len(users)


def parse_at(bad, error=ValueError):
    def parse(x):
        if x == bad:
            raise error("bad line") if error is not StopIteration else StopIteration
        return x * 2
    return parse


@pytest.mark.parametrize("theta", [None, 0, 1])
def test_a_map_then_a_generator_give_pysparks_outputs_and_exact_counts(monkeypatch, theta):
    functions = [("map", lambda x: x + 1), ("mapPartitions", seen), ("filter", lambda r: r[1])]
    stream, channel = hosted_chain(monkeypatch, functions, theta=theta, in_worker=False)
    hosts = stream.gi_frame.f_locals["self"].hosts
    assert isinstance(hosts[1].feed, MapFeed) == (theta != 0)  # a map in G(θ) keeps step
    assert list(stream) == plain_chain(functions)
    ends = ended_by_operator(channel)
    outputs = len(plain_chain(functions[:2]))
    assert [(ends[i]["records_in"], ends[i]["records_out"]) for i in range(3)] == [
        (10_000, 10_000), (10_000, outputs), (outputs, outputs)]
    assert all(e["status"] == "ok" and e["exhausted"] for e in ends.values())


@pytest.mark.parametrize("bad", [0, 1, 300, RUN + 1, 9_999])
def test_stop_iteration_in_the_map_fails_the_task_as_pyspark_does(monkeypatch, bad):
    """PySpark's ``fail_on_stopiteration``: also on the first, a block's first and the
    last record, where the map's input has no record left to tell."""
    stream, channel = hosted_chain(monkeypatch, [("map", parse_at(bad, StopIteration)),
                                                 ("mapPartitions", seen)])
    with pytest.raises(RuntimeError, match="StopIteration"):
        list(stream)
    ends = ended_by_operator(channel)
    assert ends[0]["status"] == "failed" and "'op0'" in ends[0]["error"]["message"]
    assert not any(e["exhausted"] for e in ends.values())


@pytest.mark.parametrize("bad", [0, 1, 300, RUN + 1, 9_999])
def test_a_failing_map_is_blamed_with_its_record_and_count(monkeypatch, bad):
    stream, channel = hosted_chain(monkeypatch, [("map", parse_at(bad)),
                                                 ("mapPartitions", seen)])
    with pytest.raises(ValueError):
        list(stream)
    ends = ended_by_operator(channel)
    error = ends[0]["error"]
    assert ends[0]["status"] == "failed" and error["record"]["value"] == bad
    assert (ends[0]["records_in"], ends[0]["records_out"]) == (bad + 1, bad)
    assert error["records_before"] == bad
    assert ends[1]["status"] == "failed" and ends[1]["error"] is None


def test_a_failing_input_is_blamed_on_the_map_not_the_generator(monkeypatch):
    def spark_input():
        yield from range(2_000)
        raise OSError("the input stream broke")

    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x), ("mapPartitions", seen)],
                                   source=spark_input())
    with pytest.raises(OSError):
        list(stream)
    ends = ended_by_operator(channel)
    assert ends[0]["status"] == "failed" and ends[0]["error"]["exception"] == "OSError"
    assert ends[0]["records_out"] == 2_000
    assert ends[1]["status"] == "failed" and ends[1]["error"] is None


def test_the_map_is_checked_between_blocks_with_a_sample_of_its_input(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: -x - 1),
                                                 ("mapPartitions", seen)], in_worker=False)
    mapper = stream.gi_frame.f_locals["self"].hosts[0]
    checked = []
    real_check = mapper.check
    monkeypatch.setattr(mapper, "check",
                        lambda *a, **k: (checked.append(a), real_check(*a, **k)))
    list(stream)
    assert checked and all(n_in >= n_out for n_in, n_out, _ in checked)
    samples = [record for _, _, record in checked if isinstance(record, int)]
    assert samples and all(record >= 0 for record in samples)  # its inputs, not its outputs
    assert mapper.counts()["bytes_in"] > 0
