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
    paper = rx.paper_table1(data.features)
    table1, cmp1 = rx.table1_tables(study, data, paper)
    assert list(table1.index) == ["Intercept", *data.features, "Test error", "Std error"]
    hand = cmp1[cmp1.item.str.contains("hand-set")]
    protocol = cmp1[cmp1.item.str.contains("protocol")]
    assert len(hand) == len(protocol) == 11
    # the hand-set λ reproduces the column by construction: not compared
    assert (hand.verdict == "n/a").all() and hand.rule.str.contains("matched by construction").all()
    assert (protocol.verdict != "n/a").all()
    ls = cmp1[cmp1.item.str.startswith("Table 1 LS")]
    assert ls.verdict.tolist() == ["match"]
    # C3 is decided on the protocol's model: it holds when that model is the hand-set one
    c3 = rx.claim_prostate(study, paper, data.features)
    assert c3.rule and c3.tolerance
    diff = np.abs(np.r_[study.res_cv.intercept, study.res_cv.coef] - paper["RLS2"].to_numpy()[:9])
    assert c3.holds == bool(diff.max() <= 0.01 and abs(study.test_cv - 0.454) <= 0.005
                            and (study.res_cv.coef != 0).sum() == 5)
    as_paper = Bunch(**{**study, "res_cv": study.res_table, "test_cv": study.test_table,
                        "se_cv": study.se_table, "lam_cv": study.lam_table})
    assert rx.claim_prostate(as_paper, paper, data.features).holds
    # second lowest error: a rank claim; its 0.011 margin with SE 0.15 is no significant gain
    c3c = rx.claim_prostate_error(as_paper, paper)
    assert c3c.holds is True and "Lasso" in c3c.evidence and "inconclusive" in c3c.evidence
    worse = Bunch(**{**as_paper, "test_cv": 0.485})  # above the Lasso's 0.479
    assert rx.claim_prostate_error(worse, paper).holds is False


def test_claim_path_curvature():
    assert rx.claim_path_curvature((True, 1.0, 1e-9)).holds
    assert not rx.claim_path_curvature((True, 1.0, 1e-2)).holds
    assert not rx.claim_path_curvature((False, 1.0, 1e-9)).holds


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
    uci["servo"] = Bunch(data=np.zeros((167, 10)), n_kernels=143, stand_in="diabetes", note="")
    t2 = rx.table2_compare(uci)
    assert len(t2) == 2 * len(rx.TABLE2)
    stand = t2[t2.item.str.contains("stand-in")]
    assert len(stand) == 4 and (stand.verdict == "n/a").all()
    servo = t2.set_index("item").rule
    assert "matched by construction" in servo["Table 2 servo (stand-in) examples"]
    assert "different data" in servo["Table 2 servo (stand-in) kernels"]
    assert "different data" in servo["Table 2 sonar (stand-in) examples"]
    assert (t2.verdict == "match").sum() == len(t2) - 4
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


def _curves(**cols):
    n = [1, 4, 8, 9, 12, 14, 20, 30, 100, 150]
    base = {"n": n, "Lasso": 0.05, "linear RLS2": 0.04, "weighted Lasso (D1)": 0.04,
            "ridge": 0.5, "Gaussian RLS": 0.6, "d1": 1 / 3, "d2": 1 / 3, "d3": 1 / 3,
            "d other": 0.0}
    return pd.DataFrame({**base, **cols})


def test_claim_binary_strings():
    learn = {"linear RLS2": 14, "Lasso": 12, "ridge": 100, "Gaussian RLS": 150}
    c2 = rx.claim_binary_strings(_curves(), learn)
    assert c2.holds and c2.rule and c2.tolerance
    assert not rx.claim_binary_strings(_curves(), {**learn, "linear RLS2": 15}).holds
    assert not rx.claim_binary_strings(_curves(), {**learn, "Lasso": None}).holds
    assert not rx.claim_binary_strings(_curves(), {**learn, "ridge": 20}).holds


def test_claim_rls2_below_lasso_lists_failures():
    assert rx.claim_rls2_below_lasso(_curves()).holds
    rls2 = np.array([0.04, 0.04, 0.9, 0.9, 0.04, 0.06, 0.05 + 5e-5, 0.04, 0.04, 0.04])
    c2b = rx.claim_rls2_below_lasso(_curves(**{"linear RLS2": rls2}))
    assert not c2b.holds  # above the Lasso at n = 9 and 14 (not 8: before; not 20: within 1e-4)
    assert "[9, 14]" in c2b.evidence and "[8]" in c2b.evidence
    assert "by more than 0.01 at n = [9]" in c2b.evidence


