"""Fast tests of the Gönen & Alpaydın (2008) reproduction: what mklcore.repro.gonen2008_lmkl
keeps (settings, convergence counts, refits, round-off) and, through notebook_functions, the
protocol functions of notebooks/gonen2008_lmkl.ipynb (C selection, F test, kernels, one fold,
the claim helpers)."""

import numpy as np
import pandas as pd
import pytest

from mklcore.repro import gonen2008_lmkl as lmkl
from mklcore.repro.notebook import notebook_functions


@pytest.fixture(scope="module")
def nb():
    """The notebook's functions and constants, with a tiny protocol as its ``proto``."""
    ns = notebook_functions("gonen2008_lmkl")
    ns["proto"] = lmkl.Protocol(table1=[], n_rep=1, n_iter=3, caps={"gauss4_equal": 90},
                                C_grid=[1.0, 10.0])
    return ns


def _raw(val_acc, test_acc, sv):
    """Rows of two methods, three C values and two folds of one data set."""
    rows = []
    for (method, C), vals in val_acc.items():
        for fold, v in enumerate(vals):
            rows.append({"dataset": "d", "method": method, "C": C, "fold": fold, "val_acc": v,
                         "test_acc": test_acc[method][fold], "sv_pct": sv[method][fold],
                         "weights": [0.25, 0.75] if method.startswith("MKL") else [1.0]})
    return pd.DataFrame(rows)


def test_select_C_best_mean_validation_and_ties_to_smaller_C(nb):
    val = {("A", 0.1): [80, 80], ("A", 1.0): [90, 70], ("A", 10.0): [70, 60],   # tie 0.1 / 1
           ("B", 0.1): [50, 50], ("B", 1.0): [60, 60], ("B", 10.0): [70, 80]}
    df = _raw(val, {"A": [1, 2], "B": [3, 4]}, {"A": [5, 6], "B": [7, 8]})
    sel = nb["select_C"](df)
    assert sel.groupby("method").C.first().to_dict() == {"A": 0.1, "B": 10.0}
    assert list(sel.fold) == [0, 1, 0, 1]
    summary = nb["per_method"](sel)
    a = summary[summary.method == "A"].iloc[0]
    assert a.acc == pytest.approx(1.5) and a.sv == pytest.approx(5.5)
    assert a.acc_sd == pytest.approx(np.std([1, 2], ddof=1))


def test_f_test_matches_hand_computation(nb):
    # 5x2 cv F (Alpaydin 1999): F = sum p^2 / (2 sum s_i^2)
    diffs = np.array([[1.0, 3.0], [2.0, 2.5], [0.5, 1.5], [4.0, 2.0], [1.0, 0.0]])
    rows = [{"dataset": "d", "method": m, "fold": f, "test_acc": (diffs.ravel()[f] if m == "A"
                                                                  else 0.0)}
            for m in "AB" for f in range(10)]
    res = nb["f_test"](pd.DataFrame(rows), "d", "A", "B", "test_acc", 5)
    mean = diffs.mean(axis=1, keepdims=True)
    expected = (diffs ** 2).sum() / (2 * ((diffs - mean) ** 2).sum())
    assert res.statistic == pytest.approx(expected)
    assert 0.0 <= res.pvalue <= 1.0


def test_fold_diffs_in_fold_order(nb):
    sel = pd.DataFrame({"dataset": "d", "method": ["A", "A", "B", "B"], "fold": [1, 0, 0, 1],
                        "test_acc": [70.0, 80.0, 75.0, 60.0]})
    assert list(nb["fold_diffs"](sel, "d", "A", "B", "test_acc")) == [5.0, 10.0]


