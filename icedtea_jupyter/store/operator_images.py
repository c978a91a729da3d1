"""The operators of a run as they were before it ran (``operators/`` in ``layout.py``).

The replay engine starts every replayed worker from a fresh copy of its operator: the
wrapper Spark shipped (kind of loop, the user's function or ``Operator``), pickled with
cloudpickle when Spark took it for a job (``executor/shipping.py``; at the cell's
end if no job did), without the run's secret. These files hold the
user's own code; load them only from run stores you trust, as any pickle.
"""
from __future__ import annotations

from typing import Any

from . import layout


def write_operator_image(store_path: str, op_id: int, wrapper: Any) -> None:
    """Pickle ``wrapper`` (its spec left out); raises what pickling raises."""
    from pyspark import cloudpickle

    clone = object.__new__(type(wrapper))  # not copy.copy: that would call __getstate__
    clone.__dict__.update(vars(wrapper))
    clone.spec = None
    data = cloudpickle.dumps(clone)
    with layout.whole_file(layout.operator_image_path(store_path, op_id)) as tmp, \
            open(tmp, "wb") as out:
        out.write(data)


def read_operator_image(store_path: str, op_id: int) -> bytes:
    """The pickled wrapper of ``op_id``; ``LookupError`` if the run did not keep one."""
    try:
        with open(layout.operator_image_path(store_path, op_id), "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise LookupError(f"the run kept no replayable copy of operator {op_id}") from None
