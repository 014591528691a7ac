"""Tests of mklcore.stpmkl (Yang et al., ICML 2012): Lemma 2, Lemma 3, Algorithm 1 and
Theorem 2 against cvxpy oracles, the l1-MKL limit, MiPMKL, the estimators, the iteration
contract.

cvxpy oracles factor every kernel (``mklcore.reference.factor_kernels``) and use
``sum_squares`` instead of ``quad_form`` (Gram matrices are numerically indefinite).
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from mklcore import decision
from mklcore.reference import factor_kernels
from mklcore.stpmkl import (KernelFactors, MiPMKLClassifier, StPMKLClassifier,
                            factorize_kernels, group_soft_threshold, mipmkl_solve,
                            project_box_budget, rho_from_theory, stpmkl_decision,
                            stpmkl_grid, stpmkl_objectives, stpmkl_solve, theorem2_bound)


#: agreement of an exact projection / shrinkage with an interior-point solver (Clarabel's
#: default accuracy is ~1e-8; 1e-5 leaves room for its scaling)
CVX_TOL = 1e-5
#: lambda and budget of the toy problem
LAM, RHO = 0.05, 25.0


def toy(seed=0, n=40):
    """n points in [0,1]^3, labels from a noisy threshold, 8 Gaussian kernels (widths 0.25
    and 1 on all attributes and on each one)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] - 0.75 + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    Ks = []
    for width in (0.25, 1.0):
        for cols in ([0, 1, 2], [0], [1], [2]):
            Z = X[:, cols]
            D = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
            Ks.append(np.exp(-D / (2 * width * width)))
    return np.stack(Ks), y, X


def _solve(prob):
    prob.solve(solver="CLARABEL")
    if prob.status != "optimal":
        pytest.skip(f"cvxpy status {prob.status}")
    return prob.value


def cvx_dual(K, y, lam, rho, upper=1.0):
    """max_{gamma in Q'} D(gamma), D(gamma) = sum(gamma)/n - max_j (gamma y)' K_j (gamma y)
    / (2 lam n^2), with epigraph constraints per kernel."""
    n = y.size
    R = factor_kernels(K)
    g = cp.Variable(n)
    t = cp.Variable()
    cons = [g >= 0, g <= upper, cp.sum_squares(R[0].T @ cp.multiply(g, y)) <= t]
    cons += [cp.sum_squares(Rj.T @ cp.multiply(g, y)) <= t for Rj in R[1:]]
    if np.isfinite(rho):
        cons.append(cp.sum(g) <= rho)
    value = _solve(cp.Problem(cp.Maximize(cp.sum(g) / n - t / (2 * lam * n * n)), cons))
    return value, g.value


def cvx_primal(K, y, lam, rho, upper=1.0):
    """min_f P(f) = max_{gamma in Q'} L(f, gamma) + lam/2 N(f)^2, the inner maximum (a
    continuous knapsack) replaced by its LP dual."""
    n = y.size
    R = factor_kernels(K)
    w = [cp.Variable(Rj.shape[1]) for Rj in R]
    fX = sum(Rj @ wj for Rj, wj in zip(R, w))
    theta = cp.Variable(nonneg=True)
    s = cp.Variable(n, nonneg=True)
    N = cp.Variable()
    cons = [s >= (1 - cp.multiply(y, fX)) / n - theta, N >= sum(cp.norm(wj) for wj in w)]
    budget = rho * theta if np.isfinite(rho) else 0
    if not np.isfinite(rho):
        cons.append(theta == 0)
    obj = budget + upper * cp.sum(s) + lam / 2 * cp.square(N)
    value = _solve(cp.Problem(cp.Minimize(obj), cons))
    norms = np.array([np.linalg.norm(wj.value) for wj in w])
    return value, norms / norms.sum()


@pytest.fixture(scope="module")
def toy_problem():
    K, y, X = toy()
    return K, y


@pytest.fixture(scope="module")
def amp_long(toy_problem):
    K, y = toy_problem
    return stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=None,
                        max_iter=3000, restart=False)


# ---------------------------------------------------------------------------------------
# Lemma 2: projection
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_projection_matches_cvxpy(seed):
    """Lemma 2: Proj equals min ||g - ghat||^2 over the box and budget."""
    rng = np.random.default_rng(seed)
    n = 30
    ghat = rng.normal(0, 2, size=n)
    upper = rng.uniform(0.5, 2.0) if seed % 2 else rng.uniform(0.5, 2.0, size=n)
    rho = rng.uniform(0.5, 20.0)
    g = cp.Variable(n)
    _solve(cp.Problem(cp.Minimize(cp.sum_squares(g - ghat)),
                      [g >= 0, g <= upper, cp.sum(g) <= rho]))
    ours, theta = project_box_budget(ghat, upper, rho, return_theta=True)
    np.testing.assert_allclose(ours, g.value, atol=CVX_TOL)
    np.testing.assert_allclose(ours, project_box_budget(ghat, upper, rho, method="bisect"),
                               atol=1e-9)
    if theta > 0:  # the budget is active
        assert ours.sum() == pytest.approx(rho, rel=1e-10)
    np.testing.assert_allclose(project_box_budget(ours, upper, rho), ours, atol=1e-12)


