r"""StPMKL: multiple kernel learning from noisy labels by stochastic programming.

Yang, Mahdavi, Jin, Zhang and Zhou (ICML 2012) replace the hinge-loss constraint of l1-MKL by
a chance constraint that only counts correctly labelled examples, bound it with Hoeffding and
McDiarmid, and take the worst case over the unknown correctness probabilities. The result is
the convex-concave saddle problem (11) of the paper (Section 3.3)

.. math::
    \min_{f}\ \max_{\gamma\in Q'}\ F(f,\gamma)
    = \frac1n\sum_{i=1}^n \gamma_i\,(1-y_if(x_i)) + \frac\lambda2\Big(\sum_{j=1}^m
    \|f_j\|_{\mathcal H_j}\Big)^2,
    \qquad Q'=\{\gamma\in[0,u]^n:\ \textstyle\sum_i\gamma_i\le\rho\},

with :math:`f=\sum_j f_j`, :math:`f_j=\sum_i A_{ij}\kappa_j(x_i,\cdot)` and no bias. It is a
"top-k hinge" model: for fixed :math:`f` the inner maximum puts :math:`\gamma_i=u` on the
:math:`\rho/u` largest hinge losses. With :math:`\rho\ge nu` the budget is inactive and the
problem is bias-free hinge-loss l1-MKL, the group-lasso form (3) of the paper (its "(10)
reduces to (2) when there is no noise").

:func:`stpmkl_solve` solves it (cutting planes on its dual, the paper's accelerated mirror prox
AMP, or gradient descent-ascent; see its Notes); :func:`mipmkl_solve` is the best-case baseline;
:func:`project_box_budget` (Lemma 2) and :func:`group_soft_threshold` (Lemma 3) are the
reference versions of the solvers' steps.

Symbols: ``coef`` is :math:`A` (shape ``(n_samples, n_kernels)``) of
:math:`f_j=\sum_iA_{ij}\kappa_j(x_i,\cdot)`, ``gamma`` the dual :math:`\gamma`, ``weights`` the
kernel weights :math:`u_j=\|f_j\|/\sum_k\|f_k\|` (the :math:`u` of (1)-(2)), ``upper`` the box
bound (the paper's :math:`1+\eta`, absorbed into :math:`\lambda` and :math:`\rho` in its
Section 4: box :math:`[0,1]`), ``rho`` the budget and ``lam`` :math:`\lambda`.

An AMP iteration is one pass over the kernel stack (O(mn^2)); :math:`K_jA_j`,
:math:`K_j\bar A_j` and :math:`K_j(\bar\gamma\circ y)` are updated linearly, so the exact
gap of the averaged iterate costs O(mn). With pivoted-Cholesky factors
:math:`K_j\approx R_jR_j^\top` it runs in factor space, :math:`w_j=R_j^\top A_j`, at
:math:`O(n\sum_jr_j)`.
"""

import math

import numpy as np

from ._base import COMMON_CONSTRAINTS, DOC_PARAMS, BaseMKLClassifier
from ._linalg import on_one_blas_thread
from ._result import Monitor, NumericalFailure
from ._validation import (Interval, Options, check_binary_labels, check_kernel_stack,
                          validate_params)
from .masters import highs_lp

__all__ = [
    "stpmkl_solve", "mipmkl_solve", "StPMKLClassifier", "MiPMKLClassifier",
    "stpmkl_grid", "KernelFactors", "rho_from_theory", "project_box_budget",
    "group_soft_threshold", "stpmkl_objectives", "theorem2_bound", "stpmkl_decision",
    "factorize_kernels",
]

_TINY = np.finfo(float).tiny
#: the inner QP of the exact solver cannot resolve a Frank-Wolfe gap below this many units of
#: round-off of the linear term over the box (the projection's absolute error)
_FW_ROUNDOFF = 64 * np.finfo(float).eps
#: kernel traces spread by more than this factor, a lam below this times the mean kernel
#: diagonal or a rho below this times n * upper: a degenerate problem, said in the warnings
_SCALE_SPREAD = 1e8
_TINY_RATIO = 1e-12
#: inner-QP iterations per outer iteration of the exact solver (lam or rho at round-off: fewer)
_INNER_MAX_ITER = 100_000
_INNER_MAX_ITER_DEGENERATE = 1_000
#: a relative duality gap below minus this is round-off gone wrong, not a certificate
_NEGATIVE_GAP = 1e-8

#: docstring sections shared by several functions and classes (substituted by _fill_doc)
_DOC = {
    "probability": DOC_PARAMS["probability"],
    "example_data": """>>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.sign(X[:, 0] + 0.1)
    >>> K = np.stack([np.exp(-(X[:, None, 0] - X[None, :, 0]) ** 2),
    ...               np.exp(-(X[:, None, 1] - X[None, :, 1]) ** 2)])""",
    "K_y": """K : ndarray of shape (n_kernels, n_samples, n_samples) or None
        Training Gram matrices (None with ``factors``).
    y : array-like of shape (n_samples,)
        Binary labels.""",
    "normalize": """normalize : {"trace", "cosine"} or None, default=None
        Kernel normalisation (none in the paper: Gaussian kernels have unit diagonal).""",
    "mipmkl_iterations": """max_alt : int, default=50
        Maximum number of alternations.
    max_iter : int, default=1000
        Iterations of the first inner solve (the l1-MKL start).
    alt_max_iter : int, default=None
        Iterations of the later, warm-started inner solves (``None``: ``max_iter``).
    tol : float or None, default=1e-2
        Relative duality gap of each inner solve (``None``: every inner solve runs its
        ``max_iter`` / ``alt_max_iter`` iterations). The alternation itself stops when
        :math:`p` no longer changes (exactly).""",
    "weights_coef": r"""weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`u_j=\|f_j\|/\sum_k\|f_k\|` (the paper's :math:`u`).
    coef_ : ndarray of shape (n_samples, n_kernels)
        Coefficients :math:`A` of :math:`f_j=\sum_iA_{ij}\kappa_j(x_i,\cdot)`.""",
    "fitted": r"""dual_coef_ : ndarray of shape (n_samples,)
        :math:`\hat\gamma\circ y/(n\lambda)`, the l1-MKL dual.
    intercept_ : float
        Always 0 (no bias term).
    support_ : ndarray
        Indices of training points with a non-zero coefficient.
    classes_ : ndarray of shape (2,)
        Class labels; ``classes_[1]`` is the positive class.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data.
    n_features_in_ : int
        Number of features.
    n_iter_ : int
        Number of iterations (of alternations for MiPMKL).""",
    "result_bank": """result_ : MKLResult
        The full solver result.
    kernel_bank_ : KernelBank
        The fitted kernel bank.""",
}


def _fill_doc(obj):
    """Substitute the ``{key}`` sections of ``_DOC`` into ``obj.__doc__``."""
    for key, text in _DOC.items() if obj.__doc__ else ():  # python -OO strips docstrings
        obj.__doc__ = obj.__doc__.replace("{" + key + "}", text)
    return obj


# --- the paper's constants ---

def rho_from_theory(n, noise_level, delta=0.1):
    r"""Budget :math:`\rho` of the paper for ``n`` examples, noise level ``q`` and ``delta``.

    The paper's (11) has the box :math:`[0,1+\eta]` and the budget :math:`n(1-q+\epsilon+\eta)`;
    its experiments (Section 4) absorb :math:`1+\eta` into :math:`\lambda` and :math:`\rho`
    (divide :math:`\gamma` by :math:`1+\eta`), the normalisation used by mklcore (box
    :math:`[0,1]`):

    .. math::
        \rho = \frac{n\,(1-q+\epsilon+\eta)}{1+\eta},\qquad
        \epsilon=\sqrt{\frac{\ln(2/\delta)}{2n}}\ \text{(Proposition 1)},\qquad
        \eta=\sqrt{\frac{\ln(1/\delta)}{2}}\ \text{(Lemma 1)}.

    Parameters
    ----------
    n : int
        Number of training examples, >= 1.
    noise_level : float
        Noise level :math:`q\in[0,1/2)`.
    delta : float, default=0.1
        Confidence level :math:`\delta\in(0,1)` of the chance constraint.

    Returns
    -------
    rho : float
        The budget; at ``noise_level=0`` it is at least ``n`` (no active budget: l1-MKL).

    Examples
    --------
    >>> from mklcore.stpmkl import rho_from_theory
    >>> round(rho_from_theory(200, 0.0, 0.1) / 200, 4)
    1.0417
    """
    validate_params("rho_from_theory", {
        "n": [Interval("int", 1, None)],
        "noise_level": [Interval("real", 0, 0.5, closed="left")],
        "delta": [Interval("real", 0, 1, closed="neither")]},
        {"n": n, "noise_level": noise_level, "delta": delta})
    eps = np.sqrt(np.log(2.0 / delta) / (2.0 * n))
    eta = np.sqrt(np.log(1.0 / delta) / 2.0)
    return float(n * (1.0 - noise_level + eps + eta) / (1.0 + eta))


# --- Lemma 2: projection onto Q' = {0 <= gamma <= upper, sum gamma <= rho} ---

def _sum_above(a_sorted, suffix, theta):
    """``sum_i max(a_i - theta, 0)`` for every ``theta`` (``a_sorted`` ascending)."""
    n = a_sorted.size
    idx = np.searchsorted(a_sorted, theta, side="right")
    return suffix[n - idx] - (n - idx) * theta