def test_claim_binary_weights():
    assert rx.claim_binary_weights(_curves()).holds
    late = _curves(d1=[0.6] * 5 + [1 / 3] * 5, d2=[0.2] * 5 + [1 / 3] * 5)
    assert rx.claim_binary_weights(late).holds  # from n = 14 on
    later = _curves(d1=[0.6] * 6 + [1 / 3] * 4, d2=[0.2] * 6 + [1 / 3] * 4)
    assert not rx.claim_binary_weights(later).holds  # only from n = 20 on
    assert not rx.claim_binary_weights(_curves(d1=0.6, d2=0.2, d3=0.2)).holds


def test_claim_microarray_is_a_rank_claim_with_its_gain_tests_shown():
    micro = Bunch(summary={"genes": 30})
    n = 20
    ours = np.zeros(n)
    two = np.r_[np.ones(2), np.zeros(n - 2)]
    tie = rx.claim_microarray(micro, {"linear SVM": two, "OVA Lasso": ours.copy(),
                                      "Linear RLS2 (OVA)": ours}, "toy", 2308)
    assert tie.holds is True  # tied for the best: the paper claims no significance
    assert "gain" in tie.evidence and "tie for the best" in tie.rule
    many = np.r_[np.ones(12), np.zeros(n - 12)]
    assert rx.claim_microarray(micro, {"linear SVM": many, "OVA Lasso": many,
                                       "Linear RLS2 (OVA)": ours}, "toy", 2308).holds is True
    one = np.r_[np.ones(1), np.zeros(n - 1)]
    assert rx.claim_microarray(micro, {"linear SVM": two, "OVA Lasso": ours.copy(),
                                       "Linear RLS2 (OVA)": one}, "toy", 2308).holds \
        is False  # one more error than the Lasso
    assert rx.claim_microarray(Bunch(summary={"genes": 300}), {
        "linear SVM": many, "OVA Lasso": many, "Linear RLS2 (OVA)": ours}, "toy", 2308).holds \
        is False  # 13 % of the genes


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
    from mklcore.repro.reporting import SUMMARY_COLUMNS, compare

    cmp = compare([{"item": "a", "paper": 1.0, "ours": 1.0, "atol": 0.01, "source": "Table 1"}])
    claims = [Claim("C1", "x", True, "e1", rule="r1", tolerance="exact"),
              Claim("C3b", "y", False, "e2", hard=False, rule="r2"),
              Claim("C3c", "z", "inconclusive", "e3", rule="r3", tolerance="p < 0.05")]
    s = rx.summary_table(cmp, claims)
    assert s.columns.tolist() == SUMMARY_COLUMNS
    assert s.source.tolist() == ["Table 1", *(rx.CLAIM_SOURCES[c.id] for c in claims)]
    assert s.verdict.tolist() == ["match", "match", "differs", "inconclusive"]
    assert (s.rule != "").all() and (s.tolerance != "").all()


def test_differences_text_is_computed():
    from types import SimpleNamespace

    uci = {"servo": Bunch(stand_in="toy", data=np.zeros((167, 10)), n_kernels=143,
                          paper={"examples": 167, "features": 4, "kernels": 156}),
           "heart": Bunch(stand_in=None)}
    micro_data = Bunch(name="Khan", y_train=np.zeros(63), y_test=np.zeros(20),
                       X_train=np.zeros((63, 5)))
    paper = rx.paper_table1([f"x{i}" for i in range(8)])
    coef = paper["RLS2"].to_numpy()[1:9].copy()
    hand = SimpleNamespace(intercept=2.452, coef=coef)
    coef_cv = coef.copy()
    coef_cv[3] = 0.025
    study = Bunch(res_cv=SimpleNamespace(intercept=2.452, coef=coef_cv), res_table=hand,
                  lam_cv=0.2, lam_table=0.088, test_cv=0.468, se_cv=0.16, test_table=0.454,
                  cv_picks=[0.2, 0.15, 0.47])
    rls2 = np.array([0.04, 0.04, 0.04, 0.9, 0.04, 0.04, 0.04, 0.04, 0.04, 0.04])
    curves = _curves(**{"linear RLS2": rls2, "weighted Lasso (D1)": rls2})
    claims = [rx.claim_rls2_below_lasso(curves), Claim("C3", "t", False, "e", rule="r")]
    conv = pd.DataFrame([{"experiment": "E", "stopping rule": "gap", "fits": 4,
                          "met the rule": 3}])
    text = rx.differences_text(uci, micro_data, study, paper, curves, claims, 3, conv, ["a.csv"])
    assert "servo → toy (167 rows × 10 inputs, 143 kernels" in text
    assert "14 Cancers → Khan (63/20 patients × 5 genes" in text
    assert "λ = 0.2: test MSE 0.468" in text and "x3: 0.025 vs 0.104" in text
    assert "verdict: differs" in text and "not a grid effect" in text
    assert "E: 3 of 4 (gap)" in text and "a.csv" in text
