r"""Q-MKL and Q-SVM: matrix-induced regularisation of kernel and feature weights.

Hinrichs, Singh, Peng and Johnson (NIPS 2012) replace the :math:`\ell_p` norm of lp-norm
MKL by a quadratic form :math:`\beta^\top Q\beta` that encodes how kernels relate (their
correlation, the imaging modality they come from). mklcore implements the constrained
(Ivanov) form of the paper's problem (3), with :math:`\beta^\top Q\beta` moved into a
constraint as in its Module 2, eq. (8):

.. math::
    \min_{\beta\ge0,\ \beta^\top Q\beta\le1}\ \min_{w,b,\xi\ge0}\
    \frac12\sum_m\frac{\|w_m\|^2}{\beta_m} + C\sum_i\xi_i
    \quad\text{s.t.}\quad y_i\Big(\sum_m\langle w_m,\phi_m(x_i)\rangle+b\Big)\ge1-\xi_i,

so that :math:`Q=\mathbf 1\mathbf 1^\top` is exactly l1-MKL and :math:`Q=I` exactly l2-MKL at
the same ``C``. :func:`qmkl_solve` runs Algorithm 1 (Module 1, the SVM; Module 2,
:func:`qmkl_beta_step`); :func:`qmkl_support_function` gives its duality gap; :func:`qsvm_solve`
is the SVM with :math:`\frac12 w^\top Qw`; the other functions build Q (Table 1). The cvxpy
oracle is :func:`mklcore.reference.qmkl_primal_cvx`.

References
----------
.. [1] C. Hinrichs, V. Singh, J. Peng, S. C. Johnson. Q-MKL: Matrix-induced Regularization in
   Multi-Kernel Learning with Applications to Neuroimaging. NIPS 25, 2012.
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from scipy.optimize import linprog, nnls
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import COMMON_CONSTRAINTS, DOC_PARAMS, BaseMKLClassifier
from ._linalg import cholesky, cholesky_solve
from ._result import Monitor
from ._validation import (Interval, Options, as_float_array, check_binary_labels, check_finite,
                          check_kernel_stack, validate_params)
from .svm import default_backend, svm_solve
from .wrapper import THETA_FLOOR, NumericalFailure, WeightStep, run_wrapper

__all__ = [
    "qmkl_solve", "QMKLClassifier", "qmkl_beta_step", "qmkl_support_function", "check_q",
    "alpha_correlation", "q_from_correlation", "q_from_alpha_covariance",
    "graph_laplacian", "block_diagonal_q", "grid_laplacian",
    "qsvm_solve", "QSVMClassifier", "BetaStep", "q_sqrt_factor",
]

#: eigenvalues below this multiple of the largest one count as zero (singular Q)
_SINGULAR_RTOL = 1e-10
#: allowed relative asymmetry max|Q - Q^T| / max|Q|
_SYMMETRY_RTOL = 1e-8
#: allowed relative negative eigenvalue of Q (round-off)
_PSD_RTOL = 1e-10
#: entries that must be equal for a closed-form structure (ones, block, diagonal)
_STRUCTURE_RTOL = 1e-12
#: per-kernel terms W_m below this multiple of max(W) are treated as zero (beta_m = 0)
_W_FLOOR = 1e-30
#: Clarabel tolerances of the SOCP/SDP beta steps (its defaults give ~1e-5 on beta)
_CLARABEL = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9, "tol_ktratio": 1e-7}
#: Newton on (9) stops when decrement^2 <= _ROOT_FTOL * phi and the largest relative weight
#: change is <= _ROOT_XTOL (or stops falling tenfold, or after _ROOT_POLISH such steps); a
#: stalled line search is accepted when decrement^2 <= _ROOT_ACCEPT * phi
_ROOT_FTOL = 1e-15
_ROOT_XTOL = 1e-9
_ROOT_POLISH = 5
_ROOT_ACCEPT = 1e-10
_ROOT_MAX_ITER = 100
#: coordinate-minimisation steps before Newton (they put every weight at the right scale)
_ROOT_CD_STEPS = 5

#: block principal pivoting (:func:`_nonneg_qp`): iteration limit (then NNLS), sign tolerance
_PIVOT_MAX_ITER = 50
_PIVOT_RTOL = 1e-12

BETA_STEP_METHODS = ("auto", "closed_form", "root", "socp", "sdp")

#: docstring sections shared by several functions and classes (substituted by _fill_doc)
_DOC = {
    "probability": DOC_PARAMS["probability"],
    "svm_params": """C : float, default=1.0
        Box constraint of the single-kernel SVMs. Must be > 0.
    statistic : {"corr", "cov"}, default="corr"
        Pearson correlation (zero-variance rows: correlation 0, diagonal 1) or plain
        covariance of the dual vectors.
    svm_tol : float, default=1e-6
        KKT tolerance of the SVMs.""",
    "q_params": r"""kind : {"cov", "lap", "lap+block"}, default="lap+block"
        Which matrix (see :func:`q_from_correlation`).
    groups : array-like of shape (n_kernels,), default=None
        Group (modality / view) of each kernel; required for ``"lap+block"``.
    affinity : {"abs", "clip"}, default="abs"
        Affinity of the Laplacian: :math:`|\mathrm{Corr}|` or :math:`\max(\mathrm{Corr},0)`.
    ridge : float, default=1e-3
        Multiple of the identity that keeps ``"cov"`` and ``"lap+block"`` positive definite.
    normalize_trace : bool, default=True
        Scale to trace ``n_kernels``.""",
    "qmkl_params": r"""tol : float, default=1e-4
        Stop when the relative duality gap
        :math:`\frac12(\sigma_B(G)-\beta^\top G)/J(\beta)` is at most ``tol``, where
        :math:`\sigma_B(G)=\max_{\beta'\in B}\beta'^\top G` (:func:`qmkl_support_function`).
    max_iter : int, default=200
        Maximum number of outer iterations (SVM + beta step).
    beta_step : {"auto", "closed_form", "root", "socp"}, default="auto"
        Solver of Eq. (8), see :func:`qmkl_beta_step`: ``"root"`` is the paper's nonlinear
        system (Eqs. 9-11, by a Newton root finder), ``"socp"`` the cvxpy SOCP, ``"auto"``
        the closed form for ones / block-of-ones / diagonal ``Q`` and else the root finder.
    svm_tol : float, default=1e-6
        KKT tolerance of the SVM (tight, because :math:`W` and the gap depend on alpha).""",
    "fitted": """dual_coef_ : ndarray of shape (n_samples,)
        Signed dual coefficients ``alpha * y``.
    intercept_ : float
        Bias ``b``.
    support_ : ndarray of shape (n_support,)
        Indices of the support vectors (non-zero ``dual_coef_``).
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the positive class.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data (test kernels are built against it).
    n_features_in_ : int
        Number of features seen in ``fit``.""",
}


def _fill_doc(obj):
    """Put the shared sections ``_DOC[key]`` in place of ``{key}`` in ``obj.__doc__``."""
    if obj.__doc__:  # None under python -OO
        for key, text in _DOC.items():
            obj.__doc__ = obj.__doc__.replace("{" + key + "}", text)
    return obj


def _solve_quietly(problem, fallback=False):
    """``problem.solve`` (Clarabel, or SCS as ``fallback``) without the 'inaccurate' warning."""
    import cvxpy as cp

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        if fallback:
            return problem.solve(solver=cp.SCS, eps=1e-9, max_iters=100000)
        return problem.solve(solver=cp.CLARABEL, **_CLARABEL)


# --- validation of Q ---

def check_q(Q, n_kernels=None, *, owner="qmkl_solve", require_pd=False, check_bounded=True):
    r"""Validate a regularisation matrix :math:`Q` and return it as a symmetric float array.

    Parameters
    ----------
    Q : array-like of shape (n_kernels, n_kernels)
        Candidate matrix (dense, or a scipy sparse matrix, which is densified).
    n_kernels : int, default=None
        Expected size (the number of kernels or features).
    owner : str, default="qmkl_solve"
        Name used in error messages.
    require_pd : bool, default=False
        Require :math:`Q\succ0` (Q-SVM needs :math:`Q^{-1}`).
    check_bounded : bool, default=True
        For a singular :math:`Q`, require that :math:`B=\{\beta\ge0:\beta^\top Q\beta\le1\}` is
        bounded: no direction :math:`d\ge0,\ d\ne0` with :math:`Qd=0` (see
        :func:`graph_laplacian`).

    Returns
    -------
    Q : ndarray of shape (n_kernels, n_kernels)
        ``(Q + Q.T) / 2`` as float64.

    Raises
    ------
    ValueError
        If ``Q`` is not square, has the wrong size, is not finite, not symmetric, indefinite,
        singular while ``require_pd``, or leaves :math:`\beta` unbounded.
    """
    if scipy.sparse.issparse(Q):
        Q = Q.toarray()
    Q = np.asarray(Q)
    if Q.dtype.kind not in "fiub":
        raise TypeError(f"Q of {owner} must be a real matrix; got dtype {Q.dtype}.")
    Q = Q.astype(np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
        raise ValueError(f"Q of {owner} must be a square matrix; got shape {Q.shape}.")
    if n_kernels is not None and Q.shape[0] != n_kernels:
        raise ValueError(
            f"Q of {owner} has shape {Q.shape} but there are {n_kernels} kernels/features: "
            f"Q must be {n_kernels} x {n_kernels}.")
    check_finite(Q, "Q")
    scale = max(float(np.max(np.abs(Q))), np.finfo(float).tiny)
    asym = float(np.max(np.abs(Q - Q.T)))
    if asym > _SYMMETRY_RTOL * scale:
        raise ValueError(
            f"Q of {owner} is not symmetric: max |Q - Q^T| = {asym:.2e} (allowed "
            f"{_SYMMETRY_RTOL:g} * max|Q| = {_SYMMETRY_RTOL * scale:.2e}). The regulariser "
            f"beta^T Q beta only sees (Q + Q^T)/2; pass that if the asymmetry is intended.")
    Q = 0.5 * (Q + Q.T)
    eig, vec = np.linalg.eigh(Q)
    top = max(float(eig[-1]), np.finfo(float).tiny)
    if eig[0] < -_PSD_RTOL * top:
        raise ValueError(
            f"Q of {owner} is indefinite: smallest eigenvalue {eig[0]:.3e} (largest "
            f"{eig[-1]:.3e}). beta^T Q beta must be a (squared) norm, so Q must be positive "
            f"semidefinite; build Q with graph_laplacian, block_diagonal_q or "
            f"q_from_alpha_covariance, or shift it: Q + c*I with c >= {-eig[0]:.3e}.")
    singular = eig[0] <= _SINGULAR_RTOL * top
    if singular and require_pd:
        raise ValueError(
            f"Q of {owner} is singular (smallest eigenvalue {eig[0]:.3e}, largest "
            f"{eig[-1]:.3e}) but must be positive definite here. Add the identity, as the remark "
            f"after Theorem 2 of Hinrichs et al. (2012) suggests (graph_laplacian(..., "
            f"add_identity=True), Q + I), or use "
            f"beta_step='socp' / a closed form for Q = ones or block-of-ones.")
    if singular and check_bounded:
        null = vec[:, eig <= _SINGULAR_RTOL * top]
        # is there z with N z >= 0 and 1^T N z = 1 (a non-negative direction of zero cost)?
        lp = linprog(np.zeros(null.shape[1]), A_ub=-null, b_ub=np.zeros(Q.shape[0]),
                     A_eq=null.sum(axis=0)[None, :], b_eq=[1.0],
                     bounds=[(None, None)] * null.shape[1], method="highs")
        if lp.status == 0:
            d = np.maximum(null @ lp.x, 0)
            d /= max(d.max(), np.finfo(float).tiny)
            raise ValueError(
                f"Q of {owner} is singular and does not bound the kernel weights: Q d = 0 for "
                f"the non-negative direction d = {np.array2string(d, precision=2, threshold=8)}"
                f", so every beta = c*d satisfies beta^T Q beta <= 1 and the problem has no "
                f"minimiser (a bare graph Laplacian, L 1 = 0, is the usual cause). Add the "
                f"identity: graph_laplacian(S, add_identity=True) or Q + I.")
    return Q


def _q_structure(Q):
    """``("block", (labels, c))`` (c * block-of-ones), ``("diag", q)`` or ``("general", None)``."""
    scale = max(float(np.max(np.abs(Q))), np.finfo(float).tiny)
    tol = _STRUCTURE_RTOL * scale
    row = Q[0]
    if not np.all((np.abs(row) <= tol) | (np.abs(row - row[0]) <= tol)):
        return "general", None  # both structures need a first row of zeros and Q[0, 0]
    off = Q - np.diag(np.diag(Q))
    d = np.diag(Q)
    if np.all(np.abs(off) <= tol):
        if np.all(d > tol):
            return "diag", d.copy()
        return "general", None
    c = float(d[0])
    if c > tol and np.all(np.abs(d - c) <= tol):
        nonzero = np.abs(Q) > tol
        if not np.all(np.abs(Q[nonzero] - c) <= tol):  # cheap test first: entries 0 or c
            return "general", None
        # blocks: kernels with the same row pattern, numbered in order of first appearance;
        # the pattern must be exactly "same block" (an equivalence relation)
        _, first, inverse = np.unique(nonzero, axis=0, return_index=True, return_inverse=True)
        labels = np.argsort(np.argsort(first))[inverse.ravel()]
        if np.array_equal(nonzero, labels[:, None] == labels[None, :]):
            return "block", (labels, c)
    return "general", None


# --- Module 2: the beta step, Eq. (8) ---

def _closed_form(W, structure):
    """Closed-form minimiser of Eq. (8) for block-of-ones (incl. ones) and diagonal Q."""
    kind, data = structure
    if kind == "diag":
        q = data
        beta = np.cbrt(W / q)  # stationarity W_m / beta_m^2 = delta q_m beta_m
        return beta / np.sqrt(np.sum(q * beta ** 2))
    labels, c = data
    root_w = np.sqrt(W)
    a = np.bincount(labels, weights=root_w)  # a_g = sum_{m in g} sqrt(W_m)
    with np.errstate(divide="ignore", invalid="ignore"):
        a_pow = np.where(a > 0, a ** (-1.0 / 3.0), 0.0)
    beta = root_w * a_pow[labels] / np.sqrt(np.sum(a ** (4.0 / 3.0)))
    return beta / np.sqrt(c)


def _chol_solve(A, b):
    """``cho_solve(cho_factor(A), b)`` to the last bit (``A`` is overwritten)."""
    if not (np.isfinite(A).all() and np.isfinite(b).all()):
        raise ValueError("array must not contain infs or NaNs")
    return cholesky_solve(cholesky(A, lower=False, clean=False, overwrite_a=True), b,
                          lower=False)


def _coordinate_step(Q, W, b):
    """Jacobi coordinate-minimisation direction ``d`` of phi at ``b`` and its slope."""
    # x_m minimises phi over beta_m alone: the root of psi(x) = q_m x + c_m - W_m / x^2,
    # increasing and concave, so Newton from the left of the root (the start below) is monotone
    q = np.diag(Q)
    Qb = Q @ b
    c = Qb - q * b
    a = np.cbrt(W / q)
    with np.errstate(divide="ignore"):
        x = np.where(c > 0, np.minimum(a, np.sqrt(W / np.where(c > 0, c, 1.0))) / np.sqrt(2.0),
                     np.maximum(a, -c / q))
    W2 = 2.0 * W
    for _ in range(50):
        # step = (q x + c - W / x^2) / (q + 2 W / x^3)
        num = q * x
        num += c
        num -= W / x ** 2
        den = W2 / x ** 3
        den += q
        num /= den
        x = x - num
        if (np.abs(num) <= 1e-14 * x).all():
            break
    d = x - b
    return d, float((Qb - W / b ** 2) @ d)


def _support_closed_form(G, structure):
    """sigma_B(G) for block-of-ones and diagonal Q."""
    kind, data = structure
    if kind == "diag":
        return float(np.sqrt(np.sum(G ** 2 / data)))
    labels, c = data
    top = np.zeros(labels.max() + 1)
    np.maximum.at(top, labels, G)
    return float(np.linalg.norm(top) / np.sqrt(c))


def _nonneg_qp(Q, G, free):
    """argmin_{z >= 0} z'Qz/2 - G'z by block principal pivoting from the set ``free``, or None."""
    # Portugal, Judice and Vicente 1994; Kim and Park 2011: solve Q_FF z_F = G_F, move every
    # index with z_m < 0 or w_m = (Qz - G)_m < 0 across (Murty's rule when that stalls)
    M = G.shape[0]
    best, chances = M + 1, 3
    tol_w = _PIVOT_RTOL * max(float(np.max(np.abs(G))), np.finfo(float).tiny)
    for _ in range(_PIVOT_MAX_ITER):
        idx = np.flatnonzero(free)
        z = np.zeros(M)
        if idx.size:
            try:
                z[idx] = _chol_solve(Q[np.ix_(idx, idx)], G[idx])
            except np.linalg.LinAlgError:
                return None
        w = Q[:, idx] @ z[idx] - G
        tol_z = _PIVOT_RTOL * max(float(np.max(np.abs(z))), np.finfo(float).tiny)
        bad = np.where(free, z < -tol_z, w < -tol_w)
        n_bad = int(np.count_nonzero(bad))
        if n_bad == 0:
            return np.maximum(z, 0.0)
        if n_bad < best:
            best, chances = n_bad, 3
        elif chances > 0:
            chances -= 1
        else:  # backup rule: move only the last violating index (finite termination)
            last = np.flatnonzero(bad)[-1]
            bad = np.zeros(M, dtype=bool)
            bad[last] = True
        free = free ^ bad
    return None


class _SOCP:
    """Cached cvxpy SOCP of Eq. (8): min sum W/beta s.t. ||R beta|| <= 1 (Q = R'R)."""

    def __init__(self, M):
        import cvxpy as cp

        self.M = M
        self.W = cp.Parameter(M, nonneg=True)
        self.R = cp.Parameter((M, M))
        self.beta = cp.Variable(M, nonneg=True)
        self.problem = cp.Problem(cp.Minimize(self.W @ cp.inv_pos(self.beta)),
                                  [cp.norm(self.R @ self.beta, 2) <= 1])

    def solve(self, W, R):
        import cvxpy as cp

        self.W.value = W
        self.R.value = R
        try:
            _solve_quietly(self.problem)
        except cp.SolverError:
            _solve_quietly(self.problem, fallback=True)
        if self.problem.status not in ("optimal", "optimal_inaccurate") or self.beta.value is None:
            raise RuntimeError(f"SOCP of the beta step failed: status {self.problem.status}.")
        return np.maximum(np.asarray(self.beta.value, dtype=float), 0.0)


def q_sqrt_factor(Q):
    """A square root ``R`` with ``R^T R = Q`` (eigendecomposition; works for a singular Q).

    Parameters
    ----------
    Q : ndarray of shape (n_kernels, n_kernels)
        Symmetric positive semidefinite (see :func:`check_q`).

    Returns
    -------
    R : ndarray of shape (n_kernels, n_kernels)
    """
    eig, vec = np.linalg.eigh(Q)
    return (vec * np.sqrt(np.maximum(eig, 0.0))).T


def _sdp_step(W, Q):
    """Theorem 4 SDP of Eq. (8) (tests and the notebook's claim Q3 only; slow)."""
    import cvxpy as cp

    M = W.shape[0]
    nu = cp.Variable(M)
    beta = cp.Variable(M, nonneg=True)
    Z = cp.Variable((M, M), symmetric=True)
    cons = [cp.bmat([[cp.reshape(nu[m], (1, 1), order="C"), np.ones((1, 1))],
                     [np.ones((1, 1)), cp.reshape(beta[m], (1, 1), order="C")]]) >> 0
            for m in range(M)]
    cons.append(cp.bmat([[np.ones((1, 1)), cp.reshape(beta, (1, M), order="C")],
                         [cp.reshape(beta, (M, 1), order="C"), Z]]) >> 0)
    cons.append(cp.trace(Q @ Z) <= 1)
    problem = cp.Problem(cp.Minimize(W @ nu), cons)
    _solve_quietly(problem)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"SDP of the beta step failed: status {problem.status}.")
    return np.maximum(np.asarray(beta.value, dtype=float), 0.0)


