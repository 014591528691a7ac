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

__all__ = ["block_values", "bank_rows", "bank_decision", "bank_diag", "base_row",
           "combine_base", "accumulate_cached"]

njit = _numba_njit(cache=True, nogil=True)


#: squarings of values below this flush to 0 (their squares would be subnormal numbers, whose
#: arithmetic is about a hundred times slower; the error is below 1e-308)
TINY = 1e-154
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
                u = v[t]
                v[t] = u * u if u > TINY else 0.0
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
                b = b * b if b > TINY else 0.0
        v[t] = result


@njit
def block_values(xa, qa, XbT, sqbT, j0, j1, diag, gint, kint, kflt, dots, dists, vals,
                 derive=True):
    """Unnormalised ``vals[m, t] = k_m(a, b_{j0+t})`` for the columns ``j0 <= j < j1`` of
    ``XbT`` (features by points); ``diag`` is the column of ``a`` itself (-1: none);
    ``derive=False`` leaves the powers of other kernels (kind 3) out."""
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
    if not derive:
        return
    for m in range(M):
        if kint[m, 1] == 3:
            vm = vals[m]
            vb = vals[kint[m, 2]]
            for t in range(B):
                vm[t] = vb[t]
            _power_block(vm, kint[m, 3], B)


@njit
def base_row(xa, qa, XT, sqT, diag, gint, kint, kflt, bases, out):
    """``out[b] = k_{bases[b]}(a, x_j)`` for every column j: the unnormalised rows of the
    kernels that are no power of another (the weights-independent part of a row)."""
    dots, dists, vals = _buffers(gint.shape[0], kint.shape[0])
    n = XT.shape[1]
    for j0 in range(0, n, BLOCK):
        j1 = min(j0 + BLOCK, n)
        block_values(xa, qa, XT, sqT, j0, j1, diag, gint, kint, kflt, dots, dists, vals, False)
        for b in range(bases.shape[0]):
            vb = vals[bases[b]]
            ob = out[b]
            for t in range(j1 - j0):
                ob[j0 + t] = vb[t]


@njit
def _from_base(base, kslot, kint, m, j0, j1, cur, cur_pow):
    r"""Kernel ``m``'s unnormalised values on columns ``j0..j1``, as ``(array, offset)``: its
    base row (offset ``j0``) or, for a power of a base, ``cur[b]`` (offset 0).

    ``cur[b]`` holds base ``b`` raised to ``cur_pow[b]`` on these columns (0: nothing yet):
    a power of two :math:`2^a` of a base is reached by squaring the last power :math:`2^c`
    (:math:`c\le a`) of the same base, the same squarings as from the base (same bits)."""
    B = j1 - j0
    b = kslot[m]
    src = base[b]
    if kint[m, 1] != 3:
        return src, j0
    k = kint[m, 3]
    cb = cur[b]
    c = cur_pow[b]
    if k & (k - 1) == 0 and c > 0 and k >= c:
        while c < k:
            for t in range(B):
                u = cb[t]
                cb[t] = u * u if u > TINY else 0.0
            c *= 2
    else:
        for t in range(B):
            cb[t] = src[j0 + t]
        _power_block(cb, k, B)
        c = k
    cur_pow[b] = c
    return cb, 0


@njit
def _add_normalized(out, o0, w, v, v0, m, norm, factor, d, i, j0, j1):
    """``out[o0 + t] += w * normalised(v[v0 + t])`` for the columns ``j0 + t < j1``."""
    B = j1 - j0
    if norm == 0:
        for t in range(B):
            out[o0 + t] += w * v[v0 + t]
    elif norm == 1:
        f = factor[m]
        for t in range(B):
            out[o0 + t] += w * (v[v0 + t] * f)
    else:
        r = d[m, i]
        dm = d[m]
        for t in range(B):
            denom = np.sqrt(r * dm[j0 + t])
            out[o0 + t] += w * (v[v0 + t] / denom if denom > 0 else 0.0)


@njit
def combine_base(base, kslot, kint, norm, factor, d, i, weights, active, out):
    """``out[j]`` = sum over active m (in order) of ``weights[m] K_m[i, j]`` from the base
    row of point ``i`` (the values of :func:`bank_rows`, summed in the order of ``active``)."""
    n = out.shape[0]
    cur = np.empty((base.shape[0], BLOCK))
    cur_pow = np.zeros(base.shape[0], dtype=np.int64)
    for j0 in range(0, n, BLOCK):
        j1 = min(j0 + BLOCK, n)
        for t in range(j1 - j0):
            out[j0 + t] = 0.0
        cur_pow[:] = 0
        for a in range(active.shape[0]):
            m = active[a]
            v, v0 = _from_base(base, kslot, kint, m, j0, j1, cur, cur_pow)
            _add_normalized(out, j0, weights[m], v, v0, m, norm, factor, d, i, j0, j1)


@njit
def accumulate_cached(X, sq, XT, sqT, d, gint, kint, kflt, bases, kslot, norm, factor, brows,
                      bslot, coef, index, H):
    """``H[m] += sum over k in index (in order) of coef[k] * K_m[k, :]``, from the cached
    base rows (``bslot[k] >= 0``) or from a base row computed for the occasion."""
    n = XT.shape[1]
    scratch = np.empty((bases.shape[0], n))
    cur = np.empty((bases.shape[0], BLOCK))
    cur_pow = np.zeros(bases.shape[0], dtype=np.int64)
    for a in range(index.shape[0]):
        k = index[a]
        c = coef[k]
        s = bslot[k]
        if s >= 0:
            base = brows[s]
        else:
            base_row(X[k], sq[k], XT, sqT, k, gint, kint, kflt, bases, scratch)
            base = scratch
        for j0 in range(0, n, BLOCK):
            j1 = min(j0 + BLOCK, n)
            cur_pow[:] = 0
            for m in range(kint.shape[0]):
                v, v0 = _from_base(base, kslot, kint, m, j0, j1, cur, cur_pow)
                _add_normalized(H[m], j0, c, v, v0, m, norm, factor, d, k, j0, j1)


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
