r"""One compiled SMO engine for every SVM-based solver of mklcore.

The engine solves LIBSVM's dual problem (Chang & Lin 2011, eq. (1) of their Sec. 4.1)

.. math::
    \min_\alpha\ \tfrac12\alpha^\top Q\alpha + p^\top\alpha \quad\text{s.t.}\quad
    y^\top\alpha=\Delta,\quad 0\le\alpha_t\le C_t,\qquad Q_{ts}=y_ty_sK(k_t,k_s),

by sequential minimal optimisation with LIBSVM's second-order working-set selection (WSS2 of
Fan, Chen & Lin 2005), its two-variable update, its stopping rule (maximal violating pair
:math:`m(\alpha)-M(\alpha)\le` ``tol``) and its bias rule. Each variable :math:`t` points at
a kernel row :math:`k_t`: the C-SVM has one variable per point (:math:`p=-\mathbf 1`), the
epsilon-SVR two (:math:`\alpha_t` and :math:`\alpha^*_t` on the same row).

Kernel rows come from a *row source*, an object with ``n`` (rows), ``diag()`` and
``rows(index, out)`` (see :class:`RowSource`): :class:`KernelRows` (one Gram matrix),
:class:`WeightedRows` (:math:`\sum_m\theta_mK_m` of a stack, for any weights, without forming
it) and :class:`GatedRows` (localized MKL's
:math:`\sum_m\eta_m(x_i)K_m(x_i,x_j)\eta_m(x_j)`). The compiled loop asks for the rows it lacks
by returning to Python (*reverse communication*, as ARPACK does), so a new source (rows from raw
features, from low-rank factors) needs no change here; the loop also returns every
:data:`CHECK_EVERY` iterations so that Ctrl-C is honoured. Rows live in a cache bounded in
megabytes; a source whose whole matrix is at hand (:meth:`RowSource.full`) is used as the cache
itself. The loop is compiled with numba on first use (``cache=True``: once per machine).
"""

import numpy as np

__all__ = ["RowSource", "KernelRows", "WeightedRows", "GatedRows", "SMOSolution", "smo_solve",
           "StackSMO", "refresh_caches", "gated_kernel", "svm_bias", "CHECK_EVERY"]

#: the compiled loop returns to Python after this many iterations (for Ctrl-C and progress)
CHECK_EVERY = 20_000


# codes returned by the compiled loop
_DONE, _NEED_ROW, _CHECK, _CAPPED, _GRADIENT = 0, 1, 2, 3, 4

_COMPILED = {}


def _jit():
    """The compiled loops of :mod:`mklcore.loops` (numba is imported on the first solve, not
    with mklcore)."""
    if not _COMPILED:
        from . import loops

        _COMPILED.update({name: getattr(loops, name) for name in loops.__all__})
    return _COMPILED


class RowSource:
    """Kernel rows for the SMO engine: the interface every source implements.

    Attributes
    ----------
    n : int
        Number of rows (training points).
    """

    n = 0

    def diag(self):
        """The diagonal ``K(x_i, x_i)``, shape (n,), float64."""
        raise NotImplementedError

    def rows(self, index, out):
        """Write row ``index`` of the kernel into ``out`` (float64, shape (n,))."""
        raise NotImplementedError

    def full(self):
        """The whole (n, n) float64 C-contiguous matrix if it is at hand at no cost, else None."""
        return None

    def matvec(self, v):
        """``K @ v`` (used for the gradient of a warm start); by rows unless overridden."""
        out, row = np.zeros(self.n), np.empty(self.n)
        for i in np.flatnonzero(v):
            self.rows(int(i), row)
            out += v[i] * row
        return out


class KernelRows(RowSource):
    """Rows of one Gram matrix ``K`` of shape (n, n) (used as the engine's cache: no copy
    when it is C-contiguous float64)."""

    def __init__(self, K):
        self.K = np.require(K, dtype=np.float64, requirements="C")
        self.n = self.K.shape[0]

    def diag(self):
        return np.ascontiguousarray(np.diagonal(self.K))

    def rows(self, index, out):
        out[:] = self.K[index]

    def full(self):
        return self.K

    def matvec(self, v):
        return self.K @ v