def test_projection_edge_cases():
    # inactive budget: a plain clip
    np.testing.assert_array_equal(project_box_budget([-1.0, 0.5, 3.0], 1.0, 10.0),
                                  [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(project_box_budget([-1.0, 0.5, 3.0], 1.0), [0.0, 0.5, 1.0])
    # ties and a budget met exactly at a breakpoint
    out = project_box_budget([2.0, 2.0, 2.0, 2.0], 1.0, 2.0)
    np.testing.assert_allclose(out, 0.5)
    out = project_box_budget([1.0, 1.0, 0.0], 1.0, 2.0)
    np.testing.assert_allclose(out, [1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="'method' parameter of project_box_budget"):
        project_box_budget([3.0, 1.0], 1.0, 1.0, method="newton")


# ---------------------------------------------------------------------------------------
# Lemma 3: group soft-thresholding
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_group_shrinkage_matches_bisection_and_cvxpy(seed):
    """Lemma 3: the closed form equals bisection and cvxpy's prox of c/2 (sum s)^2."""
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(1, 21))
    a = rng.exponential(size=m)
    c = [0.01, 1.0, 10.0][seed % 3] * rng.exponential()
    shrink, S = group_soft_threshold(a, c)
    shrink_b, S_b = group_soft_threshold(a, c, method="bisect")
    assert S == pytest.approx(S_b, abs=1e-8)
    np.testing.assert_allclose(shrink, shrink_b, atol=1e-8)
    s = cp.Variable(m, nonneg=True)
    _solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(s - a) + c / 2 * cp.square(cp.sum(s)))))
    np.testing.assert_allclose(shrink * a, s.value, atol=CVX_TOL)
    assert S == pytest.approx((shrink * a).sum(), abs=1e-12)


def test_group_shrinkage_edge_cases():
    shrink, S = group_soft_threshold([0.0, 0.0], 1.0)
    assert S == 0 and np.all(shrink == 0)
    shrink, S = group_soft_threshold([2.0, 1.0], 0.0)
    assert S == 3.0 and np.all(shrink == 1)


# ---------------------------------------------------------------------------------------
# AMP: saddle point, bound, rates
# ---------------------------------------------------------------------------------------

def test_amp_saddle_point_matches_cvxpy(toy_problem, amp_long):
    """Algorithm 1 solves (11): D(gamma_hat) <= D* = P* <= P(f_hat), gap -> 0."""
    K, y = toy_problem
    d_star, _ = cvx_dual(K, y, LAM, RHO)
    p_star, weights_star = cvx_primal(K, y, LAM, RHO)
    assert p_star == pytest.approx(d_star, rel=1e-5)          # strong duality of the oracle
    h = amp_long.history
    for T in (10, 100, 1000, 3000):
        assert h["dual_objective"][T - 1] <= d_star + 1e-6
        assert h["objective"][T - 1] >= d_star - 1e-6
    assert amp_long.abs_gap < 2e-3
    assert amp_long.objective == pytest.approx(d_star, abs=2e-3)
    np.testing.assert_allclose(amp_long.weights, weights_star, atol=0.03)
    # the gap of the averaged iterate decreases (up to round-off) over the first 600 steps
    assert np.all(np.diff(h["abs_gap"][:600]) <= 1e-6)
    # the result's certificate is P - D recomputed from (coef, gamma)
    vals = stpmkl_objectives(K, y, amp_long.coef, amp_long.gamma, lam=LAM, rho=RHO)
    assert vals["gap"] == pytest.approx(amp_long.abs_gap, rel=1e-8)
    assert vals["primal"] == pytest.approx(amp_long.objective, rel=1e-10)


def test_knapsack_primal_matches_cvxpy(toy_problem, amp_long):
    """P(f) by sorting equals cvxpy's max over Q' of L(f, gamma) plus R(f)."""
    K, y = toy_problem
    n = y.size
    fX = np.einsum("jik,kj->i", K, amp_long.coef)
    g = cp.Variable(n)
    value = _solve(cp.Problem(cp.Maximize(g @ ((1 - y * fX) / n)),
                              [g >= 0, g <= 1, cp.sum(g) <= RHO]))
    N = amp_long.kernel_norms.sum()
    assert amp_long.objective == pytest.approx(value + LAM / 2 * N * N, abs=CVX_TOL)


def test_theorem2_bound_holds(toy_problem, amp_long):
    """Theorem 2: gap <= (||f*||^2 + max ||gamma||^2) / (2 tau T) at every T."""
    K, y = toy_problem
    h = amp_long.history
    assert np.all(h["abs_gap"] <= h["bound"] * (1 + 1e-9))
    bound = theorem2_bound(K, y, amp_long.gamma, lam=LAM, rho=RHO, step=amp_long.step,
                           n_iter=amp_long.n_iter)
    assert bound == pytest.approx(amp_long.bound, rel=1e-8)
    assert amp_long.abs_gap <= bound


def test_restarted_amp_matches_cvxpy_and_beats_one_average(toy_problem, amp_long):
    """Restarted averaging (the default): same saddle point, certified, a much smaller gap."""
    K, y = toy_problem
    d_star, _ = cvx_dual(K, y, LAM, RHO)
    res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=None,
                       max_iter=1000)
    h = res.history
    assert res.n_restarts > 0
    assert np.all(h["dual_objective"] <= d_star + 1e-6)
    assert np.all(h["objective"] >= d_star - 1e-6)
    assert res.objective == pytest.approx(d_star, abs=1e-4)
    # each epoch is Algorithm 1 warm-started at the restart point: its bound holds
    assert np.all(h["abs_gap"] <= h["bound"] * (1 + 1e-9))
    assert res.abs_gap < amp_long.history["abs_gap"][999] / 10
    vals = stpmkl_objectives(K, y, res.coef, res.gamma, lam=LAM, rho=RHO)
    assert vals["gap"] == pytest.approx(res.abs_gap, rel=1e-8)
    # with a tolerance it stops early, and says when the budget ran out
    fast = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=1e-3,
                        max_iter=1000)
    slow = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=1e-3,
                        max_iter=1000, restart=False)
    assert fast.success and fast.n_iter < slow.n_iter
    with pytest.warns(ConvergenceWarning, match="did not converge in 5 iterations"):
        short = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", max_iter=5)
    assert short.status == 1


