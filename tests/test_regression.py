"""Epsilon-SVR MKL: every solver against the cvxpy primal, single kernel = SVR, estimators."""
import warnings

import numpy as np
import pytest
from sklearn.svm import SVR

import mklcore
from mklcore.kernels import gaussian, kernel_stack, linear
from mklcore.lpnorm import lpmkl_svr_solve, sum_kernel_svr_solve
from mklcore.reference import solve_svr_primal_cvx
from mklcore.silp import silp_svr_solve
from mklcore.simplemkl import simplemkl_svr_solve
from mklcore.tasks import OneVsRestTask, RegressionTask
from mklcore.wrapper import FixedWeights, run_wrapper

C, EPS = 2.0, 0.1


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(70, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=70)
    bank = [linear(), gaussian(sigma=0.5), gaussian(sigma=2.0), gaussian(sigma=8.0)]
    K = kernel_stack(bank, X[:50])
    K /= np.trace(K, axis1=1, axis2=2)[:, None, None] / 50
    return {"X": X, "y": y, "K": K, "bank": bank}


@pytest.fixture(scope="module")
def cvx(data):
    return {p: solve_svr_primal_cvx(data["K"], data["y"][:50], C, EPS, p)
            for p in (1.0, 1.5, 2.0, np.inf)}


SOLVERS = [
    ("lpmkl newton p=2", 2.0, lambda K, y: lpmkl_svr_solve(K, y, p=2.0, C=C, epsilon=EPS)),
    ("lpmkl newton p=1.5", 1.5, lambda K, y: lpmkl_svr_solve(K, y, p=1.5, C=C, epsilon=EPS)),
    ("lpmkl analytic p=2", 2.0,
     lambda K, y: lpmkl_svr_solve(K, y, p=2.0, C=C, epsilon=EPS, solver="analytic")),
    ("lpmkl cutting plane p=1.5", 1.5,
     lambda K, y: lpmkl_svr_solve(K, y, p=1.5, C=C, epsilon=EPS, solver="cutting_plane")),
    ("lpmkl cutting plane p=1", 1.0, lambda K, y: lpmkl_svr_solve(K, y, p=1.0, C=C, epsilon=EPS)),
    ("simplemkl", 1.0, lambda K, y: simplemkl_svr_solve(K, y, C=C, epsilon=EPS, tol=1e-4)),
    ("silp", 1.0, lambda K, y: silp_svr_solve(K, y, C=C, epsilon=EPS)),
    ("sum kernel", np.inf, lambda K, y: sum_kernel_svr_solve(K, y, C=C, epsilon=EPS)),
]


