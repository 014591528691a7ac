r"""Localized multiple kernel learning with a softmax gating model (Gönen & Alpaydın, 2008).

LMKL replaces the global kernel weights of canonical MKL by a gating model
:math:`\eta_m(x)\ge 0`, the discriminant being Eq. (4) of [1]_,
:math:`f(x) = \sum_m \eta_m(x)\,\langle w_m, \Phi_m(x)\rangle + b`. For a fixed gating the
learning problem (5) is a canonical SVM (dual (7)) on the locally combined kernel
:math:`K_\eta(x_i, x_j) = \sum_m \eta_m(x_i)\, K_m(x_i, x_j)\, \eta_m(x_j)`. The gating is a
softmax of linear functions of a gating representation :math:`z` (by default the standardised
inputs; the linear gating model of Sec. 2 of [1]_),
:math:`\eta_m(z) \propto \exp(\langle v_m, z\rangle + v_{m0})`, and Algorithm 1 of [1]_
alternates an SVM solve for fixed gating with a gradient step on the gating parameters
:math:`V` (the gradient of the SVM dual value :math:`J(V)` of Sec. 2 of [1]_, exact by
Danskin's theorem) with a line search that needs extra SVM solves (Sec. 3.1).

:func:`lmkl_solve` works on a precomputed Gram stack ``K`` and a gating representation
``X_gate``, :func:`lmkl_decision` evaluates the gated discriminant (eq. 8) on a test stack,
and :class:`LMKLClassifier` works on features (it builds the kernels, standardises the gating
inputs, and at prediction time evaluates kernel ``m`` only between the test points and
support vectors whose gates for ``m`` are both non-zero).

References
----------
.. [1] M. Gönen and E. Alpaydın. Localized multiple kernel learning. In Proceedings of the 25th
   International Conference on Machine Learning (ICML), pages 352-359, 2008.
   https://doi.org/10.1145/1390156.1390201
"""

import warnings
from functools import partial

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import BaseMKLClassifier, common_constraints, fill_doc
from ._result import MKLResult, Monitor
from ._validation import (Interval, Options, as_float_array, check_dense, check_finite,
                          check_kernel_stack, validate_params)
from .svm import (available_backends, default_backend, default_svm_max_iter, libsvm_intercept,
                  svm_solve)

__all__ = [
    "softmax_gating", "locally_combined_kernel", "kernel_row_max", "lmkl_gradient",
    "lmkl_objective", "lmkl_solve", "lmkl_decision", "lmkl_gates", "LMKLClassifier",
]

#: the expansion phase of the line search doubles the step at most this many times
#: (2**40 times the unit step saturates any softmax long before; a safety cap only)
_MAX_EXPANSIONS = 40

#: the solver's locally combined kernel skips terms of negligible gates (``rtol`` of
#: :func:`locally_combined_kernel`) that move the SVM's dual gradient by at most this share
#: of ``svm_tol`` (the KKT accuracy of the SVM solves), and never more than
#: ``_COMBINE_RTOL_MAX`` relative to the entries
_COMBINE_SHARE = 0.01
_COMBINE_RTOL_MAX = 1e-6
#: the solver skips terms only for stacks of at least this many kernels
_COMBINE_MIN_KERNELS = 16


#: the reference of every docstring of the module (see :func:`mklcore._base.fill_doc`)
_DOC = {"reference": """References
    ----------
    .. [1] M. Gönen and E. Alpaydın. Localized multiple kernel learning. In Proceedings of the
       25th International Conference on Machine Learning (ICML), pages 352-359, 2008."""}

_doc = partial(fill_doc, parts=_DOC)


_SOLVE_CONSTRAINTS = {
    **common_constraints("C", "max_iter", "svm_tol", "verbose", "callback"),
    "n_iter": [Interval("int", 1, None), None],
    "tol": [Interval("real", 0, None), None],
    "gating": [Options("softmax", "fixed")],
    "init_scale": [Interval("real", 0, None)],
    "line_search": [Options("bounded", "doubling", "armijo", "expand_backtrack")],
    "max_step": [Interval("real", 0, None, closed="neither")],
    "ls_min_step": [Interval("real", 0, None, closed="neither")],
    "gate_threshold": [Interval("real", 0, 0.5, closed="left")],
    "sv_tol": [Interval("real", 0, 0.5, closed="left")],
    "svm_backend": [str],
}


# ---------------------------------------------------------------------------
# gating model
# ---------------------------------------------------------------------------

def _augment(X_gate, n_samples, gating):
    """Return the design matrix ``[1, z]`` of the gating model, shape (n, D + 1)."""
    if gating == "fixed":
        return np.ones((n_samples, 1))
    return np.hstack([np.ones((X_gate.shape[0], 1)), X_gate])


