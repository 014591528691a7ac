"""Tests of lp-norm MKL (Kloft et al. 2009): optima of the reference toy problem and invariants."""

import warnings

import numpy as np
import pytest

from mklcore.svm import default_backend
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mklcore.lpnorm import (LpMKLClassifier, _analytic_update, _cvx_master, _newton_update,
                            _dual_master_newton, _tangent_lp_master, default_engine,
                            _taylor_coefficients, lpmkl_solve, sum_kernel_svm_solve)
from mklcore.reference import TOY_OPTIMA, ReferenceSolverError, solve_primal_cvx, toy_problem
from mklcore.svm import svm_solve
from mklcore.masters import Cuts
from mklcore.wrapper import dual_norm, normalize_pnorm, pnorm

# Tight inner tolerances for the comparisons with the optima: the objective error is then
# driven by the MKL tolerance (objective ~ 1e-7 relative, theta ~ 3e-4 at tol 1e-7).
SVM_TOL = 1e-8
MKL_TOL = 1e-7
OBJ_RTOL = 1e-5      # relative 1e-5 on the objective for p > 1
THETA_ATOL = 1e-3    # 1e-3 on theta for p > 1
L1_RTOL = 1e-4       # l1 variants within 1e-4 relative (Kloft et al. 2009, Sec. 3.1)
NORM_ATOL = 1e-8     # |‖theta‖_p - 1| <= 1e-8 after every update
GAP_FLOOR = -1e-10   # relative gap >= -1e-10 (Hölder, up to round-off)
CERT_FLOOR = -1e-8   # rigorous gap P_hinge - D_p >= -1e-8

P_GT_1 = [4 / 3, 2.0, 4.0, 16.0]
SOLVERS = [("newton", {}), ("analytic", {}), ("cutting_plane", {}),
           ("cutting_plane", {"master": "sqclp"}), ("cutting_plane", {"master": "exact"})]


@pytest.fixture(scope="module")
def toy():
    return toy_problem()


@pytest.fixture(scope="module")
def oracle(toy):
    """cvxpy optimum of (6) per p (None where cvxpy does not report 'optimal')."""
    K, y, C = toy
    cache = {}

    def get(p):
        if p not in cache:
            try:
                cache[p] = solve_primal_cvx(K, y, C, p)
            except ReferenceSolverError:  # pragma: no cover
                cache[p] = None
        return cache[p]

    return get


def _check_run(res, K, y, C, p):
    """Unit p-norm weights and a non-negative gap on a finished run (every history row)."""
    h = res.history
    W = h["weights"]
    assert W.shape == (res.n_iter, K.shape[0])
    assert np.all(W >= 0)
    norms = np.array([pnorm(w, p) for w in W])
    np.testing.assert_allclose(norms, 1.0, atol=NORM_ATOL)
    assert np.all(h["gap"] >= GAP_FLOOR)
    assert res.gap >= GAP_FLOOR
    assert res.rigorous_gap >= CERT_FLOOR
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= C + 1e-12)
    assert abs(res.alpha @ y) <= 1e-8
    np.testing.assert_allclose(res.dual_coef, res.alpha * y)
    for key in ("weights", "dual_coef", "intercept", "objective", "gap", "n_iter", "success",
                "status", "message", "history", "method", "dual_objective", "alpha",
                "n_svm_calls"):
        assert key in res
    assert len(h["objective"]) == len(h["gap"]) == len(h["time"]) == res.n_iter


@pytest.mark.parametrize("solver,opts", SOLVERS, ids=["newton", "analytic", "cp-lp", "cp-sqclp", "cp-exact"])
@pytest.mark.parametrize("p", P_GT_1, ids=lambda p: f"p={p:.3g}")
def test_solvers_reach_toy_optimum(toy, oracle, p, solver, opts):
    """Every lp solver reaches the optimum of (6) (TOY_OPTIMA and cvxpy)."""
    K, y, C = toy
    res = lpmkl_solve(K, y, p=p, C=C, solver=solver, tol=MKL_TOL, svm_tol=SVM_TOL, **opts)
    assert res.success and res.status == 0 and res.method == "lpmkl"
    assert res.criterion <= MKL_TOL
    optimum, theta = TOY_OPTIMA[p]
    np.testing.assert_allclose(res.objective, optimum, rtol=OBJ_RTOL)
    np.testing.assert_allclose(res.weights, theta, atol=THETA_ATOL)
    ref = oracle(p)
    if ref is not None:
        np.testing.assert_allclose(res.objective, ref["objective"], rtol=OBJ_RTOL)
        np.testing.assert_allclose(res.weights, ref["theta"], atol=THETA_ATOL)
    _check_run(res, K, y, C, p)
    # one certificate stops every solver: the relative duality gap Delta_rel
    assert res.criterion_name == "relative duality gap"
    assert res.gap <= MKL_TOL and res.criterion == res.gap


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_cutting_plane_sip_stop(toy, p):
    """stop="sip": Sonnenburg's SIP gap |1 - eta/J| stops the cutting plane."""
    K, y, C = toy
    res = lpmkl_solve(K, y, p=p, C=C, solver="cutting_plane", stop="sip", tol=1e-6,
                      svm_tol=1e-8)
    assert res.success and res.criterion_name == "SIP gap |1 - eta/J|"
    np.testing.assert_allclose(res.criterion, abs(1.0 - res.eta / res.objective), rtol=1e-12)
    assert res.criterion <= 1e-6 and np.isfinite(res.eta) and res.eta <= res.objective * (1 + 1e-6)
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[p][0], rtol=L1_RTOL)
    np.testing.assert_allclose(res.history["gap"][-1], res.gap)  # Δ_rel recorded either way
    with pytest.raises(ValueError, match="stop"):
        lpmkl_solve(K, y, p=p, C=C, solver="cutting_plane", stop="eta")


