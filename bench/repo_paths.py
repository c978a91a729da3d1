"""Import first in a benchmark run as ``python bench/NAME.py`` from anywhere: puts this
checkout's ``bench/`` and root first on ``sys.path`` and on Spark's Python workers'
``PYTHONPATH``. Without it the driver imports ``icedtea_jupyter`` from wherever the
virtualenv's editable install points (another checkout), and so do the workers, which
also unpickle ``bench/overhead.py``'s functions by module."""
from __future__ import annotations

import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path[:0] = [BENCH, ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [BENCH, ROOT] + [p for p in [os.environ.get("PYTHONPATH", "")] if p])
