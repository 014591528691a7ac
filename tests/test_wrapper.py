"""Tests of the shared wrapper loop (mklcore.wrapper): norms, the iteration contract, the
extension point (a new WeightStep), the SVM's certificate and iteration cap."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
from mklcore.reference import TOY_OPTIMA, toy_problem
from mklcore.wrapper import (SVM_GAP_LIMIT, WeightStep, dual_norm, log_sum_exp, normalize_pnorm,
                             run_wrapper)

SVM_TOL = 1e-8


@pytest.fixture(scope="module")
def toy():
    return toy_problem()


def test_dual_norm_special_cases():
    S = np.array([3.0, 1.0, 0.5, 2.0, -1e-15])
    assert dual_norm(S, 1.0) == 3.0
    assert dual_norm(S, np.inf) == pytest.approx(6.5)
    assert dual_norm(S, 2.0) == pytest.approx(np.linalg.norm(S[:4]))
    assert dual_norm(S, 1.0 + 1e-12) == pytest.approx(3.0, rel=1e-6)


def test_log_sum_exp_is_scipys_logsumexp_bit_for_bit():
    rng = np.random.default_rng(0)
    for trial in range(3000):
        a = rng.normal(size=int(rng.integers(1, 40))) * rng.choice([1e-3, 1.0, 300.0])
        if trial % 3 == 1:
            a[rng.random(a.size) < 0.5] = -np.inf  # zero terms
        if trial % 3 == 2:
            a = np.round(a, 1)  # ties at the maximum
        assert log_sum_exp(a) == logsumexp(a)
    assert np.isnan(log_sum_exp(np.array([np.nan, 1.0])))
    assert log_sum_exp(np.array([-np.inf, -np.inf])) == -np.inf


@pytest.mark.parametrize("solver,options", [
    ("newton", {}), ("analytic", {}), ("cutting_plane", {}),
    ("analytic", {"mode": "interleaved"}), ("newton", {"svm_backend": "smo"})])
@pytest.mark.parametrize("max_iter", [3, 1000])
def test_history_has_n_iter_rows(toy, solver, options, max_iter):
    """Every run records one history row per outer iteration (converged or not)."""
    K, y, C = toy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = lpmkl_solve(K, y, p=2.0, C=C, solver=solver, tol=1e-6, max_iter=max_iter,
                          **options)
    assert res.status == (1 if max_iter == 3 else 0)
    for key, column in res.history.items():
        assert len(column) == res.n_iter, key
    np.testing.assert_array_equal(res.history["weights"][-1] > 0, True)


def test_wrapper_callback_payload_and_stop(toy):
    """The callback sees the Monitor payload plus the iterate; StopIteration gives status 3."""
    K, y, C = toy
    seen = []

    def callback(payload):
        seen.append(payload)
        if payload.n_iter == 2:
            raise StopIteration

    res = lpmkl_solve(K, y, p=2.0, C=C, callback=callback)
    assert res.status == 3 and res.n_iter == 2 and len(res.history["objective"]) == 2
    assert {"n_iter", "objective", "gap", "criterion", "weights", "time", "method",
            "dual_coef", "intercept", "dual_objective", "alpha"} <= set(seen[0])


def test_run_wrapper_with_a_new_weight_step(toy):
    """The module docstring's recipe: a WeightStep subclass is all a new method needs."""
    K, y, C = toy

    class HalfStep(WeightStep):
        p = 2.0
        method, label = "halfstep", "HalfStep (p=2)"

        def step(self, state, oracle):
            target = normalize_pnorm(np.cbrt(state.theta ** 2 * state.S), self.p)
            return normalize_pnorm(0.5 * (state.theta + target), self.p)

    res = run_wrapper(K, y, HalfStep(), C=C, tol=1e-6, max_iter=500, svm_tol=SVM_TOL)
    assert res.success and res.method == "halfstep"
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[2.0][0], rtol=1e-5)


def test_uncertified_svm_is_no_success(toy):
    """Huge C: the sum-kernel SVM's hinge primal dwarfs its dual, so no success is claimed."""
    K, y, _ = toy
    ok = sum_kernel_svm_solve(K, y, C=1.0)
    assert ok.success and ok.svm_gap < 1e-2
    with pytest.warns(ConvergenceWarning, match=r"the SVM did not converge \(huge C\?\)"):
        res = sum_kernel_svm_solve(100.0 * K, y, C=1e8)
    assert not res.success and res.status == 2 and res.svm_gap > SVM_GAP_LIMIT
    assert "the SVM did not converge (huge C?)" in res.message


@pytest.mark.parametrize("backend", ["libsvm", "smo"])
def test_svm_max_iter_bounds_the_run(toy, backend):
    """svm_max_iter caps every SVM solve; reaching it ends the run with status 2."""
    K, y, C = toy
    with pytest.warns(ConvergenceWarning, match=r"svm_max_iter=3 .*huge C\? unscaled"):
        res = lpmkl_solve(K, y, p=2.0, C=C, svm_backend=backend, svm_max_iter=3,
                          mode="wrapper")
    assert res.status == 2 and not res.success and res.n_svm_calls == 1 and res.n_iter == 1
    assert res.n_smo_iter == 3
    with pytest.raises(ValueError, match="svm_max_iter"):
        lpmkl_solve(K, y, svm_max_iter=0)
