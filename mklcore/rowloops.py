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

__all__ = ["block_values", "bank_rows", "bank_weighted_row", "bank_accumulate",
           "bank_decision", "bank_diag"]

njit = _numba_njit(cache=True, nogil=True)


#: columns evaluated together (their inner products, distances and kernel values stay in
#: cache and the loops over them vectorise)
BLOCK = 256


@njit
def _power_block(v, k, n):
    """``v[:n] = v[:n] ** k`` for an integer ``k >= 1`` by binary exponentiation."""
    if k == 1:
        return
    if k & (k - 1) == 0:  # a power of two: squarings
        while k > 1:
            for t in range(n):
                v[t] = v[t] * v[t]
            k >>= 1
        return
    for t in range(n):
        b = v[t]
        e = k
        result = 1.0
        first = True
        while e > 0:
            if e & 1:
                if first:
                    result = b
                    first = False
                else:
                    result *= b
            e >>= 1
            if e:
                b = b * b
        v[t] = result


@njit
def block_values(xa, qa, XbT, sqbT, j0, j1, diag, gint, kint, kflt, dots, dists, vals):
    """Unnormalised ``vals[m, t] = k_m(a, b_{j0+t})`` for the columns ``j0 <= j < j1`` of
    ``XbT`` (features by points); ``diag`` is the column of ``a`` itself (-1: none)."""
    B = j1 - j0
    for g in range(gint.shape[0]):
        f0, f1 = gint[g, 0], gint[g, 1]
        dg = dots[g]
        c = xa[f0]
        src = XbT[f0]
        for t in range(B):
            dg[t] = c * src[j0 + t]
        for f in range(f0 + 1, f1):
            c = xa[f]
            src = XbT[f]
            for t in range(B):
                dg[t] += c * src[j0 + t]
        if gint[g, 2]:
            dd = dists[g]
            if f1 - f0 == 1:
                c = xa[f0]
                src = XbT[f0]
                for t in range(B):
                    u = c - src[j0 + t]
                    dd[t] = u * u
            else:
                q = qa[g]
                sq = sqbT[g]
                for t in range(B):
                    d = dg[t] * -2.0 + (q + sq[j0 + t])
                    dd[t] = d if d > 0.0 else 0.0
                if j0 <= diag < j1:
                    dd[diag - j0] = 0.0
    M = kint.shape[0]
    for m in range(M):
        kind = kint[m, 1]
        dg = dots[kint[m, 0]]
        vm = vals[m]
        if kind == 0:
            for t in range(B):
                vm[t] = dg[t]
        elif kind == 1:
            scale, coef0, deg = kflt[m, 0], kflt[m, 1], int(kflt[m, 2])
            if deg > 4:
                for t in range(B):
                    vm[t] = (dg[t] * scale + coef0) ** float(deg)
            else:
                for t in range(B):
                    v = dg[t] * scale + coef0
                    base = v
                    for _ in range(deg - 1):
                        v *= base
                    vm[t] = v
        elif kind == 2:
            dd = dists[kint[m, 0]]
            mg = -kflt[m, 0]
            for t in range(B):
                vm[t] = np.exp(dd[t] * mg)
    for m in range(M):
        if kint[m, 1] == 3:
            vm = vals[m]
            vb = vals[kint[m, 2]]
            for t in range(B):
                vm[t] = vb[t]
            _power_block(vm, kint[m, 3], B)


@njit
def _normalize_block(vals, norm, factor, da, i, db, j0, j1):
    """Normalise ``vals`` (kernels by columns ``j0..j1``) of row point ``i``."""
    B = j1 - j0
    if norm == 1:
        for m in range(vals.shape[0]):
            f = factor[m]
            vm = vals[m]
            for t in range(B):
                vm[t] = vm[t] * f
    elif norm == 2:
        for m in range(vals.shape[0]):
            r = da[m, i]
            vm = vals[m]
            dbm = db[m]
            for t in range(B):
                denom = np.sqrt(r * dbm[j0 + t])
                vm[t] = vm[t] / denom if denom > 0 else 0.0


@njit
def _buffers(G, M):
    return np.empty((G, BLOCK)), np.empty((G, BLOCK)), np.empty((M, BLOCK))


