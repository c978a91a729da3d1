"""The sidebar's skew.report on a stored run: the flagged partition and its keys, typed by
the schema, and error replies that say what is wrong."""
import pytest

from icedtea_jupyter.comm import target
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor.skew import write_summary
from icedtea_jupyter.session import registry
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store import layout
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.fakes import FakeComm

COMBINERS = {0: 40, 1: 42, 2: 38, 3: 41}  # combiners each reduce partition received
HOT = {"n": 10_000, "capacity": 512, "error": 0, "inputs": {},
       "keys": [["hot", 4000, 2], ["u1", 30, 0], ["u2", 25, 1]]}


def worker(operator, partition, task, records):
    return {"type": "worker_end", "status": "ok", "records_in": records, "records_out": records,
            "bytes_in": records * 10, "seconds": records / 1000, "started": 1.0, "ended": 2.0,
            "exhausted": True, "error": None,
            "worker": {"operator": operator, "partition": partition, "stage": operator,
                       "attempt": 0, "task": task}}


@pytest.fixture
def skewed_run(tmp_path):
    """A stored reduceByKey run: 'sum (combine)' counted 'hot' into reduce partition 2."""
    store = RunStore.create(str(tmp_path), "run-k")
    dag = Dag()
    dag.add("parallelize", "jvm", "parallelize", [])
    dag.add("sum (combine)", "python", "reduceByKey", [0], "combine")
    dag.add("shuffle", "jvm", "shuffle", [1])
    dag.add("sum", "python", "reduceByKey", [2], "merge")
    for p in range(2):
        store.write_worker(worker(1, p, 10 + p, 5000))
        write_summary(layout.skew_path(store.path, worker(1, p, 10 + p, 0)["worker"]),
                      dict(HOT, n=5000, keys=[["hot", 2000, 2], ["u1", 15, 0], ["u2", 12, 1]]))
    for p, combiners in COMBINERS.items():
        store.write_worker(worker(3, p, 20 + p, combiners))
    manifest = {"id": "run-k", "status": "finished", "started": 1.0, "ended": 3.0,
                "cell": "totals = rdd.reduceByKey(add, 4).setName('sum').collect()",
                "dag": dag.to_json(), "options": {"skew": True}}
    store.write_manifest(manifest)
    run = Run(store, manifest, dag)
    registry.add(run)
    yield run
    registry._RUNS.remove(run)


def test_skew_report_flags_the_hot_partition_and_lists_its_keys(skewed_run):
    comm = FakeComm()
    target._on_open(comm, {})
    reply = comm.request("skew.report", run="run-k")  # the reduce side, by default
    assert reply["ok"], reply["error"]
    view = reply["result"]
    assert view["operator"] == "sum" and view["operators"] == ["sum"] and view["recorded"]
    assert view["load"] == "key_records" and view["records"] == 10_000
    assert [k["key"] for k in view["keys"]] == ["'hot'", "'u1'", "'u2'"]
    assert view["keys"][0] == {"key": "'hot'", "count": 4000, "share": 0.4, "partition": 2,
                                "error": 0, "low": 4000, "high": 4000, "exact": True}
    assert view["bound"] == "Counts are exact: every key of the 10,000 records was counted."
    assert {f["partition"] for f in view["skewed"]} == {2}
    assert view["advice"][0]["remedy"] == "salt"
    assert view["spec"]["params"][0]["name"] == "partition"
    by_records = comm.request("skew.report", run="run-k", load="records", factor=1.03)
    assert by_records["ok"] and {f["partition"] for f in by_records["result"]["skewed"]} == {1}
    comm.close()  # every message conformed to the schema


@pytest.mark.parametrize("params, kind, words", [
    ({"operator": "nope"}, "not_found", "no operator 'nope'"),
    ({"operator": "shuffle"}, "bad_request", "is a JVM operator"),
    ({"load": "rows"}, "bad_request", "load='rows' is not a load"),
    ({"run": "missing"}, "not_found", "missing"),
])
def test_bad_skew_requests_get_error_replies_that_say_why(skewed_run, params, kind, words):
    comm = FakeComm()
    target._on_open(comm, {})
    reply = comm.request("skew.report", **{"run": "run-k", **params})
    assert not reply["ok"] and reply["error"]["type"] == kind
    assert words in reply["error"]["message"]


