"""What cannot arrive is named: a --lineage or --skew run whose workers' files never
reached the store says which workers', from which hosts, and the fix."""
import json

import pytest

from icedtea_jupyter.dag import Dag
from icedtea_jupyter.lineage.tables import NoLineage, load_links
from icedtea_jupyter.store import layout
from icedtea_jupyter.store.missing import missing_skew
from icedtea_jupyter.store.run_store import RunStore

HOSTS = {"127.0.0.2 (vm)": "cannot read /nb/.icedtea/runs/r/.store-token (No such file or "
                           "directory)"}


def recorded(tmp_path, hosts=HOSTS, **options):
    """A run of a word count's split and its map side, each with a successful worker on
    partition 0, recorded with ``options`` on a host that did not share the store."""
    dag = Dag()
    dag.add("split", "python", "flatMap", [])
    combine = dag.add("sum (combine)", "python", "reduceByKey", [0])
    combine.phase = "combine"
    store = RunStore.create(str(tmp_path), "r")
    store.write_manifest({"id": "r", "status": "finished", "options": options,
                          "dag": dag.to_json(), "hosts": hosts})
    for op in (0, 1):
        store.write_worker({"worker": {"operator": op, "partition": 0, "stage": 0,
                                       "attempt": 0, "task": op}, "status": "ok",
                            "records_in": 5, "records_out": 5})
    return store, dag


def test_a_lineage_run_whose_links_never_arrived_names_them_its_hosts_and_the_fix(tmp_path):
    store, _ = recorded(tmp_path, lineage=True)
    for _ in range(2):
        store.append_alert({"source": "artifacts", "artifact": "lineage", "host": "127.0.0.2",
                            "reason": "no answer", "refused": False,
                            "message": "127.0.0.2: the lineage links of 'split' partition 0 "
                                       "did not reach the run store: no answer. ..."})
    with pytest.raises(NoLineage) as raised:
        load_links(store)
    message = str(raised.value)
    assert "recorded with --lineage" in message and "without --lineage" not in message
    assert "2 successful task attempt(s) of 'split', 'sum (combine)'" in message
    assert "127.0.0.2 (vm): did not share it (cannot read" in message
    assert "The workers said (2 alerts): 127.0.0.2: no answer." in message
    assert "Fix: let every executor reach the coordinator" in message


def test_a_run_recorded_without_lineage_still_says_so(tmp_path):
    store, _ = recorded(tmp_path)
    with pytest.raises(NoLineage, match="recorded without --lineage"):
        load_links(store)


def test_an_empty_key_table_of_a_skew_run_is_named_until_a_sketch_arrives(tmp_path):
    store, dag = recorded(tmp_path, skew=True)
    message = missing_skew(store, store.read_manifest(), dag)
    assert "recorded with --skew" in message and "'sum (combine)'" in message
    assert "127.0.0.2 (vm)" in message and "Fix: let every executor reach" in message
    store.append_alert({"source": "artifacts", "artifact": "skew", "host": "127.0.0.2",
                        "reason": "the coordinator could not write it: OSError: disk",
                        "refused": True, "message": "..."})
    message = missing_skew(store, store.read_manifest(), dag)
    assert "127.0.0.2: the coordinator could not write it: OSError: disk." in message
    assert "Fix: the kernel could not write them into the run store" in message
    path = layout.with_parent(layout.skew_path(store.path, {
        "operator": 1, "partition": 0, "stage": 0, "attempt": 0, "task": 1}))
    with open(path, "w") as out:
        json.dump({"n": 5}, out)
    assert missing_skew(store, store.read_manifest(), dag) is None
    assert missing_skew(store, dict(store.read_manifest(), options={}), dag) is None


def test_hosts_that_shared_the_store_leave_the_message_to_the_runs_own_terms(tmp_path):
    store, dag = recorded(tmp_path, hosts={"127.0.0.1 (vm)": "shared"}, lineage=True, skew=True)
    with pytest.raises(NoLineage) as raised:
        load_links(store)
    assert "none of its Python operators (split, sum (combine)) left lineage links" in \
        str(raised.value) and "did not share" not in str(raised.value)
    message = missing_skew(store, store.read_manifest(), dag)
    assert "its key table is empty" in message and "Fix:" not in message