@_doc
def softmax_gating(X_gate, coef, *, gate_threshold=0.0):
    r"""Gating outputs :math:`\eta_m(z)` of the linear softmax gating model (Sec. 2 of [1]_).

    .. math::
        \eta_m(z) = \frac{\exp(\langle v_m, z\rangle + v_{m0})}
                         {\sum_h \exp(\langle v_h, z\rangle + v_{h0})}

    computed with the max-subtraction trick.

    Parameters
    ----------
    X_gate : ndarray of shape (n_samples, n_gate_features) or None
        Gating representation :math:`z` of each sample. ``None`` (or zero columns) gives a
        constant gating that depends on the biases only.
    coef : ndarray of shape (n_kernels, n_gate_features + 1)
        Gating parameters :math:`V`; column 0 holds the biases :math:`v_{m0}`, row ``m`` the
        parameters of kernel ``m``.
    gate_threshold : float, default=0.0
        If positive, outputs below ``gate_threshold`` are set to 0 and outputs above
        ``1 - gate_threshold`` to 1 (the sparsification of Gönen's LMKSVM code; with 0.001
        it makes "kernel m need not be evaluated where its gate is zero" literally true).
        Rows then need not sum to exactly 1.

    Returns
    -------
    eta : ndarray of shape (n_samples, n_kernels)
        Non-negative gating outputs; without thresholding every row sums to 1.

    {reference}

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.localized import softmax_gating
    >>> softmax_gating(np.array([[0.0], [10.0]]), np.array([[0.0, 1.0], [0.0, -1.0]])).round(3)
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    coef = np.asarray(coef, dtype=float)
    if coef.ndim != 2:
        raise ValueError(f"coef must have shape (n_kernels, n_gate_features + 1); "
                         f"got {coef.shape}.")
    if X_gate is None:
        X_gate = np.zeros((1, 0))
    X_gate = np.asarray(X_gate, dtype=float)
    if X_gate.ndim != 2 or X_gate.shape[1] + 1 != coef.shape[1]:
        raise ValueError(
            f"X_gate has shape {X_gate.shape} but coef has {coef.shape[1]} columns: the gating "
            f"model needs n_gate_features + 1 = coef.shape[1] (column 0 is the bias).")
    # a fixed-order contraction (no BLAS): the gates, hence every threshold downstream, are
    # the same under any number of BLAS threads and any BLAS kernel
    scores = np.einsum("nd,md->nm", X_gate, coef[:, 1:]) + coef[:, 0]
    scores -= scores.max(axis=1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=1, keepdims=True)
    if gate_threshold > 0:
        scores[scores < gate_threshold] = 0.0
        scores[scores > 1.0 - gate_threshold] = 1.0
    return scores


@_doc
def locally_combined_kernel(K, eta, eta_cols=None, *, out=None, rtol=0.0, row_max=None):
    r"""Locally combined kernel :math:`K_\eta=\sum_m\mathrm{diag}(\eta_m)K_m\mathrm{diag}(\eta_m)`.

    Entry :math:`(i, j)` is :math:`\sum_m \eta_m(x_i) K_m(x_i, x_j) \eta_m(x_j)`, the kernel of
    the dual (7) of [1]_. It is positive semidefinite for any non-negative gating when the
    :math:`K_m` are.

    For a square stack without ``eta_cols`` only the entries on and above the diagonal are
    computed (from the upper triangles of the :math:`K_m`) and mirrored, so the result is
    exactly symmetric. The sums run in a fixed order without BLAS.

    With ``rtol > 0`` (square stack only) the terms of negligible gates are skipped, with a
    proven bound on what is skipped. With :math:`r_m(x_i) = \max_j |K_m(x_i, x_j)|` (so that
    :math:`|K_m(x_i, x_j)| \le \sqrt{r_m(x_i) r_m(x_j)}` for any symmetric :math:`K_m`),
    :math:`a_m(x_i) = \eta_m(x_i)\sqrt{r_m(x_i)}` and :math:`D_i = \sum_m a_m(x_i)^2`, the
    term of kernel :math:`m` is dropped at point :math:`i` for the kernels of smallest
    :math:`a_m(x_i)` whose squares sum to at most :math:`(\text{rtol}/2)^2 D_i`. By the
    Cauchy-Schwarz inequality every entry then differs from the exact sum by at most

    .. math::
        |\tilde K_\eta(x_i, x_j) - K_\eta(x_i, x_j)| \le \text{rtol}\,\sqrt{D_i D_j},

    and :math:`\sqrt{D_i D_j}` bounds the entry itself (Cauchy-Schwarz again; for positive
    semidefinite kernels :math:`D_i \ge K_\eta(x_i, x_i)`). The skipped terms are products
    with gates that are essentially zero (with crisp softmax gates, many of them), and kernel
    :math:`m` is then read only between the points where its term was kept.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_rows, n_cols)
        Gram matrices (training stack, or a test stack with test points as rows).
    eta : ndarray of shape (n_rows, n_kernels)
        Gating outputs of the row points.
    eta_cols : ndarray of shape (n_cols, n_kernels), default=None
        Gating outputs of the column points; ``eta`` by default (square training stack).
    out : ndarray of shape (n_rows, n_cols), default=None
        Output buffer (float64).
    rtol : float, default=0.0
        Bound on the skipped part of each entry relative to :math:`\sqrt{D_i D_j}` (see
        above); 0 skips only kernels whose gates are exactly zero. Needs a square stack
        without ``eta_cols``.
    row_max : ndarray of shape (n_rows, n_kernels), default=None
        :math:`r_m(x_i) = \max_j |K_m(x_i, x_j)|` (see :func:`kernel_row_max`), used with
        ``rtol > 0``; computed (one pass over ``K``) when not given.

    Returns
    -------
    K_eta : ndarray of shape (n_rows, n_cols)

    {reference}
    """
    symmetric = eta_cols is None and K.shape[1] == K.shape[2]
    eta = np.asarray(eta, dtype=float)
    if rtol > 0:
        if not symmetric:
            raise ValueError("rtol > 0 needs a square training stack without eta_cols.")
        if row_max is None:
            row_max = kernel_row_max(K)
        eta = _drop_negligible(eta, row_max, rtol)
    from .smo import gated_kernel

    return gated_kernel(K, eta, eta_cols, out=out)


def kernel_row_max(K):
    r"""Largest absolute entry of each row of each kernel, :math:`\max_j |K_m(x_i, x_j)|`.

    The scale that bounds the skipped terms of :func:`locally_combined_kernel` with
    ``rtol > 0``.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Gram matrices.

    Returns
    -------
    row_max : ndarray of shape (n_samples, n_kernels)
    """
    out = np.empty((K.shape[1], K.shape[0]))
    for m in range(K.shape[0]):
        np.max(np.abs(K[m]), axis=1, out=out[:, m])
    return out


def _drop_negligible(eta, row_max, rtol):
    """Gates with the terms :func:`locally_combined_kernel` may skip at ``rtol`` set to 0."""
    a2 = eta * eta * row_max  # a_m(x_i)^2
    order = np.argsort(a2, axis=1, kind="stable")
    sorted_a2 = np.take_along_axis(a2, order, axis=1)
    cumulative = np.cumsum(sorted_a2, axis=1)  # sequential: a fixed order
    budget = (0.5 * rtol) ** 2 * cumulative[:, -1:]
    drop = np.zeros(eta.shape, dtype=bool)
    np.put_along_axis(drop, order, cumulative <= budget, axis=1)
    return np.where(drop, 0.0, eta)


@_doc
def lmkl_gradient(K, y, alpha, eta, Z_aug):
    r"""Gradient of the LMKL objective :math:`J` with respect to the gating parameters.

    With :math:`u = \alpha\circ y`, :math:`r^h = (u\circ\eta_h)\circ\big(K_h(u\circ\eta_h)\big)`,
    :math:`R = [r^1, \dots, r^P]`, :math:`\rho = R\mathbf 1` and :math:`E = [\eta_m(x_i)]_{im}`,

    .. math::
        \nabla_V J = -\big(R - E\circ(\rho\mathbf 1_P^\top)\big)^\top \tilde Z ,

    the vectorised form of the triple sum for :math:`\partial J/\partial v_m` and
    :math:`\partial J/\partial v_{m0}` in Sec. 2 of [1]_ (the envelope theorem makes
    :math:`\alpha` a constant). Only support vectors contribute; the rows sum to zero
    (softmax invariance).

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    alpha : ndarray of shape (n_samples,)
        SVM dual solution for the gating ``eta``.
    eta : ndarray of shape (n_samples, n_kernels)
        Gating outputs.
    Z_aug : ndarray of shape (n_samples, n_gate_features + 1)
        Gating design matrix ``[1, z]`` (column 0 all ones).

    Returns
    -------
    grad : ndarray of shape (n_kernels, n_gate_features + 1)
        Same layout as the gating parameters (column 0: biases).

    {reference}
    """
    u = np.asarray(alpha, dtype=float) * np.asarray(y, dtype=float)
    sv = np.flatnonzero(u)
    n_kernels = K.shape[0]
    if sv.size == 0:
        return np.zeros((n_kernels, Z_aug.shape[1]))
    eta_sv = np.asarray(eta, dtype=float)[sv]
    c = u[sv, None] * eta_sv  # column h: u * eta_h on the support vectors
    Kc = _sv_products(K, sv, c)  # row h: K_h[sv, sv] (u * eta_h)[sv]
    R = c * Kc.T
    rho = R.sum(axis=1)
    A = R - eta_sv * rho[:, None]
    return -np.einsum("ih,id->hd", A, np.asarray(Z_aug, dtype=float)[sv])


#: bytes of kernel entries gathered at once by :func:`_sv_products`
_GATHER_BYTES = 2 ** 25


def _sv_products(K, sv, c):
    r"""Products :math:`K_h[S, S]\,c_{:,h}` of every kernel restricted to the index set ``S``.

    Used for the gradient and the objective on the support vectors (the only points with
    :math:`\alpha_i \ne 0`). The sums run in a fixed order without BLAS (``numpy.einsum``),
    so the result does not depend on the number of BLAS threads or the BLAS build.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Gram matrices.
    sv : ndarray of int of shape (n_sv,)
        Index set :math:`S` (sorted).
    c : ndarray of shape (n_sv, n_kernels)
        One vector per kernel on :math:`S`.

    Returns
    -------
    products : ndarray of shape (n_kernels, n_sv)
        Row ``h`` is :math:`K_h[S, S]\,c_{:,h}`.
    """
    n_kernels, n = K.shape[0], K.shape[1]
    out = np.empty((n_kernels, sv.size))
    if sv.size == n:  # every point: no gather
        return np.einsum("hij,jh->hi", K, c, out=out)
    step = max(1, _GATHER_BYTES // (8 * sv.size * sv.size))
    for start in range(0, n_kernels, step):
        block = K[np.ix_(np.arange(start, min(start + step, n_kernels)), sv, sv)]
        np.einsum("hij,jh->hi", block, c[:, start:start + step], out=out[start:start + step])
    return out


# ---------------------------------------------------------------------------
# the SVM step
# ---------------------------------------------------------------------------

def _dual_value(K_eta, alpha, y):
    r"""Dual value :math:`\mathbf 1^\top\alpha-\frac12 u^\top K_\eta u`, :math:`u=\alpha\circ y`.

    Summed in a fixed order over the support vectors (no BLAS), so that the comparisons of the
    line search do not depend on the BLAS build or its number of threads.
    """
    u = alpha * y
    sv = np.flatnonzero(u)
    if 2 * sv.size > u.size:  # most points: one pass beats copying a large sub-block
        quad = np.sum(u * np.einsum("ij,j->i", K_eta, u))
    else:
        quad = np.sum(u[sv] * np.einsum("ij,j->i", K_eta[np.ix_(sv, sv)], u[sv]))
    return float(np.sum(alpha) - 0.5 * max(float(quad), 0.0))


class _State:
    """Gating parameters with the SVM solution and objective for them.

    ``svm`` is None for a line-search trial that is rejected (its ``J`` is then the
    objective or a lower bound of it, not below the reference value); such a state is only
    compared, never accepted.
    """

    __slots__ = ("coef", "eta", "svm", "J")

    def __init__(self, coef, eta, svm, J):
        self.coef, self.eta, self.svm, self.J = coef, eta, svm, J


class _Problem:
    """Fixed data of one LMKL fit: evaluates J(V) by an SVM solve (Alg. 1 of [1], lines 3-4)."""

    def __init__(self, K, y, Z_aug, C, svm_tol, gate_threshold, backend="auto"):
        self.K, self.y, self.Z_aug = K, y, Z_aug
        self.C, self.svm_tol, self.gate_threshold = C, svm_tol, gate_threshold
        self.backend = default_backend() if backend == "auto" else backend
        self.n_svm_calls = 0
        self.capped = None  # the message of the first SVM that reached its iteration cap
        self._buffer = np.empty(K.shape[1:], dtype=np.float64)
        # with few kernels a full pass costs little and nothing is skipped (bit-identical sums)
        self.row_max = kernel_row_max(K) if K.shape[0] >= _COMBINE_MIN_KERNELS else None

    def combined(self, eta):
        r"""The locally combined kernel of the gates ``eta`` (in the shared buffer).

        Skips the terms of negligible gates that move every entry of the SVM's dual gradient
        :math:`Q\alpha - 1` by at most ``_COMBINE_SHARE * svm_tol`` at any feasible
        :math:`\alpha`: with :math:`|u_j| \le C` the skipped part of entry :math:`i` is at
        most :math:`\text{rtol}\sqrt{D_i}\,C\sum_j\sqrt{D_j}` (see
        :func:`locally_combined_kernel`).
        """
        rtol = 0.0
        if self.row_max is not None:
            root = np.sqrt(np.sum(eta * eta * self.row_max, axis=1))  # sqrt(D_i)
            scale = self.C * root.max() * np.sum(root)
            if scale > 0:
                rtol = min(_COMBINE_SHARE * self.svm_tol / scale, _COMBINE_RTOL_MAX)
        if rtol == 0.0:
            return locally_combined_kernel(self.K, eta, out=self._buffer)
        return locally_combined_kernel(self.K, eta, out=self._buffer, rtol=rtol,
                                       row_max=self.row_max)

    def gates(self, coef):
        return softmax_gating(self.Z_aug[:, 1:], coef, gate_threshold=self.gate_threshold)

    def evaluate(self, coef, alpha0=None, reference=None):
        """J at the gating parameters ``coef`` (a :class:`_State`).

        The SVM is warm-started from ``alpha0`` (the dual solution at the previous gates).
        A ``reference`` state makes the evaluation a line-search trial: when its J is not
        below ``reference.J`` the state keeps no SVM result (it is only compared, never
        accepted).
        """
        eta = self.gates(coef)
        K_eta = self.combined(eta)
        self.n_svm_calls += 1
        # canonical SVM dual (7) on the locally combined kernel; J = its optimal value
        svm = svm_solve(K_eta, self.y, C=self.C, tol=self.svm_tol, alpha0=alpha0,
                        backend=self.backend, K_combined=K_eta,
                        max_iter=default_svm_max_iter(self.y.size), check_input=False)
        if not svm.converged and self.capped is None:
            self.capped = (f"the SVM did not converge within {svm.n_iter} iterations at "
                           f"C={self.C:g} (kernels on very different scales? huge C?); scale "
                           f"the kernels (normalize='trace') or lower C")
        J = _dual_value(K_eta, svm.alpha, self.y)
        if not np.isfinite(J):
            check_finite(self.K, "K")  # a non-finite kernel entry was read: name it
        if reference is not None and not J < reference.J:
            return _State(coef, eta, None, J)
        return _State(coef, eta, svm, J)

    def gradient(self, state):
        return lmkl_gradient(self.K, self.y, state.svm.alpha, state.eta, self.Z_aug)


def _line_search(problem, state, grad, grad_norm, rule, min_step, first=1.0, max_step=1.0):
    """Step along ``-grad/||grad||`` (Alg. 1 of [1], lines 5-6): (state, step) or (state, 0.0).

    Every rule starts at the step ``first`` (a power of 2 times the unit step
    ``s0 = min(1, max_step)``, 1 for ``"doubling"``: ``s0`` at the first update, and for
    ``"armijo"`` then ``min(2 * previous accepted step, max_step)``) and accepts a trial only
    if it decreases ``J``. ``"doubling"`` (the scheme of Gönen's LMKSVM code): while the
    objective decreases, accept and double, without a bound; otherwise halve until it
    decreases. ``"bounded"``: the same, but the step is never doubled beyond ``max_step``
    (with ``max_step=1``: backtracking from the unit step). ``"armijo"``: halve until
    ``J' <= J - 1e-4 * step * ||grad||`` (sufficient decrease for the known slope
    ``-||grad||`` of ``J`` along the direction). When no step from ``first`` down to
    ``min_step`` is accepted, the steps above ``first`` up to ``s0`` are tried too, so that
    "no descent step" always means that none of the steps ``s0``, ``s0 / 2``, ...,
    ``>= min_step`` was accepted (a local optimum).
    """
    direction = grad / grad_norm
    alpha0 = state.svm.alpha
    cap = np.inf if rule == "doubling" else max_step

    def trial(step, reference=state):
        return problem.evaluate(state.coef - step * direction, alpha0=alpha0,
                                reference=reference)

    def accepted(new, step):
        if rule == "armijo":
            return new.J <= state.J - 1e-4 * step * grad_norm and new.J < state.J
        return new.J < state.J

    step = first
    new = trial(step)
    if rule != "armijo" and new.J < state.J:  # expansion phase
        best, best_step = new, step
        for _ in range(_MAX_EXPANSIONS):
            if 2.0 * step > cap:
                break
            step *= 2.0
            new = trial(step, best)
            if not new.J < best.J:
                break
            best, best_step = new, step
        return best, best_step
    while not accepted(new, step):  # backtracking phase
        step /= 2.0
        if step < min_step:
            break
        new = trial(step)
    else:
        return new, step
    top = 1.0 if rule == "doubling" else min(1.0, max_step)
    step = 2.0 * first  # the steps above a warm first step, up to the unit step
    while step <= top:
        new = trial(step)
        if accepted(new, step):
            return new, step
        step *= 2.0
    return state, 0.0


def _intercept(alpha, y, K_eta_coef, C):
    """Bias from the free support vectors; LIBSVM's midpoint rule if there is none."""
    return float(libsvm_intercept(alpha, y, y * K_eta_coef - 1.0, C))  # grad = Q alpha - 1


