"""Tests of the pure helpers of mklcore.repro.hinrichs2012_qmkl (tables, claims, spreads)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from mklcore.qmkl import graph_laplacian
from mklcore.repro import hinrichs2012_qmkl as qm
from mklcore.repro.reporting import SUMMARY_COLUMNS, claims_table


def _t1(acc, extra=0.0):
    """A table1_means-like frame: the given accuracies, other metrics = accuracy + extra."""
    rows = {}
    for m in qm.METHODS:
        a = acc[m]
        rows[m] = {"n": 10, **{f"{k}_mean": a + (extra if k != "accuracy" else 0.0)
                               for k in qm.METRICS},
                   **{f"{k}_se": 0.01 for k in qm.METRICS}}
    return pd.DataFrame.from_dict(rows, orient="index")


def _folds(acc_by_method, n_folds=4):
    """Rows as table1_fold returns them (with run's repeat/seed columns)."""
    rows = []
    for fold in range(n_folds):
        for m in qm.METHODS:
            rows.append({"fold": fold, "repeat": 0, "seed": 1, "method": m,
                         "accuracy": acc_by_method[m][fold]})
    return pd.DataFrame(rows)


def test_relative_difference():
    assert qm.relative_difference(1.1, 1.0) == pytest.approx(0.1)
    assert qm.relative_difference(-2.0, -1.0) == pytest.approx(1.0)


def test_spread_uniform_and_one_hot():
    groups = np.array(["a", "a", "b", "b"])
    eff_k, eff_v, share = qm.spread(np.ones(4), groups, ["a", "b"])
    assert eff_k == pytest.approx(4.0) and eff_v == pytest.approx(2.0)
    np.testing.assert_allclose(share, [0.5, 0.5])
    eff_k, eff_v, share = qm.spread(np.array([0.0, 0.0, 0.0, 2.0]), groups, ["a", "b"])
    assert eff_k == pytest.approx(1.0) and eff_v == pytest.approx(1.0)
    np.testing.assert_allclose(share, [0.0, 1.0])


def test_weight_spread_averages_over_folds():
    groups = np.array(["a", "a", "b", "b"])
    weights = {m: np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]]) for m in qm.METHODS}
    table = qm.weight_spread(weights, groups, ["a", "b"])
    assert list(table.index) == list(qm.METHODS)
    assert table.loc["l1", "eff. kernels"] == pytest.approx((4.0 + 1.0) / 2)
    assert table.loc["l2", "a"] == pytest.approx((0.5 + 1.0) / 2)


def test_table1_comparison_gains_and_verdicts():
    acc = dict(zip(qm.METHODS, [0.864, 0.875, 0.875, 0.884, 0.884, 0.888, 0.80, 0.87]))
    table = qm.table1_comparison(_t1(acc))
    assert len(table) == 3 * len(qm.PAPER_TABLE1) + 2
    gains = table.set_index("item")
    assert gains.loc["accuracy gain Lap(Cov)+B - l1", "paper"] == pytest.approx(0.024)
    assert gains.loc["accuracy gain Lap(Cov)+B - max(l1.5, l2)", "paper"] == pytest.approx(0.013)
    assert gains.loc["accuracy gain Lap(Cov)+B - l1", "ours"] == pytest.approx(0.024)
    # ADNI vs mfeat: no row gets a verdict, even where the numbers happen to be equal
    assert (table["verdict"] == "n/a").all()
    assert (table["rule"] == f"not compared: {qm.TABLE1_DATA}").all()


def test_table1_ttests_best_against_the_rest():
    acc = {m: [0.9, 0.9, 0.8, 0.9] for m in qm.METHODS}
    acc["Lap(Cov)+B"] = [1.0, 1.0, 0.9, 1.0]
    acc["B"] = [0.5, 0.6, 0.5, 0.6]
    table1 = _folds(acc)
    t1 = _t1({m: float(np.mean(v)) for m, v in acc.items()})
    acc_wide, tests = qm.table1_ttests(table1, t1)
    assert acc_wide.shape == (4, len(qm.METHODS))
    assert len(tests) == len(qm.METHODS) - 1 + 3
    first = tests.iloc[: len(qm.METHODS) - 1]
    assert first["comparison"].str.startswith("Lap(Cov)+B vs").all()
    b_row = first.set_index("comparison").loc["Lap(Cov)+B vs B"]
    assert b_row["mean diff"] == pytest.approx(0.425)
    assert not b_row["not different from best (p > 0.01)"]
    assert tests.iloc[-3:]["not different from best (p > 0.01)"].isna().all()


