r"""Compiled dual coordinate descent for :mod:`mklcore.factormkl` (numba, ``cache=True``).

Imported only when a factor solve runs (``import mklcore`` does not load numba). The loop is
the dual coordinate descent of Hsieh et al. (ICML 2008, Algorithm 1 with the shrinking of
Sec. 3.2) for the hinge-loss linear SVM, on the augmented Lagrangian of the equality
constraint :math:`y^\top\alpha=0` (the bias is its multiplier): coordinate ``i`` of

.. math::
    \min_{0\le\alpha\le C}\ \tfrac12\|w(\alpha)\|^2-\mathbf1^\top\alpha+b\,y^\top\alpha
    +\tfrac\rho2(y^\top\alpha)^2,\qquad w_j=s_j\sum_i\alpha_iy_iZ_{ij},

with the feature scales :math:`s` (the kernel weights :math:`\theta_m` repeated over the
columns of :math:`\Phi_m`), has gradient :math:`G_i=y_i(Z_i^\top w+b+\rho\,y^\top\alpha)-1`
and curvature :math:`\sum_js_jZ_{ij}^2+\rho`. Every update is exact along its coordinate;
sums run in a fixed order (deterministic).
"""

import numpy as np
from numba import njit as _numba_njit

__all__ = ["dcd_sweeps", "score_pass", "row_norms"]

njit = _numba_njit(cache=True, nogil=True, fastmath=False)


@njit
def _dot(Z, i, w):
    acc = 0.0
    for j in range(Z.shape[1]):
        acc += Z[i, j] * w[j]
    return acc


@njit
def dcd_sweeps(Z, y, alpha, w, scale, qd, C, b, rho, s, order, n_sweeps, eps, seed):
    """Up to ``n_sweeps`` shrinking sweeps over random permutations of the points.

    Parameters
    ----------
    Z : ndarray (n, D), float32 or float64
    y : ndarray (n,) of +-1
    alpha : ndarray (n,), updated in place
    w : ndarray (D,), ``scale * Z^T (alpha * y)``, updated in place
    scale : ndarray (D,)
    qd : ndarray (n,), ``sum_j scale_j Z_ij^2``
    C, b, rho, s : float
        Box, multiplier (bias), penalty and the current ``y^T alpha``.
    order : ndarray (n,) int64, workspace (the active set first)
    n_sweeps : int
    eps : float
        Stop when the projected-gradient spread on the whole set is below ``eps``.
    seed : int

    Returns
    -------
    s : float
        ``y^T alpha`` after the sweeps.
    spread : float
        Projected-gradient spread (max - min) of the last sweep.
    n_updates : int
    """
    np.random.seed(seed)
    n = Z.shape[0]
    for k in range(n):
        order[k] = k
    active = n
    pg_max_old, pg_min_old = np.inf, -np.inf
    spread = np.inf
    n_updates = 0
    for sweep in range(n_sweeps):
        for k in range(active - 1):  # a random permutation of the active set
            r = k + np.random.randint(active - k)
            order[k], order[r] = order[r], order[k]
        pg_max, pg_min = -np.inf, np.inf
        k = 0
        while k < active:
            i = order[k]
            yi = y[i]
            G = yi * (_dot(Z, i, w) + b + rho * s) - 1.0
            a = alpha[i]
            pg = 0.0
            if a == 0.0:
                if G > pg_max_old:  # shrink: at the lower bound and likely to stay
                    active -= 1
                    order[k], order[active] = order[active], order[k]
                    continue
                if G < 0.0:
                    pg = G
            elif a == C:
                if G < pg_min_old:
                    active -= 1
                    order[k], order[active] = order[active], order[k]
                    continue
                if G > 0.0:
                    pg = G
            else:
                pg = G
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if abs(pg) > 1e-12:
                new = min(max(a - G / (qd[i] + rho), 0.0), C)
                d = (new - a) * yi
                if d != 0.0:
                    alpha[i] = new
                    s += d
                    for j in range(Z.shape[1]):
                        w[j] += d * scale[j] * Z[i, j]
                    n_updates += 1
            k += 1
        spread = pg_max - pg_min
        if spread <= eps:
            if active == n:
                break
            active = n  # converged on the active set: check every point again
            pg_max_old, pg_min_old = np.inf, -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    return s, spread, n_updates


@njit
def score_pass(Z, y, alpha, w, f, upos):
    """One pass over the rows: ``f = Z w`` and ``upos = Z[y > 0]^T alpha[y > 0]`` (float64
    sums in row order)."""
    D = Z.shape[1]
    for j in range(D):
        upos[j] = 0.0
    for i in range(Z.shape[0]):
        acc = 0.0
        for j in range(D):
            acc += Z[i, j] * w[j]
        f[i] = acc
        a = alpha[i]
        if y[i] > 0 and a != 0.0:
            for j in range(D):
                upos[j] += a * Z[i, j]


@njit
def row_norms(Z, starts, out):
    """``out[m, i] = ||Z[i, starts[m]:starts[m + 1]]||^2``."""
    for i in range(Z.shape[0]):
        for m in range(starts.shape[0] - 1):
            acc = 0.0
            for j in range(starts[m], starts[m + 1]):
                acc += Z[i, j] * Z[i, j]
            out[m, i] = acc
