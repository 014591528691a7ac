"""Tests of mklcore.kernels: kernel functions, banks, stacks, normalisation and KernelBank."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from mklcore.kernels import (KERNEL_BANKS, Kernel, KernelBank, alignment, as_kernel, center,
                             fit_kernels, gaussian, is_psd, kernel_bank, kernel_stack, linear,
                             normalize_cosine, normalize_trace, polynomial, spectrum,
                             weighted_degree)

# sklearn and mklcore both compute ||x||^2 + ||z||^2 - 2<x, z>; they differ by round-off only
SKLEARN_ATOL = 1e-10
# float32 stacks: Gram entries O(1) rounded to 24 bits (plus the power in polynomial kernels)
FLOAT32_RTOL = 1e-5
# PSD tolerance of the property tests (eigenvalues relative to the trace)
PSD_RTOL = 1e-9


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 5)), rng.normal(size=(9, 5))


# ------------------------------------------------------------------------------------
# kernel functions against scikit-learn
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", [1e-3, 0.1, 2.0])
def test_gaussian_matches_sklearn(data, gamma):
    X, Z = data
    k = gaussian(gamma=gamma)
    np.testing.assert_allclose(k(X), rbf_kernel(X, gamma=gamma), rtol=0, atol=SKLEARN_ATOL)
    np.testing.assert_allclose(k(Z, X), rbf_kernel(Z, X, gamma=gamma), rtol=0, atol=SKLEARN_ATOL)
    assert k(Z, X).shape == (9, 40)


@pytest.mark.parametrize("degree,coef0,scale", [(1, 0.0, 1.0), (2, 1.0, 1.0), (3, 0.5, 0.2)])
def test_polynomial_and_linear_match_sklearn(data, degree, coef0, scale):
    X, Z = data
    k = polynomial(degree, coef0=coef0, scale=scale)
    expected = polynomial_kernel(Z, X, degree=degree, gamma=scale, coef0=coef0)
    np.testing.assert_allclose(k(Z, X), expected, rtol=1e-12, atol=SKLEARN_ATOL)
    np.testing.assert_allclose(linear()(Z, X), linear_kernel(Z, X), rtol=1e-12, atol=SKLEARN_ATOL)


def test_stack_of_mixed_bank_matches_sklearn_with_columns(data):
    X, Z = data
    cols = [0, 3]
    kernels = [gaussian(gamma=0.5), linear(columns=cols), gaussian(sigma=1.5, columns=cols),
               polynomial(2, columns=[4]), gaussian(gamma=0.1, columns=4), linear()]
    expected = [rbf_kernel(Z, X, gamma=0.5), linear_kernel(Z[:, cols], X[:, cols]),
                rbf_kernel(Z[:, cols], X[:, cols], gamma=1 / (2 * 1.5 ** 2)),
                polynomial_kernel(Z[:, [4]], X[:, [4]], degree=2, gamma=1, coef0=1),
                rbf_kernel(Z[:, [4]], X[:, [4]], gamma=0.1), linear_kernel(Z, X)]
    np.testing.assert_allclose(kernel_stack(kernels, Z, X), np.stack(expected), atol=SKLEARN_ATOL)
    train = kernel_stack(kernels, X)
    assert train.shape == (6, 40, 40)
    # training stacks are exactly symmetric, Gaussian diagonals exactly 1
    assert np.array_equal(train, train.transpose(0, 2, 1))
    assert np.all(np.diagonal(train[[0, 2, 4]], axis1=1, axis2=2) == 1.0)


def test_gamma_sigma_equivalence(data):
    X, Z = data
    for sigma in (0.3, 1.0, 7.0):
        a, b = gaussian(sigma=sigma), gaussian(gamma=1 / (2 * sigma ** 2))
        np.testing.assert_allclose(a(Z, X), b(Z, X), rtol=1e-14)
        assert a.sigma_ == pytest.approx(sigma) and a.gamma_ == pytest.approx(b.gamma_)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.testing.assert_allclose(gaussian(sigma=2.0)(X), np.exp(-D / 8.0), atol=1e-12)


def test_data_dependent_widths(data):
    X, _ = data
    # gamma="scale" is sklearn's 1 / (n_features * X.var())
    k = gaussian(gamma="scale").fit(X)
    assert k.gamma_ == pytest.approx(1 / (X.shape[1] * X.var()))
    assert gaussian().fit(X).gamma_ == k.gamma_  # the default
    # median heuristic: K = exp(-D / (c * median_{i != j} D_ij))
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    d_med = np.median(D[~np.eye(40, dtype=bool)])
    for c in (0.01, 1.0, 100.0):
        fitted = gaussian(sigma="median", scale=c).fit(X)
        assert fitted.gamma_ == pytest.approx(1 / (c * d_med), rel=1e-12)
        np.testing.assert_allclose(fitted(X), np.exp(-D / (c * d_med)), atol=1e-12)
    # Gönen & Alpaydın (2008): s = mean nearest-neighbour distance, exp(-D / s^2)
    s = np.sqrt(np.where(np.eye(40, dtype=bool), np.inf, D).min(axis=1)).mean()
    assert gaussian(sigma="nn").fit(X).gamma_ == pytest.approx(1 / s ** 2, rel=1e-12)
    # the fitted width is the training one: unfitted kernels are fitted on the training side
    np.testing.assert_allclose(kernel_stack([gaussian(sigma="median")], X[:5], X)[0],
                               gaussian(sigma="median").fit(X)(X[:5], X), atol=1e-14)
    # the fused path (training stack) and fit_kernels give the same widths
    bank = kernel_bank("kloft_median", n_kernels=3)
    fitted = fit_kernels(bank, X)
    np.testing.assert_allclose(kernel_stack(bank, X), kernel_stack(fitted, X), atol=1e-14)
    assert not bank[0].is_fitted and fitted[0].is_fitted
    assert "gamma_=" in repr(fitted[0])


def test_median_degenerate_columns():
    rng = np.random.default_rng(1)
    X = np.column_stack([np.ones(20), np.r_[np.zeros(15), rng.normal(size=5)], rng.normal(size=20)])
    # a constant feature gives the all-ones kernel (kept)
    K = kernel_stack([gaussian(sigma="median", columns=[0])], X)[0]
    np.testing.assert_array_equal(K, np.ones((20, 20)))
    # mostly-equal feature: the median of the positive distances is used
    x = X[:, 1]
    D = (x[:, None] - x[None]) ** 2
    k = gaussian(sigma="median", columns=[1]).fit(X)
    assert k.gamma_ == pytest.approx(1 / np.median(D[D > 0]))
    assert np.all(np.isfinite(k(X)))


def test_diag_without_full_matrix(data):
    X, _ = data
    for k in (linear(), polynomial(3, coef0=2.0, scale=0.5), gaussian(gamma=0.7),
              linear(columns=[1, 2]), as_kernel(lambda A, B: (A @ B.T + 1.0) ** 2)):
        np.testing.assert_allclose(k.diag(X), np.diag(k(X)), rtol=1e-12)


def test_repr_and_tuple_forms(data):
    X, Z = data
    assert repr(gaussian(sigma=2.0, columns=[3])) == "gaussian(sigma=2.0, columns=[3])"
    assert repr(polynomial(3)) == "polynomial(degree=3, coef0=1.0)"
    assert repr(weighted_degree(8, shift=3, positions=(20, 40))) == \
        "weighted_degree(d=8, shift=3, positions=(20, 40))"
    assert as_kernel(("rbf", {"gamma": 0.1}, [0, 2])) == gaussian(gamma=0.1, columns=[0, 2])
    assert as_kernel(("poly", {"degree": 3})) == polynomial(3)
    assert as_kernel("linear") == linear()
    assert as_kernel(("wd", {"d": 4, "shift": 1})) == weighted_degree(4, shift=1)
    f = lambda A, B: A @ B.T  # noqa: E731
    np.testing.assert_allclose(kernel_stack([f], Z, X)[0], Z @ X.T)
    with pytest.raises(ValueError, match="Unknown kernel name 'sigmoid'"):
        as_kernel(("sigmoid", {}))
    with pytest.raises(ValueError, match="sigma or gamma"):
        gaussian(sigma=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="'degree' parameter of polynomial must be an int"):
        polynomial(0)
    with pytest.raises(TypeError, match="Cannot interpret"):
        as_kernel(3.5)


# ------------------------------------------------------------------------------------
# banks
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,per_kernel",
                         [("simplemkl", 13), ("rls2_default", 13), ("xu2010", 10)])
@pytest.mark.parametrize("d", [1, 4])
def test_named_per_feature_bank_sizes(kind, per_kernel, d):
    eager = kernel_bank(kind, n_features=d)
    assert len(eager) == per_kernel * (d + 1)
    lazy = kernel_bank(kind)
    assert len(lazy) == 2 * per_kernel  # templates, expanded at fit time
    X = np.random.default_rng(0).normal(size=(6, d))
    fitted = fit_kernels(lazy, X)
    assert [repr(k) for k in fitted] == [repr(k) for k in eager]
    assert KernelBank(kernels=lazy).fit(X).n_kernels_ == per_kernel * (d + 1)
    # all-features kernels first, then each kernel on features 0..d-1
    assert eager[per_kernel].columns == (0,) and eager[-1].columns == (d - 1,)


def test_bank_contents():
    simple = kernel_bank("simplemkl", per_feature=False)
    assert [k.sigma for k in simple[:10]] == [0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20]
    assert [(k.degree, k.coef0) for k in simple[10:]] == [(1, 1.0), (2, 1.0), (3, 1.0)]
    rls2 = kernel_bank("rls2_default", per_feature=False)
    np.testing.assert_allclose([k.gamma for k in rls2[3:]], np.logspace(-3, 3, 10))
    xu = kernel_bank("xu2010", per_feature=False)
    np.testing.assert_allclose([k.sigma for k in xu], 2.0 ** np.arange(-3, 7))
    kloft = kernel_bank("kloft_median")
    assert len(kloft) == 50
    np.testing.assert_allclose([k.scale for k in kloft], np.logspace(-2, 2, 50))
    lm = kernel_bank("lmkl")
    assert [type(k).__name__ for k in lm] == ["LinearKernel", "PolynomialKernel", "GaussianKernel"]
    assert lm[2].sigma == "nn" and lm[2].scale == 1.0
    assert kernel_bank("lmkl", gaussian_form="2s2")[2].scale == 2.0
    only = kernel_bank("rbf", gamma=[0.1, 1.0], per_feature="only", n_features=3)
    assert [k.columns for k in only] == [(0,), (1,), (2,), (0,), (1,), (2,)]
    assert len(kernel_bank("rbf", sigma="median", scale=[0.1, 1, 10])) == 3
    assert len(kernel_bank("poly", degree=[1, 2], per_feature=True, n_features=2)) == 6


def test_bank_errors():
    with pytest.raises(ValueError, match="Unknown kernel bank 'foo'; known kinds: linear, poly"):
        kernel_bank("foo")
    with pytest.raises(TypeError, match=r"unexpected parameter\(s\) \['gamma'\]"):
        kernel_bank("xu2010", gamma=[1.0])
    with pytest.raises(ValueError, match="needs degree"):
        kernel_bank("poly")
    with pytest.raises(ValueError, match="'per_feature' parameter"):
        kernel_bank("rbf", gamma=[1.0], per_feature="yes")
    assert set(KERNEL_BANKS) >= {"simplemkl", "rls2_default", "xu2010", "kloft_median", "lmkl"}


# ------------------------------------------------------------------------------------
# string kernels against brute force (the formulas of the docstrings)
# ------------------------------------------------------------------------------------

SEQS = ["ACGTACGTAA", "acgtTCGTAN", "TTGACGTACG", "GGGGCCCCAA", "ACGNACGTAC"]
SEQS_TEST = ["ACGTACGTAC", "TTTTACGTAA"]


def _match(a, b):
    a, b = a.upper(), b.upper()
    return a == b and all(c in "ACGT" for c in a)


def _spectrum_brute(x, z, k):
    kmers = lambda s: [s[i:i + k].upper() for i in range(len(s) - k + 1)]  # noqa: E731
    valid = lambda u: all(c in "ACGT" for c in u)  # noqa: E731
    kx, kz = kmers(x), kmers(z)
    return sum(kx.count(u) * kz.count(u) for u in set(kx) if valid(u))


def _wds_brute(x, z, d, S):
    # 1-based transcription of the formula
    L, total = len(x), 0.0
    for k in range(1, d + 1):
        beta = 2 * (d - k + 1) / (d * (d + 1))
        for l in range(1, L - k + 2):
            for s in range(0, S + 1):
                if s + l > L - k + 1:
                    break
                delta = 1 / (2 * (s + 1))
                xs, zs = x[l + s - 1:l + s - 1 + k], z[l + s - 1:l + s - 1 + k]
                hits = _match(xs, z[l - 1:l - 1 + k]) + _match(x[l - 1:l - 1 + k], zs)
                total += beta * delta * hits
    return total


def _brute(f, A, B):
    return np.array([[f(a, b) for b in B] for a in A])


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_spectrum_brute_force(k):
    brute = lambda A, B: _brute(lambda a, b: _spectrum_brute(a, b, k), A, B)  # noqa: E731
    np.testing.assert_allclose(spectrum(k)(SEQS), brute(SEQS, SEQS))
    np.testing.assert_allclose(spectrum(k)(SEQS_TEST, SEQS), brute(SEQS_TEST, SEQS))
    # different lengths are fine for the spectrum kernel
    ragged = ["ACGTA", "CG", "ACGTACGTTT"]
    np.testing.assert_allclose(spectrum(k)(ragged), brute(ragged, ragged))


@pytest.mark.parametrize("d,S", [(1, 0), (3, 0), (4, 0), (3, 1), (4, 3), (2, 20)])
def test_weighted_degree_brute_force(d, S):
    k = weighted_degree(d, shift=S)
    brute = lambda A, B: _brute(lambda a, b: _wds_brute(a, b, d, S), A, B)  # noqa: E731
    np.testing.assert_allclose(k(SEQS), brute(SEQS, SEQS), atol=1e-12)
    np.testing.assert_allclose(k(SEQS_TEST, SEQS), brute(SEQS_TEST, SEQS), atol=1e-12)
    np.testing.assert_allclose(k.diag(SEQS), [_wds_brute(s, s, d, S) for s in SEQS], atol=1e-12)
    # without shifts: sum_k beta_k * number of matching positions
    if S == 0:
        x, z = SEQS[0], SEQS[4]
        expected = sum(2 * (d - kk + 1) / (d * (d + 1)) * sum(_match(x[l:l + kk], z[l:l + kk])
                                                             for l in range(len(x) - kk + 1))
                       for kk in range(1, d + 1))
        assert k([x], [z])[0, 0] == pytest.approx(expected)


def test_string_kernel_inputs_and_windows():
    chars = np.array([list(s) for s in SEQS])  # (n, L) array of single characters
    np.testing.assert_allclose(weighted_degree(3, 1)(chars), weighted_degree(3, 1)(SEQS))
    np.testing.assert_allclose(spectrum(2)(chars.astype("S1")), spectrum(2)(SEQS))
    win = [s[2:8] for s in SEQS]
    np.testing.assert_allclose(weighted_degree(3, shift=2, positions=(2, 8))(SEQS),
                               weighted_degree(3, shift=2)(win))
    np.testing.assert_allclose(spectrum(3, positions=slice(2, 8))(SEQS), spectrum(3)(win))
    # a bank of string kernels through KernelBank, cosine-normalised (Kloft's TSS stand-in)
    bank = KernelBank([weighted_degree(3, shift=1, positions=(0, 5)), ("spectrum", {"k": 2})],
                      normalize="cosine")
    K = bank.fit_transform(SEQS)
    np.testing.assert_allclose(np.diagonal(K, axis1=1, axis2=2), 1.0)
    np.testing.assert_allclose(bank.transform(SEQS[1:3]), K[:, 1:3], atol=1e-12)
    with pytest.raises(ValueError, match="one common length"):
        weighted_degree(3)(["ACGT", "ACG"])


# ------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------

_SPECS = st.sampled_from([
    ("rbf", {"gamma": 0.5}), ("rbf", {"sigma": "median", "scale": 0.3}), ("rbf", {"sigma": "nn"}),
    ("poly", {"degree": 3, "coef0": 1.0}), ("linear", {}), ("rbf", {"gamma": "scale"}, [0]),
    ("poly", {"degree": 2}, [1]),
])


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 12), d=st.integers(2, 4), seed=st.integers(0, 2 ** 16),
       specs=st.lists(_SPECS, min_size=1, max_size=4))
def test_stacks_symmetric_psd_and_normalised(n, d, seed, specs):
    X = np.random.default_rng(seed).normal(size=(n, d))
    K = kernel_stack(specs, X)
    assert K.shape == (len(specs), n, n)
    assert np.array_equal(K, K.transpose(0, 2, 1))
    for Km in K:
        assert np.linalg.eigvalsh(Km)[0] >= -PSD_RTOL * max(np.trace(Km), 1.0)
    Kt, f = normalize_trace(K)
    np.testing.assert_allclose(np.trace(Kt, axis1=1, axis2=2), n, rtol=1e-12)
    Kc = normalize_cosine(K)
    assert np.array_equal(Kc, Kc.transpose(0, 2, 1))
    diag = np.diagonal(Kc, axis1=1, axis2=2)
    assert np.all((diag == 1.0) | (np.diagonal(K, axis1=1, axis2=2) == 0))
    assert np.all(is_psd(Kc))


@settings(max_examples=10, deadline=None, derandomize=True)
@given(n=st.integers(3, 10), seed=st.integers(0, 2 ** 16))
def test_centering_matches_centred_features(n, seed):
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(n, 3)), rng.normal(size=(4, 3))
    mean = X.mean(axis=0)
    # linear kernel: centring in feature space = centring the inputs
    np.testing.assert_allclose(center(X @ X.T), (X - mean) @ (X - mean).T, atol=1e-12)
    np.testing.assert_allclose(center(Z @ X.T, X @ X.T), (Z - mean) @ (X - mean).T, atol=1e-12)
    Kc = center(kernel_stack([gaussian(gamma=0.3), linear()], X))
    assert np.array_equal(Kc, Kc.transpose(0, 2, 1))
    np.testing.assert_allclose(Kc.sum(axis=1), 0.0, atol=1e-12)


def test_alignment():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3))
    y = np.sign(X[:, 0] + 0.1)
    K = kernel_stack([linear(columns=[0]), linear(columns=[2]), gaussian(gamma=1.0)], X)
    Y = np.outer(y, y)
    a = alignment(K, y)
    expected = [np.sum(Km * Y) / (np.linalg.norm(Km) * np.linalg.norm(Y)) for Km in K]
    np.testing.assert_allclose(a, expected)
    np.testing.assert_allclose(alignment(K, Y), expected)
    assert alignment(K[0], K[0]) == pytest.approx(1.0)
    assert a[0] > a[1]  # the informative feature aligns better
    H = np.eye(20) - 1 / 20
    Kc, Yc = H @ K[2] @ H, H @ Y @ H
    assert alignment(K[2], y, centered=True) == pytest.approx(
        np.sum(Kc * Yc) / (np.linalg.norm(Kc) * np.linalg.norm(Yc)))
    assert alignment(K[2], Y, centered=True) == pytest.approx(alignment(K[2], y, centered=True))


def test_trace_and_cosine_test_kernels(data):
    X, Z = data
    kernels = [polynomial(2, coef0=1.0), linear()]
    K, f = normalize_trace(kernel_stack(kernels, X), target=1.0)
    np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 1.0)
    Kt, _ = normalize_trace(kernel_stack(kernels, Z, X), f)
    np.testing.assert_allclose(Kt, kernel_stack(kernels, Z, X) * f[:, None, None])
    # cosine test kernel = rows of the cosine-normalised joint kernel
    XZ = np.vstack([X, Z])
    joint = normalize_cosine(kernel_stack(kernels, XZ))
    test = normalize_cosine(kernel_stack(kernels, Z, X), np.stack([k.diag(Z) for k in kernels]),
                            np.stack([k.diag(X) for k in kernels]))
    np.testing.assert_allclose(test, joint[:, 40:, :40], atol=1e-12)


def test_is_psd():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 3))
    assert is_psd(A @ A.T)
    assert not is_psd(-A @ A.T)
    assert not is_psd(np.triu(np.ones((4, 4))))  # not symmetric
    np.testing.assert_array_equal(is_psd(np.stack([A @ A.T, -A @ A.T])), [True, False])


# ------------------------------------------------------------------------------------
# KernelBank
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("normalize", [None, "trace", "cosine"])
def test_kernel_bank_train_test_consistency(data, normalize):
    X, Z = data
    kernels = (kernel_bank("rbf", sigma="median", scale=[0.5, 2.0])
               + [polynomial(2), linear(columns=[1, 2])])
    bank = KernelBank(kernels=kernels, normalize=normalize)
    K = bank.fit_transform(X)
    assert K.shape == (4, 40, 40) and bank.n_kernels_ == 4
    np.testing.assert_allclose(KernelBank(kernels=kernels, normalize=normalize).fit(X).transform(X),
                               K, rtol=1e-12, atol=1e-12)
    idx = [3, 7, 11, 30]
    np.testing.assert_allclose(bank.transform(X[idx]), K[:, idx], rtol=1e-12, atol=1e-12)
    test = bank.transform(Z)
    assert test.shape == (4, 9, 40)
    # test kernels = rows of the joint kernel with the training statistics
    raw = kernel_stack(bank.kernels_, Z, X)
    if normalize == "trace":
        np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 40)
        np.testing.assert_allclose(test, raw * bank.trace_factors_[:, None, None])
    elif normalize == "cosine":
        np.testing.assert_allclose(np.diagonal(K, axis1=1, axis2=2), 1.0)
        d_test = np.stack([k.diag(Z) for k in bank.kernels_])
        denom = np.sqrt(d_test[:, :, None] * bank.train_diag_[:, None, :])
        np.testing.assert_allclose(test, raw / denom)
    else:
        np.testing.assert_allclose(test, raw)
    assert bank.descriptions_[2] == "polynomial(degree=2, coef0=1.0)"
    assert bank.X_fit_.shape == (40, 5) and bank.n_features_in_ == 5


def test_kernel_bank_default_and_float32(data):
    X, Z = data
    bank64 = KernelBank(normalize="trace")
    K64 = bank64.fit_transform(X)
    assert bank64.descriptions_[0] == "linear()" and bank64.descriptions_[1].startswith(
        "gaussian(gamma='scale', gamma_=")
    bank32 = KernelBank(normalize="trace", dtype="float32")
    K32 = bank32.fit_transform(X)
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, K64, rtol=FLOAT32_RTOL, atol=FLOAT32_RTOL)
    T32 = bank32.transform(Z)
    assert T32.dtype == np.float32
    np.testing.assert_allclose(T32, bank64.transform(Z), rtol=FLOAT32_RTOL, atol=FLOAT32_RTOL)
    S32 = kernel_stack(kernel_bank("simplemkl", n_features=5), X, dtype=np.float32)
    S64 = kernel_stack(kernel_bank("simplemkl", n_features=5), X)
    np.testing.assert_allclose(S32, S64, rtol=FLOAT32_RTOL, atol=FLOAT32_RTOL)
    assert np.array_equal(S32, S32.transpose(0, 2, 1))


def test_kernel_bank_in_pipeline_and_grid_search(data):
    X, _ = data
    y = (X[:, 0] > 0).astype(int)

    class SumSVC(ClassifierMixin, BaseEstimator):  # stand-in for the MKL estimators
        def __init__(self, C=1.0):
            self.C = C

        def fit(self, K, y):
            self.svc_ = SVC(kernel="precomputed", C=self.C).fit(K.sum(0), y)
            return self

        def predict(self, K):
            return self.svc_.predict(K.sum(0))

    pipe = Pipeline([("bank", KernelBank(kernels=kernel_bank("rbf", gamma=[0.1, 1.0]))),
                     ("svm", SumSVC())])
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.8
    search = GridSearchCV(pipe, {"bank__normalize": [None, "cosine"], "svm__C": [1.0, 10.0]}, cv=2)
    search.fit(X, y)
    assert set(search.best_params_) == {"bank__normalize", "svm__C"}
    c = clone(KernelBank(kernels=kernel_bank("simplemkl"), normalize="trace"))
    assert c.normalize == "trace" and len(c.kernels) == 26


# ------------------------------------------------------------------------------------
# failure paths
# ------------------------------------------------------------------------------------

def test_memory_error_message(data):
    X, _ = data
    with pytest.raises(MemoryError, match=r"a stack of 3 kernels of shape \(40, 40\) in float64 "
                                          r"needs 37.50 KiB \(38400 bytes\).*only 1000 bytes are "
                                          r"available \(max_bytes\)"):
        kernel_stack(kernel_bank("rbf", gamma=[1, 2, 3]), X, max_bytes=1000)
    # float32 halves the stack (+ one float64 workspace matrix)
    K = kernel_stack(kernel_bank("rbf", gamma=[1, 2, 3]), X, dtype=np.float32, max_bytes=40000)
    assert K.dtype == np.float32


def test_free_memory_reading_never_refuses_a_small_stack(data, monkeypatch):
    import mklcore.kernels as kern

    X, _ = data
    monkeypatch.setattr(kern, "available_memory", lambda: 0)  # a busy machine's snapshot
    K = kernel_stack(kernel_bank("rbf", gamma=[1, 2, 3]), X)
    assert K.shape == (3, 40, 40)
    monkeypatch.setattr(kern, "MEMORY_CHECK_MIN_BYTES", 1000)
    with pytest.raises(MemoryError, match="free memory"):
        kernel_stack(kernel_bank("rbf", gamma=[1, 2, 3]), X)


def test_input_errors(data):
    X, Z = data
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or infinity \(1 entries\)"):
        KernelBank().fit(bad)
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        kernel_stack([linear()], bad)
    bank = KernelBank().fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but KernelBank was fitted with 5"):
        bank.transform(Z[:, :3])
    with pytest.raises(ValueError, match="X has 5 features but Y has 3"):
        kernel_stack([linear()], X, Z[:, :3])
    with pytest.raises(ValueError, match="out of range for X with 5 features"):
        kernel_stack([linear(columns=[7])], X)


@pytest.mark.parametrize("value", ["l2", "Trace", 1])
def test_bad_normalize(data, value):
    with pytest.raises(ValueError, match=r"The 'normalize' parameter of KernelBank must be one of "
                                         r"\{'trace', 'cosine'\} or None"):
        KernelBank(normalize=value).fit(data[0])


def test_bad_dtype(data):
    with pytest.raises(ValueError, match="'dtype' parameter of KernelBank"):
        KernelBank(dtype="int32").fit(data[0])


def test_non_psd_callable_kernel(data):
    X, _ = data

    def negative_distance(A, B):
        return -((A[:, None] - B[None]) ** 2).sum(-1)

    with pytest.raises(ValueError, match=r"Kernel 1 of 2 \(callable\(negative_distance\)\) is not "
                                         r"positive semidefinite"):
        KernelBank(kernels=[linear(), negative_distance]).fit_transform(X)
    with pytest.raises(ValueError, match="is not symmetric"):
        kernel_stack([lambda A, B: np.triu(A @ B.T)], X)
    with pytest.raises(ValueError, match=r"returned shape \(40, 39\); expected \(40, 40\)"):
        kernel_stack([lambda A, B: (A @ B.T)[:, 1:]], X)
    # test stacks are not square: no PSD check
    assert kernel_stack([negative_distance], X[:3], X).shape == (1, 3, 40)


def test_template_fit_needs_expansion(data):
    with pytest.raises(ValueError, match="per-feature template"):
        gaussian(sigma=1.0, columns="each").fit(data[0])
    assert len(gaussian(sigma=1.0, columns="each").expand(3)) == 3
    assert isinstance(gaussian(sigma=1.0).fit(data[0]), Kernel)


def test_pairwise_stack_consistency_all_families(data):
    """Every kernel of a big mixed bank equals its own single-kernel evaluation."""
    X, Z = data
    kernels = fit_kernels(kernel_bank("simplemkl") + kernel_bank("lmkl")
                          + kernel_bank("kloft_median", n_kernels=4), X)
    stack = kernel_stack(kernels, Z, X)
    for m, k in itertools.islice(enumerate(kernels), 0, None, 7):
        np.testing.assert_allclose(stack[m], k(Z, X), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------
# the "xu2010" bank assumes [0, 1]-scaled attributes: use it behind a MinMaxScaler
# ------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_xu2010_bank_in_a_minmax_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    from mklcore.datasets import load_sonar
    from mklcore.stpmkl import StPMKLClassifier

    X, y = load_sonar(return_X_y=True)
    X = X[:, ::4]  # 15 attributes: 10 * 16 = 160 kernels
    idx = np.random.default_rng(0).permutation(len(y))
    tr, te = idx[:80], idx[80:]
    pipe = make_pipeline(MinMaxScaler(), StPMKLClassifier(kernels=kernel_bank("xu2010"),
                                                          noise_level=0.1, lam=1e-2,
                                                          max_iter=30))
    pipe.fit(X[tr], y[tr])
    scaler, clf = pipe[0], pipe[-1]
    # the classifier saw min-max scaled attributes (training statistics), not raw X
    np.testing.assert_allclose(clf.X_fit_, MinMaxScaler().fit_transform(X[tr]))
    np.testing.assert_allclose(clf.X_fit_.min(0), 0.0)
    np.testing.assert_allclose(clf.X_fit_.max(0), 1.0)
    assert clf.weights_.shape == (10 * (15 + 1),)
    assert clf.weights_.sum() == pytest.approx(1.0)
    pred = pipe.predict(X[te])
    assert pred.shape == te.shape and set(pred) <= set(np.unique(y))
    np.testing.assert_array_equal(pred, clf.predict(scaler.transform(X[te])))
    majority = max(np.mean(y[te] == c) for c in np.unique(y))
    assert np.mean(pred == y[te]) > majority + 0.1


# ------------------------------------------------------------------------------------
# PSD by construction and the check_psd option
# ------------------------------------------------------------------------------------

def test_psd_by_construction_flags():
    from mklcore.kernels import CallableKernel

    built_in = [linear(), polynomial(3, coef0=0.0), gaussian(sigma=1.0), gaussian(),
                spectrum(2), weighted_degree(2, shift=1)]
    assert all(k.psd_by_construction for k in built_in)
    assert not as_kernel(lambda A, B: A @ B.T).psd_by_construction
    assert CallableKernel(lambda A, B: A @ B.T, psd=True).psd_by_construction
    with pytest.raises(ValueError, match="'psd' parameter of CallableKernel must be"):
        CallableKernel(lambda A, B: A @ B.T, psd="yes")


def _negative_distance(A, B):
    return -((A[:, None] - B[None]) ** 2).sum(-1)


def test_kernel_bank_check_psd_option(data):
    from mklcore.kernels import CallableKernel

    X, Z = data
    bank = [linear(), gaussian(sigma=2.0), polynomial(2)]
    ref = KernelBank(kernels=bank, normalize="cosine").fit_transform(X)
    for check in ("auto", True, False):  # the checks never change the stack
        kb = KernelBank(kernels=bank, normalize="cosine", check_psd=check)
        np.testing.assert_array_equal(kb.fit_transform(X), ref)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        KernelBank(kernels=[_negative_distance]).fit_transform(X)
    # skipped when asked, or when the user declares the callable PSD
    K = KernelBank(kernels=[_negative_distance], check_psd=False).fit_transform(X)
    np.testing.assert_array_equal(K[0], _negative_distance(X, X))
    declared = CallableKernel(_negative_distance, psd=True)
    assert KernelBank(kernels=[declared]).fit_transform(X).shape == (1, 40, 40)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        KernelBank(kernels=[declared], check_psd=True).fit_transform(X)
    with pytest.raises(ValueError, match="'check_psd' parameter of KernelBank must be one of"):
        KernelBank(check_psd="sometimes").fit(X)


def test_bank_stack_symmetric_by_construction(data):
    # the estimators skip the symmetry test of the bank's training stacks: they are exactly
    # symmetric for every built-in family and normalisation
    X, _ = data
    bank = [linear(), polynomial(3), gaussian(sigma=1.5), gaussian(sigma="median"),
            gaussian(sigma=1.0, columns=[2]), polynomial(2, columns=[0, 3])]
    for normalize in (None, "trace", "cosine"):
        for dtype in ("float64", "float32"):
            K = KernelBank(kernels=bank, normalize=normalize, dtype=dtype).fit_transform(X)
            np.testing.assert_array_equal(K, K.transpose(0, 2, 1))


def test_stack_bits_do_not_depend_on_the_blas_kernels(under_two_blas_kernels):
    """Gram matrices of narrow data are summed in a fixed order, so another CPU type's BLAS
    kernels (OPENBLAS_CORETYPE) give the same bits; the old BLAS product did not."""
    code = ("import hashlib, numpy as np\n"
            "from mklcore.kernels import kernel_stack, linear, gaussian, polynomial\n"
            "X = np.random.default_rng(0).normal(size=(300, 13))\n"
            "K = kernel_stack([linear(), gaussian(gamma=0.1), polynomial(degree=2)], X)\n"
            "Kt = kernel_stack([linear(), gaussian(gamma=0.1)], X[:50], X[50:])\n"
            "print(hashlib.sha256(K.tobytes() + Kt.tobytes()).hexdigest())\n")
    native, other = under_two_blas_kernels(code)
    assert native == other


@pytest.mark.parametrize("normalize", [None, "trace", "cosine"])
def test_kernel_bank_sum_equals_the_sum_of_its_stack(normalize):
    """fit_transform_sum / transform_sum (kernel by kernel, no stack) give the (weighted) sum
    of fit_transform / transform, and the same fitted statistics."""
    rng = np.random.default_rng(3)
    X, X_test = rng.normal(size=(40, 3)), rng.normal(size=(15, 3))
    kernels = kernel_bank("simplemkl", n_features=3) + [polynomial(degree=2)]
    stacked = KernelBank(kernels=kernels, normalize=normalize)
    K, K_test = stacked.fit_transform(X), stacked.transform(X_test)
    summed = KernelBank(kernels=kernels, normalize=normalize)
    S = summed.fit_transform_sum(X)
    np.testing.assert_allclose(S, K.sum(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(summed.transform_sum(X_test), K_test.sum(axis=0), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(summed.trace_factors_, stacked.trace_factors_)
    np.testing.assert_array_equal(summed.train_diag_, stacked.train_diag_)
    assert summed.descriptions_ == stacked.descriptions_
    w = rng.random(K.shape[0])
    np.testing.assert_allclose(KernelBank(kernels=kernels, normalize=normalize)
                               .fit_transform_sum(X, weights=w), np.tensordot(w, K, 1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(summed.transform_sum(X_test, weights=w),
                               np.tensordot(w, K_test, 1), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="weights for more kernels"):
        KernelBank(kernels=kernels).fit_transform_sum(X, weights=w[:2])
