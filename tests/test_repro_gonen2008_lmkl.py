"""Fast tests of mklcore.repro.gonen2008_lmkl (protocol bookkeeping, tables, claims logic)."""

import numpy as np
import pandas as pd
import pytest

from mklcore.repro import gonen2008_lmkl as lmkl
from mklcore.repro.reporting import Claim, claims_table, compare
from mklcore.svm import svm_solve


def _raw(val_acc, test_acc, sv):
    """Rows of two methods, three C values and two folds of one data set."""
    rows = []
    for (method, C), vals in val_acc.items():
        for fold, v in enumerate(vals):
            rows.append({"dataset": "d", "method": method, "C": C, "fold": fold, "val_acc": v,
                         "test_acc": test_acc[method][fold], "sv_pct": sv[method][fold],
                         "weights": [0.25, 0.75] if method.startswith("MKL") else [1.0]})
    return pd.DataFrame(rows)


def test_select_C_best_mean_validation_and_ties_to_smaller_C():
    val = {("A", 0.1): [80, 80], ("A", 1.0): [90, 70], ("A", 10.0): [70, 60],   # tie 0.1 / 1
           ("B", 0.1): [50, 50], ("B", 1.0): [60, 60], ("B", 10.0): [70, 80]}
    df = _raw(val, {"A": [1, 2], "B": [3, 4]}, {"A": [5, 6], "B": [7, 8]})
    sel = lmkl.select_C(df)
    assert sel.groupby("method").C.first().to_dict() == {"A": 0.1, "B": 10.0}
    assert list(sel.fold) == [0, 1, 0, 1]
    summary = lmkl.per_method(sel)
    a = summary[summary.method == "A"].iloc[0]
    assert a.acc == pytest.approx(1.5) and a.sv == pytest.approx(5.5)
    assert a.acc_sd == pytest.approx(np.std([1, 2], ddof=1))


def test_f_test_matches_hand_computation():
    # 5x2 cv F (Alpaydin 1999): F = sum p^2 / (2 sum s_i^2)
    diffs = np.array([[1.0, 3.0], [2.0, 2.5], [0.5, 1.5], [4.0, 2.0], [1.0, 0.0]])
    rows = [{"dataset": "d", "method": m, "fold": f, "test_acc": (diffs.ravel()[f] if m == "A"
                                                                  else 0.0)}
            for m in "AB" for f in range(10)]
    res = lmkl.f_test(pd.DataFrame(rows), "d", "A", "B", "test_acc", 5)
    mean = diffs.mean(axis=1, keepdims=True)
    expected = (diffs ** 2).sum() / (2 * ((diffs - mean) ** 2).sum())
    assert res.statistic == pytest.approx(expected)
    assert 0.0 <= res.pvalue <= 1.0


def _tables(names, sfx=""):
    """per_method summaries and pair tests for two sets with known outcomes."""
    (a1, b1), (a2, b2) = lmkl.pairs(sfx)
    summary = pd.DataFrame([
        {"dataset": n, "method": m, "acc": acc, "sv": sv}
        for n, vals in zip(names, [{a1: (90, 20), b1: (88, 40), a2: (85, 30), b2: (80, 50)},
                                   {a1: (70, 60), b1: (75, 50), a2: (60, 70), b2: (65, 40)}])
        for m, (acc, sv) in vals.items()])
    for base in lmkl.T1_BASE:  # columns of the Table 1 view not in a pair
        if base + sfx not in set(summary.method):
            summary = pd.concat([summary, pd.DataFrame(
                [{"dataset": n, "method": base + sfx, "acc": 50.0, "sv": 50.0} for n in names])])
    tests = pd.DataFrame([
        {"dataset": names[0], "pair": f"{a1} vs {b1}", "acc diff": 2.0, "acc p": 0.5,
         "SV diff": -20.0, "SV p": 0.01},
        {"dataset": names[0], "pair": f"{a2} vs {b2}", "acc diff": 5.0, "acc p": 0.01,
         "SV diff": -20.0, "SV p": 0.5},
        {"dataset": names[1], "pair": f"{a1} vs {b1}", "acc diff": -5.0, "acc p": 0.01,
         "SV diff": 10.0, "SV p": 0.02},
        {"dataset": names[1], "pair": f"{a2} vs {b2}", "acc diff": -5.0, "acc p": 0.5,
         "SV diff": 30.0, "SV p": 0.5},
    ])
    return summary, tests


