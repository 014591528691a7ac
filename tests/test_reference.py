"""Tests of the cvxpy oracles of lp-norm MKL (primal, dual, Tikhonov form, reference optima)."""

import numpy as np
import pytest

import cvxpy  # noqa: F401  hard dependency: a missing install fails, never skips

from mklcore.reference import (TOY_OPTIMA, ReferenceSolverError, factor_kernels,  # noqa: E402
                               solve_dual_cvx, solve_primal_cvx, solve_tikhonov_cvx,
                               theta_from_dual, toy_problem)

# TOY_OPTIMA holds 7-8 significant digits; Clarabel's default accuracy is ~1e-8
TABLE_RTOL = 1e-6
# theta in the table is rounded to 6 decimals
THETA_ATOL = 2e-6
# strong duality between two interior-point solves (agree to <= 2e-8 relative)
DUALITY_RTOL = 1e-6


def _or_skip(fun, *args):
    """Run a cvxpy oracle; skip the comparison unless cvxpy reports 'optimal'."""
    try:
        return fun(*args)
    except ReferenceSolverError as exc:  # pragma: no cover - depends on the solver build
        pytest.skip(f"cvxpy oracle not optimal: {exc}")


@pytest.fixture(scope="module")
def toy():
    return toy_problem()


def test_toy_problem_is_built_as_documented(toy):
    K, y, C = toy
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y_expected = np.sign(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=60))
    np.testing.assert_array_equal(y, y_expected)
    assert K.shape == (4, 60, 60) and C == 1.0
    np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 60.0)
    np.testing.assert_allclose(K[3], X @ X.T * 60 / np.trace(X @ X.T))


def test_factor_kernels_reproduces_the_kernels(toy):
    K, _, _ = toy
    for Km, F in zip(K, factor_kernels(K)):
        np.testing.assert_allclose(F @ F.T, Km, atol=1e-8)


@pytest.mark.parametrize("p", sorted(TOY_OPTIMA), ids=lambda p: f"p={p:.3g}")
def test_primal_matches_table(toy, p):
    """Eq. (6) by cvxpy reaches TOY_OPTIMA."""
    K, y, C = toy
    primal = _or_skip(solve_primal_cvx, K, y, C, p)
    optimum, theta = TOY_OPTIMA[p]
    assert primal["status"] == "optimal"
    np.testing.assert_allclose(primal["objective"], optimum, rtol=TABLE_RTOL)
    if p > 1:  # theta need not be unique for p = 1 (compare objectives only)
        np.testing.assert_allclose(primal["theta"], theta, atol=THETA_ATOL)
    assert np.isclose(np.linalg.norm(primal["theta"], p), 1.0, atol=1e-6)


@pytest.mark.parametrize("p", [1.0, 4 / 3, 2.0, 4.0], ids=lambda p: f"p={p:.3g}")
def test_strong_duality_and_theta_recovery(toy, p):
    """Primal (6) = its dual; theta from the dual formula = primal theta."""
    K, y, C = toy
    primal = _or_skip(solve_primal_cvx, K, y, C, p)
    dual = _or_skip(solve_dual_cvx, K, y, C, p)
    np.testing.assert_allclose(dual["objective"], primal["objective"], rtol=DUALITY_RTOL)
    if p > 1:
        np.testing.assert_allclose(dual["theta"], primal["theta"], atol=1e-5)
    # D_p(alpha) = 1'alpha - ||S||_{p*} at the dual solution is the dual value
    S = dual["S"]
    pstar = np.inf if p == 1 else p / (p - 1)
    value = dual["alpha"].sum() - np.linalg.norm(S, pstar)
    np.testing.assert_allclose(value, dual["objective"], rtol=DUALITY_RTOL)


def test_dual_sum_kernel_limit(toy):
    """p = inf: the dual is the SVM with the unweighted sum kernel (theta = 1)."""
    K, y, C = toy
    dual = _or_skip(solve_dual_cvx, K, y, C, np.inf)
    np.testing.assert_allclose(dual["objective"], TOY_OPTIMA[np.inf][0], rtol=TABLE_RTOL)
    np.testing.assert_array_equal(dual["theta"], np.ones(4))


def test_theta_from_dual_special_cases():
    S = np.array([3.0, 1.0, 0.5, 2.0])
    theta = theta_from_dual(S, 2.0)
    np.testing.assert_allclose(theta, S / np.linalg.norm(S))  # p = 2: theta ∝ S
    assert np.isclose(np.linalg.norm(theta_from_dual(S, 1.05), 1.05), 1.0)
    np.testing.assert_array_equal(theta_from_dual(S, 1.0), [1, 0, 0, 0])


def test_tikhonov_ivanov_map(toy):
    """Theorem 1 of Kloft et al. (2009) with an explicit constant, p = 2, C~ = 0.7, mu = 3."""
    K, y, _ = toy
    p, C_tilde, mu = 2.0, 0.7, 3.0
    tik = _or_skip(solve_tikhonov_cvx, K, y, C_tilde, mu, p)
    w = tik["w_norms"]
    np.testing.assert_allclose(w, [3.17963, 2.19131, 0.72745, 0.77938], atol=2e-5)
    sigma = np.sum(w ** (2 * p / (p + 1)))
    c_prime = (2 * mu * p) ** (1 / (p + 1)) * (p + 1) / (2 * p)
    C = C_tilde * (p + 1) * sigma ** (1 / p) / (2 * p * c_prime)
    np.testing.assert_allclose(C, 0.9118065, rtol=1e-6)
    # theta^Tik from the w's of (4)
    np.testing.assert_allclose(tik["theta"], (w ** 2 / (2 * mu * p)) ** (1 / (p + 1)), rtol=1e-5)
    iv = _or_skip(solve_primal_cvx, K, y, C, p)
    np.testing.assert_allclose(iv["w_norms"], w, rtol=1e-5)
    np.testing.assert_allclose(iv["theta"] / tik["theta"], 0.76771, atol=2e-5)


def test_bad_inputs():
    K, y, C = toy_problem()
    with pytest.raises(ValueError, match="K of shape"):
        solve_primal_cvx(K, y[:-1], C, 2.0)
    with pytest.raises(ValueError, match=r"p must be in \[1, inf\)"):
        solve_tikhonov_cvx(K, y, 1.0, 1.0, np.inf)