@pytest.mark.parametrize("solver,opts", [("analytic", {}), ("cutting_plane", {})],
                         ids=["analytic", "cp-lp"])
def test_l1_solvers_reach_toy_optimum(toy, oracle, solver, opts):
    """p = 1: analytic and cutting plane (LP master) agree within 1e-4."""
    K, y, C = toy
    res = lpmkl_solve(K, y, p=1.0, C=C, solver=solver, tol=1e-4, svm_tol=1e-7, **opts)
    assert res.success
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[1.0][0], rtol=L1_RTOL)
    ref = oracle(1.0)
    if ref is not None:
        np.testing.assert_allclose(res.objective, ref["objective"], rtol=L1_RTOL)
    _check_run(res, K, y, C, 1.0)
    np.testing.assert_allclose(res.history["weights"].sum(axis=1), 1.0, atol=NORM_ATOL)


def test_p_inf_is_the_sum_kernel(toy):
    """p = inf delegates to the unweighted sum kernel (theta = 1, Kloft et al. 2009, Sec. 2)."""
    K, y, C = toy
    res = lpmkl_solve(K, y, p=np.inf, C=C, svm_tol=SVM_TOL)
    np.testing.assert_array_equal(res.weights, np.ones(4))
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[np.inf][0], rtol=OBJ_RTOL)
    ref = sum_kernel_svm_solve(K, y, C=C, svm_tol=SVM_TOL)
    np.testing.assert_allclose(res.objective, ref.dual_objective, rtol=1e-10)
    assert res.success and res.gap == 0.0


def test_p_to_infinity_approaches_sum_kernel(toy):
    """The objective decreases in p toward the sum kernel, theta -> 1."""
    K, y, C = toy
    ps = [1.0, 4 / 3, 2.0, 4.0, 16.0, 64.0, 256.0, np.inf]
    objs, thetas = [], []
    for p in ps:
        solver = "analytic" if p > 1 else "cutting_plane"
        res = lpmkl_solve(K, y, p=p, C=C, solver=solver, tol=1e-6, svm_tol=1e-7)
        objs.append(res.objective)
        thetas.append(res.weights)
    assert np.all(np.diff(objs) < 0)
    np.testing.assert_allclose(objs[ps.index(64.0)], 9.8277097, rtol=1e-5)
    np.testing.assert_allclose(objs[ps.index(256.0)], 9.7031696, rtol=1e-5)
    assert thetas[ps.index(256.0)].min() > 0.98


def test_newton_with_fixed_alpha_converges_to_analytic_update():
    """Many Newton steps at fixed S give the closed-form update."""
    theta = normalize_pnorm(np.array([0.3, 0.5, 0.6, 0.2]), 2.0)
    S = np.array([3.0, 1.0, 0.5, 2.0])
    analytic = _analytic_update(theta, S, 2.0)
    newton = _newton_update(theta, S, 2.0, newton_steps=50)
    np.testing.assert_allclose(newton, analytic, atol=1e-8)
    for p in (4 / 3, 3.0):
        theta_p = normalize_pnorm(np.array([0.3, 0.5, 0.6, 0.2]), p)
        np.testing.assert_allclose(_newton_update(theta_p, S, p, newton_steps=50),
                                   _analytic_update(theta_p, S, p), atol=1e-7)


def test_analytic_update_formula():
    """Kloft et al. (2011), Algorithm 1: theta_m ∝ ||w_m||^(2/(p+1)), ||w_m||^2 = 2 theta_m^2 S_m (theta^2, not theta)."""
    theta = normalize_pnorm(np.array([0.3, 0.5, 0.6, 0.2]), 2.0)
    S = np.array([3.0, 1.0, 0.5, 2.0])
    w = np.sqrt(2 * theta ** 2 * S)
    for p in (1.0, 1.5, 2.0, 8.0):
        expected = w ** (2 / (p + 1)) / np.sum(w ** (2 * p / (p + 1))) ** (1 / p)
        np.testing.assert_allclose(_analytic_update(theta, S, p), expected, rtol=1e-12)
    np.testing.assert_array_equal(_analytic_update(theta, S, np.inf), np.ones(4))
    # p close to 1 stays finite and normalised (log domain)
    near_one = _analytic_update(theta, S, 1.0 + 1e-9)
    assert np.all(np.isfinite(near_one)) and np.isclose(pnorm(near_one, 1.0 + 1e-9), 1.0)


