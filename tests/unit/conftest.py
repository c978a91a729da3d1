"""Fixtures of the unit tests."""
import pytest

from icedtea_jupyter.dag import Dag
from icedtea_jupyter.session import registry
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store.run_store import RunStore


@pytest.fixture
def stored_run(tmp_path):
    store = RunStore.create(str(tmp_path), "run-a")
    dag = Dag()
    dag.add("source", "jvm", "parallelize", [])
    dag.add("enrich", "python", "mapPartitions", [0])
    manifest = {"id": "run-a", "status": "finished", "started": 1.0, "ended": 3.0,
                "cell": "\nrdd = sc.parallelize(x)\n", "dag": dag.to_json()}
    store.write_manifest(manifest)
    run = Run(store, manifest, dag)
    registry.add(run)
    yield run
    registry._RUNS.remove(run)


@pytest.fixture(params=["guarded", "in worker"])
def task_modes(request, monkeypatch):
    """Chains of hosts built and pulled directly (a guard generator sees their failures)
    or inside PySpark's worker ``main`` (its exception handler tells them)."""
    from . import chains

    monkeypatch.setitem(chains.IN_WORKER, "on", request.param == "in worker")
    return request.param