class WeightedRows(RowSource):
    r"""Rows of :math:`K_\theta=\sum_m\theta_mK_m` from a stack of shape (M, n, n), never
    formed; the weights can change between solves (:meth:`set_weights`)."""

    def __init__(self, K, weights):
        self.K = K if K.flags.c_contiguous else np.ascontiguousarray(K)
        self.n = K.shape[1]
        idx = np.arange(self.n)
        self._diag = np.ascontiguousarray(K[:, idx, idx], dtype=np.float64)
        self.set_weights(weights)

    def set_weights(self, weights):
        """New weights :math:`\\theta` (rows cached by an engine become stale)."""
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.active = np.flatnonzero(self.weights).astype(np.int64)

    def diag(self):
        return self.weights @ self._diag

    def rows(self, index, out):
        _jit()["weighted_row"](self.K, self.weights, self.active, index, out)


class GatedRows(RowSource):
    r"""Localized MKL's kernel :math:`\sum_m\eta_m(x_i)K_m(x_i,x_j)\eta_m(x_j)` (Gönen &
    Alpaydın 2008, eq. (1)) from a stack (M, n, n) and gates ``eta`` of shape (M, n)."""

    def __init__(self, K, gates):
        self.K = K if K.flags.c_contiguous else np.ascontiguousarray(K)
        self.n = K.shape[1]
        idx = np.arange(self.n)
        self._diag = np.ascontiguousarray(K[:, idx, idx], dtype=np.float64)
        self.gates = np.ascontiguousarray(gates, dtype=np.float64)

    def diag(self):
        return np.einsum("mi,mi->i", self.gates ** 2, self._diag)

    def rows(self, index, out):
        _jit()["gated_row"](self.K, self.gates, index, out)


def gated_kernel(K, eta_rows, eta_cols=None, out=None):
    r"""Localized MKL's combined kernel :math:`\sum_m\eta_m(x_i)K_m(x_i,x_j)\eta_m(x_j)`.

    Compiled, in a fixed order (the same bits on every processor and thread count); kernel
    :math:`m` is read on row :math:`i` only where :math:`\eta_m(x_i)\ne0`, and a square
    training stack (``eta_cols`` None) only right of the diagonal.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_rows, n_cols)
    eta_rows : ndarray of shape (n_rows, n_kernels)
        Gates of the row points.
    eta_cols : ndarray of shape (n_cols, n_kernels), default=None
        Gates of the column points; ``eta_rows`` (and a symmetric result) by default.
    out : ndarray of shape (n_rows, n_cols), default=None

    Returns
    -------
    K_eta : ndarray of shape (n_rows, n_cols)
    """
    symmetric = eta_cols is None and K.shape[1] == K.shape[2]
    eta_rows = np.ascontiguousarray(eta_rows, dtype=np.float64)
    eta_cols = eta_rows if eta_cols is None else eta_cols
    gates_cols = np.ascontiguousarray(np.asarray(eta_cols, dtype=np.float64).T)
    if out is None:
        out = np.empty(K.shape[1:])
    K = K if K.flags.c_contiguous else np.ascontiguousarray(K)
    _jit()["gated_sum"](K, eta_rows, gates_cols, symmetric, out)
    return out


def svm_bias(alpha, y, G, C):
    r"""LIBSVM's bias :math:`b=-\rho` from the gradient :math:`G=Q\alpha+p` at a solution.

    :math:`\rho` is the mean of :math:`y_tG_t` over the free variables (:math:`0<\alpha_t<C_t`);
    without free variables the midpoint of the interval the KKT conditions allow (or its finite
    end).
    """
    yG = y * G
    at_ub, at_lb = alpha >= C, alpha <= 0
    free = ~(at_ub | at_lb)
    if np.any(free):
        return -float(np.mean(yG[free]))
    pos = y > 0
    ub_mask = (at_ub & ~pos) | (at_lb & pos)
    lb_mask = (at_ub & pos) | (at_lb & ~pos)
    ub = yG[ub_mask].min() if np.any(ub_mask) else np.inf
    lb = yG[lb_mask].max() if np.any(lb_mask) else -np.inf
    rho = 0.5 * (ub + lb) if np.isfinite(ub + lb) else (lb if np.isinf(ub) else ub)
    return -float(rho)


class SMOSolution:
    """What :func:`smo_solve` returns: ``alpha``, ``grad`` (:math:`Q\\alpha+p`), ``intercept``,
    ``n_iter``, ``converged``, ``n_rows`` (rows computed by the source)."""

    __slots__ = ("alpha", "grad", "intercept", "n_iter", "converged", "n_rows")

    def __init__(self, alpha, grad, intercept, n_iter, converged, n_rows):
        self.alpha, self.grad, self.intercept = alpha, grad, intercept
        self.n_iter, self.converged, self.n_rows = n_iter, converged, n_rows


