"""Tests of localized MKL (Gönen & Alpaydın, ICML 2008)."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

import mklcore
from mklcore import MKLResult
from mklcore.kernels import linear, polynomial
from mklcore.localized import (LMKLClassifier, lmkl_decision, lmkl_gates, lmkl_gradient,
                               lmkl_objective, lmkl_solve, locally_combined_kernel,
                               softmax_gating)
from mklcore.svm import svm_solve

# SVM duals solved to a KKT violation of 1e-12 give J to ~1e-12 relative; central finite
# differences with h = 1e-5 then agree with the analytic gradient to ~1e-8
FD_STEP = 1e-5
FD_RTOL = 1e-5
TIGHT_SVM = 1e-12
# LIBSVM at tol 1e-10 vs cvxpy (Clarabel): objectives agree to ~1e-8 relative
ORACLE_RTOL = 1e-6


def _trace_normalise(K):
    return K / np.trace(K, axis1=1, axis2=2)[:, None, None]


@pytest.fixture
def prototype():
    """N = 40 XOR-like points, K_L and (<x,x'>+1)^2 divided by their traces (Sec. 4 of the paper),
    and gating parameters V = 0.5 N(0, 1); a NumPy/SciPy prototype (SLSQP, ftol 1e-15) gave the
    reference values of test_prototype_numbers."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.sign(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=40))
    K = _trace_normalise(np.stack([X @ X.T, (X @ X.T + 1) ** 2]))
    V = 0.5 * rng.normal(size=(2, 3))
    return X, y, K, V


@pytest.fixture
def three_kernels():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(36, 3))
    y = np.where(X[:, 0] * X[:, 1] - 0.5 * X[:, 2] + 0.2 * rng.normal(size=36) > 0, 1.0, -1.0)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = _trace_normalise(np.stack([X @ X.T, (X @ X.T + 1) ** 2, np.exp(-D / 2.0)]))
    V = rng.normal(size=(3, 4))
    return X, y, K, V


def _fd_gradient(K, y, X, V, C, gating="softmax"):
    G = np.zeros_like(V)
    for idx in np.ndindex(*V.shape):
        Vp, Vm = V.copy(), V.copy()
        Vp[idx] += FD_STEP
        Vm[idx] -= FD_STEP
        Jp = lmkl_objective(K, y, X, Vp, C=C, gating=gating, svm_tol=TIGHT_SVM).objective
        Jm = lmkl_objective(K, y, X, Vm, C=C, gating=gating, svm_tol=TIGHT_SVM).objective
        G[idx] = (Jp - Jm) / (2 * FD_STEP)
    return G


def _triple_sum_gradient(K, y, alpha, eta, Z_aug):
    """The paper's gradient formulas for dJ/dv_m and dJ/dv_m0, term by term (Sec. 2)."""
    n, P = eta.shape
    u = alpha * y
    G = np.zeros((P, Z_aug.shape[1]))
    for m in range(P):
        for h in range(P):
            d = 1.0 if h == m else 0.0
            W = np.outer(u * eta[:, h], u * eta[:, h]) * K[h]
            a = d - eta[:, m]
            # sum_ij W_ij [z_i a_i + z_j a_j]
            G[m] += -0.5 * ((W.sum(axis=1) * a) @ Z_aug + (W.sum(axis=0) * a) @ Z_aug)
    return G


# ---------------------------------------------------------------------------
# prototype numbers and the gradient
# ---------------------------------------------------------------------------

def test_prototype_numbers(prototype):
    X, y, K, V = prototype
    res = lmkl_objective(K, y, X, V, C=10.0, svm_tol=TIGHT_SVM)
    assert res.objective == pytest.approx(345.306, abs=5e-4)
    np.testing.assert_allclose(res.gradient[0], [17.1428, -22.0902, -14.0782], atol=5e-4)
    np.testing.assert_allclose(res.gradient[1], -res.gradient[0], rtol=1e-12)
    # constant gating eta = (0.3, 0.7): J = SVM objective with kernel 0.09 K1 + 0.49 K2
    V_const = np.log([0.3, 0.7])[:, None]
    const = lmkl_objective(K, y, None, V_const, C=10.0, gating="fixed", svm_tol=TIGHT_SVM)
    assert const.objective == pytest.approx(301.02400, abs=5e-5)
    svm = svm_solve(K, y, weights=[0.09, 0.49], C=10.0, tol=TIGHT_SVM)
    assert const.objective == pytest.approx(svm.dual_objective, rel=1e-10)


def test_gradient_matches_finite_differences(prototype, three_kernels):
    for X, y, K, V, C in [(*prototype, 10.0), (*three_kernels, 50.0)]:
        analytic = lmkl_objective(K, y, X, V, C=C, svm_tol=TIGHT_SVM).gradient
        numeric = _fd_gradient(K, y, X, V, C)
        rel = np.abs(analytic - numeric).max() / np.abs(numeric).max()
        assert rel < FD_RTOL, rel


def test_gradient_of_constant_gating_matches_finite_differences(three_kernels):
    _, y, K, _ = three_kernels
    V = np.array([[0.2], [-0.4], [0.1]])
    analytic = lmkl_objective(K, y, None, V, C=20.0, gating="fixed", svm_tol=TIGHT_SVM).gradient
    numeric = _fd_gradient(K, y, None, V, 20.0, gating="fixed")
    assert np.abs(analytic - numeric).max() / np.abs(numeric).max() < FD_RTOL


