"""The options of the tests' JVMs (Spark drivers: the suite's, the kernels', the
notebooks', a Spark Connect server; a standalone cluster's daemons). They live seconds
to minutes: with the C1 compiler alone and the serial collector they take a fifth less
CPU than with the server defaults (the browser tests: 148 s of CPU instead of 203 s),
and the suite is CPU-bound on two cores."""
import os

JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def set_for_this_process_and_its_children() -> None:
    """PySpark's drivers read ``PYSPARK_SUBMIT_ARGS``, ``spark-class`` daemons
    ``SPARK_DAEMON_JAVA_OPTS``; a value already set wins. The drivers start no web UI:
    each would hold one of the 17 ports Spark tries (4040-4056) for as long as it runs,
    the browser tests' kernels run until the session ends, and once they held them all
    a notebook's SparkContext failed to start (CI: "Service 'SparkUI' could not bind")."""
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS",
                          f"--driver-java-options '{JVM_OPTIONS}' "
                          "--conf spark.ui.enabled=false pyspark-shell")
    os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", JVM_OPTIONS)
