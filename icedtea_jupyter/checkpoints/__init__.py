"""Checkpoints: saved, restorable states of G(θ)'s workers, for fast jumps (IcedTea §5-6).

``file.py`` the checkpoint files (written by θ's workers during the run, so it imports
only the standard library and the executor island); ``policy.py`` when the run writes
them; ``planner.py`` which interactions to checkpoint under τ (none, all, online,
offline); ``phase.py`` the checkpointing phase after a run; ``restore.py`` putting them
back into replayed workers for a jump. The replay process's fork checkpoints are in
``replay/preparing.py``. This ``__init__`` imports nothing, so workers load only
``file.py``.
"""