def test_table_view_marks_significance_and_assumed_sets():
    names = ["heart", "sonar"]
    summary, tests = _tables(names)
    view = lmkl.table_view(summary, tests, names, "")
    assert list(view["data set"]) == ["heart", "sonar †"]
    heart, sonar = view.iloc[0], view.iloc[1]
    assert heart["LMKL K_P-K_G acc"] == "90.00"          # not significant
    assert heart["LMKL K_P-K_G SV%"] == "20.00+"         # significantly fewer SVs
    assert heart["LMKL K_L-K_L-K_L acc"] == "85.00+"     # significantly more accurate
    assert sonar["LMKL K_P-K_G acc"] == "70.00-"         # significantly less accurate
    assert sonar["LMKL K_P-K_G SV%"] == "60.00-"         # significantly more SVs
    assert heart["MKL K_P-K_G acc"] == "88.00"           # baselines never marked


def test_counts_and_table1_rows():
    names = ["heart", "sonar"]
    summary, tests = _tables(names)
    c = lmkl.counts(summary, tests, names, "")
    cpg, cll = (c[p] for p in lmkl.pairs(""))
    assert (cpg["acc higher"], cpg["SV lower"], cpg["acc not sig."]) == (1, 1, 1)
    assert cpg["SV sig. lower"] == ["heart"] and cpg["acc sig. lower"] == ["sonar"]
    assert cll["acc sig. higher"] == ["heart"] and cll["SV lower"] == 1
    rows = lmkl.table1_rows({"": c}, "", names)
    assert len(rows) == 8
    by_item = {r["item"]: r["ours"] for r in rows}
    assert by_item["K_P-K_G (unit trace, C x N): share of sets, lower mean SV% (LMKL vs "
                   "MKL)"] == 0.5
    # counts over other sets than the paper's ten are shown, never judged
    assert all("sonar" in r["comparable"] for r in rows)
    assert set(compare(rows).verdict) == {"n/a"}
    assert len(lmkl.counts_lines({"": c})) == 2
    table = lmkl.wilcoxon_table({"": c})
    assert list(table.kernels) == ["unit trace, C x N"] * 2 and list(table.sets) == [2, 2]


def test_splice_rows_relative_sv_reduction():
    sp = pd.DataFrame([{"dataset": "splice", "method": m, "acc": 80.0, "sv": sv}
                       for m, sv in [("LMKL K_P-K_G", 30.0), ("MKL K_P-K_G", 40.0),
                                     ("LMKL K_L-K_L-K_L", 50.0), ("SVM K_L", 100.0)]])
    rows = lmkl.splice_rows(sp, "")
    assert rows[0]["ours"] == pytest.approx(25.0) and rows[0]["paper"] == 24.55
    assert rows[1]["ours"] == pytest.approx(50.0)
    assert set(compare(rows).verdict) == {"n/a"}        # stand-in data: not compared


def test_make_protocol_quick_and_full():
    quick = lmkl.make_protocol(True, seed=3)
    assert (quick.n_rep, quick.n_iter, quick.table1) == (1, 20, list(lmkl.QUICK_TABLE1))
    assert quick.caps == lmkl.QUICK_CAPS and quick.caps is not lmkl.QUICK_CAPS
    full = lmkl.make_protocol(False, n_iter=50, max_samples=1500)
    assert (full.n_rep, full.n_iter, len(full.table1)) == (5, 50, 10)
    assert set(full.caps) == set(lmkl.TABLE1) | {"splice"} | set(lmkl.GAUSS4)
    assert full.C_grid == [0.01, 0.1, 1.0, 10.0, 100.0]


