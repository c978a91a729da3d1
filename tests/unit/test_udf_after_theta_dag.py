"""A UDF column applied to θ's output: its node (made with its column, before it met θ's
DataFrame) joins G(θ) when it gets its parent, and jumps' notes say what of it is not
replayed, and why."""
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.replay.stages import not_replayed


def udf_after_theta() -> tuple[Dag, int, int]:
    """source -> θ; the UDF's node made before θ, then applied to θ's output."""
    dag = Dag()
    source = dag.add("range", "jvm", "range", []).id
    udf = dag.add("tally", "python", "udf", []).id
    theta = dag.add("running", "python", "mapInPandas", [source]).id
    dag.set_interesting(theta)
    return dag, udf, theta


def test_a_udf_joins_g_theta_when_applied_to_theta_output_and_its_readers_follow():
    dag, udf, theta = udf_after_theta()
    assert not dag.node(udf).in_g
    assert dag.attach(udf, theta) == [udf]
    column = dag.add("withColumn", "jvm", "withColumn", [theta, udf])
    assert dag.node(udf).in_g and column.in_g
    assert dag.attach(udf, theta) == []  # once


def test_choosing_theta_again_reaches_a_udf_made_before_its_parent():
    dag, udf, theta = udf_after_theta()
    dag.attach(udf, theta)
    source = dag.node("range").id
    dag.set_interesting(source)  # not a Python operator, but any node spreads the same way
    assert dag.node(theta).in_g and dag.node(udf).in_g
    dag.set_interesting(udf)
    assert not dag.node(theta).in_g


def test_a_udf_the_actions_did_not_need_is_named_as_never_run():
    dag, udf, theta = udf_after_theta()
    dag.attach(udf, theta)
    note = not_replayed(dag, ["running"], [], lambda node: [] if node.id == udf else [0])
    assert note.startswith("'tally' after θ never ran") and "not replayed" not in note


def test_a_window_udf_and_an_unpicklable_one_say_why_and_what_to_do():
    dag, udf, theta = udf_after_theta()
    dag.attach(udf, theta)
    window = not_replayed(dag, ["running"], [], lambda node: [0], {str(udf): {"kind": "window"}})
    assert "'tally' in G(θ) are not replayed: 'tally' is a window UDF after θ" in window
    assert "groupBy(...).agg(...)" in window and "--interesting 'tally'" in window
    assert "the recorder did not see the window it is computed over" in window  # why
    assert "make its .over(...) column in the recorded cell" in window  # what replays it
    pickled = not_replayed(dag, ["running"], [], lambda node: [0],
                           {str(udf): {"kind": "unpicklable", "error": "TypeError: lock"}})
    assert "could not be pickled for replay (TypeError: lock)" in pickled
    assert "make its function picklable" in pickled