def _backtrack(phi, b, f, d, slope, t=1.0):
    """Armijo backtracking from ``b`` along ``d``: ``(trial, phi(trial))`` or ``(None, f)``."""
    while True:
        trial = b + t * d
        if np.array_equal(trial, b):  # not a step (Armijo's term is below round-off)
            return None, f
        f_trial = phi(trial)
        if f_trial <= f + 1e-4 * t * slope:
            return trial, f_trial
        t *= 0.5
        if t < 1e-14:
            return None, f


class BetaStep:
    """Module 2 of Algorithm 1 of [1]_ for a fixed Q: ``step(W, beta_prev)`` and ``support(G)``.

    Keeps what depends only on Q, and warm starts, across the outer iterations of Algorithm 1;
    :func:`qmkl_beta_step` and :func:`qmkl_support_function` are its one-shot forms.

    Parameters
    ----------
    Q : ndarray of shape (n_kernels, n_kernels)
        Validated regulariser (see :func:`check_q`).
    method : {"auto", "closed_form", "root", "socp", "sdp"}, default="auto"
        Solver of Eq. (8) (see :func:`qmkl_beta_step`).

    Attributes
    ----------
    counts : dict
        How often each solver ran (``"fallback"``: root finder failures solved by the SOCP).
    """

    def __init__(self, Q, method="auto"):
        self.Q = Q
        self.M = Q.shape[0]
        self.method = method
        self.structure = _q_structure(Q)
        eig = np.linalg.eigvalsh(Q)
        self.pd = bool(eig[0] > _SINGULAR_RTOL * max(eig[-1], np.finfo(float).tiny))
        if method == "closed_form" and self.structure[0] == "general":
            raise ValueError(
                "beta_step='closed_form' needs Q = c * ones, c * block-of-ones or a positive "
                "diagonal matrix; this Q is none of them. Use 'auto', 'root' "
                "or 'socp'.")
        self._sub = {}  # active mask (bytes) -> cached per-subproblem data
        self._inv_chol_t = None
        self._support_free = None  # free set of the last support-function QP (warm start)
        self.counts = {"closed_form": 0, "root": 0, "socp": 0, "sdp": 0, "fallback": 0}

    # -- per active set -----------------------------------------------------
    def _data(self, active):
        key = active.tobytes()
        data = self._sub.get(key)
        if data is None:
            Qa = self.Q[np.ix_(active, active)]
            structure = _q_structure(Qa) if not active.all() else self.structure
            data = {"Q": Qa, "structure": structure}
            if len(self._sub) > 8:  # active sets change rarely; keep the cache small
                self._sub.clear()
            self._sub[key] = data
        return data

    def _choose(self, structure):
        if self.method in ("auto", "closed_form") and structure[0] != "general":
            return "closed_form"
        if self.method == "auto":
            return "root"
        return self.method

    def step(self, W, beta_prev=None):
        """Minimiser of Eq. (8) for ``W`` (as :func:`qmkl_beta_step`; warm start ``beta_prev``)."""
        W = np.maximum(np.asarray(W, dtype=float), 0.0)
        top = float(W.max()) if W.size else 0.0
        if not top > 0:
            raise ValueError("All per-kernel terms W_m are zero: the beta step of Eq. (8) "
                             "has no unique solution (the SVM returned alpha = 0).")
        active = W > _W_FLOOR * top
        Wa = W[active] / top  # Eq. (8) is invariant to scaling W
        data = self._data(active)
        start = None if beta_prev is None else np.asarray(beta_prev, dtype=float)[active]
        how = self._choose(data["structure"])
        if how == "closed_form":
            beta_a = _closed_form(Wa, data["structure"])
        elif how == "sdp":
            beta_a = _sdp_step(Wa, data["Q"])
        elif how == "root":
            beta_a = self._root(Wa, data, start)
            if beta_a is None:  # not converged: solve the same problem as an SOCP
                how = "socp"
                self.counts["fallback"] += 1
                beta_a = self._socp(Wa, data, start)
        else:
            beta_a = self._socp(Wa, data, start)
        self.counts[how] += 1
        beta = np.zeros(self.M)
        beta[active] = beta_a
        # the constraint is active at the optimum: put beta exactly on the boundary
        norm = float(np.sqrt(max(beta @ self.Q @ beta, 0.0)))
        if norm > 0:
            beta /= norm
        return beta

    def _root(self, W, data, beta0):
        """Root of (9) with delta = 1 (Notes of :func:`qmkl_beta_step`), or None on failure."""
        Q = data["Q"]
        if beta0 is None or not np.all(beta0 > 0) or not np.all(np.isfinite(beta0)):
            beta0 = np.cbrt(W / np.maximum(np.diag(Q), np.finfo(float).tiny))
        b = np.array(beta0, dtype=float)
        # best multiple of the start for phi: c^3 = sum(W / b) / (b' Q b)
        b *= np.cbrt(np.sum(W / b) / max(b @ Q @ b, np.finfo(float).tiny))

        def phi(x):
            return float(np.sum(W / x) + 0.5 * x @ Q @ x)

        f = phi(b)
        for _ in range(_ROOT_CD_STEPS):
            d, slope = _coordinate_step(Q, W, b)
            if not slope < 0:  # stationary (or not finite: Newton decides)
                break
            trial, f_trial = _backtrack(phi, b, f, d, slope)
            if trial is None:
                break
            b, f = trial, f_trial
        polish, rel_prev = 0, np.inf
        for _ in range(_ROOT_MAX_ITER):
            g = Q @ b - W / b ** 2  # residual of (9) with delta = 1
            H = Q + np.diag(2.0 * W / b ** 3)
            try:
                d = -_chol_solve(H, g)
            except np.linalg.LinAlgError:
                return None
            decrement = float(-g @ d)  # Newton decrement squared
            if not np.isfinite(decrement):
                return None
            if decrement <= _ROOT_FTOL * f:
                rel = float(np.max(np.abs(d) / b))
                if rel <= _ROOT_XTOL or rel > 0.1 * rel_prev or polish == _ROOT_POLISH:
                    break
                rel_prev, polish = rel, polish + 1
            t = 1.0
            shrink = d < 0
            if np.any(shrink):  # stay inside beta > 0
                t = min(1.0, 0.99 * float(np.min(-b[shrink] / d[shrink])))
            if polish:  # phi is optimal to round-off, so Armijo cannot judge the step: take it
                b = b + t * d
                f = phi(b)
                continue
            trial, f_trial = _backtrack(phi, b, f, d, -decrement, t)
            if trial is None:  # no decrease left to find: accept if f is optimal to round-off
                return b / np.sqrt(b @ Q @ b) if decrement <= _ROOT_ACCEPT * f else None
            b, f = trial, f_trial
        else:
            return None
        if not (np.all(np.isfinite(b)) and np.all(b > 0)):
            return None
        return b / np.sqrt(b @ Q @ b)

    def _socp(self, W, data, beta0=None):
        """SOCP of Eq. (8) in gamma = beta / d, d a guess of beta (absolute conic tolerances)."""
        socp = data.get("socp")
        if socp is None:
            socp = data["socp"] = _SOCP(W.shape[0])
            data["R"] = q_sqrt_factor(data["Q"])
        if beta0 is not None and np.all(beta0 > 0) and np.all(np.isfinite(beta0)):
            d = beta0 / beta0.max()
        else:
            d = np.cbrt(W / np.diag(data["Q"]))
            d = d / d.max()
        Wd = W / d
        gamma = socp.solve(Wd / Wd.max(), data["R"] * d[None, :])
        return gamma * d

    # -- the dual -----------------------------------------------------------
    def support(self, G):
        """Support function ``sigma_B(G)`` (as :func:`qmkl_support_function`)."""
        G = np.maximum(np.asarray(G, dtype=float), 0.0)
        if self.structure[0] != "general":
            return _support_closed_form(G, self.structure)
        if self.pd:
            # with z = argmin_{z >= 0} z'Qz/2 - G'z, beta = z / ||z||_Q satisfies the KKT
            # conditions of the support problem (same multipliers), so sigma = G'z / ||z||_Q
            free = self._support_free
            if free is None or free.shape != G.shape:
                free = G > 0
            z = _nonneg_qp(self.Q, G, free)
            if z is not None:
                self._support_free = z > 0
                zQz = float(z @ self.Q @ z)
                return float(G @ z) / np.sqrt(zQz) if zQz > 0 else 0.0
            if self._inv_chol_t is None:
                # A = R^{-T} with Q = R^T R (Cholesky)
                R = scipy.linalg.cholesky(self.Q, lower=False)
                self._inv_chol_t = scipy.linalg.solve_triangular(R, np.eye(self.M), trans="T",
                                                                 lower=False)
            A = self._inv_chol_t
            # sigma = min_{mu >= 0} ||A (G + mu)|| (the support function of B, by duality)
            _, residual = nnls(A, -A @ G, maxiter=50 * self.M)
            return float(residual)
        return _support_socp(G, self.Q)


