"""Fast tests of the pure helpers of ``mklcore.repro.yang2012_stpmkl`` (claims, tables)."""

import numpy as np
import pandas as pd
import pytest

import mklcore.repro.yang2012_stpmkl as ye
from mklcore.repro.reporting import SUMMARY_COLUMNS
from mklcore.stpmkl import rho_from_theory


#: per-set jitter of StPMKL's accuracy at q = 0 and at q > 0 (zero mean over the sets), so that
#: the paired tests see some variation across the (data set, trial) pairs
JITTER = {"a": 0.005, "b": -0.005, "c": 0.0}
JITTER_HI = {"a": 0.01, "b": -0.01, "c": 0.0}


def _acc_df(acc, datasets=("a", "b", "c"), noise=(0.0, 0.3), jitter=None, jitter_hi=None):
    """Rows like noisy_trial's: ``acc[method](q)`` gives the accuracy on every set."""
    jitter = JITTER if jitter is None else jitter
    jitter_hi = JITTER_HI if jitter_hi is None else jitter_hi
    rows = []
    for d in datasets:
        for q in noise:
            for m in ye.METHODS:
                extra = (jitter if q == 0.0 else jitter_hi).get(d, 0.0) if m == "StPMKL" else 0.0
                row = {"dataset": d, "q": q, "repeat": 0, "method": m,
                       "accuracy": acc[m](q) + extra,
                       "weights_l1_to_sipmkl": 0.5 if m == "MiPMKL" else 0.0,
                       "converged": True, "gap": 0.005, "n_iter": 100}
                if m == "StPMKL":
                    row.update(rho_over_n=0.8 if q > 0 else 1.0, sum_gamma_over_rho=0.9,
                               gamma_flipped=0.9, gamma_clean=0.4, flipped_among_top=0.6,
                               n_flipped=int(100 * q), n_train=100)
                if m == "MiPMKL":
                    row.update(p_flipped=0.3, p_clean=0.8, flipped_among_dropped=0.5)
                if m == "AMP-l1":
                    row.update(rho_over_n=1.0)
                rows.append(row)
    return pd.DataFrame(rows)


class _Res(dict):
    __getattr__ = dict.__getitem__


def _conv(amp_gap, vi_gap, within_bound=True):
    conv = pd.DataFrame([{"data set": "a", "AMP gap": amp_gap, "best VI gap": vi_gap,
                          "VI / AMP": vi_gap / amp_gap, "AMP slope": -1.0, "VI slope": -0.5,
                          "gap <= bound": within_bound}])
    amp = _Res(history={"abs_gap": np.array([1.0, 0.5]), "bound": np.array([2.0, 1.0])})
    return conv, {"a": (amp, None)}


S1_OK = {"amp": _Res(objective=0.6462), "ref": 0.6460, "rel_err": 3e-4, "inside": True}

ROBUST = {"StPMKL": lambda q: 0.85 - 0.1 * q, "SiPMKL": lambda q: 0.85 - 0.5 * q,
          "MiPMKL": lambda q: 0.80 - 0.5 * q, "AMP-l1": lambda q: 0.85 - 0.4 * q}


def test_paper_claims_hold_on_paper_like_results():
    acc_df = _acc_df(ROBUST)
    conv, hist = _conv(1e-4, 1e-2)
    claims = ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], S1_OK, conv, hist)
    assert [c.id for c in claims] == [f"S{k}" for k in range(1, 8)]
    assert all(c.holds is True for c in claims), {c.id: c.evidence for c in claims}
    assert [c.hard for c in claims] == [True, False, False, False, False, False, True]
    assert all(c.rule for c in claims)  # every claim says how it is decided
    assert all(c.tolerance for c in claims)
    assert "equivalence test" in claims[1].rule and "factor 10" in claims[5].tolerance
    s3 = claims[2]
    assert "gain test" in s3.rule and "paired t-test over 3 pairs" in s3.rule
    # the budget: StPMKL - AMP-l1 = +0.09 at q = 0.3 on every set, a significant gain
    assert "significant part of StPMKL's accuracy is attributable to the budget" in s3.evidence


def test_gains_inside_the_noise_are_inconclusive():
    acc_df = _acc_df(ROBUST, jitter={}, jitter_hi={})
    # StPMKL's gains over SiPMKL (S3) and MiPMKL (S4) at q = 0.3: +0.3, -0.28, +0.04 per set
    shift = {"a": 0.0, "b": -0.58, "c": -0.26}
    hi = (acc_df["method"] == "StPMKL") & (acc_df["q"] == 0.3)
    acc_df.loc[hi, "accuracy"] += acc_df.loc[hi, "dataset"].map(shift) + 0.18
    conv, hist = _conv(1e-4, 1e-2)
    claims = {c.id: c for c in ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], S1_OK,
                                               conv, hist)}
    assert claims["S3"].holds == "inconclusive" and claims["S4"].holds == "inconclusive"
    d = ye.paired_differences(acc_df, "StPMKL", "SiPMKL", [0.3], minus_q0=True)
    np.testing.assert_allclose(d, [0.3, -0.28, 0.04])
    assert ye.budget_gain(acc_df, [0.0, 0.3]).holds == "inconclusive"


