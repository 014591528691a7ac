"""scikit-learn compatibility of every estimator, and reference equalities of the baselines."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import mklcore
from mklcore._base import common_constraints
from mklcore.kernels import gaussian, kernel_stack, linear

# LIBSVM stops at KKT violation `tol`; at tol=1e-8 decision values agree to well below 1e-6
DECISION_ATOL = 1e-6

# A small bank keeps check_estimator fast.
SMALL_BANK = [linear(), gaussian(gamma="scale")]
# StPMKL and MiPMKL solve their inner problem by first-order steps of length 1 / (largest
# eigenvalue): on the checks' data (features around 100, so linear-kernel entries near 1e4)
# each fit took thousands of steps, ~1-3 s (30x the unit-trace fit). They run the checks on
# unit-trace kernels; normalize=None is checked by the other estimators (the same base class
# applies it) and by tests/test_stpmkl.py.
WELL_SCALED = {"normalize": "trace"}

ESTIMATORS = [
    mklcore.SumKernelSVC(kernels=SMALL_BANK),
    mklcore.LpMKLClassifier(kernels=SMALL_BANK, p=2.0),
    mklcore.LpMKLClassifier(kernels=SMALL_BANK, p=1.5, solver="analytic"),
    mklcore.SimpleMKLClassifier(kernels=SMALL_BANK),
    mklcore.SILPMKLClassifier(kernels=SMALL_BANK),
    mklcore.StPMKLClassifier(kernels=SMALL_BANK, max_iter=100, **WELL_SCALED),
    mklcore.MiPMKLClassifier(kernels=SMALL_BANK, max_iter=100, **WELL_SCALED),
    mklcore.QMKLClassifier(kernels=SMALL_BANK),
    mklcore.QSVMClassifier(),
    mklcore.RLS2Regressor(kernels=SMALL_BANK),
    mklcore.RLS2Classifier(kernels=SMALL_BANK),
    mklcore.LinearRLS2Regressor(),
    mklcore.LinearRLS2Classifier(),
    mklcore.LMKLClassifier(kernels=SMALL_BANK, max_iter=3, random_state=0),
    mklcore.SumKernelSVR(kernels=SMALL_BANK),
    mklcore.LpMKLRegressor(kernels=SMALL_BANK, p=2.0),
    mklcore.SimpleMKLRegressor(kernels=SMALL_BANK),
    mklcore.SILPMKLRegressor(kernels=SMALL_BANK),
]


def _expected_failed_checks(estimator):
    return {}


# the checks fit on tiny random data with capped iterations; non-convergence is expected there
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=80) > 0, "pos", "neg")
    return X[:60], y[:60], X[60:]


def test_sum_kernel_svc_matches_svc_on_summed_kernel(data):
    X, y, X_test = data
    bank = [linear(), gaussian(sigma=1.0), gaussian(sigma=3.0)]
    clf = mklcore.SumKernelSVC(kernels=bank, C=2.0, svm_tol=1e-8).fit(X, y)
    K = kernel_stack(bank, X).sum(0)
    K_test = kernel_stack(bank, X_test, X).sum(0)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-8).fit(K, y)
    np.testing.assert_allclose(clf.decision_function(X_test), svc.decision_function(K_test),
                               atol=DECISION_ATOL)
    np.testing.assert_array_equal(clf.predict(X_test), svc.predict(K_test))
    assert clf.converged_ and 0 <= clf.gap_ < 1e-6
    assert clf.classes_.tolist() == ["neg", "pos"]


def test_sum_kernel_svc_in_pipeline_and_grid_search(data):
    X, y, _ = data
    pipe = make_pipeline(StandardScaler(), mklcore.SumKernelSVC(kernels=[gaussian(sigma=2.0)]))
    search = GridSearchCV(pipe, {"sumkernelsvc__C": [0.1, 1.0, 10.0]}, cv=3).fit(X, y)
    assert search.best_params_["sumkernelsvc__C"] in (0.1, 1.0, 10.0)
    assert 0.5 <= search.best_score_ <= 1.0


@pytest.mark.parametrize("bad,match", [
    ({"C": 0}, r"The 'C' parameter of SumKernelSVC must be a float in the range \(0, inf\)"),
    ({"C": -1.0}, r"The 'C' parameter of SumKernelSVC"),
    ({"normalize": "unit"}, r"The 'normalize' parameter of SumKernelSVC must be one of"),
    ({"kernels": []}, r"[Ee]mpty"),
])
def test_sum_kernel_svc_bad_parameters(data, bad, match):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        mklcore.SumKernelSVC(**bad).fit(X, y)


def test_bad_input_messages(data):
    X, y, _ = data
    clf = mklcore.SumKernelSVC(kernels=SMALL_BANK)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(X, y[:-1])
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(X_nan, y)
    with pytest.raises(ValueError, match="only one class"):
        clf.fit(X, np.full(len(y), "pos"))
    # more than two classes: one-vs-rest problems sharing the kernel weights
    assert clf.fit(X, np.arange(len(y)) % 3).decision_function(X).shape == (len(y), 3)

    def minus_linear(A, B):
        return -(A @ B.T)

    with pytest.raises(ValueError, match="not positive semidefinite"):
        mklcore.SumKernelSVC(kernels=[minus_linear]).fit(X, y)


class _CheckedSumKernelSVC(mklcore.SumKernelSVC):
    """SumKernelSVC with the shared ``check_input`` option of the base class."""

    _parameter_constraints = {**mklcore.SumKernelSVC._parameter_constraints,
                              **common_constraints("check_input")}

    def __init__(self, *, kernels=None, C=1.0, normalize=None, svm_tol=1e-3, check_input=True,
                 memory="auto", cache_size=1024):
        self._store_params(locals())


# the unchecked indefinite kernel below makes the SVM fail (status 2, a ConvergenceWarning)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_estimator_check_input_option(data):
    X, y, X_test = data
    bank = [linear(), gaussian(sigma=1.0), gaussian(sigma=3.0)]
    ref = mklcore.SumKernelSVC(kernels=bank, normalize="trace").fit(X, y)
    for check in (True, False):  # skipping the checks does not change the model
        clf = _CheckedSumKernelSVC(kernels=bank, normalize="trace", check_input=check).fit(X, y)
        assert clf.kernel_bank_.check_psd == ("auto" if check else False)
        assert "check_input" not in clf.solver_params()
        np.testing.assert_array_equal(clf.decision_function(X_test), ref.decision_function(X_test))

    def minus_linear(A, B):
        return -(A @ B.T)

    with pytest.raises(ValueError, match="not positive semidefinite"):
        _CheckedSumKernelSVC(kernels=[minus_linear]).fit(X, y)
    # the user takes responsibility: the indefinite kernel reaches the solver unchecked
    clf = _CheckedSumKernelSVC(kernels=[linear(), minus_linear], check_input=False)
    assert clf.fit(X, y).kernel_bank_.n_kernels_ == 2
    with pytest.raises(ValueError, match="'check_input' parameter of _CheckedSumKernelSVC"):
        _CheckedSumKernelSVC(check_input="no").fit(X, y)