def test_vectorised_gradient_equals_triple_sum(three_kernels):
    X, y, K, V = three_kernels
    res = lmkl_objective(K, y, X, V, C=5.0, svm_tol=1e-8)
    Z_aug = np.hstack([np.ones((X.shape[0], 1)), X])
    expected = _triple_sum_gradient(K, y, res.alpha, res.eta, Z_aug)
    got = lmkl_gradient(K, y, res.alpha, res.eta, Z_aug)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_softmax_invariance(three_kernels):
    X, y, K, V = three_kernels
    res = lmkl_objective(K, y, X, V, C=5.0, svm_tol=TIGHT_SVM)
    # rows of the gradient sum to zero
    np.testing.assert_allclose(res.gradient.sum(axis=0), 0.0,
                               atol=1e-10 * np.abs(res.gradient).max())
    # adding a common vector to every row of V changes nothing
    shifted = lmkl_objective(K, y, X, V + np.array([0.7, -1.0, 2.0, 0.3]), C=5.0,
                             svm_tol=TIGHT_SVM)
    np.testing.assert_allclose(shifted.eta, res.eta, rtol=1e-12)
    np.testing.assert_allclose(shifted.alpha, res.alpha, atol=1e-9)
    assert shifted.objective == pytest.approx(res.objective, rel=1e-12)


# ---------------------------------------------------------------------------
# special cases and invariants
# ---------------------------------------------------------------------------

def test_single_kernel_is_the_svm(prototype):
    X, y, K, _ = prototype
    res = lmkl_solve(K[1:], y, X, C=10.0, random_state=0, sv_tol=0.0, svm_tol=1e-10)
    assert res.n_iter == 0 and res.status == 0 and res.success
    assert res.message == ("converged: the gradient with respect to the gating parameters is "
                           "zero after 0 iterations")
    assert len(res.history["objective"]) == 0
    np.testing.assert_array_equal(res.eta_train, 1.0)
    assert res.initial["grad_norm"] == 0.0
    svc = SVC(kernel="precomputed", C=10.0, tol=1e-10).fit(K[1], y)
    np.testing.assert_allclose(K[1] @ res.dual_coef + res.intercept,
                               svc.decision_function(K[1]), atol=1e-7)


def test_constant_gating_equals_fixed_weight_mkl(three_kernels):
    """LMKL(C) with constant gates = SVM on sum beta_m K_m with C' = gamma C.

    With eta_m(x) = eta_bar_m the locally combined kernel is sum_m eta_bar_m^2 K_m; with
    gamma = sum_m eta_bar_m^2 and beta = eta_bar^2 / gamma the dual (7) scales to the SVM with
    kernel sum_m beta_m K_m and C' = gamma C (alpha' = gamma alpha, J = J' / gamma).
    """
    _, y, K, _ = three_kernels
    eta_bar = np.array([0.2, 0.5, 0.3])
    C = 10.0
    V = np.log(eta_bar)[:, None]
    lmkl = lmkl_objective(K, y, None, V, C=C, gating="fixed", svm_tol=TIGHT_SVM)
    gamma = np.sum(eta_bar ** 2)
    beta = eta_bar ** 2 / gamma
    svm = svm_solve(K, y, weights=beta, C=gamma * C, tol=TIGHT_SVM)
    # weights eta^2, not eta: the naive mapping does not hold
    naive = svm_solve(K, y, weights=eta_bar, C=C, tol=TIGHT_SVM)
    assert abs(naive.dual_objective - lmkl.objective) > 1e-3 * lmkl.objective
    assert lmkl.objective == pytest.approx(svm.dual_objective / gamma, rel=1e-10)
    np.testing.assert_allclose(svm.alpha, gamma * lmkl.alpha, atol=1e-6 * C)
    K_beta = np.tensordot(beta, K, axes=1)
    f_mkl = K_beta @ svm.dual_coef + svm.intercept
    f_lmkl = lmkl.K_eta @ lmkl.dual_coef + lmkl.intercept
    np.testing.assert_allclose(f_lmkl, f_mkl, atol=1e-6)
    # the solver's gating="fixed" reports the same mapping
    res = lmkl_solve(K, y, None, C=C, gating="fixed", init_coef=V, max_iter=1, svm_tol=TIGHT_SVM)
    assert res.initial["objective"] == pytest.approx(lmkl.objective, rel=1e-10)
    np.testing.assert_allclose(res.initial["weights"], eta_bar)
    assert res.mkl_weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(res.mkl_weights, res.weights ** 2 / np.sum(res.weights ** 2))
    assert res.effective_C == pytest.approx(C * np.sum(res.weights ** 2))


def test_fixed_gating_solution_is_an_svm_on_the_mapped_combination(three_kernels):
    _, y, K, _ = three_kernels
    res = lmkl_solve(K, y, None, C=10.0, gating="fixed", max_iter=10, random_state=0,
                     sv_tol=0.0, svm_tol=1e-10)
    assert res.gating_coef.shape == (3, 1)
    svm = svm_solve(K, y, weights=res.mkl_weights, C=res.effective_C, tol=1e-10)
    K_beta = np.tensordot(res.mkl_weights, K, axes=1)
    f = lmkl_decision(res, K)
    np.testing.assert_allclose(f, K_beta @ svm.dual_coef + svm.intercept, atol=1e-6)


def test_identical_kernels_and_uniform_gating(prototype):
    X, _, K, _ = prototype
    stack = np.stack([K[0]] * 3)
    eta = softmax_gating(X, np.zeros((3, 3)))
    np.testing.assert_allclose(eta, 1.0 / 3.0)
    np.testing.assert_allclose(locally_combined_kernel(stack, eta), K[0] / 3.0, rtol=1e-13)


def test_locally_combined_kernel_is_psd(three_kernels):
    X, _, K, _ = three_kernels
    rng = np.random.default_rng(5)
    for _ in range(5):
        eta = softmax_gating(X, 3.0 * rng.normal(size=(3, 4)))
        K_eta = locally_combined_kernel(K, eta)
        assert np.linalg.eigvalsh(K_eta)[0] >= -1e-10 * np.trace(K_eta)
        # the definition, entry by entry; computed above the diagonal and mirrored
        naive = sum(eta[:, m, None] * K[m] * eta[None, :, m] for m in range(3))
        np.testing.assert_allclose(K_eta, naive, rtol=1e-14, atol=0)
        np.testing.assert_array_equal(K_eta, K_eta.T)
        # rectangular blocks (test rows) and kernels gated off everywhere
        eta_off = eta.copy()
        eta_off[:, 1] = 0.0
        block = locally_combined_kernel(K[:, :7], eta_off[:7], eta_off)
        np.testing.assert_allclose(block, (naive - eta[:, 1, None] * K[1] * eta[None, :, 1])[:7],
                                   rtol=1e-12, atol=1e-15)


