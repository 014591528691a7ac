r"""Kernel rows from raw features: MKL without the (n_kernels, n, n) stack.

A :class:`LazyStack` stands where the wrapper solvers take a stack ``K`` of shape
(n_kernels, n, n) but keeps only the training features: the rows of the (normalised) kernels
of a fitted :class:`~mklcore.kernels.KernelBank` are computed when the SMO engine asks for
them (:class:`LazyRows`, the :class:`~mklcore.smo.RowSource` of
:math:`K_\theta=\sum_m\theta_mK_m`, and :class:`LazyStackSMO`, the counterpart of
:class:`~mklcore.smo.StackSMO`). Kernels on one column subset share their work: one inner
product row for every polynomial and linear kernel, one squared-distance row for every
Gaussian, and Gaussians whose :math:`\gamma` is an integer multiple :math:`r\gamma_0` of the
smallest one of their subset are :math:`\exp(-\gamma_0D)^r` (repeated squaring: a bank of
widths on a :math:`\gamma=2^k\gamma_0` grid costs one exponential per entry). The rows of
the kernels that are no power of another ("base rows") do not depend on the weights: they
are cached per point, so that a row of :math:`K_\theta` at new weights costs squarings and
sums only. Memory is :math:`O(nd+Mn)` plus the row caches (``cache_mb``).

The per-kernel caches :math:`H_m=K_m(\alpha\circ y)` of the wrapper (which give
:math:`S_m=\frac12\alpha^\top YK_mY\alpha` and the gradient at new weights, Kloft et al. 2009,
Sec. 2.4) are updated from the rows of the points whose :math:`\alpha` changed, or rebuilt
from the support vectors' rows (:func:`mklcore.smo.refresh_caches`); test decisions
:math:`f(x)=\sum_m\theta_m\sum_{i\in SV}c_ik_m(x,x_i)+b` run over the support vectors in
blocks (:meth:`LazyStack.decision`), never forming an (n_test, n_train, n_kernels) array.

Solvers that accept a lazy stack: :func:`mklcore.lpnorm.lpmkl_solve` (every weight update,
``svm_backend="smo"``) and :func:`~mklcore.lpnorm.sum_kernel_svm_solve`; the estimators
:class:`~mklcore.lpnorm.LpMKLClassifier` and :class:`~mklcore.lpnorm.SumKernelSVC` choose it
with ``memory="auto"`` when the stack would not fit the memory budget.
"""

import math
import time

import numpy as np

from ._validation import Interval, Options
from .smo import RowSource, refresh_caches, smo_solve

__all__ = ["LazyStack", "LazyRows", "LazyStackSMO", "lazy_stack", "check_lazy_labels",
           "stack_bytes",
           "choose_memory", "MemoryMixin", "MEMORY_OPTIONS", "DEFAULT_CACHE_MB",
           "DEFAULT_STACK_BUDGET", "MEMORY_DOC"]

#: accepted values of the estimators' ``memory`` parameter (or a budget in bytes)
MEMORY_OPTIONS = ("auto", "stack", "rows")
#: default row cache of a lazy stack, in MB
DEFAULT_CACHE_MB = 1024
#: ``memory="auto"`` builds the stack only below this many bytes (stack and workspace)
DEFAULT_STACK_BUDGET = 4 * 2 ** 30
#: share of a lazy stack's ``cache_mb`` given to the base rows (valid for every weight vector;
#: the rest caches rows of the combined kernel for the SMO engine)
BASE_SHARE = 0.75
#: seconds between two progress lines of a long fit (``verbose >= 1``)
PROGRESS_EVERY = 10.0
#: largest integer ratio of two Gaussian widths computed by squaring instead of ``exp``
MAX_SHARED_POWER = 1024

