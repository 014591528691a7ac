r"""Compiled kernel rows from raw features (numba, ``cache=True``), for :mod:`mklcore.rowsource`.

Imported only when a lazy stack is evaluated (``import mklcore`` does not load numba). A bank
is described by small arrays (see :class:`mklcore.rowsource.LazyStack`):

* ``X`` (n, D): the columns of every column subset ("group") side by side; ``sq`` (n, G) the
  squared norms of each group's columns (as :func:`numpy.einsum` computes them for the
  stack); ``gint`` (G, 3): first and last column of the group and whether a Gaussian reads it;
* ``kint`` (M, 4): group, kind (0 linear, 1 polynomial, 2 Gaussian, 3 a power of an earlier
  Gaussian of the same group), base kernel and integer power (kind 3); ``kflt`` (M, 3):
  scale or gamma, coef0, degree;
* ``norm`` (0 none, 1 trace, 2 cosine), ``factor`` (M,) (trace) and the clipped diagonals
  ``da`` (M, n_a), ``db`` (M, n_b) (cosine).

Every entry is computed as :func:`mklcore.kernels.kernel_stack` computes it: the inner
product summed feature by feature in column order, the squared distance
:math:`-2\langle x,z\rangle+(\|x\|^2+\|z\|^2)` clipped at 0 (0 on the training diagonal;
:math:`(x-z)^2` for one feature), :math:`\exp(-\gamma D)`, the polynomial by repeated
multiplication, then the normalisation; so the rows equal the stack's rows up to the last
bits of ``exp`` (the only library call). All loops sum in a fixed order.
"""

import numpy as np
from numba import njit as _numba_njit

__all__ = ["pair_values", "bank_rows", "bank_weighted_row", "bank_accumulate",
           "bank_decision", "bank_diag"]

njit = _numba_njit(cache=True, nogil=True)


@njit
def _power(base, k):
    """``base ** k`` for an integer ``k >= 1`` by binary exponentiation (squarings)."""
    result = 1.0
    first = True
    b = base
    while k > 0:
        if k & 1:
            if first:
                result = b
                first = False
            else:
                result *= b
        k >>= 1
        if k:
            b = b * b
    return result


@njit
def pair_values(xa, sqa, xb, sqb, same, gint, kint, kflt, dots, dists, raw):
    """Unnormalised values ``raw[m] = k_m(a, b)`` of every kernel for one pair of points."""
    for g in range(gint.shape[0]):
        f0, f1 = gint[g, 0], gint[g, 1]
        dot = xa[f0] * xb[f0]
        for f in range(f0 + 1, f1):
            dot += xa[f] * xb[f]
        dots[g] = dot
        if gint[g, 2]:
            if same:
                d = 0.0
            elif f1 - f0 == 1:
                t = xa[f0] - xb[f0]
                d = t * t
            else:
                d = dot * -2.0 + (sqa[g] + sqb[g])
                if d < 0.0:
                    d = 0.0
            dists[g] = d
    M = kint.shape[0]
    for m in range(M):
        kind = kint[m, 1]
        g = kint[m, 0]
        if kind == 0:
            raw[m] = dots[g]
        elif kind == 1:
            v = dots[g] * kflt[m, 0] + kflt[m, 1]
            deg = int(kflt[m, 2])
            if deg > 4:
                v = v ** float(deg)
            else:
                base = v
                for _ in range(deg - 1):
                    v *= base
            raw[m] = v
        elif kind == 2:
            raw[m] = np.exp(dists[g] * -kflt[m, 0])
    for m in range(M):
        if kint[m, 1] == 3:
            raw[m] = _power(raw[kint[m, 2]], kint[m, 3])


@njit
def _normalized(raw, m, norm, factor, da, i, db, j):
    v = raw[m]
    if norm == 1:
        return v * factor[m]
    if norm == 2:
        denom = np.sqrt(da[m, i] * db[m, j])
        return v / denom if denom > 0 else 0.0
    return v


@njit
def bank_rows(Xa, sqa, da, i, Xb, sqb, db, symmetric, gint, kint, kflt, norm, factor, out):
    """``out[m, j]`` = normalised :math:`k_m(a_i, b_j)` for every kernel m and column j."""
    G, M = gint.shape[0], kint.shape[0]
    dots, dists, raw = np.empty(G), np.empty(G), np.empty(M)
    xa, qa = Xa[i], sqa[i]
    for j in range(Xb.shape[0]):
        pair_values(xa, qa, Xb[j], sqb[j], symmetric and i == j, gint, kint, kflt, dots,
                    dists, raw)
        for m in range(M):
            out[m, j] = _normalized(raw, m, norm, factor, da, i, db, j)


@njit
def bank_weighted_row(Xa, sqa, da, i, Xb, sqb, db, symmetric, gint, kint, kflt, norm, factor,
                      weights, active, out):
    """``out[j]`` = sum over active m (in order) of ``weights[m]`` times kernel m's entry."""
    G, M = gint.shape[0], kint.shape[0]
    dots, dists, raw = np.empty(G), np.empty(G), np.empty(M)
    xa, qa = Xa[i], sqa[i]
    for j in range(Xb.shape[0]):
        pair_values(xa, qa, Xb[j], sqb[j], symmetric and i == j, gint, kint, kflt, dots,
                    dists, raw)
        acc = 0.0
        for a in range(active.shape[0]):
            m = active[a]
            acc += weights[m] * _normalized(raw, m, norm, factor, da, i, db, j)
        out[j] = acc


@njit
def bank_accumulate(X, sq, d, gint, kint, kflt, norm, factor, coef, index, H):
    """``H[m] += sum over k in index (in order) of coef[k] * K_m[k, :]`` (training rows)."""
    G, M = gint.shape[0], kint.shape[0]
    dots, dists, raw = np.empty(G), np.empty(G), np.empty(M)
    for a in range(index.shape[0]):
        k = index[a]
        c = coef[k]
        xa, qa = X[k], sq[k]
        for j in range(X.shape[0]):
            pair_values(xa, qa, X[j], sq[j], k == j, gint, kint, kflt, dots, dists, raw)
            for m in range(M):
                H[m, j] += c * _normalized(raw, m, norm, factor, d, k, d, j)


@njit
def bank_decision(Xa, sqa, da, Xb, sqb, db, gint, kint, kflt, norm, factor, weights, active,
                  coef, out):
    """``out[t] += sum_s coef[s] sum over active m of weights[m] k_m(a_t, b_s)`` (test
    points against support vectors; no (n_a, n_b, M) array)."""
    G, M = gint.shape[0], kint.shape[0]
    dots, dists, raw = np.empty(G), np.empty(G), np.empty(M)
    for t in range(Xa.shape[0]):
        xa, qa = Xa[t], sqa[t]
        total = 0.0
        for s in range(Xb.shape[0]):
            pair_values(xa, qa, Xb[s], sqb[s], False, gint, kint, kflt, dots, dists, raw)
            acc = 0.0
            for a in range(active.shape[0]):
                m = active[a]
                acc += weights[m] * _normalized(raw, m, norm, factor, da, t, db, s)
            total += coef[s] * acc
        out[t] += total


@njit
def bank_diag(X, sq, gint, kint, kflt, out):
    """Unnormalised diagonals ``out[m, i] = k_m(x_i, x_i)``."""
    G, M = gint.shape[0], kint.shape[0]
    dots, dists, raw = np.empty(G), np.empty(G), np.empty(M)
    for i in range(X.shape[0]):
        pair_values(X[i], sq[i], X[i], sq[i], True, gint, kint, kflt, dots, dists, raw)
        for m in range(M):
            out[m, i] = raw[m]