def _bank_case(n=70, n_kernels=20, seed=11):
    """A bank of kernels of very different scales (unnormalised polynomials and Gaussians)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] * X[:, 1] - 0.4 * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    G = np.einsum("id,jd->ij", X, X)
    K = [np.exp(-D / w) for w in np.geomspace(0.1, 50.0, n_kernels - 4)]
    K += [G, (G + 1.0) ** 2, (G + 1.0) ** 3, 100.0 * (G + 1.0) ** 3]
    return np.stack(K), y, X


def test_skipped_gate_terms_are_bounded():
    """With rtol > 0 every entry is within rtol * sqrt(D_i D_j) of the exact sum (the proven
    bound), the result is exactly symmetric, and rtol = 0 is the exact sum."""
    from mklcore.localized import kernel_row_max

    K, _, X = _bank_case()
    M = K.shape[0]
    row_max = kernel_row_max(K)
    np.testing.assert_array_equal(row_max, np.abs(K).max(axis=2).T)
    rng = np.random.default_rng(2)
    for scale in (0.5, 5.0, 50.0):  # from nearly uniform to crisp gates
        eta = softmax_gating(X, scale * rng.normal(size=(M, 4)))
        exact = locally_combined_kernel(K, eta)
        np.testing.assert_array_equal(locally_combined_kernel(K, eta, rtol=0.0), exact)
        D = np.sum(eta * eta * row_max, axis=1)
        bound = np.sqrt(np.outer(D, D))
        for rtol in (1e-12, 1e-6, 1e-2, 0.3):
            approx = locally_combined_kernel(K, eta, rtol=rtol, row_max=row_max)
            np.testing.assert_array_equal(approx, approx.T)
            assert np.all(np.abs(approx - exact) <= rtol * bound + 1e-13 * bound)
            # row_max is computed when not given
            np.testing.assert_array_equal(locally_combined_kernel(K, eta, rtol=rtol), approx)
    with pytest.raises(ValueError, match="square training stack"):
        locally_combined_kernel(K[:, :5], eta[:5], eta, rtol=1e-6)


def test_softmax_gating_threshold_and_stability():
    X = np.array([[0.0], [1e3], [-1e3]])
    V = np.array([[0.0, 1.0], [0.0, -1.0], [0.0, 0.0]])
    eta = softmax_gating(X, V)  # huge scores: the max-subtraction trick keeps it finite
    assert np.all(np.isfinite(eta))
    np.testing.assert_allclose(eta.sum(axis=1), 1.0)
    eta_t = softmax_gating(np.array([[0.0], [10.0]]), V, gate_threshold=1e-3)
    assert eta_t[1].tolist() == [1.0, 0.0, 0.0]


# ---------------------------------------------------------------------------
# the algorithm
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("line_search,threshold", [("bounded", 0.0),
                                                   ("doubling", 0.0),
                                                   ("armijo", 0.0),
                                                   ("bounded", 1e-3),
                                                   ("doubling", 1e-3)])
def test_objective_never_increases(three_kernels, line_search, threshold):
    X, y, K, _ = three_kernels
    res = lmkl_solve(K, y, X, C=50.0, max_iter=15, random_state=1, line_search=line_search,
                     gate_threshold=threshold)
    J = res.history["objective"]
    assert res.n_iter >= 1 and all(len(v) == res.n_iter for v in res.history.values())
    assert np.all(np.diff(np.r_[res.initial["objective"], J]) < 0)  # accepted steps decrease J
    assert np.all(res.history["step"] > 0)
    J_all = np.r_[res.initial["objective"], J]
    np.testing.assert_allclose(res.history["criterion"], -np.diff(J_all) / J_all[:-1], rtol=1e-12)
    assert res.objective == J[-1]
    assert np.all(np.isnan(res.history["gap"])) and np.isnan(res.gap)
    np.testing.assert_allclose(res.history["weights"].sum(axis=1), 1.0, atol=1e-2)
    assert res.history["gating_coef"].shape == (res.n_iter, 3, 4)
    assert res.n_svm_calls >= res.history["n_svm_calls"][-1] >= res.n_iter + 1
    assert np.all(np.diff(res.history["time"]) >= 0)


def test_fixed_schedule_and_determinism(prototype):
    X, y, K, _ = prototype
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tol=None: the fixed schedule does not warn
        a = lmkl_solve(K, y, X, C=200.0, max_iter=8, random_state=4)
    b = lmkl_solve(K, y, X, C=200.0, max_iter=8, random_state=4)
    np.testing.assert_array_equal(a.gating_coef, b.gating_coef)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    # the whole schedule (status 1, as for every solver run with tol=None), or a local optimum
    assert (a.n_iter == 8 and a.status == 1 and not a.success) or (
        a.status == 0 and "no descent step" in a.message)
    assert np.isnan(a.tol) and a.method == "lmkl"
    # the initial gating is U(-0.01, 0.01)
    V0 = a.initial["gating_coef"]
    assert np.abs(V0).max() <= 0.01
    np.testing.assert_array_equal(V0, np.random.RandomState(4).uniform(-0.01, 0.01, (2, 3)))


def test_no_step_when_gradient_is_zero(prototype):
    """Identical kernels with uniform gating are a stationary point: no step is taken."""
    X, y, K, _ = prototype
    stack = np.stack([K[1], K[1]])
    res = lmkl_solve(stack, y, X, C=10.0, init_coef=np.zeros((2, 3)))
    assert res.n_iter == 0 and res.status == 0
    assert res.initial["grad_norm"] == 0.0


def test_line_search_doubles_and_halves_the_step(prototype):
    """Line search of Gönen's LMKSVM code (``line_search="doubling"``): start at mu = 1,
    double while J decreases, else halve.

    So every accepted step is 2**k (k integer), taken along the unit vector -G/||G||, and an
    iteration that accepts 2**k costs exactly k + 2 SVM solves when k >= 0 (trials
    1, 2, ..., 2**k, and the failing 2**(k+1)) and 1 + |k| when k < 0 (the failing trial at
    1, then |k| halvings). On this problem (found by experiment) both phases occur.
    """
    X, y, K, _ = prototype
    res = lmkl_solve(K, y, X, C=50.0, max_iter=15, random_state=0, line_search="doubling")
    assert res.n_iter == 15 and res.line_search == "doubling" and res.max_step == np.inf
    steps = res.history["step"]
    k = np.log2(steps)
    np.testing.assert_array_equal(k, np.round(k))  # exact powers of two of mu0 = 1
    k = np.round(k).astype(int)
    np.testing.assert_array_equal(steps, 2.0 ** k)
    assert k.max() >= 2, f"no expansion (doubling) phase: log2 steps {k.tolist()}"
    assert k.min() <= -2, f"no backtracking (halving) phase: log2 steps {k.tolist()}"
    calls = np.diff(np.r_[res.initial["n_svm_calls"], res.history["n_svm_calls"]])
    expected = np.where(k >= 0, k + 2, 1 - k)
    np.testing.assert_array_equal(calls, expected)
    # the step is the length of the move: the direction is the normalised gradient
    V = np.concatenate([res.initial["gating_coef"][None], res.history["gating_coef"]])
    moved = np.linalg.norm((V[1:] - V[:-1]).reshape(len(steps), -1), axis=1)
    np.testing.assert_allclose(moved, steps, rtol=1e-12)


@pytest.mark.parametrize("max_step", [1.0, 4.0])
def test_bounded_line_search_caps_the_doubling(prototype, max_step):
    """The rule "bounded" is Gönen's scheme with the doubling capped at max_step:
    every accepted step is 2**k <= max_step, and an update that accepts 2**k costs exactly
    k + 2 SVM solves for 0 <= k < log2(max_step) (trials 1, ..., 2**k and the failing
    2**(k+1)), k + 1 at the cap (no trial beyond it) and 1 + |k| for k < 0."""
    X, y, K, _ = prototype
    res = lmkl_solve(K, y, X, C=50.0, max_iter=15, random_state=0, line_search="bounded",
                     max_step=max_step)
    assert res.line_search == "bounded" and res.max_step == max_step
    steps = res.history["step"]
    k = np.round(np.log2(steps)).astype(int)
    np.testing.assert_array_equal(steps, 2.0 ** k)
    assert steps.max() <= max_step
    cap = int(np.log2(max_step))
    calls = np.diff(np.r_[res.initial["n_svm_calls"], res.history["n_svm_calls"]])
    np.testing.assert_array_equal(calls, np.where(k >= 0, k + 2 - (k == cap), 1 - k))
    J = np.r_[res.initial["objective"], res.history["objective"]]
    assert np.all(np.diff(J) < 0)


@pytest.mark.parametrize("rule", ["armijo", "bounded"])
def test_capped_rules_complete_the_schedule_where_doubling_saturates(rule):
    """Heart (60 points, three linear kernels, C = 100 on trace-n kernels): the uncapped
    doubling of Gönen's code takes steps of 2**6 and more, the softmax gates saturate (mean
    maximal gate 1.000), no descent step is left and the fit stops after a few updates; the
    rules with steps of at most 1 (the default "armijo", and "bounded") keep making updates
    (the gates change gradually) and reach a far lower J. Found by experiment (60 points
    drawn with seed 2)."""
    from mklcore import datasets

    X, y = datasets.load_dataset("heart", return_X_y=True)
    idx = np.random.default_rng(2).permutation(len(y))[:60]
    X = np.asarray(X, dtype=float)[idx]
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    y = np.where(np.asarray(y)[idx] == np.unique(y)[-1], 1.0, -1.0)
    L = X @ X.T * (len(y) / np.trace(X @ X.T))
    K = np.stack([L, L, L])
    doubling = lmkl_solve(K, y, X, C=100.0, max_iter=20, random_state=2, line_search="doubling")
    bounded = lmkl_solve(K, y, X, C=100.0, max_iter=20, random_state=2, line_search=rule)
    if rule == "armijo":  # the default
        default = lmkl_solve(K, y, X, C=100.0, max_iter=20, random_state=2)
        assert default.line_search == "armijo" and default.max_step == 1.0
        np.testing.assert_array_equal(default.gating_coef, bounded.gating_coef)
    assert doubling.status == 0 and "no descent step" in doubling.message
    assert doubling.n_iter <= 8 and doubling.history["step"].max() >= 2.0 ** 6
    assert doubling.history["max_gate"][-1] > 0.995  # saturated gates
    assert bounded.status == 1 and bounded.n_iter == 20 > doubling.n_iter
    assert bounded.history["step"].max() <= 1.0
    assert np.all(np.diff(np.r_[bounded.initial["objective"], bounded.history["objective"]]) < 0)
    assert bounded.objective < 0.5 * doubling.objective
    assert bounded.history["max_gate"][-1] < 0.99  # not saturated


def test_expand_backtrack_is_a_deprecated_name_of_doubling(prototype):
    X, y, K, _ = prototype
    with pytest.warns(FutureWarning, match="'doubling'"):
        old = lmkl_solve(K, y, X, C=50.0, max_iter=3, random_state=0,
                         line_search="expand_backtrack")
    new = lmkl_solve(K, y, X, C=50.0, max_iter=3, random_state=0, line_search="doubling")
    assert old.line_search == "doubling"
    np.testing.assert_array_equal(old.gating_coef, new.gating_coef)


@pytest.mark.parametrize("max_step", [1.0, 4.0])
def test_armijo_starts_at_twice_the_previous_step(prototype, max_step):
    """Armijo: the first trial is twice the last accepted step (1 at the first update), at
    most max_step, then halvings; an accepted step 2**k after a first trial 2**f costs
    exactly f + 1 - k SVM solves, and every accepted step has the sufficient decrease
    J' <= J - 1e-4 * step * ||G||."""
    X, y, K, _ = prototype
    res = lmkl_solve(K, y, X, C=50.0, max_iter=15, random_state=0, line_search="armijo",
                     max_step=max_step)
    steps = res.history["step"]
    k = np.round(np.log2(steps)).astype(int)
    np.testing.assert_array_equal(steps, 2.0 ** k)
    assert steps.max() <= max_step
    # log2 of the first trial of each search
    first = np.minimum(np.r_[0, k[:-1] + 1], int(np.log2(max_step)))
    assert np.all(k <= first)
    calls = np.diff(np.r_[res.initial["n_svm_calls"], res.history["n_svm_calls"]])
    np.testing.assert_array_equal(calls, first - k + 1)
    J = np.r_[res.initial["objective"], res.history["objective"]]
    grad_norm = np.r_[res.initial["grad_norm"], res.history["grad_norm"]]
    assert np.all(J[1:] <= J[:-1] - 1e-4 * steps * grad_norm[:-1])