def one_dataset(spec: dict) -> tuple[dict, list]:
    """A spec without its data, and its one dataset's records."""
    rest = {k: v for k, v in spec.items() if k not in ("data", "datasets")}
    (records,) = spec["datasets"].values()
    assert spec["data"]["name"] in spec["datasets"]
    return rest, records


def test_the_sidebars_charts_are_the_reports_altair_charts_with_the_current_data(skewed_run):
    comm = FakeComm()
    target._on_open(comm, {})
    report = skewed_run.skew("sum")
    for name, altair in (("spec", report.chart()), ("heatmap", report.heatmap())):
        view = comm.request("skew.report", run="run-k")["result"][name]
        assert one_dataset(view) == one_dataset(altair.to_dict())
    hot = [r for r in one_dataset(comm.request("skew.report", run="run-k")["result"]["spec"])[1]
           if r["segment"] == "'hot'"]
    assert hot == [{"partition": 2, "segment": "'hot'", "load": 4000.0, "skewed": True}]
    by_records = comm.request("skew.report", run="run-k", load="records")["result"]["spec"]
    assert by_records["title"]["text"] == "sum: records"  # not the cached one
    assert by_records["title"]["subtitle"].startswith("per partition")
    assert {r["segment"] for r in one_dataset(by_records)[1]} == {"other"}
    comm.close()


class LiveRun:
    """A run while it records, whose skew report is made from ``source`` (changed by the
    test between pushes)."""

    def __init__(self, run: Run, source) -> None:
        self.run, self.source = run, source
        self.id, self.dag, self.options, self.status = run.id, run.dag, run.options, "running"

    def skew(self, operator):
        from icedtea_jupyter.skew import SkewReport

        return SkewReport(self.source, operator)


def live_source(run):
    from icedtea_jupyter.session.skew_source import skew_source

    source = skew_source(run)
    source.live = True
    return source


def bar_id(row):
    return row["partition"], row["segment"]


def cell_id(row):
    return row["operator"], row["partition"]


def sort_by(key):
    return lambda row: str(key(row))


def merged(rows, changes, kind, key):
    """``rows`` with a pushed change's rows of ``kind`` put and its removed ones taken out."""
    removed = {tuple(k) if isinstance(k, list) else k for k in changes[f"removed_{kind}"]}
    out = {key(r): r for r in rows if key(r) not in removed}
    out.update({key(r): r for r in changes[kind]})
    return sorted(out.values(), key=sort_by(key))


def test_a_live_run_pushes_its_whole_report_then_only_the_rows_that_changed(skewed_run,
                                                                            monkeypatch):
    from icedtea_jupyter.comm import skew
    from icedtea_jupyter.comm.skew import SkewPusher

    monkeypatch.setattr(skew, "SLOW_GAP", 0.0)  # every push reads the heat map too
    comm = FakeComm()
    target._on_open(comm, {})
    source = live_source(skewed_run)
    pusher = SkewPusher(LiveRun(skewed_run, source), target.broadcast, lambda: True)
    pusher.push()
    (first,) = comm.events("skew.changed")
    report = first["report"]
    assert first["operator"] == "sum" and first["changes"] is None and report["live"]
    pusher.push()
    assert len(comm.events("skew.changed")) == 1  # nothing changed, nothing sent
    # a late map-side sketch: a new heavy key for partition 1; partition 3's reducer grows
    source.sketches[1].append(dict(HOT, n=600, keys=[["late", 500, 1]]))
    next(w for w in source.workers if w["operator"] == 3 and w["partition"] == 3)[
        "records_in"] += 100
    pusher.push()
    changes = comm.events("skew.changed")[-1]["changes"]
    assert {r["partition"] for r in changes["partitions"]} <= {0, 1, 2, 3}
    assert {r["segment"] for r in changes["bars"] if r["partition"] == 1} >= {"'late'"}
    assert [(c["operator"], c["partition"]) for c in changes["cells"]] == [("sum", 3)]
    assert changes["records"] == 10_600 and changes["keys"][1]["key"] == "'late'"
    now = report_now(pusher)
    (_, bars_before), (_, bars_now) = one_dataset(report["spec"]), one_dataset(now["spec"])
    assert merged(bars_before, changes, "bars", bar_id) == sorted(bars_now, key=sort_by(bar_id))
    (_, cells_before), (_, cells_now) = one_dataset(report["heatmap"]), one_dataset(now["heatmap"])
    assert merged(cells_before, changes, "cells", cell_id) == sorted(cells_now,
                                                                    key=sort_by(cell_id))
    assert merged(report["partitions"], changes, "partitions", lambda r: r["partition"]) == \
        now["partitions"]
    comm.close()  # every event conformed to the schema


