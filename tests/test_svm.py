"""Tests of the inner SVM, the result type and the input validation."""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.svm import SVC

from mklcore._result import History, MKLResult, decision
from mklcore._validation import (Interval, Options, check_binary_labels, check_kernel_stack,
                                 check_psd, smallest_eigenvalue, validate_params)
from mklcore.svm import (BUILTIN_BACKENDS, available_backends, combine_kernels,
                         kernel_quadratic_terms, libsvm_intercept, register_backend, svm_solve)

# LIBSVM stops at a KKT violation of `tol`; decision values then agree to about tol/10
DECISION_ATOL = 1e-6


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=50) > 0, 1.0, -1.0)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([np.exp(-D / 2.0), np.exp(-D / 8.0), X @ X.T])
    return K, y


def test_svm_matches_sklearn_svc(toy):
    K, y = toy
    weights = np.array([0.5, 0.2, 0.3])
    res = svm_solve(K, y, weights=weights, C=2.0, tol=1e-8)
    K_theta = np.tensordot(weights, K, axes=1)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-8).fit(K_theta, y)
    f = K_theta @ res.dual_coef + res.intercept
    np.testing.assert_allclose(f, svc.decision_function(K_theta), atol=DECISION_ATOL)
    # box and equality constraints of the dual
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= 2.0)
    assert abs(res.alpha @ y) < 1e-8
    np.testing.assert_allclose(res.decision_train, f)


def test_per_kernel_terms_and_certificate(toy):
    K, y = toy
    weights = np.array([1.0, 0.0, 0.5])
    res = svm_solve(K, y, weights=weights, C=1.0, tol=1e-8)
    c = res.alpha * y
    expected = np.array([c @ K[m] @ c for m in range(3)])
    np.testing.assert_allclose(res.q, expected, rtol=1e-10)
    # dual value = 1'alpha - 1/2 sum_m theta_m q_m; the SVM gap closes at tol 1e-8
    np.testing.assert_allclose(res.dual_objective, res.alpha.sum() - 0.5 * weights @ expected)
    assert res.primal_objective >= res.dual_objective - 1e-9
    assert 0 <= res.gap < 1e-5


def test_quadratic_terms_sparse_and_dense_paths_agree(toy):
    K, _ = toy
    rng = np.random.default_rng(1)
    dense = rng.normal(size=K.shape[1])
    sparse = dense * (rng.random(K.shape[1]) < 0.2)
    for coef in (dense, sparse):
        expected = np.maximum([coef @ K[m] @ coef for m in range(K.shape[0])], 0)
        np.testing.assert_allclose(kernel_quadratic_terms(K, coef), expected, rtol=1e-10)
    assert np.all(kernel_quadratic_terms(K, np.zeros(K.shape[1])) == 0)


def test_combine_kernels_skips_zero_weights(toy):
    K, _ = toy
    K_bad = K.copy()
    K_bad[1] = np.nan  # a zero weight must not touch this kernel
    out = combine_kernels(K_bad, [1.0, 0.0, 2.0])
    np.testing.assert_allclose(out, K[0] + 2 * K[2])


