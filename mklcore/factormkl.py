r"""lp-norm MKL solved in the primal on low-rank factors :math:`K_m\approx\Phi_m\Phi_m^\top`.

With :math:`\tilde K_m=\Phi_m\Phi_m^\top` (Nyström factors of :class:`~mklcore.lowrank.
LowRankStack`, or any factors), the lp-norm MKL problem (5)/(6) of Kloft et al. (2009) is a
linear SVM with a group-norm regulariser on the stacked features
:math:`z_i=[\Phi_1(x_i),\dots,\Phi_M(x_i)]`: by Hölder,
:math:`\min_{\theta\ge0,\|\theta\|_p\le1}\frac12\sum_m\|w_m\|^2/\theta_m=
\frac12\|(\|w_1\|,\dots,\|w_M\|)\|_{2p/(p+1)}^2` (Kloft et al., JMLR 2011, Sec. 3), so

.. math::
    P(w,b)=\tfrac12\Big(\sum_m\|w_m\|^{2p/(p+1)}\Big)^{(p+1)/p}
    +C\sum_i\max\big(0,1-y_i(\textstyle\sum_mw_m^\top\Phi_m(x_i)+b)\big),

with dual :math:`D(\alpha)=\mathbf1^\top\alpha-\|S(\alpha)\|_{p^*}`,
:math:`S_m=\frac12\|\Phi_m^\top(\alpha\circ y)\|^2`, :math:`0\le\alpha\le C`,
:math:`y^\top\alpha=0` (problem (6) of Kloft et al. 2009 on the approximated kernels).

:func:`factor_lpmkl_solve` alternates, as Algorithm 1 of Kloft et al. (JMLR 2011) does, the
SVM at fixed :math:`\theta` with the closed-form update
:math:`\theta_m\propto\|w_m\|^{2/(p+1)}`. The SVM is the linear SVM in the features
:math:`\sqrt{\theta_m}\Phi_m`, solved by compiled dual coordinate descent (Hsieh et al.,
ICML 2008; :mod:`mklcore.factorloops`) with the bias as the multiplier of an augmented
Lagrangian of :math:`y^\top\alpha=0` (method of multipliers): :math:`O(nD)` per sweep,
:math:`D=\sum_mr_m`, and no kernel row is ever formed. Every iteration is certified by the
rigorous duality gap :math:`(P-D)/|P|` of the approximated problem: :math:`P` at the current
:math:`w` with the best bias for it (exact, by sorting), :math:`D` at :math:`\alpha` made
feasible for :math:`y^\top\alpha=0` (the larger class's coefficients scaled down). With full
rank (:math:`\tilde K_m=K_m`) the solution is that of :func:`mklcore.lpnorm.lpmkl_solve`.
"""

import numpy as np

from ._result import Monitor
from .wrapper import dual_norm, normalize_pnorm, THETA_FLOOR

__all__ = ["factor_lpmkl_solve", "stacked_features", "hinge_bias"]

#: coordinate-descent sweeps per outer iteration (before the multiplier and weight updates)
SWEEPS = 3


def stacked_features(K):
    """The stacked features ``Z`` (n, D) and the column starts (M + 1,) of each kernel.

    Parameters
    ----------
    K : LowRankStack or list of ndarray of shape (n, r_m)

    Returns
    -------
    Z : ndarray of shape (n, D)
    starts : ndarray of shape (M + 1,) of int64
    """
    if hasattr(K, "features"):
        return K.features, np.asarray(K.starts, dtype=np.int64)
    factors = [np.asarray(F) for F in K]
    if not factors or any(F.ndim != 2 or F.shape[0] != factors[0].shape[0] for F in factors):
        raise ValueError("factor_lpmkl_solve needs a LowRankStack or a non-empty list of 2-D "
                         "factors with the same number of rows.")
    starts = np.concatenate([[0], np.cumsum([F.shape[1] for F in factors])]).astype(np.int64)
    dtype = np.result_type(*factors, np.float32)
    return np.ascontiguousarray(np.hstack(factors), dtype=dtype), starts


