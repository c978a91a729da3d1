"""Which operators each built-in tool sees: the DataFrame UDFs some of them skip.

``--check`` and ``--check-table`` see every Python operator's output rows, DataFrame
UDFs' included (a row UDF's results, a pandas UDF's Series values, mapInPandas',
mapInArrow's and applyInPandas' output rows). ``--tolerate`` sees row, scalar and
aggregate pandas UDFs and applyInPandas' groups (``executor/udf_errors.py``; iterator
UDFs still fail their task). The tools below do not see the APIs listed: a run that has both gets a warning
naming the tool and the operators.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

BATCH_APIS = ("mapInPandas", "mapInArrow")  # iterator of batches in and out
OTHER_UDFS = "udf: iterator"  # a UDF Spark calls with an iterator of batches
PER_CALL_UDFS = (100, 101, 200, 250,  # PythonEvalType: row, Arrow row, scalar pandas/Arrow
                 202, 203, 252, 253)  # aggregate pandas/Arrow: grouped, window
PER_CALL_APIS = ("applyInPandas", "udf", OTHER_UDFS)  # called per row, batch, group
SKIPPED = {  # agent name -> (the tool as the user selects it, the APIs it does not see)
    "tolerate": ("--tolerate", BATCH_APIS + (OTHER_UDFS,)),
    "golden": ("--golden", BATCH_APIS + PER_CALL_APIS),
    "latency": ("--agent latency", BATCH_APIS + PER_CALL_APIS),
    "samples": ("--agent samples", PER_CALL_APIS),
    "summaries": ("--agent summaries", PER_CALL_APIS),
}


def operator_api(api: str, udf: Any = None) -> str:
    """How ``SKIPPED`` names an operator's API: a UDF (``udf``, its UserDefinedFunction)
    Spark calls per row, batch or group is ``udf``, an iterator UDF ``OTHER_UDFS``."""
    if api != "udf" or udf is None or getattr(udf, "evalType", None) in PER_CALL_UDFS:
        return api
    return OTHER_UDFS


def skipped_operators(agent_names: Iterable[str],
                      operators: Iterable[tuple[str, str]]) -> list[str]:
    """One warning per selected tool that does not see some of ``operators`` ((name,
    api) pairs), naming them."""
    operators = list(operators)
    warnings = []
    for name in agent_names:
        if name not in SKIPPED:
            continue
        tool, apis = SKIPPED[name]
        unseen = [f"{op!r} ({api})" for op, api in operators if api in apis]
        if unseen:
            warnings.append(f"{tool} does not see {', '.join(apis)}: "
                            f"{', '.join(unseen)} ran without it; --check and --check-table "
                            "see their output rows")
    return warnings