def test_uci_table_margin():
    rows = []
    for d, accs in {"heart": (0.80, 0.70, 0.79), "pima": (0.60, 0.65, 0.70)}.items():
        for m, a in zip(qm.UCI_METHODS, accs):
            rows.append({"dataset": d, "method": m, "accuracy": a, "n_kernels": 5})
    table = qm.uci_table(pd.DataFrame(rows), ["pima", "heart"])
    assert list(table.index) == ["pima", "heart"]
    assert table.loc["heart", "Q - max(l1, l2)"] == pytest.approx(-0.01)
    assert table.loc["pima", "Q - max(l1, l2)"] == pytest.approx(0.05)


def _qsvm_rows(acc_svm, acc_q, dir_svm, dir_fixed):
    rows = []
    for repeat in range(2):
        for fold in range(3):
            k = 3 * repeat + fold
            for method, acc, dirichlet in [("SVM", acc_svm[k], dir_svm[k]),
                                           ("Q-SVM", acc_q[k], 1.0),
                                           ("Q-SVM fixed mu", acc_svm[k], dir_fixed[k])]:
                rows.append({"fold": fold, "repeat": repeat, "seed": repeat, "method": method,
                             "mu": 1.0, "C": 1.0, "accuracy": acc, "dirichlet": dirichlet,
                             "pockets": 0})
    return pd.DataFrame(rows)


def test_qsvm_comparison_gain():
    qsvm = _qsvm_rows([0.8] * 6, [0.9, 0.8, 0.9, 0.8, 0.9, 0.8], [4.0] * 6, [1.0] * 6)
    summary = qm.qsvm_means(qsvm)
    gain, ttest, table = qm.qsvm_comparison(qsvm, summary)
    assert gain == pytest.approx(0.05)
    assert table["paper"].tolist() == pytest.approx([0.792, 0.819, 0.027])
    assert table["ours"].iloc[-1] == pytest.approx(0.05)
    assert (table["verdict"] == "n/a").all()


def _uci_rows(margins, noise=(0.0, 0.01, -0.01, 0.0)):
    """Rows as uci_split returns them: l1 0.8, l2 0.7, Q = 0.8 + margin + noise per split."""
    rows = []
    for d, margin in margins.items():
        for repeat, e in enumerate(noise):
            for m, a in zip(qm.UCI_METHODS, (0.8, 0.7, 0.8 + margin + e)):
                rows.append({"dataset": d, "repeat": repeat, "method": m, "accuracy": a,
                             "n_kernels": 5})
    return pd.DataFrame(rows)


def _spread(eff):
    views = {"a": 0.5, "b": 0.3, "c": 0.2}
    return pd.DataFrame({"eff. kernels": eff, "eff. views": [2.6] * len(eff),
                         **{v: [x] * len(eff) for v, x in views.items()}},
                        index=list(qm.METHODS))


def _proxy(values, outside=()):
    """A theorem2_table-like frame; the names in ``outside`` fail Theorem 2's hypothesis."""
    return pd.DataFrame({qm.PROXY: values,
                         "largest eigenvalue of Q^-1": {k: 2.0 if k in outside else 1.0
                                                        for k in values},
                         qm.IN_THEOREM: {k: k not in outside for k in values}})