def hinge_bias(f, y):
    r"""The bias :math:`b` minimising :math:`\sum_i\max(0,1-y_i(f_i+b))` (exact, by sorting).

    The sum is convex and piecewise linear in :math:`b`, with slope
    :math:`-\#\{y_i=1,\,b<1-f_i\}+\#\{y_i=-1,\,b>-1-f_i\}`; the returned :math:`b` is the
    smallest breakpoint at which the slope is :math:`\ge0`.

    Parameters
    ----------
    f : ndarray of shape (n,)
    y : ndarray of shape (n,) of +-1

    Returns
    -------
    b : float
    """
    pos = np.sort(1.0 - f[y > 0])
    neg = np.sort(-1.0 - f[y < 0])
    cand = np.concatenate([pos, neg])
    if cand.size == 0:
        return 0.0
    slope = -(pos.size - np.searchsorted(pos, cand, side="right")) \
        + np.searchsorted(neg, cand, side="right")
    ok = slope >= 0
    return float(cand[ok].min()) if np.any(ok) else float(cand.max())


def _regulariser(wnorm, p):
    r""":math:`\frac12\|(\|w_m\|)_m\|_{2p/(p+1)}^2` (the Hölder minimum over :math:`\theta`)."""
    if np.isinf(p):
        return 0.5 * float(np.sum(wnorm ** 2))
    q = 2.0 * p / (p + 1.0)
    top = float(wnorm.max())
    if top == 0.0:
        return 0.0
    return 0.5 * top ** 2 * float(np.sum((wnorm / top) ** q)) ** (2.0 / q)


def _theta_update(wnorm, theta, p):
    r"""Closed form :math:`\theta_m\propto\|w_m\|^{2/(p+1)}`, :math:`\|\theta\|_p=1`
    (Kloft et al. JMLR 2011, Algorithm 1)."""
    if np.isinf(p) or not np.any(wnorm > 0):
        return theta.copy()
    new = (wnorm / wnorm.max()) ** (2.0 / (p + 1.0))
    return normalize_pnorm(np.maximum(new, THETA_FLOOR), p)


class _Certificate:
    """Primal and dual values of one iterate (see the module docstring)."""

    def __init__(self, loops, Z, y, starts, p, C):
        self.loops, self.Z, self.y, self.starts, self.p, self.C = loops, Z, y, starts, p, C
        self.f = np.empty(Z.shape[0])
        self.upos = np.empty(Z.shape[1])

    def __call__(self, alpha, w, theta, b):
        y, C, starts = self.y, self.C, self.starts
        self.loops["score_pass"](self.Z, y, alpha, w, self.f, self.upos)
        f = self.f
        blocks = [slice(starts[m], starts[m + 1]) for m in range(len(theta))]
        wnorm = np.array([np.linalg.norm(w[s]) for s in blocks])
        reg = _regulariser(wnorm, self.p)
        best = None
        for bias in (b, hinge_bias(f, y)):
            loss = C * float(np.maximum(0.0, 1.0 - y * (f + bias)).sum())
            if best is None or reg + loss < best[0]:
                best = (reg + loss, bias)
        primal, bias = best
        # dual: alpha scaled down on the larger class so that y'alpha = 0
        u = np.empty_like(w)
        for m, s in enumerate(blocks):
            u[s] = w[s] / theta[m]
        a_pos = float(alpha[y > 0].sum())
        a_neg = float(alpha[y < 0].sum())
        excess = a_pos - a_neg
        coef = alpha * y
        if excess > 0:
            u = u - (excess / a_pos) * self.upos
            coef = np.where(y > 0, coef * (1.0 - excess / a_pos), coef)
        elif excess < 0:
            u = u - (excess / a_neg) * (self.upos - u)
            coef = np.where(y < 0, coef * (1.0 + excess / a_neg), coef)
        S = np.array([0.5 * float(u[s] @ u[s]) for s in blocks])
        L = 2.0 * min(a_pos, a_neg)
        dual = L - dual_norm(S, self.p)
        gap = (primal - dual) / abs(primal) if primal != 0 else np.inf
        return primal, dual, gap, bias, coef, wnorm, S