def test_paper_claims_detect_failures():
    fragile = dict(ROBUST, StPMKL=lambda q: 0.80 - 0.6 * q, MiPMKL=lambda q: 0.85 - 0.5 * q)
    acc_df = _acc_df(fragile, jitter={"a": 0.0, "b": 0.01, "c": -0.01})
    acc_df.loc[acc_df["method"] == "MiPMKL", "weights_l1_to_sipmkl"] = 0.0
    conv, hist = _conv(1e-2, 1e-4, within_bound=False)
    s1 = dict(S1_OK, inside=False)
    held = {c.id: c.holds for c in ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], s1,
                                                   conv, hist)}
    # S5: MiPMKL has SiPMKL's accuracy and weights at q = 0
    assert held == {"S1": False, "S2": False, "S3": False, "S4": False, "S5": False,
                    "S6": False, "S7": False}
    budget = ye.budget_gain(acc_df, [0.0, 0.3])
    assert budget.holds is False and budget.n == 3  # StPMKL - AMP-l1 = -0.06 on every set


def test_weighting_and_ablation_tables():
    acc_df = _acc_df(ROBUST)
    w = ye.weighting_table(acc_df)
    assert list(w.index) == [0.3]
    assert w.loc[0.3, "flip rate"] == pytest.approx(0.3)
    assert w.loc[0.3, "StPMKL mean gamma, flipped"] == pytest.approx(0.9)
    assert "0.90 against 0.40" in ye.weighting_text(w)
    a = ye.ablation_table(acc_df)
    assert a.loc[0.3, "StPMKL - AMP-l1"] == pytest.approx(0.09)
    assert a.loc[0.0, "selected rho < n (share)"] == 0.0
    assert a.loc[0.3, "selected rho < n (share)"] == 1.0
    assert "StPMKL - AMP-l1 = +0.000, +0.090" in ye.ablation_text(a)


def test_summary_table_rows():
    acc_df = _acc_df(ROBUST)
    conv, hist = _conv(1e-4, 1e-2)
    claims = ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], S1_OK, conv, hist)
    s = ye.summary_table(claims, conv, ye.ablation_table(acc_df), acc_df,
                         ["a", "b", "c"], [0.0, 0.3])
    assert list(s.columns) == SUMMARY_COLUMNS
    assert len(s) == 7 + 1 + 4 + 2 + 3 * 2 * 4
    assert (s["rule"].str.len() > 0).all() and (s["tolerance"].str.len() > 0).all()
    assert list(s.loc[:6, "verdict"]) == ["match"] * 7
    assert s.loc[2, "tolerance"] == "one-sided alpha = 0.05"
    assert "gain test" in s.loc[2, "rule"] and "mean gain" in s.loc[2, "note"]
    fits = s[s["item"] == "refits meeting the stopping rule, StPMKL"].iloc[0]
    assert fits["ours"] == "6 of 6 (median relative gap 0.005)"
    assert s.loc[7, "verdict"] == "match" and s.loc[7, "ours"] == "0.0001 / 0.01"
    row = s[s["item"] == "accuracy b, q=0.3, SiPMKL"].iloc[0]
    assert row["ours"] == pytest.approx(0.7) and row["verdict"] == "n/a"
    assert row["rule"].startswith("not compared")


def test_differences_text():
    acc_df = _acc_df(ROBUST)
    conv, hist = _conv(1e-4, 1e-2)
    claims = ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], S1_OK, conv, hist)
    budget = ye.budget_gain(acc_df, [0.0, 0.3])
    text = ye.differences_text(acc_df, ["heart", "pima"], claims, budget,
                               ye.weighting_table(acc_df), 1e-2, 1000)
    assert "pima (n = 768, d = 8, m = 90 kernels, 268 positives)" in text
    assert "wdbc (n = 569, d = 30, m = 310 kernels, 212 positives)" in text
    assert "wdbc is not in this run." in text
    assert "StPMKL: 6 of 6 refits met it" in text
    assert "none needed" in text  # every claim holds on these numbers
    fragile = _acc_df(dict(ROBUST, StPMKL=lambda q: 0.80 - 0.6 * q))
    claims = ye.paper_claims(fragile, [0.0, 0.3], ["a", "b", "c"], S1_OK, conv, hist)
    text = ye.differences_text(fragile, ["heart"], claims, ye.budget_gain(fragile, [0.0, 0.3]),
                               ye.weighting_table(fragile), 1e-2, 1000)
    assert "S3 is not supported; the budget rho shows no significant gain" in text
    assert "A hypothesis:" in text and "0.90 vs 0.40" in text


