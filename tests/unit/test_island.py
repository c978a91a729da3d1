"""Executor-side code must not pull driver-side modules into Spark's Python workers."""
import subprocess
import sys

FORBIDDEN = ("IPython", "ipywidgets", "comm", "pandas", "icedtea_jupyter.session",
             "icedtea_jupyter.comm", "icedtea_jupyter.ui", "icedtea_jupyter.store",
             "icedtea_jupyter.instrument", "icedtea_jupyter.replay",
             "icedtea_jupyter.checkpoints")
# what workers need of those packages (with the packages' import-free __init__): the
# store's layout (stdlib only), to write their own files where it says, and the
# checkpoint file format (stdlib and the executor), to write checkpoints during the run
ALLOWED = ("icedtea_jupyter.store", "icedtea_jupyter.store.layout",
           "icedtea_jupyter.checkpoints", "icedtea_jupyter.checkpoints.file")


def test_worker_side_imports_stay_on_the_island():
    # the built-in agents are imported by workers too; the summaries agent brings Apache
    # DataSketches (and numpy) for its sketches: allowed, as neither is driver-side
    code = ("import sys, icedtea_jupyter.executor.wrappers, icedtea_jupyter.agents.progress,"
            "icedtea_jupyter.agents.samples, icedtea_jupyter.agents.summaries;"
            "print('\\n'.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    leaked = [m for m in loaded if m not in ALLOWED and (m.split(".")[0] in FORBIDDEN or
              any(m == f or m.startswith(f + ".") for f in FORBIDDEN))]
    assert leaked == []
    assert set(ALLOWED) <= set(loaded)  # the exceptions are still needed


def _module_level_imports(lazy: bool = False) -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports at module level
    (``lazy``: in functions too)."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "icedtea_jupyter"
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        tree = ast.parse(path.read_text())
        for node in (ast.walk(tree) if lazy else tree.body):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets.update(f"{target}.{a.name}" if f"{target}.{a.name}" in modules
                               else target for a in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_no_module_imports_itself_back_through_others():
    graph, state, cycles = _module_level_imports(), {}, []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                cycles.append(path[path.index(imported):] + [imported])
            elif imported not in state:
                visit(imported, path + [imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


# store → snapshots, checkpoints → replay, coordinator, versions → session → comm handlers and UI
ABOVE = {"store": {"snapshots", "checkpoints", "replay", "coordinator", "instrument",
                   "session", "comm", "ui", "magic", "versions", "export"},
         "versions": {"replay", "coordinator", "session", "comm", "ui", "magic", "export"},
         "export": {"replay", "coordinator", "session", "comm", "ui", "magic", "instrument"},
         "snapshots": {"replay", "coordinator", "instrument", "session", "comm", "ui", "magic"},
         "checkpoints": {"replay", "coordinator", "instrument", "session", "comm", "ui",
                         "magic"},
         "replay": {"coordinator", "instrument", "session", "comm", "ui", "magic"},
         "coordinator": {"replay", "instrument", "session", "comm", "ui", "magic"},
         "session": {"comm", "ui", "magic"}}


def test_dependencies_point_one_way_even_in_functions():
    def package(module: str) -> str:
        return module.split(".")[1] if "." in module else ""

    wrong = sorted((module, imported) for module, targets in _module_level_imports(True).items()
                   for imported in targets
                   if package(imported) in ABOVE.get(package(module), ()))
    assert wrong == []
