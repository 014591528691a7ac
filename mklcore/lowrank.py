r"""Low-rank kernels: MKL on Nyström factors :math:`K_m\approx\Phi_m\Phi_m^\top`.

``kernel_bank(..., approx="nystroem", rank=r)`` marks a bank for approximation
(:class:`ApproxBank`); the estimators that take ``memory=`` then fit on a
:class:`LowRankStack`. For each kernel, the Nyström method (Williams & Seeger 2001) with
``r`` landmarks :math:`L` drawn uniformly without replacement (seeded, shared by the kernels)
gives

.. math::
    \Phi_m=K_m(X,L)\,U_m\Lambda_m^{-1/2},\qquad K_m(L,L)=U_m\Lambda_mU_m^\top

(eigenvalues below ``1e-12`` times the largest dropped), so :math:`\Phi_m\Phi_m^\top=K_m(X,L)
K_m(L,L)^+K_m(L,X)`, which equals :math:`K_m` when the landmarks are all the points. The
solvers see the approximated kernels :math:`\tilde K_m=\Phi_m\Phi_m^\top` through the
interface of :class:`~mklcore.rowsource.LazyStack`: rows :math:`\Phi\,\Phi[i]^\top`
(:math:`O(nr)`), and the wrapper's caches :math:`H_m=\Phi_m(\Phi_m^\top c)` recomputed
exactly in :math:`O(nr)` per kernel. Their duality gap certifies the approximated problem;
the approximation itself is reported by :meth:`LowRankStack.kernel_error` (the relative
Frobenius error :math:`\|K_m-\tilde K_m\|_F/\|K_m\|_F` on a seeded sample of points), stored
in the solver's result as ``kernel_error``. The kernel entries (normalisation included) are
those of the lazy stack, so the factors never need the (n, n) matrices.
"""

import numpy as np

from .rowsource import DEFAULT_CACHE_MB, LazyStack

__all__ = ["ApproxBank", "LowRankStack", "FourierStack", "approx_stack", "APPROX_METHODS"]

#: accepted values of ``approx``
APPROX_METHODS = ("nystroem", "rff")
#: relative eigenvalue cut-off of the landmark kernels
EIG_TOL = 1e-12
#: memory of the landmark rows (and products) held at once while the factors are built
BLOCK_BYTES = 256 * 2 ** 20


class ApproxBank(list):
    """A kernel bank (a list of kernels) marked for low-rank approximation.

    Returned by :func:`mklcore.kernels.kernel_bank` with ``approx=``; used as a plain list
    by code that does not know it (which then computes the exact kernels).

    Parameters
    ----------
    kernels : list of Kernel
    approx : {"nystroem"}
    rank : int
        Landmarks per kernel (at most the number of training points).
    random_state : int
        Seed of the landmark draw.
    """

    def __init__(self, kernels, approx, rank, random_state=0):
        super().__init__(kernels)
        if approx not in APPROX_METHODS:
            raise ValueError(f"The 'approx' parameter of kernel_bank must be one of "
                             f"{APPROX_METHODS} or None. Got {approx!r} instead.")
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
            raise ValueError(f"kernel_bank(approx={approx!r}) needs rank= a positive "
                             f"integer. Got rank={rank!r} instead.")
        self.approx, self.rank, self.random_state = approx, int(rank), int(random_state)

    def __repr__(self):
        return (f"ApproxBank({list.__repr__(self)}, approx={self.approx!r}, "
                f"rank={self.rank}, random_state={self.random_state})")


