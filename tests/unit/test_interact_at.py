"""``--interact-at``: how the points are written and read, refused with a clear message,
and how the coordinator's book takes pinned interactions."""
import json

import pytest
from IPython.core.error import UsageError

from icedtea_jupyter.coordinator.interactions import InteractionBook
from icedtea_jupyter.magic import parse_options
from icedtea_jupyter.snapshots.pinned import (
    BadInteractAt,
    format_interact_at,
    parse_interact_at,
    points_json,
)


def test_points_are_read_inline_and_written_back():
    points = parse_interact_at("0:1000 1:end, 0:2000 ,1:500")
    assert points == ({0: 1000, 1: None}, {0: 2000}, {1: 500})
    assert parse_interact_at(format_interact_at(points)) == points


def test_points_are_read_from_the_json_file_an_export_writes(tmp_path):
    points = ({0: 12, 1: 0}, {0: 40, 1: None})
    path = tmp_path / "pins.json"
    path.write_text(json.dumps({"run": "r1", "interactions": points_json(points)}))
    assert parse_interact_at(str(path)) == points
    path.write_text(json.dumps(points_json(points)))  # a bare list too
    assert parse_interact_at(str(path)) == points


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("0:10,,1:5", "interaction 2 is empty"),
    ("0-10", "'0-10' in interaction 1 is not PARTITION:COUNT"),
    ("0:ten", "the count in '0:ten' \\(interaction 1\\) is not a whole number"),
    ("x:10", "the partition in 'x:10' \\(interaction 1\\) is not a whole number"),
    ("0:10, 1:-3", "the count in '1:-3' \\(interaction 2\\) is negative"),
    ("0:10 0:20", "names partition 0 twice; separate interactions with commas"),
    ("missing.json", "no file 'missing.json'"),
])
def test_bad_points_are_refused_saying_where(text, message):
    with pytest.raises(BadInteractAt, match=message):
        parse_interact_at(text)


def test_the_magic_refuses_bad_points_before_running():
    with pytest.raises(UsageError, match=r"^%%icedtea: --interact-at: interaction 1 names"):
        parse_options("--interact-at '0:1 0:2'", {})
    options, _ = parse_options("--interact-at '0:1 1:end, 1:9'", {})
    assert options.interact_at == "0:1 1:end, 1:9"


class Book:
    """A real InteractionBook, its broadcasts and θ's running workers under the test's
    control."""

    def __init__(self, tmp_path, running):
        self.sent = []
        self.running = running
        self.book = InteractionBook(str(tmp_path), lambda: set(self.running), self.sent.append,
                                    started=1.0)
        self.book.theta_operator = lambda: 7

    def report(self, index, partition, operator=7):
        key = (operator, 1, partition, 0, partition)
        message = {"type": "snapshot", "worker": {"operator": operator}, "index": index,
                   "count": 5, "status": "running", "delta": {}}
        self.book.on_snapshots([(message, key)])


def test_a_pinned_interaction_waits_for_its_partitions_then_asks_the_others(tmp_path):
    theta = {p: (7, 1, p, 0, p) for p in range(3)}
    book = Book(tmp_path, [theta[0], theta[1], theta[2]])
    book.book.pin([{0: 10, 1: None}, {2: 0}])
    assert [i["trigger"] for i in book.book.interactions] == ["initial", "pinned", "pinned"]
    book.report(1, 0)
    book.report(1, 0, operator=8)  # a downstream worker of θ's chain: not θ
    book.report(2, 2)  # I2 names only partition 2: released, partitions 0 and 1 asked
    assert [m["index"] for m in book.sent] == [2]
    assert not book.book.interactions[2]["complete"]
    book.book.worker_ended(theta[1])  # partition 1 ended: I1 has all it names
    assert [m["index"] for m in book.sent] == [2, 1]
    assert not book.book.interactions[1]["complete"]  # partition 2, unnamed, is asked
    book.report(1, 2)
    assert book.book.interactions[1]["complete"]
    assert not book.book.interactions[2]["complete"]  # partition 0 is still asked
    book.report(2, 0)
    assert all(i["complete"] for i in book.book.interactions)
    assert book.book.interactions[1]["time"] > 1.0  # when it was released, not the start
    assert book.book.wait(1, 0.1) and book.book.wait(2, 0.1)


def test_a_report_is_stored_and_kept_in_the_live_history_alike(tmp_path):
    """A worker's report is encoded once: the store's line and the live history's packed
    copy give back the same delta (a large final state, tagged values among it)."""
    from icedtea_jupyter.snapshots.deltas import apply_delta
    from icedtea_jupyter.store.run_store import read_lines

    book = Book(tmp_path, [])
    delta = {"full": {"counts": {f"u{i}": i for i in range(3000)},
                      "big": {"$t": "int", "v": str(2 ** 70)}, "name": "é\x00"}}
    message = {"type": "snapshot", "worker": {"operator": 7}, "index": 1, "count": 9,
               "status": "final", "delta": delta}
    book.book.on_snapshots([(message, (7, 1, 0, 0, 0))])
    _, entries = book.book.copies()
    stored = read_lines(str(tmp_path / "snapshots.jsonl"))
    assert [e["count"] for e in stored] == [9] and "type" not in stored[0]
    assert apply_delta(None, entries[-1]["delta"]) == apply_delta(None, stored[0]["delta"]) \
        == delta["full"]
