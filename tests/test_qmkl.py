"""Tests of Q-MKL and Q-SVM (Hinrichs et al., NIPS 2012).

Oracles are small cvxpy problems: the SOCP (written here in two forms) and the SDP of
Theorem 4 for the beta step, Eq. (8); the support function of the feasible set; the Q-MKL
primal with explicit feature maps (``qmkl_primal_cvx``); the lp-MKL primal and tabulated
optima of ``mklcore.reference`` for Q = ones / I; the Q-SVM primal QP.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mklcore.qmkl import (BetaStep, QMKLClassifier, QSVMClassifier, alpha_correlation,
                          block_diagonal_q, check_q, graph_laplacian, grid_laplacian,
                          q_from_alpha_covariance, q_from_correlation, q_sqrt_factor,
                          qmkl_beta_step, qmkl_solve, qmkl_support_function, qsvm_solve)
from mklcore.qmkl import _chol_solve, _coordinate_step
from mklcore.repro.hinrichs2012_qmkl import (dirichlet_ratio, isolated_pockets,
                                             multiview_kernels, regulariser, theorem2_proxy)
from mklcore.reference import TOY_OPTIMA, qmkl_primal_cvx, solve_primal_cvx, toy_problem


# the oracles run Clarabel at tight tolerances; cvxpy then warns although the status is fine
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate:UserWarning")

# Module 2 solvers (closed form, root finder, SOCP with Clarabel at 1e-9) agree to ~1e-6; the
# SDP of Theorem 4 is solved at the same tolerance but is less accurate -> 1e-4
BETA_STEP_ATOL = 1e-4
# Algorithm 1 vs the cvxpy primal at SVM tol 1e-10: objectives agree to ~1e-9 relative;
# beta enters J only at second order near the optimum, so it agrees to ~1e-5 only
OBJ_RTOL = 1e-6
BETA_ATOL = 1e-3
# LIBSVM at tol 1e-10: decision values agree to ~1e-8
DECISION_ATOL = 1e-6
CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


# ---------------------------------------------------------------------------
# fixtures and oracles
# ---------------------------------------------------------------------------

def _gauss(Z, s):
    D = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    return np.exp(-D / (2 * s * s))


@pytest.fixture(scope="module")
def tiny():
    """n = 30, 4-D data, 5 kernels scaled to trace n, Q = Lap + I."""
    rng = np.random.default_rng(0)
    n = 30
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    Ks = [X @ X.T, (1 + X @ X.T) ** 2, _gauss(X[:, :2], 1.0), _gauss(X[:, 2:], 1.0),
          _gauss(X, 2.0)]
    K = np.stack([k * n / np.trace(k) for k in Ks])
    S = np.abs(np.corrcoef(rng.normal(size=(10, 5)).T))
    return K, y, graph_laplacian(S)


def _random_q(rng, M, groups):
    corr = np.corrcoef(rng.normal(size=(3 * M, M)).T)
    return q_from_correlation(corr, kind="lap+block", groups=groups)


def _socp_oracle(W, Q):
    beta = cp.Variable(W.shape[0], nonneg=True)
    prob = cp.Problem(cp.Minimize(W @ cp.inv_pos(beta)),
                      [cp.norm(q_sqrt_factor(Q) @ beta, 2) <= 1])
    prob.solve(solver=cp.CLARABEL, **CLARABEL_TIGHT)
    return beta.value


def _explicit_socp_oracle(W, Q):
    """Explicit SOC form of Eq. (8): ||(2, nu_m - beta_m)|| <= nu_m + beta_m."""
    M = W.shape[0]
    beta, nu = cp.Variable(M, nonneg=True), cp.Variable(M, nonneg=True)
    cons = [cp.SOC(nu[m] + beta[m], cp.hstack([2.0, nu[m] - beta[m]])) for m in range(M)]
    cons.append(cp.norm(q_sqrt_factor(Q) @ beta, 2) <= 1)
    cp.Problem(cp.Minimize(W @ nu), cons).solve(solver=cp.CLARABEL, **CLARABEL_TIGHT)
    return beta.value


def _primal_oracle(K, y, Q, C):
    """Q-MKL primal (constrained form of (3)) by cvxpy; skip if the solver fails."""
    try:
        ref = qmkl_primal_cvx(K, y, Q, C=C)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    return ref["objective"], ref["weights"]


# ---------------------------------------------------------------------------
# Module 2: closed forms, root finder, SOCP, SDP
# ---------------------------------------------------------------------------

GROUPS6 = [0, 0, 1, 1, 1, 2]


@pytest.mark.parametrize("kind", ["ones", "identity", "block", "diag"])
def test_closed_forms_match_socp_and_sdp(kind):
    rng = np.random.default_rng(1)
    W = rng.exponential(size=6)
    Q = {"ones": np.ones((6, 6)), "identity": np.eye(6),
         "block": block_diagonal_q(GROUPS6, add_identity=False),
         "diag": np.diag(rng.uniform(0.5, 2.0, 6))}[kind]
    beta = qmkl_beta_step(W, Q, method="closed_form")
    np.testing.assert_allclose(beta, _socp_oracle(W, Q), atol=BETA_STEP_ATOL)
    np.testing.assert_allclose(beta, _explicit_socp_oracle(W, Q), atol=BETA_STEP_ATOL)
    np.testing.assert_allclose(beta, qmkl_beta_step(W, Q, method="sdp"), atol=BETA_STEP_ATOL)
    np.testing.assert_allclose(beta @ Q @ beta, 1.0, rtol=1e-12)


def test_closed_forms_are_the_lp_formulas():
    """Q = ones: beta ~ sqrt(W) (l1); Q = I: Kloft's p = 2 formula; block-of-ones closed form."""
    W = np.array([0.3, 1.2, 2.0, 0.7, 0.1, 1.5])
    np.testing.assert_allclose(qmkl_beta_step(W, np.ones((6, 6))),
                               np.sqrt(W) / np.sqrt(W).sum(), rtol=1e-12)
    np.testing.assert_allclose(qmkl_beta_step(W, np.eye(6)),
                               W ** (1 / 3) / np.sqrt(np.sum(W ** (2 / 3))), rtol=1e-12)
    a = np.array([np.sqrt(W[:2]).sum(), np.sqrt(W[2:5]).sum(), np.sqrt(W[5])])
    expected = np.sqrt(W) * a[GROUPS6] ** (-1 / 3) / np.sqrt(np.sum(a ** (4 / 3)))
    np.testing.assert_allclose(qmkl_beta_step(W, block_diagonal_q(GROUPS6, add_identity=False)),
                               expected, rtol=1e-12)