_positive = st.floats(min_value=1e-6, max_value=1.0, allow_nan=False)
_nonneg = st.floats(min_value=0.0, max_value=1e3, allow_nan=False)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(theta=st.lists(_positive, min_size=1, max_size=6),
       S=st.lists(_nonneg, min_size=6, max_size=6),
       p=st.floats(min_value=1.0, max_value=50.0))
def test_weight_updates_stay_feasible(theta, S, p):
    """As a property: updates give theta >= 0 with unit p-norm, and the Newton
    step never increases Phi(theta) = sum_m a_m / theta_m on the p-sphere (Sec. 2.4.1)."""
    theta = normalize_pnorm(np.array(theta), p)
    S = np.array(S[:theta.size])
    new = _analytic_update(theta, S, p)
    assert np.all(np.isfinite(new)) and np.all(new >= 0)
    assert abs(pnorm(new, p) - 1.0) <= 1e-8
    if p > 1:
        new = _newton_update(theta, S, p)
        assert np.all(new >= 0) and abs(pnorm(new, p) - 1.0) <= 1e-8
        a = theta ** 2 * S
        assert np.sum(a / new) <= np.sum(a / theta) * (1 + 1e-12) + 1e-300


def test_taylor_surrogate(toy):
    """Taylor surrogate of Sec. 2.4.2: surrogate = 1 and gradient = p theta~^(p-1) at theta~; exact for p = 2."""
    rng = np.random.default_rng(3)
    for p in (4 / 3, 2.0, 3.0, 16.0):
        tt = normalize_pnorm(rng.random(5) + 0.05, p)
        A, B, c0 = _taylor_coefficients(tt, p)
        assert np.all(A >= 0)
        assert np.isclose(np.sum(A * tt ** 2 + B * tt) + c0, 1.0)
        np.testing.assert_allclose(2 * A * tt + B, p * tt ** (p - 1), rtol=1e-12)
    A, B, c0 = _taylor_coefficients(tt, 2.0)
    np.testing.assert_allclose(A, 1.0)
    np.testing.assert_allclose(B, 0.0)
    assert c0 == 0.0
    # SQCLP master optimum = exact pnorm master optimum on the same cuts
    K, y, C = toy
    cuts = Cuts(4, prune=False)
    for theta in ([0.5, 0.5, 0.5, 0.5], [0.9, 0.3, 0.1, 0.2], [0.2, 0.2, 0.9, 0.3]):
        st = svm_solve(K, y, weights=normalize_pnorm(np.array(theta), 4 / 3), C=C, tol=1e-8)
        cuts.add(st.alpha.sum(), 0.5 * st.q)
    p = 4 / 3
    try:
        _, eta_exact = _cvx_master(cuts, p, kind="exact")
    except Exception as exc:  # pragma: no cover
        pytest.skip(f"cvxpy master failed: {exc}")
    theta_t = normalize_pnorm(np.ones(4), p)
    eta_old = None
    for _ in range(50):
        theta_star, _ = _cvx_master(cuts, p, theta_tilde=theta_t, kind="sqclp")
        theta_t = normalize_pnorm(theta_star, p)
        eta = np.max(cuts.values(theta_t))
        if eta_old is not None and abs(1 - eta / eta_old) < 1e-9:
            break
        eta_old = eta
    np.testing.assert_allclose(eta, eta_exact, rtol=1e-6)
    # p = 2: one QCLP solves the master; a second solve confirms
    th1, eta1 = _cvx_master(cuts, 2.0, theta_tilde=normalize_pnorm(np.ones(4), 2.0))
    th2, eta2 = _cvx_master(cuts, 2.0, theta_tilde=normalize_pnorm(th1, 2.0))
    np.testing.assert_allclose(eta2, eta1, rtol=1e-7)
    np.testing.assert_allclose(eta1, _cvx_master(cuts, 2.0, kind="exact")[1], rtol=1e-7)


def _toy_cuts(toy, thetas, p=4 / 3):
    """Cuts of the SVMs of the toy problem at the given (normalised) weights."""
    K, y, C = toy
    cuts = Cuts(K.shape[0], prune=False)
    for theta in thetas:
        st = svm_solve(K, y, weights=normalize_pnorm(np.array(theta), p), C=C, tol=1e-8)
        cuts.add(st.alpha.sum(), 0.5 * st.q)
    return cuts