def factor_lpmkl_solve(K, y, *, p=2.0, C=1.0, tol=1e-4, max_iter=500, svm_tol=0.1,
                       sweeps=SWEEPS, rho=None, random_state=0, callback=None, verbose=0):
    r"""lp-norm MKL (Kloft et al. 2009, problem (6)) on low-rank factors, in the primal.

    Solves the problem on the approximated kernels :math:`\tilde K_m=\Phi_m\Phi_m^\top` (see
    the module docstring): per outer iteration ``sweeps`` sweeps of dual coordinate descent
    on the linear SVM in the features :math:`\sqrt{\theta_m}\Phi_m`, one multiplier (bias)
    step, the certificate, and the closed-form weight update of Kloft et al. (JMLR 2011,
    Algorithm 1).

    Parameters
    ----------
    K : LowRankStack or list of ndarray of shape (n, r_m)
        The factors :math:`\Phi_m` (a :class:`~mklcore.lowrank.LowRankStack` holds them
        stacked; float32 factors are used as they are, with float64 sums).
    y : array-like of shape (n,)
        Labels, two classes (mapped to -1, +1 in sorted order).
    p : float, default=2.0
        Norm of the weight constraint :math:`\|\theta\|_p\le1`, ``1 <= p <= inf``.
    C : float, default=1.0
        Misclassification penalty.
    tol : float, default=1e-4
        Stop when the rigorous relative duality gap :math:`(P-D)/|P|` is at most ``tol``.
    max_iter : int, default=500
        Outer iterations.
    svm_tol : float, default=0.1
        Projected-gradient spread at which the coordinate descent of one iteration stops
        early (Hsieh et al. 2008, Sec. 3.2).
    sweeps : int, default=3
        Coordinate-descent sweeps per outer iteration.
    rho : float, default=None
        Penalty of the augmented Lagrangian of :math:`y^\top\alpha=0`; ``None``: the mean
        curvature of one coordinate at the initial weights,
        :math:`\frac1n\sum_i\sum_m\theta_m\|\Phi_m(x_i)\|^2`.
    random_state : int, default=0
        Seed of the sweeps' orders.
    callback : callable, default=None
        Called after every iteration (see :class:`mklcore._result.Monitor`).
    verbose : int, default=0

    Returns
    -------
    result : MKLResult
        ``weights`` (:math:`\theta`), ``dual_coef`` (:math:`\alpha\circ y`, feasible),
        ``intercept``, ``objective`` (:math:`P`), ``dual_objective`` (:math:`D`), ``gap``
        (:math:`(P-D)/|P|`), ``primal_coef`` (:math:`w`, shape (D,)), ``column_starts``,
        ``method="lpmkl"``, ``solver="factors"``, ``p``, ``n_updates``; from a
        :class:`~mklcore.lowrank.LowRankStack` also ``rank`` and ``kernel_error``.
    """
    from .factorloops import dcd_sweeps, row_norms, score_pass

    loops = {"score_pass": score_pass}
    Z, starts = stacked_features(K)
    y = np.asarray(y)
    classes = np.unique(y)
    if Z.shape[0] != y.shape[0] or classes.size != 2:
        raise ValueError(f"factor_lpmkl_solve needs y with two classes and {Z.shape[0]} "
                         f"entries; got {classes.size} classes and {y.shape[0]} entries.")
    p, C = float(p), float(C)
    if not p >= 1.0 or not C > 0:
        raise ValueError(f"factor_lpmkl_solve needs p >= 1 and C > 0; got p={p}, C={C}.")
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    n, M = Z.shape[0], starts.size - 1
    norms = np.empty((M, n))
    row_norms(Z, starts, norms)
    theta = normalize_pnorm(np.ones(M), p) if not np.isinf(p) else np.ones(M)
    col_kernel = np.repeat(np.arange(M), np.diff(starts))
    alpha, w = np.zeros(n), np.zeros(Z.shape[1])
    b, s = 0.0, 0.0
    order = np.empty(n, dtype=np.int64)
    if rho is None:
        rho = float(theta @ norms.mean(axis=1))
    certify = _Certificate(loops, Z, y_pm, starts, p, C)
    monitor = Monitor("lpmkl", tol=tol, max_iter=max_iter, callback=callback,
                      verbose=verbose, label=f"LpMKL (factors, p={p:g})")
    n_updates = 0
    while True:
        scale = theta[col_kernel]
        qd = theta @ norms
        s, spread, k = dcd_sweeps(Z, y_pm, alpha, w, scale, qd, C, b, rho, s, order,
                                  int(sweeps), float(svm_tol),
                                  int(random_state) + monitor.n_iter)
        n_updates += int(k)
        b += rho * s
        primal, dual, gap, bias, coef, wnorm, S = certify(alpha, w, theta, b)
        if monitor.record(objective=primal, gap=gap, weights=theta, dual_objective=dual,
                          spread=spread):
            break
        new = _theta_update(wnorm, theta, p)
        w *= (new / theta)[col_kernel]
        theta = new
    extras = {"p": p, "solver": "factors", "dual_objective": dual, "primal_coef": w.copy(),
              "column_starts": starts.copy(), "n_updates": n_updates, "rho": rho,
              "kernel_terms": S}
    if hasattr(K, "result_extras"):
        extras.update(K.result_extras())
    return monitor.finish(weights=theta, dual_coef=coef, intercept=bias, objective=primal,
                          gap=gap, **extras)
