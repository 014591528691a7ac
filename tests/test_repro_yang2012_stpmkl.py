"""Fast tests of ``mklcore.repro.yang2012_stpmkl`` and of the claim helpers of its notebook."""

import numpy as np
import pandas as pd
import pytest

import mklcore.repro.yang2012_stpmkl as ye
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


@pytest.fixture(scope="module")
def nb():
    """The functions of notebooks/yang2012_stpmkl.ipynb (the claims' tests moved there)."""
    from mklcore.repro.notebook import notebook_functions

    return notebook_functions("yang2012_stpmkl")


ROBUST = {"StPMKL": lambda q: 0.85 - 0.1 * q, "SiPMKL": lambda q: 0.85 - 0.5 * q,
          "MiPMKL": lambda q: 0.80 - 0.5 * q, "AMP-l1": lambda q: 0.85 - 0.4 * q}


def test_paired_differences_and_gains_inside_the_noise(nb):
    acc_df = _acc_df(ROBUST, jitter={}, jitter_hi={})
    # StPMKL's gains over SiPMKL at q = 0.3, minus those at q = 0: +0.3, -0.28, +0.04 per set
    shift = {"a": 0.0, "b": -0.58, "c": -0.26}
    hi = (acc_df["method"] == "StPMKL") & (acc_df["q"] == 0.3)
    acc_df.loc[hi, "accuracy"] += acc_df.loc[hi, "dataset"].map(shift) + 0.18
    d = nb["paired_differences"](acc_df, "StPMKL", "SiPMKL", [0.3], minus_q0=True)
    np.testing.assert_allclose(d, [0.3, -0.28, 0.04])
    assert nb["budget_gain"](acc_df, [0.0, 0.3]).holds == "inconclusive"


def test_budget_gain_detects_a_gain_and_a_loss(nb):
    gain = nb["budget_gain"](_acc_df(ROBUST), [0.0, 0.3])  # StPMKL - AMP-l1 = +0.09 +- 0.01
    assert gain.holds is True and gain.n == 3
    assert "significant part" in nb["budget_sentence"](gain, (3, 3))
    fragile = dict(ROBUST, StPMKL=lambda q: 0.80 - 0.6 * q)
    loss = nb["budget_gain"](_acc_df(fragile, jitter={"a": 0.0, "b": 0.01, "c": -0.01}),
                             [0.0, 0.3])
    assert loss.holds is False  # StPMKL - AMP-l1 = -0.06 on every set
    assert "shows no significant gain" in nb["budget_sentence"](loss, (3, 3))


def test_equivalence_test_of_s2(nb):
    assert nb["equivalence"]([0.0, 0.0])[0] == "inconclusive"  # no variation: no noise estimate
    assert nb["equivalence"]([0.01, -0.01, 0.005, 0.0])[0] is True
    assert nb["equivalence"]([0.1, 0.12, 0.11])[0] is False
    assert nb["equivalence"]([0.05, -0.04, 0.0])[0] == "inconclusive"
    assert "+-0.02" in nb["EQUIV_RULE"] and nb["S6_FACTOR"] == 10.0


def test_budget_ties_are_inconclusive_and_active_budgets_are_counted(nb):
    acc_df = _acc_df(dict(ROBUST, **{"AMP-l1": ROBUST["StPMKL"]}), jitter_hi={})
    budget = nb["budget_gain"](acc_df, [0.0, 0.3])
    assert budget.holds == "inconclusive" and "exactly 0" in budget.evidence
    active = nb["budget_active"](acc_df, [0.0, 0.3])
    assert active == (3, 3)
    text = nb["budget_sentence"](budget, active)
    assert "active (selected rho < n) in 3 of 3 StPMKL refits" in text
    assert "cannot attribute any accuracy to the budget rho" in text


def test_budget_sign_accuracy_and_slope(nb):
    assert nb["budget"](0.5, 100, 0.2, 0.1) == 50.0
    assert nb["budget"]("theory", 100, 0.2, 0.1) == rho_from_theory(100, 0.2, 0.1)
    y = np.array([1.0, -1.0, -1.0, 1.0])
    assert nb["sign_accuracy"](y, np.array([0.5, 0.0, -2.0, -1.0])) == pytest.approx(0.75)
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