def _bisect(below, hi, max_halvings, rtol):
    """Root on ``[0, hi]`` of a monotone test: ``below(t)`` is True left of the root."""
    lo = 0.0
    for _ in range(max_halvings):
        mid = 0.5 * (lo + hi)
        if below(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= rtol * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def project_box_budget(ghat, upper=1.0, rho=np.inf, *, method="sort", return_theta=False):
    r"""Euclidean projection onto :math:`Q'=\{\gamma:0\le\gamma\le u,\ \sum_i\gamma_i\le\rho\}`.

    Lemma 2 of the paper:
    :math:`\mathrm{Proj}(\hat\gamma)_i=\min(u_i,\max(0,\hat\gamma_i-\theta))`,
    where :math:`\theta=0` if the clipped vector meets the budget and otherwise
    :math:`\theta>0` is the root of the continuous, piecewise linear, non-increasing function
    :math:`h(\theta)=\sum_i\mathrm{clip}(\hat\gamma_i-\theta,0,u_i)-\rho` (the KKT multiplier
    of the budget).

    Parameters
    ----------
    ghat : array-like of shape (n,)
        Point to project.
    upper : float or array-like of shape (n,), default=1.0
        Box bound :math:`u` (per coordinate if an array), >= 0.
    rho : float, default=inf
        Budget :math:`\rho>0`; ``inf`` gives a plain clip to the box.
    method : {"sort", "bisect"}, default="sort"
        ``"sort"``: exact root by sorting the :math:`2n` breakpoints
        :math:`\{\hat\gamma_i,\hat\gamma_i-u_i\}` and interpolating on the segment where
        :math:`h` changes sign, O(n log n). ``"bisect"``: the paper's bisection on
        :math:`[0,\max_i\hat\gamma_i]` (100 halvings at most, relative tolerance 1e-12), kept as
        a cross-check.
    return_theta : bool, default=False
        Also return :math:`\theta`.

    Returns
    -------
    gamma : ndarray of shape (n,)
        The projection.
    theta : float
        Only if ``return_theta``.

    Examples
    --------
    >>> from mklcore.stpmkl import project_box_budget
    >>> project_box_budget([2.0, 0.5, -1.0, 0.9], upper=1.0, rho=1.5).round(3).tolist()
    [1.0, 0.05, 0.0, 0.45]
    """
    if method not in ("sort", "bisect"):
        raise ValueError(f"The 'method' parameter of project_box_budget must be one of "
                         f"{{'sort', 'bisect'}}. Got {method!r} instead.")
    g = np.asarray(ghat, dtype=float)
    ub = np.broadcast_to(np.asarray(upper, dtype=float), g.shape)
    x = np.clip(g, 0.0, ub)
    theta = 0.0
    if np.isfinite(rho) and x.sum() > rho:
        if method == "sort":
            a1 = np.sort(g)
            a2 = np.sort(g - ub)
            s1 = np.concatenate(([0.0], np.cumsum(a1[::-1])))
            s2 = np.concatenate(([0.0], np.cumsum(a2[::-1])))
            cand = np.concatenate(([0.0], a1[a1 > 0], a2[a2 > 0]))
            cand = np.unique(cand)
            h = _sum_above(a1, s1, cand) - _sum_above(a2, s2, cand) - rho
            # h is non-increasing with h[0] > 0 >= h[-1] = -rho: last k with h[k] >= 0
            k = int(np.searchsorted(-h, 0.0, side="right")) - 1
            k = min(max(k, 0), cand.size - 2)
            t0, t1, h0, h1 = cand[k], cand[k + 1], h[k], h[k + 1]
            theta = t0 if h0 <= 0 else t0 + h0 * (t1 - t0) / (h0 - h1)
        else:  # the paper's bisection
            theta = _bisect(lambda t: np.clip(g - t, 0.0, ub).sum() > rho, float(g.max()),
                            100, 1e-12)
        x = np.clip(g - theta, 0.0, ub)
    return (x, float(theta)) if return_theta else x


def _max_sq_norm(upper, rho, n):
    """max_{gamma in Q'} ||gamma||^2 (the constant of Theorem 2)."""
    ub = np.sort(np.broadcast_to(np.asarray(upper, dtype=float), (n,)))[::-1]
    before = np.cumsum(ub) - ub
    take = np.clip(rho - before, 0.0, ub) if np.isfinite(rho) else ub
    return float(take @ take)


def _knapsack(c, upper, rho):
    """max_{gamma in Q'} gamma'c (continuous knapsack: the inner maximum of (11))."""
    ub = np.broadcast_to(np.asarray(upper, dtype=float), c.shape)
    pos = c > 0
    cp, up = c[pos], ub[pos]
    if not np.isfinite(rho) or up.sum() <= rho:
        return float(cp @ up)
    order = np.argsort(-cp, kind="stable")
    cs, us = cp[order], up[order]
    take = np.clip(rho - (np.cumsum(us) - us), 0.0, us)
    return float(take @ cs)


# --- Lemma 3: composite gradient mapping = group soft-thresholding ---

def group_soft_threshold(norms, c, *, method="sort"):
    r"""Shrinkage of Lemma 3: :math:`\min_f\frac12\|f-\hat f\|^2+\frac c2(\sum_j\|f_j\|)^2`.

    The minimiser keeps each direction, :math:`f_j=[1-cS/a_j]_+\hat f_j` with
    :math:`a_j=\|\hat f_j\|`, where :math:`S=\sum_j\|f_j\|` is the unique root of
    :math:`S=\sum_j[a_j-cS]_+` (the paper's "t").

    Parameters
    ----------
    norms : array-like of shape (m,)
        Group norms :math:`a_j\ge0`.
    c : float
        Threshold scale :math:`c=\tau\lambda\ge0`.
    method : {"sort", "bisect"}, default="sort"
        ``"sort"``: closed form; with :math:`a_{(1)}\ge a_{(2)}\ge\dots`,
        :math:`S_k=\sum_{i\le k}a_{(i)}/(1+kc)`, take the largest :math:`k` with
        :math:`a_{(k)}>cS_k`. ``"bisect"``: bisection on :math:`[0,\sum_ja_j]` (reference).

    Returns
    -------
    shrink : ndarray of shape (m,)
        Factors :math:`[1-cS/a_j]_+` (0 where :math:`a_j=0`); :math:`\|f_j\|=` ``shrink * a``.
    S : float
        :math:`N(f)=\sum_j\|f_j\|`.

    Examples
    --------
    >>> from mklcore.stpmkl import group_soft_threshold
    >>> shrink, S = group_soft_threshold([3.0, 1.0, 0.1], 0.5)
    >>> shrink.round(3).tolist(), round(S, 4)
    ([0.667, 0.0, 0.0], 2.0)
    """
    if method not in ("sort", "bisect"):
        raise ValueError(f"The 'method' parameter of group_soft_threshold must be one of "
                         f"{{'sort', 'bisect'}}. Got {method!r} instead.")
    a = np.asarray(norms, dtype=float)
    if c <= 0:
        return (a > 0).astype(float), float(a.sum())
    if method == "sort":
        a_sorted = np.sort(a)[::-1]
        k = np.arange(1, a.size + 1)
        Sk = np.cumsum(a_sorted) / (1.0 + k * c)
        ok = np.flatnonzero(a_sorted > c * Sk)
        S = float(Sk[ok[-1]]) if ok.size else 0.0
    else:  # bisection on [0, sum a], the reference
        S = _bisect(lambda t: t - np.maximum(a - c * t, 0.0).sum() < 0, float(a.sum()), 200,
                    1e-15)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(a > 0, np.maximum(0.0, 1.0 - c * S / np.where(a > 0, a, 1.0)), 0.0)
    return shrink, S


# --- kernel operators: dense stack or low-rank factors ---

class KernelFactors:
    r"""Low-rank factors :math:`K_j\approx R_jR_j^\top` of a kernel stack (pivoted Cholesky).

    Built by :func:`factorize_kernels`; pass it as ``factors=`` to :func:`stpmkl_solve` /
    :func:`mipmkl_solve` to reuse one factorisation across a hyper-parameter grid.

    Parameters
    ----------
    Rt : ndarray of shape (sum_j r_j, n)
        Transposed factors stacked kernel after kernel (kernel j: rows
        ``Rt[offsets[j]:offsets[j + 1]]``).
    ranks : array-like of shape (n_kernels,)
        Number of columns :math:`r_j` of each factor.
    pivots : list of ndarray
        Pivot rows of each factor; ``R_j[pivots[j]]`` is lower triangular.
    rank_tol : float
        Relative trace of the neglected residual.

    Attributes
    ----------
    offsets : ndarray of shape (n_kernels + 1,)
        Row offsets of each kernel in ``Rt`` (the parameters are kept as attributes too).
    """

    def __init__(self, Rt, ranks, pivots, rank_tol):
        self.Rt = np.ascontiguousarray(Rt)
        self.ranks = np.asarray(ranks, dtype=int)
        self.offsets = np.concatenate(([0], np.cumsum(self.ranks)))
        self.pivots = pivots
        self.rank_tol = rank_tol
        self.owner = np.repeat(np.arange(self.ranks.size), self.ranks)

    @property
    def n_kernels(self):
        """Number of kernels."""
        return self.ranks.size

    @property
    def n_samples(self):
        """Number of training points."""
        return self.Rt.shape[1]

    def __repr__(self):
        return (f"KernelFactors(n_kernels={self.n_kernels}, n_samples={self.n_samples}, "
                f"total_rank={int(self.ranks.sum())}, rank_tol={self.rank_tol:g})")


@on_one_blas_thread  # the factors must not depend on the thread count
def factorize_kernels(K, *, rank_tol=1e-10, dtype=np.float64):
    r"""Low-rank factors :math:`K_j\approx R_jR_j^\top` by pivoted Cholesky.

    Diagonal pivoting stops when the trace of the residual :math:`K_j-R_jR_j^\top` falls
    below ``rank_tol * trace(K_j)``; the residual is PSD, so every quadratic form and every
    product :math:`K_jv` is accurate to that relative level.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n) or iterable of ndarray of shape (n, n)
        PSD training kernels; an iterable (e.g. a generator computing one kernel at a time)
        avoids holding the whole stack in memory.
    rank_tol : float, default=1e-10
        Relative trace of the neglected residual, in (0, 1).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Storage type of the factors (float32: products accurate to ~1e-7 relative).

    Returns
    -------
    factors : KernelFactors

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.stpmkl import factorize_kernels
    >>> x = np.linspace(0, 1, 50)
    >>> K = np.stack([np.exp(-(x[:, None] - x[None, :]) ** 2 / 2), np.outer(x, x)])
    >>> factorize_kernels(K).ranks.tolist()
    [7, 1]
    """
    validate_params("factorize_kernels", {"rank_tol": [Interval("real", 0, 1, closed="neither")]},
                    {"rank_tol": rank_tol})
    if np.dtype(dtype) not in (np.float64, np.float32):
        raise ValueError(f"The 'dtype' parameter of factorize_kernels must be float64 or "
                         f"float32. Got {dtype!r} instead.")
    if isinstance(K, np.ndarray) and K.ndim == 2:
        K = K[None]
    kernels = iter(K)              # a stack, or any iterable of (n, n) matrices
    blocks, ranks, pivots = [], [], []
    n = None
    for Kj in kernels:  # preprocessing only: one pivoted Cholesky per kernel
        Kj = np.asarray(Kj, dtype=float)
        if Kj.ndim == 3 and Kj.shape[0] == 1:
            Kj = Kj[0]
        if Kj.ndim != 2 or Kj.shape[0] != Kj.shape[1] or (n is not None and Kj.shape[0] != n):
            raise ValueError(f"factorize_kernels: kernel {len(ranks)} has shape {Kj.shape}; "
                             f"all kernels must be square and of the same size.")
        n = Kj.shape[0]
        d = np.array(np.diagonal(Kj), dtype=float)
        stop = rank_tol * max(float(d.sum()), _TINY)
        Lt = np.zeros((min(n, 32), n))      # rows = columns of R_j (contiguous)
        piv = []
        r = 0
        while r < n and d.sum() > stop:
            p = int(np.argmax(d))
            if d[p] <= 0:
                break
            if r == Lt.shape[0]:
                Lt = np.vstack([Lt, np.zeros((min(n, 2 * r) - r, n))])
            col = (Kj[:, p] - Lt[:r, p] @ Lt[:r]) / np.sqrt(d[p])
            col[piv] = 0.0          # exact zeros above the diagonal of R_j[pivots]
            Lt[r] = col
            d -= col * col
            d[p] = 0.0
            np.maximum(d, 0.0, out=d)
            piv.append(p)
            r += 1
        blocks.append(Lt[:r])
        ranks.append(r)
        pivots.append(np.asarray(piv, dtype=int))
    if n is None:
        raise ValueError("The kernel list is empty: give at least one kernel.")
    Rt = np.vstack(blocks) if sum(ranks) else np.zeros((0, n))
    return KernelFactors(Rt.astype(dtype), ranks, pivots, rank_tol)


class _DensePrimal:
    """A batch of G primal iterates ``A`` (G, m, n), ``W = K_j A_j`` (``image``: the one pass)."""

    def __init__(self, K, G, A0=None):
        self.K = K
        self.m, self.n = K.shape[0], K.shape[1]
        self._flat = K.reshape(self.m * self.n, self.n)
        if A0 is None:
            self.A = np.zeros((G, self.m, self.n))
            self.W = np.zeros((G, self.m, self.n))
        else:
            self.A = np.array(np.broadcast_to(A0, (G, self.m, self.n)), dtype=float)
            self.W = np.stack([np.matmul(K, a.astype(K.dtype)[:, :, None])[:, :, 0]
                               for a in self.A]).astype(float)
        self.A_bar = np.zeros_like(self.A)
        self.W_bar = np.zeros_like(self.W)

    def image(self, V):
        out = self._flat @ V.T.astype(self.K.dtype, copy=False)        # (m n, G)
        return np.ascontiguousarray(out.reshape(self.m, self.n, -1).transpose(2, 0, 1),
                                    dtype=float)

    def quad(self, img, V):
        return np.einsum("gjn,gn->gj", img, V)

    def add(self, V, img, c):
        self.A += c[:, None, None] * V[:, None, :]
        self.W += c[:, None, None] * img

    def scale(self, s):
        self.A *= s[:, :, None]
        self.W *= s[:, :, None]

    def norms(self):
        return np.sqrt(np.maximum(np.einsum("gjn,gjn->gj", self.A, self.W), 0.0))

    def fX(self):
        return self.W.sum(axis=1)

    def average(self, w):
        w = w[:, None, None]
        self.A_bar += w * (self.A - self.A_bar)
        self.W_bar += w * (self.W - self.W_bar)

    def restart(self, rows):
        self.A[rows] = self.A_bar[rows]
        self.W[rows] = self.W_bar[rows]

    def bar(self):
        """Norms (G, m) and f(X) (G, n) of the averaged iterates."""
        norms = np.sqrt(np.maximum(np.einsum("gjn,gjn->gj", self.A_bar, self.W_bar), 0.0))
        return norms, self.W_bar.sum(axis=1)

    def snapshot(self, g):
        return self.A_bar[g].copy()

    def coef(self, snap):
        return snap.T.copy()

    def sum_kernel(self):
        return self.K.sum(axis=0, dtype=float)


class _FactorPrimal:
    """G primal iterates in factor space, ``w_j = R_j^T A_j``, so ``K_j A_j = R_j w_j``."""

    def __init__(self, factors, G, A0=None):
        self.F = factors
        self.Rt = factors.Rt
        self.m, self.n = factors.n_kernels, factors.n_samples
        self.owner = factors.owner
        nz = factors.ranks > 0
        self._nz = np.flatnonzero(nz)
        self._starts = factors.offsets[:-1][nz]
        if A0 is None:
            self.w = np.zeros((G, self.Rt.shape[0]))
        else:
            A0 = np.asarray(A0, dtype=float)                 # (m, n)
            w0 = np.einsum("rn,rn->r", self.Rt, A0[self.owner])
            self.w = np.array(np.broadcast_to(w0, (G, w0.size)))
        self._fX = None
        self.w_bar = np.zeros_like(self.w)
        self.fX_bar = np.zeros((G, self.n))

    def image(self, V):
        return np.ascontiguousarray((self.Rt @ V.T.astype(self.Rt.dtype, copy=False)).T,
                                    dtype=float)

    def _group_sq(self, Z):
        out = np.zeros((Z.shape[0], self.m))
        if self._nz.size:
            out[:, self._nz] = np.add.reduceat(Z * Z, self._starts, axis=1)
        return out

    def quad(self, img, V):
        return self._group_sq(img)

    def add(self, V, img, c):
        self.w += c[:, None] * img
        self._fX = None

    def scale(self, s):
        self.w *= s[:, self.owner]
        self._fX = None

    def norms(self):
        return np.sqrt(self._group_sq(self.w))

    def fX(self):
        if self._fX is None:
            self._fX = np.asarray(self.w.astype(self.Rt.dtype, copy=False) @ self.Rt,
                                  dtype=float)
        return self._fX

    def average(self, w):
        w = w[:, None]
        self.w_bar += w * (self.w - self.w_bar)
        self.fX_bar += w * (self.fX() - self.fX_bar)

    def restart(self, rows):
        self.w[rows] = self.w_bar[rows]
        self._fX = None

    def bar(self):
        return np.sqrt(self._group_sq(self.w_bar)), self.fX_bar

    def snapshot(self, g):
        return self.w_bar[g].copy()

    def coef(self, snap):
        from scipy.linalg import solve_triangular

        A = np.zeros((self.n, self.m))
        if not np.all(np.isfinite(snap)):       # a diverged run (status 2)
            return np.full((self.n, self.m), np.nan)
        off = self.F.offsets
        for j in range(self.m):  # A_j[piv] = R_j[piv]^{-T} w_j gives K_j A_j = R_j w_j
            piv = self.F.pivots[j]
            if piv.size == 0:
                continue
            L11 = self.Rt[off[j]:off[j + 1], piv].T.astype(float)   # lower triangular
            A[piv, j] = solve_triangular(L11.T, snap[off[j]:off[j + 1]], lower=False)
        return A

    def sum_kernel(self):
        Rt = self.Rt.astype(float, copy=False)
        return Rt.T @ Rt


def _project_rows(Gh, U, rho):
    """Lemma 2 for each row of ``Gh`` (G, n): box [0, U] (broadcast), budgets ``rho`` (G,)."""
    U = np.broadcast_to(U, Gh.shape)
    X = np.clip(Gh, 0.0, U)
    for i in np.flatnonzero(np.isfinite(rho) & (X.sum(axis=1) > rho)):
        X[i] = _project_vec(Gh[i], U[i], rho[i])
    return X


def _project_vec(g, U, rho):
    """Lemma 2 for one vector ``g`` (n,), exact: the root of h(theta) = rho by breakpoints."""
    # h(theta) = sum_i clip(g_i - theta, 0, u_i) is piecewise linear in theta, with breakpoints
    # {g_i, g_i - u_i} and slope -(number of unsaturated active terms); interpolate its root
    x = np.clip(g, 0.0, U)
    if not (np.isfinite(rho) and x.sum() > rho):
        return x
    u = np.broadcast_to(U, g.shape)
    b = np.concatenate([g, g - u])
    s = np.concatenate([np.ones_like(g), -np.ones_like(g)])
    order = np.argsort(-b, kind="stable")
    bs = b[order]
    c = np.cumsum(s[order])
    h = np.zeros_like(bs)
    h[1:] = np.cumsum(c[:-1] * (bs[:-1] - bs[1:]))
    hit = h >= rho
    k = max(int(np.argmax(hit)) if hit.any() else bs.size - 1, 1)
    theta = max(bs[k - 1] - (rho - h[k - 1]) / max(c[k - 1], 1.0), 0.0)
    return np.clip(g - theta, 0.0, u)


def _shrink_rows(a, c):
    """Lemma 3 for each row of ``a`` (G, m) with thresholds ``c`` (G,): (shrink, S)."""
    G, m = a.shape
    srt = -np.sort(-a, axis=1)
    Sk = np.cumsum(srt, axis=1) / (1.0 + c[:, None] * np.arange(1, m + 1))
    ok = srt > c[:, None] * Sk
    last = m - 1 - np.argmax(ok[:, ::-1], axis=1)
    S = np.where(ok.any(axis=1), Sk[np.arange(G), last], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(a > 0, np.maximum(0.0, 1.0 - (c * S)[:, None] /
                                            np.where(a > 0, a, 1.0)), 0.0)
    return shrink, S


def _knapsack_rows(C, U, rho):
    r""":math:`\max_{\gamma\in Q'}\sum_i\gamma_ic_i` for each row (continuous knapsack)."""
    U = np.broadcast_to(U, C.shape)
    pos = C > 0
    Cp = np.where(pos, C, 0.0)
    Up = np.where(pos, U, 0.0)
    order = np.argsort(-Cp, axis=1, kind="stable")
    cs = np.take_along_axis(Cp, order, axis=1)
    us = np.take_along_axis(Up, order, axis=1)
    before = np.cumsum(us, axis=1) - us
    r = np.where(np.isfinite(rho), rho, np.inf)[:, None]
    take = np.clip(r - before, 0.0, us)
    return (take * cs).sum(axis=1)


def _lambda_max(primal):
    """lambda_max(sum_j K_j), slightly over-estimated (Lanczos for large n)."""
    n = primal.n
    if isinstance(primal, _FactorPrimal):
        Rt = primal.Rt.astype(float, copy=False)
        if n <= 300 or Rt.shape[0] <= 2:
            return float(np.linalg.eigvalsh(Rt.T @ Rt)[-1]) * (1.0 + 1e-8) if n <= 300 \
                else float(np.linalg.norm(Rt, 2) ** 2) * (1.0 + 1e-8)
        from scipy.sparse.linalg import LinearOperator

        op = LinearOperator((n, n), matvec=lambda v: Rt.T @ (Rt @ np.ravel(v)), dtype=float)
    else:
        op = primal.sum_kernel()
        if n <= 300:
            return float(np.linalg.eigvalsh(op)[-1]) * (1.0 + 1e-8)
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    try:
        lam = float(eigsh(op, k=1, which="LA", tol=1e-8, v0=np.ones(n),
                          return_eigenvectors=False)[0])
    except ArpackNoConvergence:  # pragma: no cover
        lam = float(np.linalg.eigvalsh(primal.sum_kernel())[-1])
    return lam * (1.0 + 1e-6)  # a Ritz value is a lower bound: keep tau <= 1/||M||


# --- objectives ---

def _certificate(y, lam, U, rho, norms, fX, quad):
    """Primal values (G,), max_j quad (G,), N (G,) of a batch."""
    n = y.size
    N = norms.sum(axis=1)
    primal = 0.5 * lam * N * N + _knapsack_rows((1.0 - y[None, :] * fX) / n, U, rho)
    qmax = np.maximum(quad.max(axis=1), 0.0) if quad.shape[1] else np.zeros(len(N))
    return primal, qmax, N


def _dual_value(gamma, qmax, lam):
    """D(gamma) of (11) from max_j quad."""
    n = gamma.shape[-1]
    return gamma.sum(axis=-1) / n - qmax / (2.0 * lam * n * n)


def stpmkl_objectives(K, y, coef, gamma, *, lam, rho=np.inf, upper=1.0):
    r"""Primal value, dual value and duality gap of the saddle problem (11) at :math:`(A,\gamma)`.

    .. math::
        P(f)=\max_{\gamma'\in Q'}L(f,\gamma')+\frac\lambda2N(f)^2,\qquad
        D(\gamma)=\frac1n\sum_i\gamma_i-\frac1{2\lambda n^2}\max_j(\gamma\circ y)^\top K_j
        (\gamma\circ y),

    (the conjugate of :math:`\frac\lambda2N(\cdot)^2` is :math:`\frac1{2\lambda}(\max_j
    \|g_j\|)^2`), :math:`\mathrm{gap}=P-D\ge0`, zero exactly at a saddle point of (11); the
    left-hand side of Theorem 2 at :math:`(\hat f_T,\hat\gamma_T)`.

    Parameters
    ----------
    K, y : ndarray of shape (n_kernels, n, n) and (n,)
        Training kernels and labels in {-1, +1}.
    coef : ndarray of shape (n, n_kernels)
        Coefficients :math:`A` (:math:`f_j=\sum_iA_{ij}\kappa_j(x_i,\cdot)`).
    gamma : ndarray of shape (n,)
        Dual point in :math:`Q'`.
    lam, rho, upper : float
        :math:`\lambda>0`, budget (default inf), box bound (default 1; or per example).

    Returns
    -------
    values : dict
        ``primal``, ``dual``, ``gap`` (absolute), ``rel_gap`` (gap / primal), ``norms``
        (:math:`\|f_j\|`), ``weights`` (:math:`u_j=\|f_j\|/N(f)`).
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    A = np.asarray(coef, dtype=float).T
    gamma = np.asarray(gamma, dtype=float)
    W = np.einsum("jik,jk->ji", K, A)
    norms = np.sqrt(np.maximum(np.einsum("jn,jn->j", A, W), 0.0))
    N = float(norms.sum())
    n = y.size
    primal = 0.5 * lam * N * N + _knapsack((1.0 - y * W.sum(axis=0)) / n, upper, rho)
    v = gamma * y
    qmax = float(max(np.einsum("i,jik,k->j", v, K, v).max(), 0.0))
    dual = float(gamma.sum()) / n - qmax / (2.0 * lam * n * n)
    return {"primal": primal, "dual": dual, "gap": primal - dual,
            "rel_gap": (primal - dual) / max(abs(primal), _TINY), "norms": norms,
            "weights": norms / N if N > 0 else np.zeros_like(norms)}


def _bound_value(qmax, lam, n, step, t, g2, N0=0.0, g0=0.0):
    """Theorem-2 bound (vectorised over a batch); warm starts add ||f_0|| and ||gamma_0||."""
    n_star = np.sqrt(qmax) / (n * lam)
    return ((n_star + N0) ** 2 + (np.sqrt(g2) + g0) ** 2) / (2.0 * step * t)


def theorem2_bound(K, y, gamma, *, lam, rho=np.inf, upper=1.0, step, n_iter):
    r"""Right-hand side of Theorem 2 for AMP started at :math:`f_0=0,\gamma_0=0`.

    .. math::
        \mathrm{gap}(\hat f_T,\hat\gamma_T)\le\frac{\|f^*\|^2+\max_{\gamma\in Q'}\|\gamma\|^2}
        {2\tau T},\qquad \|f^*\|\le N(f^*)=\frac{\max_j\|g_j(\hat\gamma_T)\|}{\lambda},\quad
        \|g_j\|^2=\frac{(\hat\gamma\circ y)^\top K_j(\hat\gamma\circ y)}{n^2},

    with :math:`f^*=\arg\min_fF(f,\hat\gamma_T)` and
    :math:`\max\|\gamma\|^2=u^2\lfloor\rho/u\rfloor+(\rho-u\lfloor\rho/u\rfloor)^2`
    (capped at :math:`nu^2`). Valid for :math:`\tau\le1/\|M\|`. The same quantity is
    stored in ``result.history["bound"]`` at every iteration.

    Parameters
    ----------
    K, y : ndarray of shape (n_kernels, n, n) and (n,)
        Training kernels and labels in {-1, +1}.
    gamma : ndarray of shape (n,)
        The averaged dual :math:`\hat\gamma_T` (``result.gamma``).
    lam, rho, upper : float
        :math:`\lambda>0`, budget (default inf), box bound (default 1).
    step, n_iter : float and int
        Step :math:`\tau` (``result.step``) and :math:`T`.

    Returns
    -------
    bound : float
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    v = np.asarray(gamma, dtype=float) * y
    qmax = float(max(np.einsum("i,jik,k->j", v, K, v).max(), 0.0))
    return float(_bound_value(qmax, lam, y.size, step, n_iter,
                              _max_sq_norm(upper, rho, y.size)))


# --- decision function ---

@on_one_blas_thread  # the same bits for every thread count, as the fit
def stpmkl_decision(result, K_test):
    r"""Decision values :math:`f(x)=\sum_j\sum_iA_{ij}\kappa_j(x_i,x)` of a StPMKL/MiPMKL fit.

    The model has one coefficient vector per kernel (``result.coef`` of shape
    ``(n_samples, n_kernels)``, the paper's output :math:`\hat f_T`) and no bias; the rule
    :func:`mklcore.decision` uses for ``"stpmkl"`` and ``"mipmkl"`` results (the model rebuilt
    from ``weights`` and ``dual_coef`` equals it only at the saddle point).

    Parameters
    ----------
    result : MKLResult
        Result of :func:`stpmkl_solve` or :func:`mipmkl_solve` (uses ``result.coef``).
    K_test : ndarray of shape (n_kernels, n_test, n_train)
        Test kernels (rows: test points, columns: training points).

    Returns
    -------
    f : ndarray of shape (n_test,)
    """
    coef = np.asarray(result["coef"], dtype=float)
    K_test = np.asarray(K_test)
    if K_test.ndim != 3 or K_test.shape[0] != coef.shape[1] or K_test.shape[2] != coef.shape[0]:
        raise ValueError(f"K_test must have shape (n_kernels={coef.shape[1]}, n_test, "
                         f"n_train={coef.shape[0]}); got {K_test.shape}.")
    active = np.flatnonzero(np.any(coef != 0, axis=0))
    if active.size == 0:
        return np.zeros(K_test.shape[1])
    # one batched product over the active kernels, summed over kernels
    return np.einsum("jtk,kj->t", K_test[active], coef[:, active], optimize=True)


# --- AMP (Algorithm 1) and VI ---

def _prepare(K, y, check_input, owner, rank_tol, factors):
    """Validate inputs; return (K or None, y_pm, factors or None)."""
    if factors is not None and not isinstance(factors, KernelFactors):
        raise TypeError(f"{owner}: factors must come from factorize_kernels; got "
                        f"{type(factors).__name__}.")
    if K is None:
        if factors is None:
            raise ValueError(f"{owner}: give the kernels K, or factors=factorize_kernels(K).")
        y_pm, _ = check_binary_labels(y, owner)
        if y_pm.size != factors.n_samples:
            raise ValueError(f"K and y do not match: the factors are for "
                             f"{factors.n_samples} points but y has {y_pm.size} entries.")
        return None, y_pm, factors
    if check_input:
        K = check_kernel_stack(K, y)
    else:
        K = np.asarray(K)
        if K.ndim == 2:
            K = K[None]
        if K.dtype not in (np.float64, np.float32):
            K = K.astype(np.float64)
    y_pm, _ = check_binary_labels(y, owner)
    if factors is not None:
        if (factors.n_kernels, factors.n_samples) != (K.shape[0], K.shape[1]):
            raise ValueError(f"{owner}: factors are for {factors.n_kernels} kernels on "
                             f"{factors.n_samples} points but K has shape {K.shape}.")
    elif rank_tol is not None:
        factors = factorize_kernels(K, rank_tol=rank_tol)
    return (np.ascontiguousarray(K) if factors is None else K), y_pm, factors


def _make_primal(K, factors, G, A0=None):
    """The batch of primal iterates, dense or in factor space."""
    return _DensePrimal(K, G, A0) if factors is None else _FactorPrimal(factors, G, A0)


@on_one_blas_thread
def _saddle(K, factors, y, *, lam, upper, rho, solver, step, eta0, max_iter, tol, gap_mode,
            check_every, callback, verbose, warm_start, owner, warn=True, restart=False,
            hints=None):
    """AMP or VI (Notes of :func:`stpmkl_solve`) on G problems sharing the kernels: G results."""
    G = np.size(lam)
    monitors = [Monitor("stpmkl", tol=tol, max_iter=max_iter, callback=callback,
                        verbose=verbose, criterion_name=f"{gap_mode} duality gap",
                        label=f"{owner} ({solver})" if G == 1
                        else f"{owner} ({solver}, problem {g})",
                        advice="Increase max_iter or loosen tol (AMP's gap falls as 1/T).",
                        hint="" if hints is None else hints[g])
                for g in range(G)]
    n = y.size
    lam = np.asarray(lam, dtype=float)
    rho = np.asarray(rho, dtype=float)
    U = np.broadcast_to(np.asarray(upper, dtype=float), (G, n)) if np.ndim(upper) \
        else float(upper)
    A0 = None if warm_start is None else np.asarray(warm_start[0], dtype=float).T
    primal_it = _make_primal(K, factors, G, A0)
    # ||M|| of the bilinear part L(f, gamma) = <1/n + M f, gamma>, M f = -(y_i f(x_i) / n)_i
    op_norm = np.sqrt(max(_lambda_max(primal_it), _TINY)) / n
    tau = 1.0 / op_norm if step is None else float(step)        # Alg. 1: tau = 1/||M||
    tau_g = np.full(G, tau)
    eta0 = tau_g if eta0 is None else np.asarray(eta0, dtype=float)
    restart = bool(restart) and solver == "amp"
    g2 = np.array([_max_sq_norm(U if np.ndim(U) == 0 else U[g], rho[g], n) for g in range(G)])

    gamma = np.zeros((G, n))
    if warm_start is not None:
        gamma = _project_rows(np.broadcast_to(np.asarray(warm_start[1], float), (G, n)), U, rho)
    N0 = primal_it.norms().sum(axis=1)
    g0 = np.linalg.norm(gamma, axis=1)
    k = np.zeros(G)                          # iterations since the start or the last restart
    ref_gap = np.full(G, np.inf)             # gap at the last restart
    n_restarts = np.zeros(G, dtype=int)
    Y = y[None, :]
    fX = primal_it.fX()
    img_prev = primal_it.image(gamma * Y)    # VI: image of gamma_{t-1} * y

    g_bar = np.zeros((G, n))
    img_bar = np.zeros_like(img_prev)        # image of g_bar * y (linear in g_bar)
    done = np.zeros(G, dtype=bool)
    final = [None] * G

    def freeze(g, vals):
        """Keep problem g's final averaged pair (its monitor stopped)."""
        done[g] = True
        final[g] = dict(snap=primal_it.snapshot(g), gamma=g_bar[g].copy(), **{
            k: (v[g].copy() if isinstance(v, np.ndarray) and v.ndim > 1 else v[g])
            for k, v in vals.items()})

    # a diverging run (VI with a too large eta0) overflows: it is detected and frozen below
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, max_iter + 1):
            if solver == "amp":
                # Alg. 1 step 4: dual extrapolation at f_{t-1} (Lemma 2 projection)
                beta = _project_rows(gamma + tau_g[:, None] * (1.0 - Y * fX) / n, U, rho)
                V = beta * Y
                img = primal_it.image(V)                     # K_j (beta*y): the one pass
                # step 5: gradient step on f at beta (coefficients + tau*beta*y/n for every
                # kernel), then the composite mapping of Lemma 3 (group soft-thresholding)
                primal_it.add(V, img, tau_g / n)
                shrink, _ = _shrink_rows(primal_it.norms(), tau_g * lam)
                primal_it.scale(shrink)
                fX = primal_it.fX()
                # step 6: dual correction at f_t
                gamma = _project_rows(gamma + tau_g[:, None] * (1.0 - Y * fX) / n, U, rho)
                g_new, img_new = beta, img                   # averages use the beta_t
            else:
                # VI (Section 4, Nemirovski 1994): simultaneous (sub)gradient descent-ascent
                # with step eta0/sqrt(t)
                s = eta0 / np.sqrt(t)
                cur = primal_it.norms()
                N = cur.sum(axis=1, keepdims=True)
                with np.errstate(divide="ignore", invalid="ignore"):
                    fac = np.where(cur > 0, 1.0 - (s * lam)[:, None] * N
                                   / np.where(cur > 0, cur, 1.0), 1.0)
                primal_it.scale(fac)                         # subgradient of (lam/2) N(f)^2
                primal_it.add(gamma * Y, img_prev, s / n)    # gradient of L at gamma_{t-1}
                gamma = _project_rows(gamma + s[:, None] * (1.0 - Y * fX) / n, U, rho)
                fX = primal_it.fX()
                img_prev = primal_it.image(gamma * Y)        # the one pass per iteration
                g_new, img_new = gamma, img_prev
            # Alg. 1 step 7: running averages (primal iterates and extrapolated duals)
            k += 1
            w = 1.0 / k
            primal_it.average(w)
            g_bar += w[:, None] * (g_new - g_bar)
            img_bar += w[:, None, None] * (img_new - img_bar) if img_bar.ndim == 3 \
                else w[:, None] * (img_new - img_bar)
            # step 8: exact certificate of the averaged pairs, O(mn) (O(sum r) in factor space)
            norms, fX_bar = primal_it.bar()
            primal, qmax, N_bar = _certificate(y, lam, U, rho, norms, fX_bar,
                                               primal_it.quad(img_bar, g_bar * Y))
            dual = _dual_value(g_bar, qmax, lam)
            abs_gap = primal - dual
            rel_gap = abs_gap / np.maximum(np.abs(primal), _TINY)
            bound = _bound_value(qmax, lam, n, tau_g, k, g2, N0, g0) if solver == "amp" \
                else np.full(G, np.nan)
            with np.errstate(divide="ignore", invalid="ignore"):
                weights = np.where(N_bar[:, None] > 0, norms / N_bar[:, None], 0.0)
            vals = dict(primal=primal, dual=dual, abs_gap=abs_gap, rel_gap=rel_gap, norms=norms,
                        weights=weights, fX=fX_bar, qmax=qmax, bound=bound)
            crit = rel_gap if gap_mode == "relative" else abs_gap
            finite = np.isfinite(primal) & np.isfinite(dual)
            for g in np.flatnonzero(~done):
                stop = monitors[g].record(
                    objective=primal[g], gap=rel_gap[g], weights=weights[g], criterion=crit[g],
                    ready=t % check_every == 0, dual_objective=dual[g], abs_gap=abs_gap[g],
                    bound=bound[g], snapshot={"dual_objective": dual[g], "abs_gap": abs_gap[g]})
                if not finite[g]:   # a diverging run (VI with a too large eta0)
                    monitors[g].fail("non-finite objective: lower the step")
                    stop = True
                if stop:
                    freeze(g, vals)
            if done.all():
                break
            if restart:
                # restart the averages at the averaged pair once its gap has halved (at least
                # 8 iterations into the epoch), or after a quarter of all iterations so far
                ref_gap = np.where(np.isinf(ref_gap), abs_gap, ref_gap)
                rows = np.flatnonzero(~done & (k >= 8) & ((abs_gap <= 0.5 * ref_gap)
                                                         | (k >= 0.25 * t)))
                if rows.size:
                    primal_it.restart(rows)
                    gamma[rows] = g_bar[rows]
                    fX = primal_it.fX()
                    ref_gap[rows] = abs_gap[rows]
                    N0[rows] = N_bar[rows]
                    g0[rows] = np.linalg.norm(g_bar[rows], axis=1)
                    k[rows] = 0
                    n_restarts[rows] += 1

    results = []
    for g, (monitor, f) in enumerate(zip(monitors, final)):
        results.append(monitor.finish(
            weights=f["weights"], dual_coef=f["gamma"] * y / (n * lam[g]), intercept=0.0,
            objective=f["primal"], gap=f["rel_gap"], warn=warn, stacklevel=6,
            solver=solver, coef=primal_it.coef(f["snap"]), gamma=f["gamma"],
            dual_objective=float(f["dual"]), abs_gap=float(f["abs_gap"]),
            kernel_norms=f["norms"], decision_train=f["fX"],
            bound=float(f["bound"]), step=tau, n_restarts=int(n_restarts[g]),
            eta0=float(eta0[g]) if solver == "vi" else np.nan, op_norm=op_norm,
            lam=float(lam[g]), rho=float(rho[g]),
            upper=float(U) if np.ndim(U) == 0 else np.array(U[g]),
            total_rank=None if factors is None else int(factors.ranks.sum())))
    return results


# --- exact solver: wrapper MKL on the dual of (11) ---

def _stack_ops(K, factors):
    """(combine(theta) -> n x n matrix sum_j theta_j K_j, quads(v) -> (v' K_j v)_j)."""
    if factors is None:
        flat = K.reshape(K.shape[0], -1)

        def combine(theta):
            on = np.flatnonzero(theta)
            return (theta[on].astype(K.dtype) @ flat[on]).reshape(K.shape[1:]).astype(float)

        def quads(v):
            return np.einsum("jn,n->j", (K.reshape(-1, K.shape[2]) @ v.astype(K.dtype))
                             .reshape(K.shape[0], -1).astype(float), v)
    else:
        Rt = factors.Rt.astype(float, copy=False)
        nz, starts = np.flatnonzero(factors.ranks > 0), factors.offsets[:-1][factors.ranks > 0]

        def combine(theta):
            on = np.flatnonzero(theta[factors.owner])
            return Rt[on].T @ (theta[factors.owner][on, None] * Rt[on])

        def quads(v):
            out = np.zeros(factors.n_kernels)
            if nz.size:
                out[nz] = np.add.reduceat((Rt @ v) ** 2, starts)
            return out
    return combine, quads


def _top_eig(M):
    """Largest eigenvalue of a symmetric PSD matrix, slightly over-estimated."""
    if M.shape[0] <= 600:
        return float(np.linalg.eigvalsh(M)[-1]) * (1.0 + 1e-8)
    from scipy.sparse.linalg import eigsh

    return float(eigsh(M, k=1, which="LA", tol=1e-8, v0=np.ones(M.shape[0]),
                       return_eigenvectors=False)[0]) * (1.0 + 1e-6)


def _box_budget_qp(Kt, y, c, U, rho, gamma, rtol, max_iter):
    """max_{gamma in Q'} D_theta(gamma) by FISTA with gradient restarts: ``(gamma, n_iter)``."""
    # stops when the Frank-Wolfe gap, a bound on D* - D(gamma), is <= rtol |D| (or round-off)
    n = y.size
    rho_a = np.array([rho])
    step = c / max(_top_eig(Kt), _TINY)
    gy, w, d1, d2 = np.empty(n), np.empty(n), np.empty(n), np.empty(n)  # work vectors

    def grad(g):                      # gradient of D_theta, 1/n - y (K_theta (g y)) / c, in w
        np.multiply(g, y, out=gy)
        np.matmul(Kt, gy, out=w)
        np.multiply(y, w, out=w)
        np.divide(w, c, out=w)
        return np.subtract(1.0 / n, w, out=w)

    x = gamma.copy()
    z, t_k = x.copy(), 1.0
    it = 0
    while it < max_iter:
        it += 1
        x_new = _project_vec(np.add(z, np.multiply(step, grad(z), out=w), out=w), U, rho)
        np.subtract(z, x_new, out=d1)
        np.subtract(x_new, x, out=d2)
        if d1 @ d2 > 0:                             # restart the momentum
            z, t_k = x_new.copy(), 1.0
        else:                                       # z <- x_new + (t_k - 1) / t_next (x_new - x)
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t_k * t_k))
            np.add(x_new, np.multiply((t_k - 1.0) / t_next, d2, out=z), out=z)
            t_k = t_next
        x = x_new
        if it % 10 == 0 or it == max_iter:
            g = grad(x)
            value = x.sum() / n - (x.sum() / n - g @ x) / 2.0   # D_theta(x)
            fw = _knapsack_rows(g[None], U, rho_a)[0] - g @ x
            floor = _FW_ROUNDOFF * float(np.abs(g) @ np.broadcast_to(U, g.shape))
            if fw <= max(rtol * abs(value), floor, _TINY):
                break
    return x, it


def _cut_master(L, S):
    """SILP master in its dual form: cut weights mu, kernel weights theta, value eta."""
    # max_{mu in simplex, s} sum_r mu_r L_r - s  s.t.  sum_r mu_r S_rj <= s (j = 1..m): the LP
    # dual of min_{theta in simplex} max_r (L_r - theta'S_r); theta are its multipliers
    R, m = S.shape
    c = np.concatenate([-L, [1.0]])
    A_ub = np.hstack([S.T, -np.ones((m, 1))])
    A_eq = np.concatenate([np.ones(R), [0.0]])[None]
    res = highs_lp(c, A_ub, np.zeros(m), A_eq, np.ones(1), np.append(np.zeros(R), -np.inf),
                   np.full(R + 1, np.inf))
    if not res["success"] or res["x"] is None:
        raise NumericalFailure(f"master LP failed: {res['message']}")
    mu = np.maximum(res["x"][:R], 0.0)
    theta = np.maximum(-res["ineqlin_marginals"], 0.0)
    if theta.sum() <= 0:  # pragma: no cover - degenerate LP
        theta = np.ones(m)
    return mu / mu.sum(), theta / theta.sum(), float(-res["fun"])


def _better_dual(best, gamma, quad, c):
    """``best`` or, if its dual value is higher, ``dict(dual=D(gamma), gamma=gamma)``."""
    dual = gamma.sum() / gamma.size - quad.max() / (2.0 * c)
    return dict(dual=dual, gamma=gamma) if dual > best["dual"] else best


@on_one_blas_thread
def _exact(K, factors, y, *, lam, upper, rho, max_iter, tol, gap_mode, check_every, callback,
           verbose, warm_start, owner, warn=True, warm_cuts=None, chain=False, hints=None):
    """The ``"exact"`` solver (Notes of :func:`stpmkl_solve`) for each of G problems: G results."""
    combine, quads = _stack_ops(K, factors)
    n = y.size
    G = np.size(lam)
    m = K.shape[0] if factors is None else factors.n_kernels
    results = []
    for g in range(G):
        lam_g, rho_g = float(lam[g]), float(rho[g])
        U = np.asarray(upper, dtype=float) if np.ndim(upper) == 0 \
            else np.asarray(upper, dtype=float)[g]
        c = lam_g * n * n
        monitor = Monitor("stpmkl", tol=tol, max_iter=max_iter, callback=callback,
                          verbose=verbose, criterion_name=f"{gap_mode} duality gap",
                          label=f"{owner} (exact)" if G == 1
                          else f"{owner} (exact, problem {g})",
                          advice="Increase max_iter or loosen tol.",
                          hint="" if hints is None else hints[g])
        # lam or rho at round-off (see _scale_hints): the inner accuracy is out of reach
        tiny = hints is not None and getattr(hints[g], "tiny", False)
        inner_max = _INNER_MAX_ITER_DEGENERATE if tiny else _INNER_MAX_ITER
        theta = np.full(m, 1.0 / m)
        gamma = np.zeros(n)
        if warm_start is not None:
            norms0 = _make_primal(K, factors, 1,
                                  np.asarray(warm_start[0], dtype=float).T).norms()[0]
            if norms0.sum() > 0:
                theta = norms0 / norms0.sum()
            gamma = _project_rows(np.asarray(warm_start[1], dtype=float)[None], U,
                                  np.array([rho_g]))[0]
        L_cuts, S_cuts, g_cuts = [], [], []
        best_p = dict(primal=np.inf)
        best_d = dict(dual=-np.inf)
        n_inner, lower, agg, mu = 0, -np.inf, None, None
        start = results[-1]["cut_points"] if chain and results else warm_cuts
        if start is not None and len(start):
            P = _project_rows(np.asarray(start, dtype=float), U, np.full(len(start), rho_g))
            for point in P:
                q = np.maximum(quads(point * y), 0.0)
                best_d = _better_dual(best_d, point, q, c)
                L_cuts.append(point.sum() / n)
                S_cuts.append(q / (2.0 * c))
                g_cuts.append(point)
            try:
                mu, theta, lower = _cut_master(np.array(L_cuts), np.array(S_cuts))
            except NumericalFailure as exc:  # pragma: no cover
                monitor.fail(str(exc))
            else:
                gamma = mu @ np.array(g_cuts)
                agg = (gamma * y, np.maximum(quads(gamma * y), 0.0))
                best_d = _better_dual(best_d, gamma, agg[1], c)
        Kt = combine(theta)
        for t in range(1, max_iter + 1):
            # inner accuracy: a tenth of the current relative gap (between 1e-7 and 1e-3)
            rtol = float(np.clip(0.1 * rel_gap, 1e-7, 1e-3)) if t > 1 else 1e-3
            gamma, its = _box_budget_qp(Kt, y, c, U, rho_g, gamma, rtol, inner_max)
            n_inner += its
            v = gamma * y
            q = np.maximum(quads(v), 0.0)
            candidates = [(v, q)] if agg is None else [(v, q), agg]
            for v_c, q_c in candidates:
                # the primal point A_{:,j} = theta_j v / (lam n): N(f), f(X) in closed form
                fX = Kt @ v_c / (lam_g * n)
                norms = theta * np.sqrt(q_c) / (lam_g * n)
                N = norms.sum()
                primal = 0.5 * lam_g * N * N + _knapsack_rows(((1.0 - y * fX) / n)[None], U,
                                                              np.array([rho_g]))[0]
                if primal < best_p["primal"]:
                    best_p = dict(primal=primal, theta=theta.copy(), v=v_c.copy(),
                                  norms=norms, fX=fX, Kt=Kt)
            # dual points: gamma_t, then the aggregate of the cuts with the master's weights
            best_d = _better_dual(best_d, gamma, q, c)
            L_cuts.append(gamma.sum() / n)
            S_cuts.append(q / (2.0 * c))
            g_cuts.append(gamma)
            try:
                mu, theta, lower = _cut_master(np.array(L_cuts), np.array(S_cuts))
            except NumericalFailure as exc:  # pragma: no cover
                monitor.fail(str(exc))
            else:
                if lower > best_d["dual"]:      # else the aggregate cannot be better
                    point = mu @ np.array(g_cuts)
                    agg = (point * y, np.maximum(quads(point * y), 0.0))
                    best_d = _better_dual(best_d, point, agg[1], c)
            abs_gap = best_p["primal"] - best_d["dual"]
            rel_gap = abs_gap / max(abs(best_p["primal"]), _TINY)
            Nb = best_p["norms"].sum()
            weights = best_p["norms"] / Nb if Nb > 0 else np.zeros(m)
            stop = monitor.record(
                objective=best_p["primal"], gap=rel_gap, weights=weights,
                criterion=rel_gap if gap_mode == "relative" else abs_gap,
                ready=t % check_every == 0, dual_objective=best_d["dual"], abs_gap=abs_gap,
                bound=np.nan, snapshot={"dual_objective": best_d["dual"], "abs_gap": abs_gap})
            if not (np.isfinite(primal) and np.isfinite(best_d["dual"])):
                monitor.fail("non-finite objective")
            elif rel_gap < -_NEGATIVE_GAP:  # a dual value above the primal: round-off
                monitor.fail(f"negative duality gap {rel_gap:.1e}: the primal and dual values "
                             f"are round-off")
            if stop or monitor.stopped:
                break
            # in-out stabilisation: query half-way between the master's theta and the
            # weights of the best primal point (the master's vertices alone oscillate)
            # (K_theta is linear in theta: only the master's sparse theta is combined anew)
            Kt = combine(0.5 * theta) + 0.5 * best_p["Kt"]
            theta = 0.5 * theta + 0.5 * best_p["theta"]
        bp, bd = best_p, best_d
        coef = np.outer(bp["v"], bp["theta"]) / (lam_g * n)
        results.append(monitor.finish(
            weights=weights, dual_coef=bd["gamma"] * y / (n * lam_g), intercept=0.0,
            objective=bp["primal"], gap=rel_gap, warn=warn, stacklevel=6, solver="exact",
            coef=coef, gamma=bd["gamma"], dual_objective=float(bd["dual"]),
            abs_gap=float(abs_gap), kernel_norms=bp["norms"], decision_train=bp["fX"],
            bound=np.nan, step=np.nan, n_restarts=0, eta0=np.nan, op_norm=np.nan,
            lam=lam_g, rho=rho_g, upper=float(U) if np.ndim(U) == 0 else np.array(U),
            total_rank=None if factors is None else int(factors.ranks.sum()),
            n_inner_iter=int(n_inner), lower_bound=float(lower), n_cuts=len(L_cuts),
            cut_points=np.array(g_cuts)[mu > 0] if mu is not None
            else np.array(g_cuts[-1:])))
    return results


_STPMKL_CONSTRAINTS = {
    "noise_level": [Interval("real", 0, 0.5, closed="left")],
    "lam": [Interval("real", 0, None, closed="neither")],
    "rho": [Interval("real", 0, None, closed="neither"), None],
    "delta": [Interval("real", 0, 1, closed="neither")],
    "upper": [Interval("real", 0, None, closed="neither")],
    "solver": [Options("exact", "amp", "vi")],
    "max_iter": [Interval("int", 1, None)],
    "tol": [Interval("real", 0, None, closed="left"), None],
    "gap": [Options("relative", "absolute")],
    "step": [Interval("real", 0, None, closed="neither"), None],
    "eta0": [Interval("real", 0, None, closed="neither"), None],
    "check_every": [Interval("int", 1, None)],
    "callback": [callable, None],
    "verbose": [Interval("int", 0, None), bool],
    "rank_tol": [Interval("real", 0, 1, closed="neither"), None],
    "restart": [bool],
    "chain": [bool],
    "check_input": [bool],
    "warn": [bool],
}


@_fill_doc
def stpmkl_solve(K, y, *, noise_level, lam, rho=None, solver="exact", max_iter=1000, tol=1e-2,
                 delta=0.1, upper=1.0, gap="relative", step=None, eta0=None, check_every=1,
                 callback=None, verbose=0, check_input=True, rank_tol=None, factors=None,
                 warm_start=None, restart=True, warm_cuts=None):
    r"""Solve StPMKL's saddle problem (11) of Yang et al. (2012).

    .. math::
        \min_f\max_{\gamma\in Q'}\ \frac1n\sum_i\gamma_i(1-y_if(x_i))+\frac\lambda2
        \Big(\sum_j\|f_j\|_{\mathcal H_j}\Big)^2,\quad
        Q'=\{\gamma\in[0,u]^n:\textstyle\sum_i\gamma_i\le\rho\}

    (the box :math:`[0,1+\eta]` of (11) rescaled to :math:`[0,u]` as in Section 4).

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples) or None
        Training Gram matrices (PSD); float32 stacks are used as they are (products then
        accumulate in float32). None when ``factors`` is given.
    y : array-like of shape (n_samples,)
        Binary labels (the larger label mapped to +1), possibly noisy.
    noise_level : float
        Noise level :math:`q\in[0,1/2)` of Assumption 1; only sets the default ``rho``.
    lam : float
        Regularisation :math:`\lambda>0` of the squared group norm.
    rho : float, default=None
        Budget :math:`\rho>0` on :math:`\sum_i\gamma_i`; ``None``: :func:`rho_from_theory`
        ``(n, noise_level, delta) * upper``; ``rho >= n*upper`` is bias-free l1-MKL.
    solver : {"exact", "amp", "vi"}, default="exact"
        ``"exact"``: cutting planes on the dual of (11), bias-free l1-MKL with one budget
        constraint (see Notes). ``"amp"``: the paper's accelerated mirror prox, Algorithm 1
        (O(1/T)). ``"vi"``: the descent-ascent baseline of Figure 1,
        step ``eta0/sqrt(t)`` (O(1/sqrt T)). All three report the same certificate.
    max_iter : int, default=1000
        Number of iterations :math:`T` at most (the paper's 1000; for ``"exact"``, outer
        iterations).
    tol : float or None, default=1e-2
        Stop when the duality gap of the averaged pair (of the best primal and dual points
        for ``"exact"``; :func:`stpmkl_objectives`) is at most
        ``tol`` (the paper's 1e-2); ``None``: run ``max_iter`` iterations (status 1, no
        warning).
    delta : float, default=0.1
        Confidence level of Proposition 1 / Lemma 1, for the default ``rho``.
    upper : float, default=1.0
        Box bound :math:`u` of :math:`\gamma`.
    gap : {"relative", "absolute"}, default="relative"
        Stopping criterion: :math:`(P-D)/P` or :math:`P-D`.
    step : float, default=None
        AMP step :math:`\tau`; ``None``: :math:`1/\|M\|=n/\sqrt{\lambda_{\max}(\sum_jK_j)}`,
        the largest step of Theorem 2.
    eta0 : float, default=None
        VI initial step; ``None``: :math:`\tau` (the paper tunes it).
    check_every : int, default=1
        Test the stopping rule every ``check_every`` iterations (the certificate is recorded
        at every iteration).
    callback : callable, default=None
        ``callback(intermediate_result)`` after each iteration (keys ``n_iter``,
        ``objective``, ``gap``, ``criterion``, ``weights``, ``time``, ``method``,
        ``dual_objective``, ``abs_gap``); raising ``StopIteration`` stops with ``status=3``.
    verbose : int, default=0
        ``1``: a progress line every 10 iterations; ``>= 2``: every iteration.
    check_input : bool, default=True
        Validate ``K`` (shape, symmetry, PSD) and ``y``.
    rank_tol : float, default=None
        Replace each kernel by a pivoted-Cholesky factor with neglected relative trace
        ``rank_tol`` (:func:`factorize_kernels`): :math:`O(n\sum_jr_j)` per iteration, and
        all values refer to the factorised kernels. ``None``: the exact dense stack.
    factors : KernelFactors, default=None
        Precomputed :func:`factorize_kernels` ``(K)`` (overrides ``rank_tol``).
    warm_start : tuple of (ndarray of shape (n, n_kernels), ndarray of shape (n,)), default=None
        Start :math:`(A_0,\gamma_0)`; ``bound`` then adds :math:`N(f_0)` and
        :math:`\|\gamma_0\|` to the two radii of Theorem 2.
    restart : bool, default=True
        AMP only: restart the averaging at the current averaged pair :math:`(\hat f,\hat\gamma)`
        whenever its duality gap has halved since the last restart (and at least every
        quarter of the iterations done so far). Every epoch is Algorithm 1 warm-started at
        the restart point, so its Theorem-2 bound holds (``history["bound"]`` is the bound of
        the current epoch). ``False``: Algorithm 1 as in the paper, one average.
    warm_cuts : ndarray of shape (n_cuts, n_samples), default=None
        ``"exact"`` only: dual points :math:`\gamma_r` of an earlier solve (e.g. its
        ``cut_points``, zero-padded for added examples), projected onto this :math:`Q'` and
        entered as the first cutting planes; the first query is the master's kernel weights
        on them and the first dual point their aggregate. Any points give valid cuts, so the
        certificate is unchanged; near points save iterations.

    Returns
    -------
    result : MKLResult
        ``weights`` (:math:`u_j=\|f_j\|/N(f)` of the averaged :math:`\hat f_T`),
        ``dual_coef`` (:math:`\hat\gamma\circ y/(n\lambda)`), ``intercept`` (0),
        ``objective`` (:math:`P(\hat f_T)`), ``gap`` (relative), ``method="stpmkl"``, the
        status keys, ``history`` (``objective``, ``gap``, ``criterion``, ``weights``,
        ``time``, ``dual_objective``, ``abs_gap``, ``bound``: Theorem 2, NaN for VI), and
        ``coef`` (:math:`A`, evaluated by ``mklcore.decision``, :func:`stpmkl_decision`),
        ``gamma`` (:math:`\hat\gamma_T`), ``dual_objective``, ``abs_gap``, ``kernel_norms``,
        ``decision_train``, ``bound``, ``solver``, ``step`` (:math:`\tau`), ``eta0``,
        ``op_norm`` (:math:`\|M\|`), ``lam``, ``rho``, ``upper``, ``total_rank``,
        ``n_restarts``, ``noise_level``, ``delta``. When ``max_iter`` runs out before the gap
        reaches ``tol``, ``status`` is 1 and ``message`` says so, with the gap reached.

    Raises
    ------
    ValueError
        Invalid parameters, non-binary labels, malformed kernels.

    See Also
    --------
    mipmkl_solve : the best-case baseline.
    theorem2_bound : the bound stored in ``history["bound"]``.

    Notes
    -----
    ``"exact"``: the dual of (11) is
    :math:`\max_{\gamma\in Q'}\min_{\theta\in\Delta_m}\frac1n1^\top\gamma-\frac1{2\lambda n^2}
    \sum_j\theta_j(\gamma\circ y)^\top K_j(\gamma\circ y)`, bias-free l1-MKL with the budget
    :math:`\sum_i\gamma_i\le\rho`. Each iteration solves the concave QP in :math:`\gamma` for
    the current :math:`\theta` (accelerated projected gradient with the Lemma-2 projection,
    warm-started), adds the cut of :math:`\gamma_t` to the SILP master LP over the simplex
    (Sonnenburg et al., 2006), and queries next half-way between the master's :math:`\theta`
    and the weights of the best primal point (in-out stabilisation). Primal points are
    :math:`A_{:,j}=\theta_j\gamma_t\circ y/(\lambda n)`; dual points are the :math:`\gamma_t`
    and their aggregate :math:`\sum_r\mu_r\gamma_r` with the master's cut weights, whose dual
    value is at least the master's value. Extra result keys: ``n_inner_iter``,
    ``lower_bound`` (the master's value), ``n_cuts``, ``cut_points`` (the dual points of the
    cuts active in the final master, for ``warm_cuts``); ``step``, ``op_norm``, ``bound`` are
    NaN.

    ``"amp"``: Algorithm 1 (Section 3.3), from :math:`A_0=0,\gamma_0=0`: step 4,
    :math:`\beta_t=\Pi_{Q'}(\gamma_{t-1}+\tau(1-y\circ f_{t-1}(X))/n)` (Lemma 2); step 5,
    :math:`A_{:,j}\leftarrow A_{:,j}+\tau\,\beta_t\circ y/n` then the group
    soft-thresholding of Lemma 3 with :math:`c=\tau\lambda`; step 6,
    :math:`\gamma_t=\Pi_{Q'}(\gamma_{t-1}+\tau(1-y\circ f_t(X))/n)`; step 7, the output
    :math:`(\bar A_T,\bar\beta_T)` averages the primal iterates and the extrapolated duals.
    Theorem 2: its gap is at most :math:`(\|f^*\|^2+\max_{Q'}\|\gamma\|^2)/(2\tau T)`.

    References
    ----------
    .. [1] T. Yang, M. Mahdavi, R. Jin, L. Zhang, Y. Zhou. Multiple kernel learning from
       noisy labels by stochastic programming. ICML 2012.

    Examples
    --------
    {example_data}
    >>> from mklcore.stpmkl import stpmkl_solve
    >>> res = stpmkl_solve(K, y, noise_level=0.1, lam=0.1, tol=1e-4)
    >>> res.success, res.weights.round(2).tolist()
    (True, [1.0, 0.0])
    """
    return _run_batch("stpmkl_solve", K, y, noise_level=noise_level, lam=lam, rho=rho,
                      solver=solver, max_iter=max_iter, tol=tol, delta=delta, upper=upper,
                      gap=gap, step=step, eta0=eta0, check_every=check_every,
                      callback=callback, verbose=verbose, check_input=check_input,
                      rank_tol=rank_tol, factors=factors, warm_start=warm_start,
                      restart=restart, warm_cuts=warm_cuts)[0]


def _run_batch(owner, K, y, *, noise_level, lam, rho, solver, max_iter, tol, delta, upper,
               gap, step, eta0, check_every, callback, verbose, check_input, rank_tol,
               factors, warm_start, restart, warn=True, warm_cuts=None, chain=False):
    """:func:`stpmkl_solve` and :func:`stpmkl_grid`: validate, set up, run the solver."""
    lam_a = np.atleast_1d(np.asarray(lam, dtype=object))
    rho_a = np.atleast_1d(np.asarray(rho, dtype=object))
    eta_a = np.atleast_1d(np.asarray(eta0, dtype=object))
    for name, arr in (("lam", lam_a), ("rho", rho_a), ("eta0", eta_a)):
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"The {name!r} parameter of {owner} must be a number or a "
                             f"non-empty 1-D sequence of numbers.")
    try:
        lam_a, rho_a, eta_a = np.broadcast_arrays(lam_a, rho_a, eta_a)
    except ValueError:
        raise ValueError(f"{owner}: lam, rho and eta0 have lengths {lam_a.size}, "
                         f"{rho_a.size} and {eta_a.size}; give sequences of one common "
                         f"length (paired settings) or scalars.") from None
    for g in range(lam_a.size):
        validate_params(owner, _STPMKL_CONSTRAINTS, {
            "noise_level": noise_level, "lam": _scalar(lam_a[g]), "rho": _scalar(rho_a[g]),
            "delta": delta, "upper": upper, "solver": solver, "max_iter": max_iter,
            "tol": tol, "gap": gap, "step": step, "eta0": _scalar(eta_a[g]),
            "check_every": check_every, "callback": callback, "verbose": verbose,
            "rank_tol": rank_tol, "restart": restart, "chain": chain,
            "check_input": check_input, "warn": warn})
    K, y_pm, factors = _prepare(K, y, check_input, owner, rank_tol, factors)
    n_kernels = K.shape[0] if factors is None else factors.n_kernels
    warm_cuts = _check_warm_cuts(warm_cuts, y_pm.size, solver, owner)
    warm_start = _check_warm_start(warm_start, y_pm.size, n_kernels, owner)
    default_rho = upper * rho_from_theory(y_pm.size, noise_level, delta)
    rhos = np.array([default_rho if r is None else float(r) for r in rho_a])
    etas = None if all(e is None for e in eta_a) else \
        np.array([np.nan if e is None else float(e) for e in eta_a])
    hints = _scale_hints(K, factors, y_pm.size, lam_a.astype(float), rhos, upper)
    if solver == "exact":
        results = _exact(K, factors, y_pm, lam=lam_a.astype(float), upper=float(upper),
                         rho=rhos, max_iter=int(max_iter), tol=tol, gap_mode=gap,
                         check_every=int(check_every), callback=callback,
                         verbose=int(verbose), warm_start=warm_start, owner=owner, warn=warn,
                         warm_cuts=warm_cuts, chain=chain, hints=hints)
    else:
        results = _saddle(K, factors, y_pm, lam=lam_a.astype(float), upper=float(upper),
                          rho=rhos, solver=solver, step=step, eta0=etas,
                          max_iter=int(max_iter), tol=tol, gap_mode=gap,
                          check_every=int(check_every), callback=callback,
                          verbose=int(verbose), warm_start=warm_start, owner=owner,
                          warn=warn, restart=restart, hints=hints)
    for res in results:
        if etas is not None and np.isnan(res.eta0) and solver == "vi":
            raise ValueError(f"{owner}: give eta0 for every setting or for none.")
        res["noise_level"] = float(noise_level)
        res["delta"] = float(delta)
    return results


