"""Tests of the restricted master problems of the cutting-plane solvers (mklcore.masters)."""

import numpy as np
import pytest
from scipy.optimize import linprog

from mklcore.masters import Cuts, highs_lp, lp_master


def test_lp_master():
    """Two cuts: the LP picks the weight that balances them (eta = min_theta max_r cut)."""
    cuts = Cuts(2, prune=False)
    cuts.add(10.0, [4.0, 0.0])   # 10 - 4 theta_1
    cuts.add(10.0, [0.0, 6.0])   # 10 - 6 theta_2
    theta, eta = lp_master(cuts)
    # 10 - 4 t = 10 - 6 (1 - t)  =>  t = 0.6, eta = 7.6
    np.testing.assert_allclose(theta, [0.6, 0.4], atol=1e-9)
    assert eta == pytest.approx(7.6)


def test_cut_pruning():
    cuts = Cuts(2, max_cuts=3)
    for L, S in [(10, [4, 0]), (10, [0, 6]), (1, [0, 0]), (2, [0, 0]), (3, [0, 0])]:
        cuts.add(L, S)
    theta, eta = lp_master(cuts)
    cuts.prune(theta, eta)
    assert len(cuts) == 4 and cuts.n_pruned == 1
    assert 1.0 not in cuts.L  # the loosest cut went first


def test_highs_lp_is_linprog_bit_for_bit():
    rng = np.random.default_rng(1)
    for trial in range(20):
        R, M = int(rng.integers(1, 30)), int(rng.integers(2, 15))
        S = rng.random((R, M)) * rng.choice([1e-2, 1.0, 100.0])
        L = rng.random(R) * S.max() * M
        c = np.append(np.zeros(M), 1.0)
        A_ub = np.hstack([L[:, None] - S, -np.ones((R, 1))])
        A_eq = np.append(np.ones(M), 0.0)[None]
        ref = linprog(c, A_ub=A_ub, b_ub=np.zeros(R), A_eq=A_eq, b_eq=[1.0],
                      bounds=[(0.0, None)] * M + [(None, None)], method="highs")
        res = highs_lp(c, A_ub, np.zeros(R), A_eq, np.ones(1), np.append(np.zeros(M), -np.inf),
                       np.full(M + 1, np.inf))
        assert res["success"] == (ref.status == 0)
        np.testing.assert_array_equal(res["x"], ref.x)
        np.testing.assert_array_equal(res["ineqlin_marginals"], ref.ineqlin.marginals)
        assert res["fun"] == ref.fun
    # non-finite data: linprog's own error
    with pytest.raises(ValueError):
        highs_lp(c, np.full_like(A_ub, np.nan), np.zeros(R), A_eq, np.ones(1),
                 np.append(np.zeros(M), -np.inf), np.full(M + 1, np.inf))
    # infeasible: not a success, linprog's message
    res = highs_lp(np.ones(2), np.array([[1.0, 1.0]]), np.array([-1.0]), np.array([[1.0, 0.0]]),
                   np.ones(1), np.zeros(2), np.full(2, np.inf))
    assert not res["success"] and res["x"] is None and "infeasible" in res["message"].lower()