def test_splits_are_disjoint_and_cover_the_data():
    y = np.array([1.0] * 30 + [-1.0] * 30)
    folds = lmkl.splits(y, 0, 2)
    assert len(folds) == 4
    for tr, va, te in folds:
        assert len(te) == 20 and len(tr) + len(va) == 40
        assert not set(tr) & set(va) and not set(tr) & set(te) and not set(va) & set(te)
        assert (y[tr] > 0).sum() == 10   # stratified halves


def test_sanity_check_catches_missing_rows_and_increasing_objective():
    df = pd.DataFrame({"method": ["SVM K_L"] * 2, "test_acc": [50.0, 60.0],
                       "sv_pct": [10.0, 20.0], "weights": [[1.0], [1.0]]})
    fits = pd.DataFrame({"monotone": [True], "n_iter": [3], "n_svm_calls": [7]})
    msg = lmkl.sanity_check([(df, ["d"], ["SVM K_L"])], fits, 1e-8, 1, 1)
    assert msg == "all sanity checks passed (1 LMKL fits, all monotone)"
    with pytest.raises(AssertionError, match="missing rows"):
        lmkl.sanity_check([(df, ["d"], ["SVM K_L"])], fits, 1e-8, 1, 2)
    with pytest.raises(AssertionError, match="increased"):
        lmkl.sanity_check([], fits.assign(monotone=False), 1e-8, 1, 1)
    with pytest.raises(AssertionError, match="gradient"):
        lmkl.sanity_check([], fits, 1e-3, 1, 1)


def test_claims_c1_c2_and_summary_sources(monkeypatch):
    monkeypatch.setattr(lmkl, "claims_for", lambda sfx, **kw: [
        Claim("C3a", "x", True, "e", rule="r", tolerance="t"),
        Claim("C7d", "y", "inconclusive", "e", hard=False, rule="r", tolerance="t")])
    fits = pd.DataFrame({"monotone": [True, False]})
    claims = lmkl.claims(2e-9, fits, "")
    df = claims_table(claims)
    assert list(df.id) == ["C1", "C2", "C3a", "C7d"]
    assert list(df.verdict) == ["match", "differs", "match", "inconclusive"]
    assert all(df.rule.str.len() > 0) and all(df.tolerance.str.len() > 0)
    pvo = compare([{"item": "x", "paper": 1.0, "ours": 1.23456, "atol": 0.5,
                    "source": "Sec. 4.2"}])
    summary = lmkl.summary_table(pvo, df)
    assert summary.ours.iloc[0] == 1.235 and summary.verdict.iloc[0] == "match"
    assert list(summary.source.iloc[1:]) == ["Sec. 2 (gradient of J)", "Sec. 2, Algorithm 1",
                                            "Sec. 4.1, Fig. 1-2", "Sec. 4.3, Table 2"]
    assert (summary.tolerance != "").all() and (summary.rule != "").all()


def test_gain_equivalence_and_all_sets_claims():
    gain = lmkl.gain_claim("G", "gain", [2.0, 3.0, 2.5, 3.5], context="ctx; ")
    assert gain.holds is True and gain.evidence.startswith("ctx; ") and "p < 0.05" in gain.tolerance
    assert lmkl.gain_claim("G", "none", [-2.0, -3.0, -2.5]).holds is False
    assert lmkl.gain_claim("G", "noise", [3.0, -2.0, 1.0, -1.5]).holds == "inconclusive"
    assert lmkl.equivalence_claim("E", "eq", [0.5, -0.5, 0.2, 0.1]).holds is True
    assert lmkl.equivalence_claim("E", "far", [5.0, 5.5, 6.0, 5.2]).holds is False
    assert lmkl.equivalence_claim("E", "wide", [8.0, -8.0]).holds == "inconclusive"
    kw = dict(rule="r", tolerance="t")
    assert lmkl.all_sets_claim("A", "a", {"x": (True, ""), "y": (True, "")}, **kw).holds is True
    assert lmkl.all_sets_claim("A", "a", {"x": (True, ""), "y": ("inconclusive", "")},
                               **kw).holds == "inconclusive"
    assert lmkl.all_sets_claim("A", "a", {"x": (False, ""), "y": ("inconclusive", "")},
                               **kw).holds is False


