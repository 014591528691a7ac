"""Fast tests of the pure helpers of ``mklcore.repro.kloft2009_lpmkl`` (claims, tables)."""

import numpy as np
import pandas as pd
import pytest

import mklcore.repro.kloft2009_lpmkl as ke
from mklcore.repro.reporting import Claim


def test_norm_label():
    assert [ke.norm_label(p) for p in (1, 4 / 3, 2.0, 16, np.inf)] == ["1", "4/3", "2", "16", "inf"]


def _timing_rows(times, n_values, x="n", n_fixed=500):
    """Rows shaped like timing_cell's output: cpu_s = times[method] * (x / x0) ** slope."""
    rows = []
    for method, (t0, slope) in times.items():
        family, p, _ = ke.TIMING_METHODS[method]
        for v in n_values:
            for rep in range(2):
                rows.append({"panel": x, "n": v if x == "n" else n_fixed,
                             "n_kernels": 50 if x == "n" else v, "repeat": rep, "method": method,
                             "family": family, "p": ke.norm_label(p),
                             "cpu_s": t0 * (v / n_values[0]) ** slope * (1 + 0.01 * rep),
                             "objective": 10.0 if p == 1 else 5.0, "n_svm_calls": 3,
                             "censored": False})
    return pd.DataFrame(rows)


PAPER_LIKE = {"sum kernel": (0.01, 0.2), "SILP": (0.1, 2.0), "SimpleMKL": (5.0, 2.5),
              "CP p=1": (0.12, 2.0), "Newton p=4/3": (0.2, 2.1), "CP p=4/3": (0.3, 2.1),
              "Newton p=2": (0.2, 2.0), "CP p=2": (0.3, 2.0), "analytic p=2": (0.2, 2.0)}


def test_timing_claims_hold_on_paper_like_timings():
    df_n = _timing_rows(PAPER_LIKE, [100, 200, 400])
    df_m = _timing_rows({m: (t, 0.1 if m == "sum kernel" else 1.0)
                         for m, (t, _) in PAPER_LIKE.items()}, [5, 10, 20], x="n_kernels")
    claims = {c.id: c for c in ke.timing_claims(df_n, df_m)}
    assert list(claims) == ["T1", "T2", "T3", "T4", "T5", "T6"]
    assert all(c.holds for c in claims.values()), {k: c.evidence for k, c in claims.items()}
    assert ke.differing_claims(list(claims.values())) == []


def test_timing_claims_detect_a_slow_sum_kernel_and_l1_disagreement():
    times = dict(PAPER_LIKE, **{"sum kernel": (10.0, 0.2)})
    df_n = _timing_rows(times, [100, 200, 400])
    df_m = _timing_rows(times, [5, 10], x="n_kernels")
    df_n.loc[df_n["method"] == "SimpleMKL", "objective"] = 10.1  # 1 % off the other l1 solvers
    claims = {c.id: c for c in ke.timing_claims(df_n, df_m)}
    assert not claims["T1"].holds and not claims["T6"].holds
    assert ke.l1_agreement(df_n) == pytest.approx(0.01)
    ids = [cid for cid, _ in ke.differing_claims(list(claims.values()))]
    assert "T1" in ids and "T6" in ids


def _splits(mcc, noise=0.002, n_splits=4):
    """Per-split MCCs: the mean per norm plus a split effect shared by all norms."""
    rng = np.random.default_rng(0)
    shared = rng.normal(0.0, 0.01, n_splits)
    return pd.DataFrame({q: m + shared + rng.normal(0.0, noise, n_splits) for q, m in mcc.items()},
                        index=pd.Index(range(n_splits), name="split"))


def _summary(mcc):
    return pd.DataFrame({"p": list(mcc), "mcc_mean": list(mcc.values()),
                         "mcc_se": [0.01] * len(mcc), "mcc_oracle": list(mcc.values())})


