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


def test_deep_equal_fast_paths_keep_the_general_rules():
    """JSON's own types take fast paths; the answers are those of the general rules."""
    assert deep_equal({"a": [1, 2.5, "x", None]}, {"a": [1, 2.5, "x", None]})
    assert not deep_equal({"a": 1}, {"a": 1, "b": 2}) and not deep_equal([1, 2], [1, 2, 3])
    assert deep_equal([1, [2]], (1, (2,)))  # lists and tuples compare by their items
    assert not deep_equal({"x": {"y": False}}, {"x": {"y": 0}}) and not deep_equal(0, False)
    assert not deep_equal(float("nan"), float("nan"))
    assert not deep_equal("1", 1) and not deep_equal({"1": 1}, {1: 1})
    from collections import OrderedDict

    assert deep_equal(OrderedDict(a=1), {"a": 1})  # any mapping, through the general rules


def test_identical_bodies_match_without_reading_them_and_nan_still_matches_nothing():
    from toolbench.core.curl_env import Execution, fields_f1
    from toolbench.core.transport import HttpRequest, HttpResponse

    def run(body: bytes) -> Execution:
        return Execution(HttpRequest("GET", "https://h/x"), HttpResponse(200, (), body))

    for body in (b'{"a": 1, "b": [true]}', b"[]", b"{}", b"<r><a>1</a></r>", b"plain", b""):
        assert fields_f1(run(body), run(body)) == dict_f1(run(body).fields(), run(body).fields()) == PRF(1, 1, 1)
    with_nan = b'{"a": NaN, "b": 2}'
    assert fields_f1(run(with_nan), run(with_nan)) == dict_f1({"a": float("nan"), "b": 2}, {"a": float("nan"), "b": 2})
    assert fields_f1(run(with_nan), run(with_nan)).f1 == 0.5
    assert fields_f1(run(b'{"a": 1}'), run(b'{"a": true}')).f1 == 0.0