@pytest.mark.parametrize("name,p,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_svr_mkl_matches_the_cvxpy_primal_and_is_certified(name, p, solve, data, cvx):
    K, y = data["K"], data["y"][:50]
    res = solve(K, y)
    ref = cvx[p]["objective"]
    assert res.success, res.message
    assert res.task == "regression" and res.epsilon == EPS
    # the returned SVR's primal and the dual value bracket the optimum
    assert res.dual_objective <= ref * (1 + 1e-6) + 1e-8
    assert res.primal_objective >= ref * (1 - 1e-6) - 1e-8
    assert 0 <= res.rigorous_gap <= 1e-2 * ref
    # the MKL objective J(theta) is the optimum to the solver's certified gap
    np.testing.assert_allclose(res.objective, ref, rtol=2e-3 if p == 1.0 else 1e-3)
    # the fitted function: f = sum_m theta_m K_m c + b and c = alpha - alpha*
    n = y.size
    np.testing.assert_allclose(res.dual_coef, res.alpha[:n] - res.alpha[n:])
    assert abs(res.dual_coef.sum()) < 1e-8 and np.all(np.abs(res.dual_coef) <= C + 1e-12)


@pytest.mark.parametrize("m", [0, 2])
def test_one_kernel_is_the_svr(m, data):
    K, y = data["K"][m:m + 1], data["y"][:50]
    svr = SVR(kernel="precomputed", C=C, epsilon=EPS, tol=1e-10).fit(K[0], y)
    for solve in (lpmkl_svr_solve, simplemkl_svr_solve, silp_svr_solve, sum_kernel_svr_solve):
        res = solve(K, y, C=C, epsilon=EPS, svm_tol=1e-10)
        np.testing.assert_allclose(res.weights, [1.0])
        np.testing.assert_allclose(K[0] @ res.dual_coef + res.intercept, svr.predict(K[0]),
                                   atol=1e-6)


def test_estimators_with_one_kernel_are_the_svr(data):
    X, y = data["X"], data["y"]
    bank = [gaussian(sigma=2.0)]
    K = kernel_stack(bank, X[:50])[0]
    K_test = kernel_stack(bank, X[50:], X[:50])[0]
    svr = SVR(kernel="precomputed", C=C, epsilon=EPS, tol=1e-10).fit(K, y[:50])
    for cls in (mklcore.LpMKLRegressor, mklcore.SimpleMKLRegressor, mklcore.SILPMKLRegressor,
                mklcore.SumKernelSVR):
        reg = cls(kernels=bank, C=C, epsilon=EPS, svm_tol=1e-10).fit(X[:50], y[:50])
        np.testing.assert_allclose(reg.predict(X[50:]), svr.predict(K_test), atol=1e-6)
        assert reg.converged_


def test_regressors_learn_and_score_r2(data):
    X, y = data["X"], data["y"]
    for cls in (mklcore.LpMKLRegressor, mklcore.SimpleMKLRegressor, mklcore.SILPMKLRegressor,
                mklcore.SumKernelSVR):
        reg = cls(kernels=data["bank"], C=10.0, normalize="trace").fit(X[:50], y[:50])
        assert reg.converged_ and reg.score(X[50:], y[50:]) > 0.8, cls.__name__
        assert reg.weights_.shape == (4,) and reg.dual_coef_.shape == (50,)


def test_constant_targets_give_a_constant_model(data):
    """Every target within the tube of a constant: alpha = 0 is optimal, not a failure."""
    res = lpmkl_svr_solve(data["K"], np.full(50, 3.0), C=C, epsilon=EPS)
    assert res.success and not np.any(res.dual_coef)
    np.testing.assert_allclose(res.intercept, 3.0, atol=EPS)


def test_binary_task_is_the_c_svm_to_the_bit(data):
    """The task path (mklcore.tasks) and the C-SVM path of the oracle: the same operations."""
    from mklcore.lpnorm import lpmkl_solve

    K, y = data["K"], np.where(data["y"][:50] > 0, 1.0, -1.0)
    ref = lpmkl_solve(K, y, p=2.0, C=C, mode="wrapper")
    fixed = run_wrapper(K, None, FixedWeights(ref.weights, p=2.0), C=C, tol=None, max_iter=1,
                        svm_tol=1e-3, task=OneVsRestTask(y))
    legacy = run_wrapper(K, y, FixedWeights(ref.weights, p=2.0), C=C, tol=None, max_iter=1,
                         svm_tol=1e-3)
    for key in ("objective", "dual_objective", "primal_objective", "intercept"):
        np.testing.assert_allclose(fixed[key], legacy[key], rtol=1e-12, err_msg=key)
    np.testing.assert_allclose(fixed.dual_coef, legacy.dual_coef, atol=1e-12)


def test_regression_task_needs_the_engine(data):
    with pytest.raises(ValueError, match="svm_backend='smo'"):
        run_wrapper(data["K"], None, FixedWeights(np.ones(4)), C=C, tol=None, max_iter=1,
                    svm_tol=1e-3, svm_backend="libsvm",
                    task=RegressionTask(data["y"][:50], EPS))
    with pytest.raises(ValueError, match="'epsilon'"):
        lpmkl_svr_solve(data["K"], data["y"][:50], epsilon=-1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="'epsilon' parameter of LpMKLRegressor"):
            mklcore.LpMKLRegressor(epsilon=-0.1).fit(data["X"], data["y"])