def test_make_protocol_quick_and_full():
    quick = lmkl.make_protocol(True, seed=3)
    assert (quick.n_rep, quick.n_iter, quick.table1) == (1, 20, list(lmkl.QUICK_TABLE1))
    assert quick.caps == lmkl.QUICK_CAPS and quick.caps is not lmkl.QUICK_CAPS
    assert quick.C_grid == [0.1, 1.0, 10.0]
    full = lmkl.make_protocol(False, n_iter=50, max_samples=1500)
    assert (full.n_rep, full.n_iter, len(full.table1)) == (5, 50, 10)
    assert set(full.caps) == set(lmkl.TABLE1) | {"splice"} | set(lmkl.GAUSS4)
    assert full.C_grid == [0.01, 0.1, 1.0, 10.0, 100.0]
    banana = lmkl.make_protocol(False, max_samples=1500, full_size=("banana",))
    assert "banana" not in banana.caps and banana.caps["pima"] == 1500
    assert lmkl.make_protocol(True, full_size=("banana",)).caps == lmkl.QUICK_CAPS
    # the full run fits every method of the lists; quick mode the doubling variant with the
    # kernels the claims are judged with only
    for names in (lmkl.G4_METHODS, lmkl.BANANA_METHODS, lmkl.T1_METHODS):
        assert full.methods(names) == names
        assert lmkl.make_protocol(False, normalize="unit_diagonal").methods(names) == names
    doubling = {m for m in lmkl.T1_METHODS if lmkl.DOUBLING in m}
    assert set(lmkl.T1_METHODS) - set(quick.methods(lmkl.T1_METHODS)) == {
        m for m in doubling if m.endswith(" [diag]")}
    diag = lmkl.make_protocol(True, normalize="unit_diagonal").methods(lmkl.T1_METHODS)
    assert set(lmkl.T1_METHODS) - set(diag) == {m for m in doubling if not m.endswith("]")}
    assert quick.methods(lmkl.G4_METHODS) == [m for m in lmkl.G4_METHODS
                                             if not m.endswith("(doubling) [diag]")]


def test_splits_are_disjoint_and_cover_the_data(nb):
    y = np.array([1.0] * 30 + [-1.0] * 30)
    folds = nb["splits"](y, 0, 2)
    assert len(folds) == 4
    for tr, va, te in folds:
        assert len(te) == 20 and len(tr) + len(va) == 40
        assert not set(tr) & set(va) and not set(tr) & set(te) and not set(va) & set(te)
        assert (y[tr] > 0).sum() == 10   # stratified halves


def test_trace_n_kernels_are_unit_trace_with_C_times_N(nb):
    p = nb["prepare"]("gauss4_equal", 0, n_rep=1, cap=90, seed=0)
    n = len(p["tr"])
    assert np.allclose(np.trace(p["Ktr"], axis1=1, axis2=2), n)
    assert np.allclose(np.einsum("mii->mi", p["Ktr_diag"]), 1.0)
    y, C = p["y"][p["tr"]], 0.5
    ours = nb["svm_solve"](p["Ktr"][0], y, C=C, tol=1e-10)
    paper = nb["svm_solve"](p["Ktr"][0] / n, y, C=C * n, tol=1e-10)   # unit trace, C x N
    f_ours = p["Kte"][0] @ ours.dual_coef + ours.intercept
    f_paper = p["Kte"][0] / n @ paper.dual_coef + paper.intercept
    assert np.allclose(f_ours, f_paper, atol=1e-6)


def test_protocol_fold_rows_and_selection(nb):
    methods = ["SVM K_G", "MKL K_L-K_P", "LMKL K_L-K_P [diag]"]
    raw = nb["run_protocol"](nb["proto"], ["gauss4_equal"], methods, "test")
    assert len(raw) == 2 * 3 * 2                         # 2 folds x 3 methods x 2 C
    assert raw.test_acc.between(0, 100).all() and raw.sv_pct.between(0, 100).all()
    lm = raw[raw.method.str.startswith("LMKL")]
    assert lm.monotone.all() and (lm.n_svm_calls >= lm.n_iter + 1).all()
    assert (raw[raw.method == "SVM K_G"].status == -1).all()
    assert np.allclose([sum(w) for w in raw[raw.method == "MKL K_L-K_P"].weights], 1.0)
    assert len(nb["select_C"](raw)) == 2 * 3


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
    assert row["stopped after <= 1 update (%)"] == 50.0
    assert conv.loc["svm", "full schedule"] == ""


