"""Tests of SILP l1-MKL (Sonnenburg et al. 2006), the l1 baseline of Kloft et al. (2009)."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mklcore.lpnorm import lpmkl_solve
from mklcore.reference import TOY_OPTIMA, ReferenceSolverError, solve_primal_cvx, toy_problem
from mklcore.silp import SILPMKLClassifier, silp_solve
from mklcore.simplemkl import simplemkl_solve

L1_RTOL = 1e-4   # l1 solvers agree within 1e-4 relative (Kloft et al. 2009, Sec. 3.1)


@pytest.fixture(scope="module")
def toy():
    return toy_problem()


@pytest.fixture(scope="module")
def toy_run(toy):
    K, y, C = toy
    return silp_solve(K, y, C=C, tol=1e-6, svm_tol=1e-8, mode="wrapper")


def test_reaches_l1_optimum(toy, toy_run):
    """Objective within 1e-4 of the l1 optimum (TOY_OPTIMA and cvxpy)."""
    K, y, C = toy
    res = toy_run
    assert res.success and res.method == "silp" and res.criterion <= 1e-6
    # stop="gap" at p = 1: the better of Δ_rel and the LP bound's gap 1 - eta/J
    assert res.criterion_name == "min(relative duality gap, SIP gap |1 - eta/J|)"
    assert res.criterion == min(res.gap, abs(1.0 - res.eta / res.objective))
    assert res.eta <= TOY_OPTIMA[1.0][0] * (1 + 1e-6)  # the LP value is a lower bound
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[1.0][0], rtol=L1_RTOL)
    try:
        ref = solve_primal_cvx(K, y, C, 1.0)
    except ReferenceSolverError:  # pragma: no cover
        pytest.skip("cvxpy oracle not optimal")
    np.testing.assert_allclose(res.objective, ref["objective"], rtol=L1_RTOL)
    assert res.rigorous_gap >= -1e-8
    assert res.gap >= -1e-10  # Delta_rel is reported for SILP too
    assert res.n_master_solves == res.n_iter - 1 == res.n_svm_calls - 1


def test_weights_and_bounds_every_iteration(toy_run):
    """Simplex weights; LP values are lower bounds, J(theta) upper bounds."""
    h = toy_run.history
    assert np.all(h["weights"] >= 0)
    np.testing.assert_allclose(h["weights"].sum(axis=1), 1.0, atol=1e-12)
    optimum = TOY_OPTIMA[1.0][0]
    eta = h["eta"][np.isfinite(h["eta"])]
    assert np.all(eta <= optimum * (1 + 1e-6))
    assert np.all(h["objective"] >= optimum * (1 - 1e-6))
    assert np.all(np.diff(eta) >= -1e-9 * np.abs(eta[1:]))  # no pruning at this size


def test_l1_solvers_agree(toy, toy_run):
    """Claim T6: SILP, SimpleMKL and the lp cutting plane at p = 1 agree within 1e-4."""
    K, y, C = toy
    smk = simplemkl_solve(K, y, C=C, tol=1e-3, svm_tol=1e-7)
    cp1 = lpmkl_solve(K, y, p=1.0, C=C, solver="cutting_plane", tol=1e-6, svm_tol=1e-8)
    for res in (smk, cp1):
        np.testing.assert_allclose(res.objective, toy_run.objective, rtol=L1_RTOL)


def test_interleaved_chunking(toy, toy_run):
    """Sonnenburg's chunking variant (cuts from partial SVMs) reaches the same optimum."""
    K, y, C = toy
    res = silp_solve(K, y, C=C, tol=1e-6, svm_tol=1e-8, mode="interleaved", mkl_every=10)
    assert res.success and res.mode == "interleaved"
    np.testing.assert_allclose(res.objective, toy_run.objective, rtol=1e-5)
    # cuts of partially optimised alphas stay valid: eta is still a lower bound
    eta = res.history["eta"][np.isfinite(res.history["eta"])]
    assert np.all(eta <= TOY_OPTIMA[1.0][0] * (1 + 1e-6))


def test_pruned_run_still_converges(toy):
    K, y, C = toy
    res = silp_solve(K, y, C=C, tol=1e-5, svm_tol=1e-8, max_cuts=5)
    assert res.success
    assert np.all(res.history["n_cuts"] <= 12)
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[1.0][0], rtol=L1_RTOL)


@pytest.mark.parametrize("kwargs,match", [
    ({"max_cuts": 0}, r"'max_cuts' parameter"),
    ({"max_iter": 1.5}, r"'max_iter' parameter"),
])
def test_bad_parameters(toy, kwargs, match):
    K, y, _ = toy
    with pytest.raises(ValueError, match=match):
        silp_solve(K, y, **kwargs)


def test_bad_inputs(toy):
    K, y, _ = toy
    with pytest.raises(ValueError, match="K and y do not match"):
        silp_solve(K[:, :30, :30], y)
    with pytest.raises(ValueError, match="NaN"):
        silp_solve(np.full_like(K, np.nan), y)


