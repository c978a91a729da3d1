"""A real standalone Spark cluster on loopback for the cluster tests: a master and
workers as separate JVM processes, each worker on a loopback address of its own
(127.0.0.1, 127.0.0.2, …: separate hosts to Spark, so a speculative copy of a task may
run beside the original)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.waiting import wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def alive_workers(webui_port: int) -> int:
    """Workers registered with the master, as its web UI's JSON says (0 if it does not
    answer yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui_port}/json/", timeout=2) as r:
            return json.load(r).get("aliveworkers", 0)
    except (OSError, ValueError):
        return 0


def worker_command(spark_class: str, url: str, host: str, cores: int,
                   private: Path | None) -> list[str]:
    """A standalone worker on ``host``; with ``private``, in a mount namespace of its own
    where an empty tmpfs covers the folder ``private``: its executors and their Python
    workers cannot see what is there (as on YARN or Kubernetes), nor the driver what
    they write there."""
    command = [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", host,
               "--cores", str(cores), "--memory", "2g", "--webui-port", str(free_port())]
    if private is None:
        return command
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs tmpfs "$0" && exec "$@"', str(private), *command]


@contextmanager
def standalone_cluster(logs: Path, workers: int = 1, cores: int = 2,
                       private: Path | None = None,
                       first_host: int = 1) -> Iterator[tuple[str, dict]]:
    """Start a master and ``workers`` workers (on 127.0.0.``first_host`` and on; with
    ``private``, each in its own mount namespace that hides that folder:
    ``worker_command``); yields the master's URL and the environment for drivers;
    stops them all at the end. The workers' SPARK_WORKER_DIR is ``logs/work``:
    ``logs`` must be outside ``private``."""
    import pyspark

    spark_home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(spark_home, "bin", "spark-class")
    env = dict(os.environ, SPARK_HOME=spark_home, SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(logs / "work"))
    port, webui_port = free_port(), free_port()
    processes = [subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(webui_port)],
        env=env, stdout=open(logs / "master.log", "w"), stderr=subprocess.STDOUT)]
    try:
        wait_until(lambda: listening(port), 60, f"the master to listen on 127.0.0.1:{port}",
                   interval=0.1)
        url = f"spark://127.0.0.1:{port}"
        for n in range(first_host, first_host + workers):
            host = f"127.0.0.{n}"
            processes.append(subprocess.Popen(
                worker_command(spark_class, url, host, cores, private),
                env=dict(env, SPARK_LOCAL_IP=host, SPARK_LOCAL_HOSTNAME=host),
                stdout=open(logs / f"worker-{n}.log", "w"), stderr=subprocess.STDOUT))
        wait_until(lambda: alive_workers(webui_port) >= workers, 60,
                   f"{workers} worker(s) to register with the master (see {logs})",
                   interval=0.1)
        yield url, env
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