@pytest.mark.parametrize("p", [4 / 3, 2.0, 3.0], ids=lambda p: f"p={p:.3g}")
def test_lp_master_matches_exact_conic_master(toy, p):
    """The default master (LPs over tangent planes + Newton on the dual, Kloft et al. 2009,
    Sec. 2.4.2) reaches the optimum of the exact pnorm master (cvxpy) on the same cuts, and
    certifies it: its value lies between the dual bound and the exact optimum + 1e-6."""
    cuts = _toy_cuts(toy, ([0.5, 0.5, 0.5, 0.5], [0.9, 0.3, 0.1, 0.2], [0.2, 0.2, 0.9, 0.3],
                           [0.1, 0.8, 0.3, 0.6]))
    try:
        theta_x, eta_x = _cvx_master(cuts, p, kind="exact")
    except Exception as exc:  # pragma: no cover
        pytest.skip(f"cvxpy master failed: {exc}")
    tangents = [np.full(4, 4.0 ** ((1 - p) / p))]
    theta, eta, n_lp = _tangent_lp_master(cuts, p, tangents, inner_eps=1e-9)
    np.testing.assert_allclose(pnorm(theta, p), 1.0, atol=1e-12)
    assert eta == pytest.approx(np.max(cuts.values(theta)), rel=1e-14)
    assert eta >= eta_x - 1e-6 * abs(eta_x)  # theta is feasible: no better than the optimum
    np.testing.assert_allclose(eta, eta_x, rtol=1e-6)
    np.testing.assert_allclose(theta, normalize_pnorm(theta_x, p), atol=1e-3)
    assert 1 <= n_lp <= 5


def test_dual_master_newton_fixes_a_wrong_support(toy):
    """Started on a single cut (a wrong active set), the active-set Newton method on the dual
    master adds the violated cuts and stops at the KKT point: its dual value equals the exact
    master optimum (weak duality makes it a lower bound, the exact master an upper bound)."""
    p = 4 / 3
    cuts = _toy_cuts(toy, ([0.5, 0.5, 0.5, 0.5], [0.9, 0.3, 0.1, 0.2], [0.2, 0.2, 0.9, 0.3]))
    _, eta_x = _cvx_master(cuts, p, kind="exact")
    lam = _dual_master_newton(cuts, np.array([1.0, 0.0, 0.0]), p)
    assert lam is not None and np.all(lam >= 0) and lam.sum() == pytest.approx(1.0)
    dual_value = lam @ cuts.L - dual_norm(cuts.S.T @ lam, p)
    np.testing.assert_allclose(dual_value, eta_x, rtol=1e-7)


@pytest.mark.parametrize("p", [4 / 3, 2.0, 3.0], ids=lambda p: f"p={p:.3g}")
@pytest.mark.parametrize("master", ["lp", "sqclp"])
def test_cutting_plane_masters_reach_cvx_oracle(toy, oracle, p, master):
    """Both masters of the cutting plane reach the cvxpy optimum of (6) at p = 4/3, 2, 3 with
    a certified relative duality gap (the certificate does not depend on the master)."""
    K, y, C = toy
    res = lpmkl_solve(K, y, p=p, C=C, solver="cutting_plane", master=master, tol=MKL_TOL,
                      svm_tol=SVM_TOL)
    assert res.success and res.gap <= MKL_TOL and res.rigorous_gap >= CERT_FLOOR
    ref = oracle(p)
    if ref is None:  # pragma: no cover
        pytest.skip("cvxpy oracle did not solve")
    np.testing.assert_allclose(res.objective, ref["objective"], rtol=OBJ_RTOL)
    np.testing.assert_allclose(res.weights, ref["theta"], atol=THETA_ATOL)
    if master == "lp":  # no cvxpy: LPs (one per master problem here) and Newton steps
        assert res.n_master_lps >= res.n_master_solves >= 1
    else:
        assert "n_master_lps" not in res


def test_wrapper_monotonicity_analytic(toy):
    """With an exact SVM, J(theta_t) is non-increasing (block descent)."""
    K, y, C = toy
    for p in (4 / 3, 2.0):
        res = lpmkl_solve(K, y, p=p, C=C, solver="analytic", tol=1e-7, svm_tol=1e-10,
                          mode="wrapper")
        J = res.history["objective"]
        assert np.all(np.diff(J) <= 1e-7 * J[:-1])


def test_sip_lower_bounds(toy):
    """Exact master, no pruning: eta_t non-decreasing and eta_t <= opt <= J."""
    K, y, C = toy
    p = 2.0
    res = lpmkl_solve(K, y, p=p, C=C, solver="cutting_plane", master="exact", prune_cuts=False,
                      tol=1e-7, svm_tol=1e-9)
    eta = res.history["eta"]
    finite = eta[np.isfinite(eta)]
    assert finite.size >= 2
    assert np.all(np.diff(finite) >= -1e-7 * np.abs(finite[1:]))
    optimum = TOY_OPTIMA[p][0]
    assert np.all(finite <= optimum * (1 + 1e-6))
    assert np.all(res.history["objective"] >= optimum * (1 - 1e-6))
    assert res.n_master_solves == res.n_iter - 1