def _claim_inputs(**over):
    acc = {m: [0.90, 0.92, 0.88, 0.90] for m in qm.METHODS}
    acc["Lap(Cov)+B"] = [0.95, 0.96, 0.94, 0.97]
    table1 = _folds(acc)
    t1 = _t1({m: float(np.mean(v)) for m, v in acc.items()})
    qsvm = _qsvm_rows([0.8] * 6, [0.85, 0.86, 0.84, 0.85, 0.87, 0.85], [4.0] * 6, [1.0] * 6)
    summary = qm.qsvm_means(qsvm)
    uci = _uci_rows({"a": 0.02, "b": 0.0, "c": 0.03})
    spread = _spread([2.0, 10.0, 30.0, 5.0, 6.0, 20.0, 3.0, 29.0])
    proxy = _proxy({"I (l2-MKL)": 1.0, "Cov": 0.5, "Lap(Cov)+B": 0.9})
    inputs = dict(
        special={"q1_obj": 1e-8, "q1_beta": 1e-5, "q2_obj": 1e-8, "q2_beta": 1e-5},
        beta_step_max=1e-6,
        alg1={"result": SimpleNamespace(gap=1e-9), "rel": 1e-8, "monotone": True},
        t1=t1, acc_wide=qm.table1_ttests(table1, t1)[0], uci_rows=uci, qsvm=qsvm,
        qsvm_summary=summary, spread_table=spread, proxy=proxy)
    inputs.update(over)
    return inputs


def _verdicts(**over):
    df = claims_table(qm.claims(**_claim_inputs(**over)))
    return dict(zip(df["id"], df["verdict"]))


def test_claims_all_pass_on_good_inputs():
    verdicts = _verdicts()
    assert list(verdicts) == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q7b", "Q8", "Q9",
                              "Q10"]
    assert set(verdicts.values()) == {"match"}
    df = claims_table(qm.claims(**_claim_inputs()))
    assert (df["rule"].str.len() > 0).all() and (df["tolerance"].str.len() > 0).all()


def test_gain_claims_are_gain_tests():
    # Q5/Q8: no gain at all (identical folds) does not hold; a noisy gain is inconclusive
    same = {m: [0.90, 0.92, 0.88, 0.90] for m in qm.METHODS}
    t1 = _t1({m: float(np.mean(v)) for m, v in same.items()})
    acc_wide = qm.table1_ttests(_folds(same), t1)[0]
    assert _verdicts(t1=t1, acc_wide=acc_wide)["Q5"] == "differs"
    df = claims_table(qm.claims(**_claim_inputs(t1=t1, acc_wide=acc_wide)))
    assert "the same test accuracy on all 4 folds" in df.set_index("id").loc["Q5", "evidence"]
    noisy = dict(same, **{"Lap(Cov)+B": [0.95, 0.87, 0.90, 0.91]})
    t1 = _t1({m: float(np.mean(v)) for m, v in noisy.items()})
    acc_wide = qm.table1_ttests(_folds(noisy), t1)[0]
    assert _verdicts(t1=t1, acc_wide=acc_wide)["Q5"] == "inconclusive"
    qsvm = _qsvm_rows([0.8] * 6, [0.9, 0.7, 0.8, 0.9, 0.7, 0.8], [4.0] * 6, [1.0] * 6)
    assert _verdicts(qsvm=qsvm, qsvm_summary=qm.qsvm_means(qsvm))["Q8"] == "inconclusive"
    # within one point of the SVM is no longer a pass
    qsvm = _qsvm_rows([0.8] * 6, [0.795] * 6, [4.0] * 6, [1.0] * 6)
    assert _verdicts(qsvm=qsvm, qsvm_summary=qm.qsvm_means(qsvm))["Q8"] == "differs"