class _Cache:
    """Kernel rows kept between the calls of one solve (or of several, while the source's
    rows stay valid): ``rows`` (slots, n), ``slot_of`` (row -> slot or -1), ``owner``."""

    def __init__(self, source, cache_mb):
        n = source.n
        full = source.full()
        self.next_slot = 0
        if full is not None:
            self.rows, self.slot_of = full, np.arange(n, dtype=np.int64)
            self.owner = self.slot_of.copy()
        else:
            n_slots = int(min(n, max(2, cache_mb * 2 ** 20 // (8 * max(n, 1)))))
            self.rows = np.empty((n_slots, n))
            self.slot_of = np.full(n, -1, dtype=np.int64)
            self.owner = np.full(n_slots, -1, dtype=np.int64)
        self.complete = full is not None

    def fill(self, source, k, s):
        """Put row ``k`` of ``source`` into slot ``s`` (evicting its previous row)."""
        old = self.owner[s]
        if old >= 0:
            self.slot_of[old] = -1
        source.rows(int(k), self.rows[s])
        self.owner[s] = k
        self.slot_of[k] = s


def _gradient(source, cache, y, kidx, alpha, p):
    """:math:`Q\alpha+p`, exactly, in a fixed order of operations."""
    coef = np.zeros(source.n)
    np.add.at(coef, kidx, y * alpha)
    if cache.complete:
        Kc = np.zeros(source.n)
        _jit()["row_matvec"](cache.rows, cache.slot_of, coef, Kc)
    else:
        Kc = source.matvec(coef)
    return y * Kc[kidx] + p


def smo_solve(source, y, C, *, p=None, kidx=None, alpha0=None, grad0=None, tol=1e-3,
              max_iter=10_000_000, shrinking=False, cache_mb=200, diag=None, cache=None,
              on_check=None, max_rows=None):
    r"""Solve the SVM-type dual of the module docstring with SMO.

    Parameters
    ----------
    source : RowSource
        The kernel's rows.
    y : ndarray of shape (n_var,)
        Signs in {-1, +1} (the labels for the C-SVM).
    C : float or ndarray of shape (n_var,)
        Upper bounds :math:`C_t`.
    p : ndarray of shape (n_var,), default=None
        Linear term; :math:`-\mathbf 1` (the C-SVM) by default.
    kidx : ndarray of shape (n_var,), default=None
        Kernel row of each variable; ``arange(n)`` by default.
    alpha0 : ndarray of shape (n_var,), default=None
        Feasible warm start (zeros by default).
    grad0 : ndarray of shape (n_var,), default=None
        :math:`Q\alpha_0+p` if known; else computed from the source's rows.
    tol : float, default=1e-3
        Stopping tolerance on the maximal violating pair.
    max_iter : int, default=10_000_000
        Cap on SMO iterations.
    shrinking : bool, default=False
        LIBSVM's shrinking heuristic (variables at a bound that are unlikely to move leave the
        working set; the whole gradient is recomputed before the solve is declared optimal).
        Off by default: with this loop layout it costs more than it saves (measured in
        ``benchmarks/README.md``).
    cache_mb : float, default=200
        Memory for cached kernel rows.
    diag : ndarray of shape (n,), default=None
        The kernel's diagonal, if known.
    cache : object, default=None
        The row cache returned by a previous call on the same source with unchanged rows.
    on_check : callable, default=None
        Called with the iteration count every :data:`CHECK_EVERY` iterations (progress).
    max_rows : int, default=None
        Stop (not converged) before computing more than this many rows: the caller may then
        form the whole matrix and resume from the returned ``alpha`` and ``grad``.

    Returns
    -------
    solution : SMOSolution
    cache : object
        The row cache (pass it back while the source's rows are unchanged).
    """
    f = _jit()
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_var = y.shape[0]
    kidx = (np.arange(n_var, dtype=np.int64) if kidx is None
            else np.ascontiguousarray(kidx, dtype=np.int64))
    p = np.full(n_var, -1.0) if p is None else np.array(p, dtype=np.float64)
    C = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), (n_var,)))
    alpha = np.zeros(n_var) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    Kd = np.ascontiguousarray(source.diag() if diag is None else diag, dtype=np.float64)
    if cache is None:
        cache = _Cache(source, cache_mb)
    if grad0 is not None:
        G = np.array(grad0, dtype=np.float64)
    elif np.any(alpha):
        G = _gradient(source, cache, y, kidx, alpha, p)
    else:
        G = p.copy()
    active = np.arange(n_var, dtype=np.int64)
    pos = y > 0
    up = np.where(np.where(pos, alpha < C, alpha > 0), 0.0, -np.inf)
    low = np.where(np.where(pos, alpha > 0, alpha < C), 0.0, np.inf)
    yG = -y * G
    identity = int(kidx.shape[0] == source.n and np.array_equal(kidx, np.arange(source.n)))
    # [n_iter, need_row, need_slot, next_slot, step_budget, n_active, shrink_counter,
    #  unshrunk, just_reconstructed, identity kidx, all rows cached]
    ints = np.array([0, -1, -1, cache.next_slot, CHECK_EVERY, n_var, min(n_var, 1000), 0, 0,
                     identity, int(cache.complete)], dtype=np.int64)
    n_rows = 0
    while True:
        ints[4] = CHECK_EVERY
        code = f["run"](y, kidx, p, C, alpha, yG, up, low, Kd, cache.rows, cache.slot_of, active,
                        ints, float(tol), int(max_iter), bool(shrinking))
        if code == _NEED_ROW:
            if max_rows is not None and n_rows >= max_rows:
                break
            cache.fill(source, ints[1], ints[2])
            n_rows += 1
        elif code == _GRADIENT:
            yG = -y * _gradient(source, cache, y, kidx, alpha, p)
            ints[5] = n_var
            active[:] = np.arange(n_var)
        elif code == _CHECK:
            if on_check is not None:
                on_check(int(ints[0]))
        else:
            break
    G = -y * yG
    cache.next_slot = int(ints[3])
    intercept = svm_bias(alpha, y, G, C)
    return SMOSolution(alpha, G, intercept, int(ints[0]), code == _DONE, n_rows), cache