def test_max_iter_and_callback(toy):
    K, y, _ = toy
    with pytest.warns(ConvergenceWarning, match=r"SILP-MKL did not converge in 2 iterations: "
                                                r"SIP gap"):
        res = silp_solve(K, y, max_iter=2, stop="sip")
    assert not res.success and res.status == 1
    with pytest.warns(ConvergenceWarning, match=r"SILP-MKL did not converge in 2 iterations: "
                                                r"min\(relative duality gap, SIP gap"):
        res = silp_solve(K, y, max_iter=2, mode="wrapper")
    assert not res.success and res.status == 1


def test_sip_stop(toy):
    """stop="sip" stops on |1 - eta/J| (Sonnenburg's epsilon_MKL); Δ_rel is still reported."""
    K, y, C = toy
    res = silp_solve(K, y, C=C, tol=1e-6, svm_tol=1e-8, stop="sip")
    assert res.success and res.criterion_name == "SIP gap |1 - eta/J|"
    np.testing.assert_allclose(res.criterion, abs(1.0 - res.eta / res.objective), rtol=1e-12)
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[1.0][0], rtol=L1_RTOL)
    assert res.gap == res.history["gap"][-1]
    with pytest.raises(ValueError, match="stop"):
        silp_solve(K, y, stop="eta")

    calls = []

    def stop(intermediate):
        calls.append(intermediate.objective)
        if len(calls) == 2:
            raise StopIteration

    res = silp_solve(K, y, callback=stop)
    assert res.status == 3 and res.n_iter == 2


def test_estimator():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, "pos", "neg")

    def lin(A, B):
        return A[:, :1] @ B[:, :1].T

    def noise(A, B):
        return A[:, 2:] @ B[:, 2:].T

    clf = SILPMKLClassifier(kernels=[lin, noise]).fit(X, y)
    assert np.isclose(clf.weights_.sum(), 1.0) and clf.weights_[0] > clf.weights_[1]
    assert set(clf.predict(X)) <= {"pos", "neg"} and clf.score(X, y) > 0.9


def test_estimator_reports_the_stopping_value():
    """criterion_ is what the stop compared with tol: for SILP the smaller of the duality gap
    and the LP bound (so converged_ can hold with gap_ > tol), for Newton steps gap_ itself."""
    from mklcore.lpnorm import LpMKLClassifier
    from mklcore.kernels import gaussian

    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    kernels = [gaussian(gamma=g) for g in (0.01, 0.011, 0.1, 1.0)]  # two near-equal kernels
    silp = SILPMKLClassifier(kernels=kernels, tol=1e-3).fit(X, y)
    assert silp.converged_ and silp.criterion_ == silp.result_.criterion <= silp.tol
    assert silp.gap_ > silp.tol  # the case this attribute is for: certified by the LP bound
    assert silp.criterion_ == min(silp.gap_, abs(1 - silp.result_.eta / silp.objective_))
    lp = LpMKLClassifier(kernels=kernels, p=2.0, tol=1e-5).fit(X, y)
    assert lp.converged_ and lp.criterion_ == lp.gap_ <= 1e-5


@pytest.mark.parametrize("mode", ["wrapper", "interleaved"])
@pytest.mark.parametrize("max_iter,status", [(2, 1), (1000, 0)])
def test_history_has_n_iter_rows(toy, mode, max_iter, status):
    K, y, C = toy
    if status == 1:
        with pytest.warns(ConvergenceWarning, match="SILP-MKL did not converge"):
            res = silp_solve(K, y, C=C, tol=1e-8, max_iter=max_iter, mode=mode)
    else:
        res = silp_solve(K, y, C=C, tol=1e-5, max_iter=max_iter, mode=mode)
    assert res.status == status
    assert all(len(v) == res.n_iter for v in res.history.values())


def test_message_names_the_criterion_not_gap(toy):
    """gap is the relative duality gap; the message reports the criterion under its own name."""
    K, y, _ = toy
    with pytest.warns(ConvergenceWarning):
        res = silp_solve(K, y, max_iter=2, mode="wrapper")
    assert res.criterion != res.gap  # the LP bound gives the better certificate here
    assert f"{res.criterion_name} {res.criterion:.1e} > tol" in res.message
    assert f"relative duality gap {res.criterion:.1e}" not in res.message.replace(
        f"min(relative duality gap, SIP gap |1 - eta/J|) {res.criterion:.1e}", "")


def test_svm_max_iter(toy):
    K, y, C = toy
    with pytest.warns(ConvergenceWarning, match="svm_max_iter=2"):
        res = silp_solve(K, y, C=C, svm_max_iter=2, mode="wrapper")
    assert res.status == 2 and res.n_svm_calls == 1


def test_fast_default_is_interleaved_certified_and_agrees(toy):
    """The default (interleaved) SILP is certified and agrees with the wrapper."""
    K, y, C = toy
    fast = silp_solve(K, y, C=C, tol=1e-6, svm_tol=1e-8)
    old = silp_solve(K, y, C=C, tol=1e-6, svm_tol=1e-8, mode="wrapper")
    assert fast.mode == "interleaved" and fast.success and fast.criterion <= 1e-6
    np.testing.assert_allclose(fast.objective, old.objective, rtol=1e-5)
    np.testing.assert_allclose(fast.objective, TOY_OPTIMA[1.0][0], rtol=1e-5)