def _frobenius(A):
    """Frobenius norm summed in a fixed order (``numpy.linalg.norm`` calls the BLAS)."""
    return float(np.sqrt(np.sum(A * A)))


def _matvec(A, x):
    """``A @ x`` over the non-zero entries of ``x``, in a fixed order (no BLAS)."""
    nz = np.flatnonzero(x)
    return np.einsum("ij,j->i", A[:, nz], x[nz])


def _check_inputs(K, y, X_gate, gating, owner):
    K = check_kernel_stack(K, y, thorough=False)
    n = K.shape[1]
    y = np.asarray(check_dense(y, "y")).ravel()
    if y.dtype.kind not in "biuf" or not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"y must hold labels in {{-1, +1}} for {owner}; got values "
                         f"{list(dict.fromkeys(y.tolist()))[:5]}. Map them first (the estimator "
                         f"LMKLClassifier accepts any two labels).")
    y = y.astype(float)
    if np.unique(y).size < 2:
        raise ValueError(f"y has a single class; {owner} needs two classes.")
    if gating == "fixed":
        return K, y, None
    if X_gate is None:
        raise ValueError(f"{owner} with gating='softmax' needs the gating representation "
                         f"X_gate of shape (n_samples, n_gate_features); pass the (standardised) "
                         f"inputs, or use gating='fixed' for a constant gating.")
    X_gate = as_float_array(X_gate, "X_gate", owner)
    if X_gate.ndim == 1:
        raise ValueError(f"X_gate must be 2-D of shape (n_samples, n_gate_features); got a 1-D "
                         f"array of length {X_gate.shape[0]}. Use X_gate.reshape(-1, 1) for a "
                         f"single gating feature.")
    if X_gate.ndim != 2:
        raise ValueError(f"X_gate must be 2-D of shape (n_samples, n_gate_features); got shape "
                         f"{X_gate.shape}.")
    if X_gate.shape[0] != n:
        raise ValueError(f"X_gate has {X_gate.shape[0]} rows but K has {n} samples: the gating "
                         f"representation needs one row per training sample, in the order of K.")
    check_finite(X_gate, "X_gate")
    return K, y, X_gate