def test_tol_convergence_warning_and_callback(prototype):
    X, y, K, _ = prototype
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 iterations"):
        res = lmkl_solve(K, y, X, C=200.0, max_iter=1, tol=1e-12, random_state=0)
    assert not res.success and res.status == 1 and "relative decrease of J" in res.message
    # tol=0 keeps the stopping test: accepted steps strictly decrease J, so it warns
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        lmkl_solve(K, y, X, C=200.0, max_iter=2, tol=0.0, random_state=0)
    # a loose tol stops at once, with status 0
    res = lmkl_solve(K, y, X, C=200.0, max_iter=10, tol=0.5, random_state=0)
    assert res.status == 0 and res.success and res.n_iter == 1
    assert res.criterion <= 0.5 and "relative decrease of J" in res.message


def test_callback_payload_and_stop_iteration(prototype):
    X, y, K, _ = prototype
    seen = []

    def record(intermediate):
        seen.append(intermediate)

    full = lmkl_solve(K, y, X, C=200.0, max_iter=4, random_state=0, callback=record)
    assert [p.n_iter for p in seen] == list(range(1, full.n_iter + 1))
    for p, row in zip(seen, range(full.n_iter)):
        assert p.method == "lmkl" and np.isnan(p.gap)
        assert p.objective == full.history["objective"][row]
        assert p.criterion == full.history["criterion"][row]
        np.testing.assert_array_equal(p.gating_coef, full.history["gating_coef"][row])
        np.testing.assert_array_equal(p.weights, full.history["weights"][row])

    def stop(intermediate):
        assert intermediate.gating_coef.shape == (2, 3)
        raise StopIteration

    res = lmkl_solve(K, y, X, C=200.0, max_iter=10, random_state=0, callback=stop)
    assert res.status == 3 and res.n_iter == 1 and not res.success
    assert len(res.history["objective"]) == 1
    assert res.message == "stopped by callback after 1 iterations"
    np.testing.assert_array_equal(res.gating_coef, full.history["gating_coef"][0])