def test_fold_diffs_in_fold_order():
    sel = pd.DataFrame({"dataset": "d", "method": ["A", "A", "B", "B"], "fold": [1, 0, 0, 1],
                        "test_acc": [70.0, 80.0, 75.0, 60.0]})
    assert list(lmkl.fold_diffs(sel, "d", "A", "B", "test_acc")) == [5.0, 10.0]


def test_trace_n_kernels_are_unit_trace_with_C_times_N():
    p = lmkl.prepare("gauss4_equal", 0, n_rep=1, cap=90, seed=0)
    n = len(p["tr"])
    assert np.allclose(np.trace(p["Ktr"], axis1=1, axis2=2), n)
    y, C = p["y"][p["tr"]], 0.5
    ours = svm_solve(p["Ktr"][0], y, C=C, tol=1e-10)
    paper = svm_solve(p["Ktr"][0] / n, y, C=C * n, tol=1e-10)   # unit trace, C x N
    f_ours = p["Kte"][0] @ ours.dual_coef + ours.intercept
    f_paper = p["Kte"][0] / n @ paper.dual_coef + paper.intercept
    assert np.allclose(f_ours, f_paper, atol=1e-6)


def test_convergence_counts_status():
    raw = pd.DataFrame({"method": ["SVM K_L", "SVM K_L", "LMKL K_L-K_P", "LMKL K_L-K_P",
                                   "MKL K_P-K_G"], "status": [-1, -1, 0, 1, 0]})
    conv = lmkl.convergence([raw]).set_index("family")
    assert conv.loc["lmkl", "met stopping rule"] == 1 and conv.loc["lmkl", "fits"] == 2
    assert conv.loc["svm", "status counts"] == "-1: 2"


def test_convergence_counts_lmkl_updates():
    raw = pd.DataFrame({"method": ["LMKL K_L-K_P"] * 4 + ["SVM K_L"],
                        "status": [1, 0, 0, 0, -1], "n_iter": [20, 7, 1, 1, 1]})
    conv = lmkl.convergence([raw]).set_index("family")
    row = conv.loc["lmkl"]
    assert (row["full schedule"], row["stopped early"], row["stopped after <= 1 update"]) == \
        (1, 1, 2)
    assert row["updates (median [min, max])"] == "4 [1, 20]"
    assert conv.loc["svm", "full schedule"] == ""


def test_banana_rows_not_compared_on_a_different_training_size():
    ban = pd.DataFrame({"dataset": "banana", "method": ["MKL K_L-K_P", "LMKL K_L-K_P"],
                        "C": 1.0, "acc": [70.0, 84.0], "acc_sd": 1.0, "sv": [80.0, 40.0],
                        "sv_sd": 1.0, "weights": [[0.0, 1.0], [0.5, 0.5]]})
    small = compare(lmkl.banana_rows(ban, "", 333))
    assert (small["verdict"] == "n/a").all()
    assert small["rule"].str.contains("different training size: 333").all()
    full = compare(lmkl.banana_rows(ban, "", 1767))
    assert (full["verdict"] != "n/a").all()


