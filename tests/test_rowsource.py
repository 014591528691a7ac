"""Kernel rows from raw features (mklcore.rowsource): the lazy stack equals the stack."""

import numpy as np
import pytest

from mklcore.kernels import KernelBank, gaussian, kernel_bank, linear, polynomial, spectrum
from mklcore.lpnorm import LpMKLClassifier, SumKernelSVC, lpmkl_solve
from mklcore.rowsource import LazyStack, choose_memory, lazy_stack, stack_bytes

# every kind of entry: shared distance and inner-product rows, column subsets (one and
# several features), Gaussians on a dyadic gamma grid, degrees up to 5
KERNELS = [gaussian(gamma=0.05), gaussian(gamma=0.1), gaussian(gamma=0.4), gaussian(gamma=0.13),
           polynomial(2), polynomial(3, coef0=0.5, scale=0.7), linear(),
           gaussian(gamma=0.5, columns=[0]), polynomial(5, columns=[1, 2]),
           gaussian(gamma=0.2, columns=[1, 2])]


def _data(n=90, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] ** 2 - 0.2 + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _pair(normalize, share_exp, X):
    K = KernelBank(kernels=KERNELS, normalize=normalize).fit_transform(X)
    L = LazyStack(KernelBank(kernels=KERNELS, normalize=normalize).fit(X), share_exp=share_exp)
    return K, L


@pytest.mark.parametrize("normalize", [None, "trace", "cosine"])
def test_rows_equal_stack_rows_bit_for_bit(normalize):
    X, _ = _data()
    K, L = _pair(normalize, False, X)
    R = np.stack([L.kernel_rows(i) for i in range(L.n)], axis=1)
    assert L.shape == K.shape
    assert np.array_equal(R, K)
    assert np.allclose(L.diag(), np.diagonal(K, axis1=1, axis2=2), rtol=1e-15, atol=0)


@pytest.mark.parametrize("normalize", [None, "trace"])
def test_shared_exponentials_agree_to_round_off(normalize):
    X, _ = _data()
    K, L = _pair(normalize, True, X)
    assert (L.kint[:, 1] == 3).sum() == 2  # gamma 0.1 and 0.4 are powers of exp(-0.05 D)
    R = np.stack([L.kernel_rows(i) for i in range(L.n)], axis=1)
    assert np.max(np.abs(R - K) / np.maximum(np.abs(K), 1.0)) < 1e-12


@pytest.mark.parametrize("normalize", [None, "trace", "cosine"])
def test_test_rows_and_decision_without_test_stack(normalize):
    X, _ = _data()
    bank = KernelBank(kernels=KERNELS, normalize=normalize)
    bank.fit_transform(X[:60])
    L = LazyStack(KernelBank(kernels=KERNELS, normalize=normalize).fit(X[:60]))
    Kt = bank.transform(X[60:])
    assert np.max(np.abs(L.test_rows(X[60:]) - Kt) / np.maximum(np.abs(Kt), 1.0)) < 1e-12
    rng = np.random.default_rng(1)
    w = rng.random(len(KERNELS))
    coef = rng.normal(size=60) * (rng.random(60) < 0.5)
    expected = np.einsum("m,mij,j->i", w, Kt, coef) + 0.3
    f = L.decision(X[60:], w, coef, 0.3, block=7)
    assert np.allclose(f, expected, rtol=1e-12, atol=1e-10)


def test_lpmkl_on_rows_is_the_stack_solution():
    X, y = _data()
    K, L = _pair("trace", False, X)
    # the default (interleaved Newton) engine reads the same rows in the same order
    a, b = lpmkl_solve(K, y, p=2.0), lpmkl_solve(L, y, p=2.0)
    assert a.success and b.success and a.n_iter == b.n_iter
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.dual_coef, b.dual_coef)
    assert a.intercept == b.intercept and b.gap <= 1e-5
    # wrapper mode and the cutting plane: the same solution to the solvers' tolerance
    for kw in ({"mode": "wrapper"}, {"solver": "cutting_plane"}):
        a = lpmkl_solve(K, y, p=2.0, svm_tol=1e-8, tol=1e-8, **kw)
        b = lpmkl_solve(L, y, p=2.0, svm_tol=1e-8, tol=1e-8, **kw)
        assert a.success and b.success
        assert abs(a.objective - b.objective) <= 1e-7 * abs(a.objective)
        assert np.allclose(a.weights, b.weights, atol=1e-4)
        assert np.allclose(a.dual_coef, b.dual_coef, atol=1e-4)


