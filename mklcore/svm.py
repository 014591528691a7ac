r"""The SVM engines shared by every SVM-based MKL solver.

Wrapper-type MKL methods alternate an SVM on :math:`K_\theta = \sum_m \theta_m K_m` with a
weight update that needs the per-kernel terms
:math:`q_m(\alpha) = (\alpha\circ y)^\top K_m (\alpha\circ y)` (so that
:math:`\|w_m\|^2=\theta_m^2q_m`; Kloft et al. 2009, Sec. 2). :func:`svm_solve` trains the SVM
and returns those terms in one call, so that MKL modules never touch the SVM backend. The
engines: the backends of :func:`svm_solve` (``"libsvm"``, scikit-learn's
``SVC(kernel="precomputed")``; :data:`LEAN_BACKEND`, the same LIBSVM without scikit-learn's
per-call checks; any solver added with :func:`register_backend`, which receives the previous
solution ``alpha0`` as a warm start), :class:`CachedSMO` (a warm-startable SMO with per-kernel
gradient caches, the engine of the interleaved MKL scheme) and :func:`libsvm_intercept`
(LIBSVM's bias rule). Importing the module registers nothing and loads no SVM library.
"""

import warnings

import numpy as np

from ._result import MKLResult
from ._validation import Interval, check_binary_labels, check_dense, validate_params

__all__ = ["svm_solve", "combine_kernels", "kernel_quadratic_terms", "register_backend",
           "available_backends", "libsvm_intercept", "CachedSMO", "BUILTIN_BACKENDS",
           "LEAN_BACKEND", "libsvm_lean", "lean_backend_available", "default_backend",
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


def _libsvm(K, y, C, tol, alpha0, max_iter, cache_size=500):
    """LIBSVM as ``SVC(kernel="precomputed").fit`` runs it (no warm start: ``alpha0`` is
    ignored).

    When the lean binding works and the inputs are ones ``SVC.fit`` accepts (a finite square
    float64 ``K``, both classes in ``y``, an integer ``max_iter >= -1``, the default cache),
    LIBSVM is called directly with the arguments ``SVC.fit`` passes, so the same solution, the
    same ``ConvergenceWarning`` and the same error on a non-finite solution, without
    scikit-learn's per-call input validation (which costs more than LIBSVM on small
    problems). Anything else goes through ``SVC.fit`` itself, with its checks and errors.
    """
    if (cache_size == 500 and isinstance(max_iter, (int, np.integer))
            and not isinstance(max_iter, bool) and max_iter >= -1 and K.ndim == 2
            and K.shape == (y.shape[0], y.shape[0]) and K.dtype == np.float64
            and K.flags.c_contiguous and np.any(y > 0) and np.any(y <= 0)
            and np.isfinite(K).all() and lean_backend_available()):
        alpha, intercept, n_iter, status, finite = _libsvm_lean_call(K, y, C, tol, max_iter)
        if status == 1:
            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f"Solver terminated early (max_iter={max_iter}).  Consider "
                          f"pre-processing your data with StandardScaler or MinMaxScaler.",
                          ConvergenceWarning, stacklevel=2)
        if not finite:
            raise ValueError("The dual coefficients or intercepts are not finite. The input "
                             "data may contain large values and need to be preprocessed.")
        return alpha, intercept, n_iter
    from sklearn.svm import SVC

    svc = SVC(kernel="precomputed", C=C, tol=tol, max_iter=max_iter, cache_size=cache_size)
    svc.fit(K, y)
    alpha = np.zeros(y.shape[0])
    # sklearn: decision_function = dual_coef_ @ K[support_] + intercept_, dual_coef_ = alpha*y
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    # guard the box against round-off
    np.clip(alpha, 0.0, C, out=alpha)
    n_iter = int(np.sum(svc.n_iter_)) if hasattr(svc, "n_iter_") else -1
    return alpha, float(svc.intercept_[0]), n_iter


