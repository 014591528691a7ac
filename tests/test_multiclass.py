"""Multiclass: one-vs-rest problems sharing the kernel weights, against the cvxpy primal;
per-class weights as an option; every classifier handles more than two classes."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mklcore
from mklcore import decision
from mklcore.kernels import gaussian, kernel_stack, linear
from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
from mklcore.reference import solve_ovr_primal_cvx
from mklcore.silp import silp_solve
from mklcore.simplemkl import simplemkl_solve

BANK = [linear(), gaussian(sigma=1.0), gaussian(sigma=3.0)]
C = 1.0


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    return X[order], y[order]


@pytest.fixture(scope="module")
def stack(iris):
    X, y = iris
    X, y = X[:60], y[:60]
    K = kernel_stack(BANK, X)
    K /= np.trace(K, axis1=1, axis2=2)[:, None, None] / K.shape[1]
    Y = np.where(y[None] == np.arange(3)[:, None], 1.0, -1.0)
    return K, y, Y


SOLVERS = [
    ("lpmkl p=2", 2.0, lambda K, y: lpmkl_solve(K, y, p=2.0, C=C)),
    ("lpmkl p=4/3 cutting plane",
     4 / 3, lambda K, y: lpmkl_solve(K, y, p=4 / 3, C=C, solver="cutting_plane")),
    ("lpmkl p=1", 1.0, lambda K, y: lpmkl_solve(K, y, p=1.0, C=C)),
    ("simplemkl", 1.0, lambda K, y: simplemkl_solve(K, y, C=C, tol=1e-4)),
    ("silp", 1.0, lambda K, y: silp_solve(K, y, C=C)),
    ("sum kernel", np.inf, lambda K, y: sum_kernel_svm_solve(K, y, C=C)),
]


@pytest.mark.parametrize("name,p,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_shared_weights_solve_the_joint_problem(name, p, solve, stack):
    """The sum of the one-vs-rest problems over one weight vector: the cvxpy optimum,
    bracketed by the returned dual value and primal (the certificate of the joint problem)."""
    K, y, Y = stack
    res = solve(K, y)
    ref = solve_ovr_primal_cvx(K, Y, C, p)["objective"]
    assert res.success, res.message
    assert res.weights.shape == (3,)
    assert res.dual_coef.shape == (3, 60) and np.shape(res.intercept) == (3,)
    assert res.dual_objective <= ref * (1 + 1e-6) + 1e-8
    assert res.primal_objective >= ref * (1 - 1e-6) - 1e-8
    np.testing.assert_allclose(res.objective, ref, rtol=2e-3)
    # each row is a C-SVM dual of its labelling: sum_i c_ki = 0, 0 <= Y c <= C
    np.testing.assert_allclose(res.dual_coef.sum(axis=1), 0.0, atol=1e-9)
    assert np.all(Y * res.dual_coef >= -1e-12) and np.all(Y * res.dual_coef <= C + 1e-12)
    f = decision(res, K)
    assert f.shape == (60, 3)


def test_one_class_of_the_rest_equals_the_binary_svm(stack):
    """With fixed (sum) weights the problems decouple: row k is the binary SVM of class k."""
    K, y, Y = stack
    res = sum_kernel_svm_solve(K, y, C=C, svm_tol=1e-10)
    for k in range(3):
        svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K.sum(0), Y[k])
        np.testing.assert_allclose(decision(res, K)[:, k], svc.decision_function(K.sum(0)),
                                   atol=1e-6)


@pytest.mark.parametrize("cls", [mklcore.SumKernelSVC, mklcore.LpMKLClassifier,
                                 mklcore.SimpleMKLClassifier, mklcore.SILPMKLClassifier])
def test_wrapper_classifiers_share_weights_or_not(cls, iris):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    shared = cls(kernels=BANK, normalize="trace").fit(X[:100], labels[:100])
    assert shared.weights_.shape == (3,) and shared.dual_coef_.shape == (3, 100)
    assert shared.intercept_.shape == (3,) and shared.converged_
    assert shared.decision_function(X[100:]).shape == (50, 3)
    assert shared.score(X[100:], labels[100:]) > 0.9
    per = cls(kernels=BANK, normalize="trace", multiclass="ovr-per-class").fit(X[:100],
                                                                               labels[:100])
    assert per.weights_.shape == (3, 3) and len(per.estimators_) == 3
    assert per.score(X[100:], labels[100:]) > 0.9
    # the per-class models are the binary models of each class against the rest
    for k, model in enumerate(per.estimators_):
        binary = cls(kernels=BANK, normalize="trace").fit(X[:100], np.where(y[:100] == k, 1, -1))
        np.testing.assert_allclose(model.decision_function(X[100:]),
                                   binary.decision_function(X[100:]))
    predicted = per.predict(X[100:])
    np.testing.assert_array_equal(
        predicted, per.classes_[np.argmax(per.decision_function(X[100:]), axis=1)])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", [
    mklcore.QMKLClassifier(kernels=BANK),
    mklcore.StPMKLClassifier(kernels=BANK, noise_level=0.0, lam=1e-2),
    mklcore.MiPMKLClassifier(kernels=BANK, noise_level=0.1, lam=1e-2, max_alt=2, max_iter=30),
    mklcore.QSVMClassifier(),
    mklcore.LMKLClassifier(kernels=BANK, max_iter=5, random_state=0),
], ids=lambda e: type(e).__name__)
def test_every_other_classifier_fits_one_model_per_class(est, iris):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X[:90], y[:90])
    assert len(est.estimators_) == 3 and est.classes_.tolist() == [0, 1, 2]
    f = est.decision_function(X[90:])
    assert f.shape == (60, 3)
    assert est.score(X[90:], y[90:]) > 0.8


def test_sum_kernel_matches_svc_ovr_decision(iris):
    """SumKernelSVC's one-vs-rest decision equals SVC's binary machines on the summed kernel."""
    X, y = iris
    clf = mklcore.SumKernelSVC(kernels=BANK, svm_tol=1e-10).fit(X[:100], y[:100])
    K = kernel_stack(BANK, X[:100]).sum(0)
    K_test = kernel_stack(BANK, X[100:], X[:100]).sum(0)
    for k in range(3):
        svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(K, y[:100] == k)
        np.testing.assert_allclose(clf.decision_function(X[100:])[:, k],
                                   svc.decision_function(K_test), atol=1e-5)


def test_multiclass_needs_the_engine(stack):
    K, y, _ = stack
    with pytest.raises(ValueError, match="svm_backend='smo'"):
        simplemkl_solve(K, y, svm_backend="libsvm")
    with pytest.raises(ValueError, match="'multiclass' parameter of LpMKLClassifier"):
        mklcore.LpMKLClassifier(multiclass="ovo").fit(np.eye(3), [0, 1, 2])