@pytest.mark.parametrize("rho", [RHO, 12.0])
def test_exact_solver_matches_cvxpy_and_long_amp(toy_problem, amp_long, rho):
    """solver="exact" (the default): the saddle value of (11) to its certified gap, in a few
    tens of iterations; the certificate is the same as AMP's (stpmkl_objectives)."""
    K, y = toy_problem
    d_star, g_star = cvx_dual(K, y, LAM, rho)
    p_star, _ = cvx_primal(K, y, LAM, rho)
    res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=rho, tol=1e-4)
    assert res.solver == "exact" and res.success and res.gap <= 1e-4 and res.n_iter < 60
    assert res.dual_objective <= d_star + 1e-7 and res.objective >= p_star - 1e-7
    assert res.objective == pytest.approx(d_star, rel=1e-4)
    assert res.dual_objective == pytest.approx(d_star, rel=1e-4)
    assert res.dual_objective <= res.lower_bound + 1e-12 or res.lower_bound <= d_star + 1e-7
    vals = stpmkl_objectives(K, y, res.coef, res.gamma, lam=LAM, rho=rho)
    assert vals["primal"] == pytest.approx(res.objective, rel=1e-9)
    assert vals["dual"] == pytest.approx(res.dual_objective, rel=1e-9)
    assert vals["gap"] == pytest.approx(res.abs_gap, rel=1e-6, abs=1e-12)
    np.testing.assert_allclose(res.decision(K), res.decision_train, atol=1e-10)
    np.testing.assert_allclose(res.gamma.sum(), min(rho, g_star.sum()), rtol=1e-3)
    if rho == RHO:   # the long runs of AMP reach the same value
        amp = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=rho, solver="amp", tol=1e-4,
                           max_iter=5000)
        assert amp.success
        assert res.objective == pytest.approx(amp.objective, rel=2e-4)
        assert res.objective == pytest.approx(amp_long.objective, rel=2e-3)
        np.testing.assert_allclose(res.weights, amp.weights, atol=0.02)


def test_exact_solver_factors_and_warm_start(toy_problem):
    K, y = toy_problem
    dense = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-3)
    F = factorize_kernels(K, rank_tol=1e-13)
    fact = stpmkl_solve(None, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-3, factors=F)
    assert fact.success and fact.n_iter == dense.n_iter
    np.testing.assert_allclose(fact.history["abs_gap"], dense.history["abs_gap"], rtol=1e-5,
                               atol=1e-9)
    np.testing.assert_allclose(fact.decision(K), dense.decision_train, atol=1e-6)
    warm = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-3,
                        warm_start=(dense.coef, dense.gamma))
    assert warm.success and warm.n_iter <= dense.n_iter
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        short = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-6, max_iter=2)
    assert short.status == 1 and len(short.history["gap"]) == 2


def _slope(gaps, lo=100, hi=1000):
    T = np.unique(np.geomspace(lo, hi, 20).astype(int))
    return np.polyfit(np.log(T), np.log(gaps[T - 1]), 1)[0]


def test_rates_amp_vs_vi(toy_problem, amp_long):
    """Figure 1 (right), Section 4: AMP's gap falls ~1/T, VI's (best eta0) ~1/sqrt(T)."""
    K, y = toy_problem
    amp_gaps = amp_long.history["abs_gap"]
    vi_runs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for factor in (0.1, 1.0, 10.0):
            res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="vi",
                               tol=None, max_iter=1000, eta0=factor * amp_long.step)
            vi_runs.append(res)
    finite = [r for r in vi_runs if np.isfinite(r.abs_gap)]
    best = min(finite, key=lambda r: r.abs_gap)
    assert -1.4 <= _slope(amp_gaps) <= -0.8       # ~ 1/T
    assert -1.0 <= _slope(best.history["abs_gap"]) <= -0.3   # slower, ~ 1/sqrt(T)
    assert best.abs_gap > 3 * amp_gaps[999]       # AMP ahead after 1000 iterations
    assert best.solver == "vi" and np.isnan(best.history["bound"]).all()


# ---------------------------------------------------------------------------------------
# rho >= n: l1-MKL without bias
# ---------------------------------------------------------------------------------------

def cvx_l1mkl_nobias_dual(K, y, C):
    """max sum(alpha) - 1/2 max_j alpha' Y K_j Y alpha, 0 <= alpha <= C (no y'alpha = 0)."""
    R = factor_kernels(K)
    a = cp.Variable(y.size)
    t = cp.Variable()
    cons = [a >= 0, a <= C] + [cp.sum_squares(Rj.T @ cp.multiply(a, y)) <= t for Rj in R]
    return _solve(cp.Problem(cp.Maximize(cp.sum(a) - t / 2), cons))


@pytest.fixture(scope="module")
def l1_fit(toy_problem):
    """AMP with an inactive budget (rho = n), solved to a relative gap of 1e-3."""
    K, y = toy_problem
    return stpmkl_solve(K, y, noise_level=0.0, lam=L1_LAM, rho=float(y.size), tol=1e-3,
                        max_iter=20000)


#: lambda of the l1-MKL checks (two kernels active on the toy problem)
L1_LAM = 0.1


def test_large_budget_is_l1_mkl(toy_problem, l1_fit):
    """With rho >= n the budget is inactive: the optimum of (11) is lam * (the l1-MKL dual
    value without bias, C = 1/(n lam)); (10) "reduces to (2) when there is no noise"."""
    K, y = toy_problem
    n = y.size
    ref = cvx_l1mkl_nobias_dual(K, y, C=1.0 / (n * L1_LAM))
    assert l1_fit.solver == "exact" and l1_fit.success and l1_fit.gap < 1e-3
    # P >= P* and P - P* <= gap: equal to 1e-3 relative
    assert l1_fit.objective == pytest.approx(L1_LAM * ref, rel=1e-3)
    assert l1_fit.dual_objective <= L1_LAM * ref + 1e-9 <= l1_fit.objective + 2e-9
    _, w_ref = cvx_primal(K, y, L1_LAM, np.inf)
    np.testing.assert_allclose(l1_fit.weights, w_ref, atol=0.03)
    # noise_level = 0 with the theoretical budget (>= n) is the same problem, step by step
    assert rho_from_theory(n, 0.0) >= n
    a = stpmkl_solve(K, y, noise_level=0.0, lam=L1_LAM, max_iter=50, tol=None)
    b = stpmkl_solve(K, y, noise_level=0.0, lam=L1_LAM, rho=float(n), max_iter=50, tol=None)
    np.testing.assert_allclose(a.history["objective"], b.history["objective"], rtol=1e-12)


