import pytest


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2,2]")  # 2 threads, 2 attempts per task
               .appName("icedtea-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.python.worker.reuse", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def shell(spark):
    """An IPython shell with the extension loaded and the session's spark and sc."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icedtea_jupyter")
    ip.user_ns.update(spark=spark, sc=spark.sparkContext)
    return ip


@pytest.fixture
def sc(spark):
    return spark.sparkContext


@pytest.fixture
def record(spark, tmp_path):
    """Record a cell's code like %%icedtea --wait does; returns the finished Run."""
    from icedtea_jupyter.session.execution import RunOptions, start_run

    def run_cell(code, namespace=None, timeout=180, **options):
        ns = {"spark": spark, "sc": spark.sparkContext}
        ns.update(namespace or {})
        options.setdefault("store", str(tmp_path / "runs"))
        run = start_run(code, ns, RunOptions(**options))
        run.wait(timeout)
        run.namespace = ns
        return run

    return run_cell


@pytest.fixture(autouse=True)
def _ship_test_module_by_value(request):
    """Operators defined in a test module, the gates they wait at (tests/waiting.py) and
    the operators that fail on purpose (tests/faults.py) travel by value: workers cannot
    import tests."""
    from pyspark import cloudpickle

    from tests import faults, waiting

    modules = [request.module, waiting, faults]
    for module in modules:
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:
            pass
    yield
    for module in modules:
        try:
            cloudpickle.unregister_pickle_by_value(module)
        except ValueError:
            pass
