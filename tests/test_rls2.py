"""Tests of RLS2 and linear RLS2 (F. Dinuzzo, arXiv:1001.2709, 2010).

Regression numbers on the prostate data come from an independent NumPy implementation (they
match the paper's Table 1 to its printed digits), oracles from cvxpy and sklearn (Lasso,
KernelRidge); the other tests check invariants of Problems 5-7, Lemmas 5-6 and the iteration
contract (history, status, callback, decision).
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Lasso

import mklcore
from mklcore._result import MKLResult
from mklcore.datasets import load_prostate, make_binary_strings
from mklcore.kernels import gaussian, linear, polynomial
from mklcore.repro.dinuzzo2010_rls2 import rls2_benchmark_data
from mklcore.rls2 import (LinearRLS2Classifier, LinearRLS2Regressor, RLS2Classifier,
                          RLS2Regressor, _simplex_lstsq, rls2_decision,
                          rls2_lambda_max, rls2_linear_path, rls2_linear_scaling,
                          rls2_linear_solve, rls2_path, rls2_scaling, rls2_solve)


# Relative tolerance of Algorithm 1 used in the oracle tests (the default is 1e-6).
TOL = 1e-10
# Clarabel's interior point reaches ~1e-8 relative accuracy on these tiny problems.
CVX_RTOL = 1e-6
# The independent reference implementation printed 3-4 significant digits.
PROTO_ATOL = 1e-3


# ---------------------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def prostate():
    """ESL prostate, inputs standardised on all 97 rows (ddof=1), ESL split, b = mean."""
    data = load_prostate()
    X = (data.data - data.data.mean(0)) / data.data.std(0, ddof=1)
    tr = data.train_mask
    return X[tr], data.target[tr], X[~tr], data.target[~tr]


def _stack(rng, n=24, m=4):
    """A small PSD stack: linear kernels on random feature blocks and a Gaussian."""
    X = rng.standard_normal((n, 6))
    Ks = [X[:, :2] @ X[:, :2].T, X[:, 2:4] @ X[:, 2:4].T, (X @ X.T / 6 + 1) ** 2]
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    Ks.append(np.exp(-D / 6))
    K = np.stack(Ks[:m])
    y = X[:, 0] - 0.5 * X[:, 2] + 0.3 * X[:, 4] ** 2 + 0.1 * rng.standard_normal(n)
    return K, y


@pytest.fixture
def small():
    return _stack(np.random.default_rng(0))


def _factor(Km):
    vals, vecs = np.linalg.eigh(0.5 * (Km + Km.T))
    keep = vals > 1e-12 * vals.max()
    return vecs[:, keep] * np.sqrt(vals[keep])


# ---------------------------------------------------------------------------------------
# reference numbers on prostate (linear RLS2, rule (16), b = mean; Sec. 5.1, Table 1)
# ---------------------------------------------------------------------------------------
def test_prostate_table1_model(prostate):
    Xtr, ytr, Xte, yte = prostate
    res = rls2_linear_solve(Xtr, ytr, lam=0.088, intercept="mean", tol=TOL)
    assert res.success and res.gap <= TOL
    assert res.intercept == pytest.approx(2.45235, abs=1e-5)
    np.testing.assert_allclose(res.coef, [0.544, 0.207, 0, 0.104, 0.170, 0, 0, 0.064],
                               atol=PROTO_ATOL)
    assert np.flatnonzero(res.coef).tolist() == [0, 1, 3, 4, 7]  # 5 of 8 (Table 1)
    err = (yte - Xte @ res.coef - res.intercept) ** 2
    assert err.mean() == pytest.approx(0.454, abs=PROTO_ATOL)
    assert err.std(ddof=1) / np.sqrt(err.size) == pytest.approx(0.1525, abs=2e-3)
    assert res.objective == pytest.approx(20.79903, rel=1e-6)  # G at the optimum
    np.testing.assert_allclose(res.weights, [0.50, 0.20, 0, 0.09, 0.15, 0, 0, 0.058],
                               atol=0.006)
    assert res.df == pytest.approx(2.8, abs=0.05)
    # optimality of Problem 6: q_i = c' K~_i c equal on the support, below it elsewhere
    q = res.scaling * (Xtr.T @ res.dual_coef) ** 2
    np.testing.assert_allclose(q[res.weights > 0], 87.116, atol=2e-3)
    np.testing.assert_allclose(q[[2, 5, 6]], [8.397, 0.396, 27.001], atol=5e-3)


@pytest.mark.parametrize("lam,coef", [
    (0.5, [0.4895, 0.0932, 0, 0, 0.0250, 0, 0, 0]),
    (0.02, [0.5905, 0.2411, -0.0628, 0.1755, 0.2362, -0.0861, 0, 0.148]),
])
def test_prostate_other_lambdas(prostate, lam, coef):
    Xtr, ytr, _, _ = prostate
    res = rls2_linear_solve(Xtr, ytr, lam=lam, intercept="mean", tol=TOL)
    np.testing.assert_allclose(res.coef, coef, atol=1e-4)


def test_prostate_alignment_and_lemma5(prostate):
    Xtr, ytr, _, _ = prostate
    yc = ytr - ytr.mean()
    res = rls2_linear_solve(Xtr, ytr, lam=10.0, intercept="mean")
    np.testing.assert_allclose(res.alignment / (yc @ yc),
                               [0.537, 0.235, 0.051, 0.069, 0.310, 0.239, 0.117, 0.200],
                               atol=PROTO_ATOL)
    for lam, rel, df in [(10.0, 0.067, 0.0909), (1e3, 7.3e-4, 9.99e-4), (1e5, 7.3e-6, 1.0e-5)]:
        r = rls2_linear_solve(Xtr, ytr, lam=lam, intercept="mean")
        assert r.weights.tolist() == [1.0, 0, 0, 0, 0, 0, 0, 0]  # d = e_1 exactly
        assert r.n_iter == 1
        ratio = np.linalg.norm(lam * r.dual_coef - yc) / np.linalg.norm(yc)
        assert ratio == pytest.approx(rel, rel=0.02)
        assert r.df == pytest.approx(df, rel=0.01)


def test_prostate_lambda_to_zero_is_least_squares(prostate):
    Xtr, ytr, _, _ = prostate
    res = rls2_linear_solve(Xtr, ytr, lam=1e-4, intercept="mean")
    np.testing.assert_allclose(
        res.coef, [0.678, 0.263, -0.139, 0.209, 0.305, -0.289, -0.023, 0.269], atol=PROTO_ATOL)


def test_gap_is_primal_minus_dual(prostate):
    """The gap lam/2 (max q - d'q) equals G(d) - D(c(d)).

    D(c) = lam [y'c - lam/2 |c|^2 - max_i q_i / 2] is the dual of Problem 6 (minimax theorem).
    """
    Xtr, ytr, _, _ = prostate
    res = rls2_linear_solve(Xtr, ytr, lam=0.088, intercept="mean", tol=1e-3,
                            accelerate=False)
    lam, c, yc = 0.088, res.dual_coef, ytr - res.intercept
    q = res.scaling * (Xtr.T @ c) ** 2
    dual = lam * (yc @ c - lam / 2 * c @ c - 0.5 * q.max())
    assert res.objective - dual == pytest.approx(res.gap * res.objective, rel=1e-8)
    assert 0 < res.gap <= 1e-3


# ---------------------------------------------------------------------------------------
# cvxpy oracles
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lam", [1e-2, 1.0, 1e2])
def test_closed_form_c_matches_cvxpy(small, lam):
    """Eq. (13) minimises Problem 5 over c for fixed d."""
    K, y = small
    s = rls2_scaling(K, "trace")
    d = np.random.default_rng(1).dirichlet(np.ones(K.shape[0]))
    Kd = np.tensordot(d * s, K, axes=1)
    c13 = np.linalg.solve(Kd + lam * np.eye(len(y)), y)
    L = _factor(Kd)
    c = cp.Variable(len(y))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(y - Kd @ c) / 2
                                  + lam / 2 * cp.sum_squares(L.T @ c)))
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    F13 = 0.5 * np.sum((y - Kd @ c13) ** 2) + lam / 2 * c13 @ Kd @ c13
    assert prob.value == pytest.approx(F13, rel=CVX_RTOL)
    np.testing.assert_allclose(Kd @ c.value, Kd @ c13, atol=1e-5 * np.abs(y).max())
    assert F13 == pytest.approx(lam / 2 * y @ c13, rel=1e-10)  # Lemma 3: F(c(d), d) = G(d)


@pytest.mark.parametrize("lam", [1e-2, 1.0, 1e2])
@pytest.mark.parametrize("simplex_solver", ["active_set", "smo"])
def test_joint_problem_matches_dual_socp(small, lam, simplex_solver):
    """Dual of Problem 6: max y'c - lam/2 |c|^2 - t/2 s.t. |L_i'c|^2 <= t; value x lam = G(d*).

    Solved in the variables u = lam c, tau = lam t (better scaled): max y'u - |u|^2/2 - tau/2
    s.t. |L_i'u|^2 <= lam tau, whose value is lam times the original one.
    """
    K, y = small
    res = rls2_solve(K, y, lam=lam, scaling="trace", tol=TOL, simplex_solver=simplex_solver)
    assert res.success and res.gap <= TOL
    Ks = res.scaling[:, None, None] * K
    c, t = cp.Variable(len(y)), cp.Variable()
    cons = [cp.sum_squares(_factor(Km).T @ c) <= lam * t for Km in Ks]
    prob = cp.Problem(cp.Maximize(y @ c - cp.sum_squares(c) / 2 - t / 2), cons)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    assert prob.value == pytest.approx(res.objective, rel=CVX_RTOL)
    # the constraint duals, normalised, are an optimal d: compare objectives, not d
    d = np.array([np.ravel(con.dual_value)[0] for con in cons])
    d = np.maximum(d, 0) / np.maximum(d, 0).sum()
    Kd = np.tensordot(d, Ks, axes=1)
    G = lam / 2 * y @ np.linalg.solve(Kd + lam * np.eye(len(y)), y)
    assert G == pytest.approx(res.objective, rel=CVX_RTOL)


@pytest.mark.parametrize("method", ["active_set", "smo"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_problem7_matches_cvxpy(method, seed):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((25, 6)) * rng.uniform(0.1, 10, 6)
    z = rng.standard_normal(25) + V @ rng.dirichlet(np.ones(6))
    d, _ = _simplex_lstsq(V, z, method=method, tau=1e-12)
    assert np.all(d >= 0) and d.sum() == pytest.approx(1.0, abs=1e-14)
    x = cp.Variable(6)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(V @ x - z) / 2), [x >= 0, cp.sum(x) == 1])
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    ours = 0.5 * np.sum((V @ d - z) ** 2)
    assert ours <= prob.value + 1e-9 * max(1.0, abs(prob.value))
    assert ours == pytest.approx(prob.value, rel=1e-7)


def test_problem7_degenerate_inputs():
    """Duplicate and zero columns, rank deficiency (more kernels than samples)."""
    rng = np.random.default_rng(3)
    V = rng.standard_normal((5, 8))
    V[:, 3] = V[:, 1]
    V[:, 6] = 0.0
    z = rng.standard_normal(5)
    d_as, _ = _simplex_lstsq(V, z, method="active_set")
    d_smo, _ = _simplex_lstsq(V, z, method="smo", tau=1e-13)

    def f(d):
        return 0.5 * np.sum((V @ d - z) ** 2)

    assert f(d_as) == pytest.approx(f(d_smo), rel=1e-8, abs=1e-12)
    g = V.T @ (V @ d_as - z)
    assert g[d_as > 0].max() - g.min() <= 1e-9 * np.abs(g).max()


def test_linear_rls2_is_weighted_lasso(prostate):
    """Linear RLS2 at lam = the Lasso with weights 1/sqrt(s_i) at mu = lam sum|w|/sqrt(s).

    Minimising the equivalent form of Problem 8 over d for fixed w (Cauchy-Schwarz) gives
    min_w 1/2 |y - Xw|^2 + lam/2 (sum_i |w_i| / sqrt(s_i))^2, a squared weighted l1 penalty.
    """
    Xtr, ytr, _, _ = prostate
    yc = ytr - ytr.mean()
    for lam in (0.02, 0.088, 0.5):
        res = rls2_linear_solve(Xtr, yc, lam=lam, tol=1e-12)
        w, s = res.coef, res.scaling
        mu = lam * np.sum(np.abs(w) / np.sqrt(s))
        Xs = Xtr * np.sqrt(s)  # beta_i = w_i / sqrt(s_i): plain Lasso on unit-norm columns
        lasso = Lasso(alpha=mu / len(yc), fit_intercept=False, tol=1e-14, max_iter=100_000)
        beta = lasso.fit(Xs, yc).coef_
        np.testing.assert_allclose(beta * np.sqrt(s), w, atol=1e-7)
        b = np.abs(w) / np.sqrt(s)
        np.testing.assert_allclose(res.weights, b / b.sum(), atol=1e-7)


# ---------------------------------------------------------------------------------------
# Lemma 5 and the path
# ---------------------------------------------------------------------------------------
def test_lemma5_limit(small):
    K, y = small
    s = rls2_scaling(K, "trace")
    a = np.array([si * y @ Km @ y for si, Km in zip(s, K)])
    lam = 1e6 * np.linalg.norm(np.tensordot(s, K, axes=1), 2)
    res = rls2_solve(K, y, lam=lam, scaling=s)
    expected = np.zeros(K.shape[0])
    expected[np.argmax(a)] = 1.0
    assert res.weights.tolist() == expected.tolist() and res.n_iter == 1
    np.testing.assert_allclose(res.alignment, a, rtol=1e-12)
    assert np.linalg.norm(lam * res.dual_coef - y) / np.linalg.norm(y) < 1e-5
    inf = rls2_solve(K, y, lam=np.inf, scaling=s, intercept=0.7)
    assert inf.weights.tolist() == expected.tolist() and not inf.dual_coef.any()
    assert inf.df == 0.0
    np.testing.assert_allclose(inf.decision(K[:, :3]), 0.7)


def test_warm_and_cold_paths_agree(small):
    K, y = small
    lams = np.logspace(-5, 1, 12)
    warm = rls2_path(K, y, lams=lams, scaling="trace", intercept="mean", tol=TOL)
    cold = rls2_path(K, y, lams=lams, scaling="trace", intercept="mean", tol=TOL,
                     warm_start=False)
    assert [r.lam for r in warm] == sorted(lams, reverse=True)
    assert warm[0].n_iter == 1  # the Lemma-5 vertex is optimal at the largest lambda
    for w, c in zip(warm, cold):
        assert w.success and c.success and w.gap <= TOL and c.gap <= TOL
        assert w.objective == pytest.approx(c.objective, rel=1e-9)
        np.testing.assert_allclose(np.tensordot(w.weights * w.scaling, K, axes=1) @ w.dual_coef,
                                   np.tensordot(c.weights * c.scaling, K, axes=1) @ c.dual_coef,
                                   atol=1e-6 * np.abs(y).max())
    assert sum(r.n_iter for r in warm) < sum(r.n_iter for r in cold)


def test_plain_algorithm1_with_toolbox_rule(small):
    """accelerate=False + residual_tol=1e-4 is the paper's Algorithm 1 with the toolbox stop."""
    K, y = small
    path = rls2_path(K, y, lams=np.logspace(-4, 1, 8), scaling="trace", accelerate=False,
                     residual_tol=1e-4)
    assert path[0].n_iter == 1
    assert all(r.success for r in path) and not any(r.history["newton"].any() for r in path)
    assert path[-1].n_iter <= 2  # the paper: one iteration at the small-lambda end too


def test_linear_path_matches_single_solves(prostate):
    Xtr, ytr, _, _ = prostate
    lams = np.logspace(-3, 1, 6)
    path = rls2_linear_path(Xtr, ytr, lams=lams, intercept="mean", tol=TOL)
    for r in path:
        single = rls2_linear_solve(Xtr, ytr, lam=r.lam, intercept="mean", tol=TOL)
        np.testing.assert_allclose(r.coef, single.coef, atol=1e-7)
    dfs = [r.df for r in path]  # decreasing lambda: increasing degrees of freedom
    assert np.all(np.diff(dfs) > 0)


# ---------------------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("accelerate", [True, False])
def test_monotone_objective_and_kkt(small, accelerate):
    K, y = small
    res = rls2_solve(K, y, lam=1e-3, scaling="trace", tol=1e-9 if accelerate else 1e-7,
                     accelerate=accelerate)
    obj = res.history["objective"]
    assert np.all(np.diff(obj) <= 1e-12 * obj[0])
    assert res.history["weights"].shape == (res.n_iter, K.shape[0])
    Ks = res.scaling[:, None, None] * K
    q = np.array([res.dual_coef @ Km @ res.dual_coef for Km in Ks])
    on = res.weights > 0
    slack = 1e-8 if accelerate else 1e-6
    assert np.ptp(q[on]) <= slack * q.max() and np.all(q[~on] <= q.max() * (1 + slack))
    assert abs(res.weights.sum() - 1) < 1e-12 and np.all(res.weights >= 0)


def test_scaling_invariance(small):
    K, y = small
    s = rls2_scaling(K, "trace")
    a = rls2_solve(K, y, lam=1e-2, scaling=s, tol=TOL)
    b = rls2_solve(K, y, lam=1e-2 * 7.0, scaling=7.0 * s, tol=TOL)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-8)
    np.testing.assert_allclose(a.dual_coef / 7.0, b.dual_coef, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(a.decision(K), b.decision(K), atol=1e-8)


def test_linear_equals_kernel_version(prostate):
    Xtr, ytr, _, _ = prostate
    yc = ytr - ytr.mean()
    K = np.stack([np.outer(x, x) for x in Xtr.T])  # one linear kernel per feature, eq. (10)
    kern = rls2_solve(K, yc, lam=0.05, scaling="trace", tol=TOL)
    lin = rls2_linear_solve(Xtr, yc, lam=0.05, scaling="norm", tol=TOL)
    np.testing.assert_allclose(kern.scaling, lin.scaling, rtol=1e-12)
    np.testing.assert_allclose(kern.weights, lin.weights, atol=1e-8)
    w = kern.weights * kern.scaling * (Xtr.T @ kern.dual_coef)  # eq. (12)
    np.testing.assert_allclose(w, lin.coef, atol=1e-8)


def test_lemma6_scaled_ridge(prostate):
    Xtr, ytr, _, _ = prostate
    yc = ytr - ytr.mean()
    res = rls2_linear_solve(Xtr, yc, lam=0.05, tol=TOL)
    B = np.flatnonzero(res.weights)
    Dh = np.sqrt(res.weights[B] * res.scaling[B])
    Xt = Xtr[:, B] * Dh
    beta = np.linalg.solve(Xt.T @ Xt + 0.05 * np.eye(B.size), Xt.T @ yc)
    np.testing.assert_allclose(res.coef[B], Dh * beta, atol=1e-10)
    # eq. (15): both trace formulas and the bounds
    n = len(yc)
    df1 = B.size - 0.05 * np.trace(np.linalg.inv(Xt.T @ Xt + 0.05 * np.eye(B.size)))
    df2 = n - 0.05 * np.trace(np.linalg.inv(Xt @ Xt.T + 0.05 * np.eye(n)))
    assert res.df == pytest.approx(df1, rel=1e-10) and df1 == pytest.approx(df2, rel=1e-8)
    assert 0 <= res.df <= min(n, B.size)


def test_duplicated_and_permuted_kernels(small):
    K, y = small
    base = rls2_solve(K, y, lam=1e-2, scaling="trace", tol=TOL)
    dup = rls2_solve(np.concatenate([K, K[1:2]]), y, lam=1e-2, scaling="trace", tol=TOL)
    assert dup.objective == pytest.approx(base.objective, rel=1e-9)
    np.testing.assert_allclose(dup.decision(np.concatenate([K, K[1:2]])), base.decision(K),
                               atol=1e-7)
    assert dup.weights[1] + dup.weights[-1] == pytest.approx(base.weights[1], abs=1e-7)
    perm = np.array([2, 0, 3, 1])
    res = rls2_solve(K[perm], y, lam=1e-2, scaling="trace", tol=TOL)
    np.testing.assert_allclose(res.weights, base.weights[perm], atol=1e-8)


def test_cg_and_smo_agree_with_default(small):
    K, y = small
    ref = rls2_solve(K, y, lam=0.05, scaling="trace", tol=TOL)
    cg = rls2_solve(K, y, lam=0.05, scaling="trace", tol=1e-9, linear_solver="cg")
    smo = rls2_solve(K, y, lam=0.05, scaling="trace", tol=TOL, simplex_solver="smo")
    assert cg.objective == pytest.approx(ref.objective, rel=1e-8)
    assert smo.objective == pytest.approx(ref.objective, rel=1e-10)


def test_transductive_trace_scaling(small):
    K, y = small
    s_all = rls2_scaling(K, "trace", transductive_K=K)
    s_diag = rls2_scaling(K[:, :10, :10], "trace", transductive_K=np.einsum("mii->mi", K))
    np.testing.assert_allclose(s_all, s_diag)
    np.testing.assert_allclose(s_all, 1 / np.einsum("mii->m", K))
    H = np.eye(24) - 1 / 24
    np.testing.assert_allclose(rls2_scaling(K, "centered_trace"),
                               [1 / np.trace(H @ Km @ H) for Km in K])
    X = np.random.default_rng(0).standard_normal((10, 3))
    X[:, 2] = 0.0
    np.testing.assert_allclose(rls2_linear_scaling(X), [*(1 / (X[:, :2] ** 2).sum(0)), 0.0])


def test_transductive_linear_scaling_rule16():
    """Rule (16), transductive (Sec. 4.3): s_i = 1/||x^(i)||^2 over train ∪ unlabelled rows."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((15, 4))
    X_unl = 3.0 * rng.standard_normal((9, 4)) + 1.0  # other scale: the norms change a lot
    y = X[:, 0] - X[:, 2] + 0.1 * rng.standard_normal(15)
    union = np.vstack([X, X_unl])
    by_hand = np.array([1.0 / sum(union[j, i] ** 2 for j in range(union.shape[0]))
                        for i in range(4)])
    inductive = np.array([1.0 / sum(X[j, i] ** 2 for j in range(15)) for i in range(4)])
    s = rls2_linear_scaling(X, "norm", transductive_X=union)
    np.testing.assert_allclose(s, by_hand, rtol=1e-12)
    np.testing.assert_allclose(rls2_linear_scaling(X, "norm"), inductive, rtol=1e-12)
    assert np.all(np.abs(s / inductive - 1) > 0.5)  # the unlabelled rows matter
    # the solver and the estimators pass the same scaling through
    res = rls2_linear_solve(X, y, lam=0.1, transductive_X=union)
    np.testing.assert_allclose(res.scaling, by_hand, rtol=1e-12)
    reg = LinearRLS2Regressor(lam=0.1).fit(X, y, X_unlabeled=X_unl)
    np.testing.assert_allclose(reg.scaling_, by_hand, rtol=1e-12)
    reg_ind = LinearRLS2Regressor(lam=0.1).fit(X, y)
    np.testing.assert_allclose(reg_ind.scaling_, inductive, rtol=1e-12)
    assert not np.allclose(reg.coef_, reg_ind.coef_)  # and it changes the fitted model
    # a zero column of the union still gets s_i = 0 (never selected)
    Z, Z_unl = X.copy(), X_unl.copy()
    Z[:, 1] = Z_unl[:, 1] = 0.0
    s0 = rls2_linear_scaling(Z, "norm", transductive_X=np.vstack([Z, Z_unl]))
    assert s0[1] == 0.0 and np.all(s0[[0, 2, 3]] > 0)


def test_fisher_scaling():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = np.repeat([1.0, -1.0], 10)
    s = rls2_linear_scaling(X, "fisher", y=y)
    np.testing.assert_allclose(s, 1 / (X[:10].var(0) + X[10:].var(0)))
    sw = rls2_linear_scaling(X, "fisher", y=y, fisher_weighted=True)
    np.testing.assert_allclose(sw, 1 / (10 * X[:10].var(0) + 10 * X[10:].var(0)))


# ---------------------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------------------
def test_regressor_decision_matches_solver(small):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 3))
    y = X[:, 0] ** 2 + 0.1 * rng.standard_normal(30)
    bank = [linear(), polynomial(2), gaussian(gamma=0.5)]
    reg = RLS2Regressor(kernels=bank, lam=1e-3).fit(X, y)
    assert reg.converged_ and reg.gap_ <= 1e-6 and reg.intercept_ == pytest.approx(y.mean())
    K = reg.kernel_bank_.transform(X)
    np.testing.assert_allclose(reg.predict(X), rls2_decision(reg.result_, K), atol=1e-10)
    np.testing.assert_allclose(
        reg.predict(X), y.mean() + np.tensordot(reg.effective_weights_, K, axes=1)
        @ reg.dual_coef_, atol=1e-10)
    assert reg.score(X, y) > 0.9
    # transductive scaling: traces over the training and the extra inputs
    X_new = rng.standard_normal((10, 3))
    reg_t = RLS2Regressor(kernels=bank, lam=1e-3).fit(X, y, X_unlabeled=X_new)
    full = np.vstack([X, X_new])
    expected = [1 / np.trace(k(full)) for k in reg_t.kernel_bank_.kernels_]
    np.testing.assert_allclose(reg_t.scaling_, expected)


def test_binary_strings_recovers_relevant_bits():
    X, y = make_binary_strings(n_samples=60, random_state=0)
    reg = LinearRLS2Regressor(lam=0.05, fit_intercept=False).fit(X[:30], y[:30])
    d = reg.weights_
    assert d[:3].sum() >= 0.95 and np.all((d[:3] > 0.25) & (d[:3] < 0.42))
    assert reg.score(X[30:], y[30:]) > 0.95


def test_ova_classifiers():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    lin = LinearRLS2Classifier(lam=1e-2, scaling="fisher").fit(X, y)
    assert lin.coef_.shape == (3, 6) and lin.weights_.shape == (3, 6)
    assert lin.score(X, y) > 0.85 and set(lin.selected_features_) >= {0, 1, 2}
    assert lin.decision_function(X).shape == (60, 3)
    for k, cls in enumerate(lin.classes_):  # per-class Fisher scaling (rule (17))
        pos = y == cls
        np.testing.assert_allclose(lin.scaling_[k], 1 / (X[pos].var(0) + X[~pos].var(0)))
    ker = RLS2Classifier(kernels=[linear(), gaussian(gamma=0.2)], lam=1e-3).fit(X, y)
    assert ker.weights_.shape == (3, 2) and ker.score(X, y) > 0.85
    binary = RLS2Classifier(kernels=[linear()], lam=1e-3).fit(X, X[:, 0] > 0)
    assert binary.weights_.shape == (1,) and binary.decision_function(X).shape == (60,)
    assert binary.score(X, X[:, 0] > 0) > 0.9


# ---------------------------------------------------------------------------------------
# failure paths
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    ({"lam": 0.0}, r"The 'lam' parameter of rls2_solve"),
    ({"lam": 1.0, "scaling": "frobenius"},
     r"The 'scaling' parameter of rls2_solve must be one of \{'trace', 'centered_trace', "
     r"'none'\}"),
    ({"lam": 1.0, "scaling": np.ones(2)}, r"array of shape \(n_kernels=4,\)"),
    ({"lam": 1.0, "tol": -1e-3}, r"The 'tol' parameter of rls2_solve"),
    ({"lam": 1.0, "simplex_solver": "qp"}, r"The 'simplex_solver' parameter"),
    ({"lam": 1.0, "intercept": "median"}, r"The 'intercept' parameter of rls2_solve"),
    ({"lam": 1.0, "warm_start": np.ones(3)}, r"warm_start weights must be"),
])
def test_solver_bad_parameters(small, kwargs, match):
    K, y = small
    with pytest.raises(ValueError, match=match):
        rls2_solve(K, y, **kwargs)


def test_bad_data_messages(small):
    K, y = small
    y_nan = y.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        rls2_solve(K, y_nan, lam=1.0)
    with pytest.raises(ValueError, match="K and y do not match|y has 23 entries"):
        rls2_solve(K, y[:-1], lam=1.0)
    with pytest.raises(ValueError, match=r"The 'lams' parameter of rls2_path must hold floats"):
        rls2_path(K, y, lams=[1.0, -1.0])
    with pytest.raises(ValueError, match="The 'scaling' parameter of rls2_linear_solve"):
        rls2_linear_solve(K[0], y, lam=1.0, scaling="trace")
    with pytest.raises(ValueError, match="for binary outputs"):
        rls2_linear_solve(K[0], y, lam=1.0, scaling="fisher")


def _diag(K):
    return np.einsum("mii->mi", K).copy()


# issue 28, item 1: bad transductive inputs and scalings raise, naming the argument
@pytest.mark.parametrize("case,exc,match", [
    ("K_nan", ValueError, r"^transductive_K contains NaN or infinity \(1 entries\)"),
    ("K_inf", ValueError, r"^transductive_K contains NaN or infinity"),
    ("K_diag_nan", ValueError, r"^transductive_K contains NaN or infinity"),
    ("K_kernels", ValueError, r"^transductive_K must have shape \(n_kernels=4, n_all, n_all\)"),
    ("K_not_square", ValueError, r"^transductive_K must have shape .* got shape \(4, 30, 29\)"),
    ("K_short", ValueError, r"^transductive_K must have shape .*n_all >= 24.* \(4, 10\)"),
    ("K_1d", ValueError, r"^transductive_K must have shape .* got shape \(4,\)"),
    ("K_neg_diag", ValueError, r"^transductive_K holds a negative diagonal entry \(kernel 2\)"),
    ("K_neg_trace", ValueError, r"^transductive_K holds a negative diagonal entry \(kernel 1\)"),
    ("K_strings", ValueError, r"^transductive_K must hold numbers"),
    ("X_nan", ValueError, r"^transductive_X contains NaN or infinity \(1 entries\)"),
    ("X_inf", ValueError, r"^transductive_X contains NaN or infinity"),
    ("X_columns", ValueError, r"^transductive_X must have 6 columns like X"),
    ("scaling_zeros", ValueError, r"^The 'scaling' parameter of rls2_solve must be .* not all "
                                  r"zero\. Got array\(\[0\., 0\., 0\., 0\.\]\)"),
    ("scaling_negative", ValueError, r"^The 'scaling' parameter of rls2_solve must be"),
    ("scaling_nan", ValueError, r"^The 'scaling' parameter of rls2_solve must be"),
    ("scaling_inf", ValueError, r"^The 'scaling' parameter of rls2_solve must be"),
    ("scaling_strings", ValueError, r"^The 'scaling' parameter of rls2_solve must be"),
    ("linear_scaling_zeros", ValueError, r"^The 'scaling' parameter of rls2_linear_solve"),
    ("rule_all_zero", ValueError, r"^scaling='trace' gives s = 0 to every one of the 4 kernels"),
])
def test_bad_transductive_inputs_and_scalings(small, case, exc, match):
    K, y = small
    rng = np.random.default_rng(1)
    X = rng.standard_normal((24, 6))
    big = np.zeros((4, 30, 30))
    big[:, :24, :24] = K
    big[:, 24:, 24:] = np.eye(6)
    diag = _diag(big)
    neg_trace = diag.copy()
    neg_trace[1] = -1.0
    neg_diag = diag.copy()
    neg_diag[2, 27] = -1e-3
    transductive = {
        "K_nan": np.where(np.arange(30) == 26, np.nan, 1.0) * big,
        "K_inf": _with(big, (0, 25, 25), np.inf), "K_diag_nan": _with(diag, (3, 5), np.nan),
        "K_kernels": diag[:3], "K_not_square": big[:, :, :-1], "K_short": diag[:, :10],
        "K_1d": diag[:, 0], "K_neg_diag": neg_diag, "K_neg_trace": neg_trace,
        "K_strings": np.full((4, 30), "a"),
    }
    with pytest.raises(exc, match=match):
        if case.startswith("K_"):
            if case == "K_nan":  # one NaN entry off the diagonal: still refused
                transductive[case] = _with(big, (0, 3, 26), np.nan)
            rls2_solve(K, y, lam=0.1, scaling="trace", transductive_K=transductive[case])
        elif case.startswith("X_"):
            Xt = {"X_nan": _with(np.vstack([X, X]), (30, 2), np.nan),
                  "X_inf": _with(np.vstack([X, X]), (0, 0), -np.inf),
                  "X_columns": np.vstack([X, X])[:, :5]}[case]
            rls2_linear_solve(X, y, lam=0.1, transductive_X=Xt)
        elif case == "linear_scaling_zeros":
            rls2_linear_solve(X, y, lam=0.1, scaling=np.zeros(6))
        elif case == "rule_all_zero":
            rls2_solve(np.zeros_like(K), y, lam=0.1, scaling="trace")
        else:
            s = {"scaling_zeros": np.zeros(4), "scaling_negative": np.array([1, 1, -1, 1.0]),
                 "scaling_nan": np.array([1, np.nan, 1, 1]),
                 "scaling_inf": np.array([1, np.inf, 1, 1]),
                 "scaling_strings": np.array(["a"] * 4)}[case]
            rls2_solve(K, y, lam=0.1, scaling=s)


def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


def test_valid_transductive_inputs_and_partly_zero_scaling(small):
    """The checks refuse only bad inputs: a diagonal or full transductive stack gives the same
    scaling, and a scaling with some (not all) zeros excludes those kernels."""
    K, y = small
    full = rls2_solve(K, y, lam=0.1, scaling="trace", transductive_K=K)
    diag = rls2_solve(K, y, lam=0.1, scaling="trace", transductive_K=_diag(K))
    plain = rls2_solve(K, y, lam=0.1, scaling="trace")
    np.testing.assert_array_equal(full.scaling, plain.scaling)
    np.testing.assert_array_equal(diag.scaling, plain.scaling)
    res = rls2_solve(K, y, lam=0.1, scaling=np.array([0.0, 0.0, 1.0, 0.0]))
    assert res.status == 0 and np.array_equal(res.weights, [0.0, 0.0, 1.0, 0.0])


def test_tiny_lam_is_a_clear_error_or_a_warning_naming_lam(small, prostate):
    """lam = 1e-300 (issue 28): linear RLS2 on 8 features of 67 samples (K(d) of rank <= 8)
    makes c overflow, a ValueError naming lam (it was 'zero-size array to reduction'); on a
    full-rank Gaussian K(d) the run ends with status 2 and a warning naming lam."""
    Xtr, ytr = prostate[:2]
    with pytest.raises(ValueError, match=r"^The 'lam' parameter of rls2_linear_solve is too "
                                         r"small for these kernels: at lam=1.0e-300"):
        rls2_linear_solve(Xtr, ytr, lam=1e-300)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 3))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([X @ X.T, np.exp(-D / 2.0)])
    with pytest.warns(ConvergenceWarning, match=r"lam=1\.0e-300 is below 1e-12 times the "
                                                r"largest scaled kernel trace"):
        res = rls2_solve(K, X[:, 0], lam=1e-300, scaling="trace", max_iter=20)
    assert res.status in (1, 2) and res.n_iter <= 20


def test_float32_stack_is_solved_in_float64(small):
    """Documented: a float32 stack is copied once to float64 and gives exactly the result of
    K.astype(float64)."""
    import mklcore.rls2 as rls2

    K, y = small
    K32 = K.astype(np.float32)
    a = rls2_solve(K32, y, lam=0.1, scaling="trace")
    b = rls2_solve(K32.astype(np.float64), y, lam=0.1, scaling="trace")
    for key in ("weights", "dual_coef", "scaling", "objective", "gap"):
        np.testing.assert_array_equal(a[key], b[key])
    assert a.dual_coef.dtype == np.float64
    assert rls2._KernelOps(K32, np.ones(4)).K.dtype == np.float64
    assert "float32 stack is copied once to float64" in " ".join(rls2_solve.__doc__.split())


def test_estimator_bad_inputs():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 3))
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3])
    with pytest.raises(ValueError, match="Class 3 has only 1 sample"):
        LinearRLS2Classifier().fit(X, y)
    with pytest.raises(ValueError, match="Class 3 has only 1 sample"):
        RLS2Classifier(kernels=[linear()]).fit(X, y)
    with pytest.raises(ValueError, match=r"The 'lam' parameter of LinearRLS2Regressor"):
        LinearRLS2Regressor(lam=-0.1).fit(X, X[:, 0])
    with pytest.raises(ValueError, match=r"The 'scaling' parameter of RLS2Regressor"):
        RLS2Regressor(kernels=[linear()], scaling="unit").fit(X, X[:, 0])
    with pytest.raises(ValueError, match="NaN"):
        RLS2Regressor(kernels=[linear()]).fit(X, np.r_[np.nan, X[1:, 0]])


def test_warnings_point_at_the_caller(small, prostate):
    K, y = small
    Xtr, ytr, _, _ = prostate
    with pytest.warns(ConvergenceWarning) as rec:
        rls2_path(K, y, lams=[1e-3], scaling="trace", max_iter=1)
        rls2_linear_solve(Xtr, ytr, lam=0.088, intercept="mean", max_iter=1)
        LinearRLS2Regressor(lam=0.088, max_iter=1).fit(Xtr, ytr)
        RLS2Classifier(kernels=[linear(), gaussian(gamma=0.5)], lam=1e-4,
                       max_iter=1).fit(Xtr, ytr > ytr.mean())
    assert len(rec) == 4 and all(w.filename == __file__ for w in rec)


def _rows(res):
    return {k: len(v) for k, v in res.history.items()}


def test_history_has_one_row_per_iteration(small, prostate):
    K, y = small
    with pytest.warns(ConvergenceWarning, match="did not converge in 7 iterations") as rec:
        budget = rls2_solve(K, y, lam=1e-3, scaling="trace", accelerate=False, max_iter=7)
    assert rec[0].filename == __file__  # the warning points at the caller
    runs = [rls2_solve(K, y, lam=1e-3, scaling="trace"), budget,
            rls2_solve(K, y, lam=1e-3, scaling="trace", accelerate=False, residual_tol=1e-4),
            rls2_solve(K, y, lam=1e3, scaling="trace"),
            *rls2_path(K, y, lams=[1e-4, 1e-2, 1.0], scaling="trace")]
    Xtr, ytr, _, _ = prostate
    runs.append(rls2_linear_solve(Xtr, ytr, lam=0.088, intercept="mean"))
    keys = {"objective", "gap", "criterion", "weights", "time", "residual", "n_selected",
            "newton"}
    for res in runs:
        assert type(res) is MKLResult and res.method in ("rls2", "linear_rls2")
        assert set(res.history) == keys
        assert set(_rows(res).values()) == {res.n_iter} and res.n_iter >= 1
        assert res.history["weights"].shape == (res.n_iter, res.weights.size)
    assert runs[1].n_iter == 7 and runs[1].status == 1
    assert runs[2].success and "residual rule" in runs[2].message
    assert runs[3].n_iter == 1 and runs[3].success  # Lemma 5: the vertex is optimal
    # the limit lambda = inf: c = 0 exactly, no iteration, an empty but valid model
    res = rls2_solve(K, y, lam=np.inf, scaling="trace")
    assert res.success and res.n_iter == 0 and not np.any(res.dual_coef)
    assert set(res.history) == keys and set(_rows(res).values()) == {0}


def test_tol_none_runs_the_budget(small):
    K, y = small
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = rls2_solve(K, y, lam=1e-3, scaling="trace", tol=None, max_iter=6)
        reg = LinearRLS2Regressor(lam=1e-2, tol=None, max_iter=5).fit(K[0][:, :5], y)
    assert res.status == 1 and not res.success and res.n_iter == 6
    assert len(res.history["gap"]) == 6 and np.isnan(res.tol)
    assert "no tolerance given" in res.message
    # the same iterates as with a tolerance, only the stopping test differs (6 iterations
    # stay above round-off: a gap of exactly 0 would meet even tol=1e-300)
    with pytest.warns(ConvergenceWarning):
        ref = rls2_solve(K, y, lam=1e-3, scaling="trace", tol=1e-300, max_iter=6)
    np.testing.assert_array_equal(res.history["objective"], ref.history["objective"])
    np.testing.assert_array_equal(res.weights, ref.weights)
    assert reg.n_iter_ == 5 and not reg.converged_


def test_precision_limit_is_a_numerical_failure(small, monkeypatch):
    import mklcore.rls2 as rls2_module

    # a Problem-7 solver that never moves the weights: Algorithm 1 stalls above tol
    monkeypatch.setattr(rls2_module, "_simplex_lstsq",
                        lambda V, z, d, method: (d.copy(), 0))
    K, y = small
    with pytest.warns(ConvergenceWarning, match="precision limit: the weights no longer"):
        res = rls2_solve(K, y, lam=1e-3, scaling="trace", accelerate=False)
    assert res.status == 2 and not res.success and res.n_iter == 1
    res = rls2_solve(K, y, lam=1e-3, scaling="trace", accelerate=False, tol=None, max_iter=3)
    assert res.status == 1 and res.n_iter == 3  # no tolerance: the budget is run


def test_callback_payload_and_stop(small):
    K, y = small
    seen = []

    def record(intermediate):
        seen.append(intermediate)
        if intermediate.n_iter == 2:
            raise StopIteration

    res = rls2_solve(K, y, lam=1e-3, scaling="trace", accelerate=False, callback=record)
    assert res.status == 3 and not res.success and res.n_iter == 2
    assert res.message == "stopped by callback after 2 iterations"
    assert [p.n_iter for p in seen] == [1, 2]
    for p, obj, w in zip(seen, res.history["objective"], res.history["weights"]):
        assert {"n_iter", "objective", "gap", "criterion", "weights", "time", "method",
                "dual_coef", "residual"} <= set(p)
        assert p.objective == obj and np.array_equal(p.weights, w) and p.method == "rls2"


def test_decision_dispatch(small, prostate):
    K, y = small
    res = rls2_solve(K, y, lam=1e-3, scaling="trace", intercept="mean")
    f = mklcore.decision(res, K)
    expected = res.intercept + np.tensordot(res.weights * res.scaling, K, axes=1) @ res.dual_coef
    np.testing.assert_allclose(f, expected, atol=1e-10)
    np.testing.assert_array_equal(res.decision(K), f)
    np.testing.assert_array_equal(rls2_decision(res, K), f)
    with pytest.raises(ValueError, match="K_test must have shape"):
        mklcore.decision(res, K[:2])
    Xtr, ytr, Xte, _ = prostate
    lin = rls2_linear_solve(Xtr, ytr, lam=0.088, intercept="mean")
    K_test = np.stack([np.outer(Xte[:, i], Xtr[:, i]) for i in range(Xtr.shape[1])])
    np.testing.assert_allclose(mklcore.decision(lin, K_test), Xte @ lin.coef + lin.intercept,
                               atol=1e-10)


# ---------------------------------------------------------------------------------------
# Lemma-5 threshold and the benchmark data of Table 2
# ---------------------------------------------------------------------------------------
def test_lambda_max_is_the_lemma5_threshold(small, prostate):
    K, y = small
    lam1 = rls2_lambda_max(K, y, scaling="trace", rtol=0.01)
    above = rls2_solve(K, y, lam=lam1 * 1.001, scaling="trace")
    below = rls2_solve(K, y, lam=lam1 / 1.05, scaling="trace")
    assert above.n_iter == 1 and above.n_selected == 1
    assert below.n_selected > 1
    Xtr, ytr, _, _ = prostate
    lam1_lin = rls2_lambda_max(Xtr, ytr, linear=True, scaling="norm", intercept="mean")
    assert 1.0 < lam1_lin <= 10.0  # d = e_1 for lambda >= 10 (test_prostate_alignment_and_lemma5)
    assert rls2_linear_solve(Xtr, ytr, lam=lam1_lin, intercept="mean").n_iter == 1


@pytest.mark.parametrize("name,shape,kernels", [("heart", (270, 13), 182),
                                                ("cpu", (209, 37), 494),
                                                ("liver", (345, 6), 91)])
def test_benchmark_data_table2(name, shape, kernels):
    data = rls2_benchmark_data(name)
    assert data.data.shape == shape and data.n_kernels == kernels
    assert data.n_kernels == data.paper["kernels"] and data.stand_in is None
    if data.task == "classification":
        assert set(np.unique(data.target)) == {-1.0, 1.0}
    if data.standardised:
        np.testing.assert_allclose(data.data.mean(0), 0, atol=1e-10)


def test_benchmark_data_offline_stand_ins():
    servo = rls2_benchmark_data("servo", download=False)
    wpbc = rls2_benchmark_data("wpbc", download=False)
    assert servo.data.shape[0] == 167 and wpbc.data.shape[0] == 194
    if servo.stand_in:  # no cached copy of servo.data: sklearn's diabetes, subsampled
        assert servo.data.shape[1] == 10 and "diabetes" in servo.stand_in
    if wpbc.stand_in:
        assert wpbc.data.shape[1] == 30 and "wdbc" in wpbc.stand_in
    with pytest.raises(ValueError, match="Unknown data set 'iris'"):
        rls2_benchmark_data("iris")


def test_unchecked_stack_reuses_its_analysis_and_gives_the_same_path():
    """check_input=False keeps the kernel analysis for the same array (not a view of it)."""
    import gc

    from mklcore import rls2 as rls2_module

    rng = np.random.default_rng(3)
    x = rng.integers(0, 12, 160).astype(float)  # a discrete feature: compressible kernels
    X = rng.standard_normal((160, 3))
    K = np.stack([np.exp(-0.3 * np.subtract.outer(x, x) ** 2), np.outer(x, x) / 100,
                  X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))])
    y = X[:, 0] + 0.1 * x
    lams = np.logspace(-3, 1, 6)
    checked = rls2_path(K, y, lams=lams, scaling="trace")
    rls2_lambda_max(K, y, scaling="trace", check_input=False)
    ref = rls2_module._KernelOps._last
    assert ref is not None and ref[0]() is K and len(ref[2][0]) == 2  # two compressed kernels
    unchecked = rls2_path(K, y, lams=lams, scaling="trace", check_input=False)
    assert rls2_module._KernelOps._last is ref  # reused, not rebuilt
    for a, b in zip(checked, unchecked):
        assert np.array_equal(a.weights, b.weights) and np.array_equal(a.dual_coef, b.dual_coef)
        assert a.n_iter == b.n_iter and a.gap == b.gap
    del K, unchecked
    gc.collect()
    assert rls2_module._KernelOps._last is None  # freed with the stack


def test_system_is_the_portable_kernel_sum_plus_lam():
    """K(d) + lam I is combine_kernels(K, d s) + lam I, to the bit (the same
    bits on every processor), with every weight non-zero too, and lam I alone at d = 0."""
    from mklcore.rls2 import _KernelOps
    from mklcore.svm import combine_kernels

    rng = np.random.default_rng(4)
    n = 150
    A = rng.standard_normal((3, n, n))
    K = np.einsum("kij,klj->kil", A, A) / n
    s = rng.uniform(0.5, 2.0, 3)
    ops = _KernelOps(K, s)
    for d in (np.array([0.2, 0.0, 0.8]), np.array([0.2, 0.3, 0.5])):
        expected = combine_kernels(K, d * s)
        expected.flat[:: n + 1] += 0.3
        assert np.array_equal(ops._system(d, 0.3).view(np.int64), expected.view(np.int64))
    assert np.array_equal(ops._system(np.zeros(3), 0.3), 0.3 * np.eye(n))


# ---------------------------------------------------------------------------------------
# issue 28, item 6: the same bits on 1 and 2 BLAS threads
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", ["rls2", "rls2_path", "linear_rls2", "estimator"])
def test_same_bits_on_one_and_two_blas_threads(family):
    """Algorithm 1 runs BLAS and LAPACK on one thread: results are identical under
    threadpool_limits(1) and (2) (OpenBLAS's threaded dpotrf, dgelsd, dgemv... differed)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    n = 240
    X = rng.normal(size=(n, 5))
    y = X[:, 0] * X[:, 1] + 0.3 * X[:, 2] + 0.3 * rng.normal(size=n)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([X @ X.T, np.exp(-D / 2), np.exp(-D / 8), (X @ X.T / 5 + 1) ** 2])
    Xl = rng.normal(size=(n, 40))
    run = {
        "rls2": lambda: rls2_solve(K, y, lam=1e-2, scaling="trace"),
        "rls2_path": lambda: rls2_path(K, y, lams=[1e-1, 1e-3], scaling="trace")[-1],
        "linear_rls2": lambda: rls2_linear_solve(Xl, Xl[:, 0] - Xl[:, 1] + 0.1 * y, lam=1e-2),
        "estimator": lambda: RLS2Regressor(kernels=[linear(), gaussian(gamma=0.5)],
                                           lam=1e-2).fit(X, y).result_,
    }[family]
    with threadpool_limits(1):
        one = run()
    with threadpool_limits(2):
        two = run()
    for key in ("weights", "dual_coef", "objective", "gap", "df"):
        if key in one:
            assert np.asarray(one[key]).tobytes() == np.asarray(two[key]).tobytes(), key


def test_one_blas_thread_nests_and_restores_the_limits():
    from threadpoolctl import threadpool_info, threadpool_limits

    from mklcore._linalg import one_blas_thread

    def blas_threads():
        return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info()
                if lib["user_api"] == "blas"}

    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        assert 2 in before.values()
        with one_blas_thread():
            with one_blas_thread():
                inner = blas_threads()
            outer = blas_threads()
        assert set(inner.values()) == set(outer.values()) == {1}
        assert blas_threads() == before
