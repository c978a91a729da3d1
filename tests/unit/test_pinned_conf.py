"""Replay pins the session's SQL configuration to the run's while it regenerates θ's
inputs, in a background thread; the user's next cell may set its own meanwhile, and the
restore must not undo theirs (CI: a cell then ran with Spark's default batch size)."""
from icedtea_jupyter.replay.dataframe_inputs import pin, restore

BATCH = "spark.sql.execution.arrow.maxRecordsPerBatch"
SHUFFLE = "spark.sql.shuffle.partitions"


class Conf:
    """A session's ``RuntimeConfig``: get, set, unset, getAll, isModifiable."""

    def __init__(self, values):
        self.values = dict(values)

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value):
        self.values[key] = value

    def unset(self, key):
        self.values.pop(key, None)

    @property
    def getAll(self):
        return dict(self.values)

    def isModifiable(self, key):
        return True


class Session:
    def __init__(self, values):
        self.conf = Conf(values)


def test_restore_puts_back_what_was_there_before_the_pin():
    session = Session({BATCH: "100", SHUFFLE: "4"})
    changed = pin(session, {BATCH: "70"})
    assert session.conf.values == {BATCH: "70"}  # the run's, and nothing else
    restore(session, changed)
    assert session.conf.values == {BATCH: "100", SHUFFLE: "4"}


def test_a_value_set_while_pinned_stays_after_the_restore():
    session = Session({SHUFFLE: "4"})
    changed = pin(session, {BATCH: "70"})
    session.conf.set(BATCH, "100")  # the user's next cell, meanwhile
    session.conf.unset(SHUFFLE)
    session.conf.set(SHUFFLE, "8")
    restore(session, changed)
    assert session.conf.values == {BATCH: "100", SHUFFLE: "8"}
