r"""The SVM engines shared by every SVM-based MKL solver.

Wrapper-type MKL methods alternate an SVM on :math:`K_\theta = \sum_m \theta_m K_m` with a
weight update that needs the per-kernel terms
:math:`q_m(\alpha) = (\alpha\circ y)^\top K_m (\alpha\circ y)` (so that
:math:`\|w_m\|^2=\theta_m^2q_m`; Kloft et al. 2009, Sec. 2). :func:`svm_solve` trains the SVM
and returns those terms in one call, so that MKL modules never touch the SVM backend. Its
backends: ``"smo"`` (default; the compiled engine of :mod:`mklcore.smo`, which every SVM-based
solver of mklcore uses, warm-startable), ``"libsvm"`` (scikit-learn's public
``SVC(kernel="precomputed")``, the independent reference) and any solver added with
:func:`register_backend`. Importing the module registers nothing and compiles nothing.
"""

import numpy as np

from ._result import MKLResult
from ._validation import (Interval, check_binary_labels, check_dense, check_kernel_stack,
                          validate_params)

__all__ = ["svm_solve", "combine_kernels", "kernel_quadratic_terms", "register_backend",
           "available_backends", "libsvm_intercept", "BUILTIN_BACKENDS", "default_backend",
           "default_svm_max_iter",
           "svm_dual_objective", "svm_primal_objective", "relative_gap"]

#: backends added by :func:`register_backend` (name -> solver); the built-in ones are in
#: :data:`BUILTIN_BACKENDS`
_BACKENDS = {}


def register_backend(name, solver):
    """Register an SVM backend.

    Parameters
    ----------
    name : str
        Name used as ``svm_solve(..., backend=name)``.
    solver : callable
        ``solver(K, y, C, tol, alpha0, max_iter) -> (alpha, intercept, n_iter)`` where ``K`` is the
        combined (n, n) kernel, ``y`` in {-1, +1}, ``alpha`` the unsigned dual variables
        (0 <= alpha <= C, y @ alpha = 0), ``intercept`` the bias ``b`` of ``f = K (alpha*y) + b``.
        ``alpha0`` is a warm start (may be ignored) and ``max_iter`` a cap (-1: none).
    """
    if not callable(solver):
        raise TypeError(f"solver must be callable; got {type(solver).__name__}.")
    _BACKENDS[name] = solver


def _backend(name):
    """The solver of backend ``name`` (registered ones first, then the built-in ones)."""
    solver = _BACKENDS.get(name, BUILTIN_BACKENDS.get(name))
    if solver is None:
        raise ValueError(f"Unknown SVM backend {name!r}; available: {available_backends()}.")
    return solver


def available_backends():
    """Names of the SVM backends: the built-in ones and those registered.

    Returns
    -------
    names : list of str
        Sorted backend names accepted by :func:`svm_solve`.
    """
    return sorted(set(BUILTIN_BACKENDS) | set(_BACKENDS))


def _libsvm(K, y, C, tol, alpha0, max_iter):
    """LIBSVM through scikit-learn's public ``SVC(kernel="precomputed")`` (no warm start:
    ``alpha0`` is ignored); the independent reference the engine is tested against."""
    from sklearn.svm import SVC

    svc = SVC(kernel="precomputed", C=C, tol=tol, max_iter=max_iter)
    svc.fit(K, y)
    alpha = np.zeros(y.shape[0])
    # sklearn: decision_function = dual_coef_ @ K[support_] + intercept_, dual_coef_ = alpha*y
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    # guard the box against round-off
    np.clip(alpha, 0.0, C, out=alpha)
    n_iter = int(np.sum(svc.n_iter_)) if hasattr(svc, "n_iter_") else -1
    return alpha, float(svc.intercept_[0]), n_iter


def default_svm_max_iter(n_samples):
    """The default cap on the iterations of one SVM solve: ``max(10**6, 100 * n_samples)``.

    Parameters
    ----------
    n_samples : int

    Returns
    -------
    max_iter : int
    """
    return max(10 ** 6, 100 * int(n_samples))