def test_differences_text_is_computed_from_the_run():
    data = pd.DataFrame([
        {"data set": "gauss4_equal", "n (all)": 1200, "n": 600, "d": 2, "train fold": 200},
        {"data set": "gauss4_recalled", "n (all)": 1200, "n": 600, "d": 2, "train fold": 200},
        {"data set": "heart", "n (all)": 270, "n": 270, "d": 13, "train fold": 90},
        {"data set": "sonar (assumed)", "n (all)": 208, "n": 208, "d": 60, "train fold": 69},
        {"data set": "splice", "n (all)": 3190, "n": 600, "d": 300, "train fold": 200}])
    literal = pd.DataFrame([{"dataset": "splice", "method": "SVM K_G", "majority (%)": 76.0,
                             "literal C": 0.01, "literal acc (fold 0)": 76.0,
                             "literal SV% (fold 0)": 48.0, "C x N": 10.0, "acc": 94.75,
                             "SV%": 77.0}])
    conv = pd.DataFrame([{"family": "lmkl", "fits": 10, "met stopping rule": 4,
                          "status counts": "0: 4, 1: 6", "full schedule": 6,
                          "stopped early": 1, "stopped after <= 1 update": 3,
                          "updates (median [min, max])": "20 [1, 20]"},
                         {"family": "mkl", "fits": 5, "met stopping rule": 5,
                          "status counts": "0: 5", "full schedule": "", "stopped early": "",
                          "stopped after <= 1 update": "",
                          "updates (median [min, max])": ""}])
    text = lmkl.differences(data, {"gauss4_equal": 0.9214, "gauss4_recalled": 0.8974},
                            literal, conv, n_iter=20, quick=True, ban_n_train=333)
    assert "1 of 1 fits checked end within 1 point" in text and "splice SVM K_G" in text
    assert "sonar (208 x 60; 69 training points per fold)" in text
    assert "splice (600 x 300, subsampled from 3190" in text and "89.74 %" in text
    assert "6 ran the full schedule, 1 stopped early" in text
    assert "3 stopped after at most one update" in text
    assert "5 of 5 fits met their stopping rule" in text
    assert "above the Bayes accuracy of gauss4_recalled" in text
    assert "Quick mode runs 2 of the 10 sets" in text and "literal_grid.csv" in text
    assert "subsampled to 333 training points per fold" in text
    text = lmkl.differences(data, {"gauss4_equal": 0.95, "gauss4_recalled": 0.93}, literal,
                            conv, n_iter=20, quick=False)
    assert "at or above the paper's LMKL" in text and "Quick mode" not in text


def test_fit_models_refits_the_protocol_fit_once():
    proto = lmkl.Protocol(table1=[], n_rep=1, n_iter=3, caps={"gauss4_equal": 90})
    req = ("gauss4_equal", 0, "LMKL K_L-K_P", 10.0)
    res, again = lmkl.fit_models(proto, [req, req])
    assert res is again and list(proto.models) == [req]
    assert lmkl.fit_models(proto, [req])[0] is res          # cached: no second fit
    # the fit of protocol_fold: same fold, seed and settings (svm_tol=1e-3 is the default;
    # passing it makes boundary_model fit directly)
    _, direct = lmkl.boundary_model(proto, "gauss4_equal", "LMKL K_L-K_P", 10.0, fold=0,
                                    svm_tol=1e-3)
    np.testing.assert_array_equal(res.dual_coef, direct.dual_coef)
    np.testing.assert_array_equal(res.gating_coef, direct.gating_coef)
    assert res.intercept == direct.intercept


def test_grid_values_of_several_models_equal_one_at_a_time():
    proto = lmkl.Protocol(table1=[], n_rep=1, n_iter=2, caps={"gauss4_equal": 90})
    reqs = [("gauss4_equal", 0, m, 1.0) for m in ("SVM K_G", "MKL K_L-K_P", "LMKL K_L-K_P")]
    models = lmkl.fit_models(proto, reqs)
    p = lmkl.prepare("gauss4_equal", 0, n_rep=1, cap=90, seed=proto.data_seed)
    xx, yy = lmkl.panel_grid(p, n_grid=12)
    together = lmkl._grid_values(p, [(r[2], m) for r, m in zip(reqs, models)], xx, yy, 50)
    for (_, _, method, _), res, (f, eta) in zip(reqs, models, together):
        f1, eta1 = lmkl.grid_values(p, method, res, xx, yy, chunk=50)
        np.testing.assert_array_equal(f, f1)
        assert (eta is None) == (eta1 is None)
        if eta is not None:
            np.testing.assert_array_equal(eta, eta1)


