"""A root replay process on in-memory logs, for tests of the process protocol without Spark.

Run as ``python tests/unit/replay_driver.py --fd N --run SCENARIO``; the scenario names
the records and targets below. The engine and everything after it are the real ones.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from icedtea_jupyter.executor.wrappers import PartitionFunction  # noqa: E402
from icedtea_jupyter.replay.debugger import Debugger  # noqa: E402
from icedtea_jupyter.replay.logs import MemoryLogs, Target  # noqa: E402
from icedtea_jupyter.replay.process import main  # noqa: E402
from tests.unit.test_replay_engine import CHAIN, OPERATORS, Inputs  # noqa: E402
from tests.waiting import FileGate  # noqa: E402


def slow(records):
    """θ for the planning test: 20 ms a record, a running count. The sleep is the work
    the planner measures (the test checks the replay took over 7 s): it must stay."""
    count = 0
    for x in records:
        time.sleep(0.02)
        count += 1
        yield x


def held(gate):
    """θ for the cancellation test: a running count that waits at ``gate`` before its
    201st record, so a jump to I2 (400 records) is replaying until the test ends it."""
    def slow(records):
        count = 0
        for x in records:
            if count == 200:
                gate.wait(str(os.getpid()))
            count += 1
            yield x
    return slow


SCENARIOS = {
    # (records per partition, θ's targets per interaction, chain, operators)
    "small": ({0: [(1, 5), (1, 3), (2, 7), (1, 9), (2, 1)], 1: [(3, 4), (3, 8)]},
              [{0: Target(0), 1: Target(0)}, {0: Target(2), 1: Target(1)},
               {0: Target(4), 1: Target(2, True)}, {0: Target(5, True), 1: Target(2, True)}],
              CHAIN, OPERATORS),
    "slow": ({0: list(range(400))}, [{0: Target(0)}, {0: Target(10)}, {0: Target(400)}],
             ["slow"], {"slow": lambda: PartitionFunction(None, "mapPartitions", slow)}),
}


def load(scenario: str) -> Debugger:
    if scenario.startswith("held:"):  # "held:<gate directory>": "slow", waiting at a gate
        data, targets, chain, _ = SCENARIOS["slow"]
        theta = held(FileGate(scenario[len("held:"):]))
        operators = {"slow": lambda: PartitionFunction(None, "mapPartitions", theta)}
    else:
        data, targets, chain, operators = SCENARIOS[scenario]
    memory = MemoryLogs(chain=list(chain), operators=dict(operators), targets=targets)
    return Debugger(memory, Inputs(data), threaded=False)


if __name__ == "__main__":
    main(load_engine=load)
