"""Live control of a running job (Amber): pause and resume, conditional, exception and
global (COUNT/SUM) breakpoints, and what the user decides at a hit.

``controller.LiveController`` is the coordinator's side (the workers' side is
``executor/control.py``); ``hits.py`` holds what the user sees (``Breakpoint``, ``Hit``,
``PauseReport``); ``global_breakpoints.py`` is Amber's protocol of local targets;
``store/control_files.py`` keeps the records skipped (the quarantine) or replaced,
for replay.
"""