def _check_coef(coef, shape, name):
    coef = np.array(coef, dtype=float)
    if coef.shape != shape:
        raise ValueError(f"{name} must have shape (n_kernels, n_gate_features + 1) = {shape}; "
                         f"got {coef.shape}.")
    return coef


@_doc
def lmkl_objective(K, y, X_gate, coef, *, C=1.0, gating="softmax", gate_threshold=0.0,
                   svm_tol=1e-3, svm_backend="auto"):
    r"""Objective :math:`J(V)` of LMKL and its gradient at fixed gating parameters.

    Solves the SVM dual (7) of [1]_ on the locally combined kernel for the gating ``coef`` and
    returns its optimal value and the gradient of Sec. 2 of [1]_ (see :func:`lmkl_gradient`),
    e.g. for finite-difference checks.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    X_gate : ndarray of shape (n_samples, n_gate_features) or None
        Gating representation (``None`` with ``gating="fixed"``).
    coef : ndarray of shape (n_kernels, n_gate_features + 1)
        Gating parameters (column 0: biases; shape (n_kernels, 1) for ``gating="fixed"``).
    C : float, default=1.0
        Box constraint. Must be > 0.
    gating : {"softmax", "fixed"}, default="softmax"
        Gating model (see :func:`lmkl_solve`).
    gate_threshold : float, default=0.0
        Gate sparsification threshold (see :func:`softmax_gating`).
    svm_tol : float, default=1e-3
        KKT tolerance of the SVM solver (use 1e-10 or less for finite-difference checks).
    svm_backend : str, default="auto"
        SVM backend (see :func:`lmkl_solve`).

    Returns
    -------
    result : MKLResult
        ``objective`` (:math:`J`), ``gradient`` (same shape as ``coef``), ``alpha``,
        ``dual_coef``, ``intercept`` (LIBSVM's), ``eta`` (n_samples, n_kernels),
        ``K_eta`` (the locally combined kernel) and ``svm`` (the inner SVM result).

    {reference}
    """
    validate_params("lmkl_objective", _SOLVE_CONSTRAINTS, locals())
    K, y, X_gate = _check_inputs(K, y, X_gate, gating, "lmkl_objective")
    K = np.asarray(K) if np.asarray(K).dtype in (np.float32, np.float64) else np.asarray(
        K, dtype=np.float64)
    Z_aug = _augment(X_gate, K.shape[1], gating)
    coef = _check_coef(coef, (K.shape[0], Z_aug.shape[1]), "coef")
    problem = _Problem(K, y, Z_aug, float(C), float(svm_tol), float(gate_threshold),
                       svm_backend)
    state = problem.evaluate(coef)
    return MKLResult(objective=state.J, gradient=problem.gradient(state), alpha=state.svm.alpha,
                     dual_coef=state.svm.dual_coef, intercept=state.svm.intercept, eta=state.eta,
                     K_eta=locally_combined_kernel(K, state.eta), svm=state.svm)


def _deprecated_rule(line_search, owner):
    """Resolve the deprecated name ``"expand_backtrack"`` of ``"doubling"`` (FutureWarning)."""
    if line_search != "expand_backtrack":
        return line_search
    warnings.warn(f"line_search='expand_backtrack' of {owner} is deprecated and will be "
                  f"removed; it is now called 'doubling' (the default is 'armijo').",
                  FutureWarning, stacklevel=3)
    return "doubling"


def _deprecated_n_iter(n_iter, max_iter, owner):
    """Resolve the deprecated alias ``n_iter`` of ``max_iter`` (FutureWarning)."""
    if n_iter is None:
        return max_iter
    warnings.warn(f"The 'n_iter' parameter of {owner} is deprecated and will be removed; use "
                  f"'max_iter' (the maximum number of gating updates) instead.",
                  FutureWarning, stacklevel=3)
    return n_iter


