"""A DataFrame operator after θ in a worker of its own is handed its regenerated
batches up to the count its worker reported at the interaction a jump goes to, then as
θ's steps complete them."""
from types import SimpleNamespace

import numpy as np

from icedtea_jupyter.replay.logs import Target
from icedtea_jupyter.replay.regenerated_feed import (
    AtPartitionEnd,
    AtStageEnd,
    ByRows,
    OwnCounts,
)

BATCHES = ["b0", "b1", "b2", "b3"]


def feed(targets, release=None):
    loads = []

    def records():
        loads.append(1)
        return BATCHES

    return OwnCounts("later", 0, lambda index: targets[index], records,
                     lambda: release or AtPartitionEnd(0, "a join is between")), loads


def theta_at(*positions, ended=False):
    """θ's cursors: partition -> its paths at ``positions`` (θ's inputs taken)."""
    return {p: SimpleNamespace(ended=ended, paths=[SimpleNamespace(position=position)])
            for p, position in enumerate(positions)}


def test_a_jump_hands_over_as_many_batches_as_the_worker_had_processed():
    source, loads = feed([Target(0), Target(2), Target(3), Target(3, True)])
    assert source.next_records({}) == []  # before a jump: nothing
    source.at(0)
    assert source.next_records({}) == [] and not loads  # not started: nothing regenerated
    source.at(1)
    assert source.next_records({}) == ["b0", "b1"]
    assert source.next_records(theta_at(5)) == []  # a step that ends no partition
    assert not source.complete(theta_at(5))
    source.at(2)
    assert source.next_records({}) == ["b2"]


def test_a_finished_worker_gets_every_batch_and_ends():
    source, _ = feed([Target(3, True)])
    source.at(0)
    assert source.next_records({}) == BATCHES
    assert source.complete({})


def test_steps_hand_each_batch_once_theta_has_emitted_the_rows_that_complete_it():
    # θ's batches gave 150, 0, 120 and 30 rows; the operator's batches are 100 rows each
    release = ByRows(0, [150, 0, 120, 30], np.cumsum([100, 100, 100]))
    source, _ = feed([Target(0)], release)
    source.at(0)
    assert source.next_records(theta_at(0)) == []
    assert source.next_records(theta_at(1)) == ["b0"]  # 150 rows: one batch complete
    assert source.next_records(theta_at(2)) == []  # θ's batch gave it no row
    assert source.next_records(theta_at(3)) == ["b1"]  # 270 rows
    assert not source.complete(theta_at(3))
    assert source.next_records(theta_at(4)) == ["b2"]  # 300
    assert not source.complete(theta_at(4))  # θ's partition has not ended
    assert source.next_records(theta_at(4, ended=True)) == ["b3"]  # what its end flushes
    assert source.complete(theta_at(4, ended=True))


def test_a_jump_ahead_of_theta_leaves_the_operator_there_until_theta_catches_up():
    release = ByRows(0, [100, 100, 100, 100], np.cumsum([100, 100, 100, 100]))
    source, _ = feed([Target(3)], release)  # it answered the interaction late
    source.at(0)
    assert source.next_records(theta_at(1)) == ["b0", "b1", "b2"]
    assert source.next_records(theta_at(2)) == []  # it does not go back
    assert source.next_records(theta_at(4)) == ["b3"]


def test_after_a_shuffle_the_records_come_once_every_partition_of_theta_has_ended():
    source, _ = feed([Target(0)], AtStageEnd())
    source.at(0)
    both = theta_at(3, 5, ended=True)
    one = {0: both[0], 1: SimpleNamespace(ended=False, paths=both[1].paths)}
    assert source.next_records(one) == [] and not source.complete(one)
    assert source.next_records(both) == BATCHES and source.complete(both)


def test_rows_not_one_for_one_come_at_the_end_of_thetas_partition():
    release = AtPartitionEnd(0, "Spark runs a Generate between θ and it")
    source, _ = feed([Target(1)], release)
    source.at(0)
    assert source.next_records(theta_at(2)) == ["b0"]
    assert source.next_records(theta_at(7)) == []
    assert source.next_records(theta_at(7, ended=True)) == BATCHES[1:]
    assert "Generate" in release.how and "until θ's partition ends" in release.how
