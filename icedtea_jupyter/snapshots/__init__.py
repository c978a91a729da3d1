"""Snapshots: the states of G(θ)'s workers at an interaction, and after a jump or a step.

``history.py`` the interactions of a run and every worker's reports behind them
(``run.interactions``, ``History``); ``snapshot.py`` one interaction's states as
recorded (``run.snapshot(k)``, ``Snapshot``); ``debug_snapshot.py`` what the debugger
shows after a jump or a step (``DebugSnapshot``); ``deltas.py`` what changed between
two states, and the reports' deltas applied back. Workers take snapshots in
``executor/timetravel.py`` and encode what changed in ``executor/incremental.py``
(Spark's workers run those, so they stay in the executor island); the coordinator
collects the reports in ``coordinator/interactions.py``. This ``__init__`` imports
nothing.
"""
