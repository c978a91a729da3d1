"""The %%icedtea magic in a real IPython shell: options, --wait, line commands."""
import pytest
from IPython.core.error import UsageError

pytestmark = pytest.mark.spark


def run_magic(shell, line, cell):
    return shell.run_cell_magic("icedtea", line, cell)


def test_wait_records_the_cell_in_the_users_namespace(shell, tmp_path):
    import icedtea_jupyter

    run_magic(shell, f"--wait --no-panel --store {tmp_path}",
              "squares = sc.parallelize(range(5)).map(lambda x: x * x).collect()")
    assert shell.user_ns["squares"] == [0, 1, 4, 9, 16]
    run = icedtea_jupyter.last_run()
    assert run.status == "finished" and run.path.startswith(str(tmp_path))
    assert run in icedtea_jupyter.runs()


def test_unknown_options_are_refused_with_the_usage(shell):
    with pytest.raises(UsageError, match="unrecognized arguments: --frobnicate") as info:
        run_magic(shell, "--frobnicate", "sc.parallelize([1]).count()")
    assert "--wait" in str(info.value)
    assert "did you mean" not in str(info.value)  # nothing is like it


def test_a_misspelt_flag_gets_the_usage_and_the_flag_it_resembles(shell):
    with pytest.raises(UsageError, match=r"unrecognized arguments: --linage "
                                         r"\(did you mean --lineage\?\)") as info:
        run_magic(shell, "--wait --linage", "sc.parallelize([1]).count()")
    assert "usage: %%icedtea" in str(info.value)


def test_an_agent_that_is_not_an_agent_is_refused(shell):
    shell.user_ns["NotAnAgent"] = object
    with pytest.raises(UsageError, match="nor an icedtea_jupyter.Agent subclass"):
        run_magic(shell, "--agent NotAnAgent", "sc.parallelize([1]).count()")


def test_an_empty_cell_is_refused(shell):
    with pytest.raises(UsageError, match="empty"):
        run_magic(shell, "", "   \n")


def test_wait_reraises_the_cells_error_after_recording_it(shell, tmp_path):
    import icedtea_jupyter
    from icedtea_jupyter.session.execution import RunFailed

    with pytest.raises(RunFailed, match="operator 'map' on partition 1 raised "
                                         "ZeroDivisionError.*culprit record: 0"):
        run_magic(shell, f"--wait --no-panel --store {tmp_path}",
                  "sc.parallelize([1, 0], 2).map(lambda x: 1 // x).collect()")
    run = icedtea_jupyter.last_run()
    assert run.status == "failed" and run.error["record"]["value"] == 0
    with pytest.raises(NameError):  # no operator to blame: the cell's own error
        run_magic(shell, f"--wait --no-panel --store {tmp_path}", "nothing_here")


def test_line_magic_lists_and_reopens_runs(shell, tmp_path):
    run_magic(shell, f"--wait --no-panel --store {tmp_path}", "sc.parallelize([1]).count()")
    listed = shell.run_line_magic("icedtea", "runs")
    path = listed[-1]["path"]
    assert shell.run_line_magic("icedtea", f"open {path}").path == path
    with pytest.raises(UsageError):
        shell.run_line_magic("icedtea", "bogus")
    with pytest.raises(UsageError, match="%icedtea open: .*not-a-run"):  # one line, no traceback
        shell.run_line_magic("icedtea", f"open {tmp_path / 'not-a-run'}")


@pytest.mark.parametrize("line, message", [
    ("--interact-every 0", "more than 0 seconds"),
    ("--interact-every soon", "not a number of seconds"),
    ("--interact-when 'row.amount >'", "not a Python expression"),
])
def test_bad_time_travel_options_are_refused(shell, line, message):
    with pytest.raises(UsageError, match=message):
        run_magic(shell, line, "sc.parallelize([1]).count()")


def test_wait_refuses_an_interesting_operator_that_is_not_there_in_one_line(shell, tmp_path):
    with pytest.raises(UsageError, match=r"^%%icedtea: --interesting 'frist' names no Python "
                                         r"operator of this cell \(its Python operators: first\)"):
        run_magic(shell, f"--wait --no-panel --store {tmp_path} --interesting frist",
                  "sc.parallelize(range(3)).map(str).setName('first').collect()")


def test_time_travel_options_reach_the_run(shell, tmp_path):
    import icedtea_jupyter

    run_magic(shell, f"--wait --no-panel --store {tmp_path} --interesting second "
                     "--interact-when 'int(row) > 2'",
              "out = sc.parallelize(range(5), 1).map(str).setName('first')"
              ".map(int).setName('second').collect()")
    run = icedtea_jupyter.last_run()
    assert run.dag.interesting.name == "second"
    assert [n.name for n in run.dag.g_theta] == ["second"]
    assert [i.trigger for i in run.interactions] == ["initial", "condition", "condition"]
