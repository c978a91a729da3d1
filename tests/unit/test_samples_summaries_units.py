"""The samples agent's reservoir and merge, the summaries agent's sketches and the
comparison of two runs' summaries, without Spark."""
import random
from collections import Counter

import pandas as pd
import pytest

from icedtea_jupyter.agents.fields import plain_fields
from icedtea_jupyter.agents.samples import merge_reservoirs, reservoir_stream
from icedtea_jupyter.agents.summaries import FieldSketch, fold
from icedtea_jupyter.summaries import summary_diff, summary_frame


def sampled(n, size, seed):
    reservoir = []
    passed = list(reservoir_stream(iter(range(n)), reservoir, size, random.Random(seed)))
    assert passed == list(range(n))  # the stream itself is unchanged
    return reservoir


def test_a_reservoir_keeps_all_of_a_small_input_and_k_distinct_of_a_large_one():
    assert sorted(sampled(50, 100, 0)) == list(range(50))
    big = sampled(100_000, 100, 1)
    assert len(big) == len(set(big)) == 100


def test_every_record_is_equally_likely_to_be_kept():
    hits = Counter(x for seed in range(2000) for x in sampled(200, 20, seed))
    # each of 200 records is kept with probability 20/200: 200 expected per record
    assert min(hits.values()) > 140 and max(hits.values()) < 260
    assert sum(hits[x] for x in range(100)) == pytest.approx(20_000, rel=0.05)  # no drift


def test_merged_reservoirs_draw_in_proportion_to_each_part_s_input():
    parts = [(9000, list(range(100))), (1000, list(range(1000, 1100)))]
    picks = Counter(i for seed in range(300)
                    for i, _ in merge_reservoirs(parts, 100, random.Random(seed)))
    assert picks[1] / sum(picks.values()) == pytest.approx(0.1, abs=0.02)
    merged = merge_reservoirs([(3, [1, 2, 3]), (2, [7, 8])], 100, random.Random(0))
    assert sorted(r for _, r in merged) == [1, 2, 3, 7, 8]  # fewer records than K: all


def test_fields_of_rows_dicts_tuples_and_scalars():
    from pyspark.sql import Row

    assert plain_fields(Row(a=1, b="x")) == {"a": 1, "b": "x"}
    assert plain_fields({"k": [1, 2]}) == {"k": "[1, 2]"}
    assert plain_fields((1, None)) == {"_1": 1, "_2": None}
    assert plain_fields(2.5) == {"value": 2.5}


def planted(n=5000, shift=0.0, null_text=False):
    return [(i, None if null_text or i % 7 == 0 else f"w{i % 50}", float(i % 200) + shift)
            for i in range(n)]


def stored(records, parts=3):
    """A merged summary as the coordinator stores it, from ``parts`` workers' sketches."""
    merged = {}
    for p in range(parts):
        sketches = {}
        chunk = records[p::parts]
        fold(sketches, chunk[:len(chunk) // 2])  # two heartbeats
        fold(sketches, chunk[len(chunk) // 2:])
        for name, sketch in sketches.items():
            again = FieldSketch.from_json(sketch.to_json())
            merged[name] = again if name not in merged else (merged[name].merge(again)
                                                             or merged[name])
    return {"records": len(records), "rate": 1.0,
            "fields": {name: s.to_json() for name, s in merged.items()}}


def test_summaries_agree_with_pandas_on_a_planted_input():
    records = planted()
    frame = summary_frame(stored(records)).set_index("field")
    expected = pd.DataFrame(records, columns=["_1", "_2", "_3"])
    assert frame.loc["_2", "nulls"] == expected["_2"].isna().sum()
    assert frame.loc["_2", "count"] == len(records)
    assert frame.loc["_2", "distinct"] == pytest.approx(expected["_2"].nunique(), abs=1)
    assert frame.loc["_3", "mean"] == pytest.approx(expected["_3"].mean())
    assert (frame.loc["_3", "min"], frame.loc["_3", "max"]) == (0.0, 199.0)
    assert frame.loc["_1", "distinct"] == pytest.approx(len(records), rel=0.05)
    rank = (expected["_3"] <= frame.loc["_3", "p50"]).mean()
    assert rank == pytest.approx(0.5, abs=0.03)


def test_mixed_shapes_are_folded_field_by_field():
    sketches = {}
    fold(sketches, [{"a": 1}, {"b": "x"}, (5,)])
    assert {n: (s.count, s.nulls) for n, s in sketches.items()} == \
        {"a": (3, 2), "b": (3, 2), "_1": (3, 2)}


def test_diff_finds_the_planted_shift_and_null_field_and_nothing_on_a_rerun():
    before = {"parse": stored(planted())}
    assert summary_diff(before, {"parse": stored(planted())}).empty
    after = {"parse": stored(planted(shift=80.0, null_text=True))}
    diff = summary_diff(before, after)
    assert set(zip(diff["field"], diff["change"])) == {("_3", "distribution shifted"),
                                                       ("_2", "became null")}
    fewer = summary_diff(before, {"parse": stored(planted(n=4000))})
    assert ("*", "count changed") in set(zip(fewer["field"], fewer["change"]))


def test_a_sampled_summary_scales_its_counts_and_a_rerun_of_it_differs_in_nothing():
    from icedtea_jupyter.agents.streams import bernoulli_gaps
    from icedtea_jupyter.executor.picks import picked_stream

    def sampled_summary(records, seed):
        picked = []
        passed = list(picked_stream(iter(records), [(bernoulli_gaps(0.02, random.Random(seed)),
                                                     picked.append)]))
        assert passed == records
        sketches = {}
        fold(sketches, picked)
        return {"records": len(records), "rate": 0.02,
                "fields": {n: s.to_json() for n, s in sketches.items()}}

    records = planted(n=50_000)
    frame = summary_frame(sampled_summary(records, 1)).set_index("field")
    assert frame.loc["_1", "count"] == 50_000 and frame.loc["_1", "sampled"] < 1500
    assert frame.loc["_2", "nulls"] == pytest.approx(50_000 / 7, rel=0.25)
    for seed in range(2, 6):  # other samples of the same data: no change found
        assert summary_diff({"p": sampled_summary(records, 1)},
                            {"p": sampled_summary(records, seed)}).empty


def test_one_stream_serves_several_pickers_and_a_record_two_pick_reaches_both():
    from icedtea_jupyter.executor.picks import picked_stream

    firsts, evens = [], []
    passed = list(picked_stream(iter(range(20)), [(iter([0, 0, 0]), firsts.append),
                                                 (iter([0] + [1] * 9), evens.append)]))
    assert passed == list(range(20))
    assert firsts == [0, 1, 2] and evens == list(range(0, 20, 2))
