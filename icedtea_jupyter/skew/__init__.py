"""Skew (Reshape): per-partition loads, heavy keys, the skew test, advice, mitigation.

``run.skew(operator)`` returns a ``SkewReport``; ``Salt`` and ``unsalt`` are the pieces
of the salted two-stage aggregation its advice writes (``executor/salting.py``).
"""
from ..executor.salting import Salt, Salted, unsalt
from .advice import Advice
from .mitigate import MitigationRefused
from .report import SkewReport
from .rules import Rules
from .source import SkewSource

__all__ = ["Advice", "MitigationRefused", "Rules", "Salt", "Salted", "SkewReport",
           "SkewSource", "unsalt"]
