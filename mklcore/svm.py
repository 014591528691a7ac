r"""The inner C-SVM on a precomputed kernel, shared by every SVM-based MKL solver.

Every wrapper-type MKL method (SimpleMKL, SILP, lp-norm MKL, Q-MKL, localized MKL)
alternates between an SVM on the combined kernel
:math:`K_\theta = \sum_m \theta_m K_m` and an update of the weights. The update
needs, per kernel, the quadratic term

.. math::
    q_m(\alpha) = \alpha^\top Y K_m Y \alpha = (\alpha\circ y)^\top K_m (\alpha\circ y),

(Kloft et al. 2009, Sec. 1.1 of our spec: :math:`S_m = q_m/2`). :func:`svm_solve` trains the
SVM and returns those terms in one call, so that MKL modules never touch the SVM backend.

Backends are pluggable: ``backend="libsvm"`` (scikit-learn's ``SVC(kernel="precomputed")``)
is the default. A warm-startable solver can be added with :func:`register_backend`; it
receives ``alpha0`` (the previous solution) and MKL modules need no change.
"""

import numpy as np
from sklearn.svm import SVC

from ._result import MKLResult
from ._validation import Interval, check_binary_labels, validate_params

__all__ = ["svm_solve", "combine_kernels", "kernel_quadratic_terms", "register_backend",
           "available_backends", "svm_dual_objective", "svm_primal_objective", "relative_gap"]

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


def available_backends():
    """Names of the registered SVM backends."""
    return sorted(_BACKENDS)


def _libsvm(K, y, C, tol, alpha0, max_iter, cache_size=500):
    """LIBSVM through scikit-learn (no warm start: ``alpha0`` is ignored)."""
    svc = SVC(kernel="precomputed", C=C, tol=tol, max_iter=max_iter, cache_size=cache_size)
    svc.fit(K, y)
    alpha = np.zeros(y.shape[0])
    # sklearn: decision_function = dual_coef_ @ K[support_] + intercept_, dual_coef_ = alpha*y
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    # guard the box against round-off
    np.clip(alpha, 0.0, C, out=alpha)
    n_iter = int(np.sum(svc.n_iter_)) if hasattr(svc, "n_iter_") else -1
    return alpha, float(svc.intercept_[0]), n_iter


register_backend("libsvm", _libsvm)


def combine_kernels(K, weights, out=None):
    """Return ``sum_m weights[m] * K[m]``, skipping zero weights.

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
    weights = np.asarray(weights, dtype=float)
    if out is None:
        out = np.zeros(K.shape[1:], dtype=np.float64)
    active = np.flatnonzero(weights)
    if (active.size == weights.size > 1 and K.dtype == np.float64 and K.flags.c_contiguous
            and out.flags.c_contiguous and out.dtype == np.float64):
        # all weights non-zero: one BLAS pass over the stack instead of M temporaries
        np.dot(weights, K.reshape(K.shape[0], -1), out=out.reshape(-1))
        return out
    out[...] = 0.0
    for m in active:
        out += weights[m] * K[m]  # upcasts float32 stacks
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
    r"""SVM primal value at the dual point: :math:`\frac12\sum_m\theta_m q_m + C\sum_i\max(0, 1-y_if_i)`.

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


