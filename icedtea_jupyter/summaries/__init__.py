"""Summaries of operators' inputs (``--agent summaries``), compared across runs.

``summary_frame`` turns an operator's stored field sketches into a DataFrame;
``summary_diff`` finds what changed between two runs: a shifted distribution, a field
that became null, counts that changed; ``shift_chart`` draws a shifted field.
"""
from .compare import Thresholds, summary_diff
from .frame import summary_frame

__all__ = ["Thresholds", "summary_diff", "summary_frame"]