def test_solver_against_cvxpy_oracle(three_kernels):
    """J(V) from the LIBSVM step equals the dual (7) solved by cvxpy."""
    import cvxpy as cp

    X, y, K, V = three_kernels
    C = 5.0
    res = lmkl_objective(K, y, X, V, C=C, svm_tol=1e-10)
    w, U = np.linalg.eigh(res.K_eta)
    L = U * np.sqrt(np.maximum(w, 0.0))
    a = cp.Variable(y.size)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))),
                      [y @ a == 0, a >= 0, a <= C])
    prob.solve()
    if prob.status != "optimal":
        pytest.skip(f"cvxpy status {prob.status}")
    assert res.objective == pytest.approx(prob.value, rel=ORACLE_RTOL)


# ---------------------------------------------------------------------------
# prediction
# ---------------------------------------------------------------------------

def test_prediction_on_training_points_and_skipping(three_kernels):
    X, y, K, _ = three_kernels
    for threshold in (0.0, 1e-3):
        res = lmkl_solve(K, y, X, C=50.0, max_iter=10, random_state=0, gate_threshold=threshold)
        assert type(res) is MKLResult and res.method == "lmkl"
        f, n_evals = lmkl_decision(res, K, X, return_n_evals=True)
        K_eta = locally_combined_kernel(K, res.eta_train)
        np.testing.assert_allclose(f, K_eta @ res.dual_coef + res.intercept, atol=1e-12)
        np.testing.assert_array_equal(res.decision(K, X_gate=X), f)
        # full dense sum over every kernel and every training point
        eta_test = softmax_gating(X, res.gating_coef, gate_threshold=threshold)
        full = sum(eta_test[:, m] * ((K[m] * res.eta_train[:, m]) @ res.dual_coef)
                   for m in range(3)) + res.intercept
        np.testing.assert_allclose(f, full, atol=1e-12)
        n_sv = res.support.size
        assert res.sv_percentage == pytest.approx(100.0 * n_sv / y.size)
        if threshold == 0.0:
            assert n_evals == 3 * y.size * n_sv
        else:  # crisp gates: zero-gated kernels are skipped
            assert n_evals < 3 * y.size * n_sv


def test_decision_input_errors(three_kernels):
    X, y, K, _ = three_kernels
    res = lmkl_solve(K, y, X, C=5.0, max_iter=2, random_state=0)
    with pytest.raises(ValueError, match="X_gate is required"):
        lmkl_decision(res, K)
    with pytest.raises(ValueError, match="X_gate is required"):
        mklcore.decision(res, K)
    with pytest.raises(ValueError, match="K_test must have shape"):
        lmkl_decision(res, K[:2], X)
    with pytest.raises(ValueError, match="X_gate must have shape"):
        lmkl_decision(res, K, X[:5])
    with pytest.raises(TypeError, match="X_gate_test"):
        lmkl_decision(res, K, X, X_gate_test=X)