def test_table1_claims_and_comparison():
    good = {"1": 0.90, "4/3": 0.8995, "2": 0.88, "4": 0.86, "inf": 0.85}
    claims = ke.table1_claims(_splits(good, noise=0.0005), _splits(good, noise=0.0005))
    assert [c.id for c in claims] == ["P1", "P2", "P2 (C on validation)", "P3"]
    assert all(c.holds is True for c in claims), [c.evidence for c in claims]
    assert all(c.rule and c.tolerance for c in claims)
    cmp = ke.table1_comparison(_summary(good), claims)
    assert cmp.loc[0, "ours"] == "l1 0.900, l-inf 0.850"
    assert cmp.loc[1, "ours"] == claims[1].evidence

    bad = {"1": 0.80, "4/3": 0.70, "2": 0.75, "4": 0.85, "inf": 0.90}
    held = {c.id: c.holds for c in ke.table1_claims(_splits(bad))}
    assert held == {"P1": False, "P2": False, "P3": False}
    # norms inside the noise: P3 (a claimed drop) is inconclusive, not a pass
    flat = {"1": 0.9795, "4/3": 0.9774, "2": 0.9768, "4": 0.976, "8": 0.9762, "16": 0.976,
            "inf": 0.9759}
    p3 = {c.id: c for c in ke.table1_claims(_splits(flat, noise=0.003))}["P3"]
    assert p3.holds == "inconclusive", p3.evidence
    # a single split: no standard error, P2 cannot be decided
    one = ke.table1_claims(_splits(good, n_splits=1))
    assert {c.id: c.holds for c in one}["P2"] == "inconclusive"


def test_table1_splits_protocols():
    df = pd.DataFrame({"split": [0, 1, 0, 1], "p": [1.0, 1.0, 2.0, 2.0],
                       "mcc_test": [[0.5, 0.9], [0.6, 0.8], [0.7, 0.1], [0.9, 0.2]],
                       "mcc": [0.5, 0.8, 0.1, 0.9]})
    test = ke.table1_splits(df, "test")
    assert test["1"].tolist() == [0.9, 0.8] and test["2"].tolist() == [0.7, 0.9]
    assert ke.table1_splits(df, "validation")["2"].tolist() == [0.1, 0.9]


_P = {"1": 1.0, "4/3": 4 / 3, "2": 2.0, "4": 4.0, "inf": np.inf}


def _fig2_rows(auc, n_reps=4, noise=0.002, dataset="synthetic", alternating=False):
    """Rows like dna_cell's; ``alternating``: noise +-noise by (rep, norm), zero mean per norm."""
    rng = np.random.default_rng(1)
    rows = []
    for n, per_p in auc.items():
        for rep in range(n_reps):
            shared = rng.normal(0.0, 0.01)
            for k, (p, a) in enumerate(per_p.items()):
                if alternating:
                    rows.append({"dataset": dataset, "n": n, "rep": rep, "p": _P[p],
                                 "auc": a + shared + noise * (-1) ** rep * (k - 2) / 2})
                    continue
                rows.append({"dataset": dataset, "n": n, "rep": rep,
                             "p": _P[p],
                             "auc": a + shared + rng.normal(0.0, noise)})
    return pd.DataFrame(rows)


def test_figure2_claims():
    paper_like = _fig2_rows({100: {"1": 0.80, "4/3": 0.86, "2": 0.89, "4": 0.85, "inf": 0.84},
                             200: {"1": 0.82, "4/3": 0.87, "2": 0.90, "4": 0.87, "inf": 0.86},
                             400: {"1": 0.85, "4/3": 0.895, "2": 0.90, "4": 0.895, "inf": 0.895}})
    claims = ke.figure2_claims(paper_like, "synthetic")
    assert [c.id for c in claims] == [f"G{k} (synthetic DNA)" for k in (1, 2, 3, 4)]
    assert all(c.holds is True for c in claims), [c.evidence for c in claims]
    assert all(c.rule and c.tolerance for c in claims)
    sparse = _fig2_rows({100: {"1": 0.95, "4/3": 0.84, "2": 0.83, "4": 0.84, "inf": 0.85},
                         400: {"1": 0.97, "4/3": 0.86, "2": 0.85, "4": 0.86, "inf": 0.87}})
    held = [c.holds for c in ke.figure2_claims(sparse, "synthetic")]
    assert held[:3] == [False, False, False]
    tied = _fig2_rows({100: {q: 0.85 for q in ("1", "4/3", "2", "4", "inf")},
                       400: {q: 0.88 for q in ("1", "4/3", "2", "4", "inf")}}, noise=0.003,
                     alternating=True)
    held = {c.id: c.holds for c in ke.figure2_claims(tied, "synthetic")}
    assert held["G2 (synthetic DNA)"] in ("inconclusive", False)
    assert held["G3 (synthetic DNA)"] in ("inconclusive", False)
    assert held["G1 (synthetic DNA)"] == "inconclusive"


