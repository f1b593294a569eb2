from toolbench.core.scoring import PRF, best_prf, deep_equal, dict_f1


def test_identical_dicts_score_one():
    assert dict_f1({"a": 1, "b": [1, {"c": 2}]}, {"a": 1, "b": [1, {"c": 2}]}) == PRF(1.0, 1.0, 1.0)


def test_partial_overlap():
    score = dict_f1({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4, "d": 5})
    assert score.precision == 0.5 and score.recall == 0.25
    assert abs(score.f1 - 2 * 0.5 * 0.25 / 0.75) < 1e-12


def test_nested_difference_counts_the_whole_key_as_wrong():
    assert dict_f1({"main": {"temp": 1.0}}, {"main": {"temp": 1.5}}).f1 == 0.0


def test_empty_cases():
    assert dict_f1({}, {"a": 1}).f1 == 0.0
    assert dict_f1({"a": 1}, {}).f1 == 0.0
    assert dict_f1({}, {}).f1 == 1.0


def test_deep_equal_keeps_bool_and_int_apart():
    assert not deep_equal(True, 1)
    assert not deep_equal({"x": [True]}, {"x": [1]})
    assert deep_equal({"x": [1.0]}, {"x": [1]})


def test_best_prf_prefers_first_on_ties():
    scores = [PRF(0.5, 0.5, 0.5), PRF(1, 1, 1), PRF(1, 1, 1)]
    assert best_prf(scores) == (1, PRF(1, 1, 1))
    assert best_prf([]) == (0, PRF(0.0, 0.0, 0.0))