#: name of the lean LIBSVM backend (LIBSVM without scikit-learn's per-call input checks)
LEAN_BACKEND = "libsvm_lean"

#: whether scikit-learn's private LIBSVM binding works as expected (``None``: not checked yet)
_LEAN_STATUS = {"available": None}


def _libsvm_lean_call(K, y, C, tol, max_iter):
    """One call of scikit-learn's LIBSVM binding with the arguments ``SVC.fit`` passes.

    Returns ``(alpha, intercept, n_iter, fit_status, finite)``: ``fit_status`` 1 when LIBSVM
    stopped at ``max_iter``, ``finite`` whether its coefficients and bias are finite.
    """
    from sklearn.svm import _libsvm

    _libsvm.set_verbosity_wrap(0)  # as SVC(verbose=False) does before every fit
    y01 = np.ascontiguousarray(y > 0, dtype=np.float64)  # SVC's encoding: classes_ = (-1, +1)
    out = _libsvm.fit(
        K, y01, svm_type=0, sample_weight=np.empty(0), class_weight=np.ones(2),
        kernel="precomputed", C=C, nu=0.5, probability=0, degree=3, shrinking=1, tol=tol,
        cache_size=500, coef0=0.0, gamma=0.0, epsilon=0.1, max_iter=max_iter, random_seed=0)
    support, sv_coef, intercept, status, n_iter = out[0], out[3], out[4], out[7], out[-1]
    finite = bool(np.isfinite(intercept).all() and np.isfinite(sv_coef).all())
    alpha = np.zeros(y.shape[0])
    alpha[support] = np.abs(sv_coef[0])  # SVC: dual_coef_ = -sv_coef = alpha * y
    np.clip(alpha, 0.0, C, out=alpha)
    return alpha, float(-intercept[0]), int(np.sum(n_iter)), int(status), finite


def _libsvm_lean_fit(K, y, C, tol, max_iter):
    """One call of scikit-learn's LIBSVM binding: ``(alpha, intercept, n_iter)``."""
    return _libsvm_lean_call(K, y, C, tol, max_iter)[:3]


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

    For solvers that train hundreds of small SVMs per fit (localized MKL), where the input
    validation of ``SVC.fit`` costs more than LIBSVM itself: the same solution as
    ``backend="libsvm"``, but the inputs must already be valid (as :func:`svm_solve` passes
    them). The built-in backend :data:`LEAN_BACKEND`.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Combined kernel, C-contiguous float64.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C, tol : float
        Box constraint and KKT tolerance.
    alpha0 : ndarray of shape (n,) or None
        Ignored (LIBSVM cannot warm-start).
    max_iter : int
        Cap on LIBSVM's iterations (-1: none).

    Returns
    -------
    alpha, intercept, n_iter
        Unsigned dual variables, bias ``b`` of ``f = K (alpha * y) + b`` and LIBSVM's
        iteration count (see :func:`register_backend`).

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


#: the built-in backends of :func:`svm_solve` (name -> solver with the signature of
#: :func:`register_backend`); a constant, so importing the module registers nothing
BUILTIN_BACKENDS = {"libsvm": _libsvm, LEAN_BACKEND: libsvm_lean}


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
    yG = y * grad
    at_ub, at_lb = alpha >= C, alpha <= 0
    free = ~(at_ub | at_lb)
    if np.any(free):
        rho = float(np.mean(yG[free]))
    else:
        ypos = y > 0
        ub_mask = (at_ub & ~ypos) | (at_lb & ypos)
        lb_mask = (at_ub & ypos) | (at_lb & ~ypos)
        ub = yG[ub_mask].min() if np.any(ub_mask) else np.inf
        lb = yG[lb_mask].max() if np.any(lb_mask) else -np.inf
        # one-sided interval (possible only if y'alpha != 0, e.g. after rounding alpha): its end
        rho = 0.5 * (ub + lb) if np.isfinite(ub + lb) else (lb if np.isinf(ub) else ub)
    return -rho