def test_decision_dispatch_equals_lmkl_decision(three_kernels):
    """mklcore.decision(result, K_test, X_gate=...) applies the gated rule (eq. 8)."""
    X, y, K, _ = three_kernels
    rng = np.random.default_rng(11)
    X_test = rng.normal(size=(9, 3))
    D = ((X_test[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    D_train = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    raw = np.stack([X @ X.T, (X @ X.T + 1) ** 2, np.exp(-D_train / 2.0)])
    traces = np.trace(raw, axis1=1, axis2=2)[:, None, None]
    K_test = np.stack([X_test @ X.T, (X_test @ X.T + 1) ** 2, np.exp(-D / 2.0)]) / traces
    for gating in ("softmax", "fixed"):
        res = lmkl_solve(K, y, X, C=20.0, max_iter=5, random_state=0, gating=gating,
                         gate_threshold=1e-3)
        expected = lmkl_decision(res, K_test, X_test)
        np.testing.assert_array_equal(mklcore.decision(res, K_test, X_gate=X_test), expected)
        np.testing.assert_array_equal(lmkl_decision(res, K_test, X_gate=X_test), expected)
        np.testing.assert_array_equal(lmkl_gates(res, X_test),
                                      lmkl_gates(res, X_test, X_test.shape[0]))
        with pytest.warns(FutureWarning, match="'X_gate_test' parameter of lmkl_decision"):
            old = lmkl_decision(res, K_test, X_gate_test=X_test)
        np.testing.assert_array_equal(old, expected)
    # the fixed gating needs no gating input
    np.testing.assert_array_equal(mklcore.decision(res, K_test), expected)


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"C": 0.0}, r"The 'C' parameter of lmkl_solve must be a float in the range \(0, inf\)\. "
                 r"Got 0\.0 instead\."),
    ({"max_iter": 0}, r"The 'max_iter' parameter of lmkl_solve must be an int in the range "
                      r"\[1, inf\)\. Got 0 instead\."),
    ({"max_iter": 2.5}, r"'max_iter' parameter of lmkl_solve must be an int"),
    ({"n_iter": 0}, r"'n_iter' parameter of lmkl_solve must be an int in the range \[1, inf\) "
                    r"or None"),
    ({"gating": "rbf"}, r"'gating' parameter of lmkl_solve must be one of \{'softmax', 'fixed'\}"),
    ({"gate_threshold": 0.5}, r"'gate_threshold' parameter"),
    ({"line_search": "wolfe"}, r"'line_search' parameter"),
    ({"svm_tol": 0.0}, r"'svm_tol' parameter"),
])
def test_bad_parameters(prototype, kwargs, match):
    X, y, K, _ = prototype
    with pytest.raises(ValueError, match=match):
        lmkl_solve(K, y, X, **kwargs)


def test_bad_inputs(prototype):
    X, y, K, _ = prototype
    with pytest.raises(ValueError, match=r"X_gate has 39 rows but K has 40 samples: the gating "
                                         r"representation needs one row per training sample"):
        lmkl_solve(K, y, X[:-1])
    with pytest.raises(ValueError, match=r"X_gate must be 2-D.*reshape\(-1, 1\)"):
        lmkl_solve(K, y, X[:, 0])
    with pytest.raises(ValueError, match="needs the gating representation X_gate"):
        lmkl_solve(K, y, None)
    with pytest.raises(ValueError, match="X_gate contains NaN"):
        lmkl_solve(K, y, np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match=r"init_coef must have shape .*\(2, 3\); got \(2, 2\)"):
        lmkl_solve(K, y, X, init_coef=np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"y must hold labels in \{-1, \+1\}"):
        lmkl_solve(K, (y > 0).astype(float), X)
    with pytest.raises(ValueError, match="K and y do not match"):
        lmkl_solve(K, y[:-1], X)
    with pytest.raises(ValueError, match="coef must have shape"):
        lmkl_objective(K, y, X, np.zeros((3, 3)))


# ---------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------

@pytest.fixture
def xor_data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(70, 2)) * [1.0, 3.0] + [5.0, -2.0]
    y = np.where((X[:, 0] - 5.0) * (X[:, 1] + 2.0) > 0, "pos", "neg")
    return X, y


def test_estimator_fit_predict_and_gating_units(xor_data):
    X, y = xor_data
    clf = LMKLClassifier(C=300.0, max_iter=10, random_state=0, normalize="unit_trace").fit(X, y)
    assert clf.score(X, y) > 0.8
    assert clf.gating_coef_.shape == (2, 2) and clf.gating_intercept_.shape == (2,)
    assert clf.weights_.shape == (2,) and clf.weights_.sum() == pytest.approx(1.0)
    # gating_coef_/gating_intercept_ act on the raw inputs
    scores = X @ clf.gating_coef_.T + clf.gating_intercept_
    eta = np.exp(scores - scores.max(axis=1, keepdims=True))
    eta /= eta.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.gating_function(X), eta, rtol=1e-9, atol=1e-12)
    assert np.isnan(clf.gap_) and clf.n_iter_ >= 1
    assert clf.converged_ == (clf.result_.status == 0)  # status 1 after the fixed schedule
    assert all(len(v) == clf.n_iter_ for v in clf.history_.values())
    assert clf.sv_percentage_ == pytest.approx(100 * clf.support_.size / len(y))