def test_doubling_variants_are_their_own_family_and_rows():
    assert lmkl.LINE_SEARCH["LMKL K_P-K_G"] == lmkl.LMKL_PRIMARY == "armijo"
    assert lmkl.LINE_SEARCH["LMKL K_P-K_G (doubling) [diag]"] == "doubling"
    assert lmkl.METHODS["LMKL K_L-K_L-K_L (doubling)"] == lmkl.METHODS["LMKL K_L-K_L-K_L"]
    assert set(lmkl.T1_METHODS) >= {m + sfx for m in lmkl.T1_DOUBLING for sfx in ("", " [diag]")}
    raw = pd.DataFrame({"method": ["LMKL K_L-K_P", "LMKL K_L-K_P (doubling)",
                                   "LMKL K_L-K_P (doubling) [diag]"],
                        "status": [1, 0, 1], "n_iter": [20, 1, 20]})
    conv = lmkl.convergence([raw]).set_index("family")
    assert conv.loc["lmkl", "fits"] == 1 and conv.loc["lmkl", "full schedule"] == 1
    assert conv.loc["lmkl (doubling)", "fits"] == 2
    assert conv.loc["lmkl (doubling)", "stopped after <= 1 update"] == 1


def test_fit_models_refits_the_protocol_fit_once(nb):
    proto = lmkl.Protocol(table1=[], n_rep=1, n_iter=3, caps={"gauss4_equal": 90})
    req = ("gauss4_equal", 0, "LMKL K_L-K_P", 10.0)
    res, again = lmkl.fit_models(proto, [req, req], nb["model_cell"])
    assert res is again and list(proto.models) == [req]
    assert lmkl.fit_models(proto, [req], None)[0] is res          # kept: no second fit
    # the fit of protocol_fold: same fold, seed and settings
    p = nb["prepare"]("gauss4_equal", 0, n_rep=1, cap=90, seed=proto.data_seed)
    direct = nb["fit_method"](p, "LMKL K_L-K_P", 10.0, n_iter=3,
                              seed=nb["fold_seed"](proto.data_seed, 0))
    np.testing.assert_array_equal(res.dual_coef, direct.dual_coef)
    np.testing.assert_array_equal(res.gating_coef, direct.gating_coef)
    assert res.intercept == direct.intercept


def test_grid_values_of_several_models_equal_one_at_a_time(nb):
    proto = lmkl.Protocol(table1=[], n_rep=1, n_iter=2, caps={"gauss4_equal": 90})
    reqs = [("gauss4_equal", 0, m, 1.0) for m in ("SVM K_G", "MKL K_L-K_P", "LMKL K_L-K_P")]
    models = lmkl.fit_models(proto, reqs, nb["model_cell"])
    p = nb["prepare"]("gauss4_equal", 0, n_rep=1, cap=90, seed=proto.data_seed)
    xx, yy = lmkl.panel_grid(p, n_grid=12)
    together = nb["grid_values"](p, [(r[2], m) for r, m in zip(reqs, models)], xx, yy, 50)
    for (_, _, method, _), res, (f, eta) in zip(reqs, models, together):
        [(f1, eta1)] = nb["grid_values"](p, [(method, res)], xx, yy, chunk=50)
        np.testing.assert_array_equal(f, f1)
        assert (eta is None) == (method == "SVM K_G" or method.startswith("MKL"))
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