def test_identical_kernels(toy):
    """K_1 = ... = K_M ⇒ theta = M^(-1/p) 1, objective = SVM on M^(1-1/p) K."""
    K, y, C = toy
    M, p = 3, 2.0
    stack = np.repeat(K[:1], M, axis=0)
    for solver in ("newton", "analytic", "cutting_plane"):
        res = lpmkl_solve(stack, y, p=p, C=C, solver=solver, tol=1e-7, svm_tol=SVM_TOL)
        np.testing.assert_allclose(res.weights, M ** (-1 / p), atol=1e-6)
        np.testing.assert_allclose(res.objective, 16.752310, rtol=1e-6)
    svm = svm_solve(M ** (1 - 1 / p) * K[0], y, C=C, tol=SVM_TOL)
    np.testing.assert_allclose(res.objective, svm.dual_objective, rtol=1e-6)


def test_labels_are_mapped(toy):
    """{0, 1} labels give the same model as {-1, +1}."""
    K, y, C = toy
    a = lpmkl_solve(K, y, p=2.0, solver="analytic")
    b = lpmkl_solve(K, (y > 0).astype(int), p=2.0, solver="analytic")
    np.testing.assert_allclose(a.weights, b.weights)
    np.testing.assert_allclose(a.dual_coef, b.dual_coef)


def test_default_tolerances_converge(toy):
    """The defaults (tol 1e-5, svm_tol 1e-3) converge and satisfy the certificates."""
    K, y, C = toy
    for solver in ("newton", "analytic", "cutting_plane"):
        res = lpmkl_solve(K, y, p=2.0, C=C, solver=solver)
        assert res.success and res.criterion <= 1e-5
        np.testing.assert_allclose(res.objective, TOY_OPTIMA[2.0][0], rtol=1e-4)
        assert res.rigorous_gap >= CERT_FLOOR
        _check_run(res, K, y, C, 2.0)


def test_newton_options(toy):
    """Results do not depend on newton_steps."""
    K, y, C = toy
    res = lpmkl_solve(K, y, p=2.0, C=C, solver="newton", tol=1e-6, svm_tol=1e-7,
                      newton_steps=3)
    assert res.success
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[2.0][0], rtol=1e-5)


def test_newton_armijo_rule_stalls(toy):
    """SHOGUN's relative-decrease rule (armijo_c=1e-4) stalls near the
    optimum, strict decrease (the default) does not."""
    K, y, C = toy
    with pytest.warns(ConvergenceWarning, match="did not converge in 60 iterations"):
        res = lpmkl_solve(K, y, p=2.0, C=C, solver="newton", tol=1e-6, svm_tol=1e-7,
                          max_iter=60, armijo_c=1e-4)
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[2.0][0], rtol=1e-3)
    assert res.n_line_search_failures > 0


@pytest.mark.parametrize("solver", ["newton", "analytic", "cutting_plane"])
@pytest.mark.parametrize("p", [4 / 3, 2.0], ids=lambda p: f"p={p:.3g}")
def test_interleaved_equals_wrapper(toy, p, solver):
    """Interleaved mode reaches the wrapper's objective (1e-5) and theta (1e-3)."""
    K, y, C = toy
    wrap = lpmkl_solve(K, y, p=p, C=C, solver=solver, tol=MKL_TOL, svm_tol=SVM_TOL)
    inter = lpmkl_solve(K, y, p=p, C=C, solver=solver, tol=MKL_TOL, svm_tol=SVM_TOL,
                        mode="interleaved", mkl_every=10)
    assert inter.success and inter.mode == "interleaved" and inter.svm_backend == "smo"
    np.testing.assert_allclose(inter.objective, wrap.objective, rtol=OBJ_RTOL)
    np.testing.assert_allclose(inter.weights, wrap.weights, atol=THETA_ATOL)
    np.testing.assert_allclose(inter.objective, TOY_OPTIMA[p][0], rtol=OBJ_RTOL)
    _check_run(inter, K, y, C, p)
    # partial SVM phases: far fewer SMO steps in total than one SVM per weight update
    assert inter.n_iter > 1


