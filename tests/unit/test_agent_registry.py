"""--agent NAME: built-in agents by short name, the notebook's classes, module.Class."""
import pytest
from IPython.core.error import UsageError

from icedtea_jupyter.agents.progress import ProgressAgent
from icedtea_jupyter.agents.registry import built_in_agents
from icedtea_jupyter.executor.agent import Agent
from icedtea_jupyter.magic import parse_options


class Counting(Agent):
    name = "counting"


def test_every_built_in_agent_resolves_by_its_short_name():
    for name, cls in built_in_agents().items():
        options, _ = parse_options(f"--agent {name}", {})
        assert options.agents == [cls]


def test_the_always_on_progress_agent_is_not_a_choice():
    assert ProgressAgent not in built_in_agents().values()
    with pytest.raises(UsageError, match="neither a built-in agent"):
        parse_options("--agent progress", {})


def test_a_notebook_class_and_a_module_path_resolve():
    options, _ = parse_options("--agent Counting --agent tests.unit.test_agent_registry.Counting",
                               {"Counting": Counting})
    assert [(cls.__module__.rpartition(".")[2], cls.__name__) for cls in options.agents] == \
        [("test_agent_registry", "Counting")] * 2


def test_an_unknown_name_lists_the_built_in_agents():
    with pytest.raises(UsageError, match=r"--agent 'nosuch' is neither a built-in agent \("):
        parse_options("--agent nosuch", {})
