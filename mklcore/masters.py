r"""The restricted master problems of the cutting-plane (semi-infinite program) MKL solvers.

SILP (Sonnenburg et al. 2006, Algorithm 1) and the lp-norm cutting plane (Kloft et al. 2009,
Sec. 2.4.1) write MKL as a semi-infinite program: minimise :math:`\eta` over the weights
:math:`\theta` subject to one cut :math:`\eta\ge L^r-\theta^\top S^r` per SVM solution
:math:`\alpha^r` (:math:`L^r=\mathbf1^\top\alpha^r`,
:math:`S^r_m=\frac12\alpha^{r\top}Q_m\alpha^r`). The wrapper loop
(:class:`mklcore.wrapper.SIPWeightStep`) adds a cut per iteration to :class:`Cuts` and solves
the restricted master over them: :func:`lp_master` on the simplex (p = 1), the conic masters
of :mod:`mklcore.lpnorm` for p > 1.
"""

import numpy as np

from ._result import NumericalFailure

__all__ = ["Cuts", "highs_lp", "lp_master"]


class Cuts:
    r"""Cutting planes :math:`\eta\ge L^r-\theta^\top S^r` of the semi-infinite program.

    Shared by the SIP solvers (lp-norm cutting plane, SILP). Pruning follows SHOGUN's MKL
    implementation: after a master solve, if there are more than ``max(max_cuts, 2 * n_active)``
    cuts (active: slack below ``1e-6`` relative), the cut with the largest slack is deleted.

    Parameters
    ----------
    n_kernels : int
    max_cuts : int, default=100
    prune : bool, default=True
    """

    def __init__(self, n_kernels, *, max_cuts=100, prune=True):
        self.L = np.empty(0)
        self.S = np.empty((0, n_kernels))
        self.max_cuts, self.prune_ = int(max_cuts), bool(prune)
        self.n_added = 0
        self.n_pruned = 0

    def __len__(self):
        return self.L.shape[0]

    def add(self, L, S):
        """Append the cut of one alpha (``L = 1'alpha``, ``S_m = alpha'Q_m alpha / 2``)."""
        self.L = np.append(self.L, float(L))
        self.S = np.vstack([self.S, np.asarray(S, dtype=float)[None]])
        self.n_added += 1

    def values(self, theta):
        r""":math:`L^r-\theta^\top S^r` for every cut."""
        return self.L - self.S @ np.asarray(theta, dtype=float)

    def prune(self, theta, eta):
        """Delete the loosest cut if there are too many (see class docstring)."""
        if not self.prune_ or len(self) == 0:
            return
        slack = eta - self.values(theta)
        n_active = int(np.sum(slack < 1e-6 * max(1.0, abs(eta))))
        if len(self) > max(self.max_cuts, 2 * n_active):
            worst = int(np.argmax(slack))
            self.L = np.delete(self.L, worst)
            self.S = np.delete(self.S, worst, axis=0)
            self.n_pruned += 1


def highs_lp(c, A_ub, b_ub, A_eq, b_eq, lb, ub):
    r"""Solve :math:`\min c^\top x` s.t. :math:`A_{ub}x\le b_{ub}`, :math:`A_{eq}x=b_{eq}`,
    :math:`lb\le x\le ub` with HiGHS (``scipy.optimize.linprog(method="highs")``).

    Parameters
    ----------
    c : ndarray of shape (n,)
    A_ub : ndarray of shape (m_ub, n)
    b_ub : ndarray of shape (m_ub,)
    A_eq : ndarray of shape (m_eq, n)
    b_eq : ndarray of shape (m_eq,)
    lb, ub : ndarray of shape (n,)
        Bounds (``-inf`` / ``inf`` for none).

    Returns
    -------
    solution : dict
        ``x`` (None on failure), ``fun`` (optimal value), ``ineqlin_marginals`` (the
        multipliers of the inequality rows, ``linprog``'s ``res.ineqlin.marginals``),
        ``success`` (``linprog``'s status 0) and ``message``.
    """
    from scipy.optimize import linprog

    c, A_ub, b_ub, A_eq, b_eq, lb, ub = (np.asarray(a, dtype=float)
                                         for a in (c, A_ub, b_ub, A_eq, b_eq, lb, ub))
    bounds = [(None if np.isinf(lo) else lo, None if np.isinf(hi) else hi)
              for lo, hi in zip(lb.tolist(), ub.tolist())]
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                  method="highs")
    ok = res.status == 0 and res.x is not None
    return {"x": res.x, "fun": res.fun, "success": ok, "message": res.message,
            "ineqlin_marginals": res.ineqlin.marginals if ok else None}


def lp_master(cuts):
    r"""Solve the restricted master LP of SILP (Sonnenburg et al. 2006, Algorithm 1).

    .. math::
        \min_{\theta,\eta}\ \eta\quad\text{s.t.}\quad
        \sum_m\theta_m(L^r-S^r_m)-\eta\le0\ (r=1..R),\quad \sum_m\theta_m=1,\quad\theta\ge0,

    shared by SILP and the lp-norm cutting plane at p = 1, solved by :func:`highs_lp` (HiGHS,
    as :func:`scipy.optimize.linprog` runs it).

    Parameters
    ----------
    cuts : Cuts
        The cuts :math:`(L^r, S^r)` collected so far (at least one).

    Returns
    -------
    theta : ndarray of shape (n_kernels,)
        Weights on the simplex (clipped at 0 and renormalised to sum 1).
    eta : float
        Optimal value of the LP, a lower bound of the l1-MKL optimum.

    Raises
    ------
    NumericalFailure
        If HiGHS does not solve the LP.
    """
    R, M = cuts.S.shape
    c = np.zeros(M + 1)
    c[-1] = 1.0
    A_ub = np.hstack([cuts.L[:, None] - cuts.S, -np.ones((R, 1))])
    A_eq = np.zeros((1, M + 1))
    A_eq[0, :M] = 1.0
    lb = np.append(np.zeros(M), -np.inf)
    ub = np.full(M + 1, np.inf)
    res = highs_lp(c, A_ub, np.zeros(R), A_eq, np.ones(1), lb, ub)
    if not res["success"]:
        raise NumericalFailure(f"SILP master LP failed: {res['message']}")
    x = res["x"]
    theta = np.maximum(x[:M], 0.0)
    theta /= theta.sum()
    return theta, float(x[-1])