@_doc
def lmkl_solve(K, y, X_gate, *, C=1.0, max_iter=100, random_state=None, gating="softmax",
               tol=None, init_scale=0.01, init_coef=None, line_search="armijo",
               max_step=1.0, ls_min_step=1e-3, gate_threshold=0.0, sv_tol=1e-3, svm_tol=1e-3,
               svm_backend="auto", callback=None, verbose=0, check_input=True, n_iter=None):
    r"""Localized MKL by alternating SVM solves and gradient steps on the gating (Algorithm 1).

    Solves problem (5) of [1]_,

    .. math::
        \min_{w_m, b, \xi, V}\ \tfrac12\sum_m\|w_m\|^2 + C\sum_i\xi_i \quad\text{s.t.}\quad
        y_i\Big(\sum_m \eta_m(x_i)\langle w_m, \Phi_m(x_i)\rangle + b\Big) \ge 1-\xi_i,\
        \xi_i\ge0,

    through its dual for a fixed gating (7), :math:`J(V) = \max_\alpha \mathbf 1^\top\alpha -
    \tfrac12\alpha^\top(yy^\top\circ K_\eta)\alpha` s.t. :math:`y^\top\alpha=0`,
    :math:`0\le\alpha\le C`: each iteration computes :math:`\nabla_V J` (Sec. 2 of [1]_,
    vectorised in :func:`lmkl_gradient`) and moves :math:`V` along
    :math:`-\nabla_V J/\|\nabla_V J\|_F` with a line search that re-solves the SVM for each
    trial step. The problem is not convex: the local optimum found depends on the random
    initial gating.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices :math:`K_m`, already normalised (the paper: unit trace).
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    X_gate : ndarray of shape (n_samples, n_gate_features) or None
        Gating representation :math:`z_i` of each training sample, in the order of ``K`` (the
        paper: the standardised inputs). Ignored (may be ``None``) with ``gating="fixed"``.
    C : float, default=1.0
        Misclassification penalty :math:`C` of (5). Must be > 0.
    max_iter : int, default=100
        Maximum number of gating updates (a budget: the run stops earlier at a local optimum,
        see Notes). The paper runs 50 updates in every experiment (Sec. 4): pass
        ``max_iter=50`` for its schedule.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial gating parameters.
    gating : {"softmax", "fixed"}, default="softmax"
        ``"softmax"``: the linear softmax gating of Sec. 2 of [1]_ on ``X_gate``. ``"fixed"``:
        a constant gating (biases only), one global weight :math:`\bar\eta_m` per kernel and
        the combined kernel :math:`\sum_m\bar\eta_m^2K_m` (see Notes).
    tol : float or None, default=None
        Stop (``status=0``) when the relative decrease :math:`(J_{t-1} - J_t)/|J_{t-1}|` is at
        most ``tol``. ``None``: no test on the decrease; the run ends at a local optimum
        (``status=0``) or after ``max_iter`` updates (``status=1``, no warning; with
        ``max_iter=50`` the paper's fixed schedule).
    init_scale : float, default=0.01
        Initial gating parameters are drawn from :math:`U(-s, s)` (Algorithm 1, line 1; the
        range of Gönen's code). 0 gives the uniform gating.
    init_coef : ndarray of shape (n_kernels, n_gate_features + 1), default=None
        Initial gating parameters (column 0: biases); overrides the random draw.
    line_search : {"armijo", "bounded", "doubling"}, default="armijo"
        Step rule on the normalised gradient (the step :math:`\mu` is the length of the move
        of :math:`V`). ``"armijo"``: from twice the previous accepted step (the unit step
        :math:`\min(1, \text{max\_step})` at the first update), at most ``max_step``, halve
        until :math:`J' \le J - 10^{-4}\,\mu\|\nabla_V J\|_F` (sufficient decrease for the
        known slope :math:`-\|\nabla_V J\|_F` along the direction). ``"bounded"``: from the
        unit step, double while :math:`J` decreases but never beyond ``max_step``, else halve
        until it decreases (with ``max_step=1``: backtracking from the unit step at every
        update, more SVM solves per update than ``"armijo"``). With both, the gates change
        gradually, as Sec. 4 of [1]_ describes them becoming crisp over the iterations.
        ``"doubling"``: the expand-then-backtrack
        scheme of Gönen's LMKSVM code, from step 1 without a bound on the doubling; its steps
        can reach :math:`2^{10}` and more in one update, which saturates the softmax gates
        (every gate 0 or 1), after which the gradient vanishes and no descent step is left,
        so many fits stop after one or two updates at a higher :math:`J` (kept as a labelled
        variant). ``"expand_backtrack"`` is a deprecated name of ``"doubling"``
        (FutureWarning).
    max_step : float, default=1.0
        Largest step of ``"bounded"`` and ``"armijo"`` (ignored by ``"doubling"``).
    ls_min_step : float, default=1e-3
        Smallest step tried; without a descent step the algorithm stops (local optimum).
    gate_threshold : float, default=0.0
        Gates below it become 0 and above ``1 - gate_threshold`` 1, in training, gradient and
        prediction (Gönen's code: 1e-3, which lets prediction skip kernels).
    sv_tol : float, default=1e-3
        Final clean-up (Gönen's code, made scale-invariant):
        :math:`\alpha_i < \text{sv\_tol}\,\min(C, \max_j\alpha_j)` becomes 0 and
        :math:`\alpha_i > (1-\text{sv\_tol})C` becomes :math:`C`, the bias then the mean over
        free support vectors (LIBSVM's midpoint rule without one). 0 keeps LIBSVM's solution.
    svm_tol : float, default=1e-3
        KKT tolerance of the inner SVM solver (LIBSVM's default, also Gönen's). Tighter
        tolerances make :math:`J` and its gradient more exact but can make LIBSVM very slow
        when :math:`K_\eta` is nearly rank-deficient and :math:`C` large.
    svm_backend : str, default="auto"
        SVM backend of :func:`mklcore.svm.svm_solve`; ``"auto"`` is
        :func:`mklcore.svm.default_backend`.
    callback : callable, default=None
        ``callback(intermediate_result)`` after each gating update (the payload adds
        ``gating_coef``; ``gap`` is nan); raising ``StopIteration`` stops with ``status=3``.
    {verbose}
    check_input : bool, default=True
        Validate ``K`` (shape, finiteness, symmetry).
    n_iter : int, default=None
        Deprecated alias of ``max_iter`` (FutureWarning).

    Returns
    -------
    result : MKLResult
        ``method="lmkl"`` (evaluate it with :func:`mklcore.decision`
        ``(result, K_test, X_gate=X_gate_test)`` or :func:`lmkl_decision`): ``weights``
        (mean gate of each kernel over the training set), ``dual_coef``
        (:math:`\alpha\circ y` after the clean-up), ``intercept``, ``objective`` (final
        :math:`J`), ``gap`` (``nan``: non-convex, no certificate), ``n_iter`` (accepted
        updates), ``success``, ``status``, ``message``; ``history`` has one row per accepted
        update with ``objective``, ``gap``, ``criterion`` (relative decrease of :math:`J`),
        ``weights``, ``time``, ``grad_norm``, ``step``, ``n_svm_calls`` (cumulative),
        ``svm_gap`` (of that SVM solve), ``max_gate`` (mean of :math:`\max_m\eta_m(x_i)`,
        1 = crisp) and ``gating_coef``. Extras: ``initial`` (a history row, without
        ``time``, ``criterion``, ``gap``, ``step``, for the initial gating), ``gating_coef``
        (final :math:`V`, column 0 = biases), ``gating``, ``gate_threshold``, ``eta_train``,
        ``alpha``, ``support`` (:math:`\alpha_i>0`), ``sv_percentage``
        (:math:`100\,\#SV/N`), ``n_svm_calls``, ``C``, ``svm_backend``, ``line_search``
        (the rule used) and ``max_step`` (``inf`` for ``"doubling"``); ``n_iter`` counts the
        gating updates actually made (``max_iter`` with ``status=1``: the whole schedule); for
        ``gating="fixed"`` also ``mkl_weights`` (:math:`\bar\eta_m^2/\gamma`) and
        ``effective_C`` (:math:`\gamma C`), :math:`\gamma = \sum_m\bar\eta_m^2`.

    Raises
    ------
    ValueError
        If ``C <= 0``, ``max_iter < 1``, another parameter is out of range, ``X_gate`` does not
        have one row per sample of ``K``, or ``y`` is not in {-1, +1}.

    Warns
    -----
    ConvergenceWarning
        With a ``tol``, if the relative decrease of :math:`J` was still above ``tol`` after
        ``max_iter`` updates.

    Notes
    -----
    Algorithm 1 of [1]_: line 1 draws :math:`V`; lines 3-4 compute :math:`K_\eta` and solve
    the SVM; lines 5-6 take a line-search step along the negative gradient (Sec. 3.1); line 7
    stops when the gradient is zero, no descent step is found, or the relative decrease of
    :math:`J` falls below ``tol``. Trial steps are accepted only if they strictly decrease
    :math:`J`. The SVM is hot-started from the previous :math:`\alpha` (Sec. 3.1) by the
    compiled engine (the default backend; ``"libsvm"`` cannot).

    ``max_iter`` is a budget (its default was 50, the paper's fixed schedule): with
    ``tol=None`` the run ends at a local optimum (status 0: no descent step of length
    ``>= ls_min_step``), and ``status=1`` with its message says that the budget ran out
    first. A trial step is accepted only if its :math:`J` is below the reference value (of
    the current gating, or of the last accepted step of the expansion phase).

    On a stack of at least 16 kernels the solver skips, in :math:`K_\eta`, the terms of
    negligible gates (``rtol`` of :func:`locally_combined_kernel`), with ``rtol`` chosen per
    gating so that the skipped terms move every entry of the SVM's dual gradient
    :math:`Q\alpha-\mathbf 1` by at most ``svm_tol / 100`` at any feasible :math:`\alpha`
    (:math:`|\alpha_j y_j|\le C`, so the change of entry :math:`i` is at most
    :math:`\text{rtol}\sqrt{D_i}\,C\sum_j\sqrt{D_j}`), and never more than
    :math:`10^{-6}` relative to the entries. With crisp gates most terms are skipped and
    kernel :math:`m` is read only between the points where its gate is not negligible;
    with fewer kernels every term is summed.

    Every computation runs in float64: a float32 stack is read as it is and each entry upcast
    (exactly) where it is used, without a float64 copy of the stack, so it
    gives the result of the float64 stack that holds the same, rounded, values. A float32
    stack and the float64 stack it was rounded from differ by about :math:`6\cdot10^{-8}`
    relative, and this difference is not amplified for a fixed gating (:math:`J` moves by as
    much); along the iterations, however, the SVM's stopping rule (a KKT violation of
    ``svm_tol``) and the strict comparisons of the line search can turn it into a different
    trajectory of the non-convex problem (differences up to ``svm_tol``-size, more over many
    updates). The reductions that feed these comparisons and thresholds (the gating scores,
    :math:`J`, the gradient and the bias) are summed in a fixed order without BLAS, so the
    result does not depend on the number of BLAS threads or on the BLAS kernels of a CPU.

    The clean-up threshold ``sv_tol`` is relative to :math:`\min(C, \max_i\alpha_i)`:
    scaling every kernel by :math:`s` is the problem with :math:`C s` (the dual variables
    scale by :math:`1/s`), and a threshold relative to :math:`C` alone would zero every
    :math:`\alpha_i` once all are far below the box.

    With a constant gating :math:`\bar\eta` the model is fixed-weight MKL with weights
    :math:`\beta_m = \bar\eta_m^2/\gamma` and penalty :math:`C' = \gamma C`,
    :math:`\gamma=\sum_m\bar\eta_m^2` (then :math:`\alpha' = \gamma\alpha`,
    :math:`J = J'/\gamma`).

    {reference}

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.localized import lmkl_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    >>> K = np.stack([X @ X.T, (X @ X.T + 1) ** 2])
    >>> K /= np.trace(K, axis1=1, axis2=2)[:, None, None]
    >>> res = lmkl_solve(K, y, X, C=10.0, max_iter=5, random_state=0)
    >>> bool(np.all(np.diff(res.history["objective"]) <= 0)), res.gating_coef.shape
    (True, (2, 3))
    """
    validate_params("lmkl_solve", _SOLVE_CONSTRAINTS, locals())
    max_iter = _deprecated_n_iter(n_iter, max_iter, "lmkl_solve")
    line_search = _deprecated_rule(line_search, "lmkl_solve")
    if svm_backend != "auto" and svm_backend not in available_backends():
        raise ValueError(f"Unknown SVM backend {svm_backend!r}; available: "
                         f"{['auto'] + available_backends()}.")
    if check_input:
        K, y, X_gate = _check_inputs(K, y, X_gate, gating, "lmkl_solve")
    else:
        y = np.asarray(y, dtype=float)
        X_gate = None if gating == "fixed" else np.asarray(X_gate, dtype=float)
    # float64 arithmetic throughout; a float32 stack is read as it is (each entry upcast
    # exactly where it is used: the results of its float64 copy, without the copy)
    K = np.asarray(K) if np.asarray(K).dtype in (np.float32, np.float64) else np.asarray(
        K, dtype=np.float64)
    n_kernels, n = K.shape[0], K.shape[1]
    C = float(C)
    Z_aug = _augment(X_gate, n, gating)
    shape = (n_kernels, Z_aug.shape[1])

    # Alg. 1, line 1: small random gating parameters
    if init_coef is not None:
        coef = check_finite(_check_coef(init_coef, shape, "init_coef"), "init_coef")
    else:
        rng = check_random_state(random_state)
        coef = rng.uniform(-init_scale, init_scale, size=shape)

    problem = _Problem(K, y, Z_aug, C, float(svm_tol), float(gate_threshold), svm_backend)
    monitor = Monitor(
        "lmkl", tol=tol, max_iter=max_iter, callback=callback, verbose=verbose, label="LMKL",
        criterion_name="relative decrease of J", certified=False,
        advice="Increase max_iter or loosen tol (tol=None runs until a local optimum or "
               "max_iter gating updates, without this warning).",
        input_check=lambda: check_finite(K, "K"))
    # Alg. 1, lines 3-4: gating, locally combined kernel, SVM
    state = problem.evaluate(coef)
    grad = problem.gradient(state)
    grad_norm = _frobenius(grad)

    def row():
        return {"grad_norm": grad_norm, "n_svm_calls": problem.n_svm_calls,
                "svm_gap": float(state.svm.gap), "max_gate": float(state.eta.max(axis=1).mean()),
                "gating_coef": state.coef.copy()}

    initial = {"objective": state.J, "weights": state.eta.mean(axis=0), **row()}
    max_step = float(max_step)
    first = 1.0 if line_search == "doubling" else min(1.0, max_step)
    while True:
        if problem.capped is not None:  # an SVM reached its cap: nothing is certain
            monitor.fail(problem.capped)
            break
        # Alg. 1, line 7: a zero gradient is a stationary point
        if not grad_norm > 0:
            monitor.succeed("the gradient with respect to the gating parameters is zero")
            break
        # Alg. 1, lines 5-6: line search along the normalised negative gradient
        previous = state.J
        new, step = _line_search(problem, state, grad, grad_norm, line_search, ls_min_step,
                                 first, max_step)
        if step == 0.0:  # Alg. 1, line 7: no descent step, a local optimum
            monitor.succeed(f"no descent step of length >= {ls_min_step:g} along the gradient "
                             f"(local optimum)")
            break
        state = new
        if line_search == "armijo":  # the next search starts at twice this step
            first = min(2.0 * step, max_step)
        grad = problem.gradient(state)
        grad_norm = _frobenius(grad)
        decrease = (previous - state.J) / max(abs(previous), 1e-300)
        if monitor.record(objective=state.J, gap=np.nan, weights=state.eta.mean(axis=0),
                          criterion=decrease, snapshot={"gating_coef": state.coef.copy()},
                          step=step, **row()):
            break

    # clean-up of alpha as in Gönen's LMKSVM code, support vectors, bias
    alpha = state.svm.alpha.copy()
    K_eta = problem.combined(state.eta)
    if sv_tol > 0:
        # relative to the scale of alpha: with kernels scaled by s (the problem with C * s)
        # every alpha_i is below C / s, and a threshold sv_tol * C would empty the model
        alpha[alpha < sv_tol * min(C, float(alpha.max()))] = 0.0
        alpha[alpha > (1.0 - sv_tol) * C] = C
        dual_coef = alpha * y
        intercept = _intercept(alpha, y, _matvec(K_eta, dual_coef), C)
    else:
        dual_coef = alpha * y
        intercept = float(state.svm.intercept)
    support = np.flatnonzero(alpha > 0)
    extras = {}
    if gating == "fixed":
        eta_bar = state.eta[0]
        gamma = float(np.sum(eta_bar ** 2))
        extras = {"mkl_weights": eta_bar ** 2 / gamma, "effective_C": gamma * C}
    return monitor.finish(
        weights=state.eta.mean(axis=0), dual_coef=dual_coef, intercept=intercept,
        objective=state.J, gap=np.nan, initial=initial, gating_coef=state.coef.copy(),
        gating=gating, gate_threshold=float(gate_threshold), eta_train=state.eta, alpha=alpha,
        support=support, sv_percentage=100.0 * support.size / n,
        n_svm_calls=problem.n_svm_calls, C=C, svm_backend=problem.backend,
        line_search=line_search, max_step=max_step if line_search != "doubling" else np.inf,
        **extras)


