"""Tests of SimpleMKL (Rakotomamonjy et al. 2008) as the l1 baseline of Kloft et al. (2009)."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mklcore.reference import TOY_OPTIMA, ReferenceSolverError, solve_primal_cvx, toy_problem
from mklcore.simplemkl import (LineOracle, SimpleMKLClassifier, StackLine, simplemkl_duality_gap,
                               simplemkl_solve)
from mklcore.svm import combine_kernels
from mklcore.wrapper import SVMOracle

L1_RTOL = 1e-4   # l1 solvers agree within 1e-4 relative (Kloft et al. 2009, Sec. 3.1)


@pytest.fixture(scope="module")
def toy():
    return toy_problem()


@pytest.fixture(scope="module")
def toy_run(toy):
    K, y, C = toy
    return simplemkl_solve(K, y, C=C, tol=1e-3, svm_tol=1e-7)


def test_reaches_l1_optimum(toy, toy_run):
    """Objective within 1e-4 of the l1 optimum of (6) (TOY_OPTIMA and cvxpy)."""
    K, y, C = toy
    res = toy_run
    assert res.success and res.method == "simplemkl"
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[1.0][0], rtol=L1_RTOL)
    try:
        ref = solve_primal_cvx(K, y, C, 1.0)
    except ReferenceSolverError:  # pragma: no cover
        pytest.skip("cvxpy oracle not optimal")
    np.testing.assert_allclose(res.objective, ref["objective"], rtol=L1_RTOL)
    assert res.rigorous_gap >= -1e-8
    assert res.n_svm_calls > res.n_iter  # the line search solves SVMs at trial weights


def test_weights_on_simplex_every_iteration(toy_run):
    W = toy_run.history["weights"]
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(toy_run.history["gap"] >= -1e-10)


def test_objective_decreases(toy_run):
    """Reduced-gradient descent only accepts points that lower J(d) (mklsvmupdate.m)."""
    J = toy_run.history["objective"]
    assert np.all(np.diff(J) <= 1e-9 * J[:-1])


def test_duality_gap_formula_equals_relative_gap(toy, toy_run):
    """SimpleMKL's (J + max S - 1'alpha) / J equals Delta_rel at p = 1."""
    h = toy_run.history
    np.testing.assert_allclose(h["criterion"], h["gap"], rtol=1e-10, atol=1e-14)
    K, y, C = toy
    oracle = SVMOracle(K, y, C=C, svm_tol=1e-7, p=1.0)
    state = oracle(np.array([0.4, 0.3, 0.2, 0.1]))
    expected = (state.J + state.S.max() - state.alpha.sum()) / state.J
    assert simplemkl_duality_gap(state) == pytest.approx(expected, rel=1e-12)
    assert state.rel_gap == pytest.approx(expected, rel=1e-10)


def test_warm_started_smo_backend(toy, toy_run):
    """Same iterates with the warm-started SMO backend (the line search re-uses alphas)."""
    K, y, C = toy
    res = simplemkl_solve(K, y, C=C, tol=1e-3, svm_tol=1e-7, svm_backend="smo")
    np.testing.assert_allclose(res.objective, toy_run.objective, rtol=1e-5)


@pytest.mark.parametrize("backend", ["libsvm", "smo"])
def test_golden_line_search_agrees(toy, toy_run, backend):
    """The reference code's golden section and the derivative line search (default) reach
    the same optimum; the derivative search needs no more SVM calls."""
    K, y, C = toy
    res = simplemkl_solve(K, y, C=C, tol=1e-3, svm_tol=1e-7, line_search="golden",
                          svm_backend=backend)
    assert res.success
    np.testing.assert_allclose(res.objective, TOY_OPTIMA[1.0][0], rtol=L1_RTOL)
    np.testing.assert_allclose(res.objective, toy_run.objective, rtol=1e-5)
    assert toy_run.n_svm_calls <= res.n_svm_calls


@pytest.mark.parametrize("backend", ["libsvm", "smo"])
def test_line_oracle_slope_and_carried_kernel(toy, backend):
    """J'(t) = -c'K_D c / 2 equals -S.D at the anchor; a point's slope matches a finite
    difference of J; the carried kernel equals the combined kernel after a clean-up."""
    K, y, C = toy
    oracle = SVMOracle(K, y, C=C, svm_tol=1e-9, p=1.0, backend=backend)
    d = np.array([0.4, 0.3, 0.2, 0.1])
    state = oracle(d)
    D = np.array([-0.2, 0.1, 0.2, -0.1])
    line = LineOracle(oracle, d, D)
    assert line.slope(state) == pytest.approx(-state.S @ D, rel=1e-10)
    t, h = 0.5, 1e-4
    pt = line(t)
    fd = (line(t + h, start=pt).J - line(t - h, start=pt).J) / (2 * h)
    assert pt.slope == pytest.approx(fd, rel=1e-3)
    theta = line.weights(t)
    theta[3] = 0.0  # a clean-up zeroes a weight and renormalises
    theta /= theta.sum()
    np.testing.assert_allclose(line.kernel(t, theta), combine_kernels(K, theta),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs,match", [
    ({"gs_tol": 2.0}, r"'gs_tol' parameter"),
    ({"line_search": "armijo"}, r"'line_search' parameter"),
])
def test_bad_parameters(toy, kwargs, match):
    K, y, _ = toy
    with pytest.raises(ValueError, match=match):
        simplemkl_solve(K, y, **kwargs)


def test_bad_inputs(toy):
    K, y, _ = toy
    with pytest.raises(ValueError, match="K and y do not match"):
        simplemkl_solve(K, y[:10])
    bad = K.copy()
    bad[0, 0, 1] += 1.0
    with pytest.raises(ValueError, match="not symmetric"):
        simplemkl_solve(bad, y)


def test_max_iter_and_callback(toy):
    K, y, _ = toy
    with pytest.warns(ConvergenceWarning, match=r"SimpleMKL did not converge in 1 iterations: "
                                                r"duality gap .* > tol 1.0e-02"):
        res = simplemkl_solve(K, y, max_iter=1)
    assert not res.success and res.status == 1

    def stop(intermediate):
        raise StopIteration

    res = simplemkl_solve(K, y, callback=stop)
    assert res.status == 3 and res.n_iter == 1


def test_estimator():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)

    def lin(A, B):
        return A[:, :1] @ B[:, :1].T

    def noise(A, B):
        return A[:, 2:] @ B[:, 2:].T

    clf = SimpleMKLClassifier(kernels=[lin, noise], C=1.0).fit(X, y)
    assert clf.weights_.shape == (2,) and np.isclose(clf.weights_.sum(), 1.0)
    assert clf.weights_[0] > clf.weights_[1]
    assert clf.score(X, y) > 0.9


@pytest.mark.parametrize("max_iter,status", [(2, 1), (1000, 0)])
def test_history_has_n_iter_rows(toy, max_iter, status):
    K, y, C = toy
    if status == 1:
        with pytest.warns(ConvergenceWarning, match="SimpleMKL did not converge"):
            res = simplemkl_solve(K, y, C=C, tol=1e-8, max_iter=max_iter)
    else:
        res = simplemkl_solve(K, y, C=C, tol=1e-3, max_iter=max_iter)
    assert res.status == status
    assert all(len(v) == res.n_iter for v in res.history.values())


def test_huge_c_run_is_bounded_and_flagged():
    """Unscaled features and C = 1e8: the SVM cap ends the run at once (status 2, warning)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:150], y[:150]
    K = np.stack([X[:, :10] @ X[:, :10].T, X @ X.T])
    with pytest.warns(ConvergenceWarning, match=r"svm_max_iter=2000 .*huge C\?"):
        res = simplemkl_solve(K, y, C=1e8, max_iter=3, svm_max_iter=2000)
    assert res.status == 2 and not res.success and res.n_svm_calls == 1
    assert np.all(np.isfinite(res.weights)) and res.n_smo_iter == 2000