#: numpydoc text of the ``memory`` and ``cache_size`` parameters (for ``fill_doc``)
MEMORY_DOC = """memory : {"auto", "stack", "rows"} or float, default="auto"
        Where the kernels live during the fit. ``"stack"``: the Gram stack (8 M n^2 bytes);
        ``"rows"``: a :class:`~mklcore.rowsource.LazyStack`, kernel rows computed from the
        features when the SVM needs them (linear, polynomial and Gaussian kernels; memory
        O(n d + M n) plus the row cache); ``"auto"``: the stack when it and the solver's
        workspace fit in 4 GB and in the free memory, else rows; a number: ``"auto"`` with
        that budget in bytes. Both paths give the same model (the same kernel entries). A
        path that cannot fit in the free memory raises a ``MemoryError`` naming the
        parameter that helps (``memory``, ``cache_size`` or the bank's ``rank``).
    cache_size : float, default=1024
        Row cache of the ``"rows"`` path, in MB (rows of the combined kernel)."""

_KINDS = {"linear": 0, "polynomial": 1, "gaussian": 2}
_COMPILED = {}


def _jit():
    """The compiled loops of :mod:`mklcore.rowloops` (numba is imported on first use)."""
    if not _COMPILED:
        from . import rowloops

        _COMPILED.update({name: getattr(rowloops, name) for name in rowloops.__all__})
    return _COMPILED


def stack_bytes(n_kernels, n_samples, workspace=3):
    """Bytes of a float64 training stack and ``workspace`` Gram-sized float64 matrices.

    Parameters
    ----------
    n_kernels, n_samples : int
    workspace : int, default=3

    Returns
    -------
    n_bytes : int
    """
    return 8 * (int(n_kernels) + int(workspace)) * int(n_samples) ** 2


def choose_memory(memory, n_kernels, n_samples, workspace=3, supported=True):
    """``"stack"`` or ``"rows"``: the path of an estimator's ``memory`` parameter.

    Parameters
    ----------
    memory : {"auto", "stack", "rows"} or float
        ``"auto"``: the stack when it (and ``workspace`` Gram-sized matrices) fits in
        :data:`DEFAULT_STACK_BUDGET` bytes and in the free memory, else rows; a number: the
        same with that budget in bytes.
    n_kernels, n_samples : int
    workspace : int, default=3
    supported : bool, default=True
        Whether the bank can be evaluated row by row (numeric kernels only).

    Returns
    -------
    path : str
    """
    if isinstance(memory, str):
        if memory not in MEMORY_OPTIONS:
            raise ValueError(f"The 'memory' parameter must be one of {MEMORY_OPTIONS} or a "
                             f"budget in bytes. Got {memory!r} instead.")
        if memory != "auto":
            if memory == "rows" and not supported:
                raise ValueError("memory='rows' needs numeric kernels (linear, polynomial, "
                                 "Gaussian); this bank has others: use memory='stack'.")
            return memory
        budget = DEFAULT_STACK_BUDGET
    else:
        budget = float(memory)
        if not budget > 0:
            raise ValueError(f"The 'memory' parameter must be one of {MEMORY_OPTIONS} or a "
                             f"positive budget in bytes. Got {memory!r} instead.")
    need = stack_bytes(n_kernels, n_samples, workspace)
    if not supported or need <= budget:
        from .kernels import MEMORY_CHECK_MIN_BYTES, available_memory

        if supported and need > MEMORY_CHECK_MIN_BYTES and need > available_memory():
            return "rows"
        return "stack"
    return "rows"