def test_claims_fail_where_the_numbers_say_so():
    # Q5: Lap(Cov)+B below the lp rows on every fold
    acc = {m: [0.90, 0.92, 0.88, 0.90] for m in qm.METHODS}
    acc["Lap(Cov)+B"] = [0.85, 0.86, 0.84, 0.85]
    t1 = _t1({m: float(np.mean(v)) for m, v in acc.items()})
    assert _verdicts(t1=t1, acc_wide=qm.table1_ttests(_folds(acc), t1)[0])["Q5"] == "differs"
    # Q6: two of three UCI sets clearly more than a point below
    assert _verdicts(uci_rows=_uci_rows({"a": 0.0, "b": -0.1, "c": -0.2}))["Q6"] == "differs"
    # Q6: margins inside the noise
    noisy = _uci_rows({"a": -0.01, "b": -0.01, "c": 0.0}, noise=(0.1, -0.1, 0.05, -0.05))
    assert _verdicts(uci_rows=noisy)["Q6"] == "inconclusive"
    # Q7: the fixed-mu maps are rougher than the SVM's in one realisation
    qsvm = _qsvm_rows([0.8] * 6, [0.8] * 6, [4.0] * 6, [1.0, 1.0, 1.0, 9.0, 9.0, 9.0])
    assert _verdicts(qsvm=qsvm, qsvm_summary=qm.qsvm_means(qsvm))["Q7"] == "differs"
    # Q9: Q-MKL not between l1 and l2
    spread = _spread([2.0, 10.0, 30.0, 5.0, 6.0, 40.0, 3.0, 29.0])
    assert _verdicts(spread_table=spread)["Q9"] == "differs"
    # Q7b: the CV model's maps are rougher than the SVM's
    qsvm = _qsvm_rows([0.8] * 6, [0.8] * 6, [0.5] * 6, [0.1] * 6)
    verdicts = _verdicts(qsvm=qsvm, qsvm_summary=qm.qsvm_means(qsvm))
    assert (verdicts["Q7"], verdicts["Q7b"]) == ("match", "differs")
    # Q10: a proxy of 1 inside the theorem's hypothesis
    proxy = _proxy({"I (l2-MKL)": 1.0, "Cov": 0.5, "Lap(Cov)+B": 1.0})
    assert _verdicts(proxy=proxy)["Q10"] == "differs"
    # ... but a Q outside the hypothesis is not tested
    proxy = _proxy({"I (l2-MKL)": 1.0, "Cov": 0.5, "Lap(Cov)+B": 1.2}, outside={"Lap(Cov)+B"})
    df = claims_table(qm.claims(**_claim_inputs(proxy=proxy))).set_index("id")
    assert df.loc["Q10", "verdict"] == "match"
    assert "outside it" in df.loc["Q10", "evidence"] and "Lap(Cov)+B 1.200" in \
        df.loc["Q10", "evidence"]
    # Q4: gap not closed; Q3: solvers disagree
    alg1 = {"result": SimpleNamespace(gap=1e-3), "rel": 1e-8, "monotone": True}
    assert _verdicts(alg1=alg1)["Q4"] == "differs"
    assert _verdicts(beta_step_max=1e-3)["Q3"] == "differs"


def test_summary_table_cites_the_paper():
    inputs = _claim_inputs()
    claims_df = claims_table(qm.claims(**inputs))
    _, _, qsvm_compare = qm.qsvm_comparison(inputs["qsvm"], inputs["qsvm_summary"])
    uci = qm.uci_table(inputs["uci_rows"], ["a", "b", "c"])
    summary = qm.summary_table(qm.table1_comparison(inputs["t1"]), qsvm_compare, uci, claims_df)
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert len(summary) == 20 + 3 + 3 + 11
    claim_rows = summary.iloc[-11:]
    assert claim_rows["item"].str.startswith("Q").all()
    assert claim_rows["source"].tolist() == [qm.CLAIM_SOURCES[c] for c in claims_df["id"]]
    # every row carries a tolerance and a rule; rows on different data are n/a
    assert (summary["tolerance"].astype(str).str.len() > 0).all()
    assert (summary["rule"].astype(str).str.len() > 0).all()
    assert (summary.iloc[:26]["verdict"] == "n/a").all()


def test_tiny_problem_and_theorem2_caveat():
    K, y, Q = qm.tiny_problem()
    assert K.shape == (5, 30, 30) and set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 30.0)
    assert np.trace(Q) == pytest.approx(5.0)
    # 1 is an eigenvector of I + L with eigenvalue 1: the proxy is exactly 1
    S = np.abs(np.corrcoef(np.random.default_rng(0).normal(size=(10, 5)).T))
    assert qm.theorem2_proxy(graph_laplacian(S, normalize_trace=False)) == pytest.approx(1.0)
    assert qm.theorem2_proxy(np.eye(4)) == pytest.approx(1.0)


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