def lmkl_decision(result, K_test, X_gate=None, *, return_n_evals=False, X_gate_test=None):
    r"""Gated discriminant of LMKL (eq. 8) on a precomputed test stack.

    .. math::
        f(x) = \sum_{i\in SV} \alpha_i y_i \sum_m \eta_m(x)\, K_m(x, x_i)\, \eta_m(x_i) + b

    The sum runs only over support vectors and, for each kernel ``m``, over the test points and
    support vectors whose gates :math:`\eta_m` are both non-zero (with ``gate_threshold > 0``
    many are exactly zero); the skipped terms are exactly zero, so the values equal the full
    sum. This is the rule :func:`mklcore.decision` applies to ``method="lmkl"`` results:
    ``decision(result, K_test, X_gate=X_gate_test)``.

    Parameters
    ----------
    result : MKLResult
        Result of :func:`lmkl_solve`.
    K_test : ndarray of shape (n_kernels, n_test, n_train)
        Test kernels between test points (rows) and training points (columns), normalised
        with the *training* normalisation factors.
    X_gate : ndarray of shape (n_test, n_gate_features), default=None
        Gating representation of the test points, with the same preprocessing as in training
        (not needed for ``gating="fixed"``).
    return_n_evals : bool, default=False
        Also return the number of kernel evaluations the sum needs,
        :math:`\sum_x\sum_m\#\{i\in SV: \eta_m(x)\eta_m(x_i)\ne 0\}`.
    X_gate_test : ndarray of shape (n_test, n_gate_features), default=None
        Deprecated keyword alias of ``X_gate`` (FutureWarning).

    Returns
    -------
    f : ndarray of shape (n_test,)
        Decision values; the predicted class is their sign.
    n_evals : int
        Only with ``return_n_evals=True``.
    """
    if X_gate_test is not None:
        if X_gate is not None:
            raise TypeError("lmkl_decision got both X_gate and its deprecated alias "
                            "X_gate_test; pass X_gate only.")
        warnings.warn("The 'X_gate_test' parameter of lmkl_decision is deprecated and will be "
                      "removed; use 'X_gate' instead.", FutureWarning, stacklevel=2)
        X_gate = X_gate_test
    K_test = np.asarray(K_test)
    coef = np.asarray(result["dual_coef"], dtype=float)
    eta_train = np.asarray(result["eta_train"], dtype=float)
    if K_test.ndim != 3 or K_test.shape[0] != eta_train.shape[1] \
            or K_test.shape[2] != coef.shape[0]:
        raise ValueError(f"K_test must have shape (n_kernels={eta_train.shape[1]}, n_test, "
                         f"n_train={coef.shape[0]}); got {K_test.shape}.")
    eta_test = lmkl_gates(result, X_gate, K_test.shape[1])
    f, n_evals = _gated_sum(lambda m, rows, cols: K_test[m][np.ix_(rows, cols)],
                            result, eta_test)
    return (f, n_evals) if return_n_evals else f