@pytest.mark.parametrize("C", [1.0, 10.0, 100.0])
def test_never_returns_unoptimised_start(C):
    """At tol=1e-2 the gap at the uniform start is already below tol on Gauss4 (linear vs
    quadratic kernel), yet the optimum is not uniform: at least one weight step is taken."""
    from mklcore.datasets import make_gauss4

    X, y = make_gauss4(n_samples=200, random_state=0)
    K = np.stack([X @ X.T, (X @ X.T + 1.0) ** 2])
    res = simplemkl_solve(K, y, C=C, tol=1e-2)
    assert res.history["criterion"][0] <= 1e-2  # the start already passes the gap test
    assert res.success and res.n_iter >= 2
    assert not np.allclose(res.weights, 0.5)
    np.testing.assert_allclose(res.weights, [0.0, 1.0], atol=1e-6)


@pytest.fixture(scope="module")
def heart_vertex():
    """The training part of split 0 of the benchmark notebook on heart, 10% label noise,
    standardised, with its 14-kernel bank (trace-normalised): at C = 0.1 the l1-MKL optimum
    is the vertex d = e_14, where the SVM's dual solution is not unique."""
    from sklearn.preprocessing import StandardScaler

    from mklcore.datasets import add_label_noise
    from mklcore.kernels import kernel_stack, normalize_trace
    from mklcore.repro import mkl_benchmark as mb
    from mklcore.repro.experiments import repeated_splits

    noise, master_seed = 0.1, 0
    X, y = mb.load_set("heart", 150, master_seed)
    split = repeated_splits(y, n_repeats=3, test_size=0.3, seed=master_seed)[0]
    X_tr, y_tr = X[split["train"]], y[split["train"]]
    y_tr = add_label_noise(y_tr, noise, random_state=(split["seed"] + round(1000 * noise)) % 2**32)
    X_tr = StandardScaler().fit_transform(X_tr)
    K = normalize_trace(kernel_stack(mb.benchmark_bank(X.shape[1]), X_tr))[0]
    return K, y_tr