def _spec(kernels, X, share_exp):
    """Arrays describing a bank for :mod:`mklcore.rowloops` (see its docstring)."""
    groups, order = {}, []
    for k in kernels:
        if k.columns not in groups:
            groups[k.columns] = len(order)
            order.append(k.columns)
    parts, sq, gint, start = [], [], [], 0
    for cols in order:
        Xc = X if cols is None else np.ascontiguousarray(X[:, list(cols)])
        parts.append(Xc)
        sq.append(np.einsum("ij,ij->i", Xc, Xc))  # as the stack's squared distances
        dist = any(k.kind == "gaussian" and k.columns == cols for k in kernels)
        gint.append((start, start + Xc.shape[1], int(dist)))
        start += Xc.shape[1]
    M = len(kernels)
    kint, kflt = np.zeros((M, 4), dtype=np.int64), np.zeros((M, 3))
    for m, k in enumerate(kernels):
        kint[m, :2] = groups[k.columns], _KINDS[k.kind]
        if k.kind == "polynomial":
            kflt[m] = k.scale, k.coef0, k.degree
        elif k.kind == "gaussian":
            kflt[m, 0] = k.gamma_
    if share_exp:  # exp(-r g0 D) = exp(-g0 D)^r for an integer r
        for g in range(len(order)):
            gauss = sorted((m for m in range(M) if kint[m, 0] == g and kint[m, 1] == 2
                            and kflt[m, 0] > 0), key=lambda m: (kflt[m, 0], m))
            bases = []  # in increasing gamma: each kernel is a power of the first base it can
            for m in gauss:
                for base in bases:
                    g0 = kflt[base, 0]
                    r = kflt[m, 0] / g0
                    if r == math.floor(r) and 1 <= r <= MAX_SHARED_POWER \
                            and r * g0 == kflt[m, 0]:
                        kint[m, 1:] = 3, base, int(r)
                        break
                else:
                    bases.append(m)
    X_all = np.ascontiguousarray(np.hstack(parts)) if len(parts) > 1 else parts[0]
    sq_all = np.ascontiguousarray(np.stack(sq, axis=1))
    return X_all, sq_all, np.array(gint, dtype=np.int64).reshape(-1, 3), kint, kflt