@pytest.mark.parametrize("normalize", ["unit_trace", "trace", "cosine", None])
def test_estimator_normalisation_and_train_test_consistency(xor_data, normalize):
    X, y = xor_data
    clf = LMKLClassifier(C=100.0, max_iter=5, random_state=0, normalize=normalize,
                         gate_threshold=1e-3).fit(X, y)
    K = clf.kernel_bank_.transform(X)
    if normalize == "unit_trace":
        K = K / X.shape[0]
        np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 1.0)
    # a test set equal to the training set reproduces the training decision values
    f_train = locally_combined_kernel(K, clf.result_.eta_train) @ clf.dual_coef_ + clf.intercept_
    f, n_evals = clf.decision_function(X, return_n_evals=True)
    np.testing.assert_allclose(f, f_train, atol=1e-10 * max(1.0, np.abs(f_train).max()))
    assert n_evals <= 2 * X.shape[0] * clf.support_.size


def test_estimator_label_mapping_and_fixed_gating(xor_data):
    X, y = xor_data
    y01 = (y == "pos").astype(int)
    ypm = np.where(y01 == 1, 1, -1)
    a = LMKLClassifier(C=50.0, max_iter=3, random_state=0, normalize="unit_trace").fit(X, y01)
    b = LMKLClassifier(C=50.0, max_iter=3, random_state=0, normalize="unit_trace").fit(X, ypm)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    fixed = LMKLClassifier(C=50.0, gating="fixed", max_iter=3, random_state=0,
                           normalize="unit_trace").fit(X, y)
    np.testing.assert_array_equal(fixed.gating_coef_, 0.0)
    eta = fixed.gating_function(X)
    np.testing.assert_allclose(eta, np.broadcast_to(fixed.weights_, eta.shape))
    assert fixed.result_.mkl_weights.sum() == pytest.approx(1.0)


def test_estimator_gating_columns(xor_data):
    X, y = xor_data
    X3 = np.hstack([X, np.zeros((X.shape[0], 1))])  # constant feature: scale 1
    clf = LMKLClassifier(C=100.0, max_iter=3, random_state=0, gating_columns=[0],
                         normalize="unit_trace").fit(X3, y)
    assert clf.gating_coef_.shape == (2, 3)
    np.testing.assert_array_equal(clf.gating_coef_[:, 1:], 0.0)
    assert clf.result_.gating_coef.shape == (2, 2)


@pytest.mark.parametrize("kwargs,match", [
    ({"C": 0}, r"The 'C' parameter of LMKLClassifier must be a float in the range \(0, inf\)"),
    ({"max_iter": 0}, r"The 'max_iter' parameter of LMKLClassifier must be an int in the range "
                    r"\[1, inf\)"),
    ({"normalize": "l2"}, r"'normalize' parameter of LMKLClassifier"),
    ({"gating": "sigmoid"}, r"'gating' parameter of LMKLClassifier"),
    ({"gating_columns": [5]}, r"'gating_columns' parameter of LMKLClassifier"),
])
def test_estimator_bad_parameters(xor_data, kwargs, match):
    X, y = xor_data
    with pytest.raises(ValueError, match=match):
        LMKLClassifier(**kwargs).fit(X, y)


def test_engine_matches_libsvm(three_kernels):
    """The warm-started engine (default) and LIBSVM (the reference) give the same SVMs on the
    locally combined kernel and the same LMKL fit to the SVM tolerance."""
    from mklcore.svm import available_backends, default_backend

    assert default_backend() == "smo" and "libsvm" in available_backends()
    X, y, K, V = three_kernels
    for C in (0.5, 50.0):
        K_eta = locally_combined_kernel(K, softmax_gating(X, V))
        a = svm_solve(K_eta, y, C=C, tol=1e-8, backend="libsvm")
        b = svm_solve(K_eta, y, C=C, tol=1e-8)
        # LIBSVM keeps the kernel in float32: decision values agree to ~1e-6
        np.testing.assert_allclose(b.decision_train, a.decision_train, atol=1e-5)
        assert b.backend == "smo"
    r1 = lmkl_solve(K, y, X, C=50.0, max_iter=5, random_state=0, svm_backend="libsvm",
                    svm_tol=1e-8)
    r2 = lmkl_solve(K, y, X, C=50.0, max_iter=5, random_state=0, svm_tol=1e-8)
    assert r2.svm_backend == "smo" and r1.svm_backend == "libsvm"
    np.testing.assert_allclose(r2.history["objective"], r1.history["objective"], rtol=1e-5)
    with pytest.raises(ValueError, match="Unknown SVM backend 'nope'"):
        lmkl_solve(K, y, X, svm_backend="nope")


def test_estimator_default_normalisation_keeps_the_svm_scale_of_C():
    # with the default trace-n normalisation, C = 1 fits a usable model (the paper's unit
    # trace would need C of the order of n)
    from mklcore.datasets import load_ionosphere

    X, y = load_ionosphere(return_X_y=True)
    X, y = X[:150], y[:150]
    default = LMKLClassifier(max_iter=5, random_state=0).fit(X, y)
    majority = max(np.mean(y == c) for c in np.unique(y))
    assert default.score(X, y) > majority + 0.1


# ---------------------------------------------------------------------------
# deprecated n_iter, imports
# ---------------------------------------------------------------------------

def test_n_iter_is_a_deprecated_alias_of_max_iter(prototype, xor_data):
    X, y, K, _ = prototype
    with pytest.warns(FutureWarning, match="'n_iter' parameter of lmkl_solve is deprecated.*"
                                           "'max_iter'"):
        old = lmkl_solve(K, y, X, C=50.0, n_iter=3, random_state=0)
    new = lmkl_solve(K, y, X, C=50.0, max_iter=3, random_state=0)
    np.testing.assert_array_equal(old.gating_coef, new.gating_coef)
    assert old.n_iter == new.n_iter
    Xf, yf = xor_data
    clf = LMKLClassifier(C=50.0, n_iter=2, random_state=0)
    assert clf.get_params()["n_iter"] == 2 and clf.get_params()["max_iter"] == 100
    assert LMKLClassifier().get_params()["n_iter"] is None
    with pytest.warns(FutureWarning, match="'n_iter' parameter of LMKLClassifier is deprecated"):
        clf.fit(Xf, yf)
    ref = LMKLClassifier(C=50.0, max_iter=2, random_state=0).fit(Xf, yf)
    assert clf.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(clf.decision_function(Xf), ref.decision_function(Xf))


