"""--trial: the pipeline on a sample of each source first, its alerts and summaries
reported, then the full run (linked to it) — or none, if the trial raised."""
import pytest
from IPython.core.error import UsageError

from icedtea_jupyter import last_run, runs

pytestmark = pytest.mark.spark

N = 200_000
# one record in a hundred has no amount: a defect the 1 % trial meets too
CELL = """
rows = sc.parallelize(range(N), 4).map(lambda i: (i, None if i % 100 == 7 else i % 50))
kept = rows.map(check).setName("check").count()
"""


def check(row):
    if row[1] is None:
        raise ValueError(f"row {row[0]} has no amount")
    return row


def lenient(row):
    return row


def records_into_check(run):
    metrics = run.metrics()
    return metrics[metrics["operator"] == "check"]["records_in"].sum()


def magic(shell, tmp_path, line, namespace):
    shell.user_ns.update(namespace, N=N)
    return shell.run_cell_magic("icedtea", f"--store {tmp_path} --no-panel --wait {line}", CELL)


def test_a_defect_found_by_the_trial_stops_the_full_run(shell, tmp_path, capsys):
    before = len(runs())
    with pytest.raises(UsageError, match="trial run .* raised .*--trial-continue"):
        magic(shell, tmp_path, "--trial 1%", {"check": check})
    trial = last_run()
    assert len(runs()) == before + 1  # the trial only
    assert trial.trial == 0.01 and trial.status == "failed"
    assert "has no amount" in trial.error["message"]
    assert records_into_check(trial) < N // 20  # about 1 % of the source
    assert "trial run" in capsys.readouterr().out


def test_a_clean_trial_reports_its_summaries_then_the_full_run_starts(shell, tmp_path,
                                                                          capsys):
    magic(shell, tmp_path, "--trial 0.01 --agent summaries", {"check": lenient})
    full = last_run()
    assert full.trial is None and full.status == "finished"
    trial = [r for r in runs() if r.id == full.trial_run][0]
    assert trial.trial == 0.01 and trial.status == "finished"
    assert 0 < records_into_check(trial) < N // 20
    assert records_into_check(full) == N
    # the planted nulls show in the trial's summary already: about 1 % of the rows
    summary = trial.summaries("check").set_index("field")
    assert 0 < summary.loc["_2", "nulls"] / summary.loc["_2", "count"] < 0.03
    report = capsys.readouterr().out
    assert f"trial run {trial.id}" in report and "summaries of map, check" in report


def test_trial_continue_runs_the_full_run_after_a_failed_trial(shell, tmp_path):
    with pytest.raises(Exception, match="has no amount"):
        magic(shell, tmp_path, "--trial 1% --trial-continue", {"check": check})
    full = last_run()
    assert full.trial is None and full.trial_run is not None


@pytest.mark.parametrize("share", ["0", "150%", "lots"])
def test_a_bad_share_is_refused(shell, share):
    with pytest.raises(UsageError, match="--trial"):
        shell.run_cell_magic("icedtea", f"--trial {share}", "x = 1")