def test_smo_backend_matches_libsvm(toy):
    """The warm-started SMO with gradient caches solves the same SVM as LIBSVM."""
    K, y, C = toy
    theta = normalize_pnorm(np.array([0.3, 0.5, 0.6, 0.2]), 2.0)
    ref = svm_solve(K, y, weights=theta, C=C, tol=1e-10)
    from mklcore.wrapper import SVMOracle

    oracle = SVMOracle(K, y, C=C, svm_tol=1e-10, p=2.0, backend="smo")
    state = oracle(theta)
    assert state.exact
    np.testing.assert_allclose(state.alpha, ref.alpha, atol=1e-6)
    np.testing.assert_allclose(state.intercept, ref.intercept, atol=1e-6)
    np.testing.assert_allclose(2 * state.S, ref.q, rtol=1e-6)
    np.testing.assert_allclose(state.H, K @ (state.alpha * y), atol=1e-9)  # caches exact
    # warm start at new weights = cold start there
    theta2 = normalize_pnorm(np.array([0.6, 0.1, 0.2, 0.5]), 2.0)
    warm, cold = oracle(theta2, start=state), SVMOracle(K, y, C=C, svm_tol=1e-10, p=2.0,
                                                         backend="smo")(theta2)
    np.testing.assert_allclose(warm.J, cold.J, rtol=1e-10)
    np.testing.assert_allclose(warm.H, K @ (warm.alpha * y), atol=1e-9)
    # whole solvers agree across backends
    a = lpmkl_solve(K, y, p=2.0, solver="analytic", tol=1e-7, svm_tol=SVM_TOL)
    b = lpmkl_solve(K, y, p=2.0, solver="analytic", tol=1e-7, svm_tol=SVM_TOL,
                    svm_backend="smo")
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-8)
    np.testing.assert_allclose(b.weights, a.weights, atol=1e-6)


def test_interleaved_needs_smo(toy):
    K, y, _ = toy
    with pytest.raises(ValueError, match="mode='interleaved' needs svm_backend='smo'"):
        lpmkl_solve(K, y, mode="interleaved", svm_backend="libsvm")


# ------------------------------------------------------------------ failure paths

@pytest.mark.parametrize("kwargs,match", [
    ({"p": 0.5}, r"'p' parameter of lpmkl_solve must be a float in the range \[1, inf\]"),
    ({"solver": "foo"}, r"'solver' parameter of lpmkl_solve must be one of"),
    ({"p": 1.0, "solver": "newton"}, r"solver='newton' requires p > 1.*analytic"),
    ({"tol": -1e-3}, r"'tol' parameter"),
    ({"master": "bogus", "solver": "cutting_plane"}, r"'master' parameter"),
])
def test_bad_parameters(toy, kwargs, match):
    K, y, _ = toy
    with pytest.raises(ValueError, match=match):
        lpmkl_solve(K, y, **kwargs)


def test_bad_inputs(toy):
    K, y, _ = toy
    with pytest.raises(ValueError, match="K and y do not match"):
        lpmkl_solve(K, y[:-1])
    bad = K.copy()
    bad[2] = bad[2] - 2.0 * np.eye(60)
    with pytest.raises(ValueError, match="Kernel 2 of 4 is not positive semidefinite"):
        lpmkl_solve(bad, y)
    with pytest.raises(ValueError, match="needs two classes"):
        lpmkl_solve(K, np.ones(60))
    with pytest.raises(TypeError, match="unknown option"):
        lpmkl_solve(K, y, solver="newton", stabilize=True)


def test_max_iter_warns(toy):
    K, y, _ = toy
    with pytest.warns(ConvergenceWarning, match=r"LpMKL \(newton, p=2\) did not converge in 1 "
                                                r"iterations: relative duality gap .* > tol"):
        res = lpmkl_solve(K, y, max_iter=1)
    assert not res.success and res.status == 1 and res.n_iter == 1
    with pytest.warns(ConvergenceWarning, match="SIP gap"):
        lpmkl_solve(K, y, solver="cutting_plane", max_iter=2, stop="sip")
    with pytest.warns(ConvergenceWarning, match=r"cutting_plane, p=2\) did not converge in 1 "
                                                r"iterations: relative duality gap"):
        lpmkl_solve(K, y, solver="cutting_plane", max_iter=1)


def test_verbose_prints(toy, capsys):
    K, y, _ = toy
    lpmkl_solve(K, y, p=2.0, solver="analytic", verbose=2)
    out = capsys.readouterr().out
    assert "LpMKL (analytic, p=2) iter    1" in out and "converged" in out
    lpmkl_solve(K, y, p=2.0, solver="analytic")
    assert capsys.readouterr().out == ""


# ------------------------------------------------------------------ estimator