def _smo(K, y, C, tol, alpha0, max_iter):
    """The compiled engine (:func:`mklcore.smo.smo_solve`) on one kernel, warm-started from
    ``alpha0`` when it is feasible."""
    from .smo import KernelRows, smo_solve

    if alpha0 is not None:
        alpha0 = np.clip(np.asarray(alpha0, dtype=float), 0.0, C)
        if alpha0.shape != y.shape or abs(float(y @ alpha0)) > 1e-10 * max(C, 1.0) * y.size:
            alpha0 = None  # not feasible: cold start
    cap = default_svm_max_iter(y.size) if max_iter is None or max_iter < 0 else max_iter
    sol, _ = smo_solve(KernelRows(K), y, C, alpha0=alpha0, tol=tol, max_iter=cap)
    return sol.alpha, sol.intercept, sol.n_iter


def default_backend():
    """The default SVM backend of mklcore: ``"smo"``, the compiled engine.

    Returns
    -------
    name : str
        A name of :func:`available_backends`.
    """
    return "smo"


#: the built-in backends of :func:`svm_solve` (name -> solver with the signature of
#: :func:`register_backend`): ``"smo"`` (mklcore's compiled engine, warm-startable) and
#: ``"libsvm"`` (scikit-learn's SVC, the reference); a constant, so importing the module
#: registers nothing
BUILTIN_BACKENDS = {"smo": _smo, "libsvm": _libsvm}


def libsvm_intercept(alpha, y, grad, C):
    r"""LIBSVM's bias :math:`b=-\rho` of an SVM dual solution.

    With the gradient :math:`\nabla=Q\alpha-\mathbf 1` of the dual
    :math:`\frac12\alpha^\top Q\alpha-\mathbf1^\top\alpha` (:math:`Q=YKY`), :math:`\rho` is the
    mean of :math:`y_i\nabla_i` over the free support vectors (:math:`0<\alpha_i<C`); without
    free support vectors it is the midpoint of the interval that the KKT conditions allow,
    :math:`\frac12(\min_{i\in U}y_i\nabla_i+\max_{i\in L}y_i\nabla_i)` with
    :math:`U=\{\alpha_i=C, y_i=-1\}\cup\{\alpha_i=0, y_i=+1\}` and
    :math:`L=\{\alpha_i=C, y_i=+1\}\cup\{\alpha_i=0, y_i=-1\}`, as LIBSVM computes it
    (Chang & Lin 2011), or the end of that interval that exists if it is one-sided.

    Parameters
    ----------
    alpha : ndarray of shape (n,)
        Unsigned dual variables, ``0 <= alpha <= C``.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    grad : ndarray of shape (n,)
        Gradient :math:`Q\alpha-\mathbf 1` of the dual at ``alpha``.
    C : float or ndarray of shape (n,)
        Box constraint.

    Returns
    -------
    intercept : float
        The bias ``b`` of ``f(x) = sum_i alpha_i y_i k(x_i, x) + b``.
    """
    from .smo import svm_bias  # the engine's rule (no numba import)

    return svm_bias(alpha, y, grad, C)


def combine_kernels(K, weights, out=None):
    """Return ``sum_m weights[m] * K[m]``, skipping zero weights: the one weighted kernel sum.

    Compiled (:func:`mklcore.loops.weighted_sum`): per entry ``0 + w_1 K_1 + w_2 K_2 + ...`` in
    the order of ``weights``, with correctly rounded products and sums (no BLAS, never fused
    or threaded), so the same bits on every processor, BLAS and thread count; one pass over
    the stack (blocks of rows stay in cache while each kernel streams). float32 stacks are
    upcast exactly.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_rows, n_cols)
    weights : array-like of shape (n_kernels,)
    out : ndarray of shape (n_rows, n_cols), optional
        Output buffer (float64).

    Returns
    -------
    K_theta : ndarray of shape (n_rows, n_cols), float64
    """
    from .loops import weighted_sum

    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if out is None:
        out = np.empty(K.shape[1:], dtype=np.float64)
    target = out if out.flags.c_contiguous and out.dtype == np.float64 else np.empty(
        K.shape[1:], dtype=np.float64)
    if K.dtype not in (np.float64, np.float32):
        K = K.astype(np.float64)
    K = K if K.flags.c_contiguous else np.ascontiguousarray(K)
    weighted_sum(K, weights, np.flatnonzero(weights).astype(np.int64), target)
    if target is not out:
        out[...] = target
    return out


