"""Tests of the compiled SMO engine (mklcore.smo) against LIBSVM (scikit-learn's SVC / SVR)."""

import numpy as np
import pytest
from sklearn.svm import SVC, SVR

from mklcore.smo import (GatedRows, KernelRows, RowSource, StackSMO, WeightedRows, smo_solve,
                         svm_bias)
from mklcore.svm import combine_kernels


def _gaussian(X, width):
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-D / width)


def _problem(n, seed, kind="rbf"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = (-1.0, 1.0)
    K = {"rbf": lambda: _gaussian(X, 4.0), "linear": lambda: X @ X.T,
         "poly": lambda: (1 + X @ X.T / 4) ** 3}[kind]()
    return np.ascontiguousarray(K), y


def _dual(K, y, alpha):
    c = alpha * y
    return float(alpha.sum() - 0.5 * c @ K @ c)


def _svc(K, y, C, tol):
    svc = SVC(kernel="precomputed", C=C, tol=tol, max_iter=10 ** 8).fit(K, y)
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, float(svc.intercept_[0])


def _kkt_violation(K, y, alpha, C):
    """LIBSVM's maximal violating pair m(alpha) - M(alpha)."""
    G = y * (K @ (alpha * y)) - 1.0
    yG = -y * G
    up = np.where(y > 0, alpha < C, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < C)
    return yG[up].max() - yG[low].min()


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("C", [1e-4, 1e-2, 1.0, 100.0, 1e4, 1e6])
def test_engine_matches_libsvm(kind, C):
    """Alpha, bias and dual objective of the engine equal SVC's to the KKT tolerance."""
    if kind == "linear" and C > 100:  # rank 4, not separable: 10^7+ iterations for both
        pytest.skip("ill-posed at this C")
    K, y = _problem(40, seed=int(C * 7) % 13, kind=kind)
    tol = 1e-6
    sol, _ = smo_solve(KernelRows(K), y, C, tol=tol)
    assert sol.converged
    assert np.all(sol.alpha >= 0) and np.all(sol.alpha <= C) and abs(sol.alpha @ y) < 1e-9 * C
    assert _kkt_violation(K, y, sol.alpha, C) < tol
    alpha, b = _svc(K, y, C, tol)
    d_engine, d_svc = _dual(K, y, sol.alpha), _dual(K, y, alpha)
    # both are tol-optimal: their dual values agree to ~ tol * C * n
    assert abs(d_engine - d_svc) <= 1e-6 * max(1.0, abs(d_svc)) + tol * C * y.size
    f_engine = K @ (sol.alpha * y) + sol.intercept
    f_svc = K @ (alpha * y) + b
    scale = max(1.0, np.abs(f_svc).max())
    if C <= 100:  # decision values of a unique optimum
        np.testing.assert_allclose(f_engine, f_svc, atol=1e-3 * scale)


@pytest.mark.parametrize("case", ["duplicates", "constant", "one_positive", "one_sv_pair",
                                  "zero_kernel", "scaled"])
def test_engine_degenerate_problems(case):
    rng = np.random.default_rng(3)
    K, y = _problem(30, seed=5)
    C = 1.0
    if case == "duplicates":  # points 0-9 repeated as 10-19
        idx = np.r_[np.arange(20), np.arange(10)]
        K, y = np.ascontiguousarray(K[np.ix_(idx, idx)]), y[idx]
    elif case == "constant":
        K = np.ones_like(K)
    elif case == "one_positive":
        y = -np.ones(30)
        y[7] = 1.0
    elif case == "one_sv_pair":  # two far-apart clusters: a hard margin with 2 SVs
        X = np.r_[rng.normal(size=(15, 2)) - 20, rng.normal(size=(15, 2)) + 20]
        y = np.r_[-np.ones(15), np.ones(15)]
        K, C = X @ X.T, 1e3
    elif case == "zero_kernel":
        K = np.zeros_like(K)
    elif case == "scaled":
        K = K * 1e6
    sol, _ = smo_solve(KernelRows(K), y, C, tol=1e-6)
    alpha, b = _svc(K, y, C, 1e-6)
    assert sol.converged and np.isfinite(sol.intercept)
    assert abs(_dual(K, y, sol.alpha) - _dual(K, y, alpha)) <= 1e-6 * max(
        1.0, abs(_dual(K, y, alpha))) + 1e-6 * C * y.size
    if case == "one_sv_pair":
        assert np.count_nonzero(sol.alpha) == np.count_nonzero(alpha) == 2
        np.testing.assert_allclose(sol.intercept, b, rtol=1e-6)


def test_engine_paths_give_the_same_solution():
    """Shrinking, a cache of a few rows and a warm start reach the same optimum; a cache of
    two rows and the whole matrix give the same bits (the same rows, the same path)."""
    K, y = _problem(200, seed=1)
    C, tol = 10.0, 1e-8
    full, _ = smo_solve(KernelRows(K), y, C, tol=tol, shrinking=False)

    class Rows(RowSource):  # the same matrix, served row by row
        n = K.shape[0]

        def diag(self):
            return np.diagonal(K).copy()

        def rows(self, index, out):
            out[:] = K[index]

    tiny, _ = smo_solve(Rows(), y, C, tol=tol, shrinking=False, cache_mb=2 * 200 * 8 / 2 ** 20)
    assert tiny.n_rows > 200  # rows were evicted and fetched again
    np.testing.assert_array_equal(tiny.alpha, full.alpha)
    assert tiny.intercept == full.intercept and tiny.n_iter == full.n_iter
    shrunk, _ = smo_solve(KernelRows(K), y, C, tol=tol, shrinking=True)
    assert _kkt_violation(K, y, shrunk.alpha, C) < tol
    np.testing.assert_allclose(K @ (shrunk.alpha * y) + shrunk.intercept,
                               K @ (full.alpha * y) + full.intercept, atol=1e-5)
    warm, _ = smo_solve(KernelRows(K), y, C, tol=tol, alpha0=full.alpha)
    assert warm.n_iter == 0 and warm.converged
    np.testing.assert_array_equal(warm.alpha, full.alpha)


def test_engine_checks_back_and_caps():
    K, y = _problem(300, seed=2)
    seen = []
    import mklcore.smo as smo

    old = smo.CHECK_EVERY
    smo.CHECK_EVERY = 10
    try:
        sol, _ = smo_solve(KernelRows(K), y, 100.0, tol=1e-8, on_check=seen.append)
    finally:
        smo.CHECK_EVERY = old
    assert sol.converged and len(seen) >= sol.n_iter // 10 - 1 and seen == sorted(seen)
    capped, _ = smo_solve(KernelRows(K), y, 100.0, tol=1e-8, max_iter=7)
    assert not capped.converged and capped.n_iter == 7


def test_weighted_and_gated_rows():
    """Rows of the weighted sum are combine_kernels bit for bit; gated rows
    are eta_m(x_i) K_m(x_i, x_j) eta_m(x_j)."""
    rng = np.random.default_rng(0)
    K = np.stack([_problem(25, seed=s)[0] for s in range(4)])
    w = np.array([0.5, 0.0, 1.5, 0.25])
    src = WeightedRows(K, w)
    full = combine_kernels(K, w)
    row = np.empty(25)
    for i in (0, 7, 24):
        src.rows(i, row)
        np.testing.assert_array_equal(row, full[i])
    np.testing.assert_allclose(src.diag(), np.diagonal(full), rtol=1e-15)
    eta = rng.random((4, 25))
    gated = GatedRows(K, eta)
    expected = np.einsum("mi,mij,mj->ij", eta, K, eta)
    for i in (0, 11):
        gated.rows(i, row)
        np.testing.assert_allclose(row, expected[i], rtol=1e-13)
    np.testing.assert_allclose(gated.diag(), np.diagonal(expected), rtol=1e-13)
    y = _problem(25, seed=0)[1]
    a, _ = smo_solve(gated, y, 1.0, tol=1e-8)
    b, _ = smo_solve(KernelRows(expected), y, 1.0, tol=1e-8)
    np.testing.assert_allclose(a.alpha, b.alpha, atol=1e-7)


def test_stack_smo_caches_and_warm_start():
    K = np.stack([_problem(60, seed=s)[0] for s in range(3)])
    y = _problem(60, seed=0)[1]
    theta = np.array([0.5, 0.2, 0.3])
    smo = StackSMO(K, y, 1.0)
    H = np.zeros((3, 60))
    alpha, H, b, n_iter, converged = smo.solve(theta, np.zeros(60), H, 1e-8)
    assert converged and n_iter > 0
    np.testing.assert_allclose(H, np.einsum("mij,j->mi", K, alpha * y), atol=1e-12)
    K_theta = np.tensordot(theta, K, axes=1)
    ref, b_ref = _svc(K_theta, y, 1.0, 1e-8)
    np.testing.assert_allclose(K_theta @ (alpha * y) + b, K_theta @ (ref * y) + b_ref,
                               atol=1e-5)
    _, H2, _, n_warm, converged = smo.solve(theta * 1.01, alpha, H.copy(), 1e-8)
    assert converged and n_warm < n_iter


@pytest.mark.parametrize("C,eps", [(1.0, 0.1), (100.0, 0.01), (0.01, 0.5)])
def test_epsilon_svr_matches_libsvm(C, eps):
    """The epsilon-SVR dual (two variables per point on the same kernel row) gives SVR's
    decision values."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3))
    z = np.sin(X[:, 0]) + 0.1 * rng.normal(size=50)
    K = _gaussian(X, 3.0)
    n = z.size
    y = np.r_[np.ones(n), -np.ones(n)]
    p = np.r_[eps - z, eps + z]
    kidx = np.r_[np.arange(n), np.arange(n)]
    sol, _ = smo_solve(KernelRows(K), y, C, p=p, kidx=kidx, tol=1e-8)
    assert sol.converged
    beta = sol.alpha[:n] - sol.alpha[n:]
    f = K @ beta + sol.intercept
    svr = SVR(kernel="precomputed", C=C, epsilon=eps, tol=1e-8).fit(K, z)
    np.testing.assert_allclose(f, svr.predict(K), atol=1e-4)


def test_svm_bias_without_free_vectors():
    y = np.array([1.0, -1.0])
    assert svm_bias(np.zeros(2), y, -np.ones(2), 1.0) == 0.0