def test_estimator_single_kernel_matches_svc():
    """One kernel, no normalisation ⇒ SVC(kernel="precomputed") decision values."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=50) > 0, "b", "a")

    def rbf(A, B):
        return np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    clf = LpMKLClassifier(kernels=[rbf], p=2.0, C=2.0, svm_tol=1e-10).fit(X, y)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(rbf(X, X), y)
    X_test = rng.normal(size=(20, 3))
    np.testing.assert_allclose(clf.decision_function(X_test),
                               svc.decision_function(rbf(X_test, X)), atol=1e-6)
    np.testing.assert_array_equal(clf.predict(X_test), svc.predict(rbf(X_test, X)))
    assert clf.weights_.tolist() == [1.0] and clf.converged_


def test_estimator_fit_and_params():
    from sklearn.base import clone

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)

    def lin(A, B):
        return A @ B.T

    def rbf(A, B):
        return np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    for solver in ("newton", "analytic", "cutting_plane"):
        clf = LpMKLClassifier(kernels=[lin, rbf], p=1.5, solver=solver).fit(X, y)
        assert clf.weights_.shape == (2,) and np.isclose(pnorm(clf.weights_, 1.5), 1.0)
        assert clf.score(X, y) > 0.7
        assert clf.history_["weights"].shape == (clf.n_iter_, 2)
    assert clone(clf).get_params()["solver"] == "cutting_plane"
    with pytest.raises(ValueError, match="'p' parameter of LpMKLClassifier"):
        LpMKLClassifier(kernels=[lin], p=0.5).fit(X, y)
    with pytest.raises(ValueError, match="requires p > 1"):
        LpMKLClassifier(kernels=[lin], p=1, solver="newton").fit(X, y)


# --------------------------------------------------------------------------------------
# the shared wrapper loop (mklcore.wrapper) on the iteration contract
# --------------------------------------------------------------------------------------

def test_sum_kernel_is_lpmkl_at_p_inf(toy):
    """sum_kernel_svm_solve is lpmkl_solve(p=inf): the same model, the same objective."""
    K, y, C = toy
    ref = sum_kernel_svm_solve(K, y, C=C, svm_tol=SVM_TOL)
    res = lpmkl_solve(K, y, p=np.inf, C=C, svm_tol=SVM_TOL)
    assert ref.objective == res.objective and ref.gap == res.gap
    np.testing.assert_array_equal(ref.dual_coef, res.dual_coef)
    assert ref.intercept == res.intercept and ref.n_iter == 1
    # the objective is the SVM dual value J; the hinge primal certifies it
    assert 0 <= ref.rigorous_gap < 1e-3 * ref.objective


# --------------------------------------------------------------------------------------
# issue 16: failing defaults, uncertified SVMs, bounded SVM solves
# --------------------------------------------------------------------------------------

def test_sqclp_master_falls_back_to_exact(toy, monkeypatch):
    """A failing SQCLP master (as on 400+ kernel banks) hands over to the exact master."""
    import mklcore.lpnorm as lpnorm

    K, y, C = toy
    exact = lpmkl_solve(K, y, p=4 / 3, C=C, solver="cutting_plane", master="exact", tol=1e-6)
    plain = lpmkl_solve(K, y, p=4 / 3, C=C, solver="cutting_plane", master="sqclp", tol=1e-6)
    assert plain.master_fallback is None and "master=" not in plain.message
    real = lpnorm._cvx_master

    def failing(cuts, p, *, theta_tilde=None, kind="sqclp"):
        if kind == "sqclp" and len(cuts) >= 2:
            raise lpnorm.NumericalFailure("master problem (sqclp) failed: SolverError")
        return real(cuts, p, theta_tilde=theta_tilde, kind=kind)

    monkeypatch.setattr(lpnorm, "_cvx_master", failing)
    res = lpmkl_solve(K, y, p=4 / 3, C=C, solver="cutting_plane", master="sqclp", tol=1e-6)
    assert res.success and res.status == 0
    assert "continued with master='exact'" in res.message
    assert res.master_fallback.startswith("the SQCLP master failed at cut 2")
    np.testing.assert_allclose(res.objective, exact.objective, rtol=1e-5)


def test_stabilize_is_gone(toy):
    """SHOGUN's regulariser stalled on large banks; it is no option, nor advised any more."""
    K, y, C = toy
    with pytest.raises(TypeError, match="unknown option"):
        lpmkl_solve(K, y, p=1.0, solver="analytic", stabilize=True)
    with pytest.raises(ValueError, match="requires p > 1") as info:
        lpmkl_solve(K, y, p=1.0, solver="newton")
    assert "stabilize" not in str(info.value)
    with pytest.raises(TypeError):
        LpMKLClassifier(stabilize=True)


@pytest.mark.parametrize("solver,p", [("newton", 4 / 3), ("newton", 2.0), ("analytic", 2.0),
                                      ("analytic", 4.0), ("cutting_plane", 1.0)])
def test_fast_default_engine_is_certified_and_agrees(toy, solver, p):
    """The default engine (interleaved SMO) reaches the certified gap and the wrapper's model."""
    K, y, C = toy
    fast = lpmkl_solve(K, y, p=p, C=C, solver=solver, tol=1e-6, svm_tol=1e-6)
    old = lpmkl_solve(K, y, p=p, C=C, solver=solver, tol=1e-6, svm_tol=1e-6, mode="wrapper")
    assert fast.mode == "interleaved" and fast.svm_backend == "smo" and old.mode == "wrapper"
    assert fast.success and fast.criterion <= 1e-6
    np.testing.assert_allclose(fast.objective, old.objective, rtol=1e-5)
    np.testing.assert_allclose(fast.weights, old.weights, atol=1e-2)