def lmkl_gates(result, X_gate, n_samples=None):
    r"""Gating outputs :math:`\eta_m(z)` of a fitted LMKL model at new points.

    Parameters
    ----------
    result : MKLResult
        Result of :func:`lmkl_solve`.
    X_gate : ndarray of shape (n_samples, n_gate_features) or None
        Gating representation of the points (preprocessed as in training); ignored for
        ``gating="fixed"``.
    n_samples : int, default=None
        Number of points; needed only for ``gating="fixed"`` (``X_gate.shape[0]`` otherwise).

    Returns
    -------
    eta : ndarray of shape (n_samples, n_kernels)
        Gates with the model's ``gate_threshold`` applied.
    """
    V = np.asarray(result["gating_coef"], dtype=float)
    thr = float(result.get("gate_threshold", 0.0))
    if result.get("gating", "softmax") == "fixed":
        if n_samples is None:
            n_samples = np.shape(X_gate)[0]
        return softmax_gating(np.zeros((n_samples, 0)), V, gate_threshold=thr)
    if X_gate is None:
        raise ValueError("X_gate is required: the gating of a softmax LMKL model depends "
                         "on the test inputs.")
    X_gate = np.asarray(X_gate, dtype=float)
    if X_gate.ndim != 2 or (n_samples is not None and X_gate.shape[0] != n_samples):
        raise ValueError(f"X_gate must have shape (n_test={n_samples}, n_gate_features); got "
                         f"{X_gate.shape}.")
    return softmax_gating(X_gate, V, gate_threshold=thr)


def _gated_sum(block, result, eta_test):
    """Eq. (8) with kernel blocks from ``block(m, rows, cols)`` over active rows/SVs only."""
    coef = np.asarray(result["dual_coef"], dtype=float)
    eta_train = np.asarray(result["eta_train"], dtype=float)
    sv = np.flatnonzero(coef)
    f = np.zeros(eta_test.shape[0])
    n_evals = 0
    for m in range(eta_train.shape[1]):
        rows = np.flatnonzero(eta_test[:, m] > 0)
        cols = sv[eta_train[sv, m] > 0]
        if rows.size == 0 or cols.size == 0:
            continue
        Km = np.asarray(block(m, rows, cols), dtype=float)
        f[rows] += eta_test[rows, m] * (Km @ (coef[cols] * eta_train[cols, m]))
        n_evals += rows.size * cols.size
    return f + float(result["intercept"]), int(n_evals)


# ---------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------