def test_large_budget_close_to_simplemkl(toy_problem, l1_fit):
    """With a bias (SimpleMKL) the l1-MKL objective can only be lower, and is close."""
    from mklcore import simplemkl

    K, y = toy_problem
    n = y.size
    ref = simplemkl.simplemkl_solve(K, y, C=1.0 / (n * L1_LAM), tol=1e-4)
    # SimpleMKL's J(d) is in the C-convention: lam * J = objective of (3) with a bias
    assert L1_LAM * ref.objective <= l1_fit.objective * (1 + 1e-2)
    assert L1_LAM * ref.objective >= 0.8 * l1_fit.objective


# ---------------------------------------------------------------------------------------
# factor mode, warm start, decision function
# ---------------------------------------------------------------------------------------

def test_factor_mode_matches_dense(toy_problem):
    K, y = toy_problem
    dense = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=None,
                         max_iter=300)
    F = factorize_kernels(K, rank_tol=1e-13)
    assert isinstance(F, KernelFactors) and F.ranks.sum() < K.shape[0] * K.shape[1]
    fact = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=None,
                        max_iter=300, factors=F)
    np.testing.assert_allclose(fact.history["abs_gap"], dense.history["abs_gap"], atol=1e-9)
    np.testing.assert_allclose(fact.weights, dense.weights, atol=1e-8)
    # the rebuilt coefficients give the same function on training and new points
    np.testing.assert_allclose(fact.decision(K), dense.decision(K), atol=1e-7)
    np.testing.assert_allclose(fact.decision_train, dense.decision_train, atol=1e-7)
    np.testing.assert_allclose(dense.decision(K), dense.decision_train, atol=1e-10)
    via_tol = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=None,
                           max_iter=50, rank_tol=1e-13)
    np.testing.assert_allclose(via_tol.history["abs_gap"], fact.history["abs_gap"][:50])


def test_warm_start_and_decision(toy_problem, amp_long):
    K, y = toy_problem
    res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-2,
                       warm_start=(amp_long.coef, amp_long.gamma))
    assert res.success and res.n_iter < 20
    f = stpmkl_decision(amp_long, K[:, :5, :])
    np.testing.assert_allclose(f, amp_long.decision_train[:5], atol=1e-10)
    np.testing.assert_allclose(amp_long.decision(K[:, :5, :]), f)
    np.testing.assert_allclose(decision(amp_long, K[:, :5, :]), f)
    # the model rebuilt from the core keys (weights, dual_coef) is equal at the saddle point
    dual_model = np.einsum("j,jtk,k->t", amp_long.weights, K, amp_long.dual_coef)
    np.testing.assert_allclose(dual_model, amp_long.decision_train, atol=0.05)
    with pytest.raises(ValueError, match="K_test must have shape"):
        stpmkl_decision(amp_long, K[:3])


# ---------------------------------------------------------------------------------------
# the iteration contract
# ---------------------------------------------------------------------------------------

HISTORY_KEYS = ("objective", "gap", "criterion", "weights", "time", "dual_objective",
                "abs_gap", "bound")


def test_convergence_warning_and_callback(toy_problem):
    K, y = toy_problem
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 iterations"):
        res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", max_iter=1)
    assert not res.success and res.status == 1
    for key in HISTORY_KEYS:
        assert len(res.history[key]) == 1
    payloads = []

    def stop(intermediate):
        payloads.append(intermediate)
        if intermediate.n_iter == 5:
            raise StopIteration

    res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", callback=stop)
    assert res.status == 3 and res.n_iter == 5 and not res.success
    assert res.message == "stopped by callback after 5 iterations"
    assert [p.n_iter for p in payloads] == [1, 2, 3, 4, 5]
    last = payloads[-1]
    assert last.method == "stpmkl" and last.gap == res.gap and last.objective == res.objective
    assert last.abs_gap == res.abs_gap and last.dual_objective == res.dual_objective
    np.testing.assert_array_equal(last.weights, res.weights)


@pytest.mark.parametrize("solver", ["exact", "amp", "vi"])
def test_tol_none_runs_max_iter_without_warning(toy_problem, solver):
    K, y = toy_problem
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver=solver, tol=None,
                           max_iter=30)
    assert res.status == 1 and not res.success and res.n_iter == 30
    assert "no tolerance given" in res.message and np.isnan(res.tol)
    for key in HISTORY_KEYS:
        assert len(res.history[key]) == res.n_iter
    assert res.history["weights"].shape == (30, K.shape[0])
    # the same iterates as a run that stops on its tolerance
    conv = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver=solver, tol=0.5)
    T = min(conv.n_iter, 30)
    np.testing.assert_array_equal(res.history["abs_gap"][:T], conv.history["abs_gap"][:T])


def test_tol_zero_keeps_the_test(toy_problem):
    """tol=0: only an exact zero gap stops, so a short run ends with status 1 and a warning."""
    K, y = toy_problem
    with pytest.warns(ConvergenceWarning, match=r"relative duality gap .* > tol 0\.0e\+00"):
        res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=0, max_iter=10)
    assert res.status == 1 and res.n_iter == 10 and res.tol == 0.0


def test_stopping_rule_and_history(toy_problem):
    K, y = toy_problem
    res = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=1e-2)
    h = res.history
    assert res.success and res.status == 0 and res.message.startswith("converged")
    assert res.criterion_name == "relative duality gap"
    for key in HISTORY_KEYS:
        assert len(h[key]) == res.n_iter
    # stops at the first iteration whose relative gap is <= tol
    assert h["gap"][-1] <= 1e-2 < h["gap"][:-1].min()
    np.testing.assert_array_equal(h["criterion"], h["gap"])
    assert h["objective"][-1] == res.objective and h["abs_gap"][-1] == res.abs_gap
    # absolute gap, tested every 7 iterations
    ab = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp", tol=3e-3,
                      gap="absolute", check_every=7, max_iter=3000)
    assert ab.success and ab.n_iter % 7 == 0 and ab.criterion_name == "absolute duality gap"
    np.testing.assert_array_equal(ab.history["criterion"], ab.history["abs_gap"])
    tested = ab.history["abs_gap"][6::7]
    assert tested[-1] <= 3e-3 < tested[:-1].min()
    # the grid: one history per problem, each with its own n_iter rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        grid = stpmkl_grid(K, y, noise_level=0.1, lam=[LAM, 0.5], rho=[RHO, 10.0],
                           solver="amp", max_iter=400, restart=False)
    assert [r.status for r in grid] == [1, 0] and grid[1].n_iter < 400
    for r in grid:
        for key in HISTORY_KEYS:
            assert len(r.history[key]) == r.n_iter