class StackSMO:
    r"""The engine on a stack: SVMs on :math:`K_\theta=\sum_m\theta_mK_m` at changing
    weights, warm-started, with per-kernel gradient caches :math:`H_m=K_m(\alpha\circ y)`.

    :math:`K_\theta` is never formed (its rows come from :class:`WeightedRows`); a new
    :math:`\theta` costs :math:`O(nM)` (the gradient :math:`y\circ\sum_m\theta_mH_m-\mathbf 1`)
    and, after a solve, the caches are updated with the rows of the points whose alpha changed
    (what SHOGUN keeps for the interleaved MKL of Sonnenburg et al. 2006); the per-kernel terms
    :math:`q_m=(\alpha\circ y)^\top H_m` then come for free.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n)
        Unweighted Gram matrices (float64 or float32).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
        Box constraint.
    cache_mb : float, default=200
        Memory for cached rows of :math:`K_\theta`.
    """

    def __init__(self, K, y, C, cache_mb=200):
        self.K = K if K.flags.c_contiguous else np.ascontiguousarray(K)
        self.y, self.C = np.asarray(y, dtype=np.float64), float(C)
        self.source = WeightedRows(self.K, np.ones(K.shape[0]))
        self.cache_mb = cache_mb
        self._cache = None
        self._dense = None  # (weights, K_theta) of the last dense solve

    def solve(self, theta, alpha, H, tol, max_iter=None, full=True, *, y=None, p=None,
              kidx=None):
        r"""SMO from ``alpha`` (with caches ``H``, updated in place) at weights ``theta``.

        A cold ``full`` solve (``alpha`` = 0) forms :math:`K_\theta` once when it fits in
        ``cache_mb`` (it reads most rows: one pass over the stack costs less than computing
        them one by one); warm starts and partial solves read the rows they touch.

        Parameters
        ----------
        theta : ndarray of shape (n_kernels,)
            Kernel weights.
        alpha : ndarray of shape (n,)
            Feasible starting point (zeros for a cold start).
        H : ndarray of shape (n_kernels, n)
            Caches :math:`H_m=K_m(\alpha\circ y)` at ``alpha``; updated in place.
        tol : float
            Stopping tolerance on the maximal violating pair.
        max_iter : int, default=None
            Cap on the SMO iterations; ``max(100000, 100 n)`` by default.
        full : bool, default=True
            Whether the solve is meant to converge (False: a chunk of the interleaved scheme).
        y, p, kidx : ndarray of shape (n_var,), default=None
            Another dual problem on the same kernel (see :func:`smo_solve`): signs, linear
            term and kernel row of each variable, e.g. the epsilon-SVR's two variables per
            point or one of several one-vs-rest labellings; ``alpha`` then has ``n_var``
            entries and the caches stay :math:`H_m=K_mc` with :math:`c_i` the sum of
            :math:`y_t\alpha_t` over the variables of row :math:`i`. The constructor's
            labels and the C-SVM (:math:`p=-\mathbf 1`, one variable per point) by default.

        Returns
        -------
        alpha, H, intercept, n_iter, converged
        """
        y = self.y if y is None else np.asarray(y, dtype=np.float64)
        n = self.K.shape[1]
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if max_iter is None:
            max_iter = max(100_000, 100 * n)
        alpha = np.array(alpha, dtype=np.float64)
        if p is None and kidx is None:
            grad0 = y * (theta @ H) - 1.0
        else:
            kidx = np.arange(n) if kidx is None else np.asarray(kidx, dtype=np.int64)
            p = np.full(y.shape[0], -1.0) if p is None else np.asarray(p, dtype=np.float64)
            grad0 = y * (theta @ H)[kidx] + p
        dense = self._dense is not None and np.array_equal(self._dense[0], theta)
        if not dense and full and not np.any(alpha) and 8 * n * n <= self.cache_mb * 2 ** 20:
            K_theta = np.empty((n, n)) if self._dense is None else self._dense[1]
            _jit()["weighted_sum"](self.K, theta, np.flatnonzero(theta).astype(np.int64),
                                   K_theta)
            self._dense, dense = (theta.copy(), K_theta), True
        if dense:
            sol, _ = smo_solve(KernelRows(self._dense[1]), y, self.C, alpha0=alpha, grad0=grad0,
                               tol=tol, max_iter=max_iter, p=p, kidx=kidx)
        else:
            if self._cache is None or not np.array_equal(theta, self.source.weights):
                self.source.set_weights(theta)
                self._cache = None
            fits = 8 * n * n <= self.cache_mb * 2 ** 20
            sol, self._cache = smo_solve(self.source, y, self.C, alpha0=alpha, grad0=grad0,
                                         tol=tol, max_iter=max_iter, cache_mb=self.cache_mb,
                                         cache=self._cache, shrinking=False, p=p, kidx=kidx,
                                         max_rows=n // 2 if full and fits else None)
            if not sol.converged and sol.n_iter < max_iter:
                # a long solve (more than n/2 rows): one pass over the stack costs less than
                # the rows still to come; resume on the whole matrix
                K_theta = np.empty((n, n)) if self._dense is None else self._dense[1]
                _jit()["weighted_sum"](self.K, theta, np.flatnonzero(theta).astype(np.int64),
                                       K_theta)
                self._dense = (theta.copy(), K_theta)
                done = sol.n_iter
                sol, _ = smo_solve(KernelRows(K_theta), y, self.C, alpha0=sol.alpha,
                                   grad0=sol.grad, tol=tol, max_iter=max_iter - done, p=p,
                                   kidx=kidx)
                sol.n_iter += done
        refresh_caches(alpha, sol.alpha, y, H,
                       lambda coef, index, out: _jit()["stack_update"](self.K, coef, index, out),
                       kidx=kidx)
        return sol.alpha, H, sol.intercept, sol.n_iter, sol.converged


def refresh_caches(alpha_old, alpha_new, y, H, accumulate, kidx=None):
    r"""Bring the caches :math:`H_m=K_m(\alpha\circ y)` from ``alpha_old`` to ``alpha_new``.

    With the rows of the points whose alpha changed, or, when the support vectors are
    fewer, from scratch with theirs; ``accumulate(coef, index, H)`` adds
    :math:`\sum_{k\in\text{index}}c_kK_m[k,:]` to every ``H[m]`` in a fixed order.

    Parameters
    ----------
    alpha_old, alpha_new : ndarray of shape (n,)
    y : ndarray of shape (n,)
    H : ndarray of shape (n_kernels, n)
        Updated in place.
    accumulate : callable
    kidx : ndarray of int64 or None, default=None
        Kernel row of each variable when there are several per row (epsilon-SVR): the
        coefficients of one row are summed.
    """
    dc = (alpha_new - alpha_old) * y
    coef = alpha_new * y
    if kidx is not None:  # several variables per kernel row: c_i sums them
        dc = np.bincount(kidx, weights=dc, minlength=H.shape[1])
        coef = np.bincount(kidx, weights=coef, minlength=H.shape[1])
    changed = np.flatnonzero(dc).astype(np.int64)
    support = np.flatnonzero(coef).astype(np.int64)
    if support.size < changed.size:  # recompute H = K_m c from the support vectors
        H[...] = 0.0
        accumulate(coef, support, H)
    elif changed.size:
        accumulate(dc, changed, H)
