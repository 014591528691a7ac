"""Tests of mklcore.repro.hinrichs2012_qmkl: the data, the Q matrices and the plots.

The protocol (folds, choice of C and mu, fits, claims) is code of
``notebooks/hinrichs2012_qmkl.ipynb`` and runs there (nbval in quick mode, the committed full
run); the generic helpers it uses are tested in ``test_reporting.py``.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mklcore.qmkl import graph_laplacian, grid_laplacian  # noqa: E402
from mklcore.repro import hinrichs2012_qmkl as qm  # noqa: E402


def test_tiny_problem_and_theorem2_caveat():
    K, y, Q = qm.tiny_problem()
    assert K.shape == (5, 30, 30) and set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 30.0)
    assert np.trace(Q) == pytest.approx(5.0)
    # 1 is an eigenvector of I + L with eigenvalue 1: the proxy is exactly 1
    S = np.abs(np.corrcoef(np.random.default_rng(0).normal(size=(10, 5)).T))
    assert qm.theorem2_proxy(graph_laplacian(S, normalize_trace=False)) == pytest.approx(1.0)
    assert qm.theorem2_proxy(np.eye(4)) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_theorem2_equality_at_laplacian_plus_identity(seed):
    # Q = L + I with L = D - S a graph Laplacian: L1 = 0, so 1 is an eigenvector of Q with
    # eigenvalue 1 and 1'Q^-1 1 / M = 1, although Q != I and eig(Q^-1) lies in (0, 1]
    rng = np.random.default_rng(seed)
    M = 12
    S = np.abs(np.corrcoef(rng.normal(size=(30, M)).T))
    np.fill_diagonal(S, 0.0)
    L = qm.correlation_laplacian(S, normalized=False)
    np.testing.assert_allclose(L @ np.ones(M), 0.0, atol=1e-12)
    Q = L + np.eye(M)
    assert not np.allclose(Q, np.eye(M))
    eig_inv = 1.0 / np.linalg.eigvalsh(Q)
    assert eig_inv.min() > 0 and eig_inv.max() <= 1 + 1e-12
    np.testing.assert_allclose(Q @ np.ones(M), np.ones(M), atol=1e-12)
    assert qm.ones_eigen_residual(Q) < 1e-12
    assert abs(qm.theorem2_proxy(Q) - 1.0) < 1e-12
    # the same Laplacian, but a Q without 1 as eigenvector: factor below 1, residual large
    Q2 = L + np.diag(rng.uniform(1.0, 2.0, M))
    assert qm.ones_eigen_residual(Q2) > 1e-3 and qm.theorem2_proxy(Q2) < 1 - 1e-3
    # the normalised Laplacian's null vector is D^1/2 1, not 1: no exact equality
    Qn = qm.correlation_laplacian(S) + np.eye(M)
    assert qm.ones_eigen_residual(Qn) > 1e-6


def test_theorem2_equality_text_follows_the_numbers():
    exact = qm.theorem2_equality_text("Q = D - S + I", 1.0 + 4e-16, 3e-16)
    assert "exact counterexample" in exact and "1.000000000000" in exact
    assert "<= 1e-09 (round-off)" in exact
    # the factor 1 up to round-off, but 1 is not an eigenvector: another cause, said so
    other = qm.theorem2_equality_text("Q", 1.0 + 1e-12, 0.2)
    assert "another cause" in other and "exact counterexample" not in other
    # 1 is an eigenvector, yet the measured factor is off: the numerics, not the theorem
    lost = qm.theorem2_equality_text("Q", 1.0 + 1e-6, 1e-15)
    assert "not confirmed numerically" in lost and "exact counterexample" not in lost
    # neither: no equality case
    none = qm.theorem2_equality_text("Q", 0.8, 0.3)
    assert "does not occur" in none and "0.800000000000" in none
    # the boundary is the tolerance
    assert "exact counterexample" in qm.theorem2_equality_text("Q", 1.0 + 0.9e-9, 0.0)
    assert "exact counterexample" not in qm.theorem2_equality_text("Q", 1.0 + 2e-9, 0.0)
    assert "exact counterexample" not in qm.theorem2_equality_text("Q", 1.0, 0.0, tol=-1.0)


def test_regulariser_shapes_and_block():
    groups = np.array([0, 0, 1])
    corr = np.array([[1.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.0]])
    B = qm.regulariser("B", corr, groups)
    np.testing.assert_allclose(B > 0, [[1, 1, 0], [1, 1, 0], [0, 0, 1]])
    for method in ("Cov", "Lap(Cov)", "Lap(Cov)+B", qm.DENSE_ALTERNATIVE):
        Q = qm.regulariser(method, corr, groups)
        assert Q.shape == (3, 3) and np.trace(Q) == pytest.approx(3.0)
        assert np.linalg.eigvalsh(Q).min() > 0
    with pytest.raises(ValueError, match="Unknown Q-MKL row"):
        qm.regulariser("l2", corr, groups)


def test_correlation_laplacian_normalised_and_dense():
    rng = np.random.default_rng(0)
    corr = np.corrcoef(rng.normal(size=(20, 6)).T)
    S = np.abs(corr)
    np.fill_diagonal(S, 0.0)
    d = S.sum(axis=1)
    L = qm.correlation_laplacian(corr)
    np.testing.assert_allclose(np.diag(L), 1.0)
    np.testing.assert_allclose(L @ np.sqrt(d), 0.0, atol=1e-12)  # null vector D^1/2 1
    eig = np.linalg.eigvalsh(L)
    assert eig.min() > -1e-12 and eig.max() < 2 + 1e-12
    dense = qm.correlation_laplacian(corr, normalized=False)
    np.testing.assert_allclose(dense, np.diag(d) - S)
    # the dense Laplacian + B is dominated by its diagonal, the normalised one is not
    groups = np.array([0, 0, 0, 1, 1, 1])
    Q_norm = qm.regulariser("Lap(Cov)+B", corr, groups)
    Q_dense = qm.regulariser(qm.DENSE_ALTERNATIVE, corr, groups)
    off = ~np.eye(6, dtype=bool)
    assert np.abs(Q_norm[off]).max() > np.abs(Q_dense[off]).max()
    # an isolated kernel gets the row of the identity
    iso = np.eye(3)
    np.testing.assert_allclose(qm.correlation_laplacian(iso), np.eye(3))


def test_plots_take_the_notebook_tables():
    methods = ["l1", "l2", "Lap(Cov)+B", qm.DENSE_ALTERNATIVE]
    metrics = ["accuracy", "sensitivity", "specificity"]
    t1 = pd.DataFrame({f"{m}_{s}": [0.9, 0.8, 0.85, 0.95] for m in metrics for s in ("mean", "se")},
                      index=methods)
    paper = pd.DataFrame({m: [0.86, 0.87] for m in metrics}, index=["l1", "l2"])
    fig = qm.plot_table1(t1, paper)
    hatched = [p for p in fig.axes[0].patches if p.get_hatch() == "//"]
    assert len(hatched) == len(methods)  # one per method, NaN height where the paper has none
    assert np.isnan([p.get_height() for p in hatched]).sum() == 2
    plt.close(fig)
    groups = np.repeat(["u", "v"], 3)
    assert qm.view_bounds(groups, ["u", "v"]) == [0, 3, 6]
    corr = np.corrcoef(np.random.default_rng(0).normal(size=(20, 6)).T)
    L = qm.correlation_laplacian(corr)
    beta = np.linspace(0.1, 0.6, 6)
    plt.close(qm.plot_figure2(qm.regulariser("Lap(Cov)+B", corr, groups), corr, L, beta, groups,
                              ["u", "v"]))
    plt.close(qm.plot_view_weights({m: beta for m in ("l1", "l2", "Lap(Cov)+B")}, groups,
                                   ["u", "v"]))
    X = np.random.default_rng(1).uniform(size=(10, 64))
    y = np.repeat([1.0, -1.0], 5)
    fig = qm.plot_weight_maps(X, y, {"SVM": ("SVM (mu=0, C=1)", X[0] - X[5])})
    assert len(fig.axes) == 2 and "E(w)=" in fig.axes[1].get_title()
    plt.close(fig)


def test_data_loaders():
    digit, views = qm.mfeat_data()
    assert len(digit) == 2000 and list(views) == ["fou", "fac", "kar", "pix", "zer", "mor"]
    X, y = qm.pixel_data()
    assert X.shape[1] == 64 and set(np.unique(y)) == {-1.0, 1.0} and X.max() <= 1.0


# ----------------------------------------------------------------------------- the notebook's
# functions, taken from notebooks/hinrichs2012_qmkl.ipynb without running its experiments
@pytest.fixture(scope="module")
def nb():
    from mklcore.repro.notebook import notebook_functions

    return notebook_functions("hinrichs2012_qmkl")


def test_notebook_realisation_and_single_C(nb):
    idx, y = nb["realisation"](0)
    digit, _ = qm.mfeat_data()
    assert len(idx) == 120 and np.bincount(digit[idx]).tolist() == [12] * 10
    assert np.array_equal(y > 0, digit[idx] < 5)
    # one C in the grid: no inner CV, every method gets it
    assert nb["select_C"](idx, y, 0, [2.0], c_q=1.0, svm_tol=1e-5, tol=1e-2) == dict.fromkeys(
        nb["METHODS"], 2.0)


def test_notebook_qsvm_fit_is_the_svm_at_mu_0(nb):
    X, y = qm.pixel_data()
    X, y = X[:60], y[:60]
    svm, qsvm = nb["qsvm_fit"](X, y, 0.0, 1.0, 1e-8), nb["qsvm_fit"](X, y, 10.0, 1.0, 1e-8)
    L = grid_laplacian(8, 8, mu=1.0, add_identity=False)
    assert qm.dirichlet_ratio(qsvm.coef, L) < qm.dirichlet_ratio(svm.coef, L)  # smoother map