def test_decision_dispatch(toy_problem, amp_long):
    """mklcore.decision evaluates the per-kernel coefficients of StPMKL and MiPMKL results."""
    K, y = toy_problem
    K_test = K[:, :7, :]
    for res in (amp_long, mipmkl_solve(K, y, noise_level=0.2, lam=0.3, max_iter=200)):
        assert type(res).__name__ == "MKLResult"
        f = decision(res, K_test)
        np.testing.assert_allclose(f, stpmkl_decision(res, K_test))
        np.testing.assert_allclose(f, res.decision_train[:7], atol=1e-10)
        np.testing.assert_allclose(res.decision(K_test), f)
    import mklcore

    assert not hasattr(mklcore, "StPMKLResult") and "StPMKLResult" not in mklcore.__all__


# ---------------------------------------------------------------------------------------
# MiPMKL
# ---------------------------------------------------------------------------------------

def test_mipmkl(toy_problem):
    """MiPMKL: objective non-increasing; kappa = 1 is l1-MKL without bias."""
    K, y = toy_problem
    n = y.size
    res = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, tol=1e-3, max_iter=3000)
    amp = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, tol=1e-3, max_iter=3000, solver="amp")
    assert res.objective == pytest.approx(amp.objective, rel=5e-3)
    assert res.n_inner_iter and res.solver == "exact" and amp.solver == "amp"
    obj = res.history["objective"]
    # non-increasing up to the accuracy of the inner solves (relative gap 1e-3)
    assert np.all(np.diff(obj) <= 1e-3 * obj[0])
    assert res.p.sum() == pytest.approx(res.kappa * n)
    assert np.count_nonzero((res.p > 0) & (res.p < 1)) <= 1   # fractional at the boundary
    assert res.method == "mipmkl" and res.n_iter == len(obj) and res.success
    # the examples dropped (p = 0) are those with the largest losses
    losses = np.maximum(0, 1 - y * res.decision_train)
    assert losses[res.p == 0].min() >= losses[res.p == 1].max() - 1e-9
    # kappa = 1: p stays 1 and the inner solve is AMP without budget, step by step
    full = mipmkl_solve(K, y, noise_level=0.0, lam=L1_LAM, kappa=1.0, max_iter=100, tol=None,
                        max_alt=1, solver="amp")
    amp = stpmkl_solve(K, y, noise_level=0.0, lam=L1_LAM, rho=1e9, solver="amp",
                       max_iter=100, tol=None, restart=False)
    assert full.n_iter == 1 and np.all(full.p == 1)
    np.testing.assert_allclose(full.history["objective"], amp.history["objective"][-1:],
                               rtol=1e-10)
    np.testing.assert_allclose(full.coef, amp.coef, rtol=1e-10, atol=1e-12)


def test_mipmkl_contract(toy_problem):
    K, y = toy_problem
    with pytest.warns(ConvergenceWarning, match="mipmkl_solve did not converge in 1 "
                                                "iterations.*Increase max_alt"):
        one = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, max_alt=1, max_iter=200)
    assert one.status == 1 and one.n_iter == 1 and one.method == "mipmkl"
    # with max_alt reached, p is the update computed from the last inner solve
    losses = np.maximum(0, 1 - y * one.decision_train)
    assert losses[one.p == 0].min() >= losses[one.p == 1].max() - 1e-9
    seen = []

    def stop(intermediate):
        seen.append(intermediate)
        raise StopIteration

    res = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, max_iter=200, callback=stop)
    assert res.status == 3 and res.n_iter == 1 and len(seen) == 1
    assert seen[0].method == "mipmkl" and seen[0].p.shape == (y.size,)
    for key in ("objective", "gap", "criterion", "weights", "time", "n_inner"):
        assert len(res.history[key]) == res.n_iter
    np.testing.assert_array_equal(res.p, one.p)
    # tol=None: every inner solve runs max_iter / alt_max_iter iterations, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, max_iter=40, alt_max_iter=15,
                             tol=None)
    assert fixed.history["n_inner"][0] == 40 and np.all(fixed.history["n_inner"][1:] == 15)
    assert fixed.n_inner_iter == fixed.history["n_inner"].sum()


# ---------------------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------------------

def test_estimators_fit_predict():
    from mklcore.kernels import gaussian

    _, y, X = toy()
    labels = np.where(y > 0, "pos", "neg")
    kernels = [gaussian(sigma=s) for s in (0.25, 1.0)]
    clf = StPMKLClassifier(kernels=kernels, noise_level=0.1, lam=0.05, max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, labels)
    assert clf.coef_.shape == (40, 2) and clf.gamma_.shape == (40,)
    assert clf.weights_.sum() == pytest.approx(1.0) and clf.intercept_ == 0.0
    assert set(clf.predict(X)) <= {"neg", "pos"} and clf.score(X, labels) > 0.7
    K_test = clf.kernel_bank_.transform(X[:7])
    np.testing.assert_allclose(clf.decision_function(X[:7]), stpmkl_decision(clf.result_, K_test))
    assert clone(clf).get_params() == clf.get_params()
    vi = StPMKLClassifier(kernels=kernels, solver="vi", noise_level=0.1, lam=0.05,
                          max_iter=50, tol=None)
    assert vi.fit(X, labels).result_.solver == "vi"
    mi = MiPMKLClassifier(kernels=kernels, noise_level=0.1, lam=0.05, max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mi.fit(X, labels)
    assert mi.p_.shape == (40,) and mi.score(X, labels) > 0.6


def test_default_bank_is_xu2010():
    _, y, X = toy(n=20)
    clf = StPMKLClassifier(lam=0.1, max_iter=5, tol=None).fit(X, y)
    assert clf.weights_.shape == (10 * (X.shape[1] + 1),)


# ---------------------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"noise_level": 0.5}, r"'noise_level' parameter of stpmkl_solve must be a float in the "
                           r"range \[0, 0\.5\)\. Got 0\.5"),
    ({"noise_level": -0.1}, r"'noise_level' parameter .* Got -0\.1"),
    ({"lam": 0.0}, r"'lam' parameter of stpmkl_solve must be a float in the range \(0, inf\)"),
    ({"rho": 0.0}, r"'rho' parameter of stpmkl_solve must be a float in the range \(0, inf\) "
                   r"or None\. Got 0\.0"),
    ({"rho": -3.0}, r"'rho' parameter .* Got -3\.0"),
    ({"solver": "sgd"}, r"'solver' parameter of stpmkl_solve must be one of \{'exact', 'amp', 'vi'\}"),
])
def test_bad_parameters(toy_problem, kwargs, match):
    K, y = toy_problem
    params = {"noise_level": 0.1, "lam": 0.1, **kwargs}
    with pytest.raises(ValueError, match=match):
        stpmkl_solve(K, y, **params)