@pytest.mark.parametrize("trial", range(4))
def test_root_finder_matches_socp_and_sdp(trial):
    rng = np.random.default_rng(10 + trial)
    Q = _random_q(rng, 6, GROUPS6)
    W = rng.exponential(size=6)
    step = BetaStep(Q, "root")
    beta = step.step(W)
    assert step.counts["root"] == 1 and step.counts["fallback"] == 0  # converged, no fallback
    np.testing.assert_allclose(beta @ Q @ beta, 1.0, rtol=1e-10)
    np.testing.assert_allclose(beta, _socp_oracle(W, Q), atol=BETA_STEP_ATOL)
    np.testing.assert_allclose(beta, qmkl_beta_step(W, Q, method="socp"), atol=BETA_STEP_ATOL)
    np.testing.assert_allclose(beta, qmkl_beta_step(W, Q, method="sdp"), atol=BETA_STEP_ATOL)


def test_root_finder_larger_problem_and_warm_start():
    rng = np.random.default_rng(3)
    M = 40
    Q = _random_q(rng, M, np.arange(M) // 8)
    W = rng.exponential(size=M) * np.exp(rng.normal(scale=3, size=M))  # wide range
    step = BetaStep(Q, "root")
    cold = step.step(W)
    warm = step.step(W * 1.01, cold)
    assert step.counts["fallback"] == 0
    np.testing.assert_allclose(cold, qmkl_beta_step(W, Q, method="socp"), atol=BETA_STEP_ATOL)
    np.testing.assert_allclose(warm, cold, atol=1e-8)  # scaling W changes nothing


@pytest.mark.parametrize("kind", ["ones", "block"])
def test_root_finder_handles_singular_q(kind):
    """The Newton root finder of (9) needs no Q^{-1}: it matches the closed forms."""
    rng = np.random.default_rng(8)
    W = rng.exponential(size=6)
    Q = np.ones((6, 6)) if kind == "ones" else block_diagonal_q(GROUPS6, add_identity=False)
    step = BetaStep(Q, "root")
    np.testing.assert_allclose(step.step(W), qmkl_beta_step(W, Q), atol=1e-7)
    assert step.counts["fallback"] == 0


def test_root_finder_ill_conditioned_cov():
    """Q = Corr + 1e-3 I (condition ~1e4) with W over 8 orders: no fallback, optimal value."""
    rng = np.random.default_rng(9)
    M = 30
    base = rng.normal(size=(200, 3))
    corr = np.corrcoef((base @ rng.normal(size=(3, M)) + 0.05 * rng.normal(size=(200, M))).T)
    Q = q_from_correlation(corr, kind="cov")
    assert np.linalg.cond(Q) > 1e3
    W = np.exp(rng.uniform(-18, 0, size=M))
    step = BetaStep(Q, "root")
    beta = step.step(W)
    assert step.counts["fallback"] == 0
    ref = _socp_oracle(W, Q)
    ref = ref / np.sqrt(ref @ Q @ ref)
    assert np.sum(W / beta) <= np.sum(W / ref) * (1 + 1e-6)


def test_backtracking_never_accepts_a_step_that_does_not_move():
    """Near the optimum Armijo's term 1e-4 t g'd falls below the last bit of phi, so
    b + t d == b passes 'phi(trial) <= phi(b) + 1e-4 t g'd': the root finder then 'accepted'
    the same point until its budget ended and fell back to the SOCP (seen with OpenBLAS's
    Haswell/Zen kernels in test_root_finder_ill_conditioned_cov). No such step is accepted."""
    from mklcore.qmkl import _backtrack

    W, Q = np.array([1.0, 2.0]), np.eye(2)

    def phi(x):
        return float(np.sum(W / x) + 0.5 * x @ Q @ x)

    b = np.array([1.0, 1.2])
    f = phi(b)
    d = np.array([1e-300, 1e-300])  # a descent direction too short to move b
    assert np.array_equal(b + d, b)
    assert _backtrack(phi, b, f, d, slope=-1e-300) == (None, f)
    g = Q @ b - W / b ** 2  # a real Newton-sized step is still taken
    trial, f_trial = _backtrack(phi, b, f, -0.1 * g, slope=-0.1 * float(g @ g))
    assert trial is not None and f_trial < f


def _laplacian_q(M, seed, group_size=13):
    """Q of the UCI reproduction: normalised Laplacian of |Corr| + B + 1e-3 I, trace M."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(150, 6))
    alphas = base @ rng.normal(size=(6, M)) + rng.normal(size=(150, M))
    return regulariser("Lap(Cov)+B", np.corrcoef(alphas.T), np.arange(M) // group_size), rng


def test_coordinate_step_minimises_each_coordinate():
    """Each x_m of the Jacobi step solves (9) in beta_m alone; d is a descent direction."""
    Q, rng = _laplacian_q(50, 1)
    W = np.exp(rng.uniform(-25, 0, size=50))
    # far from the optimum, one large weight: c_m = Q_m0 b_0 + ... is positive inside its
    # block (B) and negative outside it (the Laplacian), so both brackets are exercised
    b = rng.uniform(1e-4, 1e-3, size=50)
    b[0] = 1.0
    d, slope = _coordinate_step(Q, W, b)
    x = b + d
    c = Q @ b - np.diag(Q) * b
    assert np.any(c < 0) and np.any(c > 0)
    np.testing.assert_allclose(np.diag(Q) * x + c, W / x ** 2, rtol=1e-12)
    g = Q @ b - W / b ** 2
    assert slope < 0 and np.all(g * d <= 0)


def test_root_finder_normalised_laplacian_hundreds_of_kernels():
    """The UCI regime: a few hundred kernels, Q = L_sym + B + 1e-3 I, W over 20 orders of
    magnitude; cold and warm starts reach the optimum (SOCP path, stationarity) without
    fallback."""
    M = 250
    Q, rng = _laplacian_q(M, 2)
    W = np.exp(rng.uniform(-46, 0, size=M))
    W2 = W * np.exp(0.2 * rng.normal(size=M))  # the next W of Algorithm 1
    step = BetaStep(Q, "root")
    beta = step.step(W)
    warm = step.step(W2, beta)
    assert step.counts["root"] == 2 and step.counts["fallback"] == 0
    # the cold SOCP is inaccurate for W over 20 orders (absolute tolerances; its value is
    # ~2e-6 above the root finder's); scaled by the previous beta, as in Algorithm 1, it agrees
    cold = qmkl_beta_step(W, Q, method="socp")
    assert np.sum(W / beta) <= np.sum(W / (cold / np.sqrt(cold @ Q @ cold))) * (1 + 1e-9)
    np.testing.assert_allclose(warm, BetaStep(Q, "socp").step(W2, beta), atol=1e-5)
    # stationarity (9), W_m / beta_m^2 = delta (Q beta)_m with delta = sum W / beta on
    # beta'Q beta = 1, for every kernel (also the tiny weights), cold and warm, up to the
    # round-off of (Q beta)_m
    for b, w in ((beta, W), (warm, W2)):
        np.testing.assert_allclose(b @ Q @ b, 1.0, rtol=1e-10)
        delta = np.sum(w / b)
        residual = np.abs(w / b ** 2 - delta * (Q @ b))
        assert np.all(residual <= 1e-7 * w / b ** 2 + 1e-14 * delta * (np.abs(Q) @ b))


def test_beta_step_invariances():
    """Invariances of Eq. (8): scaling W, scaling Q by s (beta / sqrt(s)), permuting kernels."""
    rng = np.random.default_rng(4)
    Q = _random_q(rng, 6, GROUPS6)
    W = rng.exponential(size=6)
    beta = qmkl_beta_step(W, Q)
    np.testing.assert_allclose(qmkl_beta_step(7.5 * W, Q), beta, rtol=1e-8)
    np.testing.assert_allclose(qmkl_beta_step(W, 4.0 * Q), beta / 2.0, rtol=1e-8)
    perm = rng.permutation(6)
    np.testing.assert_allclose(qmkl_beta_step(W[perm], Q[np.ix_(perm, perm)]), beta[perm],
                               rtol=1e-8)


@pytest.mark.parametrize("method", ["auto", "root", "socp"])
def test_zero_w_gets_zero_weight(method):
    rng = np.random.default_rng(5)
    Q = _random_q(rng, 6, GROUPS6)
    W = rng.exponential(size=6)
    W[2] = 0.0
    beta = qmkl_beta_step(W, Q, method=method)
    assert beta[2] == 0.0 and np.all(np.delete(beta, 2) > 0)
    keep = np.delete(np.arange(6), 2)
    np.testing.assert_allclose(beta[keep], _socp_oracle(W[keep], Q[np.ix_(keep, keep)]),
                               atol=BETA_STEP_ATOL)


# ---------------------------------------------------------------------------
# the dual: support function
# ---------------------------------------------------------------------------

def _support_oracle(G, Q):
    beta = cp.Variable(G.shape[0], nonneg=True)
    prob = cp.Problem(cp.Maximize(G @ beta), [cp.norm(q_sqrt_factor(Q) @ beta, 2) <= 1])
    prob.solve(solver=cp.CLARABEL, **CLARABEL_TIGHT)
    return prob.value


def test_support_function_matches_cvxpy_and_differs_from_paper_formula():
    rng = np.random.default_rng(6)
    n_differs = 0
    for _ in range(8):
        Q = _random_q(rng, 6, GROUPS6)
        G = rng.exponential(size=6)
        sigma = qmkl_support_function(G, Q)
        np.testing.assert_allclose(sigma, _support_oracle(G, Q), rtol=1e-6)
        paper = np.sqrt(G @ np.linalg.solve(Q, G))  # the paper's ||G||_{Q^-1}
        assert paper >= sigma - 1e-9  # it is an upper bound (relaxes beta >= 0)
        if np.any(np.linalg.solve(Q, G) < 0):
            n_differs += 1
            assert paper > sigma + 1e-6
    assert n_differs > 0  # the negative case occurs, so the distinction is tested


def test_support_function_pivoting_matches_nnls_and_cvxpy(monkeypatch):
    """Block principal pivoting (warm-started along a sequence of G, as in Algorithm 1) gives
    the NNLS value to round-off and the cvxpy value; with no pivoting the NNLS path runs."""
    M = 200
    Q, rng = _laplacian_q(M, 3)
    Gs = [rng.exponential(size=M) * np.exp(rng.normal(scale=2, size=M)) for _ in range(3)]
    Gs.append(Gs[-1] * np.exp(0.05 * rng.normal(size=M)))  # close to the previous G
    pivoting, nnls_only = BetaStep(Q), BetaStep(Q)
    monkeypatch.setattr("mklcore.qmkl._PIVOT_MAX_ITER", 0)
    reference = [nnls_only.support(G) for G in Gs]
    monkeypatch.undo()
    assert nnls_only._support_free is None and nnls_only._inv_chol_t is not None
    for G, ref in zip(Gs, reference):
        sigma = pivoting.support(G)
        assert 0 < pivoting._support_free.sum() < M  # the constraint beta >= 0 is active
        np.testing.assert_allclose(sigma, ref, rtol=1e-12)
    np.testing.assert_allclose(sigma, _support_oracle(Gs[-1], Q), rtol=1e-6)


@pytest.mark.parametrize("kind", ["ones", "identity", "block", "diag", "singular"])
def test_support_function_special_cases(kind):
    rng = np.random.default_rng(7)
    G = rng.exponential(size=6)
    # a singular Q that is neither ones nor block: block-of-ones plus a PSD perturbation
    # in the orthogonal complement of the block indicators
    u = np.array([1.0, -1.0, 0.0, 0.0, 0.0, 0.0])
    Q = {"ones": np.ones((6, 6)), "identity": np.eye(6),
         "block": block_diagonal_q(GROUPS6, add_identity=False),
         "diag": np.diag(rng.uniform(0.5, 2.0, 6)),
         "singular": block_diagonal_q(GROUPS6, add_identity=False) + np.outer(u, u)}[kind]
    np.testing.assert_allclose(qmkl_support_function(G, Q), _support_oracle(G, Q), rtol=1e-6)
    if kind == "ones":
        assert qmkl_support_function(G, Q) == pytest.approx(G.max())
    if kind == "identity":
        assert qmkl_support_function(G, Q) == pytest.approx(np.linalg.norm(G))


# ---------------------------------------------------------------------------
# Algorithm 1
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("beta_step", ["root", "socp"])
def test_algorithm1_reaches_cvxpy_optimum(tiny, beta_step):
    K, y, Q = tiny
    opt, beta_opt = _primal_oracle(K, y, Q, 1.0)
    # Algorithm 1 as written (the SVM solved before every beta step: mode="wrapper")
    res = qmkl_solve(K, y, Q, C=1.0, tol=1e-7, svm_tol=1e-10, beta_step=beta_step,
                     mode="wrapper")
    assert res.success and res.status == 0
    np.testing.assert_allclose(res.objective, opt, rtol=OBJ_RTOL)
    np.testing.assert_allclose(res.weights, beta_opt, atol=BETA_ATOL)
    J = res.history["objective"]
    assert np.all(np.diff(J) <= 1e-7 * J[0])  # J(beta) non-increasing (exact SVM)
    # the interleaved engine reaches the same certified optimum here
    fast = qmkl_solve(K, y, Q, C=1.0, tol=1e-7, svm_tol=1e-10, beta_step=beta_step,
                      mode="interleaved")
    assert fast.success and fast.mode == "interleaved"
    np.testing.assert_allclose(fast.objective, opt, rtol=OBJ_RTOL)
    np.testing.assert_allclose(fast.weights, beta_opt, atol=BETA_ATOL)
    gaps = res.history["gap"]
    assert gaps[-1] <= 1e-7 and gaps[0] > 1e-3  # the gap closes
    # the dual value is a lower bound of the optimum, the hinge primal an upper bound
    assert res.dual_objective <= opt * (1 + 1e-8)
    assert res.primal_objective >= opt * (1 - 1e-8)
    assert res.rigorous_gap >= -1e-8
    np.testing.assert_allclose(res.weights @ Q @ res.weights, 1.0, rtol=1e-8)
    np.testing.assert_allclose(res.history["dual_objective"],
                               J * (1 - gaps), rtol=1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_special_q_reproduce_l1_and_l2_mkl(p):
    """Q = 11^T is l1-MKL, Q = I is l2-MKL (claims Q1, Q2).

    On the lp-MKL reference toy problem (``mklcore.reference``) against its tabulated optima
    and the cvxpy lp-norm primal, and against ``lpmkl_solve`` (analytic update) where present.
    """
    K, y, C = toy_problem()
    M = K.shape[0]
    Q = np.ones((M, M)) if p == 1.0 else np.eye(M)
    res = qmkl_solve(K, y, Q, C=C, tol=1e-7, svm_tol=1e-10, max_iter=1000, mode="wrapper")
    opt, theta_opt = TOY_OPTIMA[p]
    np.testing.assert_allclose(res.objective, opt, rtol=OBJ_RTOL)
    np.testing.assert_allclose(res.weights, theta_opt, atol=BETA_ATOL)
    ref = solve_primal_cvx(K, y, C, p)
    np.testing.assert_allclose(res.objective, ref["objective"], rtol=OBJ_RTOL)
    assert res.beta_step_counts["closed_form"] == res.n_iter - 1
    np.testing.assert_allclose(np.sum(res.weights ** p), 1.0, rtol=1e-10)
    from mklcore import lpnorm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lp = lpnorm.lpmkl_solve(K, y, p=p, C=C, solver="analytic", tol=1e-7, svm_tol=1e-10,
                                max_iter=1000)
    np.testing.assert_allclose(res.objective, lp.objective, rtol=1e-5)
    np.testing.assert_allclose(res.weights, lp.weights, atol=BETA_ATOL)


def test_algorithm1_normalised_laplacian_many_kernels_no_fallback():
    """The UCI regime in Algorithm 1: 120 correlated kernels (12 widths x 10 features),
    Q = L_sym(|Corr_alpha|) + B + 1e-3 I; every beta step converges in the root finder and the
    dual (pivoting) stays consistent: converged, gap below tol, rigorous gap >= 0."""
    rng = np.random.default_rng(11)
    n, d = 50, 10
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - X[:, 1] ** 2 + 0.5 + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    widths = 2.0 ** np.arange(-4, 8)
    K = np.stack([_gauss(X[:, [j]], s) for j in range(d) for s in widths])
    groups = np.repeat(np.arange(d), len(widths))
    Q = regulariser("Lap(Cov)+B", alpha_correlation(K, y, C=1.0), groups)
    res = qmkl_solve(K, y, Q, C=10.0, tol=1e-3, max_iter=300, check_input=False,
                     mode="wrapper")
    assert res.success and res.gap <= 1e-3
    assert res.beta_step_counts["fallback"] == 0 and res.beta_step_counts["root"] == res.n_iter - 1
    assert res.rigorous_gap >= -1e-9 * abs(res.objective)
    np.testing.assert_allclose(res.weights @ Q @ res.weights, 1.0, rtol=1e-10)


def test_qmkl_single_kernel_is_the_svm(tiny):
    K, y, _ = tiny
    res = qmkl_solve(K[:1], y, np.array([[4.0]]), C=1.0, svm_tol=1e-10)
    assert res.weights == pytest.approx([0.5])
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(0.5 * K[0], y)
    np.testing.assert_allclose(res.decision(K[:1]), svc.decision_function(0.5 * K[0]),
                               atol=DECISION_ATOL)


def test_qmkl_permutation_and_singular_block(tiny):
    K, y, Q = tiny
    perm = np.array([3, 0, 4, 1, 2])
    a = qmkl_solve(K, y, Q, C=1.0, tol=1e-7, svm_tol=1e-10)
    b = qmkl_solve(K[perm], y, Q[np.ix_(perm, perm)], C=1.0, tol=1e-7, svm_tol=1e-10)
    # certified to tol in the objective; the weights of the interleaved path to ~sqrt(tol)
    np.testing.assert_allclose(b.weights, a.weights[perm], atol=3e-4)
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-6)
    # a singular block-of-ones Q runs in closed form
    B = block_diagonal_q([0, 0, 1, 1, 2], add_identity=False)
    res = qmkl_solve(K, y, B, C=1.0, tol=1e-6, svm_tol=1e-10, max_iter=500)
    assert res.success and res.beta_step_counts["closed_form"] > 0
    opt, _ = _primal_oracle(K, y, B, 1.0)
    np.testing.assert_allclose(res.objective, opt, rtol=1e-5)


# ---------------------------------------------------------------------------
# Q builders
# ---------------------------------------------------------------------------

def test_graph_laplacian_and_block():
    S = np.array([[0, 1, 0.5], [1, 0, 0], [0.5, 0, 0]])
    L = graph_laplacian(S, add_identity=False, normalize_trace=False)
    np.testing.assert_allclose(L @ np.ones(3), 0, atol=1e-15)
    Q = graph_laplacian(S)
    assert np.trace(Q) == pytest.approx(3) and np.linalg.eigvalsh(Q)[0] > 0
    # Theorem-2 caveat: 1 is an eigenvector of I + L with eigenvalue 1
    assert theorem2_proxy(graph_laplacian(S, normalize_trace=False)) == pytest.approx(1.0)
    B = block_diagonal_q(["a", "a", "b"])
    assert np.trace(B) == pytest.approx(3) and np.linalg.eigvalsh(B)[0] > 0
    assert theorem2_proxy(B) < 1  # block parts lower the bound
    with pytest.raises(ValueError, match="non-negative"):
        graph_laplacian(-S)
    with pytest.raises(ValueError, match="symmetric"):
        graph_laplacian(np.triu(S))


def test_grid_laplacian():
    L = grid_laplacian(3, 4, mu=1.0, add_identity=False)
    assert L.shape == (12, 12)
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    # pixel (1, 1) = index 5 has 4 edge neighbours (weight 1) and 4 diagonal ones (1/sqrt 2)
    assert L[5, 5] == pytest.approx(4 + 4 / np.sqrt(2))
    assert L[5, 6] == pytest.approx(-1) and L[5, 10] == pytest.approx(-1 / np.sqrt(2))
    assert L[0, 2] == 0  # distance 2 > sqrt(2)
    Q = grid_laplacian(3, 4, mu=2.5)
    np.testing.assert_allclose(Q, np.eye(12) + 2.5 * L)
    np.testing.assert_allclose(grid_laplacian(3, 4, mu=2.5, sparse=True).toarray(), Q)
    dense = grid_laplacian(3, 4, radius=np.inf, add_identity=False)
    assert dense[0, 11] == pytest.approx(-1 / np.hypot(2, 3))
    with pytest.raises(ValueError, match="'h' parameter of grid_laplacian"):
        grid_laplacian(0, 4)


def test_weight_map_roughness():
    L = grid_laplacian(3, 3, add_identity=False)
    smooth = np.ones(9)
    checker = np.array([1, -1, 1, -1, 1, -1, 1, -1, 1.0])
    assert dirichlet_ratio(smooth, L) == pytest.approx(0.0, abs=1e-12)
    assert dirichlet_ratio(checker, L) > dirichlet_ratio(smooth + 0.1 * checker, L)
    assert isolated_pockets(smooth, (3, 3)) == 0
    # the centre of the checkerboard has 4 opposite and 4 equal neighbours: not isolated
    assert isolated_pockets(checker, (3, 3)) == 0
    spike = np.ones(9)
    spike[4] = -1.0
    assert isolated_pockets(spike, (3, 3)) == 1
    spike[[0, 1]] = 0.0  # zero weights are ignored, on either side
    assert isolated_pockets(spike, (3, 3)) == 1


def test_q_from_alpha_covariance(tiny):
    K, y, _ = tiny
    corr = alpha_correlation(K, y, C=1.0)
    assert np.allclose(np.diag(corr), 1) and np.allclose(corr, corr.T)
    groups = [0, 0, 1, 1, 1]
    for kind in ("cov", "lap", "lap+block"):
        Q = q_from_alpha_covariance(K, y, kind=kind, groups=groups)
        assert np.trace(Q) == pytest.approx(5)
        assert np.linalg.eigvalsh(Q)[0] > 0
        np.testing.assert_allclose(Q, q_from_correlation(corr, kind=kind, groups=groups))
    with pytest.raises(ValueError, match="needs groups"):
        q_from_correlation(corr, kind="lap+block")


def test_multiview_kernels():
    rng = np.random.default_rng(11)
    views = {"a": rng.normal(size=(40, 9)), "b": rng.normal(size=(40, 3))}
    y = np.where(views["a"][:, 0] + rng.normal(size=40) > 0, 1.0, -1.0)
    train, test = np.arange(30), np.arange(30, 40)
    K, Kt, groups, names = multiview_kernels(
        {k: v[train] for k, v in views.items()}, y[train],
        {k: v[test] for k, v in views.items()}, fractions=(0.5, 1.0))
    assert K.shape == (12, 30, 30) and Kt.shape == (12, 10, 30)
    assert list(groups) == ["a"] * 6 + ["b"] * 6
    assert names[0] == "a:linear:5" and names[7] == "b:linear:3"  # min 2 features, ceil
    np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 30)  # mean diagonal 1
    # test kernels are the same functions, evaluated against the training points
    K_self, K_self_test, _, _ = multiview_kernels(
        {k: v[train] for k, v in views.items()}, y[train],
        {k: v[train] for k, v in views.items()}, fractions=(0.5, 1.0))
    np.testing.assert_allclose(K_self_test, K_self, atol=1e-12)
    # the most discriminative feature of view a is kept in the first stage
    assert "a:linear:5" in names
    with pytest.raises(ValueError, match="Unknown kernel kind"):
        multiview_kernels(views, y, kinds=("sigmoid",))


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------

def test_bad_q_messages(tiny):
    K, y, Q = tiny
    with pytest.raises(ValueError, match="Q of qmkl_solve is not symmetric"):
        qmkl_solve(K, y, np.triu(Q))
    indefinite = Q - 2 * np.linalg.eigvalsh(Q)[-1] * np.eye(5) * np.array([1, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="Q of qmkl_solve is indefinite: smallest eigenvalue"):
        qmkl_solve(K, y, indefinite)
    bare = graph_laplacian(np.ones((5, 5)) - np.eye(5), add_identity=False)
    with pytest.raises(ValueError, match="does not bound the kernel weights.*Add the identity"):
        qmkl_solve(K, y, bare)
    with pytest.raises(ValueError, match=r"Q must be 5 x 5"):
        qmkl_solve(K, y, np.eye(4))
    with pytest.raises(ValueError, match="singular.*positive definite"):
        qsvm_solve(np.eye(5), [1, -1, 1, -1, 1], np.ones((5, 5)))
    with pytest.raises(ValueError, match="closed_form"):
        qmkl_solve(K, y, Q, beta_step="closed_form")
    with pytest.raises(ValueError, match="'beta_step' parameter of qmkl_solve"):
        qmkl_solve(K, y, Q, beta_step="newton")
    with pytest.raises(ValueError, match="'C' parameter of qmkl_solve"):
        qmkl_solve(K, y, Q, C=0.0)
    with pytest.raises(ValueError, match="contains NaN"):
        check_q(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="W must be non-negative"):
        qmkl_beta_step(-np.ones(5), Q)


# ---------------------------------------------------------------------------
# Q-SVM (Sec. 3 and 5.1 of Hinrichs et al.)
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def digits38():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero((y == 3) | (y == 8))[:80]
    return X[keep] / 16.0, np.where(y[keep] == 3, 1.0, -1.0)


def test_qsvm_equals_svm_with_transformed_kernel(digits38):
    X, y = digits38
    Q = grid_laplacian(8, 8, mu=10.0)
    res = qsvm_solve(X, y, Q, C=1.0, svm_tol=1e-10)
    K_Q = X @ np.linalg.solve(Q, X.T)
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(K_Q, y)
    # LIBSVM keeps the kernel in float32 (its decision values move by ~1e-6 relative)
    np.testing.assert_allclose(X @ res.coef + res.intercept, svc.decision_function(K_Q),
                               atol=1e-4)
    # sparse Q (splu path) gives the same model
    res_sparse = qsvm_solve(X, y, grid_laplacian(8, 8, mu=10.0, sparse=True), C=1.0,
                            svm_tol=1e-10)
    np.testing.assert_allclose(res_sparse.coef, res.coef, atol=1e-8)


def test_qsvm_matches_cvxpy_primal_and_is_smoother(digits38):
    X, y = digits38
    L = grid_laplacian(8, 8, mu=1.0, add_identity=False)
    Q = np.eye(64) + 10.0 * L
    res = qsvm_solve(X, y, Q, C=1.0, svm_tol=1e-10)
    w, b = cp.Variable(64), cp.Variable()
    xi = cp.Variable(X.shape[0], nonneg=True)
    R = np.linalg.cholesky(Q).T
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(R @ w) + cp.sum(xi)),
                      [cp.multiply(y, X @ w + b) >= 1 - xi])
    prob.solve(solver=cp.CLARABEL, **CLARABEL_TIGHT)
    np.testing.assert_allclose(res.coef, w.value, atol=1e-6)
    assert res.intercept == pytest.approx(b.value, abs=1e-5)
    assert res.objective == pytest.approx(prob.value, rel=1e-6)
    plain = qsvm_solve(X, y, None, C=1.0, svm_tol=1e-10)

    def dirichlet(v):
        return v @ L @ v / (v @ v)

    assert dirichlet(res.coef) < 0.5 * dirichlet(plain.coef)  # about 0.79 vs 4.44


def test_qsvm_bad_q(digits38):
    X, y = digits38
    with pytest.raises(ValueError, match="must be positive definite"):
        qsvm_solve(X, y, grid_laplacian(8, 8, add_identity=False))
    with pytest.raises(ValueError, match="Q must be 64 x 64"):
        qsvm_solve(X, y, np.eye(10))


def test_qsvm_classifier(digits38):
    X, y = digits38
    labels = np.where(y > 0, "three", "eight")
    clf = QSVMClassifier(Q=grid_laplacian(8, 8, mu=1.0), C=1.0).fit(X, labels)
    assert clf.coef_.shape == (64,) and list(clf.classes_) == ["eight", "three"]
    assert clf.score(X, labels) > 0.95
    f = clf.decision_function(X)
    np.testing.assert_allclose(f, X @ clf.coef_ + clf.intercept_)
    # Q = None is the plain linear SVM
    plain = QSVMClassifier(C=1.0).fit(X, labels)
    svc = SVC(kernel="linear", C=1.0, tol=1e-6).fit(X, labels)
    np.testing.assert_allclose(plain.decision_function(X), svc.decision_function(X), atol=1e-4)
    with pytest.raises(ValueError, match="'C' parameter of QSVMClassifier"):
        QSVMClassifier(C=-1).fit(X, labels)
    # the Q-SVM goes through the base fit (features instead of a kernel stack)
    from mklcore._base import BaseMKLClassifier

    assert isinstance(clf, BaseMKLClassifier) and "fit" not in vars(QSVMClassifier)
    assert clf.n_iter_ == 1 and clf.converged_ and len(clf.history_["objective"]) == 1


def test_history_rows_and_status():
    """One history row per outer iteration, converged or stopped by max_iter."""
    K, y, C = toy_problem()
    Q = np.eye(K.shape[0])
    res = qmkl_solve(K, y, Q, C=C, tol=1e-6)
    assert res.status == 0 and all(len(v) == res.n_iter for v in res.history.values())
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        res = qmkl_solve(K, y, Q, C=C, tol=1e-12, max_iter=2)
    assert res.status == 1 and all(len(v) == 2 for v in res.history.values())
    res = qsvm_solve(np.stack([K[0][0], K[1][0]], axis=1), y, None)
    assert res.status == 0 and res.n_iter == 1 and len(res.history["objective"]) == 1


# ---------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------

def test_qmkl_classifier():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    kernels = [("linear", {}), ("gaussian", {"sigma": 1.0}), ("gaussian", {"sigma": 3.0})]
    for Q in (None, "ones", "lap", "block", "lap+block", np.eye(3)):
        clf = QMKLClassifier(kernels=kernels, Q=Q, groups=[0, 1, 1], C=1.0).fit(X, y)
        assert clf.weights_.shape == (3,) and clf.converged_
        np.testing.assert_allclose(clf.weights_ @ clf.Q_ @ clf.weights_, 1.0, rtol=1e-8)
        assert clf.score(X, y) > 0.8
    l2 = QMKLClassifier(kernels=kernels, Q=None).fit(X, y)
    assert np.linalg.norm(l2.weights_) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="needs groups"):
        QMKLClassifier(kernels=kernels, Q="block").fit(X, y)
    with pytest.raises(ValueError, match="'Q' parameter of QMKLClassifier"):
        QMKLClassifier(kernels=kernels, Q="laplacian").fit(X, y)


def test_default_svm_backend_gives_the_same_solution(tiny, digits38):
    """The compiled engine (default) and LIBSVM (the reference) give the same solutions, to
    the SVM tolerance, in every Q-MKL function that trains SVMs."""
    K, y, Q = tiny
    fits = [qmkl_solve(K, y, Q, C=1.0, tol=1e-6, svm_tol=1e-9, svm_backend=b, mode="wrapper")
            for b in (None, "libsvm")]
    np.testing.assert_allclose(fits[0].weights, fits[1].weights, atol=1e-5)
    np.testing.assert_allclose(fits[0].objective, fits[1].objective, rtol=1e-6)
    np.testing.assert_allclose(alpha_correlation(K, y, svm_backend="libsvm", svm_tol=1e-9),
                               alpha_correlation(K, y, svm_tol=1e-9), atol=1e-4)
    X, y38 = digits38
    Q_grid = grid_laplacian(8, 8, mu=1.0)
    a, b = (qsvm_solve(X, y38, Q_grid, svm_backend=s, svm_tol=1e-9) for s in (None, "libsvm"))
    np.testing.assert_allclose(X @ a.coef + a.intercept, X @ b.coef + b.intercept, atol=1e-4)


def test_chol_solve_is_scipy_cho_solve():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(40, 40))
    A = A @ A.T + 0.1 * np.eye(40)
    b = rng.normal(size=40)
    expected = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), b)
    np.testing.assert_array_equal(_chol_solve(A.copy(), b), expected)
    with pytest.raises(np.linalg.LinAlgError):
        _chol_solve(-np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match="infs or NaNs"):
        _chol_solve(np.eye(3), np.array([1.0, np.nan, 0.0]))


def _benchmark_heart_stack():
    """A problem of the benchmark notebook where the interleaved path stalls (heart, 150
    points subsampled, 30 % test, 20 % flipped labels, C = 1)."""
    import mklcore.repro.mkl_benchmark as mb
    from mklcore.datasets import add_label_noise
    from mklcore.kernels import KernelBank
    from mklcore.repro.experiments import repeated_splits
    from sklearn.preprocessing import StandardScaler

    X, y = mb.load_set("heart", 150, 0)
    split = repeated_splits(y, n_repeats=3, test_size=0.3, seed=0)[0]
    X_tr = StandardScaler().fit_transform(X[split["train"]])
    y_tr = add_label_noise(y[split["train"]], 0.2, random_state=200)
    kernels = mb.benchmark_bank(X.shape[1])
    K = KernelBank(kernels=kernels, normalize="trace").fit_transform(X_tr)
    Q = QMKLClassifier(kernels=kernels, normalize="trace", Q="lap").fit(X_tr, y_tr).Q_
    return K, np.where(y_tr == np.unique(y_tr)[1], 1.0, -1.0), Q


def test_both_modes_certify_the_problem_where_interleaved_stalled():
    # the interleaved path used to drop a kernel for good (S_m = 0 at a partial alpha gave
    # beta_m = 0, and W = beta^2 S kept it at 0) and stalled at a relative gap 1.4e-2
    K, y, Q = _benchmark_heart_stack()
    default = qmkl_solve(K, y, Q, C=1.0)
    wrapper = qmkl_solve(K, y, Q, C=1.0, mode="wrapper")
    assert default.mode == "interleaved" and default.success and default.n_iter <= 30
    assert wrapper.success and wrapper.n_iter <= 20
    assert default.objective == pytest.approx(wrapper.objective, rel=3e-4)
    assert np.all(default.weights > 0.1) and np.all(wrapper.weights > 0.1)


def test_beta_step_revives_a_dropped_kernel():
    # a kernel at weight 0 with S_m > 0 must get a positive weight from the next beta step
    from mklcore.qmkl import _QMKLStep
    from types import SimpleNamespace

    step = _QMKLStep(np.eye(3), "auto")
    state = SimpleNamespace(theta=np.array([0.8, 0.6, 0.0]), S=np.array([1.0, 1.0, 1.0]))
    beta = step.step(state, None)
    assert beta[2] > 0 and np.isclose(beta @ beta, 1.0)