@pytest.mark.parametrize("blas_threads", [1, 2])
def test_combine_kernels_is_bit_identical_to_the_ordered_sum(blas_threads):
    """The weighted sum gives the bits of 0 + w_1 K_1 + w_2 K_2 + ... on whole matrices
    (correctly rounded operations), whatever the BLAS thread count, for sparse and dense
    weights, float32 stacks (upcast exactly), strided inputs and outputs."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(4)
    n = 401
    A = rng.standard_normal((5, n, n))
    K = np.einsum("kij,klj->kil", A, A) / n

    def reference(w, K=K):
        out = np.zeros(K.shape[1:])
        for m in np.flatnonzero(w):
            out = out + w[m] * K[m].astype(np.float64)
        return out

    sparse = np.array([0.2, 0.0, 0.5, 0.1, 0.2])
    dense = rng.uniform(0.5, 2.0, 5)
    with threadpool_limits(blas_threads):
        for w in (sparse, dense):
            got = combine_kernels(K, w, out=np.empty((n, n)))
            assert np.array_equal(got.view(np.int64), reference(w).view(np.int64))
    K32 = K.astype(np.float32)
    assert np.array_equal(combine_kernels(K32, sparse), reference(sparse, K32))
    out_f = np.empty((n, n), order="F")
    combine_kernels(np.asfortranarray(K), dense, out=out_f)
    assert np.array_equal(out_f, reference(dense))


def test_backend_registry(toy):
    K, y = toy
    calls = []

    def fake(Kc, yy, C, tol, alpha0, max_iter):
        calls.append(alpha0)
        svc = SVC(kernel="precomputed", C=C, tol=tol).fit(Kc, yy)
        alpha = np.zeros(len(yy))
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        return alpha, float(svc.intercept_[0]), 0

    register_backend("fake-warm", fake)
    assert "fake-warm" in available_backends()
    start = np.full(len(y), 0.1)
    res = svm_solve(K, y, backend="fake-warm", alpha0=start)
    assert calls and calls[0] is start and res.backend == "fake-warm"
    with pytest.raises(ValueError, match="Unknown SVM backend 'nope'"):
        svm_solve(K, y, backend="nope")
    with pytest.raises(TypeError, match="callable"):
        register_backend("x", 3)


@pytest.mark.parametrize("C", [0, -1.0])
def test_svm_rejects_bad_C(toy, C):
    K, y = toy
    with pytest.raises(ValueError, match=r"The 'C' parameter of svm_solve must be a float in the range \(0, inf\)"):
        svm_solve(K, y, C=C)


def test_svm_maps_other_binary_labels(toy):
    K, y = toy
    labels = np.where(y > 0, "yes", "no")
    res = svm_solve(K, labels, C=1.0)
    ref = svm_solve(K, y, C=1.0)
    np.testing.assert_allclose(res.dual_coef, ref.dual_coef)


# --- MKLResult -------------------------------------------------------------------------


def test_result_attribute_access_and_repr():
    r = MKLResult(weights=np.ones(3), dual_coef=np.zeros(20), intercept=0.5, method="x",
                  history={"objective": np.zeros(2)})
    assert r.intercept == 0.5 and r["method"] == "x"
    r.extra = 3
    assert r["extra"] == 3
    text = repr(r)
    assert "weights" in text and "array(shape=(20,)" in text and "objective: (2,)" in text
    with pytest.raises(AttributeError):
        r.missing  # noqa: B018


def test_decision_checks_shapes_and_skips_zero_weights():
    r = MKLResult(weights=np.array([1.0, 0.0]), dual_coef=np.array([1.0, -1.0]), intercept=0.25)
    K_test = np.stack([np.eye(2), np.full((2, 2), np.nan)])
    np.testing.assert_allclose(decision(r, K_test), [1.25, -0.75])
    np.testing.assert_allclose(r.decision(K_test), [1.25, -0.75])
    with pytest.raises(ValueError, match=r"K_test must have shape \(n_kernels=2, n_test, n_train=2\)"):
        decision(r, np.eye(2))


def test_history_equal_length_arrays():
    h = History()
    for i in range(3):
        h.append(objective=i, gap=1.0 / (i + 1), weights=[i, 1 - i], n_svm_calls=i)
    d = h.as_dict()
    assert d["weights"].shape == (3, 2)
    assert {len(v) for v in d.values()} == {3}
    assert np.all(np.diff(d["time"]) >= 0)
    assert History().as_dict(n_kernels=4)["weights"].shape == (0, 4)


# --- validation ------------------------------------------------------------------------


def test_validate_params_messages():
    constraints = {"p": [Interval("real", 1, None)], "solver": [Options("newton", "analytic")],
                   "normalize": [Options("trace"), None], "n": [Interval("int", 1, 10)]}
    validate_params("Est", constraints, {"p": 1.0, "solver": "newton", "normalize": None, "n": 3})
    with pytest.raises(ValueError, match=r"The 'p' parameter of Est must be a float in the range \[1, inf\)\. Got 0\.5 instead\."):
        validate_params("Est", constraints, {"p": 0.5})
    with pytest.raises(ValueError, match=r"'solver' parameter of Est must be one of \{'newton', 'analytic'\}\. Got 'nope'"):
        validate_params("Est", constraints, {"solver": "nope"})
    with pytest.raises(ValueError, match=r"must be one of \{'trace'\} or None"):
        validate_params("Est", constraints, {"normalize": "cos"})
    with pytest.raises(ValueError, match=r"an int in the range \[1, 10\]"):
        validate_params("Est", constraints, {"n": 2.5})
    with pytest.raises(ValueError, match="Got True instead"):
        validate_params("Est", constraints, {"p": True})
    with pytest.raises(ValueError, match="Got nan instead"):
        validate_params("Est", constraints, {"p": float("nan")})


def test_check_kernel_stack_errors(toy):
    K, y = toy
    assert check_kernel_stack(list(K), y).shape == K.shape
    assert check_kernel_stack(K[0]).shape == (1,) + K.shape[1:]
    with pytest.raises(ValueError, match="kernel list is empty"):
        check_kernel_stack([])
    with pytest.raises(ValueError, match="K and y do not match: the kernels are 50 x 50 but y has 49"):
        check_kernel_stack(K, y[:-1])
    with pytest.raises(ValueError, match="must be square"):
        check_kernel_stack(K[:, :, :-1])
    bad = K.copy()
    bad[1, 0, 1] += 1.0
    with pytest.raises(ValueError, match="Kernel 1 of 3 is not symmetric"):
        check_kernel_stack(bad)
    bad = K.copy()
    bad[2, 3, 3] = np.inf
    with pytest.raises(ValueError, match="K contains NaN or infinity"):
        check_kernel_stack(bad)
    indefinite = K.copy()
    indefinite[0] = -indefinite[0]
    with pytest.raises(ValueError, match=r"Kernel 0 of 3 \(rbf\) is not positive semidefinite"):
        check_kernel_stack(indefinite, descriptions=["rbf", "b", "c"])


def test_psd_check_large_uses_lanczos_and_agrees():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(500, 20))
    K = A @ A.T
    assert smallest_eigenvalue(K) > -1e-6 * np.trace(K)
    check_psd(K)
    K_ind = K - 5.0 * np.eye(500)
    np.testing.assert_allclose(smallest_eigenvalue(K_ind), np.linalg.eigvalsh(K_ind)[0], rtol=1e-6)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        check_psd(K_ind)


def test_binary_labels():
    y_pm, classes = check_binary_labels(np.array(["b", "a", "b"]))
    assert classes.tolist() == ["a", "b"] and y_pm.tolist() == [1.0, -1.0, 1.0]
    with pytest.raises(ValueError, match="y has only one class"):
        check_binary_labels([1, 1, 1])
    with pytest.raises(ValueError, match="y has 3 classes; MyEst is binary-only"):
        check_binary_labels([0, 1, 2], "MyEst")
    with pytest.raises(ValueError, match="y contains NaN"):
        check_binary_labels(np.array([0.0, np.nan, 1.0]))


def test_import_registers_no_backend():
    """Importing mklcore.svm calls nothing: no registration, no SVM library loaded."""
    code = ("import sys, mklcore.svm as s; "
            "print(sorted(s._BACKENDS), sorted(s.BUILTIN_BACKENDS), 'sklearn.svm' in sys.modules "
            "or 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")[0]
    assert out == "[] ['libsvm', 'smo'] False"
    assert "libsvm" in available_backends() and set(BUILTIN_BACKENDS) <= set(available_backends())


def test_libsvm_intercept_matches_libsvm(toy):
    """LIBSVM's bias rule, recomputed from alpha and the gradient, gives sklearn's intercept."""
    K, y = toy
    for C in (0.05, 1.0, 100.0):  # few free SVs at small C, many at large C
        res = svm_solve(K[0], y, C=C, tol=1e-10)
        grad = y * (K[0] @ res.dual_coef) - 1.0
        np.testing.assert_allclose(libsvm_intercept(res.alpha, y, grad, C), res.intercept,
                                   atol=1e-6)
    # no free support vector (alpha = 0, grad = -1): the midpoint of [-1, 1], b = 0
    assert libsvm_intercept(np.zeros_like(y), y, -np.ones_like(y), 1.0) == 0.0


def _svc_solution(K, y, C, tol, max_iter):
    """alpha, bias and iterations of SVC(kernel="precomputed").fit itself."""
    import warnings as _w

    svc = SVC(kernel="precomputed", C=C, tol=tol, max_iter=max_iter, cache_size=500)
    with _w.catch_warnings(record=True) as caught:
        _w.simplefilter("always")
        svc.fit(K, y)
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    np.clip(alpha, 0.0, C, out=alpha)
    return alpha, float(svc.intercept_[0]), int(np.sum(svc.n_iter_)), len(caught)


def test_libsvm_backend_is_svc_fit_bit_for_bit():
    """The "libsvm" backend (LIBSVM called with SVC.fit's arguments) gives SVC.fit's solution,
    bias, iteration count and ConvergenceWarning exactly."""
    import warnings as _w

    from mklcore.svm import _libsvm

    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(4, 60))
        X = rng.normal(size=(n, 3))
        y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1.0, -1.0)
        y[:2] = (-1.0, 1.0)
        K = np.ascontiguousarray(X @ X.T if trial % 2 else
                                 np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)))
        C = float(rng.choice([0.1, 1.0, 100.0]))
        max_iter = int(rng.choice([-1, 5]))
        with _w.catch_warnings(record=True) as caught:
            _w.simplefilter("always")
            alpha, b, n_iter = _libsvm(K, y, C, 1e-3, None, max_iter)
        ref_alpha, ref_b, ref_iter, ref_warnings = _svc_solution(K, y, C, 1e-3, max_iter)
        np.testing.assert_array_equal(alpha, ref_alpha)
        assert (b, n_iter, len(caught)) == (ref_b, ref_iter, ref_warnings)


def test_libsvm_backend_keeps_svc_errors():
    """Inputs SVC.fit rejects still go to SVC.fit (one class, non-finite kernel)."""
    from mklcore.svm import _libsvm

    K = np.eye(4)
    with pytest.raises(ValueError):
        _libsvm(K, np.ones(4), 1.0, 1e-3, None, -1)
    K[0, 1] = np.nan
    with pytest.raises(ValueError):
        _libsvm(K, np.array([1.0, -1.0, 1.0, -1.0]), 1.0, 1e-3, None, -1)
