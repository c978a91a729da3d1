"""Lineage written ahead on a kernel thread, stopped by the next run."""
import threading
import time

from icedtea_jupyter.lineage import frames_ahead


def test_a_new_run_stops_a_writer_that_is_still_starting():
    """The next run's stop came between the writer's listing and its thread's start (a
    generated pipeline's second run): it joined a thread not started and raised."""
    began = threading.Event()
    writer = frames_ahead.WriteAhead("r1", lambda stop: stop.wait(5))
    start = writer._thread.start

    def slow_start():
        began.set()
        time.sleep(0.2)
        start()

    writer._thread.start = slow_start
    starting = threading.Thread(target=writer.start)
    starting.start()
    began.wait(2)
    frames_ahead.stop_writing_ahead(timeout=5)  # raised RuntimeError before
    starting.join(5)
    assert writer.wait(5) and writer.outcome == "written"