def test_default_engine_choices():
    """Interleaved for Newton / analytic / LP masters (p >= 1); wrapper for the cvxpy masters,
    p = inf and any non-SMO backend; explicit choices are kept."""
    assert default_engine("newton", 2.0, 1000) == ("interleaved", "smo", 50)
    assert default_engine("analytic", 1.0, 100) == ("interleaved", "smo", 10)
    assert default_engine("cutting_plane", 1.0, 400) == ("interleaved", "smo", 20)
    fast = default_backend()  # LIBSVM without scikit-learn's per-call checks, when it works
    assert default_engine("cutting_plane", 2.0, 400) == ("interleaved", "smo", 20)  # LP master
    assert default_engine("cutting_plane", 2.0, 400, master="sqclp") == ("wrapper", fast, None)
    assert default_engine("cutting_plane", 2.0, 400, master="exact") == ("wrapper", fast, None)
    assert default_engine("newton", np.inf, 400) == ("wrapper", fast, None)
    assert default_engine("newton", 2.0, 400, svm_backend="libsvm") == ("wrapper", "libsvm",
                                                                        None)
    assert default_engine("newton", 2.0, 400, mode="interleaved", mkl_every=7) == (
        "interleaved", "smo", 7)
    assert default_engine("newton", 2.0, 400, mode="wrapper") == ("wrapper", fast, None)


def test_wrapper_default_engine_agrees_with_libsvm():
    """The compiled engine (default) and LIBSVM (the reference) reach the same certified
    solution in wrapper mode."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1.0, -1.0)
    K = np.stack([X @ X.T, np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))])
    for p in (np.inf, 2.0):
        solver = "cutting_plane" if p == 2.0 else "newton"
        fast = lpmkl_solve(K, y, p=p, solver=solver, mode="wrapper", svm_tol=1e-8)
        ref = lpmkl_solve(K, y, p=p, solver=solver, mode="wrapper", svm_backend="libsvm",
                          svm_tol=1e-8)
        assert fast.success and ref.success and fast.svm_backend == "smo"
        np.testing.assert_allclose(fast.weights, ref.weights, atol=1e-4)
        np.testing.assert_allclose(fast.objective, ref.objective, rtol=1e-6)


def test_estimator_uses_the_fast_default():
    """LpMKLClassifier fits with the default engine of lpmkl_solve (interleaved SMO)."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    clf = LpMKLClassifier(p=2.0).fit(X, y)
    assert clf.result_.mode == "interleaved" and clf.converged_
    assert clf.gap_ <= clf.tol


def test_sum_kernel_svc_never_builds_the_stack(monkeypatch):
    """SumKernelSVC sums the bank kernel by kernel (no M-kernel stack, for fit or predict) and
    predicts as scikit-learn's SVC on the precomputed sum; weights_ and result_ keep one unit
    weight per kernel, so decision() on the test stack gives the same values."""
    from mklcore import SumKernelSVC, decision
    from mklcore.kernels import KernelBank, kernel_bank, kernel_stack

    rng = np.random.default_rng(5)
    X = rng.normal(size=(70, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1, -1)
    X_tr, X_te, y_tr = X[:50], X[50:], y[:50]
    bank = kernel_bank("simplemkl", n_features=4)

    def no_stack(*args, **kwargs):
        raise AssertionError("the stack was built")

    with monkeypatch.context() as m:
        m.setattr(KernelBank, "fit_transform", no_stack)
        m.setattr(KernelBank, "transform", no_stack)
        clf = SumKernelSVC(kernels=bank, C=2.0, normalize="trace", svm_tol=1e-9).fit(X_tr, y_tr)
        f = clf.decision_function(X_te)
    ref_bank = KernelBank(kernels=bank, normalize="trace")
    K, K_te = ref_bank.fit_transform(X_tr), ref_bank.transform(X_te)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-9).fit(K.sum(axis=0), y_tr)
    # LIBSVM keeps the kernel in float32: its decision values move by ~1e-6 relative
    np.testing.assert_allclose(f, svc.decision_function(K_te.sum(axis=0)), atol=2e-5)
    assert clf.weights_.tolist() == [1.0] * K.shape[0]
    np.testing.assert_allclose(decision(clf.result_, K_te), f, atol=1e-10)
    assert K.shape[0] == len(kernel_stack(bank, X_tr))


def test_auto_solver_fits_every_p_including_one():
    """solver='auto' (the default) is valid for every p: the cutting plane at p = 1, Newton
    above; a grid search over p with p = 1 in it fails no fit."""
    import warnings

    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV

    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    assert LpMKLClassifier(p=1.0).fit(X, y).result_.solver == "cutting_plane"
    assert LpMKLClassifier(p=2.0).fit(X, y).result_.solver == "newton"
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # sklearn warns about failed fits
        search = GridSearchCV(LpMKLClassifier(), {"p": [1.0, 4 / 3, 2.0]}, cv=3,
                              error_score="raise").fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
