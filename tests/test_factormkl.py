"""lp-norm MKL on low-rank factors in the primal (mklcore.factormkl)."""

import numpy as np
import pytest

from mklcore.factormkl import factor_lpmkl_solve, hinge_bias
from mklcore.kernels import KernelBank, kernel_bank
from mklcore.lowrank import LowRankStack
from mklcore.lpnorm import lpmkl_solve
from mklcore.rowsource import LazyStack


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _bank(X):
    kernels = kernel_bank("rbf", gamma=[0.1, 0.3, 1.0]) + kernel_bank("poly", degree=[2])
    return KernelBank(kernels=kernels, normalize="trace").fit(X)


@pytest.mark.parametrize("p", [2.0, 1.5, np.inf])
def test_full_rank_factors_solve_the_kernel_problem(p):
    X, y = _data(70, 3, seed=1)
    bank = _bank(X)
    low = LowRankStack(bank, 70)
    ref = lpmkl_solve(LazyStack(bank), y, p=p, tol=1e-8, svm_tol=1e-8)
    res = factor_lpmkl_solve(low, y, p=p, tol=1e-6, max_iter=20000)
    assert ref.success and res.success and res.solver == "factors"
    assert 0 <= res.gap <= 1e-6
    optimum = ref.dual_objective
    assert res.dual_objective <= optimum + 1e-6 * abs(optimum)  # a lower bound
    assert res.objective >= optimum - 1e-6 * abs(optimum)  # an upper bound
    assert abs(res.objective - optimum) <= 2e-6 * abs(optimum)
    assert np.allclose(res.weights, ref.weights, atol=2e-3)
    assert abs(res.dual_coef @ np.ones(70)) < 1e-10  # y'alpha = 0
    Xt = _data(30, 3, seed=2)[0]
    f_ref = LazyStack(bank).decision(Xt, ref.weights, ref.dual_coef, ref.intercept)
    f_low = low.decision(Xt, res.weights, res.dual_coef, res.intercept)
    assert np.allclose(f_ref, f_low, atol=5e-3 * np.abs(f_ref).max())


def test_float32_factors_and_a_list_of_factors():
    X, y = _data(300, 3, seed=3)
    bank = _bank(X)
    a = factor_lpmkl_solve(LowRankStack(bank, 40), y, tol=1e-4)
    low32 = LowRankStack(bank, 40, dtype=np.float32)
    assert low32.features.dtype == np.float32 and low32.features.shape[0] == 300
    b = factor_lpmkl_solve(low32, y, tol=1e-4)
    c = factor_lpmkl_solve([F.astype(np.float64) for F in low32.factors], y, tol=1e-4)
    assert a.success and b.success and c.success and b.rank == 40
    assert np.allclose(a.weights, b.weights, atol=1e-2)
    assert np.allclose(b.weights, c.weights, atol=1e-2)
    assert abs(a.objective - b.objective) <= 1e-3 * a.objective
    assert b.kernel_error.shape == (4,)


def test_hinge_bias_is_the_minimiser():
    rng = np.random.default_rng(0)
    f, y = rng.normal(size=101), np.where(rng.random(101) > 0.4, 1.0, -1.0)
    b = hinge_bias(f, y)
    loss = lambda c: np.maximum(0.0, 1.0 - y * (f + c)).sum()
    grid = np.linspace(-4, 4, 4001)
    assert loss(b) <= min(loss(c) for c in grid) + 1e-12


def test_inputs_are_checked():
    X, y = _data(40, 3, seed=4)
    low = LowRankStack(_bank(X), 10)
    with pytest.raises(ValueError, match="two classes"):
        factor_lpmkl_solve(low, np.ones(40))
    with pytest.raises(ValueError, match="p >= 1"):
        factor_lpmkl_solve(low, y, p=0.5)
    with pytest.raises(ValueError, match="LowRankStack or a non-empty list"):
        factor_lpmkl_solve([], y)


def test_random_fourier_features():
    from mklcore.lowrank import FourierStack, approx_stack
    from mklcore.lpnorm import LpMKLClassifier

    X, y = _data(200, 3, seed=5)
    bank = KernelBank(kernels=kernel_bank("rbf", gamma=[0.2, 1.0])).fit(X)
    errors = [approx_stack(bank, "rff", r, random_state=0).kernel_error() for r in (8, 64, 512)]
    assert np.all(errors[0] > errors[1]) and np.all(errors[1] > errors[2])
    assert np.all(errors[2] < 0.25)
    a = FourierStack(bank, 64, random_state=3)
    b = FourierStack(bank, 64, random_state=3)
    assert np.array_equal(a.features, b.features) and a.features.shape == (200, 128)
    res = factor_lpmkl_solve(a, y, tol=1e-4)
    assert res.success and res.approx == "rff" and res.rank == 64
    # the decision on the training points is the factors' own
    f = a.decision(X, res.weights, res.dual_coef, res.intercept)
    Zw = sum(res.weights[m] * a.factors[m] @ (a.factors[m].T @ res.dual_coef) for m in range(2))
    assert np.allclose(f, Zw + res.intercept, atol=1e-8)
    kernels = kernel_bank("rbf", gamma=[0.2, 1.0], approx="rff", rank=64, random_state=3)
    clf = LpMKLClassifier(kernels=kernels).fit(X[:150], y[:150])
    assert clf.memory_path_ == "lowrank" and clf.result_.approx == "rff"
    assert clf.score(X[150:], y[150:]) > 0.6
    with pytest.raises(ValueError, match="Gaussian kernels only"):
        FourierStack(_bank(X), 10)


def test_estimators_solve_low_rank_banks_on_the_factors():
    from mklcore.lpnorm import LpMKLClassifier, SumKernelSVC

    X, y = _data(200, 3, seed=6)
    kernels = kernel_bank("rbf", gamma=[0.2, 1.0], approx="nystroem", rank=30, random_state=2)
    clf = LpMKLClassifier(kernels=kernels, tol=1e-4).fit(X[:150], y[:150])
    assert clf.result_.solver == "factors" and clf.converged_ and clf.gap_ <= 1e-4
    direct = factor_lpmkl_solve(clf.lazy_stack_, np.where(y[:150] > 0, 1.0, -1.0), tol=1e-4)
    assert np.allclose(clf.weights_, direct.weights)
    assert clf.score(X[150:], y[150:]) > 0.6
    svc = SumKernelSVC(kernels=kernels).fit(X[:150], y[:150])
    assert svc.result_.solver == "factors" and np.all(svc.weights_ == 1.0)