def _scalar(value):
    """A NumPy scalar as a Python one."""
    return value.item() if isinstance(value, np.generic) else value


def _kernel_traces(K, factors):
    """Traces of the kernels (of the factorised kernels with ``factors``)."""
    if factors is None:
        return np.einsum("jii->j", K, dtype=float)
    rows = np.einsum("rn,rn->r", factors.Rt, factors.Rt, dtype=float)
    return np.bincount(factors.owner, weights=rows, minlength=factors.n_kernels)


def _scale_hints(K, factors, n, lams, rhos, upper):
    """The likely cause of a failed run of each problem, from the scales ("" if none)."""
    traces = _kernel_traces(K, factors)
    positive = traces[traces > 0]
    common = ""
    if positive.size > 1 and positive.max() > _SCALE_SPREAD * positive.min():
        common = (f"the kernel traces differ by a factor of {positive.max() / positive.min():.0e}"
                  f": scale the kernels (e.g. normalize='trace', or divide each by its trace).")
    scale = float(traces.max()) / n if traces.size else 0.0
    hints = []
    for lam, rho in zip(np.broadcast_to(lams, np.shape(rhos)), rhos):
        parts = [common] if common else []
        if lam < _TINY_RATIO * scale:
            parts.append(f"lam={lam:.1e} is below {_TINY_RATIO:g} times the mean diagonal of "
                         f"the largest kernel ({scale:.1e}): raise lam or scale the kernels.")
        if np.isfinite(rho) and rho < _TINY_RATIO * n * float(np.max(upper)):
            parts.append(f"rho={rho:.1e} is below {_TINY_RATIO:g} * n * upper, so gamma stays "
                         f"at round-off: raise rho (None: the value of the theory).")
        hint = _Hint(" ".join(parts))
        hint.tiny = len(parts) > bool(common)  # lam or rho at round-off: see _exact
        hints.append(hint)
    return hints