def test_bad_labels_and_kernels(toy_problem):
    K, y = toy_problem
    y3 = y.copy()
    y3[:3] = 0
    with pytest.raises(ValueError, match="y has 3 classes; stpmkl_solve is binary-only"):
        stpmkl_solve(K, y3, noise_level=0.1, lam=0.1)
    with pytest.raises(ValueError, match="needs two classes"):
        stpmkl_solve(K, np.ones_like(y), noise_level=0.1, lam=0.1)
    with pytest.raises(ValueError, match="K and y do not match"):
        stpmkl_solve(K, y[:-1], noise_level=0.1, lam=0.1)
    with pytest.raises(ValueError, match="'noise_level' parameter of mipmkl_solve"):
        mipmkl_solve(K, y, noise_level=0.7, lam=0.1)
    with pytest.raises(ValueError, match="'kappa' parameter of mipmkl_solve"):
        mipmkl_solve(K, y, noise_level=0.1, lam=0.1, kappa=1.5)
    with pytest.raises(ValueError, match="factors are for"):
        stpmkl_solve(K, y, noise_level=0.1, lam=0.1, factors=factorize_kernels(K[:3]))
    with pytest.raises(ValueError, match="'delta' parameter of rho_from_theory"):
        rho_from_theory(10, 0.1, delta=1.0)


def test_estimator_bad_parameters():
    _, y, X = toy(n=20)
    with pytest.raises(ValueError, match="'noise_level' parameter of StPMKLClassifier must be "
                                         r"a float in the range \[0, 0\.5\)"):
        StPMKLClassifier(noise_level=0.5).fit(X, y)
    with pytest.raises(ValueError, match="'lam' parameter of MiPMKLClassifier"):
        MiPMKLClassifier(lam=0).fit(X, y)
    with pytest.raises(ValueError, match="'rho' parameter of StPMKLClassifier"):
        StPMKLClassifier(rho=-1.0).fit(X, y)


# ---------------------------------------------------------------------------------------
# batched internals and stpmkl_grid
# ---------------------------------------------------------------------------------------

def test_batched_projection_and_shrinkage_match_reference():
    from mklcore.stpmkl import _knapsack, _knapsack_rows, _project_rows, _shrink_rows

    rng = np.random.default_rng(7)
    G, n = 12, 25
    Gh = rng.normal(0, 2, size=(G, n))
    Gh[0, :5] = Gh[0, 5]                      # ties
    U = rng.uniform(0.5, 2.0, size=(G, n))
    rho = rng.uniform(0.5, 20.0, size=G)
    rho[1] = np.inf
    out = _project_rows(Gh, U, rho)
    for g in range(G):
        np.testing.assert_allclose(out[g], project_box_budget(Gh[g], U[g], rho[g]),
                                   atol=1e-12)
    np.testing.assert_allclose(_project_rows(Gh, 1.0, rho)[3],
                               project_box_budget(Gh[3], 1.0, rho[3]), atol=1e-12)
    a = rng.exponential(size=(G, 9))
    a[2] = 0.0
    c = rng.exponential(size=G)
    shrink, S = _shrink_rows(a, c)
    for g in range(G):
        ref_shrink, ref_S = group_soft_threshold(a[g], c[g])
        np.testing.assert_allclose(shrink[g], ref_shrink, atol=1e-12)
        assert S[g] == pytest.approx(ref_S, abs=1e-12)
    vals = _knapsack_rows(Gh, U, rho)
    for g in range(G):
        assert vals[g] == pytest.approx(_knapsack(Gh[g], U[g], rho[g]), abs=1e-12)


def test_single_vector_projection_matches_reference():
    # the inner QP of the exact solver projects one vector at a time (and the batch loops over
    # it): the reference's values (ties, vector and scalar boxes, active and inactive budgets)
    from mklcore.stpmkl import _project_vec

    rng = np.random.default_rng(11)
    for t in range(300):
        n = int(rng.integers(2, 40))
        g = rng.normal(0, 2, size=n)
        if t % 3 == 0:
            g = np.round(g, 1)                    # ties
        U = np.asarray(1.0) if t % 2 else rng.uniform(0.2, 1.5, size=n)
        rho = (np.inf, rng.uniform(0.1, n), float(rng.integers(1, n)))[t % 3]
        np.testing.assert_allclose(_project_vec(g, U, rho), project_box_budget(g, U, rho),
                                   atol=1e-12)