def test_budget_sign_accuracy_and_slope():
    assert ye.budget(0.5, 100, 0.2, 0.1) == 50.0
    assert ye.budget("theory", 100, 0.2, 0.1) == rho_from_theory(100, 0.2, 0.1)
    y = np.array([1.0, -1.0, -1.0, 1.0])
    assert ye.sign_accuracy(y, np.array([0.5, 0.0, -2.0, -1.0])) == pytest.approx(0.75)
    gaps = 3.0 / np.arange(1, 1001)
    assert ye.gap_slope(gaps) == pytest.approx(-1.0)


def test_l1mkl_nobias_cvx_single_linear_kernel():
    # one kernel K = x x^T on two separable points: max_a sum(a) - (a.y x)^2 / 2, 0 <= a <= C
    x, y = np.array([1.0, -1.0]), np.array([1.0, -1.0])
    K = np.outer(x, x)[None]
    # (a.y x) = a1 + a2 = s, value s - s^2 / 2, maximal at s = 1 -> 0.5
    assert ye.l1mkl_nobias_cvx(K, y, C=10.0) == pytest.approx(0.5, abs=1e-6)
    # with C = 0.25 the box binds: s = 0.5 -> 0.5 - 0.125
    assert ye.l1mkl_nobias_cvx(K, y, C=0.25) == pytest.approx(0.375, abs=1e-6)


def test_convergence_text_counts_the_refits_that_met_the_rule():
    acc_df = _acc_df(ROBUST)
    acc_df["converged"] = acc_df["method"].isin(["SiPMKL"]) | (acc_df["q"] == 0.0)
    acc_df["gap"] = np.where(acc_df["converged"], 0.005, 0.2)
    acc_df["n_iter"] = np.where(acc_df["converged"], 100, 1000)
    text = ye.convergence_text(acc_df, 1e-2, 1000)
    assert "StPMKL: 3 of 6 refits met it" in text and "SiPMKL: 6 of 6 refits met it" in text
    assert "AMP-l1: 3 of 6" in text and "<= 0.01" in text
    assert text.startswith("Refits solved by the 'exact' StPMKL solver")
    assert "'amp'" in ye.convergence_text(acc_df, 1e-2, 1000, solver="amp")


def test_s6_needs_a_factor_and_s2_is_an_equivalence_test():
    acc_df = _acc_df(ROBUST)
    conv, hist = _conv(1e-3, 5e-3)  # VI only 5x above AMP
    claims = {c.id: c for c in ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], S1_OK,
                                               conv, hist)}
    assert claims["S6"].holds is False
    s = ye.summary_table(list(claims.values()), conv, ye.ablation_table(acc_df), acc_df,
                         ["a", "b", "c"], [0.0, 0.3])
    assert s.loc[7, "verdict"] == "close" and "factor 10" in s.loc[7, "tolerance"]
    text = ye.differences_text(acc_df, ["heart"], list(claims.values()),
                               ye.budget_gain(acc_df, [0.0, 0.3]), ye.weighting_table(acc_df),
                               1e-2, 1000, conv=conv.assign(**{"AMP rel. gap": 0.06}))
    assert "S6 does not hold at a factor 10" in text and "0.060 (a)" in text
    assert ye.equivalence([0.0, 0.0])[0] == "inconclusive"  # no variation: no noise estimate
    assert ye.equivalence([0.01, -0.01, 0.005, 0.0])[0] is True
    assert ye.equivalence([0.1, 0.12, 0.11])[0] is False
    assert ye.equivalence([0.05, -0.04, 0.0])[0] == "inconclusive"


def test_budget_ties_are_inconclusive_and_active_budgets_are_counted():
    acc_df = _acc_df(dict(ROBUST, **{"AMP-l1": ROBUST["StPMKL"]}), jitter_hi={})
    budget = ye.budget_gain(acc_df, [0.0, 0.3])
    assert budget.holds == "inconclusive" and "exactly 0" in budget.evidence
    assert ye.budget_active(acc_df, [0.0, 0.3]) == (3, 3)
    claims = {c.id: c for c in ye.paper_claims(acc_df, [0.0, 0.3], ["a", "b", "c"], S1_OK,
                                               *_conv(1e-4, 1e-2))}
    ev = claims["S3"].evidence
    assert "active (selected rho < n) in 3 of 3 StPMKL refits" in ev
    assert "cannot attribute any accuracy to the budget rho" in ev and "no part" not in ev


def test_binary_labels():
    np.testing.assert_array_equal(ye.binary_labels(["b", "a", "b"]), [1.0, -1.0, 1.0])
    with pytest.raises(ValueError):
        ye.binary_labels([1, 2, 3])