def test_importing_fits_no_svm():
    """Importing mklcore.svm or mklcore.localized loads no SVM library and compiles nothing."""
    code = ("import sys, mklcore.svm, mklcore.localized\n"
            "assert 'smo' in mklcore.svm.available_backends()\n"
            "print(sorted(m for m in ('numba', 'sklearn.svm') if m in sys.modules))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=root, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


# ---------------------------------------------------------------------------
# kernel scale, float32, BLAS independence (issue 16, items 1, 7 and 12)
# ---------------------------------------------------------------------------

def test_large_kernel_scale_gives_a_model_not_an_empty_one():
    """Kernels on a large scale are the problem with a large C: every alpha is far below C,
    and a clean-up threshold relative to C alone zeroed them all (an empty model, a constant
    decision). The threshold is relative to min(C, max alpha)."""
    rng = np.random.default_rng(0)
    X = 100.0 * rng.normal(size=(80, 2))  # linear kernel ~1e4, polynomial ~1e8
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    clf = LMKLClassifier(kernels=[linear(), polynomial(2, coef0=1.0)], normalize=None, C=1.0,
                         max_iter=10, random_state=0)
    clf.fit(X, y)
    assert clf.result_.status != 2 and np.any(clf.dual_coef_)
    assert clf.score(X, y) >= 0.9
    assert np.ptp(clf.decision_function(X)) > 0
    # the solver function: the scaled stack is the unscaled one with C * s (alpha / s)
    rng = np.random.default_rng(0)
    Xs = rng.normal(size=(40, 2))
    ys = np.sign(Xs[:, 0] * Xs[:, 1] + 0.3 * rng.normal(size=40))
    K = _trace_normalise(np.stack([Xs @ Xs.T, (Xs @ Xs.T + 1) ** 2]))
    # (at s = 1e6, i.e. C = 1e7 on these separable points, the gating path of the default
    # line search meets an SVM that reaches the engine's iteration cap: status 2, a reported
    # numerical failure)
    for scale in (1.0, 1e4, 1e5):
        res = lmkl_solve(scale * K, ys, Xs, C=10.0, max_iter=5, random_state=0)
        assert res.status in (0, 1) and res.support.size > 0
        f = lmkl_decision(res, scale * K, Xs)
        assert np.mean(np.sign(f) == ys) >= 0.75
    # with some alpha at the bound the threshold is sv_tol * C, Gönen's clean-up
    res = lmkl_solve(K, ys, Xs, C=1.0, max_iter=3, random_state=0, sv_tol=1e-3)
    assert res.alpha.max() == 1.0 and np.all((res.alpha == 0) | (res.alpha >= 1e-3))


def test_float32_stack_is_solved_in_float64(prototype):
    """A float32 stack gives exactly the result of the float64 stack with the same (rounded)
    values; for a fixed gating J moves by the rounding of the kernels only."""
    X, y, K, V = prototype
    K32 = K.astype(np.float32)
    a = lmkl_solve(K32, y, X, C=10.0, max_iter=5, random_state=0)
    b = lmkl_solve(K32.astype(np.float64), y, X, C=10.0, max_iter=5, random_state=0)
    for key in ("dual_coef", "gating_coef", "intercept", "objective", "eta_train"):
        np.testing.assert_array_equal(a[key], b[key])
    assert a.dual_coef.dtype == np.float64
    J32 = lmkl_objective(K32, y, X, V, C=10.0, svm_tol=TIGHT_SVM).objective
    J64 = lmkl_objective(K, y, X, V, C=10.0, svm_tol=TIGHT_SVM).objective
    assert abs(J32 - J64) <= 1e-6 * abs(J64)


def _blas_case():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] * X[:, 1] - 0.5 * X[:, 2] + 0.3 * rng.normal(size=150) > 0, 1.0, -1.0)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = _trace_normalise(np.stack([np.einsum("id,jd->ij", X, X), np.exp(-D / 2.0),
                                   np.exp(-D / 8.0)]))
    return K, y, X


def _fingerprint(res):
    return [res.dual_coef.tobytes(), res.gating_coef.tobytes(), float(res.intercept),
            float(res.objective), res.n_iter, res.n_svm_calls, res.history["objective"].tobytes()]


def test_result_does_not_depend_on_blas_threads():
    """The reductions that feed the line search and the thresholds are summed without BLAS:
    one and two BLAS threads give the same bits."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    K, y, X = _blas_case()
    runs = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(threads):
            runs.append(_fingerprint(lmkl_solve(K, y, X, C=10.0, max_iter=8, random_state=1)))
    assert runs[0] == runs[1]


def test_result_does_not_depend_on_the_blas_kernels(under_two_blas_kernels):
    """OpenBLAS picks its kernels by CPU (their sums differ in the last bits, and LMKL's
    non-convex trajectory can amplify that into different SV counts): with the kernels of
    another CPU type the solver gives the same bits."""
    code = (
        "import hashlib, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_localized import _blas_case, _fingerprint\n"
        "from mklcore.localized import lmkl_solve\n"
        "K, y, X = _blas_case()\n"
        "res = lmkl_solve(K, y, X, C=10.0, max_iter=8, random_state=1)\n"
        "print(hashlib.sha256(repr(_fingerprint(res)).encode()).hexdigest())\n"
        "from test_localized import _bank_case\n"  # a bank: terms of negligible gates skipped
        "K, y, X = _bank_case()\n"
        "res = lmkl_solve(K, y, X, C=1.0, max_iter=8, random_state=1, line_search='armijo')\n"
        "print(hashlib.sha256(repr(_fingerprint(res)).encode()).hexdigest())\n")
    native, other = under_two_blas_kernels(code)
    assert native == other