def test_grid_equals_single_solves(toy_problem):
    K, y = toy_problem
    lams, rhos = [0.05, 0.5, 0.05], [25.0, 10.0, 40.0]
    F = factorize_kernels(K, rank_tol=1e-12)
    for factors in (None, F):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            grid = stpmkl_grid(K, y, noise_level=0.1, lam=lams, rho=rhos, max_iter=200,
                               factors=factors)
            for lam, rho, res in zip(lams, rhos, grid):
                one = stpmkl_solve(K, y, noise_level=0.1, lam=lam, rho=rho, max_iter=200,
                                   factors=factors)
                assert res.n_iter == one.n_iter and res.status == one.status
                np.testing.assert_allclose(res.history["abs_gap"], one.history["abs_gap"],
                                           rtol=1e-9, atol=1e-12)
                np.testing.assert_allclose(res.coef, one.coef, rtol=1e-8, atol=1e-10)
    assert all(r.success for r in grid)  # mixed outcomes: test_stopping_rule_and_history
    vi = stpmkl_grid(K, y, noise_level=0.1, lam=0.05, rho=25.0, solver="vi",
                     eta0=[0.5 * F.n_samples, 1.0], max_iter=20, tol=None)
    assert [r.eta0 for r in vi] == [20.0, 1.0]
    with pytest.raises(ValueError, match="lengths 2, 3 and 1"):
        stpmkl_grid(K, y, noise_level=0.1, lam=[0.1, 0.2], rho=[1.0, 2.0, 3.0])


def test_factors_without_stack(toy_problem):
    """Kernels may be factorised one at a time and the stack dropped (large n)."""
    K, y = toy_problem
    F = factorize_kernels((Kj for Kj in K), rank_tol=1e-12, dtype=np.float32)
    assert F.Rt.dtype == np.float32 and F.n_kernels == K.shape[0]
    a = stpmkl_solve(None, y, noise_level=0.1, lam=LAM, rho=RHO, factors=F, solver="amp",
                     max_iter=100, tol=None)
    b = stpmkl_solve(K, y, noise_level=0.1, lam=LAM, rho=RHO, solver="amp", max_iter=100,
                     tol=None)
    np.testing.assert_allclose(a.history["abs_gap"], b.history["abs_gap"], rtol=1e-4)
    with pytest.raises(ValueError, match="give the kernels K"):
        stpmkl_solve(None, y, noise_level=0.1, lam=LAM)
    with pytest.raises(ValueError, match="square and of the same size"):
        factorize_kernels([K[0], K[1][:5, :5]])


def test_diverging_vi_is_flagged(toy_problem):
    K, y = toy_problem
    F = factorize_kernels(K, rank_tol=1e-12)
    with pytest.warns(ConvergenceWarning, match="numerical failure: non-finite objective"):
        runs = stpmkl_grid(K, y, noise_level=0.1, lam=LAM, rho=RHO, solver="vi", tol=None,
                           max_iter=400, eta0=[1.0, 1e4], factors=F)
    assert runs[0].status == 1 and np.isfinite(runs[0].abs_gap)
    assert runs[1].status == 2 and "non-finite" in runs[1].message
    assert not runs[1].success and runs[1].n_iter == len(runs[1].history["objective"]) < 400
    assert np.isnan(runs[1].coef).all()


# warm starts of the exact solver: cuts from earlier solves, chained along a grid

def test_exact_warm_cuts_and_chain(toy_problem):
    """Any earlier dual points are valid cuts: the certificate still bounds the optimum, and
    near points save iterations (the warm starts of the accuracy experiment)."""
    K, y = toy_problem
    n = y.size
    d_star, _ = cvx_dual(K, y, LAM, RHO)
    cold = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-4)
    assert cold.cut_points.shape[1] == n and 1 <= len(cold.cut_points) <= cold.n_cuts
    # restart from its own active cuts: done at once, same value
    again = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-4,
                         warm_cuts=cold.cut_points)
    assert again.success and again.n_iter <= 2 and again.n_cuts > again.n_iter
    assert again.dual_objective <= d_star + 1e-7 <= again.objective + 2e-7
    assert again.objective == pytest.approx(d_star, rel=1e-4)
    # cuts of another budget and lambda (projected onto this Q'), and of a subproblem
    # zero-padded to all n points: still certified, within tol of the optimum
    other = stpmkl_solve(K, y, noise_level=0.2, lam=0.5, rho=10.0, tol=1e-4)
    sub = stpmkl_solve(K[:, :30, :30], y[:30], noise_level=0.2, lam=LAM, rho=RHO, tol=1e-4)
    for cuts in (other.cut_points, np.pad(sub.cut_points, ((0, 0), (0, n - 30)))):
        warm = stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, tol=1e-4, warm_cuts=cuts)
        assert warm.success and warm.dual_objective <= d_star + 1e-7
        assert warm.objective == pytest.approx(d_star, rel=1e-4)
    # a grid chained through its cuts: every setting certified, within tol of the cold
    # solves, in fewer iterations overall
    lams, rhos = [0.05, 0.05, 0.05, 0.1], [25.0, 20.0, 15.0, 15.0]
    F = factorize_kernels(K, rank_tol=1e-12)
    chained = stpmkl_grid(None, y, factors=F, noise_level=0.1, lam=lams, rho=rhos, tol=1e-3,
                          chain=True)
    alone = stpmkl_grid(None, y, factors=F, noise_level=0.1, lam=lams, rho=rhos, tol=1e-3)
    for c, a in zip(chained, alone):
        assert c.success and c.gap <= 1e-3
        assert c.objective == pytest.approx(a.objective, rel=2e-3)
    assert sum(c.n_iter for c in chained) < sum(a.n_iter for a in alone)
    # MiPMKL from the cuts of its l1-MKL start (rho = n, same lambda)
    l1 = stpmkl_solve(K, y, noise_level=0.2, lam=0.3, rho=float(n), tol=1e-3)
    mi = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, tol=1e-3, max_iter=3000)
    mi_warm = mipmkl_solve(K, y, noise_level=0.2, lam=0.3, tol=1e-3, max_iter=3000,
                           warm_cuts=l1.cut_points)
    assert mi_warm.objective == pytest.approx(mi.objective, rel=5e-3)
    assert mi_warm.history["n_inner"][0] <= 2
    with pytest.raises(ValueError, match="warm_cuts must be an array of shape"):
        stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, warm_cuts=np.ones((2, n + 1)))
    with pytest.raises(ValueError, match="needs solver='exact'"):
        stpmkl_solve(K, y, noise_level=0.2, lam=LAM, rho=RHO, solver="amp",
                     warm_cuts=cold.cut_points)
    with pytest.raises(ValueError, match="warm_cuts must be an array of shape"):
        mipmkl_solve(K, y, noise_level=0.2, lam=0.3, warm_cuts=np.ones((1, 3)))