def test_roundoff_summary_counts_changes():
    table = pd.DataFrame({"dataset": ["g", "g", "h"], "C": [1.0, 1.0, 1.0],
                          "C_pert": [1.0, 10.0, 1.0], "test_acc": [90.0, 80.0, 70.0],
                          "test_acc_pert": [90.0, 82.5, 70.0], "sv_pct": [20.0, 30.0, 40.0],
                          "sv_pct_pert": [20.0, 27.0, 40.0],
                          "max_gate_last": [0.9, 0.8, 0.7],
                          "max_gate_last_pert": [0.9, 0.9, 0.7]})
    summ = lmkl.roundoff_summary(table).set_index("dataset")
    assert summ.loc["g", "fits"] == 2 and summ.loc["g", "folds with another C"] == 1
    assert summ.loc["g", "max |d acc| (points)"] == pytest.approx(2.5)
    assert summ.loc["g", "max |d SV%|"] == pytest.approx(3.0)
    assert summ.loc["g", "mean max gate (perturbed)"] == pytest.approx(0.9)
    assert summ.loc["h", "fits with acc changed"] == 0


def test_gain_equivalence_and_every_set_claims(nb):
    gain, as_accurate, on_every_set = nb["gain"], nb["as_accurate"], nb["on_every_set"]
    claim = gain("C5b", "gain", [2.0, 3.0, 2.5, 3.5], context="ctx; ")
    assert claim.holds is True and claim.evidence.startswith("ctx; ")
    assert "p < 0.05" in claim.tolerance and claim.source == "Sec. 4.2, Table 1"
    assert gain("C5b", "none", [-2.0, -3.0, -2.5]).holds is False
    assert gain("C5b", "noise", [3.0, -2.0, 1.0, -1.5]).holds == "inconclusive"
    assert as_accurate("C7c", "eq", [0.5, -0.5, 0.2, 0.1]).holds is True
    assert as_accurate("C7c", "far", [5.0, 5.5, 6.0, 5.2]).holds is False
    assert as_accurate("C7c", "wide", [8.0, -8.0]).holds == "inconclusive"
    kw = dict(rule="r", tolerance="t")
    assert on_every_set("C6b", "a", {"x": (True, ""), "y": (True, "")}, **kw).holds is True
    assert on_every_set("C6b", "a", {"x": (True, ""), "y": ("inconclusive", "")},
                        **kw).holds == "inconclusive"
    assert on_every_set("C6b", "a", {"x": (False, ""), "y": ("inconclusive", "")},
                        **kw).holds is False
    assert on_every_set("C6b", "a", {}, **kw).holds == "inconclusive"


def test_c3d_is_inconclusive_when_the_roundoff_rerun_crosses_the_threshold(nb):
    rows = [{"dataset": "gauss4_equal", "method": method, "C": 1.0, "fold": fold,
             "test_acc": 90.0, "sv_pct": 20.0, "max_gate_first": 0.5, "max_gate_last": gate}
            for method in ("LMKL K_L-K_P", "LMKL K_L-K_L-K_L", "MKL K_L-K_P")
            for fold, gate in enumerate((0.9, 0.92))]
    g4_sel = pd.DataFrame(rows)
    lmkl_rows = g4_sel[g4_sel.method.str.startswith("LMKL")]

    def crisp(sel, gate, sfx=""):
        nb.update(g4_sel=sel, bayes={"gauss4_equal": 0.92},  # the notebook's globals
                  roundoff=lmkl_rows.assign(C_pert=1.0, test_acc_pert=90.0, sv_pct_pert=20.0,
                                            max_gate_last_pert=gate))
        return nb["crisp_claim"](sfx, "gauss4_equal")

    claim = crisp(g4_sel, 0.95)
    assert claim.id == "C3d" and claim.hard and "Bayes 92.00 %" in claim.text
    assert claim.holds is True and "0.91 over 4 fits" in claim.evidence
    assert "0.95 when the protocol (C selection included) is rerun" in claim.evidence
    claim = crisp(g4_sel, 0.85)
    assert claim.holds == "inconclusive" and "inconclusive if the two disagree" in claim.rule
    assert crisp(g4_sel.assign(max_gate_last=0.8), 0.85).holds is False
    # a round-off table of the other normalisation does not apply
    assert "rerun" not in crisp(g4_sel, 0.85, " [diag]").evidence
