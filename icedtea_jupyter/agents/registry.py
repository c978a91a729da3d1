"""Built-in agents by short name: ``%%icedtea --agent samples``.

Every module of this package is looked at; an ``Agent`` subclass defined there whose
``name`` is set is a built-in agent under that name. A new tool is one new module.
"""
from __future__ import annotations

import importlib
import pkgutil

from ..executor.agent import Agent

_ALWAYS_ON = {"progress"}  # attached to every run; naming it again is an error


def built_in_agents() -> dict[str, type[Agent]]:
    """Short name → class, for every built-in agent."""
    found: dict[str, type[Agent]] = {}
    package = importlib.import_module(__package__ or "icedtea_jupyter.agents")
    for module_info in pkgutil.iter_modules(package.__path__):
        if module_info.name == "registry":
            continue
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Agent) and value is not Agent
                    and value.__module__ == module.__name__ and "name" in vars(value)
                    and vars(value)["name"] not in _ALWAYS_ON):
                found[vars(value)["name"]] = value
    return found


def built_in_agent(name: str) -> type[Agent] | None:
    """The built-in agent called ``name``, or None."""
    return built_in_agents().get(name)