class LazyStack:
    r"""The training stack of a fitted kernel bank, evaluated row by row from the features.

    Has the ``shape`` (n_kernels, n, n) of the stack it stands for; the wrapper solvers
    (:func:`mklcore.lpnorm.lpmkl_solve`) take it in place of ``K``.

    Parameters
    ----------
    bank : KernelBank
        A fitted bank (:meth:`~mklcore.kernels.KernelBank.fit`) of linear, polynomial and
        Gaussian kernels; its normalisation (``"trace"`` with the training factors,
        ``"cosine"`` with the training diagonal) is applied to every entry.
    cache_mb : float, default=DEFAULT_CACHE_MB
        Memory of the row caches, in MB: :data:`BASE_SHARE` of it for the base rows of each
        point (the rows of the kernels that are no power of another, valid for every weight
        vector: a row of :math:`K_\theta` at new weights then costs no ``exp``), the rest
        for the SMO engine's rows of :math:`K_\theta`.
    share_exp : bool, default=True
        Compute a Gaussian whose :math:`\gamma` is an integer multiple :math:`r\le1024` of
        a smaller :math:`\gamma_0` on the same columns as :math:`\exp(-\gamma_0D)^r`
        (bases taken greedily in increasing :math:`\gamma`; agrees with ``exp`` to about
        :math:`r` units in the last place).
    verbose : int, default=0
        ``>= 1``: a progress line (SMO iterations, kernel rows, elapsed time) at most every
        :data:`PROGRESS_EVERY` seconds, and every :data:`~mklcore.smo.CHECK_EVERY` SMO
        iterations of a long solve.

    Attributes
    ----------
    shape : tuple
        (n_kernels, n, n).
    n_rows_computed : int
        Kernel rows evaluated so far (combined rows and per-kernel rows of the caches).
    """

    ndim = 3

    def __init__(self, bank, *, cache_mb=DEFAULT_CACHE_MB, share_exp=True, verbose=0):
        kernels = bank.kernels_
        for k in kernels:
            if getattr(k, "kind", None) not in _KINDS or not k.is_fitted:
                raise ValueError(f"a lazy stack evaluates fitted linear, polynomial and "
                                 f"Gaussian kernels only; got {k!r}. Use the stack "
                                 f"(memory='stack').")
        X = np.ascontiguousarray(bank.X_fit_, dtype=np.float64)
        self.bank = bank
        self.X, self.sq, self.gint, self.kint, self.kflt = _spec(kernels, X, share_exp)
        # the column side of every row, feature by feature (the loops run along points)
        self.XT, self.sqT = np.ascontiguousarray(self.X.T), np.ascontiguousarray(self.sq.T)
        self.n_kernels, self.n = len(kernels), X.shape[0]
        self.shape = (self.n_kernels, self.n, self.n)
        self.norm = {None: 0, "trace": 1, "cosine": 2}[bank.normalize]
        raw_diag = np.empty((self.n_kernels, self.n))
        _jit()["bank_diag"](self.X, self.sq, self.gint, self.kint, self.kflt, raw_diag)
        self.raw_diag = raw_diag
        # trace factors n / tr(K_m) from the diagonal as the stack holds it
        traces = raw_diag.sum(axis=1)
        self.factor = np.where(traces > 0, self.n / np.where(traces > 0, traces, 1.0), 1.0)
        self.cdiag = np.ascontiguousarray(np.maximum(raw_diag, 0.0))
        self.cache_mb = float(cache_mb)
        self.verbose = int(verbose)
        self.n_rows_computed = 0
        # the weights-independent rows: kernels that are no power of another, and the
        # position of each kernel's base among them
        self.bases = np.flatnonzero(self.kint[:, 1] != 3).astype(np.int64)
        pos = {int(m): b for b, m in enumerate(self.bases)}
        self.kslot = np.array([pos[int(m if k != 3 else base)]
                               for m, (k, base) in enumerate(self.kint[:, 1:3])], dtype=np.int64)
        self._brows = None

    def release(self):
        """Free the base-row cache (refilled on demand); called when a fit ends."""
        self._brows = None

    def __getstate__(self):  # a pickled stack carries no cache
        state = dict(self.__dict__)
        state["_brows"] = None
        return state

    @property
    def engine_cache_mb(self):
        """The part of ``cache_mb`` the SMO engine keeps rows of the combined kernel in (the
        rest holds base rows, valid for every weight vector)."""
        return self.cache_mb * (1.0 - BASE_SHARE)

    def _base(self, index):
        """The base rows of point ``index`` (n_bases, n), from the cache or computed into it
        (first in, first out)."""
        if self._brows is None:
            per_row = 8 * self.bases.size * self.n
            n_slots = int(min(self.n, max(2, self.cache_mb * BASE_SHARE * 2 ** 20 // per_row)))
            self._brows = np.empty((n_slots, self.bases.size, self.n))
            self._bslot = np.full(self.n, -1, dtype=np.int64)
            self._bowner = np.full(n_slots, -1, dtype=np.int64)
            self._bnext = 0
        s = self._bslot[index]
        if s < 0:
            s = self._bnext % self._brows.shape[0]
            self._bnext += 1
            old = self._bowner[s]
            if old >= 0:
                self._bslot[old] = -1
            _jit()["base_row"](self.X[index], self.sq[index], self.XT, self.sqT, int(index),
                               self.gint, self.kint, self.kflt, self.bases, self._brows[s])
            self._bowner[s], self._bslot[index] = index, s
            self.n_rows_computed += 1
        return self._brows[s]

    # -- the stack's entries ---------------------------------------------------------------
    def diag(self):
        """Diagonals of the normalised kernels, shape (n_kernels, n)."""
        if self.norm == 1:
            return self.raw_diag * self.factor[:, None]
        if self.norm == 2:
            return np.where(self.cdiag > 0, 1.0, 0.0)
        return self.raw_diag.copy()

    def kernel_rows(self, index, out=None):
        """Row ``index`` of every kernel: ``K[:, index, :]``, shape (n_kernels, n)."""
        out = np.empty((self.n_kernels, self.n)) if out is None else out
        _jit()["bank_rows"](self.X, self.sq, self.cdiag, int(index), self.XT, self.sqT,
                            self.cdiag, True, self.gint, self.kint, self.kflt, self.norm,
                            self.factor, out)
        return out

    def weighted_row(self, index, weights, active, out):
        r"""Row ``index`` of :math:`\sum_m w_mK_m` over the ``active`` kernels (in order),
        from the point's cached base rows."""
        _jit()["combine_base"](self._base(int(index)), self.kslot, self.kint, self.norm,
                               self.factor, self.cdiag, int(index), weights, active, out)

    def accumulate(self, coef, index, H):
        """``H[m] += sum over k in index of coef[k] * K[m, k, :]`` (fixed order; cached base
        rows are used, missing ones computed without entering the cache)."""
        index = np.ascontiguousarray(index, dtype=np.int64)
        if self._brows is None:
            self._base(int(index[0]) if index.size else 0)
        self.n_rows_computed += int(np.count_nonzero(self._bslot[index] < 0))
        _jit()["accumulate_cached"](self.X, self.sq, self.XT, self.sqT, self.cdiag, self.gint,
                                    self.kint, self.kflt, self.bases, self.kslot, self.norm,
                                    self.factor, self._brows, self._bslot,
                                    np.ascontiguousarray(coef, dtype=np.float64), index, H)

    def matvec(self, coef):
        """``K_m @ coef`` for every kernel, shape (n_kernels, n), from the rows of the
        non-zero coefficients."""
        H = np.zeros((self.n_kernels, self.n))
        self.accumulate(coef, np.flatnonzero(coef), H)
        return H

    def check_finite(self):
        """The features are finite (checked by the bank); nothing is left to check."""

    # -- the SMO engine ----------------------------------------------------------------------
    def engine(self, y, C):
        """A :class:`LazyStackSMO` on this stack (the wrapper's per-weights SVM)."""
        return LazyStackSMO(self, y, C)

    # -- test points ---------------------------------------------------------------------------
    def _test_spec(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.bank.n_features_in_:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} features, but the lazy "
                             f"stack was fitted with {self.bank.n_features_in_} features.")
        kernels = self.bank.kernels_
        Xt, sqt, _, _, _ = _spec(kernels, X, False)
        if self.norm == 2:
            dt = np.maximum(np.stack([k.diag(X) for k in kernels]), 0.0)
        else:
            dt = np.zeros((self.n_kernels, 0))
        return Xt, sqt, np.ascontiguousarray(dt)

    def decision(self, X, weights, dual_coef, intercept=0.0, block=4096):
        r"""Decision values :math:`f(x)=\sum_m w_m\sum_i c_ik_m(x,x_i)+b` on new points.

        Over the support vectors (non-zero ``dual_coef``) in blocks of ``block`` test points,
        without a test stack.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features)
        weights : array-like of shape (n_kernels,)
        dual_coef : array-like of shape (n,)
        intercept : float, default=0.0
        block : int, default=4096

        Returns
        -------
        f : ndarray of shape (n_test,)
        """
        Xt, sqt, dt = self._test_spec(X)
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        active = np.flatnonzero(weights).astype(np.int64)
        coef = np.asarray(dual_coef, dtype=np.float64)
        sv = np.flatnonzero(coef)
        XsT, sqsT = np.ascontiguousarray(self.XT[:, sv]), np.ascontiguousarray(self.sqT[:, sv])
        ds = np.ascontiguousarray(self.cdiag[:, sv])
        out = np.zeros(Xt.shape[0])
        for s in range(0, Xt.shape[0], block):
            e = min(s + block, Xt.shape[0])
            part = np.zeros(e - s)
            _jit()["bank_decision"](Xt[s:e], sqt[s:e], np.ascontiguousarray(dt[:, s:e]), XsT,
                                    sqsT, ds, self.gint, self.kint, self.kflt, self.norm,
                                    self.factor, weights, active,
                                    np.ascontiguousarray(coef[sv]), part)
            out[s:e] = part
        return out + float(intercept)

    def test_rows(self, X, columns=None):
        """The test stack ``K[:, i, j] = k_m(x_i, x_fit_j)`` (normalised; for checks on small
        data and for the landmarks of :class:`~mklcore.lowrank.LowRankStack`).

        Parameters
        ----------
        X : array-like of shape (n_test, n_features)
        columns : array-like of int, default=None
            Training points of the columns (all by default).

        Returns
        -------
        K : ndarray of shape (n_kernels, n_test, n_columns)
        """
        Xt, sqt, dt = self._test_spec(X)
        cols = np.arange(self.n) if columns is None else np.asarray(columns, dtype=np.int64)
        XcT, sqcT = np.ascontiguousarray(self.XT[:, cols]), np.ascontiguousarray(self.sqT[:, cols])
        dc = np.ascontiguousarray(self.cdiag[:, cols])
        out = np.empty((self.n_kernels, Xt.shape[0], cols.size))
        row = np.empty((self.n_kernels, cols.size))
        for i in range(Xt.shape[0]):
            _jit()["bank_rows"](Xt, sqt, dt, i, XcT, sqcT, dc, False, self.gint, self.kint,
                                self.kflt, self.norm, self.factor, row)
            out[:, i] = row
        return out

    def result_extras(self):
        """What a solver's result records about the lazy stack (``n_kernel_rows``)."""
        return {"n_kernel_rows": int(self.n_rows_computed)}


def lazy_stack(kernels, X, *, normalize=None, cache_mb=DEFAULT_CACHE_MB, share_exp=True):
    """Fit a kernel bank on ``X`` and return its :class:`LazyStack` (no Gram matrix is built).

    Parameters
    ----------
    kernels : list of kernel specs
        Linear, polynomial and Gaussian kernels (see :func:`mklcore.kernels.kernel_bank`).
    X : array-like of shape (n_samples, n_features)
    normalize : {"trace", "cosine"} or None, default=None
    cache_mb : float, default=DEFAULT_CACHE_MB
    share_exp : bool, default=True

    Returns
    -------
    K : LazyStack
    """
    from .kernels import KernelBank

    bank = KernelBank(kernels=kernels, normalize=normalize).fit(X)
    return LazyStack(bank, cache_mb=cache_mb, share_exp=share_exp)


def check_lazy_labels(K, y, owner):
    """The {-1, +1} labels of a ``*_solve`` function called on a :class:`LazyStack`.

    Parameters
    ----------
    K : LazyStack
    y : array-like of shape (n_samples,)
    owner : str
        Used in the messages.

    Returns
    -------
    y_pm : ndarray of shape (n_samples,)
    """
    from ._validation import check_binary_labels

    y_pm = check_binary_labels(y, owner)[0]
    if y_pm.shape[0] != K.n:
        raise ValueError(f"{owner}: y has {y_pm.shape[0]} labels but the lazy stack K has "
                         f"{K.n} training points.")
    return y_pm


class LazyRows(RowSource):
    r"""Rows of :math:`K_\theta=\sum_m\theta_mK_m` of a :class:`LazyStack` (a
    :class:`~mklcore.smo.RowSource`); the weights can change between solves."""

    def __init__(self, stack, weights):
        self.stack = stack
        self.n = stack.n
        self._diag = stack.diag()
        self.set_weights(weights)

    def set_weights(self, weights):
        """New weights :math:`\\theta` (rows cached by an engine become stale)."""
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.active = np.flatnonzero(self.weights).astype(np.int64)

    def diag(self):
        return self.weights @ self._diag

    def rows(self, index, out):
        self.stack.weighted_row(index, self.weights, self.active, out)

    def matvec(self, v):
        return self.weights @ self.stack.matvec(v)


class LazyStackSMO:
    r"""The SMO engine on a :class:`LazyStack`: the interface of
    :class:`~mklcore.smo.StackSMO` (SVMs at changing weights, warm-started, with the caches
    :math:`H_m=K_m(\alpha\circ y)`), rows computed from the features.

    The engine's row cache (``stack.cache_mb``) holds rows of :math:`K_\theta` and is kept
    while the weights stay the same.

    Parameters
    ----------
    stack : LazyStack
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
    """

    def __init__(self, stack, y, C):
        self.K = stack
        self.y, self.C = np.asarray(y, dtype=np.float64), float(C)
        self.source = LazyRows(stack, np.ones(stack.n_kernels))
        self._cache = None
        self._t0 = self._last = time.perf_counter()
        self.n_iter = 0

    def _progress(self, n_iter):
        self._last = time.perf_counter()
        print(f"  {type(self.K).__name__}: {n_iter} SMO iterations, "
              f"{self.K.n_rows_computed} kernel rows computed, "
              f"{self._last - self._t0:.1f}s", flush=True)

    def solve(self, theta, alpha, H, tol, max_iter=None, full=True):
        """SMO from ``alpha`` (caches ``H`` updated in place) at weights ``theta``; see
        :meth:`mklcore.smo.StackSMO.solve` (``full`` is accepted for the same interface)."""
        y = self.y
        n = y.shape[0]
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if max_iter is None:
            max_iter = max(100_000, 100 * n)
        alpha = np.array(alpha, dtype=np.float64)
        grad0 = y * (theta @ H) - 1.0
        if self._cache is None or not np.array_equal(theta, self.source.weights):
            self.source.set_weights(theta)
            self._cache = None
        sol, self._cache = smo_solve(self.source, y, self.C, alpha0=alpha, grad0=grad0,
                                     tol=tol, max_iter=max_iter,
                                     cache_mb=self.K.engine_cache_mb,
                                     cache=self._cache,
                                     on_check=(lambda it: self._progress(self.n_iter + it))
                                     if self.K.verbose else None)
        refresh_caches(alpha, sol.alpha, y, H, self.K.accumulate)
        self.n_iter += sol.n_iter
        if self.K.verbose and time.perf_counter() - self._last >= PROGRESS_EVERY:
            self._progress(self.n_iter)
        return sol.alpha, H, sol.intercept, sol.n_iter, sol.converged


def _gb(n_bytes):
    return f"{n_bytes / 2 ** 30:.2f} GB"


def _bank_size(kernels, n_features):
    """``(n_kernels, rows_supported)`` of an estimator's bank before it is fitted."""
    from .kernels import as_kernel

    if kernels is None:
        return 2, True
    klist = [as_kernel(k) for k in kernels]
    size = sum(int(n_features) if k.columns == "each" else 1 for k in klist)
    return size, all(getattr(k, "kind", None) in _KINDS for k in klist)


class MemoryMixin:
    r"""The ``memory`` and ``cache_size`` parameters of the wrapper estimators.

    Mixed in before :class:`~mklcore._base.BaseMKLClassifier`: ``memory="auto"`` fits on the
    Gram stack when it fits the memory budget (:func:`choose_memory`) and on a
    :class:`LazyStack` otherwise (kernel rows from the features, a row cache of
    ``cache_size`` MB); both paths solve the same problem (the rows are the stack's rows).
    In the rows path the fitted ``lazy_stack_`` computes test decisions over the support
    vectors (:meth:`LazyStack.decision`). With a low-rank bank
    (``kernel_bank(..., approx=...)``) the problem on the factors is solved in the primal by
    :func:`mklcore.factormkl.factor_lpmkl_solve` (``p``, ``C``, ``tol`` on its rigorous
    gap, ``max_iter``; the sum kernel at p = inf), which needs no kernel row.
    """

    #: constraints of the two parameters (merged into the estimator's constraints)
    memory_constraints = {
        "memory": [Options(*MEMORY_OPTIONS), Interval("real", 0, None, closed="neither")],
        "cache_size": [Interval("real", 0, None, closed="neither")],
    }

    def solver_params(self):
        """The solver's keyword arguments: the base's, without the memory path's.

        Returns
        -------
        params : dict
        """
        params = super().solver_params()
        params.pop("memory", None)
        params.pop("cache_size", None)
        return params

    def _solve(self, K, y):
        if not hasattr(K, "features"):  # the stack or lazy rows: the estimator's own solver
            return super()._solve(K, y)
        from .factormkl import factor_lpmkl_solve  # low-rank factors: the primal solve

        params = self.solver_params()
        p = np.inf if self._sum_kernel else params.get("p", 2.0)
        return factor_lpmkl_solve(K, y, p=p, C=params["C"], tol=params.get("tol", 1e-4),
                                  max_iter=params.get("max_iter", 500),
                                  verbose=params.get("verbose", 0))

    def _fit_inputs(self, X, y):
        kernels, _ = self._bank_params()
        n_kernels, supported = _bank_size(kernels, X.shape[1])
        stacked = 1 if self._sum_kernel else n_kernels  # the sum kernel is summed, not stacked
        self.memory_path_ = choose_memory(self.memory, stacked, X.shape[0],
                                          self._solver_workspace, supported)
        approx = getattr(kernels, "approx", None)
        if approx is not None:  # an ApproxBank: low-rank factors (mklcore.lowrank)
            if not supported:
                raise ValueError(f"approx={approx!r} needs numeric kernels (linear, "
                                 f"polynomial, Gaussian; 'rff': Gaussian only).")
            self.memory_path_ = "lowrank"
        self._check_fits(n_kernels, X.shape, kernels)
        if self.memory_path_ == "stack":
            return super()._fit_inputs(X, y)
        n_classes = np.unique(np.asarray(y)).size
        if n_classes > 2:
            raise ValueError(
                f"{type(self).__name__}: the {self.memory_path_!r} path (kernel rows from "
                f"features or low-rank factors) is binary-only for now and y has {n_classes} "
                f"classes; use an exact bank (no approx) with memory='stack' for more classes.")
        self.kernel_bank_ = self._build_bank().fit(X)
        verbose = getattr(self, "verbose", 0)
        if approx is not None:
            from .lowrank import approx_stack

            self.lazy_stack_ = approx_stack(self.kernel_bank_, approx, kernels.rank,
                                            random_state=kernels.random_state,
                                            cache_mb=self.cache_size, verbose=verbose)
        else:
            self.lazy_stack_ = LazyStack(self.kernel_bank_, cache_mb=self.cache_size,
                                         verbose=verbose)
        return self.lazy_stack_

    def _set_fitted(self, result):
        super()._set_fitted(result)
        if getattr(self, "lazy_stack_", None) is not None:
            self.lazy_stack_.release()  # the fitted model keeps no row cache

    def _check_fits(self, n_kernels, shape, kernels):
        """Raise a ``MemoryError`` naming the parameter that helps when the chosen path
        cannot fit in the free memory (checked only above 256 MB)."""
        from .kernels import MEMORY_CHECK_MIN_BYTES, available_memory

        n, d = shape
        owner, path = type(self).__name__, self.memory_path_
        if path == "stack":
            stacked = 1 if self._sum_kernel else n_kernels
            need = stack_bytes(stacked, n, self._solver_workspace)
            what = (f"{_gb(stack_bytes(stacked, n, 0))} for the stack plus "
                    f"{_gb(stack_bytes(0, n, self._solver_workspace))} of workspace")
            advice = ("use memory='rows' (kernel rows computed from the features, "
                      f"about {_gb(8 * n * (2 * d + 4 * n_kernels) + self.cache_size * 2 ** 20)}"
                      " with cache_size=" f"{self.cache_size:g} MB) or a low-rank bank "
                      "(kernel_bank(..., approx='nystroem', rank=r))")
        elif path == "rows":
            need = 8 * n * (2 * d + 4 * n_kernels) + self.cache_size * 2 ** 20
            what = f"about {_gb(need)}"
            advice = (f"lower cache_size (now {self.cache_size:g} MB) or use a low-rank bank "
                      f"(kernel_bank(..., approx='nystroem', rank=r))")
        else:
            rank = min(kernels.rank, n)
            need = 8 * n * (2 * d + 4 * n_kernels + 2 * n_kernels * rank) \
                + self.cache_size * 2 ** 20
            what = f"about {_gb(need)}"
            advice = (f"lower the rank (now rank={rank}) of the bank or cache_size (now "
                      f"{self.cache_size:g} MB)")
        if need <= MEMORY_CHECK_MIN_BYTES:
            return
        free = available_memory()
        if need > free:
            raise MemoryError(f"{owner}: the {path} path (memory={self.memory!r}) needs {what} "
                              f"for {n_kernels} kernels on {n} points, but only {_gb(free)} "
                              f"are free; {advice}.")

    def decision_function(self, X):
        """Decision values ``f(x)`` (positive means ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        f : ndarray of shape (n_samples,)
        """
        from sklearn.utils.validation import check_is_fitted, validate_data

        check_is_fitted(self)
        if getattr(self, "memory_path_", "stack") == "stack":
            return super().decision_function(X)
        X = validate_data(self, X, reset=False, dtype="numeric")
        return self.lazy_stack_.decision(X, self.weights_, self.dual_coef_, self.intercept_)
