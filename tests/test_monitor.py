"""The iteration contract (mklcore._result.Monitor) on a toy loop."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mklcore._result import Monitor


def _loop(monitor, gaps, coef=(1.0, -1.0)):
    for g in gaps:
        if monitor.record(objective=1.0 + g, gap=g, weights=[0.5, 0.5]):
            break
    return monitor.finish(weights=[0.5, 0.5], dual_coef=np.asarray(coef), intercept=0.0,
                          objective=1.0, gap=g)


def test_converges_and_history_has_one_row_per_iteration():
    res = _loop(Monitor("toy", tol=1e-2, max_iter=10), [1.0, 0.1, 1e-3, 1e-4])
    assert res.success and res.status == 0 and res.n_iter == 3
    assert all(len(v) == 3 for v in res.history.values())
    assert set(res.history) >= {"objective", "gap", "criterion", "weights", "time"}


def test_max_iter_warns_and_tol_none_runs_budget_silently():
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        res = _loop(Monitor("toy", tol=1e-9, max_iter=2), [1.0, 0.5, 0.1])
    assert res.status == 1 and not res.success
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = _loop(Monitor("toy", tol=None, max_iter=3), [0.0, 0.0, 0.0, 0.0])
    assert res.status == 1 and res.n_iter == 3 and not res.success


def test_tol_zero_stops_only_at_exact_optimum():
    res = _loop(Monitor("toy", tol=0.0, max_iter=5), [1.0, 0.0])
    assert res.status == 0 and res.n_iter == 2


def test_callback_payload_and_stop():
    seen = []

    def cb(r):
        seen.append(sorted(r))
        if r.n_iter == 2:
            raise StopIteration

    res = _loop(Monitor("toy", tol=1e-9, max_iter=10, callback=cb), [1.0, 0.5, 0.1])
    assert res.status == 3 and res.n_iter == 2
    assert seen[0] == ["criterion", "gap", "method", "n_iter", "objective", "time", "weights"]


@pytest.mark.parametrize("bad, match", [
    (dict(coef=(np.nan, 1.0)), "non-finite dual_coef"),
    (dict(coef=(0.0, 0.0)), "empty model"),
])
def test_sanity_gate(bad, match):
    with pytest.warns(ConvergenceWarning, match=match):
        res = _loop(Monitor("toy", tol=1e-2, max_iter=5), [1e-3], **bad)
    assert res.status == 2 and not res.success


def test_infinite_gap_is_not_certified():
    m = Monitor("toy", tol=1e-2, max_iter=5)
    m.record(objective=1.0, gap=0.0, weights=[1.0])
    with pytest.warns(ConvergenceWarning, match="not certified"):
        res = m.finish(weights=[1.0], dual_coef=np.ones(2), intercept=0.0, objective=1.0,
                       gap=np.inf)
    assert res.status == 2
    m = Monitor("toy", tol=1e-2, max_iter=5, certified=False)
    m.record(objective=1.0, gap=np.nan, criterion=0.0, weights=[1.0])
    res = m.finish(weights=[1.0], dual_coef=np.ones(2), intercept=0.0, objective=1.0,
                   gap=np.nan)
    assert res.success


def test_time_limit_ends_a_solver_with_status_1_and_a_message():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from mklcore import TimeLimit, simplemkl_solve, lpmkl_solve

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    K = np.stack([X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)), (1 + X @ X.T) ** 2])
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = simplemkl_solve(K, y, tol=1e-12, callback=TimeLimit(1e-9, callback=seen.append))
    assert res.status == 1 and not res.success and res.n_iter == 1 and len(seen) == 1
    assert "wall-clock budget of 1e-09 s ran out" in res.message
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    # a generous budget changes nothing
    free = lpmkl_solve(K, y, p=2.0, callback=TimeLimit(3600))
    plain = lpmkl_solve(K, y, p=2.0)
    assert free.status == 0 and np.array_equal(free.weights, plain.weights)
    with pytest.raises(ValueError, match="seconds"):
        TimeLimit(0)
    with pytest.raises(TypeError, match="callback"):
        TimeLimit(1, callback=3)
