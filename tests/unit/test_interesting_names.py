"""The ``--interesting`` refusal's names: the operators known, a close name suggested
from them or from the cell's code, and whether the code may still make the name."""
from icedtea_jupyter.instrument.interesting import code_names, named_in_code, refusal


def test_a_close_operator_name_is_suggested():
    message = refusal("sessionise", ["key by user, time", "sessionize"], "out = s.collect()")
    assert "(its Python operators: key by user, time, sessionize); nothing ran. Did you " \
           "mean 'sessionize'? Name one" in message


def test_a_close_name_of_the_cells_code_is_suggested_when_no_operator_is_close():
    cell = "n = rdd.map(str).setName('first').count()\nout = rdd.map(score_of).collect()"
    assert "Did you mean 'score_of'?" in refusal("scoreof", ["first"], cell)
    assert "Did you mean" not in refusal("zzz", ["first"], cell)


def test_no_operator_yet_says_none():
    assert "(its Python operators: none)" in refusal("x", [], "")


def test_the_codes_strings_and_names_and_a_cell_that_does_not_parse():
    assert set(code_names("a = b.setName('enrich')")) == {"a", "b", "setName", "enrich"}
    assert "enrich" in code_names("a = b.setName('enrich'")  # a syntax error: its words


def test_a_map_sides_name_is_in_the_code_when_its_reduce_sides_is():
    assert named_in_code("count (combine)", "x.reduceByKey(add).setName('count')")
    assert not named_in_code("coun", "x.setName('count')")
