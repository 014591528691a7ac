r"""The compiled inner loops of mklcore (numba, ``cache=True``: compiled once per machine).

Imported only when a solver runs (``import mklcore`` does not load numba). Every loop sums in
a fixed order, without BLAS, so its results have the same bits on every processor and thread
count. :mod:`mklcore.smo` documents the engine that drives them.
"""

import numpy as np
from numba import njit as _numba_njit

__all__ = ["run", "reconstruct", "row_matvec", "weighted_row", "weighted_sum", "gated_sum",
           "gated_row", "stack_update"]

njit = _numba_njit(cache=True, nogil=True)

#: LIBSVM's TAU: the curvature used where a pair's curvature is not positive
TAU = 1e-12
#: entries of the output kept in cache while the kernels stream (the weighted and gated sums)
BLOCK = 32_768


@njit
def reconstruct(y, kidx, p, alpha, yG, cache, slot_of, n_rows):
    """yG = -y o (Q alpha + p) from rows that are all in the cache (fixed order)."""
    coef = np.zeros(n_rows)
    for t in range(y.shape[0]):
        coef[kidx[t]] += y[t] * alpha[t]
    Kc = np.zeros(n_rows)
    for k in range(n_rows):
        c = coef[k]
        if c != 0.0:
            row = cache[slot_of[k]]
            for s in range(n_rows):
                Kc[s] += c * row[s]
    for t in range(y.shape[0]):
        yG[t] = -(Kc[kidx[t]] + y[t] * p[t])

@njit
def run(y, kidx, p, C, alpha, yG, up, low, Kd, cache, slot_of, active, ints, tol, max_iter,
        shrinking):
    r"""SMO until optimal, capped, a row or the whole gradient is needed, or the step budget
    is spent. ``yG`` is :math:`-y\circ G`; ``up`` / ``low`` are 0 on the index sets
    :math:`I_{up}` / :math:`I_{low}` of LIBSVM and -inf / +inf outside them (branch-free
    selection). ``ints``: see :func:`smo_solve`."""
    n_var = y.shape[0]
    n_slots = cache.shape[0]
    full = ints[9] == 1
    steps = 0
    while True:
        if ints[0] >= max_iter:
            return 3
        if steps >= ints[4]:
            return 2
        n_act = ints[5]
        if shrinking and ints[8] == 0:
            ints[6] -= 1
            if ints[6] <= 0:
                ints[6] = min(n_var, 1000)
                # LIBSVM's do_shrinking: m(alpha) = gm1, -M(alpha) = gm2
                gm1 = -np.inf
                lo = np.inf
                for a in range(n_act):
                    t = active[a]
                    gm1 = max(gm1, yG[t] + up[t])
                    lo = min(lo, yG[t] + low[t])
                gm2 = -lo
                if ints[7] == 0 and gm1 + gm2 <= 10.0 * tol:
                    ints[7] = 1  # unshrink once, near the end
                    if n_act < n_var:
                        if ints[10] == 0:
                            ints[8] = 1
                            return 4
                        reconstruct(y, kidx, p, alpha, yG, cache, slot_of, slot_of.shape[0])
                        for a in range(n_var):
                            active[a] = a
                        n_act = ints[5] = n_var
                a = 0
                while a < n_act:
                    t = active[a]
                    if up[t] == 0.0 and low[t] == 0.0:
                        out = False
                    elif up[t] == 0.0:
                        out = -yG[t] > gm2
                    else:
                        out = yG[t] > gm1
                    if out:
                        n_act -= 1
                        active[a] = active[n_act]
                        active[n_act] = t
                    else:
                        a += 1
                ints[5] = n_act
        ints[8] = 0
        whole = full and n_act == n_var
        # WSS2: i maximises -y_t G_t over I_up
        g_max = -np.inf
        i = -1
        if whole:
            for t in range(n_var):
                v = yG[t] + up[t]
                if v >= g_max:
                    g_max = v
                    i = t
        else:
            for a in range(n_act):
                t = active[a]
                v = yG[t] + up[t]
                if v >= g_max:
                    g_max = v
                    i = t
        j = -1
        g_min = np.inf
        if i >= 0 and g_max > -np.inf:
            ki = kidx[i]
            si = slot_of[ki]
            if si < 0:
                ints[1] = ki
                ints[2] = ints[3] % n_slots
                ints[3] += 1
                return 1
            ri = cache[si]
            kdi = Kd[ki]
            obj_min = np.inf
            if whole:
                for t in range(n_var):
                    v = yG[t] + low[t]
                    g_min = min(g_min, v)
                    b = g_max - v
                    if b > 0:
                        quad = kdi + Kd[t] - 2.0 * ri[t]
                        if quad <= 0:
                            quad = TAU
                        obj = -b * b / quad
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
            else:
                for a in range(n_act):
                    t = active[a]
                    kt = kidx[t]
                    v = yG[t] + low[t]
                    g_min = min(g_min, v)
                    b = g_max - v
                    if b > 0:
                        quad = kdi + Kd[kt] - 2.0 * ri[kt]
                        if quad <= 0:
                            quad = TAU
                        obj = -b * b / quad
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
        if j < 0 or g_max - g_min < tol:
            if n_act < n_var:  # optimal on the active set: check on all variables
                ints[6] = 1
                ints[8] = 1
                if ints[10] == 0:
                    return 4
                reconstruct(y, kidx, p, alpha, yG, cache, slot_of, slot_of.shape[0])
                for a in range(n_var):
                    active[a] = a
                ints[5] = n_var
                continue
            return 0
        kj = kidx[j]
        sj = slot_of[kj]
        if sj < 0:
            s = ints[3] % n_slots
            if s == si:  # keep row i
                ints[3] += 1
                s = ints[3] % n_slots
            ints[1] = kj
            ints[2] = s
            ints[3] += 1
            return 1
        rj = cache[sj]
        # LIBSVM's two-variable update (G_t = -y_t yG_t)
        quad = kdi + Kd[kj] - 2.0 * ri[kj]
        if quad <= 0:
            quad = TAU
        ai, aj = alpha[i], alpha[j]
        Ci, Cj = C[i], C[j]
        Gi, Gj = -y[i] * yG[i], -y[j] * yG[j]
        if y[i] != y[j]:
            delta = (-Gi - Gj) / quad
            diff = ai - aj
            ni = ai + delta
            nj = aj + delta
            if diff > 0:
                if nj < 0:
                    nj = 0.0
                    ni = diff
            elif ni < 0:
                ni = 0.0
                nj = -diff
            if diff > Ci - Cj:
                if ni > Ci:
                    ni = Ci
                    nj = Ci - diff
            elif nj > Cj:
                nj = Cj
                ni = Cj + diff
        else:
            delta = (Gi - Gj) / quad
            total = ai + aj
            ni = ai - delta
            nj = aj + delta
            if total > Ci:
                if ni > Ci:
                    ni = Ci
                    nj = total - Ci
            elif nj < 0:
                nj = 0.0
                ni = total
            if total > Cj:
                if nj > Cj:
                    nj = Cj
                    ni = total - Cj
            elif ni < 0:
                ni = 0.0
                nj = total
        alpha[i] = ni
        alpha[j] = nj
        di = y[i] * (ni - ai)  # change of y_t alpha_t
        dj = y[j] * (nj - aj)
        # yG_t = -y_t G_t changes by -y_t^2 (K_ti di + K_tj dj)
        if whole:
            for t in range(n_var):
                yG[t] -= ri[t] * di + rj[t] * dj
        else:
            for a in range(n_act):
                t = active[a]
                kt = kidx[t]
                yG[t] -= ri[kt] * di + rj[kt] * dj
        for t in (i, j):
            at = alpha[t]
            if y[t] > 0:
                up[t] = 0.0 if at < C[t] else -np.inf
                low[t] = 0.0 if at > 0 else np.inf
            else:
                up[t] = 0.0 if at > 0 else -np.inf
                low[t] = 0.0 if at < C[t] else np.inf
        ints[0] += 1
        steps += 1