def test_g3_is_a_rank_claim():
    # l2 highest but not significantly above l4/3: a rank claim holds (no significance needed)
    close = _fig2_rows({100: {"1": 0.80, "4/3": 0.889, "2": 0.89, "4": 0.85, "inf": 0.84},
                        200: {"1": 0.82, "4/3": 0.899, "2": 0.90, "4": 0.87, "inf": 0.86}},
                       noise=0.004)
    g3 = {c.id: c for c in ke.figure2_claims(close, "synthetic")}["G3 (synthetic DNA)"]
    assert g3.holds is True, g3.evidence
    # another norm significantly above l2: differs
    above = _fig2_rows({100: {"1": 0.80, "4/3": 0.92, "2": 0.89, "4": 0.85, "inf": 0.84},
                        200: {"1": 0.82, "4/3": 0.93, "2": 0.90, "4": 0.87, "inf": 0.86}})
    g3 = {c.id: c for c in ke.figure2_claims(above, "synthetic")}["G3 (synthetic DNA)"]
    assert g3.holds is False, g3.evidence


def test_timing_helpers():
    rows = []
    for n in (100, 200):
        for m, t in (("sum kernel", 0.01), ("SILP", 0.05), ("SimpleMKL", 0.1),
                     ("CP p=4/3", 0.2 if n == 100 else 0.05), ("Newton p=2", 0.04)):
            rows.append({"panel": "n", "n": n, "n_kernels": 50, "method": m, "cpu_s": t,
                         "family": "simplemkl" if m == "SimpleMKL" else "lpmkl",
                         "converged": True, "censored": False})
    df = pd.DataFrame(rows)
    s = ke.timing_summary(df)
    slower = ke.slower_than_simplemkl({m: g.set_index("n")["time_mean"]
                                       for m, g in s.groupby("method")})
    assert slower == {100: ["CP p=4/3"]}
    df_m = df.assign(panel="M", n_kernels=df["n"] // 20, n=200)
    left, right = ke.figure1_tables(df, df_m)
    assert list(right.columns) == ["method", "M=5", "M=10"]
    assert left["method"].tolist() == ["sum kernel", "SILP", "SimpleMKL", "CP p=4/3",
                                       "Newton p=2"]
    text = ke.timing_stop_text(df, mode="interleaved", stop="gap")
    assert "0 of 2 SimpleMKL runs stopped on the budget" in text


def test_gain_test_handles_a_single_pair():
    assert ke.gain_test([0.01]).holds == "inconclusive"
    assert ke.gain_test([0.02, 0.03, 0.025, 0.03]).holds is True


def test_claim_rows_and_differing_claims():
    claims = [Claim("A", "a", True, "ok", rule="r", tolerance="t"),
              Claim("B", "b", False, "not ok", rule="r"),
              Claim("C", "c", None, "untested", rule="r"),
              Claim("D", "d", "inconclusive", "noise", rule="r")]
    rows = ke.claim_rows(claims)
    assert rows["verdict"].tolist() == ["match", "differs", "n/a", "inconclusive"]
    assert rows.loc[0, "tolerance"] == "t" and rows.loc[0, "rule"] == "r"
    assert ke.differing_claims(claims) == [("B", "not ok")]
    assert ke.differing_claims(claims, "inconclusive") == [("D", "noise")]


def test_tss_like_dna_is_seeded_and_plants_one_signal_per_window():
    X, y = ke.make_tss_like_dna(400, random_state=3)
    X2, y2 = ke.make_tss_like_dna(400, random_state=3)
    assert X.shape == (400, 200) and np.array_equal(X, X2) and np.array_equal(y, y2)
    assert (y == 1).sum() == 200
    assert not np.array_equal(X, ke.make_tss_like_dna(400, random_state=4)[0])
    seqs = ["".join(row) for row in X]
    tata = np.array(["TATAAA" in s[:40] for s in seqs])
    gatc = np.array([s[40:90].count("GATC") for s in seqs])
    assert tata[y == 1].mean() > tata[y == -1].mean() + 0.25
    assert gatc[y == 1].mean() > gatc[y == -1].mean() + 0.5
    at = np.isin(X[:, 148:162], ["A", "T"]).mean(axis=1)
    gc = np.isin(X[:, 178:192], ["C", "G"]).mean(axis=1)
    assert at[y == 1].mean() > at[y == -1].mean() + 0.1
    assert gc[y == 1].mean() > gc[y == -1].mean() + 0.1
    # outside its block the GC signal leaves the energy window's composition alone
    assert abs(np.isin(X[:, 140:148], ["C", "G"]).mean() - 0.5) < 0.05


def test_tss_like_dna_per_signal_probabilities():
    # one probability per signal, in the order of TSS_LIKE_SIGNALS; scalars mean all signals
    X, y = ke.make_tss_like_dna(300, random_state=5, p_pos=[1.0, 0.0, 0.0, 1.0, 0.0],
                                p_neg=0.0, p_block=1.0)
    seqs = ["".join(row) for row in X]
    tata = np.array(["TATAAA" in s[:40] for s in seqs])
    assert tata[y == 1].all()
    at = np.isin(X[:, 148:162], ["A", "T"]).all(axis=1)
    assert at[y == 1].all() and at[y == -1].mean() < 0.01
    gc = np.isin(X[:, 178:192], ["C", "G"]).mean(axis=1)
    assert abs(gc[y == 1].mean() - gc[y == -1].mean()) < 0.05
    # the scalar defaults and their per-signal spelling give the same sequences
    X0, y0 = ke.make_tss_like_dna(200, random_state=1)
    X1, y1 = ke.make_tss_like_dna(200, random_state=1, p_pos=[0.5] * 5, p_neg=(0.1,) * 5,
                                  p_block=0.8)
    assert np.array_equal(X0, X1) and np.array_equal(y0, y1)


def test_drop_one_summary():
    rows = []
    jitter = [0.0, 0.002, -0.001, 0.001, -0.002]  # losses vary a little across training sets
    for rep in range(5):
        rows.append({"rep": rep, "subset": "all", "kernel": "", "auc": 0.9 + 0.01 * rep})
        for k, name in enumerate(ke.DNA_KERNEL_NAMES):
            rows.append({"rep": rep, "subset": f"without {name}", "kernel": name,
                         "auc": 0.88 + 0.01 * rep - jitter[rep] - 0.001 * k * (rep % 2)})
            rows.append({"rep": rep, "subset": f"only {name}", "kernel": name, "auc": 0.7})
    table = ke.drop_one_summary(pd.DataFrame(rows))
    assert table["kernel"].tolist() == list(ke.DNA_KERNEL_NAMES)
    assert table["needed"].tolist()[0] is True
    np.testing.assert_allclose(table["loss"].iloc[0], 0.02)


def test_comparison_items_and_weights():
    ref = pd.DataFrame({"p": ["1", "2"], "solver": ["SILP", "newton"],
                        "objective": [24.2363999, 16.0983153], "optimum": [24.2363916, 16.0983153],
                        "rel_err": [0.0, 0.0], "converged": [True, True]})
    items = ke.reference_comparison(ref)
    assert items[0]["item"] == "reference optimum (toy problem, cvxpy), p=1, SILP"
    assert items[0]["ours"] == 24.2364 and items[0]["rtol"] == 1e-4
    pinf = pd.DataFrame({"p": ["16", "64", "inf"], "objective": [10.3386805, 9.83, 9.66]})
    items = ke.pinf_comparison(pinf)
    # p = 16 is a row of the reference check already: not repeated
    assert [i["paper"] for i in items] == [ke.REFERENCE_PINF[64.0]]
    df = pd.DataFrame({"dataset": ["splice"] * 2, "p": [1.0, 1.0],
                       "weights": [[1.0, 0.0], [0.0, 1.0]]})
    assert ke.figure2_weights(df).tolist() == [[0.5, 0.5]]
    np.testing.assert_allclose(ke.table1_weights(df)["1"], [0.5, 0.5])