def report_now(pusher):
    from icedtea_jupyter.comm.skew import report_json

    return report_json(pusher.run, pusher.run.skew("sum"))


def bar_segments(bars, partition):
    return {r["segment"] for r in bars if r["partition"] == partition}


def test_a_key_that_turns_heavy_is_drawn_on_the_next_push_before_it_outgrows_the_heaviest(
        skewed_run):
    from icedtea_jupyter.comm.skew import SkewPusher
    from icedtea_jupyter.skew.chart import NAMED_KEYS

    comm = FakeComm()
    target._on_open(comm, {})
    source = live_source(skewed_run)
    steady = [[f"k{i}", 300, i % 4] for i in range(NAMED_KEYS + 1)]  # outweigh 'late'
    source.sketches[1].append(dict(HOT, n=3000, keys=steady))
    pusher = SkewPusher(LiveRun(skewed_run, source), target.broadcast, lambda: True)
    pusher.push()
    (first,) = comm.events("skew.changed")
    assert "'late'" not in {k["key"] for k in first["report"]["keys"]}
    source.sketches[1].append(dict(HOT, n=150, keys=[["late", 120, 3]]))  # half of what came
    pusher.push()
    changes = comm.events("skew.changed")[-1]["changes"]
    assert "'late'" in bar_segments(changes["bars"], 3)
    late, = [k for k in changes["keys"] if k["key"] == "'late'"]
    assert (late["count"], late["partition"]) == (120, 3)
    heaviest = LiveRun(skewed_run, source).skew("sum").live_view()  # no counts before
    assert "'late'" not in bar_segments(heaviest["bars"], 3)  # in partition 3's rest
    comm.close()  # every event conformed to the schema


def test_rising_keys_are_those_that_grew_by_a_share_of_the_records_counted_since():
    from icedtea_jupyter.skew.keys import CountsWindow, merge_summaries

    early = merge_summaries([dict(HOT, n=1000, keys=[["a", 500, 0], ["b", 400, 1]])])
    window = CountsWindow(seconds=2.0)
    assert window.since(early, now=10.0) == early.counts()
    later = merge_summaries([dict(HOT, n=1000, keys=[["a", 500, 0], ["b", 400, 1]]),
                             dict(HOT, n=1000, keys=[["b", 5, 1], ["c", 900, 2], ["d", 5, 0]])])
    assert window.since(later, now=11.0) == early.counts()  # the oldest within 2 s
    assert list(later.rising(early.counts(), share=0.01)["key"]) == ["c"]
    assert list(later.rising(early.counts(), share=0.004)["key"]) == ["c", "d", "b"]
    assert window.since(later, now=13.5) == later.counts()  # 10.0 left the window