@njit
def bank_rows(Xa, sqa, da, i, XbT, sqbT, db, symmetric, gint, kint, kflt, norm, factor, out):
    """``out[m, j]`` = normalised :math:`k_m(a_i, b_j)` for every kernel m and column j."""
    dots, dists, vals = _buffers(gint.shape[0], kint.shape[0])
    n = XbT.shape[1]
    for j0 in range(0, n, BLOCK):
        j1 = min(j0 + BLOCK, n)
        block_values(Xa[i], sqa[i], XbT, sqbT, j0, j1, i if symmetric else -1, gint, kint,
                     kflt, dots, dists, vals)
        _normalize_block(vals, norm, factor, da, i, db, j0, j1)
        for m in range(kint.shape[0]):
            for t in range(j1 - j0):
                out[m, j0 + t] = vals[m, t]


@njit
def bank_weighted_row(Xa, sqa, da, i, XbT, sqbT, db, symmetric, gint, kint, kflt, norm, factor,
                      weights, active, out):
    """``out[j]`` = sum over active m (in order) of ``weights[m]`` times kernel m's entry."""
    dots, dists, vals = _buffers(gint.shape[0], kint.shape[0])
    n = XbT.shape[1]
    for j0 in range(0, n, BLOCK):
        j1 = min(j0 + BLOCK, n)
        B = j1 - j0
        block_values(Xa[i], sqa[i], XbT, sqbT, j0, j1, i if symmetric else -1, gint, kint,
                     kflt, dots, dists, vals)
        _normalize_block(vals, norm, factor, da, i, db, j0, j1)
        for t in range(B):
            out[j0 + t] = 0.0
        for a in range(active.shape[0]):
            m = active[a]
            w = weights[m]
            vm = vals[m]
            for t in range(B):
                out[j0 + t] += w * vm[t]


@njit
def bank_accumulate(X, sq, XT, sqT, d, gint, kint, kflt, norm, factor, coef, index, H):
    """``H[m] += sum over k in index (in order) of coef[k] * K_m[k, :]`` (training rows)."""
    dots, dists, vals = _buffers(gint.shape[0], kint.shape[0])
    n = XT.shape[1]
    for a in range(index.shape[0]):
        k = index[a]
        c = coef[k]
        for j0 in range(0, n, BLOCK):
            j1 = min(j0 + BLOCK, n)
            block_values(X[k], sq[k], XT, sqT, j0, j1, k, gint, kint, kflt, dots, dists, vals)
            _normalize_block(vals, norm, factor, d, k, d, j0, j1)
            for m in range(kint.shape[0]):
                Hm = H[m]
                vm = vals[m]
                for t in range(j1 - j0):
                    Hm[j0 + t] += c * vm[t]


@njit
def bank_decision(Xa, sqa, da, XbT, sqbT, db, gint, kint, kflt, norm, factor, weights, active,
                  coef, out):
    """``out[t] += sum_s coef[s] sum over active m of weights[m] k_m(a_t, b_s)`` (test
    points against support vectors, in order; no (n_a, n_b, M) array)."""
    dots, dists, vals = _buffers(gint.shape[0], kint.shape[0])
    acc = np.empty(BLOCK)
    n = XbT.shape[1]
    for i in range(Xa.shape[0]):
        total = 0.0
        for j0 in range(0, n, BLOCK):
            j1 = min(j0 + BLOCK, n)
            B = j1 - j0
            block_values(Xa[i], sqa[i], XbT, sqbT, j0, j1, -1, gint, kint, kflt, dots, dists,
                         vals)
            _normalize_block(vals, norm, factor, da, i, db, j0, j1)
            for t in range(B):
                acc[t] = 0.0
            for a in range(active.shape[0]):
                m = active[a]
                w = weights[m]
                vm = vals[m]
                for t in range(B):
                    acc[t] += w * vm[t]
            for t in range(B):
                total += coef[j0 + t] * acc[t]
        out[i] += total


@njit
def bank_diag(X, sq, gint, kint, kflt, out):
    """Unnormalised diagonals ``out[m, i] = k_m(x_i, x_i)``."""
    dots, dists, vals = _buffers(gint.shape[0], kint.shape[0])
    XT = np.ascontiguousarray(X.T)
    sqT = np.ascontiguousarray(sq.T)
    for i in range(X.shape[0]):
        block_values(X[i], sq[i], XT, sqT, i, i + 1, i, gint, kint, kflt, dots, dists, vals)
        for m in range(kint.shape[0]):
            out[m, i] = vals[m, 0]