@njit
def row_matvec(rows, slot, coef, out):
    """out += sum_k coef[k] * rows[slot[k]] over k with coef[k] != 0 (fixed order)."""
    n = out.shape[0]
    for k in range(coef.shape[0]):
        c = coef[k]
        if c != 0.0:
            s = slot[k]
            for t in range(n):
                out[t] += c * rows[s, t]

@njit
def weighted_row(K, weights, active, k, out):
    """out = sum over active m of weights[m] * K[m, k, :] (fixed order: same bits)."""
    n = out.shape[0]
    for c in range(n):
        out[c] = 0.0
    for a in range(active.shape[0]):
        m = active[a]
        w = weights[m]
        src = K[m, k]
        for c in range(n):
            out[c] += w * src[c]

@njit
def weighted_sum(K, weights, active, out):
    """out = sum over active m of weights[m] * K[m] (per entry the sums of weighted_row:
    the same bits), over blocks of rows that stay in cache while each kernel streams."""
    n_rows, n = out.shape
    step = max(1, BLOCK // max(n, 1))
    for r0 in range(0, n_rows, step):
        r1 = min(r0 + step, n_rows)
        for i in range(r0, r1):
            row = out[i]
            for c in range(n):
                row[c] = 0.0
        for a in range(active.shape[0]):
            m = active[a]
            w = weights[m]
            for i in range(r0, r1):
                row = out[i]
                src = K[m, i]
                for c in range(n):
                    row[c] += w * src[c]

@njit
def gated_sum(K, eta_rows, gates_cols, symmetric, out):
    """out[i, j] = sum_m eta_rows[i, m] K[m, i, j] gates_cols[m, j] (kernels in order,
    terms of a zero row gate skipped; right of the diagonal only and mirrored when
    ``symmetric``), over blocks of rows that stay in cache while each kernel streams."""
    n_rows, n_cols = out.shape
    step = max(1, BLOCK // max(n_cols, 1))
    for r0 in range(0, n_rows, step):
        r1 = min(r0 + step, n_rows)
        for i in range(r0, r1):
            row = out[i]
            for c in range(i if symmetric else 0, n_cols):
                row[c] = 0.0
        for m in range(K.shape[0]):
            gm = gates_cols[m]
            for i in range(r0, r1):
                g = eta_rows[i, m]
                if g != 0.0:
                    row = out[i]
                    src = K[m, i]
                    for c in range(i if symmetric else 0, n_cols):
                        row[c] += g * src[c] * gm[c]
    if symmetric:
        for i in range(n_rows):
            for c in range(i):
                out[i, c] = out[c, i]

@njit
def gated_row(K, gates, k, out):
    """out_j = sum_m gates[m, k] K[m, k, j] gates[m, j]."""
    n = out.shape[0]
    for c in range(n):
        out[c] = 0.0
    for m in range(K.shape[0]):
        g = gates[m, k]
        if g != 0.0:
            src = K[m, k]
            gm = gates[m]
            for c in range(n):
                out[c] += g * src[c] * gm[c]

@njit
def stack_update(K, coef, index, H):
    """H[m] += sum over k in index of coef[k] * K[m, k, :] (fixed order)."""
    n = H.shape[1]
    for m in range(K.shape[0]):
        Hm = H[m]
        for a in range(index.shape[0]):
            k = index[a]
            c = coef[k]
            src = K[m, k]
            for t in range(n):
                Hm[t] += c * src[t]

