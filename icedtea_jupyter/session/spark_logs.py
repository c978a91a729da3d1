"""Spark's own log lines about a run's task failures go to the run's log, not the cell.

While a run executes, the JVM loggers that report failed tasks (``ERROR Executor:
Exception in task``, ``WARN TaskSetManager: Lost task``, ``ERROR TaskSetManager: …
aborting job``) write to ``spark.log`` in the run store instead of the driver's stderr,
which ipykernel forwards into the cell. The run explains those failures itself
(``run.error``, the failed attempts in ``workers/``). Afterwards the loggers are as they
were. Only log4j 2 (Spark 3.3 and later) is routed; elsewhere nothing changes. One run
at a time routes: task failures of a run that starts meanwhile go to the first one's log.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LOG = logging.getLogger("icedtea_jupyter")

ROUTED = ("org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
          "org.apache.spark.scheduler.TaskSchedulerImpl")
PATTERN = "%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex"
_LOCK = threading.Lock()
_ROUTING = [False]


@contextmanager
def task_failures_logged_to(sc: Any, path: str) -> Iterator[None]:
    """Within the block, the JVM's task-failure log lines go to ``path``."""
    with _LOCK:
        first = not _ROUTING[0]
        _ROUTING[0] = True
    route = _Route.start(sc, path) if first and sc is not None else None
    try:
        yield
    finally:
        if route is not None:
            route.stop()
        if first:
            with _LOCK:
                _ROUTING[0] = False


class _Route:
    """A file appender and, per routed logger, its own config (no additivity)."""

    def __init__(self, jvm: Any, context: Any, appender: Any, before: dict) -> None:
        self.jvm, self.context, self.appender, self.before = jvm, context, appender, before

    @classmethod
    def start(cls, sc: Any, path: str) -> _Route | None:
        try:
            jvm = sc._jvm
            log4j = jvm.org.apache.logging.log4j
            context = log4j.LogManager.getContext(False)
            config = context.getConfiguration()
            layout = log4j.core.layout.PatternLayout.newBuilder().withPattern(PATTERN) \
                .withConfiguration(config).build()
            appender = log4j.core.appender.FileAppender.newBuilder().withFileName(path) \
                .setName(f"icedtea-{id(path)}").setLayout(layout).setConfiguration(config) \
                .build()
            appender.start()
            config.addAppender(appender)
            loggers = config.getLoggers()
            before = {name: loggers.get(name) for name in ROUTED}
            for name in ROUTED:
                own = log4j.core.config.LoggerConfig(name, log4j.Level.WARN, False)
                own.addAppender(appender, log4j.Level.WARN, None)
                config.addLogger(name, own)
            context.updateLoggers()
            return cls(jvm, context, appender, before)
        except Exception as exc:  # not log4j 2, or no JVM: Spark logs as it did
            LOG.debug("icedtea: Spark's task-failure logs stay where they were: %s: %s",
                      type(exc).__name__, exc)
            return None

    def stop(self) -> None:
        try:
            config = self.context.getConfiguration()
            for name, previous in self.before.items():
                config.removeLogger(name)
                if previous is not None:
                    config.addLogger(name, previous)
            self.context.updateLoggers()
            self.appender.stop()
            config.getAppenders().remove(self.appender.getName())
        except Exception as exc:  # a stopped JVM: nothing left to restore
            LOG.debug("icedtea: could not restore Spark's loggers: %s: %s",
                      type(exc).__name__, exc)