class _Hint(str):
    """The text of a hint of :func:`_scale_hints`, and whether lam or rho is at round-off."""

    tiny = False


def _warm_array(value, name, shape, owner):
    """``value`` as a finite float array of ``shape`` (a clear error naming ``name``)."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {name} must be a numeric array of shape {shape}; got "
                         f"{type(value).__name__}.") from None
    if array.shape != shape:
        raise ValueError(f"{owner}: {name} must have shape {shape}; got {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{owner}: {name} contains NaN or infinity.")
    return array


def _check_warm_start(warm_start, n, m, owner):
    """A ``(A0, gamma0)`` warm start of shapes ((n, m), (n,)), finite, or None."""
    if warm_start is None:
        return None
    if not isinstance(warm_start, (tuple, list)) or len(warm_start) != 2:
        raise ValueError(f"{owner}: warm_start must be a pair (coef of shape (n_samples={n}, "
                         f"n_kernels={m}), gamma of shape ({n},)), e.g. (res.coef, res.gamma); "
                         f"got {type(warm_start).__name__}.")
    return (_warm_array(warm_start[0], "warm_start[0] (coef)", (n, m), owner),
            _warm_array(warm_start[1], "warm_start[1] (gamma)", (n,), owner))


def _check_warm_cuts(warm_cuts, n, solver, owner):
    """Finite dual points of shape (n_cuts, n) for the exact solver, or None."""
    if warm_cuts is None:
        return None
    if solver != "exact":
        raise ValueError(f"{owner}: warm_cuts needs solver='exact'; got solver={solver!r}.")
    try:
        cuts = np.atleast_2d(np.asarray(warm_cuts, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: warm_cuts must be a numeric array of shape (n_cuts, "
                         f"n_samples={n}); got {type(warm_cuts).__name__}.") from None
    if cuts.ndim != 2 or cuts.shape[1] != n:
        raise ValueError(f"{owner}: warm_cuts must be an array of shape (n_cuts, "
                         f"n_samples={n}); got shape {cuts.shape}.")
    if not np.all(np.isfinite(cuts)):
        raise ValueError(f"{owner}: warm_cuts contains NaN or infinity.")
    return cuts


@_fill_doc
def stpmkl_grid(K, y, *, noise_level, lam, rho=None, solver="exact", eta0=None, max_iter=1000,
                tol=1e-2, delta=0.1, upper=1.0, gap="relative", step=None, check_every=1,
                verbose=0, check_input=True, rank_tol=None, factors=None, warm_start=None,
                warn=True, restart=True, warm_cuts=None, chain=False):
    r"""Solve several StPMKL problems on the same kernels at once (one pass per iteration).

    For G settings of ``(lam, rho)`` (or of ``eta0`` for VI) sharing the kernels and labels,
    AMP and VI run in lockstep, one matrix-matrix product per iteration for all settings.
    Each problem stops on its own criterion; the results are those of G calls of
    :func:`stpmkl_solve` (up to round-off) unless ``chain`` is set.

    Parameters
    ----------
    {K_y}
    noise_level : float
        :math:`q\in[0,1/2)` (for the default ``rho``).
    lam : float or sequence of float
        :math:`\lambda` per setting.
    rho : float, None or sequence, default=None
        Budget per setting (``None``: :func:`rho_from_theory`).
    solver : {"exact", "amp", "vi"}, default="exact"
        Algorithm (see :func:`stpmkl_solve`); ``"exact"`` solves the settings one after the
        other, AMP and VI in lockstep.
    eta0 : float, None or sequence, default=None
        VI initial steps per setting (``None``: :math:`\tau`).
    max_iter, tol, delta, upper, gap, step, check_every, verbose, check_input : see stpmkl_solve
        Shared by all settings.
    rank_tol, factors, warm_start : see stpmkl_solve
        Shared by all settings.
    warn : bool, default=True
        Emit a ConvergenceWarning per setting that did not converge.
    restart : bool, default=True
        Restarted averaging (see :func:`stpmkl_solve`); each setting restarts on its own.
    warm_cuts : ndarray of shape (n_cuts, n_samples), default=None
        ``"exact"`` only: first cuts of the first setting (see :func:`stpmkl_solve`).
    chain : bool, default=False
        ``"exact"`` only: start every setting after the first from the cuts active at the
        end of the setting before (its ``cut_points``), a warm start along the grid (order
        the settings so that neighbours are close). Each result is still certified by its
        own gap, but no longer equal to a cold :func:`stpmkl_solve` up to round-off, only
        within ``tol``.

    Returns
    -------
    results : list of MKLResult
        One per setting, in order. ``lam``, ``rho`` and ``eta0`` are broadcast together:
        pass equal-length sequences for paired settings (use ``itertools.product`` for a
        full grid).

    Examples
    --------
    {example_data}
    >>> from mklcore.stpmkl import stpmkl_grid
    >>> res = stpmkl_grid(K, y, noise_level=0.1, lam=[0.1, 1.0], rho=[30.0, 40.0])
    >>> [r.success for r in res]
    [True, True]
    """
    return _run_batch("stpmkl_grid", K, y, noise_level=noise_level, lam=lam, rho=rho,
                      solver=solver, max_iter=max_iter, tol=tol, delta=delta, upper=upper,
                      gap=gap, step=step, eta0=eta0, check_every=check_every, callback=None,
                      verbose=verbose, check_input=check_input, rank_tol=rank_tol,
                      factors=factors, warm_start=warm_start, warn=warn, restart=restart,
                      warm_cuts=warm_cuts, chain=chain)


# --- MiPMKL: best case over p (alternating minimisation) ---

def _lowest_losses_weights(losses, kappa_n):
    """p in [0,1]^n with sum p = kappa_n on the smallest losses (fractional at the boundary)."""
    n = losses.size
    order = np.argsort(losses, kind="stable")
    p_sorted = np.clip(kappa_n - np.arange(n), 0.0, 1.0)
    p = np.empty(n)
    p[order] = p_sorted
    return p


_MIPMKL_CONSTRAINTS = dict(_STPMKL_CONSTRAINTS)
_MIPMKL_CONSTRAINTS.update({
    "kappa": [Interval("real", 0, 1, closed="right"), None],
    "max_alt": [Interval("int", 1, None)],
    "alt_max_iter": [Interval("int", 1, None), None],
    "variant": [Options("p", "p+eta")],
    "solver": [Options("exact", "amp")],
})


@_fill_doc
def mipmkl_solve(K, y, *, noise_level, lam, kappa=None, delta=0.1, variant="p", max_alt=50,
                 max_iter=1000, alt_max_iter=None, tol=1e-2, solver="exact", check_input=True,
                 rank_tol=None, factors=None, callback=None, verbose=0, warm_cuts=None):
    r"""MiPMKL, the best-case baseline of Yang et al. (2012): minimise over :math:`p` too.

    .. math::
        \min_f\ \min_{p\in Q_{lo}}\ \frac\lambda2N(f)^2+\frac1n\sum_ip_i\,\ell(y_if(x_i)),
        \qquad Q_{lo}=\{p\in[0,1]^n:\textstyle\sum_ip_i\ge\kappa n\}

    (the "robust hinge loss" baseline of Section 3.2 and Section 4, after Xu et al. 2006;
    minimising needs a *lower* budget: over the paper's :math:`Q`, an upper budget, the
    minimum is :math:`p=0`). The problem is bilinear in :math:`(p,f)`, hence non-convex; it is
    solved by alternating minimisation from :math:`p=1` (the l1-MKL solution without bias):
    :math:`f` by AMP with box :math:`\gamma_i\in[0,p_i]` and no budget (exact for the
    weighted hinge loss), then :math:`p=1` on the :math:`\kappa n` smallest hinge losses
    (fractional at the boundary), until :math:`p` no longer changes. The inner solves use
    :func:`stpmkl_solve`'s ``solver`` (``"exact"`` or ``"amp"``), warm-started. The result is a
    local optimum; the objective is non-increasing up to the accuracy ``tol`` of the inner
    solves.

    Parameters
    ----------
    {K_y}
    noise_level : float
        :math:`q\in[0,1/2)`; gives the default ``kappa``.
    lam : float
        :math:`\lambda>0`.
    kappa : float, default=None
        Lower budget fraction in (0, 1]; ``None``: :math:`1-q-\epsilon` with
        :math:`\epsilon=\sqrt{\ln(2/\delta)/(2n)}` (clipped to [1/n, 1]).
    delta : float, default=0.1
        Confidence level for the default ``kappa`` (and :math:`\eta` of ``variant="p+eta"``).
    variant : {"p", "p+eta"}, default="p"
        Loss weights :math:`p_i` or, mirroring StPMKL, :math:`(p_i+\eta)/(1+\eta)`.
    {mipmkl_iterations}
    solver : {"exact", "amp"}, default="exact"
        Solver of the inner problems (see :func:`stpmkl_solve`).
    check_input : bool, default=True
        Validate ``K`` and ``y``.
    rank_tol : float, default=None
        Low-rank factorisation as in :func:`stpmkl_solve`.
    factors : KernelFactors, default=None
        Precomputed factorisation (see :func:`stpmkl_solve`).
    callback : callable, default=None
        ``callback(intermediate_result)`` after each alternation (keys as in
        :func:`stpmkl_solve`, ``criterion`` the largest change of :math:`p`, and ``p``, the
        new example weights); raising ``StopIteration`` stops with ``status=3``.
    verbose : int, default=0
        ``1``: a progress line on the first alternation, every 10 alternations and at the
        end; ``>= 2``: every alternation.
    warm_cuts : ndarray of shape (n_cuts, n_samples), default=None
        ``solver="exact"`` only: first cuts of the first inner solve (the l1-MKL start; see
        :func:`stpmkl_solve`), e.g. the ``cut_points`` of a bias-free l1-MKL fit with the
        same ``lam``.

    Returns
    -------
    result : MKLResult
        As :func:`stpmkl_solve` (``method="mipmkl"``; ``objective`` is the MiPMKL objective
        above, ``gap`` the relative gap of the last inner solve, ``n_iter`` the number of
        alternations, ``status`` 0 when :math:`p` stopped changing, 1 after ``max_alt``
        alternations), plus ``p`` (final example weights), ``kappa``, ``n_inner_iter``
        (total inner iterations). ``history`` has one row per alternation (``objective``,
        ``gap``, ``criterion`` (largest change of :math:`p`), ``weights``, ``time``,
        ``n_inner``). The other keys (``coef``, ``gamma``, ``decision_train``...) are those
        of the last inner solve; ``mklcore.decision(result, K_test)`` evaluates ``coef``.

    Examples
    --------
    {example_data}
    >>> from mklcore.stpmkl import mipmkl_solve
    >>> res = mipmkl_solve(K, y, noise_level=0.1, lam=0.1)
    >>> res.method, round(float(res.p.sum()), 2)
    ('mipmkl', 28.26)
    """
    validate_params("mipmkl_solve", _MIPMKL_CONSTRAINTS, {
        "noise_level": noise_level, "lam": lam, "kappa": kappa, "delta": delta,
        "variant": variant, "max_alt": max_alt, "max_iter": max_iter,
        "alt_max_iter": alt_max_iter, "tol": tol, "solver": solver,
        "rank_tol": rank_tol, "callback": callback, "verbose": verbose,
        "check_input": check_input})
    K, y_pm, factors = _prepare(K, y, check_input, "mipmkl_solve", rank_tol, factors)
    n = y_pm.size
    eps = np.sqrt(np.log(2.0 / delta) / (2.0 * n))
    eta = np.sqrt(np.log(1.0 / delta) / 2.0)
    if kappa is None:
        kappa = float(np.clip(1.0 - noise_level - eps, 1.0 / n, 1.0))
    kappa_n = kappa * n

    def box(p):
        return p if variant == "p" else (p + eta) / (1.0 + eta)

    # the outer test stops when p no longer changes; tol=None switches every test off
    hint = _scale_hints(K, factors, n, np.array([float(lam)]), np.array([np.inf]), 1.0)[0]
    monitor = Monitor("mipmkl", tol=None if tol is None else 0.0, max_iter=max_alt,
                      callback=callback,
                      verbose=verbose, label="mipmkl_solve",
                      criterion_name="change of the example weights p",
                      advice="Increase max_alt.", hint=hint)
    warm_cuts = _check_warm_cuts(warm_cuts, n, solver, "mipmkl_solve")
    p = np.ones(n)
    res, warm = None, None
    total_inner = 0
    while True:
        inner = dict(lam=np.array([float(lam)]), upper=box(p)[None, :],
                     rho=np.array([np.inf]), tol=tol, gap_mode="relative", check_every=1,
                     max_iter=int(max_iter if monitor.n_iter == 0 or alt_max_iter is None
                                  else alt_max_iter), callback=None, verbose=0,
                     warm_start=warm, owner="mipmkl_solve", warn=False, hints=[hint])
        res = (_exact(K, factors, y_pm, warm_cuts=warm_cuts, **inner) if solver == "exact" else
               _saddle(K, factors, y_pm, solver="amp", step=None, eta0=None, **inner))[0]
        total_inner += res.n_iter
        fX = res.decision_train
        losses = np.maximum(0.0, 1.0 - y_pm * fX)
        N = float(res.kernel_norms.sum())
        objective = 0.5 * lam * N * N + float(box(p) @ losses) / n
        p_new = _lowest_losses_weights(losses, kappa_n)
        monitor.record(objective=objective, gap=res.gap, weights=res.weights,
                       criterion=np.max(np.abs(p_new - p)), n_inner=res.n_iter,
                       snapshot={"p": p_new.copy()})
        if res.status == 2:
            monitor.fail(f"the inner {solver} solve failed: {res.message}")
        elif hint and res.status == 1 and tol is not None:  # degenerate scales: p settles on
            monitor.fail(f"the inner solve did not converge ({res.message})")  # noise
        p = p_new
        if monitor.stopped:
            break
        warm = (res.coef, np.minimum(res.gamma, box(p)))
        warm_cuts = None  # later alternations: the warm start above (their own cuts made
        # p oscillate at the 1e-2 gap and cost time)
    extras = {k: v for k, v in res.items() if k not in _MONITOR_KEYS | {"n_inner_iter"}}
    return monitor.finish(
        weights=res.weights, dual_coef=res.dual_coef, intercept=0.0, objective=objective,
        gap=res.gap, **extras, p=p, kappa=kappa, n_inner_iter=total_inner,
        noise_level=float(noise_level), delta=float(delta), variant=variant)


#: keys set by Monitor.finish (not copied from an inner result)
_MONITOR_KEYS = frozenset(("weights", "dual_coef", "intercept", "objective", "gap", "n_iter",
                           "success", "status", "message", "history", "method", "criterion",
                           "criterion_name", "tol", "time"))


# --- estimators ---

class _NoBiasMKLClassifier(BaseMKLClassifier):
    """Shared parts of StPMKL/MiPMKL: default bank "xu2010", per-kernel coefficients, no bias."""

    _default_kernels = "xu2010"

    def _solve(self, K, y):
        return self._solver(K, y, **self.solver_params(), check_input=False)

    def _set_fitted(self, result):
        super()._set_fitted(result)
        self.coef_ = np.asarray(result.coef, dtype=float)
        self.gamma_ = np.asarray(result.gamma, dtype=float)
        self.support_ = np.flatnonzero(np.any(self.coef_ != 0, axis=1))
        self.dual_objective_ = float(result.dual_objective)


def _estimator_constraints(solver_constraints, names):
    """An estimator's parameter constraints: the solver's ``names`` plus the bank's."""
    return {**{k: solver_constraints[k] for k in names}, "kernels": [list, tuple, None],
            "normalize": COMMON_CONSTRAINTS["normalize"]}