def test_binary_labels():
    np.testing.assert_array_equal(ye.binary_labels(["b", "a", "b"]), [1.0, -1.0, 1.0])
    with pytest.raises(ValueError):
        ye.binary_labels([1, 2, 3])


def _conv(ratio, vi_slope, below_start, best_eta, names=("a", "b", "c")):
    """A convergence table like the notebook's, one row per set (AMP reduction = 20x)."""
    return pd.DataFrame([{"data set": d, "VI / AMP": r, "VI slope": s, "AMP slope": -1.0,
                          "AMP reduction": 20.0, "VI reduction": 20.0 / r,
                          "VI runs below start": k, "VI runs": 13, "VI diverged": 2,
                          "best eta0 / tau": e}
                         for d, r, s, k, e in zip(names, ratio, vi_slope, below_start, best_eta)])


ETA = [1e-4, 1e-2, 1.0, 100.0]


def _explain(conv, eta):
    return ye.s6_explanation(conv, eta, factor=10.0, worst=-0.5, stall=0.9)


def test_s6_explanation_follows_the_slopes():
    # every set below the factor, VI steeper than its worst case (-0.5) on every set
    fast = _explain(_conv([2.0, 3.0, 4.0], [-0.8, -0.7, -0.6], [5, 5, 5],
                                      [1.0, 1.0, 1.0]), ETA)
    assert "below 10 on 3 of 3 sets" in fast
    assert "steeper than VI's O(1/sqrt(T)) worst-case rate (slope -0.5) on 3 of 3 sets" in fast
    assert "faster over these 1000 iterations than its worst-case rate" in fast
    assert "not faster" not in fast and "not steeper" not in fast
    # the same ratios with flat VI slopes: the "faster than its worst case" reading must go
    slow = _explain(_conv([2.0, 3.0, 4.0], [-0.1, -0.3, 0.0], [5, 5, 5],
                                      [1.0, 1.0, 1.0]), ETA)
    assert "on 0 of 3 sets and not steeper on 3 (a, b and c)" in slow
    assert "faster over these 1000 iterations" not in slow
    assert "on a, b and c VI is not faster than its worst-case rate" in slow
    assert "AMP's own reduction in 1000 iterations (a 20.0x, b 20.0x and c 20.0x)" in slow
    # mixed: each set is named under the reading its own slope supports
    mixed = _explain(_conv([2.0, 9.9, 12.0], [-0.8, -0.1, -0.2], [5, 5, 5],
                                       [1.0, 1.0, 1.0]), ETA)
    assert "below 10 on 2 of 3 sets (a 2.0x and b 9.9x)" in mixed
    assert "on a the best VI run is faster" in mixed and "on b VI is not faster" in mixed
    assert "steeper than VI's O(1/sqrt(T)) worst-case rate (slope -0.5) on 1 of 3 sets (a)" in mixed


def test_s6_explanation_names_the_sets_where_vi_never_moves():
    stuck = _explain(_conv([2.0, 3.0, 10.2], [-0.8, -0.7, 0.0], [5, 5, 0],
                                       [1.0, 3.0, 1e-4]), ETA)
    assert "on c every VI step size (eta0 / tau from 0.0001 to 100, 4 runs; diverged: c 2) " \
           "stays at its starting gap" in stuck
    assert "the ratio there is AMP's reduction alone (best VI run: c 2.0x)" in stuck
    assert "at an end of the grid" not in stuck  # c's smallest step is the stalled set's best
    moving = _explain(_conv([2.0, 3.0, 10.2], [-0.8, -0.7, -0.6], [5, 5, 1],
                                        [1.0, 3.0, 100.0]), ETA)
    assert "stays at its starting gap" not in moving
    assert "on every set at least one VI step size" in moving
    assert "at an end of the grid on c" in moving


def test_gap_ratio_label_and_rule_share_one_threshold(nb):
    factor, close = nb["S6_FACTOR"], nb["S6_CLOSE"]
    verdict = nb["gap_ratio_verdict"]
    assert verdict(factor) == "match" and verdict(factor * 1.02) == "match"
    assert verdict(factor * 0.99) == "close" and verdict(factor / close) == "close"
    assert verdict(factor / close * 0.99) == "differs" and verdict(2.1) == "differs"
    assert verdict(0.5) == "differs"
    rule = nb["GAP_RATIO_RULE"]
    assert f">= {factor:g} times AMP's" in rule and f">= {factor / close:g} times AMP's" in rule