def test_lazy_stack_rejects_other_backends_and_bad_labels():
    X, y = _data(40)
    L = lazy_stack(kernel_bank("rbf", gamma=[0.1, 0.2]), X)
    with pytest.raises(ValueError, match="svm_backend='smo'"):
        lpmkl_solve(L, y, svm_backend="libsvm")
    with pytest.raises(ValueError, match="labels"):
        lpmkl_solve(L, y[:-1])


@pytest.mark.parametrize("cls,kw", [(LpMKLClassifier, {"p": 2.0}), (SumKernelSVC, {})])
def test_estimators_same_model_on_rows_and_stack(cls, kw, monkeypatch):
    X, y = _data(150, seed=2)
    kernels = kernel_bank("rbf", gamma=[0.02, 0.04, 0.08, 0.3]) + kernel_bank("poly", degree=[2])
    common = dict(kernels=kernels, normalize="trace", svm_tol=1e-8, **kw)
    a = cls(memory="stack", **common).fit(X[:100], y[:100])
    b = cls(memory="rows", cache_size=1, **common).fit(X[:100], y[:100])
    assert a.memory_path_ == "stack" and b.memory_path_ == "rows"
    assert np.allclose(a.weights_, b.weights_, atol=1e-6)
    assert np.allclose(a.dual_coef_, b.dual_coef_, atol=1e-6)
    fa = a.decision_function(X[100:])

    def no_test_stack(*args, **kwargs):
        raise AssertionError("the rows path built a test stack")

    monkeypatch.setattr(b.kernel_bank_, "transform", no_test_stack)
    monkeypatch.setattr(b.kernel_bank_, "transform_sum", no_test_stack)
    assert np.allclose(b.decision_function(X[100:]), fa, atol=1e-6)
    assert np.array_equal(b.predict(X[100:]), a.predict(X[100:]))


def test_memory_auto_budget_and_errors():
    X, y = _data(60)
    kernels = kernel_bank("rbf", gamma=[0.1, 0.2])
    clf = LpMKLClassifier(kernels=kernels, memory=10_000.0).fit(X, y)  # 10 kB: rows
    assert clf.memory_path_ == "rows" and clf.converged_
    assert LpMKLClassifier(kernels=kernels).fit(X, y).memory_path_ == "stack"
    assert choose_memory("auto", 20, 50_000) == "rows"
    assert stack_bytes(20, 50_000, 0) == 8 * 20 * 50_000 ** 2
    with pytest.raises(ValueError, match="memory"):
        LpMKLClassifier(kernels=kernels, memory="disk").fit(X, y)
    with pytest.raises(ValueError, match="cache_size"):
        LpMKLClassifier(kernels=kernels, cache_size=0).fit(X, y)
    with pytest.raises(ValueError, match="memory='stack'"):
        choose_memory("rows", 1, 10, supported=False)
    dna = ["ACGTAC", "ACGGAC", "TTGTAC", "ACGTTT"] * 5
    assert choose_memory("auto", 1, len(dna), supported=False) == "stack"
    with pytest.raises(ValueError, match="linear, polynomial and Gaussian"):
        lazy_stack([spectrum(2)], dna)


# ---------------------------------------------------------------------------------------
# low-rank (Nystroem) stacks
# ---------------------------------------------------------------------------------------

def test_lowrank_full_rank_is_exact():
    from mklcore.lowrank import LowRankStack

    X, y = _data(80, 4, seed=3)
    kernels = kernel_bank("rbf", gamma=[0.1, 0.2, 0.8]) + kernel_bank("poly", degree=[2])
    bank = KernelBank(kernels=kernels, normalize="trace").fit(X)
    exact, low = LazyStack(bank), LowRankStack(bank, 80)
    E = np.stack([exact.kernel_rows(i) for i in range(80)], axis=1)
    A = np.stack([low.kernel_rows(i) for i in range(80)], axis=1)
    assert np.max(np.abs(E - A)) < 1e-10
    assert np.all(low.kernel_error() < 1e-12)
    a = lpmkl_solve(exact, y, svm_tol=1e-8, tol=1e-8)
    b = lpmkl_solve(low, y, svm_tol=1e-8, tol=1e-8)
    assert a.success and b.success and b.rank == 80 and b.approx == "nystroem"
    assert np.all(b.kernel_error < 1e-12)
    assert np.allclose(a.weights, b.weights, atol=1e-4)
    assert np.allclose(a.dual_coef, b.dual_coef, atol=1e-4)
    Xt = _data(20, 4, seed=4)[0]
    fa = exact.decision(Xt, a.weights, a.dual_coef, a.intercept)
    fb = low.decision(Xt, b.weights, b.dual_coef, b.intercept)
    assert np.allclose(fa, fb, atol=1e-3)


