"""icedtea-jupyter: time-travel debugging for PySpark pipelines, inside Jupyter.

``%load_ext icedtea_jupyter``, then ``%%icedtea`` on a cell of PySpark code.
Imports are lazy so that Spark's Python workers, which import
``icedtea_jupyter.executor``, never load IPython, pandas views or the comm layer.
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Operator": ("icedtea_jupyter.executor.operator", "Operator"),
    "Agent": ("icedtea_jupyter.executor.agent", "Agent"),
    "AgentContext": ("icedtea_jupyter.executor.agent", "AgentContext"),
    "CoordinatorAgent": ("icedtea_jupyter.coordinator.agent", "CoordinatorAgent"),
    "Run": ("icedtea_jupyter.session.run", "Run"),
    "named": ("icedtea_jupyter.instrument.naming", "named"),
    "log_result": ("icedtea_jupyter.executor.log_result", "log_result"),
    "runs": ("icedtea_jupyter.session.registry", "runs"),
    "last_run": ("icedtea_jupyter.session.registry", "last_run"),
    "open_run": ("icedtea_jupyter.session.registry", "open_run"),
    "record": ("icedtea_jupyter.session.execution", "start_run"),
    "RunOptions": ("icedtea_jupyter.session.execution", "RunOptions"),
    "store_usage": ("icedtea_jupyter.session.versions", "store_usage"),
    "config": ("icedtea_jupyter.config", "config"),
}

__all__ = sorted(_LAZY) + ["load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'icedtea_jupyter' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    from .magic import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .magic import unload

    unload(ipython)


def _jupyter_labextension_paths() -> list[dict]:
    return [{"src": "labextension", "dest": "icedtea-jupyter"}]