def kernel_quadratic_terms(K, coef):
    r"""Per-kernel quadratic terms :math:`q_m = c^\top K_m c` for a coefficient vector ``c``.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n)
    coef : ndarray of shape (n,)
        Usually the signed dual coefficients ``alpha * y``.

    Returns
    -------
    q : ndarray of shape (n_kernels,)
        Clipped at 0 (round-off can make them slightly negative).
    """
    coef = np.asarray(coef, dtype=float)
    support = np.flatnonzero(coef)
    if support.size == 0:
        return np.zeros(K.shape[0])
    if support.size < 0.15 * coef.size:
        # few support vectors: gather the (support x support) blocks kernel by kernel
        # (gathering is ~30x dearer per entry than streaming, hence the low threshold)
        c = coef[support]
        block = np.ix_(support, support)
        q = np.array([c @ (K[m][block] @ c) for m in range(K.shape[0])], dtype=float)
    else:
        n_kernels, n = K.shape[0], K.shape[1]
        Kc = (K.reshape(n_kernels * n, n) @ coef.astype(K.dtype)).reshape(n_kernels, n)
        q = Kc.astype(float) @ coef
    return np.maximum(q, 0.0)


def svm_dual_objective(alpha, q, weights):
    r"""SVM dual value :math:`\mathbf 1^\top\alpha - \frac12\sum_m \theta_m q_m`."""
    return float(np.sum(alpha) - 0.5 * np.dot(weights, q))


def svm_primal_objective(q, weights, y, decision, C):
    r"""SVM primal value :math:`\frac12\sum_m\theta_m q_m + C\sum_i\max(0, 1-y_if_i)`.

    With :math:`w_m=\theta_m\sum_i\alpha_iy_i\psi_m(x_i)` this is the primal objective of the
    SVM on :math:`K_\theta` (and of MKL problem (6) of Kloft et al. for fixed :math:`\theta`), an
    upper bound on the optimum for any feasible alpha.
    """
    hinge = np.maximum(0.0, 1.0 - y * decision)
    return float(0.5 * np.dot(weights, q) + C * hinge.sum())


def relative_gap(primal, dual):
    """Relative duality gap ``(primal - dual) / |primal|`` (``nan`` if primal is 0)."""
    if primal == 0:
        return float("nan")
    return float((primal - dual) / abs(primal))


_SVM_CONSTRAINTS = {
    "C": [Interval("real", 0, None, closed="neither")],
    "tol": [Interval("real", 0, None, closed="neither")],
}


