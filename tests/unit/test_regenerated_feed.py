"""A DataFrame operator after θ in a worker of its own is handed its regenerated
batches up to the count its worker reported at the interaction a jump goes to."""
from icedtea_jupyter.replay.logs import Target
from icedtea_jupyter.replay.regenerated_feed import OwnCounts

BATCHES = ["b0", "b1", "b2", "b3"]


def feed(targets):
    loads = []

    def records():
        loads.append(1)
        return BATCHES

    return OwnCounts("later", 0, lambda index: targets[index], records), loads


def test_a_jump_hands_over_as_many_batches_as_the_worker_had_processed():
    source, loads = feed([Target(0), Target(2), Target(3), Target(3, True)])
    assert source.next_records({}) == []  # before a jump: nothing
    source.at(0)
    assert source.next_records({}) == [] and not loads  # not started: nothing regenerated
    source.at(1)
    assert source.next_records({}) == ["b0", "b1"]
    assert source.next_records({}) == []  # a step over θ's record moves nothing
    assert not source.complete({})
    source.at(2)
    assert source.next_records({}) == ["b2"]


def test_a_finished_worker_gets_every_batch_and_ends():
    source, _ = feed([Target(3, True)])
    source.at(0)
    assert source.next_records({}) == BATCHES
    assert source.complete({})