def _support_socp(G, Q):
    """sigma_B(G) by an SOCP (singular general Q)."""
    import cvxpy as cp

    beta = cp.Variable(Q.shape[0], nonneg=True)
    problem = cp.Problem(cp.Maximize(G @ beta), [cp.norm(q_sqrt_factor(Q) @ beta, 2) <= 1])
    _solve_quietly(problem)
    return float(problem.value)


def qmkl_beta_step(W, Q, *, method="auto", beta0=None):
    r"""Solve Module 2 of Algorithm 1 of [1]_, the kernel-weight step of Eq. (8).

    .. math::
        \min_{\beta\ge0}\ \sum_m \frac{W_m}{\beta_m}
        \quad\text{s.t.}\quad \beta^\top Q\beta\le1,
        \qquad W_m=\beta_m^2\,(\alpha\circ y)^\top K_m(\alpha\circ y).

    Kernels with :math:`W_m=0` get :math:`\beta_m=0` and are removed (with their rows and
    columns of :math:`Q`) before solving; the problem is invariant to scaling :math:`W`.

    Parameters
    ----------
    W : array-like of shape (n_kernels,)
        Non-negative per-kernel terms (squared RKHS norms of the :math:`w_m`).
    Q : array-like of shape (n_kernels, n_kernels)
        Symmetric positive semidefinite matrix with a bounded feasible set (see
        :func:`check_q`).
    method : {"auto", "closed_form", "root", "socp", "sdp"}, default="auto"
        ``"closed_form"``: the closed-form minimisers of (8) for :math:`Q=c\,\mathbf 1\mathbf
        1^\top`, :math:`c\,B` (block-of-ones) and positive diagonal :math:`Q` (derived from the
        stationarity conditions (9));
        ``"root"``: the paper's nonlinear system, Eqs. (9)-(11), solved by a globalised
        Newton root finder on (9) (see Notes; falls back to the SOCP if it fails);
        ``"socp"``: the second-order cone program (Sec. 4 of [1]_, via cvxpy/Clarabel);
        ``"sdp"``: the SDP of Theorem 4 (slow, for checks); ``"auto"``: closed form where it
        applies, else the root finder.
    beta0 : array-like of shape (n_kernels,), default=None
        Warm start of the root finder and scaling of the SOCP (the previous :math:`\beta`).

    Returns
    -------
    beta : ndarray of shape (n_kernels,)
        The minimiser, with :math:`\beta^\top Q\beta=1` (the constraint is active).

    Notes
    -----
    The paper solves the stationarity conditions (9),
    :math:`W_m/\beta_m^2=\delta(Q\beta)_m`, in the form (10)-(11) with a hybrid root finder
    (GSL). Fixing :math:`\delta=1` turns (9) into the gradient of the strictly convex
    :math:`\phi(\beta)=\sum_mW_m/\beta_m+\frac12\beta^\top Q\beta`; its root, rescaled to
    :math:`\beta^\top Q\beta=1` (which is what (11) does), is the solution. mklcore finds it
    with Newton steps on (9) (Jacobian :math:`Q+\mathrm{diag}(2W/\beta^3)`, a
    fraction-to-boundary rule) safeguarded by a line search on :math:`\phi`, which converges
    from any positive start and needs no :math:`Q^{-1}`, after a few Jacobi steps of exact
    coordinate minimisation of :math:`\phi` that put every weight at the right scale.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.qmkl import qmkl_beta_step
    >>> W = np.array([1.0, 4.0, 9.0])
    >>> qmkl_beta_step(W, np.ones((3, 3))).round(4).tolist()  # l1: beta ~ sqrt(W)
    [0.1667, 0.3333, 0.5]
    >>> qmkl_beta_step(W, np.eye(3), method="root").round(4).tolist()  # l2: beta ~ W^(1/3)
    [0.357, 0.5667, 0.7426]
    """
    validate_params("qmkl_beta_step", {"method": [Options(*BETA_STEP_METHODS)]},
                    {"method": method})
    W = check_finite(np.asarray(W, dtype=float), "W")
    if W.ndim != 1:
        raise ValueError(f"W must be one-dimensional; got shape {W.shape}.")
    if np.any(W < 0):
        raise ValueError(f"W must be non-negative (squared norms); got min(W) = {W.min():.3e}.")
    Q = check_q(Q, W.shape[0], owner="qmkl_beta_step")
    return BetaStep(Q, method).step(W, beta0)