def svm_solve(K, y, *, weights=None, C=1.0, tol=1e-3, alpha0=None, backend="smo",
              max_iter=-1, K_combined=None, check_input=True):
    r"""Train a C-SVM on a (combined) precomputed kernel.

    Solves the SVM dual

    .. math::
        \max_{0\le\alpha\le C,\ y^\top\alpha=0}\ \mathbf 1^\top\alpha
        - \tfrac12 \alpha^\top Y K_\theta Y\alpha, \qquad K_\theta=\sum_m\theta_m K_m,

    and returns, besides alpha and the bias, the per-kernel quadratic terms
    :math:`q_m=\alpha^\top Y K_m Y\alpha` that every MKL weight update needs.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n) or (n, n)
        Gram matrices (unweighted).
    y : array-like of shape (n,)
        Labels in {-1, +1} (other binary labels are mapped, larger = +1).
    weights : array-like of shape (n_kernels,), default=None
        Kernel weights :math:`\theta`; all ones by default.
    C : float, default=1.0
        Box constraint. Must be > 0.
    tol : float, default=1e-3
        KKT tolerance of the backend (LIBSVM's maximal-violating-pair gap).
    alpha0 : ndarray of shape (n,), default=None
        Warm start, used by backends that support it (``"smo"`` does; ``"libsvm"`` ignores
        it).
    backend : str, default="smo"
        One of :func:`available_backends`: ``"smo"``, the compiled engine of
        :mod:`mklcore.smo`, or ``"libsvm"``, scikit-learn's ``SVC(kernel="precomputed")``.
    max_iter : int, default=-1
        Cap on the backend's iterations; -1: :func:`default_svm_max_iter` for ``"smo"``,
        LIBSVM's own cap for ``"libsvm"``.
    K_combined : ndarray of shape (n, n), default=None
        The combined kernel if the caller already has it (saves one pass over K).
    check_input : bool, default=True
        Check ``K`` (shape, finiteness, symmetry and positive semidefiniteness, sampled: see
        :func:`mklcore._validation.check_kernel_stack`) and ``weights`` (finite,
        non-negative, one per kernel); False for callers that already did.

    Returns
    -------
    result : MKLResult
        ``alpha`` (unsigned, 0 <= alpha <= C), ``dual_coef`` (``alpha * y``), ``intercept``,
        ``dual_objective``, ``primal_objective`` (hinge primal at ``w`` implied by alpha),
        ``gap`` (their relative difference, the SVM's optimality certificate),
        ``q`` (per-kernel quadratic terms, shape (n_kernels,)), ``decision_train``
        (f on the training points), ``support`` (indices with alpha > 0), ``n_iter``,
        ``converged`` (False when the backend stopped at its iteration cap) and ``backend``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.svm import svm_solve
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1, -1, 1, 1])
    >>> res = svm_solve(X @ X.T, y, C=10.0)
    >>> np.sign(X @ X.T @ res.dual_coef + res.intercept).tolist()
    [-1.0, -1.0, 1.0, 1.0]
    """
    if not (isinstance(C, float) and isinstance(tol, float)
            and 0.0 < C < np.inf and 0.0 < tol < np.inf):  # else the full check (and message)
        validate_params("svm_solve", _SVM_CONSTRAINTS, {"C": C, "tol": tol})
    solver = _backend(backend)
    y = np.asarray(check_dense(y, "y"))
    if check_input:
        K = check_kernel_stack(check_dense(K, "K"), y, thorough=False)
    K = np.asarray(check_dense(K, "K"))
    if K.ndim == 2:
        K = K[None]
    if y.dtype.kind in "fiu":  # numbers: the test of np.isin(y, (-1, 1)), without its setup
        pm_one = bool(np.all((y == 1) | (y == -1)))
    else:
        pm_one = bool(np.all(np.isin(y, (-1, 1))))
    if not pm_one:
        y, _ = check_binary_labels(y, "svm_solve")
    y = y.astype(float)
    if weights is None:
        weights = np.ones(K.shape[0])
    weights = np.asarray(weights, dtype=float)
    if check_input and (weights.shape != (K.shape[0],) or not np.all(np.isfinite(weights))
                        or np.any(weights < 0)):
        raise ValueError(f"weights must hold {K.shape[0]} finite non-negative numbers, one per "
                         f"kernel; got {np.asarray(weights).tolist()[:8]}.")
    if K_combined is None:
        K_combined = combine_kernels(K, weights)
    alpha, intercept, n_iter = solver(
        np.ascontiguousarray(K_combined, dtype=np.float64), y, float(C), float(tol), alpha0,
        max_iter)
    coef = alpha * y
    q = kernel_quadratic_terms(K, coef)
    decision_train = K_combined @ coef + intercept
    dual = svm_dual_objective(alpha, q, weights)
    primal = svm_primal_objective(q, weights, y, decision_train, C)
    return MKLResult(
        alpha=alpha, dual_coef=coef, intercept=intercept, dual_objective=dual,
        primal_objective=primal, gap=relative_gap(primal, dual), q=q,
        decision_train=decision_train, support=np.flatnonzero(alpha > 0), n_iter=n_iter,
        converged=bool(n_iter < (max_iter if max_iter is not None and max_iter > 0 else
                                 default_svm_max_iter(y.size) if backend == "smo" else np.inf)),
        backend=backend)