class CachedSMO:
    r"""Warm-startable SMO on :math:`K_\theta=\sum_m\theta_mK_m` with per-kernel gradient caches.

    Solves the SVM dual :math:`\min_\alpha\frac12\alpha^\top Q_\theta\alpha-\mathbf1^\top\alpha`,
    :math:`y^\top\alpha=0`, :math:`0\le\alpha\le C`, by SMO with LIBSVM's second-order
    working-set selection (WSS2 of Fan, Chen & Lin 2005) and stopping rule (maximal violating
    pair :math:`\max_{I_{up}}-y_i\nabla_i-\min_{I_{low}}-y_i\nabla_i\le` ``tol``). It never
    forms :math:`K_\theta`: its rows are computed when SMO touches an index (and cached), and
    the caches :math:`H_m=K_m(\alpha\circ y)` (what SHOGUN keeps for the interleaved MKL of
    Sonnenburg et al. 2006) are updated with the rows of the changed indices only, so a new
    :math:`\theta` costs :math:`O(nM)` (:math:`\nabla=y\circ\sum_m\theta_mH_m-\mathbf1`) and
    :math:`q_m=(\alpha\circ y)^\top H_m` comes for free. The bias is
    :func:`libsvm_intercept`. Pure NumPy: it pays off for large stacks and good warm starts.
    When more than :attr:`recompute_fraction` of the points changed in one solve (a long
    solve), the caches are recomputed as :math:`H_m=K_m(\alpha\circ y)` in one BLAS pass
    over a float64 C-contiguous stack instead of being updated row by row.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n)
        Unweighted Gram matrices.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
        Box constraint.
    """

    #: memory for cached rows of K_theta (n * 8 bytes each), at most 4096 rows
    cache_bytes = 2 ** 28
    #: above this fraction of changed indices, the caches ``H`` are recomputed in one pass
    #: over the stack instead of updated row by row (measured break-even: ~0.4)
    recompute_fraction = 0.4

    def __init__(self, K, y, C):
        self.K, self.y, self.C = K, np.asarray(y, dtype=float), float(C)
        idx = np.arange(K.shape[1])
        # the stack as one (M n, n) matrix for H = K (alpha o y) in one BLAS pass (float64,
        # C-contiguous stacks only: no copy)
        self._flat = (K.reshape(-1, K.shape[2]) if K.dtype == np.float64
                      and K.flags.c_contiguous else None)
        self.diag = np.ascontiguousarray(K[:, idx, idx], dtype=np.float64)  # (M, n)

    def solve(self, theta, alpha, H, tol, max_iter=None):
        r"""SMO from ``alpha`` (with caches ``H``, updated in place) at weights ``theta``.

        Parameters
        ----------
        theta : ndarray of shape (n_kernels,)
            Kernel weights.
        alpha : ndarray of shape (n,)
            Feasible starting point (warm start; zeros for a cold start).
        H : ndarray of shape (n_kernels, n)
            Caches :math:`H_m=K_m(\alpha\circ y)` at ``alpha``; updated in place.
        tol : float
            Stopping tolerance on the maximal violating pair.
        max_iter : int, default=None
            Cap on the SMO iterations; ``max(100000, 100 n)`` by default.

        Returns
        -------
        alpha : ndarray of shape (n,)
        H : ndarray of shape (n_kernels, n)
            The updated caches.
        intercept : float
            Bias by :func:`libsvm_intercept`.
        n_iter : int
            SMO iterations done.
        converged : bool
            Whether the stopping rule was met within ``max_iter``.
        """
        K, y, C = self.K, self.y, self.C
        n = y.size
        theta = np.asarray(theta, dtype=float)
        alpha = np.array(alpha, dtype=float, copy=True)
        active = np.flatnonzero(theta)
        all_active = active.size == theta.size
        theta_act = theta[active]
        Kd = theta @ self.diag
        G = y * (theta @ H) - 1.0  # gradient of 1/2 a'Q a - 1'a
        rows = {}
        max_rows = max(64, min(4096, self.cache_bytes // (8 * n)))

        def row(i):
            r = rows.get(i)
            if r is None:
                if len(rows) >= max_rows:
                    rows.clear()
                r = theta @ K[:, i, :] if all_active else theta_act @ K[active, i, :]
                r = rows[i] = np.asarray(r, dtype=np.float64)
            return r

        dc = np.zeros(n)  # change of alpha * y, for the caches
        ypos = y > 0
        # yG = -y * G (the "-y_t grad_t" of LIBSVM) is kept up to date instead of G, and the
        # index sets enter as penalties (0 inside, -inf/+inf outside), updated at i, j only
        yG = -y * G
        pen_up = np.where(np.where(ypos, alpha < C, alpha > 0), 0.0, -np.inf)
        pen_low = np.where(np.where(ypos, alpha > 0, alpha < C), 0.0, np.inf)
        tmp, a = np.empty(n), np.empty(n)
        if max_iter is None:
            max_iter = max(100_000, 100 * n)
        n_iter, converged = 0, False
        while n_iter < max_iter:
            # WSS2: i maximises -y_t G_t over I_up, j minimises -b^2/a over I_low
            np.add(yG, pen_up, out=tmp)
            i = int(np.argmax(tmp))
            g_max = tmp[i]
            np.add(yG, pen_low, out=tmp)
            if g_max - tmp.min() < tol:
                converged = True
                break
            Ki = row(i)
            np.subtract(g_max, tmp, out=tmp)  # b_t = g_max + y_t G_t (-inf outside I_low)
            np.maximum(tmp, 0.0, out=tmp)
            np.multiply(Ki, -2.0, out=a)  # a_t = K_ii + K_tt - 2 K_it
            a += Kd
            a += Kd[i]
            np.maximum(a, 1e-12, out=a)
            np.square(tmp, out=tmp)
            np.divide(tmp, a, out=tmp)
            j = int(np.argmax(tmp))  # = argmin of -b^2/a
            if not tmp[j] > 0:  # pragma: no cover - cannot happen above tol
                converged = True
                break
            Kj = row(j)
            quad = max(Kd[i] + Kd[j] - 2.0 * Ki[j], 1e-12)
            ai, aj = alpha[i], alpha[j]
            Gi, Gj = -y[i] * yG[i], -y[j] * yG[j]
            if y[i] != y[j]:  # LIBSVM's two-variable update, verbatim
                delta = (-Gi - Gj) / quad
                diff = ai - aj
                ni, nj = ai + delta, aj + delta
                if diff > 0:
                    if nj < 0:
                        nj, ni = 0.0, diff
                elif ni < 0:
                    ni, nj = 0.0, -diff
                if diff > 0:
                    if ni > C:
                        ni, nj = C, C - diff
                elif nj > C:
                    nj, ni = C, C + diff
            else:
                delta = (Gi - Gj) / quad
                total = ai + aj
                ni, nj = ai - delta, aj + delta
                if total > C:
                    if ni > C:
                        ni, nj = C, total - C
                elif nj < 0:
                    nj, ni = 0.0, total
                if total > C:
                    if nj > C:
                        nj, ni = C, total - C
                elif ni < 0:
                    ni, nj = 0.0, total
            dci, dcj = y[i] * (ni - ai), y[j] * (nj - aj)
            alpha[i], alpha[j] = ni, nj
            # yG_t -= y_t * y_t * (K_ti dc_i + K_tj dc_j)
            np.multiply(Ki, dci, out=tmp)
            yG -= tmp
            np.multiply(Kj, dcj, out=tmp)
            yG -= tmp
            for t, at in ((i, ni), (j, nj)):
                if ypos[t]:
                    pen_up[t] = 0.0 if at < C else -np.inf
                    pen_low[t] = 0.0 if at > 0 else np.inf
                else:
                    pen_up[t] = 0.0 if at > 0 else -np.inf
                    pen_low[t] = 0.0 if at < C else np.inf
            dc[i] += dci
            dc[j] += dcj
            n_iter += 1
        G = -y * yG
        # caches: H_m += K_m[:, changed] dc[changed] (rows, by symmetry), kernel by kernel and
        # in chunks of rows (one gather of 64 rows and one BLAS product each: ~3x faster than
        # a tensordot over the (M, 64, n) gather)
        changed = np.flatnonzero(dc)
        if changed.size > self.recompute_fraction * n and self._flat is not None:
            # most of alpha changed (a long solve): one streaming pass H = K (alpha o y)
            # costs less than gathering the changed rows (and is exact)
            np.dot(self._flat, alpha * y, out=H.reshape(-1))
            changed = changed[:0]
        for start in range(0, changed.size, 64):
            ids = changed[start:start + 64]
            dc_ids = dc[ids]
            for m in range(K.shape[0]):
                H[m] += dc_ids @ K[m, ids, :]
        return alpha, H, libsvm_intercept(alpha, y, G, C), n_iter, converged


#: :func:`combine_kernels` adds the kernels up over blocks of this many entries (cache-sized)
SUM_BLOCK = 65_536


def combine_kernels(K, weights, out=None, portable=False):
    """Return ``sum_m weights[m] * K[m]``, skipping zero weights.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_rows, n_cols)
    weights : array-like of shape (n_kernels,)
    out : ndarray of shape (n_rows, n_cols), optional
        Output buffer (float64).
    portable : bool, default=False
        Never use BLAS: with every weight non-zero the default is one BLAS pass over the stack
        (``weights @ K``), whose last bits depend on the processor, the BLAS and its thread
        count. The other path, taken always when ``portable``, adds ``weights[m] * K[m]`` to
        zeros in the order of ``weights`` with NumPy's correctly rounded product and sum
        (never fused or threaded): the same bits everywhere.

    Returns
    -------
    K_theta : ndarray of shape (n_rows, n_cols), float64
    """
    weights = np.asarray(weights, dtype=float)
    if out is None:
        out = np.zeros(K.shape[1:], dtype=np.float64)
    active = np.flatnonzero(weights)
    fast = (K.dtype == np.float64 and K.flags.c_contiguous and out.flags.c_contiguous
            and out.dtype == np.float64)
    if active.size == weights.size > 1 and fast and not portable:
        # all weights non-zero: one BLAS pass over the stack instead of M temporaries
        np.dot(weights, K.reshape(K.shape[0], -1), out=out.reshape(-1))
        return out
    if not (K.flags.c_contiguous and out.flags.c_contiguous and out.dtype == np.float64):
        out[...] = 0.0
        for m in active:
            out += weights[m] * K[m]  # upcasts float32 stacks
        return out
    # the same sums over cache-sized blocks of entries: one pass over the output
    flat, Kf = out.reshape(-1), K.reshape(K.shape[0], -1)
    tmp = np.empty(min(SUM_BLOCK, flat.size))
    for b0 in range(0, flat.size, SUM_BLOCK):
        block = flat[b0:b0 + SUM_BLOCK]
        t = tmp[:block.size]
        block[:] = 0.0
        for m in active:
            np.multiply(Kf[m, b0:b0 + SUM_BLOCK], weights[m], out=t)  # float64 (upcasts)
            block += t
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
    if not (isinstance(C, float) and isinstance(tol, float)
            and 0.0 < C < np.inf and 0.0 < tol < np.inf):  # else the full check (and message)
        validate_params("svm_solve", _SVM_CONSTRAINTS, {"C": C, "tol": tol})
    solver = _backend(backend)
    K = np.asarray(check_dense(K, "K"))
    if K.ndim == 2:
        K = K[None]
    y = np.asarray(check_dense(y, "y"))
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
        backend=backend)
