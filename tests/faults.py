"""Operators that fail on purpose, for tests of retries (shipped to workers by value,
like the tests' own modules: see tests/spark/conftest.py)."""


def flaky(x):
    """Raises once: on record 5 of partition 0, in the task's first attempt (Spark retries
    it, and the retry succeeds)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context.partitionId() == 0 and context.attemptNumber() == 0 and x == 5:
        raise RuntimeError("transient failure")
    return x