@_doc
class LMKLClassifier(BaseMKLClassifier):
    r"""Localized multiple kernel learning classifier (Gönen & Alpaydın, ICML 2008).

    Learns a softmax gating model :math:`\eta_m(x)` together with an SVM on the locally
    combined kernel :math:`K_\eta(x,x')=\sum_m\eta_m(x)K_m(x,x')\eta_m(x')`; the discriminant
    is eq. (8) of [1]_, :math:`f(x)=\sum_i\alpha_iy_i\sum_m\eta_m(x)K_m(x,x_i)\eta_m(x_i)+b`.
    See :func:`lmkl_solve` for the algorithm and the parameters it shares.

    Parameters
    ----------
    kernels : list, default=None
        Kernel bank (see :func:`mklcore.kernels.kernel_bank`; ``kernel_bank("lmkl")`` gives
        the paper's :math:`K_L`, :math:`K_P`, :math:`K_G`). ``None`` uses the paper's
        :math:`(K_L\text{-}K_P)` pair: linear and :math:`(\langle x,z\rangle+1)^2`.
    C : float, default=1.0
        Misclassification penalty of problem (5). Must be > 0 (the paper's grid with
        ``normalize="unit_trace"``: 0.01 ... 100; the useful range then depends on n).
    gating : {"softmax", "fixed"}, default="softmax"
        Linear softmax gating on the (standardised) inputs, or one constant gate per kernel.
    max_iter : int, default=100
        Maximum number of gating updates (the paper runs 50; see :func:`lmkl_solve`).
    normalize : {"unit_trace", "trace", "cosine"} or None, default="trace"
        Kernel normalisation fitted on the training data: ``"trace"`` scales each training
        kernel to trace n (mklcore's convention: the paper's unit trace with C multiplied by
        n), ``"unit_trace"`` to trace 1 (the paper, Sec. 4), ``"cosine"`` to unit diagonal
        (Gönen's later LMKSVM code). Test kernels use the training factors.
    gate_threshold : float, default=0.0
        Gates below it become 0 and above ``1 - gate_threshold`` 1 (Gönen's code: 1e-3);
        prediction then skips kernel ``m`` wherever :math:`\eta_m(x)=0`.
    standardize_gating : bool, default=True
        z-score the gating inputs with the training mean and standard deviation (constant
        features get scale 1).
    gating_columns : array-like of int, default=None
        Input features the gating model reads; ``None`` uses all of them.
    tol : float or None, default=None
        Relative decrease of :math:`J` at which to stop (``None``: no such test; the fit
        ends at a local optimum or after ``max_iter`` updates).
    line_search : {"armijo", "bounded", "doubling"}, default="armijo"
        Step-size rule, with steps of at most 1 except for ``"doubling"``, the uncapped
        expansion of Gönen's code, kept as a variant (see :func:`lmkl_solve`).
    init_scale : float, default=0.01
        Initial gating parameters are drawn from :math:`U(-s, s)`.
    sv_tol : float, default=1e-3
        Relative clean-up threshold of the dual variables.
    {svm_tol}
    random_state : int, RandomState instance or None, default=None
        Seed of the initial gating parameters.
    {verbose}
    n_iter : int, default=None
        Deprecated alias of ``max_iter`` (FutureWarning at ``fit``).
    probability : bool, default=False
        Platt scaling fitted by a 5-fold internal cross-validation, as
        ``sklearn.svm.SVC(probability=True)`` does: enables :meth:`predict_proba` and
        :meth:`predict_log_proba`; ``random_state`` also seeds the folds.

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Mean gating output of each kernel over the training set.
    gating_coef_ : ndarray of shape (n_kernels, n_features)
        Gating weights :math:`v_m` in the units of the raw inputs,
        :math:`\eta(x)=\mathrm{softmax}(\text{gating\_coef\_}\,x+\text{gating\_intercept\_})`
        (zero for features outside ``gating_columns`` and for ``gating="fixed"``).
    gating_intercept_ : ndarray of shape (n_kernels,)
        Gating biases :math:`v_{m0}` in the same units.
    {fitted_model}
    sv_percentage_ : float
        Percentage of training points that are support vectors (the paper's "SV%").
    n_iter_ : int
        Number of accepted gating updates.
    converged_ : bool
        Whether ``status == 0`` (a local optimum, or the relative decrease of :math:`J`
        reached ``tol``); ``False`` when ``max_iter`` updates ran out first.
    objective_ : float
        Final objective :math:`J` (the SVM dual value (7)).
    gap_ : float
        Always ``nan``: the problem is non-convex and has no duality-gap certificate.
    criterion_ : float
        The stopping value compared with ``tol``: the relative decrease of :math:`J` at the
        last update.
    history_ : dict of ndarray
        Per-update rows of :func:`lmkl_solve` (the initial gating is in
        ``result_.initial``).
    result_ : MKLResult
        The result of :func:`lmkl_solve` (gating parameters on the standardised inputs).
    kernel_bank_ : KernelBank
        The fitted kernel bank.
    gating_mean_, gating_scale_ : ndarray of shape (n_gating_features,)
        Standardisation of the gating inputs.

    {reference}

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.localized import LMKLClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = LMKLClassifier(C=1.0, max_iter=10, random_state=0).fit(X, y)
    >>> clf.gating_coef_.shape, clf.weights_.shape
    ((2, 2), (2,))
    """

    #: the solver's constraints (keys that are no parameter here are never checked)
    _parameter_constraints = {
        **common_constraints("kernels"), **_SOLVE_CONSTRAINTS,
        "normalize": [Options("unit_trace", "trace", "cosine"), None],
        "standardize_gating": [bool],
        "gating_columns": [list, tuple, np.ndarray, None],
        "random_state": [Interval("int", 0, None), np.random.RandomState, None],
    }

    def __init__(self, *, kernels=None, C=1.0, gating="softmax", max_iter=100,
                 normalize="trace", gate_threshold=0.0, standardize_gating=True,
                 gating_columns=None, tol=None, line_search="armijo", init_scale=0.01,
                 sv_tol=1e-3, svm_tol=1e-3, random_state=None, verbose=0, n_iter=None,
                 probability=False):
        self._store_params(locals())

    @staticmethod
    def _default_kernels():
        from .kernels import linear, polynomial

        return [linear(), polynomial(2, coef0=1.0)]

    def _bank_params(self):
        kernels, normalize = super()._bank_params()
        return kernels, "trace" if normalize == "unit_trace" else normalize

    def _gating_columns(self, n_features):
        if self.gating_columns is None:
            return np.arange(n_features)
        cols = np.asarray(self.gating_columns)
        if cols.ndim != 1 or cols.size == 0 or cols.dtype.kind not in "iu" \
                or cols.min() < -n_features or cols.max() >= n_features:
            raise ValueError(f"The 'gating_columns' parameter of LMKLClassifier must be a "
                             f"non-empty list of feature indices in [0, {n_features}). Got "
                             f"{self.gating_columns!r} instead.")
        return np.arange(n_features)[cols]

    def _gating_inputs(self, X):
        Z = np.asarray(X, dtype=float)[:, self.gating_columns_]
        return (Z - self.gating_mean_) / self.gating_scale_

    def _solve_inputs(self, X):
        """Standardised gating inputs of the training data (the ``X_gate`` of ``_solve``)."""
        self.gating_columns_ = self._gating_columns(X.shape[1])
        Z = np.asarray(X, dtype=float)[:, self.gating_columns_]
        if self.standardize_gating:
            self.gating_mean_ = Z.mean(axis=0)
            scale = Z.std(axis=0)
            self.gating_scale_ = np.where(scale > 0, scale, 1.0)
        else:
            self.gating_mean_ = np.zeros(Z.shape[1])
            self.gating_scale_ = np.ones(Z.shape[1])
        return {"X_gate": (Z - self.gating_mean_) / self.gating_scale_}

    def _solve(self, K, y, *, X_gate):
        if self.normalize == "unit_trace":
            K /= K.shape[1]  # KernelBank's "trace" gives trace n
        max_iter = _deprecated_n_iter(self.n_iter, self.max_iter, type(self).__name__)
        return lmkl_solve(
            K, y, None if self.gating == "fixed" else X_gate, C=self.C, max_iter=max_iter,
            random_state=self.random_state, gating=self.gating, tol=self.tol,
            init_scale=self.init_scale, line_search=self.line_search,
            gate_threshold=self.gate_threshold, sv_tol=self.sv_tol, svm_tol=self.svm_tol,
            verbose=self.verbose, check_input=False)

    def _set_fitted(self, result):
        super()._set_fitted(result)
        self.support_ = np.asarray(result.support)
        self.sv_percentage_ = float(result.sv_percentage)
        V = np.asarray(result.gating_coef, dtype=float)
        n_kernels = V.shape[0]
        coef = np.zeros((n_kernels, self.n_features_in_))
        intercept = V[:, 0].copy()
        if self.gating == "softmax":
            slopes = V[:, 1:] / self.gating_scale_
            coef[:, self.gating_columns_] = slopes
            intercept -= slopes @ self.gating_mean_
        self.gating_coef_ = coef
        self.gating_intercept_ = intercept

    def gating_function(self, X):
        r"""Gating outputs :math:`\eta_m(x)` of new points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        eta : ndarray of shape (n_samples, n_kernels)
            Gate of each kernel at each point (rows sum to 1 without thresholding).
        """
        return self._gates(self._check_X(X))

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype="numeric")

    def _gates(self, X):
        X_gate = None if self.gating == "fixed" else self._gating_inputs(X)
        return lmkl_gates(self.result_, X_gate, X.shape[0])

    def decision_function(self, X, *, return_n_evals=False):
        r"""Gated discriminant (eq. 8 of Gönen & Alpaydın 2008); positive means ``classes_[1]``.

        Kernel ``m`` is evaluated only between the test points with :math:`\eta_m(x)>0` and
        the support vectors with :math:`\eta_m(x_i)>0` (with ``gate_threshold > 0`` many
        gates are exactly zero, which saves kernel evaluations at test time).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_n_evals : bool, default=False
            Also return the number of kernel evaluations performed.

        Returns
        -------
        f : ndarray of shape (n_samples,)
            Decision values.
        n_evals : int
            Only with ``return_n_evals=True``. With more than two classes, ``f`` has one
            column per class (one model per class) and ``n_evals`` sums over them.
        """
        if hasattr(self, "estimators_"):
            check_is_fitted(self)
            X = validate_data(self, X, reset=False, dtype="numeric")  # the models saw arrays
            out = [m.decision_function(X, return_n_evals=True) for m in self.estimators_]
            f = np.column_stack([o[0] for o in out])
            return (f, sum(o[1] for o in out)) if return_n_evals else f
        X = self._check_X(X)
        f, n_evals = _gated_sum(lambda m, rows, cols: self._kernel_block(m, X[rows], cols),
                                self.result_, self._gates(X))
        return (f, n_evals) if return_n_evals else f

    def _kernel_block(self, m, X, cols):
        """Normalised kernel ``m`` between ``X`` and the training points ``cols``."""
        bank = self.kernel_bank_
        kernel = bank.kernels_[m]
        X_fit = np.asarray(bank.X_fit_)
        Km = kernel(X, X_fit[cols])
        if self.normalize in ("trace", "unit_trace"):
            Km *= bank.trace_factors_[m] / (X_fit.shape[0] if self.normalize == "unit_trace" else 1)
        elif self.normalize == "cosine":
            # as mklcore.kernels.normalize_cosine: entries of zero-norm points become 0
            denom = np.sqrt(np.outer(np.maximum(kernel.diag(X), 0.0),
                                     np.maximum(bank.train_diag_[m, cols], 0.0)))
            Km = np.divide(Km, denom, out=np.zeros_like(Km), where=denom > 0)
        return Km