def test_perturb_kernels_moves_entries_by_at_most_one_ulp_and_keeps_symmetry():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 30, 5))
    K = A @ np.swapaxes(A, 1, 2)
    P = lmkl.perturb_kernels(K, seed=3)
    np.testing.assert_array_equal(P, np.swapaxes(P, 1, 2))
    moved = P != K
    one_up, one_down = np.nextafter(K, np.inf), np.nextafter(K, -np.inf)
    assert np.all((P == K) | (P == one_up) | (P == one_down))      # at most one ulp
    assert 0.5 < moved.mean() < 0.8                                  # about 2/3 of the entries
    np.testing.assert_array_equal(lmkl.perturb_kernels(K, seed=3), P)      # seeded
    np.testing.assert_array_equal(lmkl.perturb_kernels(K, seed=3, ulps=0), K)


def _g4_protocol_rows(proto, methods):
    raw = lmkl.run_protocol(proto, ["gauss4_equal"], methods, "test")
    return lmkl.select_C(raw)


def test_roundoff_check_without_perturbation_reproduces_the_protocol_fits(monkeypatch):
    proto = lmkl.Protocol(table1=[], n_rep=1, n_iter=3, caps={"gauss4_equal": 90},
                          C_grid=[1.0, 10.0])
    sel = _g4_protocol_rows(proto, ["LMKL K_L-K_P", "LMKL K_L-K_L-K_L"])
    monkeypatch.setattr(lmkl, "ROUNDOFF_ULPS", 0)
    table = lmkl.roundoff_check(proto, sel, "")
    assert len(table) == 4                                   # 2 methods x 2 folds
    np.testing.assert_array_equal(table.test_acc_pert, table.test_acc)
    np.testing.assert_array_equal(table.sv_pct_pert, table.sv_pct)
    np.testing.assert_array_equal(table.max_gate_last_pert, table.max_gate_last)
    np.testing.assert_array_equal(table.C_pert, table.C)
    summ = lmkl.roundoff_summary(table)
    assert summ["fits with acc changed"].tolist() == [0] and summ["max |d gate|"].tolist() == [0]
    assert summ["folds with another C"].tolist() == [0]
    assert lmkl.roundoff_text(None) == ""
    text = lmkl.roundoff_text(table)
    assert "4 LMKL fits" in text and "0 folds selected another C, 0 fits changed" in text


def test_c3d_is_inconclusive_when_the_roundoff_rerun_crosses_the_threshold():
    rows = [{"dataset": "gauss4_equal", "method": method, "C": 1.0, "fold": fold,
             "test_acc": 90.0, "sv_pct": 20.0, "max_gate_first": 0.5, "max_gate_last": gate}
            for method in ("LMKL K_L-K_P", "LMKL K_L-K_L-K_L", "MKL K_L-K_P")
            for fold, gate in enumerate((0.9, 0.92))]
    g4_sel = pd.DataFrame(rows)
    lmkl_rows = g4_sel[g4_sel.method.str.startswith("LMKL")]

    def pert(gate):
        return lmkl_rows.assign(C_pert=1.0, test_acc_pert=90.0, sv_pct_pert=20.0,
                                max_gate_last_pert=gate)

    claim = lmkl.crisp_claim(g4_sel, "gauss4_equal", "", 0.92, roundoff=pert(0.95))
    assert claim.id == "C3d" and claim.hard and "Bayes 92.00 %" in claim.text
    assert claim.holds is True and "0.91 over 4 fits" in claim.evidence
    assert "0.95 when the protocol (C selection included) is rerun" in claim.evidence
    claim = lmkl.crisp_claim(g4_sel, "gauss4_equal", "", 0.92, roundoff=pert(0.85))
    assert claim.holds == "inconclusive" and "inconclusive if the two disagree" in claim.rule
    claim = lmkl.crisp_claim(g4_sel, "gauss4_equal", "", 0.92, roundoff=None)
    assert claim.holds is True and "rerun" not in claim.evidence
    low = g4_sel.assign(max_gate_last=0.8)
    claim = lmkl.crisp_claim(low, "gauss4_equal", "", 0.92, roundoff=pert(0.85))
    assert claim.holds is False
    # a round-off table of the other normalisation does not apply
    claim = lmkl.crisp_claim(g4_sel, "gauss4_equal", " [diag]", 0.92, roundoff=pert(0.85))
    assert "rerun" not in claim.evidence