@pytest.mark.parametrize("backend", ["smo", "libsvm"])
@pytest.mark.parametrize("line_search", ["derivative", "golden"])
def test_certifies_optimal_vertex_with_non_unique_svm_solution(heart_vertex, line_search,
                                                               backend):
    """Regression: SimpleMKL stalled at d = e_14 until max_iter (gap 0.015 > tol at every
    iteration; SILP certifies in 9 iterations). The alpha LIBSVM returns at the vertex gives
    S_1 > S_14, a reduced gradient along which J increases: no trial point was accepted and
    the same alpha came back. Re-solving the SVM at d from the nearest trial point's alpha
    gives another optimal alpha, which certifies the vertex. Whether the first alpha certifies
    depends on which optimal alpha the SVM returns (the warm-started engine's does; LIBSVM's
    did, before the combined kernel's last bits changed), so only the outcome is asserted."""
    from mklcore.silp import silp_solve

    K, y = heart_vertex
    res = simplemkl_solve(K, y, C=0.1, max_iter=50, line_search=line_search,
                          svm_backend=backend)
    assert res.success and res.status == 0 and res.n_iter <= 10
    assert res.criterion <= 1e-2
    expected = np.zeros(K.shape[0])
    expected[-1] = 1.0
    np.testing.assert_allclose(res.weights, expected, atol=1e-8)
    silp = silp_solve(K, y, C=0.1)
    assert silp.success
    np.testing.assert_allclose(res.objective, silp.objective, rtol=1e-4)
    # the vertex is optimal: the certified gap bounds J(d) - J*
    assert res.objective - res.dual_objective <= 1e-2 * res.objective


@pytest.mark.parametrize("line_search", ["derivative", "golden"])
def test_stack_line_and_dense_line_reach_the_same_certified_optimum(line_search):
    """The engine's line (points solved on the stack, caches H) and the dense two-kernel line
    (LIBSVM on K_d + t K_D) certify the same l1 optimum; every StackLine point carries all its
    per-kernel terms S_m = c'K_m c / 2."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(70, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=70) > 0, 1.0, -1.0)
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = np.stack([X @ X.T / 4, np.exp(-D2 / 2), np.exp(-D2 / 8), np.exp(-D2 / 32)])
    fast = simplemkl_solve(K, y, line_search=line_search, tol=1e-4, svm_tol=1e-8)
    ref = simplemkl_solve(K, y, line_search=line_search, tol=1e-4, svm_tol=1e-8,
                          svm_backend="libsvm")
    assert fast.success and ref.success
    np.testing.assert_allclose(fast.objective, ref.objective, rtol=1e-4)
    oracle = SVMOracle(K, y, C=1.0, svm_tol=1e-8, p=1.0)
    line = StackLine(oracle, np.full(4, 0.25), np.array([0.3, -0.1, -0.1, -0.1]))
    point = line(0.5)
    coef = point.alpha * y
    np.testing.assert_allclose(point.S, 0.5 * np.einsum("i,mij,j->m", coef, K, coef),
                               rtol=1e-10)
    np.testing.assert_allclose(line.slope(point), -line.direction @ point.S)