class LowRankStack(LazyStack):
    r"""Nyström factors of a fitted bank's kernels, with the interface of a
    :class:`~mklcore.rowsource.LazyStack` (the solvers that take one take this).

    Parameters
    ----------
    bank : KernelBank
        A fitted bank of linear, polynomial and Gaussian kernels.
    rank : int
        Number of landmarks (capped at n).
    random_state : int, default=0
        Seed of the landmarks.
    cache_mb : float, default=DEFAULT_CACHE_MB
        Row cache of the SMO engine, in MB.
    error_sample : int, default=500
        Points of the sample on which :meth:`kernel_error` compares with the exact kernels.
    verbose : int, default=0
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Of the stored factors (float32 halves their memory; the solvers sum in float64).

    Attributes
    ----------
    landmarks : ndarray of shape (rank,)
        Indices of the landmark points.
    factors : list of ndarray of shape (n, r_m)
        :math:`\Phi_m` (``r_m <= rank``: eigenvalues below the cut-off dropped); column
        blocks of ``features``.
    features : ndarray of shape (n, D)
        The factors side by side, :math:`D=\sum_mr_m` (what
        :func:`mklcore.factormkl.factor_lpmkl_solve` solves on).
    starts : ndarray of shape (n_kernels + 1,)
        First column of each kernel's block in ``features`` (and ``D``).
    """

    #: the ``approx`` name of the method
    approx = "nystroem"

    def __init__(self, bank, rank, *, random_state=0, cache_mb=DEFAULT_CACHE_MB,
                 error_sample=500, verbose=0, dtype=np.float64):
        super().__init__(bank, cache_mb=cache_mb, verbose=verbose)
        n, M = self.n, self.n_kernels
        self._requested_rank = int(rank)
        self.rank = min(int(rank), n)
        self.error_sample = int(error_sample)
        self.random_state = random_state
        self._fit_maps(np.random.default_rng(random_state))
        self.features = self._build_features(np.dtype(dtype))
        self.factors = [self.features[:, self.starts[m]:self.starts[m + 1]] for m in range(M)]
        self._fdiag = np.stack([np.einsum("ij,ij->i", F, F, dtype=np.float64)
                                for F in self.factors])
        self._error = None

    def _fit_maps(self, rng):
        """Landmarks, the maps :math:`T_m` and the column starts."""
        M, n = self.n_kernels, self.n
        self.landmarks = np.sort(rng.choice(n, size=self.rank, replace=False))
        row = np.empty((M, n))
        W = np.empty((M, self.rank, self.rank))
        for a, i in enumerate(self.landmarks):
            W[:, a] = LazyStack.kernel_rows(self, i, row)[:, self.landmarks]
        self.maps = []
        for m in range(M):
            Wm = 0.5 * (W[m] + W[m].T)
            s, U = np.linalg.eigh(Wm)
            keep = s > EIG_TOL * max(float(s[-1]), np.finfo(float).tiny)
            self.maps.append(U[:, keep] / np.sqrt(s[keep]))  # K(x, L) @ T is the feature map
        self.starts = np.concatenate([[0], np.cumsum([T.shape[1] for T in self.maps])])

    def _build_features(self, dtype):
        r"""The stacked factors :math:`[\Phi_1\dots\Phi_M]=[K_m(X,L)T_m]_m`, shape (n, D),
        in chunks of points (the landmarks' kernel entries of one chunk, at most
        :data:`BLOCK_BYTES`, then one product per kernel)."""
        n, M, lm = self.n, self.n_kernels, self.landmarks
        Z = np.empty((n, int(self.starts[-1])), dtype=dtype)
        X_lm = np.asarray(self.bank.X_fit_, dtype=np.float64)[lm]
        chunk = max(1, BLOCK_BYTES // (8 * M * max(lm.size, 1)))
        for c0 in range(0, n, chunk):
            cols = np.arange(c0, min(c0 + chunk, n))
            K = LazyStack.test_rows(self, X_lm, columns=cols)  # (M, rank, chunk)
            for m, T in enumerate(self.maps):
                Z[cols[0]:cols[-1] + 1, self.starts[m]:self.starts[m + 1]] = K[m].T @ T
        return Z

    @property
    def engine_cache_mb(self):
        """The whole ``cache_mb`` (rows of the factors need no base rows)."""
        return self.cache_mb

    # -- the approximated stack's entries ----------------------------------------------------
    def diag(self):
        """Diagonals of the approximated kernels, shape (n_kernels, n)."""
        return self._fdiag.copy()

    def kernel_rows(self, index, out=None):
        """Row ``index`` of every approximated kernel, shape (n_kernels, n)."""
        out = np.empty((self.n_kernels, self.n)) if out is None else out
        for m, F in enumerate(self.factors):
            out[m] = F @ F[index]
        return out

    def weighted_row(self, index, weights, active, out):
        out[:] = 0.0
        for m in active:
            F = self.factors[m]
            out += weights[m] * (F @ F[index])
        self.n_rows_computed += 1

    def accumulate(self, coef, index, H):
        """``H[m] += Phi_m (Phi_m[index]^T coef[index])`` (exact in O(n r))."""
        index = np.asarray(index, dtype=np.int64)
        c = np.asarray(coef, dtype=np.float64)[index]
        for m, F in enumerate(self.factors):
            H[m] += F @ (F[index].T @ c)

    def matvec(self, coef):
        return np.stack([F @ (F.T @ coef) for F in self.factors])

    # -- the approximation ------------------------------------------------------------------
    def kernel_error(self):
        r"""Relative Frobenius error :math:`\|K_m-\tilde K_m\|_F/\|K_m\|_F` of each kernel on
        a seeded sample of ``error_sample`` points (exact entries from the lazy rows).

        Returns
        -------
        error : ndarray of shape (n_kernels,)
        """
        if self._error is None:
            rng = np.random.default_rng(self.random_state + 1)
            k = min(self.error_sample, self.n)
            sample = np.sort(rng.choice(self.n, size=k, replace=False))
            exact = np.empty((self.n_kernels, k, k))
            row = np.empty((self.n_kernels, self.n))
            for a, i in enumerate(sample):
                exact[:, a] = LazyStack.kernel_rows(self, i, row)[:, sample]
            err = np.empty(self.n_kernels)
            for m, F in enumerate(self.factors):
                approx = F[sample] @ F[sample].T
                norm = np.linalg.norm(exact[m])
                err[m] = np.linalg.norm(exact[m] - approx) / norm if norm > 0 else 0.0
            self._error = err
        return self._error.copy()

    def result_extras(self):
        """What a solver's result records about the approximation."""
        return {**super().result_extras(), "approx": self.approx, "rank": self.rank,
                "kernel_error": self.kernel_error()}

    # -- test points ------------------------------------------------------------------------
    def decision(self, X, weights, dual_coef, intercept=0.0, block=4096):
        r"""Decision values of the approximated model,
        :math:`f(x)=\sum_mw_mk_m(x,L)T_m\Phi_m^\top c+b` (test rows against the landmarks
        only, in blocks)."""
        coef = np.asarray(dual_coef, dtype=np.float64)
        weights = np.asarray(weights, dtype=np.float64)
        v = [T @ (F.T @ coef) for T, F in zip(self.maps, self.factors)]
        Xt = np.asarray(X, dtype=np.float64)
        out = np.zeros(Xt.shape[0])
        for s in range(0, Xt.shape[0], block):
            rows = self._landmark_rows(Xt[s:s + block])  # (M, b, rank)
            for m in np.flatnonzero(weights):
                out[s:s + block] += weights[m] * (rows[m] @ v[m])
        return out + float(intercept)

    def _landmark_rows(self, X):
        """Normalised kernel entries between ``X`` and the landmarks, (M, n_X, rank)."""
        return LazyStack.test_rows(self, X, columns=self.landmarks)


class FourierStack(LowRankStack):
    r"""Random Fourier features of Gaussian kernels (Rahimi & Recht, NIPS 2007), with the
    interface of a :class:`LowRankStack`.

    For :math:`k(x,z)=\exp(-\gamma\|x-z\|^2)` (on the kernel's columns),
    :math:`\Phi(x)=\sqrt{2c/r}\,\cos(x^\top\Omega+\beta)` with :math:`\Omega_{jk}\sim
    N(0,2\gamma)`, :math:`\beta_k\sim U[0,2\pi)` drawn per kernel from one seeded generator
    (in kernel order) and :math:`c` the bank's normalisation factor of the kernel (1 for
    Gaussians under ``"trace"`` and ``"cosine"``): :math:`E[\Phi\Phi^\top]=K`, with an error
    of order :math:`r^{-1/2}` that :meth:`~LowRankStack.kernel_error` measures.

    Parameters
    ----------
    bank : KernelBank
        A fitted bank of Gaussian kernels.
    rank : int
        Features per kernel.
    random_state, cache_mb, error_sample, verbose, dtype
        As :class:`LowRankStack`.

    Attributes
    ----------
    omegas, offsets : list of ndarray
        :math:`\Omega_m` (d_m, rank) and :math:`\beta_m` (rank,).
    features, factors, starts
        As :class:`LowRankStack`.
    """

    approx = "rff"

    def __init__(self, bank, rank, **options):
        for k in bank.kernels_:
            if getattr(k, "kind", None) != "gaussian":
                raise ValueError(f"approx='rff' approximates Gaussian kernels only; got {k!r}. "
                                 f"Use approx='nystroem'.")
        super().__init__(bank, rank, **options)

    def _fit_maps(self, rng):
        self.rank = int(self._requested_rank)
        self.landmarks = np.zeros(0, dtype=np.int64)
        self.omegas, self.offsets, self.columns = [], [], []
        for k in self.bank.kernels_:
            cols = (np.arange(self.bank.n_features_in_) if k.columns is None
                    else np.asarray(k.columns, dtype=np.int64))
            self.columns.append(cols)
            self.omegas.append(rng.normal(scale=np.sqrt(2.0 * k.gamma_),
                                          size=(cols.size, self.rank)))
            self.offsets.append(rng.uniform(0.0, 2.0 * np.pi, size=self.rank))
        self.starts = np.arange(self.n_kernels + 1) * self.rank

    def _map(self, X, m):
        r""":math:`\Phi_m` of the rows of ``X`` (float64)."""
        scale = np.sqrt(2.0 * self.factor[m] / self.rank)
        return scale * np.cos(X[:, self.columns[m]] @ self.omegas[m] + self.offsets[m])

    def _build_features(self, dtype):
        X = np.asarray(self.bank.X_fit_, dtype=np.float64)
        Z = np.empty((self.n, int(self.starts[-1])), dtype=dtype)
        chunk = max(1, BLOCK_BYTES // (8 * self.rank))
        for m in range(self.n_kernels):
            cols = slice(self.starts[m], self.starts[m + 1])
            for c0 in range(0, self.n, chunk):
                Z[c0:c0 + chunk, cols] = self._map(X[c0:c0 + chunk], m)
        return Z

    def decision(self, X, weights, dual_coef, intercept=0.0, block=4096):
        r""":math:`f(x)=\sum_m\theta_m\Phi_m(x)^\top\Phi_m^\top c+b`."""
        coef = np.asarray(dual_coef, dtype=np.float64)
        Xt = self._test_spec_checked(X)
        out = np.zeros(Xt.shape[0])
        for m in np.flatnonzero(weights):
            v = np.asarray(self.factors[m].T @ coef.astype(self.features.dtype), dtype=float)
            for s in range(0, Xt.shape[0], block):
                out[s:s + block] += weights[m] * (self._map(Xt[s:s + block], m) @ v)
        return out + float(intercept)

    def _test_spec_checked(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.bank.n_features_in_:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} features, but the stack "
                             f"was fitted with {self.bank.n_features_in_} features.")
        return X


def approx_stack(bank, approx, rank, **options):
    """The :class:`LowRankStack` (``"nystroem"``) or :class:`FourierStack` (``"rff"``) of a
    fitted bank.

    Parameters
    ----------
    bank : KernelBank
    approx : {"nystroem", "rff"}
    rank : int
    **options
        Of the stack (``random_state``, ``cache_mb``, ``error_sample``, ``verbose``,
        ``dtype``).

    Returns
    -------
    stack : LowRankStack
    """
    if approx not in APPROX_METHODS:
        raise ValueError(f"approx must be one of {APPROX_METHODS}; got {approx!r}.")
    return (FourierStack if approx == "rff" else LowRankStack)(bank, rank, **options)