# ---------------------------------------------------------------------------------------
# issue 28, item 6: the same bits on 1 and 2 BLAS threads
# ---------------------------------------------------------------------------------------
def _threads_problem(n=300):
    """Four trace-normalised kernels on n points: big enough for OpenBLAS to split its
    factorisations and eigensolvers between two threads (and round differently)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([X @ X.T / 5, np.exp(-D / 2), np.exp(-D / 8), (X @ X.T / 5 + 1) ** 2])
    return K / (np.einsum("mii->m", K)[:, None, None] / n), y


@pytest.mark.parametrize("family", ["stpmkl_exact", "stpmkl_amp", "stpmkl_factors", "mipmkl"])
def test_same_bits_on_one_and_two_blas_threads(family):
    """StPMKL / MiPMKL results are identical under threadpool_limits(1) and (2): the solvers
    run BLAS and LAPACK on one thread (they differed by up to 3e-14 relative)."""
    from threadpoolctl import threadpool_limits

    K, y = _threads_problem()
    run = {
        "stpmkl_exact": lambda: stpmkl_solve(K, y, noise_level=0.1, lam=1e-2, max_iter=4),
        "stpmkl_amp": lambda: stpmkl_solve(K, y, noise_level=0.1, lam=1e-2, solver="amp",
                                           max_iter=30),
        "stpmkl_factors": lambda: stpmkl_solve(K, y, noise_level=0.1, lam=1e-2, max_iter=4,
                                               rank_tol=1e-8),
        "mipmkl": lambda: mipmkl_solve(K, y, noise_level=0.1, lam=1e-2, max_alt=2, max_iter=4),
    }[family]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with threadpool_limits(1):
            one = run()
        with threadpool_limits(2):
            two = run()
    for key in ("weights", "dual_coef", "objective", "gap", "coef", "gamma"):
        assert np.asarray(one[key]).tobytes() == np.asarray(two[key]).tobytes(), key


# ---------------------------------------------------------------------------------------
# issue 28, item 5: degenerate scales end within the budget, naming the likely cause
# ---------------------------------------------------------------------------------------
def _degenerate(case):
    rng = np.random.default_rng(0)
    n = 24
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([X @ X.T, np.exp(-D / 2.0)])
    if case == "big":
        K[1] *= 1e12
    elif case == "asym_big":  # an asymmetric kernel beside a huge one, unchecked
        K[1] *= 1e12
        A = rng.normal(size=(n, n))
        K[0] += 1e-3 * (A - A.T)
    return K, y


_SCALE = r"Likely cause: the kernel traces differ by a factor of [0-9.]+e\+1[12]: scale the kernels"
_RHO = r"Likely cause: rho=1\.0e-300 is below 1e-12 \* n \* upper"
_LAM = r"Likely cause: .*lam=1\.0e-300 is below 1e-12 times the mean diagonal"


@pytest.mark.parametrize("func,case,kwargs,status,pattern", [
    ("stpmkl_solve", "big", {}, 1, r"^stpmkl_solve \(exact\) did not converge in 5 iterations.*"
                                   + _SCALE),
    ("stpmkl_solve", "big", {"solver": "amp"}, 1, r"^stpmkl_solve \(amp\) did not converge.*"
                                                  + _SCALE),
    ("stpmkl_solve", "asym_big", {"check_input": False}, 1, _SCALE),
    ("stpmkl_grid", "big", {"lam": [1e-2, 1e-1]}, 1, r"^stpmkl_grid \(exact, problem [01]\) "
                                                     r"did not converge.*" + _SCALE),
    ("mipmkl_solve", "big", {"max_alt": 3}, 2, r"^mipmkl_solve: numerical failure: the inner "
                                                r"solve did not converge.*" + _SCALE),
    ("stpmkl_solve", "plain", {"rho": 1e-300}, 2, _RHO),
    ("stpmkl_solve", "plain", {"rho": 1e-300, "solver": "amp"}, 2, _RHO),
    ("stpmkl_grid", "plain", {"lam": [1e-2], "rho": 1e-300}, 2, _RHO),
    ("mipmkl_solve", "big", {"lam": 1e-300, "max_alt": 3}, 2, _LAM),
])
def test_degenerate_scales_end_within_the_budget(func, case, kwargs, status, pattern):
    """One kernel scaled by 1e12 (beside an asymmetric one, unchecked) and rho or lam at
    1e-300: the runs used to go on for minutes (100 000 inner-QP steps per iteration) or end
    without naming the cause. Each now ends within max_iter (and a bounded number of inner
    steps) with a status and a ConvergenceWarning saying what to scale."""
    import mklcore.stpmkl as stpmkl

    K, y = _degenerate(case)
    args = {"noise_level": 0.1, "lam": 1e-2, "max_iter": 5, **kwargs}
    with pytest.warns(ConvergenceWarning, match=pattern):
        out = getattr(stpmkl, func)(K, y, **args)
    for res in out if isinstance(out, list) else [out]:
        assert res.status == status
        if func == "mipmkl_solve":
            assert res.n_iter <= 3 and res.n_inner_iter <= 3 * 5
        else:
            assert res.n_iter <= 5
        if res.solver == "exact" and ("rho" in kwargs or kwargs.get("lam") == 1e-300):
            # lam or rho at round-off: the inner QP is capped too
            assert res.n_inner_iter <= 5 * stpmkl._INNER_MAX_ITER_DEGENERATE
    if case == "asym_big":
        with pytest.raises(ValueError, match=r"^Kernel 0 of 2 is not symmetric"):
            stpmkl.stpmkl_solve(K, y, noise_level=0.1, lam=1e-2, max_iter=5)
