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


def _table1(mcc):
    return pd.DataFrame({"p": list(mcc), "mcc_mean": list(mcc.values()),
                         "mcc_se": [0.01] * len(mcc), "mcc_oracle": list(mcc.values())})


def test_table1_claims_and_comparison():
    good = _table1({"1": 0.90, "4/3": 0.895, "2": 0.88, "4": 0.86, "inf": 0.85})
    claims = ke.table1_claims(good)
    assert [c.id for c in claims] == ["P1", "P2", "P3"]
    assert all(c.holds for c in claims)
    cmp = ke.table1_comparison(good, claims)
    assert cmp.loc[0, "ours"] == "l1 0.900, l-inf 0.850"
    assert cmp.loc[1, "ours"] == claims[1].evidence

    bad = _table1({"1": 0.80, "4/3": 0.70, "2": 0.75, "4": 0.85, "inf": 0.90})
    held = {c.id: c.holds for c in ke.table1_claims(bad)}
    assert held == {"P1": False, "P2": False, "P3": False}


def _fig2(auc):
    rows = []
    for n, per_p in auc.items():
        for p, a in per_p.items():
            rows.append({"dataset": "synthetic", "n": n, "p": p, "n_repeats": 3,
                         "auc_mean": a, "auc_se": 0.001})
    return pd.DataFrame(rows)


def test_figure2_claims():
    paper_like = _fig2({100: {"1": 0.80, "4/3": 0.86, "2": 0.87, "4": 0.85, "inf": 0.84},
                        400: {"1": 0.85, "4/3": 0.89, "2": 0.90, "4": 0.89, "inf": 0.89}})
    claims = ke.figure2_claims(paper_like, "synthetic")
    assert [c.id for c in claims] == [f"G{k} (synthetic DNA)" for k in (1, 2, 3, 4)]
    assert all(c.holds for c in claims), [c.evidence for c in claims]
    sparse = _fig2({100: {"1": 0.95, "4/3": 0.84, "2": 0.83, "4": 0.84, "inf": 0.85},
                    400: {"1": 0.97, "4/3": 0.86, "2": 0.85, "4": 0.86, "inf": 0.87}})
    held = [c.holds for c in ke.figure2_claims(sparse, "synthetic")]
    assert held[:3] == [False, False, False]


def test_claim_rows_and_differing_claims():
    claims = [Claim("A", "a", True, "ok"), Claim("B", "b", False, "not ok"),
              Claim("C", "c", None, "untested")]
    rows = ke.claim_rows(claims)
    assert rows["verdict"].tolist() == ["match", "differs", "n/a"]
    assert ke.differing_claims(claims) == [("B", "not ok")]


def test_comparison_items_and_weights():
    ref = pd.DataFrame({"p": ["1", "2"], "solver": ["SILP", "newton"],
                        "objective": [24.2363999, 16.0983153], "optimum": [24.2363916, 16.0983153],
                        "rel_err": [0.0, 0.0], "converged": [True, True]})
    items = ke.reference_comparison(ref)
    assert items[0]["item"] == "reference optimum (toy problem, cvxpy), p=1, SILP"
    assert items[0]["ours"] == 24.2364 and items[0]["rtol"] == 1e-4
    pinf = pd.DataFrame({"p": ["16", "64", "inf"], "objective": [10.3386805, 9.83, 9.66]})
    items = ke.pinf_comparison(pinf)
    assert [i["paper"] for i in items] == [ke.REFERENCE_PINF[16.0], ke.REFERENCE_PINF[64.0]]
    df = pd.DataFrame({"dataset": ["splice"] * 2, "p": [1.0, 1.0],
                       "weights": [[1.0, 0.0], [0.0, 1.0]]})
    assert ke.figure2_weights(df).tolist() == [[0.5, 0.5]]
    np.testing.assert_allclose(ke.table1_weights(df)["1"], [0.5, 0.5])
