"""Tests of the experiment functions of the Dinuzzo (2010) RLS2 notebook."""

import numpy as np
import pandas as pd
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.utils import Bunch

from mklcore.repro import dinuzzo2010_rls2 as rx
from mklcore.repro.reporting import Claim


def test_rmse_and_distances():
    P = np.array([[1.0, 0.0], [3.0, 2.0]])
    y = np.array([1.0, 1.0])
    np.testing.assert_allclose(rx.rmse_columns(P, y), [np.sqrt(2.0), 1.0])
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    D = rx.squared_distances(A, B)
    np.testing.assert_allclose(D, ((A[:, None] - B[None]) ** 2).sum(-1), atol=1e-12)
    assert (rx.squared_distances(A, A).diagonal() >= 0).all()


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


def test_learned_from():
    df = pd.DataFrame({"n": [1, 2, 4, 8, 16], "m": [1.0, 0.05, 0.5, 0.08, 0.02]})
    assert rx.learned_from(df, "m") == 8
    assert rx.learned_from(df.assign(m=0.01), "m") == 1
    assert rx.learned_from(df.assign(m=[0.0, 0, 0, 0, 0.2]), "m") is None


def test_second_diff_ratio():
    t = np.linspace(0, 1, 7)
    assert rx.second_diff_ratio(t, np.column_stack([2 * t, -t])) < 1e-12
    assert rx.second_diff_ratio(t, np.column_stack([t ** 2, t])) > 0.1


def test_weighted_lasso_difference_small():
    X, y, _, _ = rx.binary_strings_split(0)
    curves = pd.DataFrame({"n": [20], "lam*": [1e-2]})
    assert rx.weighted_lasso_difference(X, y, curves, ns=(20,)) < 1e-6


def test_prostate_study_and_table1():
    data = rx.prostate_split()
    study = rx.prostate_study(data, np.logspace(-3, 1, 9), [0], lam_table=0.088)
    assert study.lam_cv >= study.lam_min
    assert study.cv_picks[0] == study.lam_cv
    table1, cmp1, table1_cv, cmp_cv = rx.table1_tables(study, data, rx.paper_table1(data.features))
    assert (cmp1.verdict == "match").all()
    assert list(table1.index) == ["Intercept", *data.features, "Test error", "Std error"]
    claim = rx.claim_prostate(study, rx.paper_table1(data.features), data.features,
                              (True, 1.0, 1e-9))
    assert claim.holds
    assert not rx.claim_prostate(study, rx.paper_table1(data.features), data.features,
                                 (True, 1.0, 1e-2)).holds


def _uci_rows(metric, perf_by_lam):
    rows = []
    for rep, perfs in enumerate(perf_by_lam):
        for lam, p in zip([1e-2, 1e-1, 1.0], perfs):
            rows.append({"lam": lam, "perf": p, "metric": metric, "n_selected": 2, "repeat": rep,
                         "path_iters": 6, "n_iter": 2, "path_time": 0.1, "success": True,
                         "gap": 1e-8})
    return pd.DataFrame(rows)


def test_at_best_lambda_and_flatness():
    acc = _uci_rows("accuracy", [[0.7, 0.8, 0.6], [0.72, 0.82, 0.6]])
    assert rx.at_best_lambda(acc)["lam*"] == 0.1
    rmse = _uci_rows("rmse", [[0.7, 0.8, 0.6], [0.72, 0.82, 0.6]])
    row = rx.at_best_lambda(rmse)
    assert row["lam*"] == 1.0 and row["perf mean"] == pytest.approx(0.6)
    # mean 0.81 at lambda* = 0.1, 0.6 at the neighbour 1.0; sd over splits at lambda* 0.02 / sqrt(2)
    assert rx.flatness(acc) == pytest.approx(0.21 / (0.02 / np.sqrt(2)))


def test_table2_and_table3_compare():
    uci = {name: Bunch(data=np.zeros((row[2], 1)), n_kernels=row[4], stand_in=None, note="")
           for name, row in rx.TABLE2.items()}
    uci["sonar"] = Bunch(data=np.zeros((10, 1)), n_kernels=793, stand_in="toy", note="")
    t2 = rx.table2_compare(uci)
    assert len(t2) == 2 * len(rx.TABLE2)
    assert t2.loc[t2.item == "Table 2 sonar (stand-in) examples", "verdict"].item() == "differs"
    assert (t2.verdict == "match").sum() == len(t2) - 1
    idx = pd.MultiIndex.from_tuples([("heart", 0.7), ("liver", 0.7)], names=["data", "ratio"])
    t34 = pd.DataFrame({"perf mean": [0.86, 0.7]}, index=idx)
    t3 = rx.table3_compare(t34)
    assert t3.verdict.tolist() == ["match"] and t3.item[0].endswith("(70/30)")
    assert rx.table3_compare(t34.loc[["liver"]]).empty


def test_claim_lemma5():
    starts = pd.DataFrame({"n_iter": [1, 1], "vertex_first": [True, True], "start": [False, True],
                           "lam1": [3.0, 200.0]})
    assert rx.claim_lemma5(starts).holds
    assert not rx.claim_lemma5(starts.assign(n_iter=[1, 2])).holds
    assert not rx.claim_lemma5(starts.assign(vertex_first=[True, False])).holds


def test_claim_binary_strings():
    n = [1, 4, 12, 14, 20, 100, 150]
    curves = pd.DataFrame({"n": n, "Lasso": 0.05, "linear RLS2": 0.04, "ridge": 0.5,
                           "Gaussian RLS": 0.6, "d1": 1 / 3, "d2": 1 / 3, "d3": 1 / 3})
    learn = {"linear RLS2": 12, "Lasso": 12, "ridge": 100, "Gaussian RLS": 150}
    assert rx.claim_binary_strings(curves, learn, 1e-9).holds
    assert not rx.claim_binary_strings(curves, learn, 1e-3).holds  # not the weighted Lasso
    assert not rx.claim_binary_strings(curves, {**learn, "ridge": 20}, 1e-9).holds
    skewed = curves.assign(d1=0.6, d2=0.2, d3=0.2)
    assert not rx.claim_binary_strings(skewed, learn, 1e-9).holds


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


def test_summary_table_sources():
    cmp = pd.DataFrame({"item": ["a"], "paper": [1.0], "ours": [1.0], "verdict": ["match"],
                        "source": ["Table 1"], "note": [""]})
    claims = [Claim("C1", "x", True, "e1"), Claim("C3b", "y", False, "e2", hard=False)]
    s = rx.summary_table(cmp, claims)
    assert s.columns.tolist() == ["item", "paper", "ours", "verdict", "source"]
    assert s.source.tolist() == ["Table 1", rx.CLAIM_SOURCES["C1"], rx.CLAIM_SOURCES["C3b"]]
    assert s.verdict.tolist() == ["match", "match", "differs"]
