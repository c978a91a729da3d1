"""Executor-side code must not pull driver-side modules into Spark's Python workers."""
import subprocess
import sys

FORBIDDEN = ("IPython", "ipywidgets", "comm", "pandas", "icedtea_jupyter.session",
             "icedtea_jupyter.comm", "icedtea_jupyter.ui", "icedtea_jupyter.store",
             "icedtea_jupyter.instrument")


def test_worker_side_imports_stay_on_the_island():
    code = ("import sys, icedtea_jupyter.executor.wrappers, icedtea_jupyter.agents.progress;"
            "print('\\n'.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    leaked = [m for m in loaded if m.split(".")[0] in FORBIDDEN or
              any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert leaked == []