def test_laplacian_effect_and_best_lp():
    acc = {m: [0.90, 0.92, 0.88, 0.90] for m in qm.METHODS}
    acc["Lap(Cov)+B"] = [0.95, 0.96, 0.94, 0.97]
    acc["l1.5"] = [0.91, 0.93, 0.89, 0.91]
    t1 = _t1({m: float(np.mean(v)) for m, v in acc.items()})
    assert qm.best_lp(t1["accuracy_mean"]) == "l1.5"
    acc_wide = qm.table1_ttests(_folds(acc), t1)[0]
    spread = pd.DataFrame({"eff. kernels": np.arange(len(qm.METHODS), dtype=float)},
                          index=list(qm.METHODS))
    table = qm.laplacian_effect(acc_wide, spread).set_index("method")
    assert table.loc["Lap(Cov)+B", "gain test"] == "holds"
    assert table.loc[qm.DENSE_ALTERNATIVE, "gain test"] == "does not hold"
    assert table.loc["Lap(Cov)+B", "gain vs l2"] == pytest.approx(0.055)
    assert table.loc[qm.DENSE_ALTERNATIVE, "eff. kernels"] == len(qm.METHODS) - 1


def test_differences_section_is_computed_from_the_run():
    acc = {m: [0.90, 0.92, 0.88, 0.90] for m in qm.METHODS}
    acc["Lap(Cov)+B"] = [0.95, 0.96, 0.94, 0.97]
    table1 = _folds(acc).assign(C=1.0, converged=True)
    table1.loc[0, "converged"] = False
    qsvm = _qsvm_rows([0.8] * 6, [0.8] * 6, [4.0] * 6, [1.0] * 6)
    uci = _uci_rows({"a": 0.0}).assign(converged=True)
    t1 = _t1({m: float(np.mean(v)) for m, v in acc.items()})
    spread = pd.DataFrame({"eff. kernels": np.arange(len(qm.METHODS), dtype=float)},
                          index=list(qm.METHODS))
    lap = qm.laplacian_effect(qm.table1_ttests(table1, t1)[0], spread)
    fig2 = {"groups": np.repeat(["u", "v"], 3), "view_names": ["u", "v"],
            "corr_within": 0.7, "corr_between": 0.2}
    heading, text = qm.differences_section(
        table1=table1, qsvm=qsvm, uci_rows=uci, lap_effect=lap, fig2=fig2,
        settings={"n_realisations": 1, "n_qsvm_realisations": 2, "n_uci_splits": 4,
                  "c_grid": [1.0], "c_q": 1.0, "mu_fixed": 10.0, "mkl_tol": 1e-3})
    assert heading == "What differs from the paper and why"
    assert f"{len(table1) - 1} of {len(table1)} final Table 1 MKL fits" in text
    assert "6 kernels" in text and "We think" in text
    assert f"{lap.set_index('method').loc['Lap(Cov)+B', 'eff. kernels']:.1f} effective" in text


def test_theorem2_table_checks_the_hypothesis():
    corr = np.array([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
    groups = np.array([0, 0, 1])
    fig2 = {"corr": corr, "groups": groups, "Q": qm.regulariser("Lap(Cov)+B", corr, groups)}
    table = qm.theorem2_table(fig2)
    assert table.loc["I (l2-MKL)", qm.PROXY] == pytest.approx(1.0)
    assert bool(table.loc["I (l2-MKL)", qm.IN_THEOREM])
    # I + D - S has every eigenvalue >= 1: inside the hypothesis, proxy exactly 1
    row = table.loc["D - S + I (unnormalised L, no trace scaling)"]
    assert bool(row[qm.IN_THEOREM]) and row[qm.PROXY] == pytest.approx(1.0)
    top = table["largest eigenvalue of Q^-1"]
    assert (table[qm.IN_THEOREM] == (top <= 1 + qm.EIG_TOL)).all()


def test_readable_means_and_mu_choice():
    qsvm = _qsvm_rows([0.8] * 6, [0.9] * 6, [4.0] * 6, [1.0] * 6)
    table = qm.readable_means(qm.qsvm_means(qsvm))
    assert list(table.columns[:4]) == ["method", "folds", "accuracy (mean)", "accuracy (s.e.)"]
    assert "E(w) (mean)" in table.columns
    counts, low, high = qm.mu_choice(qsvm, [1.0, 10.0])
    assert counts == {1.0: 6} and (low, high) == (6, 0)
