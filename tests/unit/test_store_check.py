"""A worker shares the run store only on evidence: the token the kernel wrote into it."""
from icedtea_jupyter.executor import store_check
from icedtea_jupyter.executor.spec import RunSpec
from icedtea_jupyter.store.run_store import RunStore


def test_a_store_the_kernel_created_shows_its_token_to_a_worker_on_the_same_disk(tmp_path):
    store = RunStore.create(str(tmp_path), "run-a")
    assert len(store.token) == 32
    assert store_check.check(store.path, store.token) == (True, store_check.SHARED)


def test_no_token_file_another_token_or_none_given_mean_not_shared(tmp_path):
    store = RunStore.create(str(tmp_path), "run-b")
    missing = store_check.check(str(tmp_path / "elsewhere"), store.token)
    assert not missing.shared and "cannot read" in missing.reason
    other = store_check.check(store.path, "0" * 32)
    assert not other.shared and "another run's token" in other.reason
    assert not store_check.check(store.path, "").shared


def test_the_view_is_checked_once_per_process_and_run(tmp_path):
    store = RunStore.create(str(tmp_path), "run-c")
    run = RunSpec("run-c", ("127.0.0.1", 1), b"", store.path, store_token=store.token)
    store_check.forget("run-c")
    assert store_check.shares_store(run)
    (tmp_path / "run-c" / ".store-token").unlink()
    assert store_check.shares_store(run)  # cached: not read again per task
    store_check.forget("run-c")
    assert not store_check.shares_store(run)