def test_pushes_read_the_heat_map_and_the_load_over_time_at_most_twice_a_second(skewed_run):
    """The sidebar draws the heat map and the load over time at most every 0.5 s: a push
    sooner after the last that read them carries the bars' changes only; the next one
    after the gap carries the cells. (The pusher's clock is the test's: a push on a busy
    machine can take longer than the gap.)"""
    from icedtea_jupyter.comm.skew import SLOW_GAP, SkewPusher

    comm = FakeComm()
    target._on_open(comm, {})
    source = live_source(skewed_run)
    now = [100.0]
    pusher = SkewPusher(LiveRun(skewed_run, source), target.broadcast, lambda: True,
                        clock=lambda: now[0])
    pusher.push()  # the whole report
    source.sketches[1].append(dict(HOT, n=600, keys=[["late", 500, 1]]))
    next(w for w in source.workers if w["operator"] == 3 and w["partition"] == 3)[
        "records_in"] += 100
    now[0] += 0.1
    pusher.push()
    soon = comm.events("skew.changed")[-1]["changes"]
    assert {r["segment"] for r in soon["bars"] if r["partition"] == 1} >= {"'late'"}
    assert soon["cells"] == [] and soon["removed_cells"] == [] and soon["timeline"] == []
    now[0] += SLOW_GAP  # the gap has passed
    pusher.push()
    later = comm.events("skew.changed")[-1]["changes"]
    assert [(c["operator"], c["partition"]) for c in later["cells"]] == [("sum", 3)]
    assert later["bars"] == []  # sent already
    comm.close()


def test_a_heat_map_whose_columns_widen_live_is_sent_whole_with_its_new_spec(skewed_run):
    """Live, partitions report as they start: once more than 40 have, a heat map column
    spans several and the cells sent so far no longer fit the chart drawn. The next push
    carries the whole report, its heat map in columns, not changes to the old chart."""
    comm = FakeComm()
    target._on_open(comm, {})
    source = live_source(skewed_run)
    pusher = skew_pusher(skewed_run, source)
    pusher.push()
    first = comm.events("skew.changed")[-1]["report"]["heatmap"]
    assert first["title"] == "records in per operator and partition"
    reducer = next(w for w in source.workers if w["operator"] == 3)
    source.workers.extend(dict(reducer, partition=p, records_in=10) for p in range(4, 90))
    source.workers.append(dict(reducer, partition=77, records_in=9_999))
    pusher._every_at = float("-inf")
    pusher.push()
    event = comm.events("skew.changed")[-1]
    assert event["changes"] is None and event["report"] is not None
    spec = event["report"]["heatmap"]
    assert spec["title"]["subtitle"] == "a column: 3 partitions, coloured by its heaviest"
    (_, cells) = one_dataset(spec)
    hot = next(c for c in cells if c["operator"] == "sum" and c["heaviest"] == 77)
    assert (hot["partition"], hot["last"], hot["records_in"]) == (75, 77, 10_009)
    assert len({c["partition"] for c in cells}) == 30
    pusher._every_at = float("-inf")
    pusher.push()  # nothing changed since: nothing sent
    assert comm.events("skew.changed")[-1] is event
    comm.close()  # every event conformed to the schema


def skew_pusher(run, source):
    from icedtea_jupyter.comm.skew import SkewPusher

    return SkewPusher(LiveRun(run, source), target.broadcast, lambda: True)


def test_a_run_that_has_ended_gets_no_push_and_no_report_made_for_one(skewed_run):
    """The pusher's last look can come after the run's end: the sidebar asks for the
    final report then, so the pusher neither sends nor makes one (a report of an ended
    run reads every worker file of the store: 2.3 s of the kernel's CPU at 2,400)."""
    from icedtea_jupyter.comm.skew import SkewPusher

    comm = FakeComm()
    target._on_open(comm, {})
    run = LiveRun(skewed_run, live_source(skewed_run))
    made = []
    pusher = SkewPusher(run, target.broadcast, lambda: True,
                        lambda operator: made.append(operator) or run.skew(operator))
    pusher.push()
    assert made == ["sum"] and len(comm.events("skew.changed")) == 1
    run.status = "finished"
    pusher.push()
    assert made == ["sum"] and len(comm.events("skew.changed")) == 1
    comm.close()


def test_a_final_report_reads_the_stores_worker_files_once(skewed_run, monkeypatch):
    """The loads and the sketches of an ended run come from one read of the workers'
    files (two reads took 2 s at 2,400 workers, as the sidebar opened the final view)."""
    reads = []
    table = RunStore.worker_table
    monkeypatch.setattr(RunStore, "worker_table", lambda self: reads.append(1) or table(self))
    report = skewed_run.skew("sum")
    assert report.partitions["records"].sum() == sum(COMBINERS.values())
    assert report.keys["key"].iloc[0] == "hot"
    assert len(reads) == 1