def qmkl_support_function(G, Q):
    r"""Support function of the feasible set, :math:`\sigma_B(G)=\max_{\beta\in B}G^\top\beta`.

    With :math:`B=\{\beta\ge0:\beta^\top Q\beta\le1\}` the dual of Q-MKL is
    :math:`\max_\alpha \mathbf 1^\top\alpha-\frac12\sigma_B(G(\alpha))` (by the minimax
    theorem; the paper's :math:`G^\top Q^{-1}G` misses the square root and the non-negativity). For
    :math:`Q=R^\top R\succ0` it is the residual of the non-negative least-squares problem
    :math:`\min_{\mu\ge0}\|R^{-\top}(G+\mu)\|_2`, which equals :math:`\|G\|_{Q^{-1}}` only
    when :math:`Q^{-1}G\ge0`. Equivalently :math:`\sigma_B(G)=G^\top z/\|z\|_Q` with
    :math:`z=\arg\min_{z\ge0}\frac12z^\top Qz-G^\top z` (block principal pivoting, NNLS as
    the fallback); closed forms for ones, block-of-ones and diagonal :math:`Q`; an SOCP for
    other singular :math:`Q`.

    Parameters
    ----------
    G : array-like of shape (n_kernels,)
        Non-negative per-kernel terms :math:`G_m=(\alpha\circ y)^\top K_m(\alpha\circ y)`.
    Q : array-like of shape (n_kernels, n_kernels)
        As in :func:`qmkl_beta_step`.

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.qmkl import qmkl_support_function
    >>> G = np.array([1.0, 3.0, 2.0])
    >>> qmkl_support_function(G, np.ones((3, 3))), round(qmkl_support_function(G, np.eye(3)), 6)
    (3.0, 3.741657)
    """
    G = check_finite(np.asarray(G, dtype=float), "G")
    if G.ndim != 1:
        raise ValueError(f"G must be one-dimensional; got shape {G.shape}.")
    Q = check_q(Q, G.shape[0], owner="qmkl_support_function")
    return BetaStep(Q).support(G)