def svm_solve(K, y, *, weights=None, C=1.0, tol=1e-3, alpha0=None, backend="libsvm",
              max_iter=-1, K_combined=None):
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
        Warm start, used by backends that support it (``libsvm`` ignores it).
    backend : str, default="libsvm"
        One of :func:`available_backends`.
    max_iter : int, default=-1
        Cap on the backend's iterations (-1: none).
    K_combined : ndarray of shape (n, n), default=None
        The combined kernel if the caller already has it (saves one pass over K).

    Returns
    -------
    result : MKLResult
        ``alpha`` (unsigned, 0 <= alpha <= C), ``dual_coef`` (``alpha * y``), ``intercept``,
        ``dual_objective``, ``primal_objective`` (hinge primal at ``w`` implied by alpha),
        ``gap`` (their relative difference, the SVM's optimality certificate),
        ``q`` (per-kernel quadratic terms, shape (n_kernels,)), ``decision_train``
        (f on the training points), ``support`` (indices with alpha > 0), ``n_iter`` and
        ``backend``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.svm import svm_solve
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1, -1, 1, 1])
    >>> res = svm_solve(X @ X.T, y, C=10.0)
    >>> np.sign(X @ X.T @ res.dual_coef + res.intercept).tolist()
    [-1.0, -1.0, 1.0, 1.0]
    """
    validate_params("svm_solve", _SVM_CONSTRAINTS, {"C": C, "tol": tol})
    if backend not in _BACKENDS:
        raise ValueError(f"Unknown SVM backend {backend!r}; available: {available_backends()}.")
    K = np.asarray(K)
    if K.ndim == 2:
        K = K[None]
    y = np.asarray(y)
    if not np.all(np.isin(y, (-1, 1))):
        y, _ = check_binary_labels(y, "svm_solve")
    y = y.astype(float)
    if weights is None:
        weights = np.ones(K.shape[0])
    weights = np.asarray(weights, dtype=float)
    if K_combined is None:
        K_combined = combine_kernels(K, weights)
    alpha, intercept, n_iter = _BACKENDS[backend](
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
        backend=backend)


# ---------------------------------------------------------------------------
# the lean LIBSVM backend
# ---------------------------------------------------------------------------

#: name of the lean LIBSVM backend (LIBSVM without scikit-learn's per-call input checks)
LEAN_BACKEND = "libsvm_lean"

#: whether scikit-learn's private LIBSVM binding works as expected (``None``: not checked yet)
_LEAN_STATUS = {"available": None}


def _libsvm_lean_fit(K, y, C, tol, max_iter):
    """One call of scikit-learn's LIBSVM binding with the arguments ``SVC.fit`` passes."""
    from sklearn.svm import _libsvm

    _libsvm.set_verbosity_wrap(0)  # as SVC(verbose=False) does before every fit
    y01 = np.ascontiguousarray(y > 0, dtype=np.float64)  # SVC's encoding: classes_ = (-1, +1)
    out = _libsvm.fit(
        K, y01, svm_type=0, sample_weight=np.empty(0), class_weight=np.ones(2),
        kernel="precomputed", C=C, nu=0.5, probability=0, degree=3, shrinking=1, tol=tol,
        cache_size=500, coef0=0.0, gamma=0.0, epsilon=0.1, max_iter=max_iter, random_seed=0)
    support, sv_coef, intercept, n_iter = out[0], out[3], out[4], out[-1]
    alpha = np.zeros(y.shape[0])
    alpha[support] = np.abs(sv_coef[0])  # SVC: dual_coef_ = -sv_coef = alpha * y
    np.clip(alpha, 0.0, C, out=alpha)
    return alpha, float(-intercept[0]), int(np.sum(n_iter))


def lean_backend_available():
    """Whether the lean LIBSVM backend works with the installed scikit-learn.

    The first call fits one 2 x 2 SVM through scikit-learn's private LIBSVM binding and
    checks its solution; the answer is cached, so importing :mod:`mklcore.svm` fits nothing.

    Returns
    -------
    available : bool
    """
    if _LEAN_STATUS["available"] is None:
        try:
            K = np.array([[1.0, 0.0], [0.0, 1.0]])
            alpha, _, _ = _libsvm_lean_fit(K, np.array([-1.0, 1.0]), 1.0, 1e-3, -1)
            _LEAN_STATUS["available"] = bool(np.allclose(alpha, 1.0))
        except Exception:  # pragma: no cover - a future scikit-learn changed its binding
            _LEAN_STATUS["available"] = False
    return _LEAN_STATUS["available"]


def libsvm_lean(K, y, C, tol, alpha0, max_iter):
    """LIBSVM on a precomputed kernel, called as ``SVC(kernel="precomputed").fit`` calls it.

    Solvers that train hundreds of small SVMs per fit (localized MKL) pay more for the input
    validation of ``SVC.fit`` (several milliseconds per call) than for LIBSVM itself below n
    of a few hundred. This backend calls scikit-learn's LIBSVM binding with the arguments
    ``SVC`` passes, so the solution is the same as that of ``backend="libsvm"``; the inputs
    must already be valid (:func:`svm_solve` passes a C-contiguous float64 kernel and labels
    in {-1, +1}). Registered as :data:`LEAN_BACKEND`; see :func:`register_backend` for the
    calling convention.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Combined kernel, C-contiguous float64.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
        Box constraint.
    tol : float
        KKT tolerance of LIBSVM.
    alpha0 : ndarray of shape (n,) or None
        Ignored (LIBSVM cannot warm-start).
    max_iter : int
        Cap on LIBSVM's iterations (-1: none).

    Returns
    -------
    alpha : ndarray of shape (n,)
        Unsigned dual variables, ``0 <= alpha <= C``.
    intercept : float
        Bias ``b`` of ``f = K (alpha * y) + b``.
    n_iter : int
        LIBSVM's iteration count.

    Raises
    ------
    RuntimeError
        If the installed scikit-learn's binding does not behave as expected
        (:func:`lean_backend_available` is False); use ``backend="libsvm"``.
    """
    if not lean_backend_available():  # pragma: no cover - depends on scikit-learn internals
        raise RuntimeError(f"The {LEAN_BACKEND!r} SVM backend does not work with this "
                           f"scikit-learn version; use backend='libsvm'.")
    return _libsvm_lean_fit(K, y, C, tol, max_iter)


def default_backend():
    """Fastest working LIBSVM backend: :data:`LEAN_BACKEND` if available, else ``"libsvm"``.

    Returns
    -------
    name : str
        A name of :func:`available_backends`.
    """
    return LEAN_BACKEND if lean_backend_available() else "libsvm"


register_backend(LEAN_BACKEND, libsvm_lean)
__all__ += ["LEAN_BACKEND", "libsvm_lean", "lean_backend_available", "default_backend"]