def test_lowrank_estimator_reports_the_approximation():
    X, y = _data(160, 4, seed=5)
    kernels = kernel_bank("rbf", gamma=[0.1, 0.4], approx="nystroem", rank=40, random_state=1)
    assert kernels.rank == 40 and len(kernels) == 2
    clf = LpMKLClassifier(kernels=kernels).fit(X[:120], y[:120])
    assert clf.memory_path_ == "lowrank" and clf.converged_
    assert clf.lazy_stack_.landmarks.shape == (40,)
    err = clf.result_.kernel_error
    assert err.shape == (2,) and np.all((err > 0) & (err < 0.5))
    assert clf.score(X[120:], y[120:]) > 0.7
    again = LpMKLClassifier(kernels=kernels).fit(X[:120], y[:120])  # seeded landmarks
    assert np.array_equal(again.dual_coef_, clf.dual_coef_)
    with pytest.raises(ValueError, match="rank"):
        kernel_bank("rbf", gamma=[0.1], approx="nystroem")
    with pytest.raises(ValueError, match="approx"):
        kernel_bank("rbf", gamma=[0.1], approx="fourier", rank=3)


def test_memory_errors_name_the_parameter_that_helps(monkeypatch, capsys):
    import mklcore.kernels as kernels_module

    X, y = _data(60)
    monkeypatch.setattr(kernels_module, "MEMORY_CHECK_MIN_BYTES", 0)
    monkeypatch.setattr(kernels_module, "available_memory", lambda: 50_000)
    bank = kernel_bank("rbf", gamma=[0.1, 0.2])
    with pytest.raises(MemoryError, match="memory='rows'"):
        LpMKLClassifier(kernels=bank, memory="stack").fit(X, y)
    with pytest.raises(MemoryError, match="lower cache_size"):
        LpMKLClassifier(kernels=bank, memory="rows").fit(X, y)
    auto = LpMKLClassifier(kernels=bank, cache_size=0.001).fit(X, y)  # the stack is short
    assert auto.memory_path_ == "rows" and auto.converged_
    low = kernel_bank("rbf", gamma=[0.1, 0.2], approx="nystroem", rank=30)
    with pytest.raises(MemoryError, match="rank=30"):
        LpMKLClassifier(kernels=low).fit(X, y)
    monkeypatch.setattr(kernels_module, "available_memory", lambda: 2 ** 40)
    monkeypatch.setattr("mklcore.rowsource.PROGRESS_EVERY", 0.0)
    LpMKLClassifier(kernels=bank, memory="rows", cache_size=1, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "LazyStack:" in out and "kernel rows computed" in out and "iter" in out


def test_fitted_rows_model_keeps_no_cache_and_pickles():
    import pickle

    X, y = _data(80)
    clf = LpMKLClassifier(kernels=kernel_bank("rbf", gamma=[0.1, 0.2]), memory="rows")
    clf.fit(X[:60], y[:60])
    assert clf.lazy_stack_._brows is None
    again = pickle.loads(pickle.dumps(clf))
    assert np.array_equal(again.decision_function(X[60:]), clf.decision_function(X[60:]))


def test_rows_and_factor_paths_name_the_multiclass_fix():
    from sklearn.datasets import load_iris

    from mklcore import LpMKLClassifier, kernel_bank

    X, y = load_iris(return_X_y=True)
    for params in (dict(memory="rows"),
                   dict(kernels=kernel_bank("rbf", gamma=[0.1, 1.0], approx="nystroem", rank=20))):
        with pytest.raises(ValueError, match="binary-only for now and y has 3 classes; use an "
                                             "exact bank"):
            LpMKLClassifier(**params).fit(X, y)