@_fill_doc
class StPMKLClassifier(_NoBiasMKLClassifier):
    r"""StPMKL classifier: MKL robust to label noise by stochastic programming (Yang et al.).

    Fits the worst-case model (11) of :func:`stpmkl_solve` on the kernels of ``kernels``
    evaluated on ``X``: a bias-free l1-MKL whose hinge loss is replaced by the average of
    the :math:`\rho` largest hinge losses.

    Parameters
    ----------
    kernels : list, default=None
        Kernel bank (see :func:`mklcore.kernels.kernel_bank`). ``None``:
        ``kernel_bank("xu2010")``, the paper's 10 Gaussian widths on all attributes and on
        each single attribute (:math:`10(d+1)` kernels). Those widths,
        :math:`\sigma=2^{-3},\dots,2^{6}`, are fixed and assume attributes min-max scaled
        to :math:`[0,1]` as in the paper; this estimator does not scale ``X``, so put a
        scaler in front of it: ``make_pipeline(MinMaxScaler(),
        StPMKLClassifier(kernels=kernel_bank("xu2010")))``.
    noise_level : float, default=0.0
        Noise level :math:`q\in[0,1/2)`; sets the budget when ``rho`` is None.
    lam : float, default=1e-2
        :math:`\lambda>0`.
    rho : float, default=None
        Budget; ``None``: :func:`rho_from_theory` ``(n, noise_level, delta)``.
    solver : {"exact", "amp", "vi"}, default="exact"
        Cutting planes on the dual (see :func:`stpmkl_solve`), accelerated mirror prox
        (Algorithm 1) or gradient descent-ascent.
    delta : float, default=0.1
        Confidence level :math:`\delta`.
    {normalize}
    max_iter : int, default=1000
        Maximum number of iterations.
    tol : float or None, default=1e-2
        Relative duality gap at which to stop (``None``: run ``max_iter`` iterations).
    rank_tol : float, default=None
        Low-rank speed-up (see :func:`stpmkl_solve`).
    verbose : int, default=0
        Progress lines (see :func:`stpmkl_solve`).
    {probability}

    Attributes
    ----------
    {weights_coef}
    gamma_ : ndarray of shape (n_samples,)
        Averaged dual :math:`\hat\gamma` (small values: examples effectively ignored).
    {fitted}
    converged_ : bool
        Whether the relative gap fell below ``tol``.
    objective_ : float
        Primal value :math:`P(\hat f)`.
    dual_objective_ : float
        Dual value :math:`D(\hat\gamma)`.
    gap_ : float
        Relative duality gap.
    criterion_ : float
        The stopping value compared with ``tol`` (``result_.criterion_name`` says which).
    history_ : dict of ndarray
        Per-iteration ``objective``, ``gap``, ``criterion``, ``weights``, ``time``,
        ``dual_objective``, ``abs_gap``, ``bound``.
    {result_bank}

    See Also
    --------
    stpmkl_solve : the solver on precomputed kernels.
    MiPMKLClassifier : the best-case baseline.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from mklcore.stpmkl import StPMKLClassifier
    >>> X, y = make_classification(n_samples=60, n_features=3, n_redundant=0, random_state=0)
    >>> clf = StPMKLClassifier(noise_level=0.1, lam=0.1, tol=0.05).fit(X, y)
    >>> clf.weights_.shape, round(float(clf.weights_.sum()), 6), clf.converged_
    ((40,), 1.0, True)
    """

    _solver = staticmethod(stpmkl_solve)
    _parameter_constraints = _estimator_constraints(_STPMKL_CONSTRAINTS, (
        "noise_level", "lam", "rho", "solver", "delta", "max_iter", "tol", "rank_tol",
        "verbose"))

    def __init__(self, *, kernels=None, noise_level=0.0, lam=1e-2, rho=None, solver="exact",
                 delta=0.1, normalize=None, max_iter=1000, tol=1e-2, rank_tol=None, verbose=0,
                 probability=False, random_state=None):
        # store every argument unchanged (the outermost iterable is evaluated here)
        self._store_params(locals())