# --- Q builders (the matrices of Table 1 of Hinrichs et al. 2012) ---

def _check_groups(groups, M, needed_by, owner):
    """Validate ``groups`` (one label per kernel); ``needed_by``: the option needing them."""
    if groups is None and needed_by:
        raise ValueError(f"{needed_by} of {owner} needs groups= (the modality / view of each "
                         f"of the {M} kernels).")
    if groups is not None and np.shape(groups) != (M,):
        raise ValueError(f"groups of {owner} must have one entry per kernel ({M}); got shape "
                         f"{np.shape(groups)}.")


def _normalize_trace(Q):
    """Q scaled to trace n_kernels."""
    return Q * (Q.shape[0] / np.trace(Q))


@_fill_doc
def alpha_correlation(K, y, *, C=1.0, statistic="corr", svm_tol=1e-6, svm_backend=None):
    r"""Correlation (or covariance) of the dual vectors of single-kernel SVMs.

    Trains one SVM per kernel (Module 1 of [1]_ on :math:`K_m` alone), collects the
    non-negative dual vectors :math:`\alpha^{(m)}\in[0,C]^n` and returns their
    :math:`M\times M` Pearson correlation across training examples (the paper's
    :math:`\mathrm{Cov}_\alpha`, motivated by the overlap of support vectors).

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training kernels (of the training fold only).
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    {svm_params}
    svm_backend : str, default=None
        SVM backend of :func:`mklcore.svm.svm_solve`; ``None``: the default (compiled) engine.

    Returns
    -------
    S : ndarray of shape (n_kernels, n_kernels)
        Symmetric positive semidefinite.
    """
    validate_params("alpha_correlation", {"C": COMMON_CONSTRAINTS["C"],
                                          "statistic": [Options("corr", "cov")]},
                    {"C": C, "statistic": statistic})
    K = np.asarray(K, dtype=float)
    if K.ndim != 3:
        raise ValueError(f"K must have shape (n_kernels, n_samples, n_samples); got {K.shape}.")
    backend = default_backend() if svm_backend is None else svm_backend
    alphas = np.stack([svm_solve(K[m], y, C=C, tol=svm_tol, backend=backend).alpha
                       for m in range(K.shape[0])])
    centred = alphas - alphas.mean(axis=1, keepdims=True)
    cov = centred @ centred.T / max(alphas.shape[1] - 1, 1)
    if statistic == "cov":
        return cov
    sd = np.sqrt(np.diag(cov))
    scale = max(float(sd.max()), np.finfo(float).tiny)
    ok = sd > 1e-12 * scale
    corr = np.zeros_like(cov)
    corr[np.ix_(ok, ok)] = cov[np.ix_(ok, ok)] / np.outer(sd[ok], sd[ok])
    np.fill_diagonal(corr, 1.0)
    return np.clip(corr, -1.0, 1.0)


def graph_laplacian(S, *, add_identity=True, normalize_trace=True):
    r"""Graph Laplacian :math:`L=\mathrm{diag}(S\mathbf 1)-S` of an affinity matrix, plus ``I``.

    A bare Laplacian is singular (:math:`L\mathbf 1=0`): with it every
    :math:`\beta=c\mathbf 1` is feasible and Q-MKL has no minimiser. Following the remark
    after Theorem 2 of [1]_, the identity is added, which keeps the
    eigenvalues of :math:`Q^{-1}` in :math:`(0,1]`.

    Parameters
    ----------
    S : array-like of shape (n, n)
        Symmetric non-negative affinities (the diagonal is ignored), e.g. ``abs(corr)``.
    add_identity : bool, default=True
        Return :math:`L+I` (positive definite); ``False`` returns the bare :math:`L`.
    normalize_trace : bool, default=True
        Scale the result to trace ``n`` (scaling Q rescales the optimal weights, which is
        equivalent to changing C).

    Returns
    -------
    Q : ndarray of shape (n, n)

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.qmkl import graph_laplacian
    >>> graph_laplacian(np.array([[0, 1], [1, 0]]), normalize_trace=False).tolist()
    [[2.0, -1.0], [-1.0, 2.0]]
    """
    S = check_finite(np.asarray(S, dtype=float), "S")
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"The affinity matrix S must be square; got shape {S.shape}.")
    scale = max(float(np.max(np.abs(S))), np.finfo(float).tiny)
    if np.max(np.abs(S - S.T)) > _SYMMETRY_RTOL * scale:
        raise ValueError("The affinity matrix S must be symmetric; got max |S - S^T| = "
                         f"{np.max(np.abs(S - S.T)):.2e}.")
    S = 0.5 * (S + S.T)
    np.fill_diagonal(S, 0.0)
    if np.any(S < 0):
        raise ValueError(f"Affinities must be non-negative (a Laplacian of negative weights is "
                         f"indefinite); got min(S) = {S.min():.3e}. Use abs(S) or "
                         f"max(S, 0).")
    Q = np.diag(S.sum(axis=1)) - S
    if add_identity:
        Q += np.eye(S.shape[0])
    if normalize_trace and np.trace(Q) > 0:
        Q = _normalize_trace(Q)
    return Q


