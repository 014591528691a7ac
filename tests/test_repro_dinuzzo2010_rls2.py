"""Tests of mklcore.repro.dinuzzo2010_rls2: the Experiment-1 lower bounds and the OVA helpers.

The protocol (curves, CV, Table 1, the UCI tables, the claims) is code of
``notebooks/dinuzzo2010_rls2.ipynb`` and runs there (nbval in quick mode, the committed full
run); the generic helpers it uses are tested in ``test_reporting.py``.
"""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from mklcore.repro import dinuzzo2010_rls2 as rx


def test_rmse_and_distances():
    P = np.array([[1.0, 0.0], [3.0, 2.0]])
    y = np.array([1.0, 1.0])
    np.testing.assert_allclose(rx.rmse_columns(P, y), [np.sqrt(2.0), 1.0])
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    D = rx.squared_distances(A, B)
    np.testing.assert_allclose(D, ((A[:, None] - B[None]) ** 2).sum(-1), atol=1e-12)
    assert (rx.squared_distances(A, A).diagonal() >= 0).all()


def test_grid_step_rise():
    """The larger rise from the grid minimum to its neighbours, one-sided at the grid's ends,
    and a bound on how far a convex curve's minimum lies below the grid's minimum."""
    assert rx.grid_step_rise([3.0, 1.0, 1.5, 4.0]) == pytest.approx(2.0)
    assert rx.grid_step_rise([0.5, 0.7, 2.0]) == pytest.approx(0.2)  # minimum at the start
    assert rx.grid_step_rise([2.0, 1.0, 1.0]) == pytest.approx(1.0)  # first of tied minima
    x = np.log(np.logspace(-3, 1, 9))
    f = (x - 0.37) ** 2  # convex in log lambda, minimum between grid points
    k = int(np.argmin(f))
    assert f[k] - 0.0 <= rx.grid_step_rise(f) and rx.grid_step_rise(f) > 0
    with pytest.raises(ValueError, match="errs"):
        rx.grid_step_rise([1.0])
    with pytest.raises(ValueError, match="errs"):
        rx.grid_step_rise([1.0, np.nan])


def test_kernel_ridge_lower_bound_matches_sklearn():
    rng = np.random.default_rng(1)
    X, X_te = rng.normal(size=(15, 4)), rng.normal(size=(10, 4))
    y, y_te = X @ [1.0, -1, 0, 0] + 0.1 * rng.normal(size=15), X_te @ [1.0, -1, 0, 0]
    lams = np.logspace(-3, 2, 6)
    ours = rx.kernel_ridge_lower_bound(X @ X.T, X_te @ X.T, y, y_te, lams)
    K, K_te = X @ X.T, X_te @ X.T
    ref = min(np.sqrt(np.mean((KernelRidge(alpha=a, kernel="precomputed").fit(K, y).predict(K_te)
                               - y_te) ** 2)) for a in lams)
    assert ours == pytest.approx(ref, rel=1e-8)


def test_lasso_lower_bound_unit_weights_is_plain_lasso():
    rng = np.random.default_rng(2)
    X, X_te = rng.normal(size=(20, 6)), rng.normal(size=(10, 6))
    y, y_te = X[:, 0] - X[:, 1], X_te[:, 0] - X_te[:, 1]
    alphas = np.logspace(-3, 0, 5)
    plain = rx.lasso_lower_bound(X, y, X_te, y_te, alphas)
    unit = rx.lasso_lower_bound(X, y, X_te, y_te, alphas, weights=np.ones(6))
    assert unit == pytest.approx(plain)
    # a zero weight drops the column: without the informative first column the error grows
    w = np.ones(6)
    w[0] = 0.0
    assert rx.lasso_lower_bound(X, y, X_te, y_te, alphas, weights=w) > plain + 0.1


def test_ova_predict_and_ova_lasso():
    W = np.zeros((2, 3, 2))
    W[0, 0, 0] = W[0, 1, 1] = 1.0  # lambda 0: class 0 if x0 large, class 1 if x1 large
    W[1, 2] = 1.0  # lambda 1: always class 2
    X = np.array([[2.0, 0], [0, 2.0]])
    classes = np.array([10, 11, 12])
    np.testing.assert_array_equal(rx.ova_predict(W, X, classes), [[10, 11], [12, 12]])
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 10)
    Xc = np.eye(3)[y] * 3 + 0.1 * rng.normal(size=(30, 3))
    model = rx.OVALasso(0.01).fit(Xc, y)
    assert (model.predict(Xc) == y).all()


def test_cv_choice_takes_the_first_best():
    from sklearn.neighbors import KNeighborsClassifier

    X = np.r_[np.zeros((6, 1)), np.ones((6, 1))]
    y = np.r_[np.zeros(6), np.ones(6)]
    folds = [{"train": np.r_[0:3, 6:9], "test": np.r_[3:6, 9:12]},
             {"train": np.r_[3:6, 9:12], "test": np.r_[0:3, 6:9]}]
    # k = 1 and k = 3 are both perfect: the first wins; k = 6 votes 3 to 3 and is worse
    assert rx.cv_choice(lambda k: KNeighborsClassifier(n_neighbors=k), [6, 1, 3], X, y,
                        folds) == 1


def test_table2_and_data():
    assert set(rx.TABLE2) >= {"heart", "sonar"} and rx.TABLE2["sonar"][4] == 793
    b = rx.rls2_benchmark_data("heart")
    assert b.data.shape == (270, 13) and b.n_kernels == 182 and set(np.unique(b.target)) == {-1, 1}
    X, y, X_te, y_te = rx.binary_strings_split(0)
    assert X.shape == (150, 100) and X_te.shape == (100, 100)


# ----------------------------------------------------------------------------- the notebook's
# functions, taken from notebooks/dinuzzo2010_rls2.ipynb without running its experiments
@pytest.fixture(scope="module")
def nb():
    from mklcore.repro.notebook import notebook_functions

    return notebook_functions("dinuzzo2010_rls2")


def test_learned_from(nb):
    import pandas as pd

    df = pd.DataFrame({"n": [1, 2, 4, 8, 16], "m": [1.0, 0.05, 0.5, 0.08, 0.02]})
    assert nb["learned_from"](df, "m") == 8
    assert nb["learned_from"](df.assign(m=0.01), "m") == 1
    assert nb["learned_from"](df.assign(m=[0.0, 0, 0, 0, 0.2]), "m") is None


def test_second_diff_ratio(nb):
    t = np.linspace(0, 1, 7)
    assert nb["second_diff_ratio"](t, np.column_stack([2 * t, -t])) < 1e-12
    assert nb["second_diff_ratio"](t, np.column_stack([t ** 2, t])) > 0.1


def test_linear_rls2_is_the_weighted_lasso(nb):
    import pandas as pd

    X, y, _, _ = rx.binary_strings_split(0)
    curves = pd.DataFrame({"n": [20], "lam*": [1e-2]})
    assert nb["weighted_lasso_difference"](X, y, curves, ns=(20,)) < 1e-6