@_fill_doc
class MiPMKLClassifier(_NoBiasMKLClassifier):
    r"""MiPMKL classifier: the best-case ("robust hinge") baseline of Yang et al. (2012).

    Minimises over the correctness probabilities instead of maximising (see
    :func:`mipmkl_solve`): examples with the largest losses are dropped. Non-convex; a
    local optimum by alternating minimisation.

    Parameters
    ----------
    kernels : list, default=None
        Kernel bank; ``None``: ``kernel_bank("xu2010")``, whose fixed widths assume
        attributes min-max scaled to :math:`[0,1]`: put a ``MinMaxScaler`` in front (see
        :class:`StPMKLClassifier`).
    noise_level : float, default=0.0
        :math:`q\in[0,1/2)`; sets ``kappa`` when it is None.
    lam : float, default=1e-2
        :math:`\lambda>0`.
    kappa : float, default=None
        Lower budget fraction; ``None``: :math:`1-q-\epsilon`.
    delta : float, default=0.1
        Confidence level.
    {normalize}
    {mipmkl_iterations}
    solver : {"exact", "amp"}, default="exact"
        Solver of the inner problems (see :func:`stpmkl_solve`).
    rank_tol : float, default=None
        Low-rank speed-up.
    verbose : int, default=0
        Progress lines, one per alternation (see :func:`mipmkl_solve`).
    {probability}

    Attributes
    ----------
    {weights_coef}
    gamma_ : ndarray of shape (n_samples,)
        Dual of the last inner solve.
    p_ : ndarray of shape (n_samples,)
        Final example weights :math:`p`.
    {fitted}
    converged_ : bool
        Whether :math:`p` stopped changing.
    objective_ : float
        MiPMKL objective.
    dual_objective_ : float
        Dual value of the last inner problem.
    gap_ : float
        Relative gap of the last inner solve.
    criterion_ : float
        The stopping value compared with ``tol`` (``result_.criterion_name`` says which).
    history_ : dict of ndarray
        Per alternation ``objective``, ``gap``, ``criterion``, ``weights``, ``time``,
        ``n_inner``.
    {result_bank}

    See Also
    --------
    mipmkl_solve : the solver on precomputed kernels.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from mklcore.stpmkl import MiPMKLClassifier
    >>> X, y = make_classification(n_samples=60, n_features=3, n_redundant=0, random_state=0)
    >>> clf = MiPMKLClassifier(noise_level=0.1, lam=0.1).fit(X, y)
    >>> clf.p_.shape
    (60,)
    """

    _solver = staticmethod(mipmkl_solve)
    _parameter_constraints = _estimator_constraints(_MIPMKL_CONSTRAINTS, (
        "noise_level", "lam", "kappa", "delta", "max_alt", "max_iter", "alt_max_iter", "tol",
        "solver", "rank_tol", "verbose"))

    def __init__(self, *, kernels=None, noise_level=0.0, lam=1e-2, kappa=None, delta=0.1,
                 normalize=None, max_alt=50, max_iter=1000, alt_max_iter=None, tol=1e-2,
                 solver="exact", rank_tol=None, verbose=0,
                 probability=False, random_state=None):
        # store every argument unchanged (the outermost iterable is evaluated here)
        self._store_params(locals())

    def _set_fitted(self, result):
        super()._set_fitted(result)
        self.p_ = np.asarray(result.p, dtype=float)