def block_diagonal_q(groups, *, add_identity=True, normalize_trace=True):
    r"""Block-of-ones matrix of kernel groups (e.g. imaging modalities), plus ``I``.

    :math:`B_{mk}=1` iff kernels :math:`m` and :math:`k` are in the same group, so
    :math:`\beta^\top B\beta=\sum_g(\sum_{m\in g}\beta_m)^2`: l1 inside a group, l2 across
    groups (the block-diagonal term of the Q of Table 1 of [1]_).

    Parameters
    ----------
    groups : array-like of shape (n_kernels,)
        Group label of each kernel (any hashable values).
    add_identity : bool, default=True
        Return :math:`B+I` (positive definite). ``False`` returns the bare :math:`B`, which is
        singular but bounds the weights; Q-MKL solves it in closed form.
    normalize_trace : bool, default=True
        Scale the result to trace ``n_kernels`` (the bare ``B`` already has it).

    Returns
    -------
    Q : ndarray of shape (n_kernels, n_kernels)

    Examples
    --------
    >>> from mklcore.qmkl import block_diagonal_q
    >>> block_diagonal_q(["a", "a", "b"], add_identity=False).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.size == 0:
        raise ValueError(f"groups must be a non-empty 1-D array of group labels; got shape "
                         f"{groups.shape}.")
    Q = (groups[:, None] == groups[None, :]).astype(float)
    if add_identity:
        Q += np.eye(groups.size)
    if normalize_trace:
        Q = _normalize_trace(Q)
    return Q


@_fill_doc
def q_from_correlation(corr, *, kind="lap+block", groups=None, affinity="abs", ridge=1e-3,
                       normalize_trace=True):
    r"""Build one of the Q matrices of Table 1 of [1]_ from a kernel correlation matrix.

    - ``"cov"``: :math:`Q=\mathrm{Corr}+\text{ridge}\,I` (Q = Cov_alpha);
    - ``"lap"``: :math:`Q=L+I`, :math:`L` the Laplacian of the affinity :math:`|\mathrm{Corr}|`
      (Q = Lap(Cov_alpha));
    - ``"lap+block"``: :math:`Q=L+B+\text{ridge}\,I` with :math:`B` the block-of-ones matrix of
      ``groups`` (Q = Lap(Cov_alpha) + block-diagonal);

    then :math:`Q\leftarrow Q\,M/\mathrm{tr}(Q)`.

    Parameters
    ----------
    corr : array-like of shape (n_kernels, n_kernels)
        Correlation matrix, e.g. from :func:`alpha_correlation`.
    {q_params}

    Returns
    -------
    Q : ndarray of shape (n_kernels, n_kernels)
        Symmetric positive definite.
    """
    validate_params("q_from_correlation", {
        "kind": [Options("cov", "lap", "lap+block")], "affinity": [Options("abs", "clip")],
        "ridge": [Interval("real", 0, None)]}, {"kind": kind, "affinity": affinity,
                                                "ridge": ridge})
    corr = check_q(corr, owner="q_from_correlation", check_bounded=False)
    M = corr.shape[0]
    if kind == "cov":
        Q = corr + ridge * np.eye(M)
    else:
        S = np.abs(corr) if affinity == "abs" else np.maximum(corr, 0.0)
        if kind == "lap":
            Q = graph_laplacian(S, add_identity=True, normalize_trace=False)
        else:
            _check_groups(groups, M, "kind='lap+block'", "q_from_correlation")
            Q = (graph_laplacian(S, add_identity=False, normalize_trace=False)
                 + block_diagonal_q(groups, add_identity=False, normalize_trace=False)
                 + ridge * np.eye(M))
    if normalize_trace:
        Q = _normalize_trace(Q)
    return Q


@_fill_doc
def q_from_alpha_covariance(K, y, *, kind="lap+block", groups=None, C=1.0, statistic="corr",
                            affinity="abs", ridge=1e-3, normalize_trace=True, svm_tol=1e-6):
    r"""Q from the covariance of single-kernel SVM dual vectors (Table 1 of [1]_).

    Composition of :func:`alpha_correlation` and :func:`q_from_correlation`. Compute it on the
    training fold only.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training kernels.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    {q_params}
    {svm_params}

    Returns
    -------
    Q : ndarray of shape (n_kernels, n_kernels)
        Symmetric positive definite.
    """
    corr = alpha_correlation(K, y, C=C, statistic=statistic, svm_tol=svm_tol)
    return q_from_correlation(corr, kind=kind, groups=groups, affinity=affinity, ridge=ridge,
                              normalize_trace=normalize_trace)


def grid_laplacian(h, w, *, mu=1.0, radius=np.sqrt(2.0), add_identity=True, sparse=False):
    r"""Spatial regulariser :math:`Q=I+\mu L` of an ``h x w`` pixel grid (Q-SVM, Sec. 5.1 of [1]_).

    :math:`L` is the Laplacian of the graph with weights :math:`1/\|p_u-p_v\|_2` between
    pixels at distance at most ``radius`` (the paper: inverse voxel-to-voxel distance;
    ``sqrt(2)`` is the 8-neighbourhood, ``np.inf`` the dense graph). Pixels are numbered
    row-major, as ``image.reshape(-1)``. No trace normalisation: ``mu = 0`` is the plain SVM.

    Parameters
    ----------
    h, w : int
        Grid height and width (>= 1).
    mu : float, default=1.0
        Weight of the Laplacian (>= 0).
    radius : float, default=sqrt(2)
        Neighbourhood radius (> 0; ``np.inf`` links every pair of pixels).
    add_identity : bool, default=True
        Return :math:`I+\mu L` (positive definite); ``False`` returns :math:`\mu L`.
    sparse : bool, default=False
        Return a ``scipy.sparse.csc_matrix`` (for large grids).

    Returns
    -------
    Q : ndarray or sparse matrix of shape (h*w, h*w)

    Examples
    --------
    >>> from mklcore.qmkl import grid_laplacian
    >>> grid_laplacian(1, 3, mu=1.0, add_identity=False).tolist()
    [[1.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]]
    """
    for name, value in (("h", h), ("w", w)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"The {name!r} parameter of grid_laplacian must be an int >= 1. "
                             f"Got {value!r} instead.")
    validate_params("grid_laplacian", {"mu": [Interval("real", 0, None)],
                                       "radius": [Interval("real", 0, np.inf, closed="right")]},
                    {"mu": mu, "radius": radius})
    rows, cols = np.divmod(np.arange(h * w), w)
    reach = int(min(max(h, w), np.floor(radius))) if np.isfinite(radius) else max(h, w)
    i_idx, j_idx, vals = [], [], []
    for di in range(0, reach + 1):
        for dj in range(-reach, reach + 1):
            if (di, dj) <= (0, 0) and di == 0:
                continue  # each unordered pair once: di > 0, or di == 0 and dj > 0
            dist = np.hypot(di, dj)
            if dist > radius * (1 + 1e-12):
                continue
            ok = (rows + di < h) & (cols + dj >= 0) & (cols + dj < w)
            u = np.flatnonzero(ok)
            v = (rows[u] + di) * w + cols[u] + dj
            i_idx.append(u)
            j_idx.append(v)
            vals.append(np.full(u.size, 1.0 / dist))
    d = h * w
    if i_idx:
        i_all, j_all, v_all = (np.concatenate(a) for a in (i_idx, j_idx, vals))
        S = scipy.sparse.coo_matrix((v_all, (i_all, j_all)), shape=(d, d))
        S = (S + S.T).tocsc()
    else:
        S = scipy.sparse.csc_matrix((d, d))
    L = scipy.sparse.diags(np.asarray(S.sum(axis=1)).ravel()) - S
    Q = mu * L
    if add_identity:
        Q = Q + scipy.sparse.identity(d)
    Q = scipy.sparse.csc_matrix(Q)
    return Q if sparse else Q.toarray()


_QSVM_CONSTRAINTS = {k: COMMON_CONSTRAINTS[k] for k in ("C", "svm_tol")}
_QSVM_CONSTRAINTS["check_input"] = [bool]


def _check_q_features(Q, d, owner):
    """Validate a (possibly sparse) positive definite Q-SVM matrix; return a Q^{-1} solver."""
    if Q is None:
        return None
    if scipy.sparse.issparse(Q) and d > 2000:
        Q = scipy.sparse.csc_matrix(Q, dtype=float)
        if Q.shape != (d, d):
            raise ValueError(f"Q of {owner} has shape {Q.shape} but X has {d} features: Q must "
                             f"be {d} x {d}.")
        check_finite(Q.data, "Q")
        asym = abs(Q - Q.T).max() if Q.nnz else 0.0
        scale = max(abs(Q).max() if Q.nnz else 0.0, np.finfo(float).tiny)
        if asym > _SYMMETRY_RTOL * scale:
            raise ValueError(f"Q of {owner} is not symmetric: max |Q - Q^T| = {asym:.2e}.")
        from scipy.sparse.linalg import eigsh

        smallest = float(eigsh(Q, k=1, which="SA", return_eigenvectors=False)[0])
        if smallest <= 0:
            raise ValueError(f"Q of {owner} must be positive definite (w^T Q w is the squared "
                             f"norm of w); smallest eigenvalue {smallest:.3e}. Add the "
                             f"identity, e.g. grid_laplacian(..., add_identity=True).")
        lu = scipy.sparse.linalg.splu(Q)
        return lu.solve
    Q = check_q(Q, d, owner=owner, require_pd=True)
    cho = scipy.linalg.cho_factor(Q)
    return lambda B: scipy.linalg.cho_solve(cho, B)


def qsvm_solve(X, y, Q, *, C=1.0, svm_tol=1e-6, svm_backend=None, check_input=True):
    r"""Train the Q-SVM of [1]_ (Sec. 3 and 5.1): the SVM with :math:`w^\top Qw` for
    :math:`\|w\|^2`.

    .. math::
        \min_{w,b,\xi\ge0}\ \frac12 w^\top Qw + C\sum_i\xi_i
        \quad\text{s.t.}\quad y_i(w^\top x_i+b)\ge1-\xi_i,\qquad Q\succ0.

    Its dual is the SVM dual with the linear kernel :math:`K_Q=XQ^{-1}X^\top`; then
    :math:`w=Q^{-1}X^\top(\alpha\circ y)`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training features.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1} (other binary labels are mapped, larger = +1).
    Q : array-like or sparse matrix of shape (n_features, n_features), or None
        Symmetric positive definite; ``None`` is the identity (the linear SVM).
    C : float, default=1.0
        Misclassification penalty. Must be > 0.
    svm_tol : float, default=1e-6
        KKT tolerance of the SVM solver.
    svm_backend : str, default=None
        SVM backend of :func:`mklcore.svm.svm_solve`; ``None``: the default (compiled) engine.
    check_input : bool, default=True
        Validate ``X`` and ``y``.

    Returns
    -------
    result : MKLResult
        Core fields (``weights`` is ``[1.0]``: one kernel, :math:`K_Q`; ``objective`` is the
        primal value :math:`\frac12w^\top Qw+C\sum_i\max(0,1-y_if_i)` and ``gap`` its relative
        gap to the dual), plus ``coef`` (:math:`w`, shape (n_features,)), ``alpha``,
        ``dual_objective``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.qmkl import qsvm_solve, grid_laplacian
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 4)); y = np.sign(X[:, 0] + X[:, 1])
    >>> res = qsvm_solve(X, y, grid_laplacian(2, 2, mu=1.0))
    >>> res.coef.shape, bool(np.mean(np.sign(X @ res.coef + res.intercept) == y) > 0.9)
    ((4,), True)
    """
    validate_params("qsvm_solve", _QSVM_CONSTRAINTS,
                    {"C": C, "svm_tol": svm_tol, "check_input": check_input})
    X = as_float_array(X, "X", "qsvm_solve") if check_input else np.asarray(X, dtype=float)
    if check_input:
        if X.ndim != 2:
            raise ValueError(f"X must have shape (n_samples, n_features); got {X.shape}.")
        check_finite(X, "X")
        if np.shape(y) != (X.shape[0],):
            raise ValueError(f"X and y do not match: X has {X.shape[0]} rows but y has shape "
                             f"{np.shape(y)}.")
    y, _ = check_binary_labels(y, "qsvm_solve")  # {-1, +1} labels are kept as they are
    solve_q = _check_q_features(Q, X.shape[1], "qsvm_solve")
    # one SVM, no weight step: the MKL criterion is 0 and the run converges at iteration 1
    monitor = Monitor("qsvm", tol=0.0, max_iter=1, label="Q-SVM",
                      criterion_name="weight-step criterion (one fixed kernel)")
    Z = X.T if solve_q is None else solve_q(np.ascontiguousarray(X.T))  # Q^{-1} X^T
    K_Q = X @ Z
    K_Q = 0.5 * (K_Q + K_Q.T)
    svm = svm_solve(K_Q, y, C=C, tol=svm_tol, check_input=False,
                    backend=default_backend() if svm_backend is None else svm_backend)
    coef = Z @ svm.dual_coef  # w = Q^{-1} X^T (alpha * y)
    monitor.record(objective=svm.primal_objective, gap=svm.gap, weights=[1.0], criterion=0.0)
    if not svm.converged:
        monitor.fail(f"the SVM did not converge within {svm.n_iter} iterations at C={C:g} "
                     f"(features on a large scale? huge C?); scale the features (e.g. "
                     f"StandardScaler) or lower C")
    return monitor.finish(weights=np.ones(1), dual_coef=svm.dual_coef, intercept=svm.intercept,
                          objective=svm.primal_objective, gap=svm.gap, coef=coef,
                          alpha=svm.alpha, dual_objective=svm.dual_objective)


@_fill_doc
class QSVMClassifier(BaseMKLClassifier):
    r"""Q-SVM of [1]_: a linear SVM whose :math:`\|w\|^2` is replaced by :math:`w^\top Qw`.

    With a spatial :math:`Q=I+\mu L` (:func:`grid_laplacian`) neighbouring features get
    similar weights, giving smoother weight maps (Sec. 5.1 and Fig. 1 of [1]_); see
    :func:`qsvm_solve`.

    Parameters
    ----------
    Q : array-like or sparse matrix of shape (n_features, n_features), default=None
        Symmetric positive definite; ``None`` is the identity (the plain linear SVM).
    C : float, default=1.0
        Misclassification penalty. Must be > 0.
    svm_tol : float, default=1e-6
        KKT tolerance of the SVM solver.
    {probability}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weight vector :math:`w=Q^{-1}X^\top(\alpha\circ y)`.
    weights_ : ndarray of shape (1,)
        ``[1.0]`` (one kernel, :math:`XQ^{-1}X^\top`).
    {fitted}
    n_iter_ : int
        Always 1.
    converged_ : bool
        Whether the solver converged.
    objective_ : float
        Primal objective :math:`\frac12w^\top Qw+C\sum_i\xi_i`.
    gap_ : float
        Relative SVM duality gap.
    criterion_ : float
        The stopping value compared with ``tol`` (here ``gap_``).
    history_ : dict of ndarray
        One-row history.
    result_ : MKLResult
        The full :func:`qsvm_solve` result.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from mklcore.qmkl import QSVMClassifier, grid_laplacian
    >>> X, y = load_digits(n_class=2, return_X_y=True)
    >>> clf = QSVMClassifier(Q=grid_laplacian(8, 8, mu=10.0), C=1.0).fit(X / 16, y)
    >>> clf.coef_.shape, clf.score(X / 16, y) > 0.95
    ((64,), True)
    """

    _parameter_constraints = _QSVM_CONSTRAINTS

    def __init__(self, *, Q=None, C=1.0, svm_tol=1e-6,
                 probability=False, random_state=None):
        self.Q = Q
        self.C = C
        self.svm_tol = svm_tol
        self.probability = probability
        self.random_state = random_state

    def _fit_inputs(self, X, y):
        """The Q-SVM works on the features themselves (no kernel bank)."""
        return X

    def _solve(self, X, y):
        return qsvm_solve(X, y, self.Q, C=self.C, svm_tol=self.svm_tol, check_input=False)

    def _set_fitted(self, result):
        super()._set_fitted(result)
        self.coef_ = result.coef

    def decision_function(self, X):  # f(x) = w^T x + b
        check_is_fitted(self)
        if hasattr(self, "estimators_"):  # more than two classes, one model per class
            return self._per_class_decision(X)
        return validate_data(self, X, reset=False, dtype="numeric") @ self.coef_ + self.intercept_

    decision_function.__doc__ = BaseMKLClassifier.decision_function.__doc__


# --- Q-MKL: Algorithm 1 on the shared wrapper loop ---

class _QMKLStep(WeightStep):
    r"""Algorithm 1 of [1]_ as a weight step of :func:`mklcore.wrapper.run_wrapper`.

    The loop gives :math:`S_m=\frac12G_m(\alpha)` (unweighted); Module 2 (Eq. 8) needs
    :math:`W_m=\beta_m^2G_m\propto\beta_m^2S_m` (its minimiser ignores the scale of W).
    """

    p = 1.0  # unused: dual_norm below replaces the lp-norm of the wrapper
    method = "qmkl"
    criterion_name = "relative duality gap"

    def __init__(self, Q, beta_step):
        self.Q = Q
        self.module2 = BetaStep(Q, beta_step)
        self.label = f"QMKL (beta_step={beta_step!r})"

    def init(self, n_kernels):
        # Alg. 1, line 1: uniform weights, scaled onto the boundary of B so that J(beta)
        # is non-increasing from the first step on
        ones = np.ones(n_kernels)
        return ones / np.sqrt(ones @ self.Q @ ones)

    def dual_norm(self, S):
        # the dual value is L - sigma_B(S) (minimax theorem), so the wrapper's relative gap
        # (sigma_B(S) - beta'S) / J is the Q-MKL gap (1/2)(sigma_B(G) - beta'G) / J
        return self.module2.support(S)

    def step(self, state, oracle):
        # Alg. 1, line 5 (up to the factor 2). A weight at 0 would stay at 0 for ever (W = 0
        # takes the kernel out of Eq. (8)): a kernel dropped while alpha was partial
        # (interleaved mode, S_m = 0 then) re-enters from THETA_FLOOR once S_m > 0.
        W = np.maximum(state.theta, THETA_FLOOR) ** 2 * state.S
        try:
            return self.module2.step(W, state.theta)  # Alg. 1, line 8: Module 2
        except (RuntimeError, np.linalg.LinAlgError, ValueError) as exc:
            raise NumericalFailure(f"beta step failed: {exc}") from exc

    def result_extras(self):
        return {"beta_step_counts": dict(self.module2.counts)}


_QMKL_CONSTRAINTS = {k: COMMON_CONSTRAINTS[k] for k in
                     ("C", "tol", "max_iter", "svm_tol", "verbose")}
_QMKL_CONSTRAINTS["beta_step"] = [Options(*BETA_STEP_METHODS[:4])]
_QMKL_CONSTRAINTS["check_input"] = [bool]
_QMKL_CONSTRAINTS["mode"] = [Options("interleaved", "wrapper")]


@_fill_doc
def qmkl_solve(K, y, Q, *, C=1.0, tol=1e-4, max_iter=200, beta_step="auto", svm_tol=1e-6,
               svm_backend=None, callback=None, verbose=0, check_input=True,
               mode="interleaved"):
    r"""Solve Q-MKL by Algorithm 1 of [1]_ (alternating SVM and kernel-weight steps).

    Solves the constrained form of problem (3) of [1]_ (the regulariser as the constraint
    of its eq. (8)),

    .. math::
        \min_{\beta\ge0,\ \beta^\top Q\beta\le1} J(\beta),\qquad
        J(\beta)=\max_{0\le\alpha\le C,\ y^\top\alpha=0}
        \mathbf 1^\top\alpha-\frac12\sum_m\beta_m G_m(\alpha),

    with :math:`G_m(\alpha)=(\alpha\circ y)^\top K_m(\alpha\circ y)`. Each iteration solves the
    SVM on :math:`K_\beta=\sum_m\beta_mK_m` (Module 1, Eq. 7) and then Eq. (8) for
    :math:`\beta` with :math:`W_m=\beta_m^2G_m` (Module 2, :func:`qmkl_beta_step`); the loop is
    the one shared by every wrapper-type MKL solver (:func:`mklcore.wrapper.run_wrapper`).
    :math:`Q=\mathbf 1\mathbf 1^\top` gives l1-MKL and :math:`Q=I` l2-MKL at the same ``C``.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices (e.g. normalised to mean diagonal 1).
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    Q : array-like of shape (n_kernels, n_kernels)
        Symmetric positive semidefinite regulariser with a bounded feasible set (see
        :func:`check_q`); build it with :func:`q_from_alpha_covariance`,
        :func:`graph_laplacian` or :func:`block_diagonal_q`.
    C : float, default=1.0
        Misclassification penalty of problem (3). Must be > 0.
    {qmkl_params}
    svm_backend : str, default=None
        SVM backend of Module 1 (:func:`mklcore.svm.svm_solve`); ``None``: the default
        (compiled) engine; other backends run ``mode="wrapper"``.
    callback : callable, default=None
        ``callback(intermediate_result)`` after each outer iteration (its ``criterion`` is the
        Q-MKL relative gap); raising ``StopIteration`` stops with ``status=3``.
    mode : {"interleaved", "wrapper"}, default="interleaved"
        ``"interleaved"``: a beta step after every ``max(10, n // 20)`` SMO iterations, the
        SVM finished to ``svm_tol`` at the end (the chunking scheme of Sonnenburg et al. 2006,
        Algorithm 2, applied to Algorithm 1); ``"wrapper"``: Module 1 solves the SVM to
        ``svm_tol`` before every beta step (Algorithm 1 as written). Both stop at the same
        certified gap; the interleaved path avoids solving the SVM to full accuracy at weights
        it is about to leave.
    verbose : int, default=0
        Print progress every 10 iterations (``>= 2``: every iteration).
    check_input : bool, default=True
        Validate ``K`` and ``y`` (shapes, symmetry, PSD).

    Returns
    -------
    result : MKLResult
        Core fields (``weights`` is :math:`\beta`, ``objective`` is :math:`J(\beta)`, ``gap``
        the relative duality gap) plus ``alpha``, ``dual_objective``
        (:math:`\mathbf 1^\top\alpha-\frac12\sigma_B(G(\alpha))`), ``primal_objective`` (hinge
        primal), ``rigorous_gap`` (their difference, >= 0 for any alpha), ``n_svm_calls``,
        ``beta_step`` and ``beta_step_counts`` (how often each Module-2 solver ran, incl.
        root-finder fallbacks to the SOCP). ``history`` also holds ``dual_objective``.

    Raises
    ------
    ValueError
        For invalid parameters, kernels, labels, or a ``Q`` that is not symmetric positive
        semidefinite or leaves the weights unbounded (a bare Laplacian).

    Notes
    -----
    A weight that reaches 0 stays 0; ``J`` is non-increasing when the SVM is solved exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.qmkl import qmkl_solve, graph_laplacian
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)); y = np.sign(X[:, 0] + 0.1)
    >>> K = np.stack([np.outer(X[:, j], X[:, j]) for j in range(3)])
    >>> Q = graph_laplacian(np.ones((3, 3)))
    >>> res = qmkl_solve(K, y, Q, C=1.0)
    >>> res.success, int(np.argmax(res.weights))
    (True, 0)
    """
    validate_params("qmkl_solve", _QMKL_CONSTRAINTS, {
        "C": C, "tol": tol, "max_iter": max_iter, "svm_tol": svm_tol, "beta_step": beta_step,
        "verbose": verbose, "check_input": check_input, "mode": mode})
    if check_input:
        K = check_kernel_stack(K, y, thorough=False)
        y, _ = check_binary_labels(y, "qmkl_solve")
    else:
        K = np.asarray(K)
        y = np.asarray(y, dtype=float)
    Q = check_q(Q, K.shape[0], owner="qmkl_solve")
    step = _QMKLStep(Q, beta_step)
    backend = default_backend() if svm_backend is None else svm_backend
    if backend != "smo":
        mode = "wrapper"  # other backends cannot be interleaved
    result = run_wrapper(K, y, step, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                         svm_backend=backend, callback=callback, verbose=verbose,
                         extras={"beta_step": beta_step}, mode=mode,
                         mkl_every=max(10, K.shape[1] // 20) if mode == "interleaved" else None)
    return result


@_fill_doc
class QMKLClassifier(BaseMKLClassifier):
    r"""Q-MKL classifier of [1]_: MKL with the kernel-weight regulariser :math:`\beta^\top Q\beta`.

    Parameters
    ----------
    kernels : list, default=None
        Kernel bank (see :func:`mklcore.kernels.kernel_bank`); ``None``: a linear and a
        Gaussian kernel.
    Q : array-like of shape (n_kernels, n_kernels) or str, default=None
        The regulariser. An array is used as given (see :func:`check_q`); ``None`` or
        ``"identity"`` is :math:`I` (l2-MKL); ``"ones"`` is :math:`\mathbf 1\mathbf 1^\top`
        (l1-MKL); ``"block"`` is the block-of-ones matrix of ``groups``; ``"cov"``, ``"lap"``,
        ``"lap+block"`` are built in ``fit`` from single-kernel SVMs on the training data
        (:func:`q_from_alpha_covariance`, Table 1 of [1]_).
    C : float, default=1.0
        Misclassification penalty. Must be > 0.
    groups : array-like of shape (n_kernels,), default=None
        Group (modality / view) of each kernel, for ``Q="block"`` and ``"lap+block"``.
    normalize : {"trace", "cosine"} or None, default=None
        Normalisation of each kernel, fitted on the training data.
    {qmkl_params}
    verbose : int, default=0
        Progress lines (``1``: every 10 iterations).
    {probability}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`\beta` (with :math:`\beta^\top Q\beta=1`).
    Q_ : ndarray of shape (n_kernels, n_kernels)
        The regulariser used.
    {fitted}
    n_iter_ : int
        Number of outer iterations.
    converged_ : bool
        Whether the relative gap reached ``tol``.
    objective_ : float
        :math:`J(\beta)`.
    gap_ : float
        Relative duality gap.
    criterion_ : float
        The stopping value compared with ``tol`` (``result_.criterion_name`` says which).
    history_ : dict of ndarray
        Per-iteration ``objective``, ``gap``, ``weights``, ``time``, ``dual_objective``...
    result_ : MKLResult
        The full :func:`qmkl_solve` result.
    kernel_bank_ : KernelBank
        The fitted kernel bank.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from mklcore.qmkl import QMKLClassifier
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> clf = QMKLClassifier(Q="ones", C=1.0).fit(X, y)
    >>> clf.weights_.shape, bool(abs(clf.weights_.sum() - 1) < 1e-8)
    ((2,), True)
    """

    _parameter_constraints = {k: COMMON_CONSTRAINTS[k] for k in
                              ("C", "normalize", "tol", "max_iter", "svm_tol", "verbose")}
    _parameter_constraints.update({
        "kernels": [list, tuple, None],
        "Q": [Options("identity", "ones", "block", "cov", "lap", "lap+block"), np.ndarray,
              list, None],
        "groups": [list, tuple, np.ndarray, None],
        "beta_step": [Options(*BETA_STEP_METHODS[:4])],
    })

    def __init__(self, *, kernels=None, Q=None, C=1.0, groups=None, normalize=None, tol=1e-4,
                 max_iter=200, beta_step="auto", svm_tol=1e-6, verbose=0,
                 probability=False, random_state=None):
        # store every argument unchanged (the outermost iterable is evaluated here)
        self._store_params(locals())

    def _make_q(self, K, y):
        M = K.shape[0]
        if self.Q is None or (isinstance(self.Q, str) and self.Q == "identity"):
            return np.eye(M)
        if isinstance(self.Q, str):
            if self.Q == "ones":
                return np.ones((M, M))
            _check_groups(self.groups, M, self.Q in ("block", "lap+block") and f"Q={self.Q!r}",
                          type(self).__name__)
            if self.Q == "block":
                return block_diagonal_q(self.groups, add_identity=False)
            return q_from_alpha_covariance(K, y, kind=self.Q, groups=self.groups, C=self.C,
                                           svm_tol=self.svm_tol)
        return check_q(self.Q, M, owner=type(self).__name__)

    def _solve(self, K, y):
        self.Q_ = self._make_q(K, y)
        return qmkl_solve(K, y, self.Q_, C=self.C, tol=self.tol, max_iter=self.max_iter,
                          beta_step=self.beta_step, svm_tol=self.svm_tol, verbose=self.verbose,
                          check_input=False)
