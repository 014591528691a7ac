"""probability=True: Platt scaling by internal cross-validation, calibrated on held-out data."""
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import mklcore
from mklcore._base import platt_sigmoid
from mklcore.kernels import gaussian, linear

BANK = [linear(), gaussian(sigma=1.0), gaussian(sigma=3.0)]


def _split(loader, test_size=0.4, n=None):
    X, y = loader(return_X_y=True)
    if n is not None:  # a stratified subsample keeps the tests fast
        X, _, y, _ = train_test_split(X, y, train_size=n, random_state=1, stratify=y)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, test_size=test_size, random_state=0, stratify=y)


@pytest.fixture(scope="module")
def cancer():
    return _split(load_breast_cancer, n=260)


@pytest.fixture(scope="module")
def iris():
    return _split(load_iris)


def _prior_log_loss(y_train, y_test):
    prior = np.bincount(y_train) / y_train.size
    return log_loss(y_test, np.tile(prior, (y_test.size, 1)))


def _reliability_error(y_test, proba, n_bins=5):
    """Expected calibration error of the predicted class's probability (weighted by bin)."""
    conf = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y_test
    edges = np.linspace(0, 1, n_bins + 1)
    err = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            err += inside.mean() * abs(conf[inside].mean() - correct[inside].mean())
    return err


def test_platt_sigmoid_minimises_the_regularised_likelihood():
    rng = np.random.default_rng(0)
    f = rng.normal(size=200)
    positive = rng.random(200) < 1 / (1 + np.exp(-3 * f + 0.5))
    A, B = platt_sigmoid(f, positive)
    n_pos = positive.sum()
    t = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (200 - n_pos + 2))

    def nll(ab):
        z = ab[0] * f + ab[1]
        return np.sum(t * z + np.logaddexp(0, -z))  # -log-likelihood of P = 1/(1+e^z)

    ref = minimize(nll, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose([A, B], ref.x, atol=1e-4)
    assert A < 0  # larger decision values, larger probability of the positive class


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", [
    mklcore.SumKernelSVC(kernels=BANK, normalize="trace"),
    mklcore.LpMKLClassifier(kernels=BANK, normalize="trace"),
    mklcore.SimpleMKLClassifier(kernels=BANK, normalize="trace"),
    mklcore.SILPMKLClassifier(kernels=BANK, normalize="trace", tol=1e-3),
    mklcore.QMKLClassifier(kernels=BANK, normalize="trace"),
    mklcore.QSVMClassifier(),
    mklcore.StPMKLClassifier(kernels=BANK, normalize="trace", noise_level=0.0, lam=1e-2),
], ids=lambda e: type(e).__name__)
def test_binary_probabilities_are_calibrated_on_held_out_data(est, cancer):
    X_tr, X_te, y_tr, y_te = cancer
    est = est.set_params(probability=True, random_state=0).fit(X_tr, y_tr)
    proba = est.predict_proba(X_te)
    assert proba.shape == (y_te.size, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(est.predict_log_proba(X_te), np.log(proba))
    # log-loss well below the class prior's (0.66 here) and a small reliability error
    assert log_loss(y_te, proba) < 0.3 * _prior_log_loss(y_tr, y_te)
    assert _reliability_error(y_te, proba) < 0.08
    # the probability orders the points as the decision function does
    f = est.decision_function(X_te)
    assert np.all(np.diff(proba[np.argsort(f), 1]) >= -1e-12)


@pytest.mark.parametrize("multiclass", ["ovr", "ovr-per-class"])
def test_multiclass_probabilities_are_normalised_and_calibrated(multiclass, iris):
    X_tr, X_te, y_tr, y_te = iris
    est = mklcore.LpMKLClassifier(kernels=BANK, normalize="trace", multiclass=multiclass,
                                  probability=True, random_state=0).fit(X_tr, y_tr)
    proba = est.predict_proba(X_te)
    assert proba.shape == (y_te.size, 3) and est.probA_.shape == (3,)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert log_loss(y_te, proba) < 0.3 * _prior_log_loss(y_tr, y_te)
    assert np.mean(proba.argmax(axis=1) == y_te) > 0.9


def test_probability_is_seeded_and_optional(cancer):
    X_tr, X_te, y_tr, _ = cancer
    kw = dict(kernels=BANK, normalize="trace", probability=True)
    a = mklcore.SumKernelSVC(**kw, random_state=1).fit(X_tr, y_tr).predict_proba(X_te)
    b = mklcore.SumKernelSVC(**kw, random_state=1).fit(X_tr, y_tr).predict_proba(X_te)
    np.testing.assert_array_equal(a, b)
    plain = mklcore.SumKernelSVC(kernels=BANK).fit(X_tr, y_tr)
    assert not hasattr(plain, "predict_proba") and not hasattr(plain, "probA_")
    with pytest.raises(ValueError, match="'probability' parameter of SumKernelSVC"):
        mklcore.SumKernelSVC(probability="yes").fit(X_tr, y_tr)
    with pytest.raises(ValueError, match="'random_state' parameter of LpMKLClassifier"):
        mklcore.LpMKLClassifier(random_state=-1).fit(X_tr, y_tr)


def test_tiny_classes_fall_back_to_training_decision_values():
    """A class of one point: no stratified fold can hold it out; the sigmoid is fitted on the
    training decision values (as a last resort) instead of failing."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1, 0)
    y[0] = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = mklcore.SumKernelSVC(probability=True, random_state=0).fit(X, y)
    assert est.predict_proba(X).shape == (30, 3)
