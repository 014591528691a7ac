r"""RLS2 and linear RLS2 (Dinuzzo, "Kernel machines with two layers and multiple kernel learning").

RLS2 is multiple kernel learning with the square loss, written as a two-layer kernel machine.
For Gram matrices :math:`\mathbf K_1,\dots,\mathbf K_m`, scalings :math:`s_i\ge0` and outputs
:math:`y` (already shifted by the fixed intercept :math:`b`) it solves Problem 5 of [1]_,

.. math::
    \min_{c\in\mathbb R^\ell,\ d\in\Delta_m}\ F(c,d) =
    \tfrac12\|y-\mathbf K(d)c\|^2+\tfrac{\lambda}{2}c^\top\mathbf K(d)c,\qquad
    \mathbf K(d)=\sum_i d_i s_i\mathbf K_i,

over the standard simplex :math:`\Delta_m`; the predictor is
:math:`f(x) = b + \sum_j c_j \sum_i d_i s_i K_i(x_j, x)`. Algorithm 1 alternates the closed
form (13) for :math:`c` with the simplex-constrained least squares Problem 7 for :math:`d`
(an exact active-set method, or the paper's pairwise SMO). Plain alternation needs thousands
of iterations at small :math:`\lambda`, so by default each iteration also tries a Newton step
on the reduced objective :math:`G(d)` and keeps it only if it beats the alternation step
(``accelerate=False``: the paper's algorithm). The duality gap of Problem 6 certifies
convergence: :math:`\min_{d\in\Delta_m}G(d)=\max_cD(c)` with
:math:`D(c)=\lambda[y^\top c-\tfrac\lambda2\|c\|^2-\tfrac12\max_ic^\top s_i\mathbf K_ic]`, so with
:math:`q_i=c^\top s_i\mathbf K_i c` at :math:`c=c(d)`,
:math:`G(d)-D(c(d))=\tfrac\lambda2(\max_i q_i-\sum_i d_iq_i)`, reported relative to
:math:`G(d)=\tfrac\lambda2 y^\top c(d)`. The paper's stopping rule (Sec. 5) is ``residual_tol``.

Linear RLS2 (Sec. 4.2) has one linear kernel per feature and never forms an
:math:`\ell\times\ell` kernel per feature: :math:`f(x)=b+w^\top x`,
:math:`w_i=d_is_i\,x^{(i)\top}c` (eq. 12). Minimising over :math:`d` (Cauchy-Schwarz) shows
it is the squared weighted Lasso
:math:`\min_w\tfrac12\|y-Xw\|^2+\tfrac\lambda2(\sum_i|w_i|/\sqrt{s_i})^2`.

References
----------
.. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
   arXiv:1001.2709, 2010. Equation, problem, lemma and algorithm numbers refer to its v1.
"""

import re
import weakref

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import KernelBankMixin, fit_or_unfitted, store_params
from ._linalg import cholesky, cholesky_solve, lower_triangular_solve, on_one_blas_thread
from ._result import Monitor
from ._validation import (Interval, Options, as_float_array, check_dense, check_finite,
                          check_kernel_stack, check_labels_present, validate_params)
from .svm import combine_kernels

__all__ = [
    "rls2_solve", "rls2_path", "rls2_linear_solve", "rls2_linear_path", "rls2_scaling",
    "rls2_linear_scaling", "rls2_decision", "rls2_lambda_max",
    "RLS2Regressor", "RLS2Classifier", "LinearRLS2Regressor", "LinearRLS2Classifier",
]

#: parameter constraints shared by the solver functions and the estimators
_SOLVER_CONSTRAINTS = {
    "accelerate": [bool],
    # lam = inf is the limit of Lemma 5 (c = 0); the estimators exclude it
    "lam": [Interval("real", 0, np.inf, closed="right")],
    "tol": [Interval("real", 0, None, closed="left"), None],
    "residual_tol": [Interval("real", 0, None, closed="neither"), None],
    "max_iter": [Interval("int", 1, None)],
    "simplex_solver": [Options("active_set", "smo")],
    "linear_solver": [Options("cholesky", "cg")],
    "verbose": [Interval("int", 0, None), bool],
    "warm_start": [bool],
    "fisher_weighted": [bool],
    "check_input": [bool],
}

#: kernel scaling rules of Sec. 4.3 (rule (18) and its centred variant) understood by rls2_solve
_KERNEL_RULES = ("trace", "centered_trace", "none")
#: feature scaling rules of Sec. 4.3 (rules (16) and (17)) understood by rls2_linear_solve
_LINEAR_RULES = ("norm", "fisher", "none")

#: a lambda below this times the largest scaled kernel trace makes K(d) + lam I singular to
#: working precision for a rank-deficient K(d): the warnings of such runs say so
_TINY_LAM = 1e-12
#: relative KKT tolerance of the exact Problem-7 solvers
_SIMPLEX_TAU = 1e-12
#: the SMO solver is only asymptotically exact; its pair steps are capped (toolbox: 20 000)
_SMO_MAX_STEPS = 100_000
#: relative change of the objective treated as round-off by the Newton safeguard
_ROUNDOFF = 1e-13
#: at most this many doublings of an accepted Newton step (each costs one evaluation of (13))
_MAX_EXTRAPOLATIONS = 4
#: a kernel with few distinct rows is multiplied in compressed form (``_KernelOps``) only if
#: that saves at least this many multiplications per product (below, the overhead dominates)
_MIN_SAVED = 10_000
#: a stack is recognised for reuse (``check_input=False``) by every this-many-th entry
_FINGERPRINT_STRIDE = 4099
#: cache G = V'V in SMO when there are at most this many kernels (O(m^2) memory)
_SMO_GRAM_MAX = 2000

# --- Shared docstring sections, substituted by ``_fill_doc`` (``{key}`` in a docstring) ---
_DOC = {
    "references": """References
    ----------
    .. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
       arXiv:1001.2709, 2010.""",
    "tol": r"""tol : float or None, default=1e-6
        Stop at the first iterate whose relative duality gap of Problem 6,
        :math:`\tfrac\lambda2(\max_iq_i-\sum_id_iq_i)/G(d)` with
        :math:`q_i=c^\top s_i\mathbf K_ic` (see the module docstring), is at most ``tol``; this
        certifies the global optimum. ``None``: no stopping test, run ``max_iter`` iterations
        (status 1, no warning).""",
    "residual_tol": r"""residual_tol : float, default=None
        Also stop when the paper's criterion (Sec. 5 of [1]_, the normalised residual of (13)),
        :math:`\|y-(\mathbf K(d)+\lambda I)c\|^2/\|y\|^2` after a :math:`d`-update, is below it
        (the author's toolbox uses 1e-4). It does not certify optimality; use it only to
        reproduce the paper's iteration counts.""",
    "max_iter": r"""max_iter : int, default=10000
        Maximum number of outer iterations of Algorithm 1 (per :math:`\lambda` of a path, per
        machine of a one-vs-all classifier).""",
    "simplex_solver": """simplex_solver : {"active_set", "smo"}, default="active_set"
        Solver of Problem 7: exact primal active-set method, or pairwise SMO (the paper's).""",
    "linear_solver": r"""linear_solver : {"cholesky", "cg"}, default="cholesky"
        Solver of the linear system (13): dense Cholesky, or conjugate gradient warm-started at
        the previous :math:`c` (the toolbox's choice).""",
    "accelerate": r"""accelerate : bool, default=True
        Also try a Newton step on :math:`G(d)` at every iteration (see :func:`rls2_solve`);
        ``False`` runs the plain Algorithm 1 of the paper.""",
    "callback": """callback : callable, default=None
        Called as ``callback(intermediate_result)`` once per outer iteration with an
        :class:`~mklcore._result.MKLResult` of the iteration's iterate (the history row):
        ``n_iter``, ``objective``, ``gap``, ``criterion``, ``weights``, ``time``, ``method``,
        ``dual_coef`` and ``residual``; raising ``StopIteration`` stops with ``status=3``.""",
    "verbose": """verbose : int, default=0
        ``1``: a progress line at the first iteration, every 10 and at the end; ``>= 2``:
        every iteration.""",
    "intercept": """intercept : float or "mean", default=0.0
        Fixed intercept :math:`b` (never optimised); ``"mean"`` uses the mean of ``y``, as
        Sec. 5.2 of [1]_ does for regression.""",
    # parameters of the estimators
    "kernels": r"""kernels : list, default=None
        Kernel bank (Kernel objects, ``(name, params[, columns])`` tuples or callables, see
        :func:`mklcore.kernels.kernel_bank`). None uses ``kernel_bank("rls2_default")``:
        polynomial degrees 1-3 and 10 Gaussian widths on all and on each single feature
        (:math:`13(N+1)` kernels, the bank of Sec. 5.2 and Table 2 of [1]_).""",
    "lam_kernel": r"""lam : float, default=0.01
        Regularisation parameter :math:`\lambda > 0` of Problem 5. With unit-trace kernels
        (the default scaling) the useful range is about :math:`10^{-6}` to :math:`10`.""",
    "kernel_scaling": ('scaling : {"trace", "centered_trace", "none"}, ndarray or None, '
                       """default="trace"
        Kernel scaling :math:`s_i` (an array has shape (n_kernels,)); ``"trace"`` is rule
        (18) (see :func:`rls2_scaling`)."""),
    "normalize": """normalize : {"trace", "cosine"} or None, default=None
        Normalisation of the kernels by :class:`~mklcore.kernels.KernelBank`, applied before
        the scaling (usually left at None: the scaling plays that role).""",
    "lam_linear": r"""lam : float, default=0.1
        Regularisation parameter :math:`\lambda > 0` (with unit-norm feature columns, rule
        (16), the prostate data select :math:`\lambda\approx0.09`).""",
    "lams": r"""lams : array-like of shape (n_lambdas,)
        Values of :math:`\lambda > 0`, sorted here in decreasing order (e.g.
        ``np.logspace(-6, 1, 30)`` for unit-trace kernels).""",
    "path_warm_start": r"""warm_start : bool, default=True
        Start each :math:`\lambda` at the previous solution; ``False`` starts every value at
        the Lemma-5 vertex (the warm-start ablation).""",
    "fisher_weighted": """fisher_weighted : bool, default=False
        Class-size-weighted variant of rule (17).""",
    "fit_intercept": """fit_intercept : bool, default=True
        Use the mean training output as the fixed intercept :math:`b` (Sec. 5.2 of [1]_);
        False uses :math:`b=0`.""",
    "ova_coding": """ova_coding : {"pm1", "01"}, default="pm1"
        Output coding of the one-vs-all machines (three or more classes): +1/-1, or the
        toolbox's 1/0 indicators.""",
    # fitted attributes of the estimators ({unit}: kernels or features; the other keys
    # give the shapes of the one-vs-all classifiers, see _estimator_doc)
    "attributes": r"""Attributes
    ----------
    {classes}weights_ : ndarray of shape (n_{unit},){rows}
        Weights :math:`d` (on the simplex, sparse){ova}.
    effective_weights_ : ndarray, same shape as ``weights_``
        :math:`d\circ s`, the weights of the raw {unit}.
    kernel_names_ : list of str
        The name of each of the {unit} (the bank's kernel names, or the feature names).
    scaling_ : ndarray, same shape as ``weights_``
        Scaling :math:`s` used.
    dual_coef_ : ndarray of shape (n_samples,){samples}
        Coefficients :math:`c`.
    intercept_ : float{each}
        Intercept :math:`b` (zero for the classifiers).
    df_ : float{each}
        Equivalent degrees of freedom, eq. (15):
        :math:`\ell-\lambda\,\mathrm{tr}((\mathbf K(d)+\lambda I)^{-1})`.
    n_selected_ : int{each}
        Number of {unit} with :math:`d_i>0`.
    n_iter_ : int{each}
        Outer iterations of Algorithm 1.
    converged_ : bool
        Whether the relative gap fell below ``tol`` (for every machine).
    objective_ : float{each}
        Objective :math:`F` of Problem 5.
    gap_ : float{each}
        Relative duality gap.
    criterion_ : float{each}
        The stopping value compared with ``tol`` (``result_.criterion_name`` says which).
    history_ : dict of ndarray{dicts}
        Per-iteration ``objective``, ``gap``, ``weights``, ``time``, ``residual``,
        ``n_selected`` and ``newton``.
    result_ : MKLResult{results}
        The full result of :func:`{solver}`.
    n_features_in_ : int
        Number of features.""",
    "X_test": """X : array-like of shape (n_samples, n_features)
        Inputs.""",
    "bank_attributes": """kernel_bank_ : KernelBank
        Fitted kernel bank.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training inputs.""",
}
#: the loop parameters every estimator takes, in the order of their signatures
_DOC["loop"] = "\n    ".join(_DOC[key] for key in (
    "tol", "residual_tol", "max_iter", "simplex_solver", "accelerate", "verbose"))


def _fill_doc(**extra):
    """Decorator: a line ``{key1, key2}`` becomes those sections of ``_DOC``/``extra``."""
    parts = {**_DOC, **extra}

    def expand(match):
        keys = [key.strip() for key in match.group(2).split(",")]
        if not all(key in parts for key in keys):
            return match.group(0)
        text = "\n    ".join(parts[key] for key in keys)
        return match.group(1) + text.replace("\n    ", "\n" + match.group(1))

    def fill(obj):
        doc = obj.__doc__
        if doc:  # python -OO strips docstrings
            doc = re.sub(r"^( +)\{([A-Za-z_, ]+)\}$", expand, doc, flags=re.M)
            for key, text in parts.items():
                doc = doc.replace("{" + key + "}", text)
            obj.__doc__ = doc
        return obj

    return fill


def _estimator_doc(unit, solver, ova):
    """``_fill_doc`` for an estimator over ``unit`` (kernels, features), one-vs-all or not."""
    shapes = dict(classes="classes_ : ndarray of shape (n_classes,)\n        Class labels.\n    ",
                  rows=f" or (n_classes, n_{unit})",
                  ova=" (one row per one-vs-all machine for three or more classes)",
                  samples=" or (n_classes, n_samples)", each=" or ndarray of shape (n_classes,)",
                  dicts=" or list of dict", results=" or list of MKLResult")
    if not ova:
        shapes = dict.fromkeys(shapes, "")
    task = _DOC["ova_coding" if ova else "fit_intercept"]
    fill = _fill_doc(**shapes, unit=unit, solver=solver, task=task)

    def decorate(cls):  # the References section goes before the Examples
        if cls.__doc__:
            cls.__doc__ = cls.__doc__.replace("\n    Examples\n",
                                              "\n    {references}\n\n    Examples\n")
        return fill(cls)

    return decorate


@on_one_blas_thread  # the same bits for every thread count, as the fit
def rls2_decision(result, K_test):
    """Evaluate an RLS2 model, :math:`f = b + \\sum_i d_i s_i \\mathbf K^{\\rm test}_i c`.

    Parameters
    ----------
    result : MKLResult
        Output of :func:`rls2_solve` or :func:`rls2_path` (needs ``weights``, ``scaling``,
        ``dual_coef`` and ``intercept``).
    K_test : ndarray of shape (n_kernels, n_test, n_train)
        Raw test kernels; only those with a non-zero weight are read.

    Returns
    -------
    f : ndarray of shape (n_test,)
    """
    K_test = np.asarray(K_test)
    weights = np.asarray(result["weights"], dtype=float)
    scaling = np.asarray(result.get("scaling", np.ones_like(weights)), dtype=float)
    coef = np.asarray(result["dual_coef"], dtype=float)
    if K_test.ndim == 2 and weights.size == 1:
        K_test = K_test[None]
    if K_test.ndim != 3 or K_test.shape[0] != weights.shape[0] or K_test.shape[2] != coef.shape[0]:
        raise ValueError(
            f"K_test must have shape (n_kernels={weights.shape[0]}, n_test, "
            f"n_train={coef.shape[0]}); got {K_test.shape}.")
    f = np.zeros(K_test.shape[1])
    for i in np.flatnonzero(weights):  # only selected kernels are evaluated
        f += (weights[i] * scaling[i]) * (K_test[i] @ coef)
    return f + float(result["intercept"])


# --- Scaling rules (Sec. 4.3: eqs 16, 17, 18) -----------------------------------------
def _safe_inverse(values):
    """1/values, with 0 where values is 0 (such kernels/features can never be selected)."""
    values = np.asarray(values, dtype=float)
    out = np.zeros_like(values)
    positive = values > 0
    out[positive] = 1.0 / values[positive]
    return out


def _scaling_error(owner, scaling, rules, m, what):
    """The ValueError of an invalid ``scaling``."""
    return ValueError(
        f"The 'scaling' parameter of {owner} must be one of "
        f"{{{', '.join(repr(r) for r in rules)}}}, None or an array of shape ({what}={m},) of "
        f"non-negative finite floats, not all zero. Got {scaling!r} instead.")


def _resolve_scaling(owner, scaling, rules, m, what, rule_scaling):
    """The scaling ``s``: ``rule_scaling(scaling)`` for a rule name (or None), else the array."""
    if isinstance(scaling, str) or scaling is None:
        if scaling is not None and scaling not in rules:
            raise _scaling_error(owner, scaling, rules, m, what)
        s = rule_scaling(scaling)
        if not np.any(s > 0):
            unit = what.split("_", 1)[1]
            raise ValueError(f"scaling={scaling!r} gives s = 0 to every one of the {m} {unit} "
                             f"(zero trace, norm or variance): nothing can be selected.")
        return s
    try:
        s = np.asarray(scaling, dtype=float)
    except (TypeError, ValueError):
        raise _scaling_error(owner, scaling, rules, m, what) from None
    if s.shape != (m,) or not np.all(np.isfinite(s)) or np.any(s < 0) or not np.any(s > 0):
        raise _scaling_error(owner, scaling, rules, m, what)
    return s


def _check_transductive(value, name):
    """``value`` as a finite float array (a clear error naming ``name`` otherwise)."""
    array = np.asarray(check_dense(value, name))
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers; got an array of dtype {array.dtype}.")
    return check_finite(array.astype(float, copy=False), name)


@_fill_doc()
def rls2_scaling(K, rule="trace", *, transductive_K=None):
    r"""Kernel scaling coefficients :math:`s_i` of RLS2, rule (18) of [1]_.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices.
    rule : {"trace", "centered_trace", "none"} or None, default="trace"
        ``"trace"``: :math:`s_i = 1/\mathrm{tr}(\mathbf K_i)` (rule (18), unit trace);
        ``"centered_trace"``: :math:`s_i = 1/\mathrm{tr}(H\mathbf K_iH)`,
        :math:`H=I-\tfrac1\ell\mathbf 1\mathbf 1^\top` (trace after centring in feature space);
        ``"none"`` or ``None``: :math:`s_i=1`. Kernels with zero trace get :math:`s_i=0`
        (they can never be selected).
    transductive_K : ndarray of shape (n_kernels, n_all, n_all) or (n_kernels, n_all), default=None
        Transductive variant of Sec. 4.3: Gram matrices (or only their diagonals, enough for
        ``"trace"``) over the training **and** test inputs; the traces are taken over them
        instead of over ``K``.

    Returns
    -------
    s : ndarray of shape (n_kernels,)

    {references}
    """
    K = np.asarray(K, dtype=float)
    if K.ndim == 2:
        K = K[None]
    m = K.shape[0]
    if rule is None or (isinstance(rule, str) and rule == "none"):
        return np.ones(m)
    if not isinstance(rule, str) or rule not in _KERNEL_RULES:
        raise _scaling_error("rls2_scaling", rule, _KERNEL_RULES, m, "n_kernels")
    src = K
    if transductive_K is not None:
        src = _check_transductive(transductive_K, "transductive_K")
        n = K.shape[-1]
        if not (src.ndim == 2 or (src.ndim == 3 and src.shape[1] == src.shape[2])) \
                or src.shape[0] != m or src.shape[-1] < n:
            raise ValueError(
                f"transductive_K must have shape (n_kernels={m}, n_all, n_all) or "
                f"(n_kernels={m}, n_all) with n_all >= {n} (the training and the other "
                f"inputs); got shape {src.shape}.")
        diag = src if src.ndim == 2 else np.einsum("mii->mi", src)
        if np.any(diag < 0):
            i = int(np.flatnonzero((diag < 0).any(axis=1))[0])
            raise ValueError(f"transductive_K holds a negative diagonal entry (kernel {i}): "
                             f"k(x, x) >= 0 for every kernel; pass Gram matrices or their "
                             f"diagonals.")
    if rule == "trace":
        diag = src if src.ndim == 2 else np.einsum("mii->mi", src)
        return _safe_inverse(diag.sum(axis=1))
    if src.ndim != 3:
        raise ValueError("rule='centered_trace' needs full Gram matrices in transductive_K, "
                         f"not diagonals; got shape {src.shape}.")
    n = src.shape[1]
    traces = np.einsum("mii->m", src) - src.sum(axis=(1, 2)) / n  # tr(HKH) = tr K - 1'K1/n
    return _safe_inverse(traces)


@_fill_doc()
def rls2_linear_scaling(X, rule="norm", *, y=None, transductive_X=None, fisher_weighted=False):
    r"""Feature scaling coefficients :math:`s_i` of linear RLS2, rules (16) and (17) of [1]_.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs.
    rule : {"norm", "fisher", "none"} or None, default="norm"
        ``"norm"``: :math:`s_i = 1/\|x^{(i)}\|_2^2` (rule (16), unit-norm feature columns), so
        that the alignment :math:`a_i=s_i(x^{(i)\top}y)^2` is :math:`\|y\|^2\cos^2\theta_i`.
        ``"fisher"``: :math:`s_i=1/(\sigma_{+,i}^2+\sigma_{-,i}^2)` with the within-class
        variances of feature :math:`i` (rule (17); its exact form is lost, this is the
        unweighted variant; ``fisher_weighted`` gives the other). ``"none"``/``None``:
        :math:`s_i=1`. Features with zero norm (variance) get :math:`s_i=0` and are never selected.
    y : array-like of shape (n_samples,), default=None
        Binary outputs, needed for ``"fisher"``; the positive class is ``y > 0`` when the
        values are {-1, +1} or {0, 1}, otherwise the larger of the two values.
    transductive_X : ndarray of shape (n_all, n_features), default=None
        Transductive variant of rule (16): the norms are taken over these inputs (the training
        **and** test inputs) instead of over ``X``. Ignored by ``"fisher"``.
    fisher_weighted : bool, default=False
        Use the class-size-weighted variant :math:`1/(\ell_+\sigma_+^2+\ell_-\sigma_-^2)` of
        rule (17).

    Returns
    -------
    s : ndarray of shape (n_features,)

    {references}
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    if rule is None or (isinstance(rule, str) and rule == "none"):
        return np.ones(n)
    if not isinstance(rule, str) or rule not in _LINEAR_RULES:
        raise _scaling_error("rls2_linear_scaling", rule, _LINEAR_RULES, n, "n_features")
    if rule == "norm":
        src = X if transductive_X is None else _check_transductive(transductive_X,
                                                                    "transductive_X")
        if src.ndim != 2 or src.shape[1] != n:
            raise ValueError(f"transductive_X must have {n} columns like X; got shape "
                             f"{np.shape(src)}.")
        return _safe_inverse(np.einsum("ji,ji->i", src, src))
    if y is None:
        raise ValueError("scaling='fisher' (rule (17)) needs the binary outputs y.")
    y = np.asarray(y, dtype=float)
    values = np.unique(y)
    if values.size != 2:
        raise ValueError(f"scaling='fisher' (rule (17)) is for binary outputs; y has "
                         f"{values.size} distinct values.")
    positive = y > 0 if (values[0] <= 0 < values[1]) else y == values[1]
    var_p = X[positive].var(axis=0)
    var_m = X[~positive].var(axis=0)
    if fisher_weighted:
        return _safe_inverse(positive.sum() * var_p + (~positive).sum() * var_m)
    return _safe_inverse(var_p + var_m)


# --- Problem 7: simplex-constrained least squares -------------------------------------
def _project_simplex(v):
    """Euclidean projection onto the standard simplex (sort-based, exact)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / k > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


def _feasible_start(d0, m):
    """``d0`` on the simplex (projected if needed), the first vertex if None."""
    if d0 is None:
        d = np.zeros(m)
        d[0] = 1.0
        return d
    d = np.asarray(d0, dtype=float).copy()
    if np.all(d >= 0) and abs(d.sum() - 1.0) <= 1e-12 * m:
        return d / d.sum()
    return _project_simplex(d)


def _eq_lstsq(Vs, z):
    """min_x 0.5 ||Vs x - z||^2 s.t. sum(x) = 1, on unit-norm columns in a null-space basis."""
    k = Vs.shape[1]
    if k == 1:
        return np.ones(1)
    sigma = np.sqrt(np.einsum("ij,ij->j", Vs, Vs))
    sigma[sigma == 0] = 1.0
    W = Vs / sigma
    a = 1.0 / sigma
    y0 = a / (a @ a)
    Q, _ = np.linalg.qr(a[:, None], mode="complete")
    N = Q[:, 1:]
    t = np.linalg.lstsq(W @ N, z - W @ y0, rcond=None)[0]
    return (y0 + N @ t) / sigma


def _simplex_active_set(V, z, d, tau, max_iter):
    """Primal active-set method for Problem 7: ``(d, n_steps, ok)``, ok False if it cycled."""
    m = V.shape[1]
    support = list(np.flatnonzero(d))
    g = V.T @ (V[:, support] @ d[support] - z)
    scale = max(float(np.max(np.abs(g))), np.finfo(float).tiny)
    dropped_new = 0
    for it in range(max_iter):
        x = _eq_lstsq(V[:, support], z)
        if np.all(x > 0):  # move there, add the kernel of the smallest gradient
            d[:] = 0.0
            d[support] = x
            g = V.T @ (V[:, support] @ x - z)
            level = float(np.max(g[support]))
            outside = np.ones(m, dtype=bool)
            outside[support] = False
            if not outside.any():
                return d, it + 1, True
            j = int(np.flatnonzero(outside)[np.argmin(g[outside])])
            if g[j] >= level - tau * scale:
                return d, it + 1, True
            support.append(j)
            continue
        # step from the current feasible point towards x until a weight hits zero
        ds = d[support]
        blocking = x <= 0
        ratios = np.full(x.shape, np.inf)
        ratios[blocking] = ds[blocking] / (ds[blocking] - x[blocking])
        r = int(np.argmin(ratios))
        alpha = min(1.0, float(ratios[r]))
        if alpha == 0.0:  # the kernel just added cannot enter (round-off): degenerate
            dropped_new += 1
            if dropped_new > 2:
                return d, it + 1, False
        ds = ds + alpha * (x - ds)
        ds[r] = 0.0
        ds[ds <= 0] = 0.0
        d[:] = 0.0
        d[support] = ds
        d /= d.sum()
        support = [i for i in support if d[i] > 0]
    return d, max_iter, False


def _simplex_smo(V, z, d, tau, max_steps):
    """Pairwise SMO for Problem 7 (the "SMO-like" solver of the paper, Sec. 5)."""
    m = V.shape[1]
    G = V.T @ V if m <= _SMO_GRAM_MAX else None
    g = V.T @ (V @ d - z)
    scale = max(float(np.max(np.abs(g))), np.finfo(float).tiny)
    for step in range(max_steps):
        i = int(np.argmin(g))
        support = np.flatnonzero(d > 0)
        j = int(support[np.argmax(g[support])])
        t = g[j] - g[i]
        if t <= tau * scale:
            return d, step
        if G is not None:
            uu = G[i, i] + G[j, j] - 2.0 * G[i, j]
        else:
            u = V[:, i] - V[:, j]
            uu = float(u @ u)
        p = d[j] if uu <= 0 else min(d[j], t / uu)  # exact line search along e_i - e_j, clipped
        d[i] += p
        if p >= d[j]:
            d[j] = 0.0  # exact zero: this is where the sparsity of d comes from
        else:
            d[j] -= p
        if G is not None:
            g += p * (G[:, i] - G[:, j])
        else:
            g += p * (V.T @ u)
    return d, max_steps


def _simplex_lstsq(V, z, d0=None, *, method="active_set", tau=_SIMPLEX_TAU, max_iter=None):
    """Problem 7, min_{d in simplex} 0.5 ||V d - z||^2, from ``d0``: ``(d, n_steps)``."""
    V = np.asarray(V, dtype=float)
    z = np.asarray(z, dtype=float)
    m = V.shape[1]
    d = _feasible_start(d0, m)
    if method == "smo":
        return _simplex_smo(V, z, d, tau, max_iter or _SMO_MAX_STEPS)
    d, n_steps, ok = _simplex_active_set(V, z, d, tau, max_iter or 10 * m + 50)
    if not ok:  # degenerate case: polish with SMO
        d, extra = _simplex_smo(V, z, d, tau, _SMO_MAX_STEPS)
        n_steps += extra
    return d, n_steps


# --- Kernel and linear problem operators (what Algorithm 1 needs) ---------------------
def _cho_factor(A, clean=False):
    """(lower Cholesky factor, or None if ``A`` is numerically indefinite, and ``solve``)."""
    try:
        L = cholesky(A, lower=True, clean=clean)  # clean=False: as cho_factor(A, lower=True)
    except linalg.LinAlgError:  # numerically indefinite kernel: LU
        lu = linalg.lu_factor(A, check_finite=False)
        return None, lambda B: linalg.lu_solve(lu, B, check_finite=False)
    return L, lambda B: cholesky_solve(L, B, lower=True)


def _plus_lam(A, lam):
    """``A + lam I``, in place."""
    A.flat[:: A.shape[0] + 1] += lam
    return A


def _dof(A, lam):
    """Eq. (15), :math:`p-\\lambda\\,\\mathrm{tr}(A^{-1})`, for ``A = M + lam I`` of size p."""
    p = A.shape[0]
    return p - lam * float(np.trace(_cho_factor(A)[1](np.eye(p))))


class _KernelOps:
    """Operations of Algorithm 1 on a Gram stack with scaling ``s`` (caches factorisations)."""

    #: how many factorisations are kept (a Newton step evaluates up to 1 + 4 points)
    _n_cached = 6

    #: the analysis of the last stack built with ``reuse=True``: (weak reference to K,
    #: fingerprint, analysis)
    _last = None

    def __init__(self, K, s, reuse=False):
        self.K = np.ascontiguousarray(K, dtype=float)
        self.s = np.asarray(s, dtype=float)
        self.m, self.n = self.K.shape[0], self.K.shape[1]
        self.n_products = 0
        self._aligned = None
        self._factors = []  # (lam, d, lower Cholesky factor or None, solve), newest last
        last = _KernelOps._last
        if reuse and last is not None and last[0]() is K and last[1] == self._fingerprint():
            self._compressed, self._dense, flat = last[2]
            self._flat = self._dense_rows() if flat is None else flat
            return
        self._compressed = [entry for entry in map(self._distinct_rows, range(self.m))
                            if entry is not None]
        dense = np.ones(self.m, dtype=bool)
        dense[[i for i, _, _ in self._compressed]] = False
        self._dense = np.flatnonzero(dense)
        self._flat = self._dense_rows()
        if reuse:  # kept while the caller keeps K (a weak reference; no view of K is kept)
            copied = None if np.shares_memory(self._flat, self.K) else self._flat
            _KernelOps._last = (weakref.ref(K, _KernelOps._forget), self._fingerprint(),
                                (self._compressed, self._dense, copied))

    def _dense_rows(self):
        """The kernels multiplied in full, stacked as one (n_dense * n, n) matrix."""
        kd = self.K if self._dense.size == self.m else self.K[self._dense]
        return kd.reshape(self._dense.size * self.n, self.n)

    @staticmethod
    def _forget(ref):
        """Weak-reference callback: drop the kept analysis with its stack."""
        if _KernelOps._last is not None and _KernelOps._last[0] is ref:
            _KernelOps._last = None

    def _fingerprint(self):
        """Shape, address and a sample of the entries of the stack (reuse sanity check)."""
        flat = self.K.reshape(-1)
        return (self.K.shape, self.K.ctypes.data, flat[::_FINGERPRINT_STRIDE].tobytes())

    def _distinct_rows(self, i):
        """``(i, G, inv)`` with K_i = G[inv][:, inv] exactly (few distinct rows), or None."""
        # K_i c = G (P' c) costs u^2 instead of l^2 (a kernel on a discrete feature)
        Ki, n = self.K[i], self.n
        if n * n < 2 * _MIN_SAVED:
            return None
        def too_many(classes):
            return n * n - classes ** 2 < max(n * n / 2, _MIN_SAVED)

        if too_many(np.unique(Ki[:, 0]).size):  # quick test: no fewer classes than entries
            return None
        # candidate classes: rows alike in a few entries (equal rows are alike in all)
        probe = np.column_stack([Ki[:, [0, n // 3, (2 * n) // 3, n - 1]], np.diagonal(Ki)])
        _, first, inv = np.unique(probe, axis=0, return_index=True, return_inverse=True)
        if too_many(first.size):
            return None
        inv = inv.ravel()
        G = np.ascontiguousarray(Ki[np.ix_(first, first)])
        if not np.array_equal(G[np.ix_(inv, inv)], Ki):  # the classes must reproduce K_i
            return None
        return i, G, inv

    def V(self, c):
        """V = [s_i K_i c] of shape (n, m)."""
        self.n_products += 1
        if not self._compressed:
            return ((self._flat @ c).reshape(self.m, self.n) * self.s[:, None]).T
        out = np.empty((self.m, self.n))
        out[self._dense] = (self._flat @ c).reshape(self._dense.size, self.n)
        for i, G, inv in self._compressed:
            out[i] = (G @ np.bincount(inv, weights=c, minlength=G.shape[0]))[inv]
        return (out * self.s[:, None]).T

    def max_trace(self):
        """Largest scaled trace s_i tr(K_i) (the scale of K(d))."""
        return float(np.max(self.s * np.einsum("mii->m", self.K)))

    def alignment(self, y):
        """a_i = s_i y'K_i y (Lemma 5); cached, a path asks for it at every lambda."""
        if self._aligned is None or not np.array_equal(self._aligned[0], y):
            self._aligned = (y.copy(), self.V(y).T @ y)
        return self._aligned[1]

    def _system(self, d, lam):
        """K(d) + lam I by :func:`~mklcore.svm.combine_kernels` (the same bits everywhere)."""
        return _plus_lam(combine_kernels(self.K, d * self.s, out=np.empty((self.n, self.n))),
                         lam)

    def _factored(self, d, lam):
        """(lower Cholesky factor or None, solve) of K(d) + lam I, from the cache if there."""
        for entry in self._factors:
            if entry[0] == lam and np.array_equal(entry[1], d):
                return entry[2], entry[3]
        L, solve = _cho_factor(self._system(d, lam), clean=True)
        self._factors = self._factors[1 - self._n_cached:] + [(lam, d.copy(), L, solve)]
        return L, solve

    def factor(self, d, lam):
        """``solve(B) = (K(d) + lam I)^{-1} B`` (Cholesky); eq. (13) is ``solve(y)``."""
        return self._factored(d, lam)[1]

    def chol(self, d, lam):
        """Lower Cholesky factor of K(d) + lam I (``LinAlgError`` if it is indefinite)."""
        L = self._factored(d, lam)[0]
        if L is None:
            raise linalg.LinAlgError("K(d) + lam I is not positive definite")
        return L

    def solve_cg(self, d, lam, y, c0):
        """Eq. (13) by conjugate gradient warm-started at ``c0`` (the toolbox's solver)."""
        from scipy.sparse.linalg import cg

        c, _ = cg(self._system(d, lam), y, x0=c0, rtol=1e-13, atol=0.0, maxiter=20 * self.n)
        return c

    def df(self, d, lam):
        """Degrees of freedom, eq. (15) with K(d): l - lam tr((K(d) + lam I)^{-1})."""
        L, solve = self._factored(d, lam)
        if L is None:
            return _dof(self._system(d, lam), lam)
        # tr(A^{-1}) = ||L^{-1}||_F^2
        Linv = lower_triangular_solve(L, np.eye(self.n))
        return self.n - lam * float(np.einsum("ij,ij->", Linv, Linv))

    def extras(self, d, c):
        """Model-specific result keys (none)."""
        return {}


class _LinearOps:
    """Operations of Algorithm 1 for linear RLS2 (Sec. 4.2): ``K(d) = Xt Xt'``, Xt of eq. (14)."""

    def __init__(self, X, s):
        self.X = np.asarray(X, dtype=float)
        self.s = np.asarray(s, dtype=float)
        self.n, self.m = self.X.shape
        self.n_products = 0

    def V(self, c):
        """Columns v_i = s_i (x_i'c) x_i, shape (n_samples, n_features)."""
        self.n_products += 1
        u = self.s * (self.X.T @ c)
        return self.X * u[None, :]

    def max_trace(self):
        """Largest scaled trace s_i ||x_i||^2 (the scale of K(d))."""
        return float(np.max(self.s * np.einsum("ji,ji->i", self.X, self.X)))

    def alignment(self, y):
        """a_i = s_i (x_i'y)^2 (Lemma 5)."""
        return self.s * (self.X.T @ y) ** 2

    def _xtilde(self, d):
        """Xt = X_B D_B^{1/2}, eq. (14)."""
        idx = np.flatnonzero(d)
        return self.X[:, idx] * np.sqrt(d[idx] * self.s[idx])[None, :]  # eq. (14)

    def factor(self, d, lam):
        """``solve(B) = (Xt Xt' + lam I)^{-1} B``, by Woodbury when n_d < l."""
        Xt = self._xtilde(d)
        if Xt.shape[1] < self.n:
            inner = _cho_factor(_plus_lam(Xt.T @ Xt, lam))[1]
            return lambda B: (B - Xt @ inner(Xt.T @ B)) / lam
        return _cho_factor(_plus_lam(Xt @ Xt.T, lam))[1]

    def chol(self, d, lam):
        """Lower Cholesky factor of Xt Xt' + lam I (l x l)."""
        Xt = self._xtilde(d)
        return cholesky(_plus_lam(Xt @ Xt.T, lam), lower=True)

    def df(self, d, lam):
        """Eq. (15), with the smaller of the two trace formulas."""
        Xt = self._xtilde(d)
        if Xt.shape[1] == 0:
            return 0.0
        return _dof(_plus_lam(Xt.T @ Xt if Xt.shape[1] <= self.n else Xt @ Xt.T, lam), lam)

    def extras(self, d, c):
        """``coef``, w of eq. (12)."""
        return {"coef": d * self.s * (self.X.T @ c)}  # eq. (12)


# --- Algorithm 1 ----------------------------------------------------------------------
def _warm_arrays(warm_start, m, n):
    """(d0, c0) from a warm start given as MKLResult/dict, (d, c) tuple or a weight array."""
    if warm_start is None:
        return None, None
    if isinstance(warm_start, dict):
        d0, c0 = warm_start.get("weights"), warm_start.get("dual_coef")
    elif isinstance(warm_start, tuple) and len(warm_start) == 2:
        d0, c0 = warm_start
    else:
        d0, c0 = warm_start, None
    message = (f"warm_start weights must be a non-negative, non-zero array of shape ({m},) "
               f"(or an MKLResult, or a pair (weights, dual_coef)); got {{}}.")
    try:
        d0 = None if d0 is None else np.asarray(d0, dtype=float)
        c0 = None if c0 is None else np.asarray(c0, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(message.format(repr(warm_start)[:60])) from None
    if d0 is not None and (d0.shape != (m,) or not np.all(np.isfinite(d0)) or np.any(d0 < 0)
                           or d0.sum() <= 0):
        raise ValueError(message.format(f"shape {np.shape(d0)}" if d0.shape != (m,)
                                        else repr(d0)))
    if c0 is not None and (c0.shape != (n,) or not np.all(np.isfinite(c0))):
        c0 = None
    return d0, c0


class _State:
    """c = c(d) of eq. (13) and G(d) at one point d; V and the gap on first use (m l^2)."""

    def __init__(self, ops, d, y, lam, c0, linear_solver):
        self.ops, self.d, self.lam = ops, d, lam
        if linear_solver == "cg":
            self.c = ops.solve_cg(d, lam, y, c0)
        else:
            self.c = ops.factor(d, lam)(y)  # Alg. 1, line 4: eq. (13)
        self.objective = 0.5 * lam * float(y @ self.c)  # G(d) = F(c(d), d), Problem 6
        self._V = None

    @property
    def V(self):
        """V = [s_i K_i c], computing the gap with it."""
        if self._V is None:
            with np.errstate(over="ignore", invalid="ignore"):  # a tiny lam: see _alternate
                self._V = self.ops.V(self.c)  # line 5: v_i = s_i K_i c
                q = self._V.T @ self.c  # q_i = c' K~_i c
            gap = 0.5 * self.lam * max(float(q.max() - self.d @ q), 0.0)  # G - D
            self._gap = gap / self.objective if self.objective > 0 else 0.0
        return self._V

    @property
    def gap(self):
        """Relative duality gap of Problem 6 at d."""
        self.V
        return self._gap


def _newton_step(ops, state, y, lam, bound, linear_solver, simplex_solver):
    """Newton step on G(d) (``accelerate``, :func:`rls2_solve`): ``(state or None, n_evals)``."""
    # Problem 7 with the exact Hessian lam V'(K(d) + lam I)^{-1} V for V'V:
    # min_{d' in simplex} 0.5 ||W d' - z_W||^2, W = sqrt(lam) L^{-1} V, z_W = W d + sqrt(lam)/2 L'c
    try:
        L = ops.chol(state.d, lam)
    except linalg.LinAlgError:  # pragma: no cover - indefinite kernels
        return None, 0
    root = np.sqrt(lam)
    W = root * lower_triangular_solve(L, state.V)
    zw = W @ state.d + 0.5 * root * (L.T @ state.c)
    d_new, _ = _simplex_lstsq(W, zw, state.d, method=simplex_solver)
    if np.array_equal(d_new, state.d):
        return None, 0
    trial = _State(ops, d_new, y, lam, state.c, linear_solver)
    n_evals = 1
    if trial.objective > bound:
        if abs(trial.objective - bound) <= _ROUNDOFF * abs(bound) and trial.gap < state.gap:
            return trial, n_evals  # the decrease is below the resolution of G: the gap decides
        return None, n_evals
    # Far from the optimum G behaves like 1/d along the step, where a Newton step only
    # moves a fraction of the way: extrapolate (doubling the step) while G keeps falling.
    p = d_new - state.d
    neg = p < 0
    alpha_max = float(np.min(state.d[neg] / -p[neg])) if neg.any() else np.inf
    alpha = 1.0
    while alpha < alpha_max and n_evals < 1 + _MAX_EXTRAPOLATIONS:
        alpha = min(2.0 * alpha, alpha_max)
        d_try = np.maximum(state.d + alpha * p, 0.0)
        if alpha == alpha_max:
            d_try[neg & (state.d / np.where(neg, -p, 1.0) <= alpha_max)] = 0.0
        d_try /= d_try.sum()
        further = _State(ops, d_try, y, lam, trial.c, linear_solver)
        n_evals += 1
        if not further.objective < trial.objective:
            break
        trial = further
    return trial, n_evals


@on_one_blas_thread
def _alternate(ops, y, lam, *, intercept, d0, c0, tol, residual_tol, max_iter, simplex_solver,
               linear_solver, accelerate, callback, verbose, owner, method, stacklevel=5):
    """Algorithm 1 of [1] on the outputs ``y`` (already shifted by ``intercept``), one BLAS thread.

    History row ``t`` is the iterate at the start of iteration ``t``; stops at the first
    certified iterate, on ``residual_tol``, when the weights stop changing (status 2) or at
    ``max_iter``.
    """
    m = ops.m
    scale = ops.max_trace() if np.isfinite(lam) else 0.0
    tiny = lam < _TINY_LAM * scale  # K(d) + lam I is singular to working precision
    hint = (f"lam={lam:.1e} is below {_TINY_LAM:g} times the largest scaled kernel trace "
            f"({scale:.1e}), where (K(d) + lam I) c = y is solved to round-off only: increase "
            f"lam or scale the kernels.") if tiny else ""
    monitor = Monitor(method, tol=tol, max_iter=max_iter, callback=callback, verbose=verbose,
                      label=owner, criterion_name="relative duality gap",
                      advice=hint or "Increase max_iter or loosen tol.")
    products0 = ops.n_products
    alignment = ops.alignment(y)
    vertex = np.zeros(m)
    vertex[int(np.argmax(alignment))] = 1.0  # Lemma 5: max-alignment vertex
    yy = float(y @ y)

    def finish(d, c, objective, gap, residual, n_evals=0):
        # empty_ok: c = 0 is the exact solution when y = 0 or lambda = inf (Lemma 5)
        res = monitor.finish(
            weights=d, dual_coef=c, intercept=float(intercept), objective=objective, gap=gap,
            empty_ok=True, stacklevel=stacklevel, lam=float(lam),
            scaling=ops.s.copy(), effective_weights=d * ops.s, alignment=alignment,
            n_selected=int(np.count_nonzero(d)),
            df=0.0 if not np.isfinite(lam) else float(ops.df(d, lam)),
            residual=float(residual), n_evals=int(n_evals),
            n_products=ops.n_products - products0)
        for key in ("criterion", "residual", "n_selected", "newton"):  # of a 0-row history
            res.history.setdefault(key, np.empty(0))
        res.update(ops.extras(d, c))
        return res

    if not np.isfinite(lam) or yy == 0.0:  # Lemma 5 limit / trivial outputs: c = 0
        monitor.criterion = 0.0
        monitor.succeed("lambda = inf or y = 0, so c = 0")
        return finish(vertex, np.zeros(ops.n), 0.5 * yy, 0.0, 0.0)

    accelerate = accelerate and linear_solver != "cg"
    d = vertex if d0 is None else _feasible_start(d0, m)
    state = _State(ops, d, y, lam, c0, linear_solver)
    n_evals = 1
    residual = np.nan

    def record(residual, newton):
        return monitor.record(objective=state.objective, gap=state.gap, weights=state.d,
                              snapshot={"dual_coef": state.c.copy(), "residual": residual},
                              residual=residual,
                              n_selected=int(np.count_nonzero(state.d)), newton=newton)

    while True:
        d = state.d
        if not (np.isfinite(state.objective) and np.isfinite(state.gap)):
            raise ValueError(
                f"The 'lam' parameter of {owner} is too small for these kernels: at lam="
                f"{lam:.1e} the coefficients c = (K(d) + lam I)^-1 y overflow (largest scaled "
                f"kernel trace {scale:.1e}). Increase lam or scale the kernels.")
        if tol is not None and state.gap <= tol:
            residual = 0.0
            record(0.0, False)  # status 0: the iterate is certified
            break
        c = state.c
        z = y - 0.5 * lam * c
        d_alt, _ = _simplex_lstsq(state.V, z, d, method=simplex_solver)  # line 6: Problem 7
        nxt = None
        if accelerate:
            resid = state.V @ d_alt - z  # F(c, d_alt), the value Algorithm 1 guarantees
            bound = 0.5 * float(resid @ resid) + 0.5 * lam * float(y @ c) \
                - 0.125 * lam ** 2 * float(c @ c)
            nxt, evals = _newton_step(ops, state, y, lam, bound, linear_solver,
                                      simplex_solver)
            n_evals += evals
        newton = nxt is not None
        d_new = nxt.d if newton else d_alt
        r = state.V @ (d - d_new)  # line 7: y - (K(d_new) + lam I) c, as c solved (13) for d
        residual = float(r @ r) / yy
        record(residual, newton)  # status 1 (max_iter) or 3 (callback) may be set here
        if not newton:
            state = _State(ops, d_new, y, lam, c, linear_solver)
            n_evals += 1
        else:
            state = nxt
        monitor.criterion = state.gap  # the messages describe the returned iterate
        if residual_tol is not None and residual <= residual_tol:
            monitor.succeed(f"residual rule {residual:.1e} <= residual_tol "
                            f"{residual_tol:.1e} (relative duality gap {state.gap:.1e})")
        elif monitor.status == 3:
            pass
        elif tol == 0 and np.array_equal(state.d, d) and state.gap > 0:
            monitor.status = 1  # tol=0: only an exact optimum stops; round-off ends the run
        elif tol is not None and np.array_equal(state.d, d) and state.gap > tol:
            monitor.fail(f"precision limit: the weights no longer change but the relative "
                         f"duality gap {state.gap:.1e} > tol {tol:.1e}. "
                         f"{hint or 'Loosen tol.'}")
        elif monitor.status == 1 and tol is not None and state.gap <= tol:
            monitor.succeed()
        if monitor.stopped:
            break
    # the returned c solves (13) for the returned d (the toolbox skips this re-solve)
    return finish(state.d, state.c, state.objective, state.gap, residual, n_evals)


# --- Public solver functions ----------------------------------------------------------
def _check_y(y, n, owner):
    """``y`` as a finite 1-D float array of length ``n``."""
    y = np.asarray(check_dense(y, "y"))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{owner} needs numeric outputs y; got dtype {y.dtype}.")
    y = check_finite(y.astype(float), "y")
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but there are {n} training samples.")
    return y


def _resolve_intercept(intercept, y, owner):
    """The fixed intercept b: a float, or the mean of ``y``."""
    if isinstance(intercept, str):
        if intercept != "mean":
            raise ValueError(f"The 'intercept' parameter of {owner} must be a float or 'mean'. "
                             f"Got {intercept!r} instead.")
        return float(np.mean(y))
    b = float(intercept)
    if not np.isfinite(b):
        raise ValueError(f"The 'intercept' parameter of {owner} must be finite. Got {b!r}.")
    return b


def _check_lams(lams, owner):
    """``lams`` as a 1-D float array in (0, inf], sorted decreasing."""
    if isinstance(lams, (str, bytes)):  # np.asarray("0.1", dtype=float) would accept it
        raise ValueError(f"The 'lams' parameter of {owner} must be a non-empty 1-D array of "
                         f"floats, not a str. Got {lams!r} instead.")
    try:
        lams = np.atleast_1d(np.asarray(lams, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"The 'lams' parameter of {owner} must be a non-empty 1-D array of "
                         f"floats. Got {lams!r} instead.") from None
    if lams.ndim != 1 or lams.size == 0:
        raise ValueError(f"The 'lams' parameter of {owner} must be a non-empty 1-D array.")
    bad = ~(lams > 0)
    if bad.any():
        raise ValueError(f"The 'lams' parameter of {owner} must hold floats in the range "
                         f"(0, inf]. Got {lams[bad][0]!r} instead.")
    return np.sort(lams)[::-1]


def _kernel_setup(K, y, scaling, transductive_K, intercept, check_input, owner):
    """(operators, outputs minus b, b) of RLS2 on the Gram stack ``K``."""
    if check_input:
        K = check_kernel_stack(K)
    else:
        K = np.asarray(K, dtype=float)
        K = K[None] if K.ndim == 2 else K
    y = _check_y(y, K.shape[1], owner)
    s = _resolve_scaling(owner, scaling, _KERNEL_RULES, K.shape[0], "n_kernels",
                         lambda rule: rls2_scaling(K, rule, transductive_K=transductive_K))
    b = _resolve_intercept(intercept, y, owner)
    return _KernelOps(K, s, reuse=not check_input), y - b, b


def _linear_setup(X, y, scaling, transductive_X, fisher_weighted, intercept, owner):
    """(operators, outputs minus b, b) of linear RLS2 on the inputs ``X``."""
    X = np.asarray(check_dense(X, "X"))
    if X.ndim != 2:
        raise ValueError(f"X must have shape (n_samples, n_features); got {X.shape}.")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{owner} needs numeric inputs X; got dtype {X.dtype}.")
    X = check_finite(X.astype(float), "X")
    y = _check_y(y, X.shape[0], owner)
    s = _resolve_scaling(owner, scaling, _LINEAR_RULES, X.shape[1], "n_features",
                         lambda rule: rls2_linear_scaling(X, rule, y=y,
                                                          transductive_X=transductive_X,
                                                          fisher_weighted=fisher_weighted))
    b = _resolve_intercept(intercept, y, owner)
    return _LinearOps(X, s), y - b, b


def _run(owner, setup, setup_args, params, *, lam=None, lams=None, warm_start=None,
         callback=None):
    """The four public solvers: validate, set up, run Algorithm 1 at ``lam`` or along ``lams``."""
    validate_params(owner, _SOLVER_CONSTRAINTS, params)
    if lams is not None:
        lams = _check_lams(lams, owner)
    ops, y, b = setup(*setup_args, owner)
    loop = dict(tol=params["tol"], residual_tol=params["residual_tol"],
                max_iter=params["max_iter"], simplex_solver=params["simplex_solver"],
                linear_solver=params.get("linear_solver", "cholesky"),
                accelerate=params["accelerate"], callback=callback, verbose=params["verbose"],
                intercept=b, owner=owner, stacklevel=7,
                method="linear_rls2" if setup is _linear_setup else "rls2")
    if lams is None:
        d0, c0 = _warm_arrays(warm_start, ops.m, ops.n)
        return _alternate(ops, y, float(lam), d0=d0, c0=c0, **loop)
    results = []
    d0 = c0 = None
    for value in lams:
        res = _alternate(ops, y, value, d0=d0, c0=c0, **loop)
        results.append(res)
        if warm_start:  # Sec. 5.2: start the next lambda at this solution
            d0, c0 = res.weights, res.dual_coef
    return results


@_fill_doc()
def rls2_solve(K, y, *, lam, scaling=None, tol=1e-6, warm_start=None, transductive_K=None,
               intercept=0.0, residual_tol=None, max_iter=10_000, simplex_solver="active_set",
               linear_solver="cholesky", accelerate=True, callback=None, verbose=0,
               check_input=True):
    r"""Solve RLS2 (Problem 5 of [1]_) at a fixed :math:`\lambda` by Algorithm 1.

    .. math::
        \min_{c\in\mathbb R^\ell,\ d\in\Delta_m}\ \tfrac12\|y-b\mathbf 1-\mathbf K(d)c\|^2
        + \tfrac{\lambda}{2}c^\top\mathbf K(d)c,\qquad \mathbf K(d)=\sum_i d_is_i\mathbf K_i .

    Algorithm 1 alternates (13), :math:`c=(\mathbf K(d)+\lambda I)^{-1}y`, with Problem 7,
    :math:`\min_{d\in\Delta_m}\tfrac12\|Vd-z\|^2` (:math:`v_i=s_i\mathbf K_ic`,
    :math:`z=y-\tfrac\lambda2c`). Without a warm start it starts at the vertex of the largest
    alignment :math:`a_i=s_iy^\top\mathbf K_iy` (Lemma 5).

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices :math:`\mathbf K_i` (raw; the scaling is applied here),
        computed in float64 (a float32 stack is copied once to float64).
    y : array-like of shape (n_samples,)
        Outputs (regression targets, or labels in {-1, +1} for classification).
    lam : float
        Regularisation parameter :math:`\lambda > 0` (Problem 5's normalisation: halves, no
        :math:`1/\ell`). ``np.inf`` returns the limit of Lemma 5 (:math:`c=0`). Below
        ``1e-12`` times the largest scaled trace :math:`s_i\mathrm{tr}\,\mathbf K_i`, a
        rank-deficient :math:`\mathbf K(d)+\lambda I` is singular to working precision: the
        warning of such a run says so, and a :math:`c` that overflows raises ``ValueError``.
    scaling : {"trace", "centered_trace", "none"}, ndarray or None, default=None
        Kernel scaling :math:`s_i` (Sec. 4.3, see :func:`rls2_scaling`): ``"trace"`` is rule
        (18), unit trace (the toolbox default); ``None``/``"none"``: :math:`s_i=1`.
    {tol}
    warm_start : MKLResult, tuple (d, c) or ndarray of shape (n_kernels,), default=None
        Starting kernel weights (and coefficients); the Lemma-5 vertex if None.
    transductive_K : ndarray of shape (n_kernels, n_all, n_all) or (n_kernels, n_all), default=None
        Gram matrices (or their diagonals) over training and test inputs, for the transductive
        trace rule.
    {intercept, residual_tol, max_iter, simplex_solver, linear_solver}
    accelerate : bool, default=True
        Also try, at every iteration, a Newton step on :math:`G(d)`: Problem 7 with the exact
        Hessian :math:`\lambda V^\top(\mathbf K(d)+\lambda I)^{-1}V` instead of its bound
        :math:`V^\top V`, extrapolated while :math:`G` falls and kept only if it ends below the
        value Algorithm 1's step guarantees (our addition). ``False``: the paper's Algorithm 1
        (with ``residual_tol=1e-4`` it reproduces the paper's iteration counts).
    {callback, verbose}
    check_input : bool, default=True
        Validate ``K`` (shape, finiteness, symmetry; no PSD check).
        With ``False`` the array is trusted, and the exact compression of its kernels with few
        distinct rows is kept for the next call on the same array object (e.g. a path after
        :func:`rls2_lambda_max`); do not modify it in place between such calls.

    Returns
    -------
    result : MKLResult
        ``weights`` (:math:`d`), ``dual_coef`` (:math:`c`), ``intercept`` (:math:`b`),
        ``objective`` (:math:`G(d)=F(c,d)`), ``gap`` (relative duality gap), ``lam``,
        ``scaling`` (:math:`s`), ``effective_weights`` (:math:`d\circ s`), ``alignment``
        (:math:`a`), ``n_selected``, ``df`` (eq. (15),
        :math:`\ell-\lambda\,\mathrm{tr}((\mathbf K(d)+\lambda I)^{-1})`), ``residual`` (the
        last residual criterion), ``n_evals`` (solves of (13)), ``n_products`` (products with
        the whole stack, the dominant cost) and ``time``; ``history`` also records
        ``residual``, ``n_selected`` and ``newton`` (accelerated step taken).
        ``mklcore.decision(result, K_test)`` evaluates the model (:func:`rls2_decision`).

    Raises
    ------
    ValueError
        On ``lam <= 0``, a ``lam`` so small that :math:`c` overflows, an unknown scaling
        rule, an all-zero, negative or non-finite scaling array, non-finite ``y`` or
        ``transductive_K`` (or one with a negative diagonal) or mismatched shapes.

    Warns
    -----
    ConvergenceWarning
        If ``max_iter`` is reached above ``tol`` (status 1; not with ``tol=None``), or if the
        weights stop changing above ``tol`` (status 2).

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import rls2_solve
    >>> X = np.linspace(-1, 1, 20)[:, None]
    >>> K = np.stack([X @ X.T, np.exp(-(X - X.T) ** 2)])
    >>> res = rls2_solve(K, 2 * X.ravel(), lam=0.1, scaling="trace")
    >>> res.weights.round(3).tolist(), res.success
    ([1.0, 0.0], True)

    {references}
    """
    return _run("rls2_solve", _kernel_setup, (K, y, scaling, transductive_K, intercept,
                                               check_input),
                dict(lam=lam, tol=tol, residual_tol=residual_tol, max_iter=max_iter,
                     simplex_solver=simplex_solver, linear_solver=linear_solver,
                     verbose=verbose, check_input=check_input, accelerate=accelerate),
                lam=lam, warm_start=warm_start, callback=callback)


@_fill_doc()
def rls2_path(K, y, *, lams, scaling=None, warm_start=True, transductive_K=None, intercept=0.0,
              tol=1e-6, residual_tol=None, max_iter=10_000, simplex_solver="active_set",
              linear_solver="cholesky", accelerate=True, verbose=0, check_input=True):
    r"""RLS2 regularisation path with warm starts (Sec. 5.2 of [1]_).

    The largest :math:`\lambda` starts at the Lemma-5 vertex (where one iteration usually
    suffices), each next one at the previous solution (:math:`d` and :math:`c`).

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices.
    y : array-like of shape (n_samples,)
        Outputs.
    {lams}
    scaling : {"trace", "centered_trace", "none"}, ndarray or None, default=None
        As in :func:`rls2_solve`; computed once for the whole path.
    {path_warm_start}
    transductive_K : ndarray, default=None
        As in :func:`rls2_solve`.
    {intercept, tol, residual_tol, max_iter, simplex_solver, linear_solver, accelerate, verbose}
    check_input : bool, default=True
        Validate ``K`` once; ``False``: as in :func:`rls2_solve`.

    Returns
    -------
    results : list of MKLResult
        One result of :func:`rls2_solve` per :math:`\lambda`, in decreasing order.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import rls2_path
    >>> x = np.linspace(-1, 1, 20)
    >>> path = rls2_path(np.stack([np.outer(x, x), np.exp(-np.subtract.outer(x, x) ** 2)]),
    ...                  x ** 2, lams=[1e-3, 1e-1, 10.0], scaling="trace")
    >>> [r.n_iter for r in path][0]
    1

    {references}
    """
    return _run("rls2_path", _kernel_setup, (K, y, scaling, transductive_K, intercept,
                                              check_input),
                dict(tol=tol, residual_tol=residual_tol, max_iter=max_iter,
                     simplex_solver=simplex_solver, linear_solver=linear_solver,
                     verbose=verbose, warm_start=warm_start, check_input=check_input,
                     accelerate=accelerate),
                lams=lams, warm_start=warm_start)


@_fill_doc()
def rls2_linear_solve(X, y, *, lam, scaling="norm", tol=1e-6, warm_start=None,
                      transductive_X=None, fisher_weighted=False, intercept=0.0,
                      residual_tol=None, max_iter=10_000, simplex_solver="active_set",
                      accelerate=True, callback=None, verbose=0):
    r"""Solve linear RLS2 (Sec. 4.2 of [1]_: Problem 8, Lemma 6) at a fixed :math:`\lambda`.

    RLS2 with one linear kernel per feature, :math:`K_i(x,x')=x_ix'_i` (eq. 10); the model is
    :math:`f(x)=b+w^\top x` with :math:`w_i=d_is_i\,x^{(i)\top}c` (eq. 12). For fixed
    :math:`d` it is ridge regression on :math:`\tilde X=X_BD_B^{1/2}` (Lemma 6): Algorithm 1
    forms no :math:`\ell\times\ell` kernel per feature and solves (13) by the Woodbury identity
    when fewer features than samples are selected.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training inputs (standardise them beforehand if the paper's protocol does).
    y : array-like of shape (n_samples,)
        Outputs.
    lam : float
        Regularisation parameter :math:`\lambda > 0`.
    scaling : {"norm", "fisher", "none"}, ndarray of shape (n_features,) or None, default="norm"
        Feature scaling :math:`s_i` (Sec. 4.3): ``"norm"`` is rule (16), ``"fisher"`` rule (17);
        see :func:`rls2_linear_scaling`.
    {tol}
    warm_start : MKLResult, tuple (d, c) or ndarray of shape (n_features,), default=None
        Starting feature weights (and coefficients).
    transductive_X : array-like of shape (n_all, n_features), default=None
        Inputs (training and test) over which the norms of rule (16) are taken.
    {fisher_weighted, intercept, residual_tol, max_iter}
    {simplex_solver, accelerate, callback, verbose}

    Returns
    -------
    result : MKLResult
        As :func:`rls2_solve`, plus ``coef`` (:math:`w`, eq. 12); ``df`` is eq. (15).
        Predictions are ``X_test @ result.coef + result.intercept``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import rls2_linear_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((30, 5)); y = X[:, 0] - 2 * X[:, 1]
    >>> res = rls2_linear_solve(X, y, lam=0.01)
    >>> np.flatnonzero(res.coef).tolist()
    [0, 1]

    {references}
    """
    return _run("rls2_linear_solve", _linear_setup,
                (X, y, scaling, transductive_X, fisher_weighted, intercept),
                dict(lam=lam, tol=tol, residual_tol=residual_tol, max_iter=max_iter,
                     simplex_solver=simplex_solver, verbose=verbose,
                     fisher_weighted=fisher_weighted, accelerate=accelerate),
                lam=lam, warm_start=warm_start, callback=callback)


@_fill_doc()
def rls2_linear_path(X, y, *, lams, scaling="norm", warm_start=True, transductive_X=None,
                     fisher_weighted=False, intercept=0.0, tol=1e-6, residual_tol=None,
                     max_iter=10_000, simplex_solver="active_set", accelerate=True,
                     verbose=0):
    r"""Linear RLS2 regularisation path with warm starts (Sec. 5.2 of [1]_).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training inputs.
    y : array-like of shape (n_samples,)
        Outputs.
    {lams}
    scaling : {"norm", "fisher", "none"}, ndarray or None, default="norm"
        Feature scaling, see :func:`rls2_linear_solve`.
    {path_warm_start}
    transductive_X : array-like of shape (n_all, n_features), default=None
        Inputs for the transductive rule (16).
    {fisher_weighted, intercept, tol, residual_tol, max_iter, simplex_solver, accelerate, verbose}

    Returns
    -------
    results : list of MKLResult
        The results of :func:`rls2_linear_solve` (with ``coef``, :math:`w`), one per
        :math:`\lambda` in decreasing order.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import rls2_linear_path
    >>> X = np.random.default_rng(0).standard_normal((30, 5)); y = X[:, 0] - 2 * X[:, 1]
    >>> [r.n_selected for r in rls2_linear_path(X, y, lams=[100.0, 0.01])]
    [1, 2]

    {references}
    """
    return _run("rls2_linear_path", _linear_setup,
                (X, y, scaling, transductive_X, fisher_weighted, intercept),
                dict(tol=tol, residual_tol=residual_tol, max_iter=max_iter,
                     simplex_solver=simplex_solver, verbose=verbose, warm_start=warm_start,
                     fisher_weighted=fisher_weighted, accelerate=accelerate),
                lams=lams, warm_start=warm_start)


@on_one_blas_thread  # its bisection must not depend on the thread count either
def rls2_lambda_max(K, y, *, linear=False, scaling=None, intercept=0.0, rtol=0.05,
                    check_input=True):
    r"""Threshold :math:`\lambda_1` of Lemma 5: above it the max-alignment vertex is optimal.

    For :math:`\lambda\ge\lambda_1` the solution of RLS2 is exactly :math:`d=e_{i^\star}`,
    :math:`i^\star=\arg\max_is_iy^\top\mathbf K_iy`: the vertex has zero duality gap
    (Problem 6), :math:`q_{i^\star}\ge q_i` with
    :math:`c=(s_{i^\star}\mathbf K_{i^\star}+\lambda I)^{-1}y`. Found by bisection on
    :math:`\log\lambda` (one product with the kernel stack per step); a path whose largest
    value is at least :math:`\lambda_1` needs one iteration there.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples) or (n_samples, n_features)
        Gram stack, or the inputs ``X`` of linear RLS2 when ``linear=True``.
    y : array-like of shape (n_samples,)
        Outputs.
    linear : bool, default=False
        ``K`` holds inputs and the kernels are one linear kernel per feature (Sec. 4.2).
    scaling : str, ndarray or None, default=None
        As in :func:`rls2_solve` (or :func:`rls2_linear_solve`, where None means
        :math:`s_i=1` too; pass ``"norm"`` for rule (16)).
    intercept : float or "mean", default=0.0
        Fixed intercept subtracted from ``y``.
    rtol : float, default=0.05
        Relative accuracy: the result is an upper bound of :math:`\lambda_1` within this factor.
    check_input : bool, default=True
        Validate ``K``. Kernel stacks only: as in :func:`rls2_path`.

    Returns
    -------
    lam_1 : float
        Smallest :math:`\lambda` (to ``rtol``) at which the vertex is optimal.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import rls2_lambda_max
    >>> X = np.random.default_rng(0).standard_normal((30, 4)); y = X @ [1.0, 0.5, 0.0, 0.0]
    >>> bool(0.1 < rls2_lambda_max(X, y, linear=True, scaling="norm") < 100)
    True
    """
    owner = "rls2_lambda_max"
    validate_params(owner, {"rtol": [Interval("real", 0, None, closed="neither")],
                            "linear": [bool]}, {"rtol": rtol, "linear": linear})
    if linear:
        ops, yc, _ = _linear_setup(K, y, scaling, None, False, intercept, owner)
    else:
        ops, yc, _ = _kernel_setup(K, y, scaling, None, intercept, check_input, owner)
    if not np.any(yc):
        return 0.0
    a = ops.alignment(yc)
    vertex = np.zeros(ops.m)
    vertex[int(np.argmax(a))] = 1.0

    def optimal(lam):
        c = ops.factor(vertex, lam)(yc)
        q = ops.V(c).T @ c
        return q[vertex > 0][0] >= q.max() * (1 - 1e-12)

    hi = 1.0
    while not optimal(hi):
        hi *= 10.0
        if hi > 1e300:  # pragma: no cover - ties between kernels
            return np.inf
    lo = hi / 10.0
    while optimal(lo):
        hi, lo = lo, lo / 10.0
        if lo < 1e-300:  # the vertex is optimal for every lambda
            return 0.0
    while hi / lo > 1 + rtol:  # bisection on log(lambda)
        mid = np.sqrt(hi * lo)
        if optimal(mid):
            hi = mid
        else:
            lo = mid
    return float(hi)


# --- Estimators -----------------------------------------------------------------------
_ESTIMATOR_CONSTRAINTS = dict(
    _SOLVER_CONSTRAINTS,
    lam=[Interval("real", 0, None, closed="neither")],
    normalize=[Options("trace", "cosine"), None],
    fit_intercept=[bool],
    ova_coding=[Options("pm1", "01")],
)


def _check_ova_classes(y, owner):
    """The classes; with three or more (one-vs-all, Sec. 5.3) each needs two samples."""
    classes, counts = np.unique(y, return_counts=True)

    def show(label):
        return repr(label.item() if isinstance(label, np.generic) else label)

    if classes.size < 2:
        raise ValueError(f"y has only one class ({show(classes[0])}); {owner} needs at least "
                         f"two classes. Classifier can't train when only one class is present.")
    # two classes: one least-squares machine on +/-1 outputs, fine with a single sample of a
    # class; one-vs-all (three or more classes) asks for two samples per class
    small = np.flatnonzero(counts < 2) if classes.size > 2 else []
    if len(small):
        raise ValueError(f"Class {show(classes[small[0]])} has only 1 sample; {owner} trains one "
                         f"machine per class (one-vs-all) and needs at least 2 samples per class.")
    return classes


def _ova_targets(y, classes, coding):
    """One output vector per machine: a single +/-1 vector for two classes, else one per class."""
    if classes.size == 2:
        return [np.where(y == classes[1], 1.0, -1.0)]
    neg = 0.0 if coding == "01" else -1.0
    return [np.where(y == k, 1.0, neg) for k in classes]


class _RLS2Estimator(BaseEstimator):
    """The one ``fit`` and ``predict`` of the RLS2 estimators (hooks: task mixin, model class)."""

    #: whether the kernels are one linear kernel per feature (linear RLS2, Sec. 4.2)
    _linear = False

    def _validate_params(self):
        validate_params(type(self).__name__, _ESTIMATOR_CONSTRAINTS,
                        self.get_params(deep=False))

    @fit_or_unfitted
    @_fill_doc()
    def fit(self, X, y, *, X_unlabeled=None):
        """Fit one RLS2 machine (regression, two classes) or one per class (one-vs-all).

        A fit that raises (invalid input, ``KeyboardInterrupt``) leaves the estimator
        unfitted (the previous model is dropped when ``fit`` starts): ``predict`` then raises
        :class:`~sklearn.exceptions.NotFittedError`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs (the kernels, or the linear kernel of each feature, act on them).
        y : array-like of shape (n_samples,)
            Real outputs (regressors; NaN or infinite values raise ``ValueError``) or class
            labels (classifiers; every class needs at least two samples).
        X_unlabeled : array-like of shape (n_other, n_features), default=None
            Further (e.g. test) inputs for the transductive scaling of Sec. 4.3 of [1]_
            (trace rule (18) for kernels, norm rule (16) for features).

        Returns
        -------
        self : object
            The fitted estimator.

        {references}
        """
        self._validate_params()
        X, targets, intercept = self._targets(X, y)
        self._set_results(self._fit_targets(X, targets, intercept, X_unlabeled))
        self._set_selection(X)
        bank = getattr(self, "kernel_bank_", None)
        self.kernel_names_ = (list(bank.kernel_names_) if bank is not None else
                              [str(c) for c in getattr(self, "feature_names_in_",
                                                       range(X.shape[1]))])
        return self

    @_fill_doc()
    def predict(self, X):
        """Predicted outputs :math:`f(x)` (regressors) or labels (classifiers).

        A classifier predicts by the sign of :math:`f` (two classes) or by the largest
        one-vs-all output.

        Parameters
        ----------
        {X_test}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._predicted(self._decision(X))

    def _solve(self, ops, y, intercept):
        """Algorithm 1 with the estimator's parameters on outputs already shifted by ``b``."""
        return _alternate(ops, y, float(self.lam), intercept=intercept, d0=None, c0=None,
                          tol=self.tol, residual_tol=self.residual_tol,
                          max_iter=self.max_iter, simplex_solver=self.simplex_solver,
                          linear_solver="cholesky", accelerate=self.accelerate, callback=None,
                          verbose=self.verbose, owner=type(self).__name__,
                          method="linear_rls2" if self._linear else "rls2", stacklevel=10)

    def _set_results(self, results):
        """Copy one result (regression, binary) or a list (one-vs-all) into attributes."""
        self.result_ = results[0] if len(results) == 1 else results
        one = len(results) == 1

        def pick(key, dtype=float):
            values = [r[key] for r in results]
            return np.asarray(values[0] if one else values, dtype=dtype)

        arrays = ("weights", "dual_coef", "scaling", "effective_weights", "coef")
        for key in arrays[:5 if "coef" in results[0] else 4]:
            setattr(self, key + "_", pick(key))
        self.df_ = pick("df")[()] if one else pick("df")
        for key, kind in (("n_selected", int), ("n_iter", int), ("objective", float),
                          ("gap", float), ("criterion", float), ("intercept", float)):
            setattr(self, key + "_", kind(results[0][key]) if one else pick(key, kind))
        self.converged_ = bool(all(r.success for r in results))
        self.history_ = results[0].history if one else [r.history for r in results]


class _RegressionTask(RegressorMixin):
    """Regression hooks of the RLS2 estimators: one machine, ``b`` = mean output (Sec. 5.2)."""

    def _targets(self, X, y):
        if self._linear and isinstance(self.scaling, str) and self.scaling == "fisher":
            raise ValueError("scaling='fisher' (rule (17)) is for classification; use "
                             "LinearRLS2Classifier or scaling='norm'.")
        X, y = validate_data(self, X, y, y_numeric=True)
        y = check_finite(as_float_array(y, "y", type(self).__name__), "y")
        return X, [y], "mean" if self.fit_intercept else 0.0

    @staticmethod
    def _predicted(f):
        return f


class _ClassificationTask(ClassifierMixin):
    """Classification hooks: labels coded +/-1 (Sec. 5.2) with ``b = 0``; one-vs-all (Sec. 5.3)."""

    def _targets(self, X, y):
        X, y = validate_data(self, X, y)
        check_labels_present(y)  # None labels: an error naming y, not sklearn's "unknown"
        check_classification_targets(y)
        self.classes_ = _check_ova_classes(y, type(self).__name__)
        return X, _ova_targets(y, self.classes_, self.ova_coding), 0.0

    @_fill_doc()
    def decision_function(self, X):
        """Outputs :math:`f(x)` (binary) or :math:`f_k(x)` of each one-vs-all machine.

        Parameters
        ----------
        {X_test}

        Returns
        -------
        f : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Positive values mean ``classes_[1]`` in the binary case.
        """
        return self._decision(X)

    def _predicted(self, f):
        """Labels: the sign (binary) or the largest one-vs-all output."""
        if f.ndim == 1:
            return self.classes_[(f > 0).astype(int)]
        return self.classes_[np.argmax(f, axis=1)]


class _KernelRLS2(KernelBankMixin, _RLS2Estimator):
    """Model hooks of RLS2Regressor / RLS2Classifier: a kernel bank (not for direct use)."""

    _default_kernels = "rls2_default"

    def _rule_scaling(self, K, rule, X_unlabeled):
        """Scaling by ``rule``, transductive (rule (18) over X_unlabeled too) if it is given."""
        if X_unlabeled is None or rule in (None, "none"):
            return rls2_scaling(K, rule)
        if rule != "trace":
            raise ValueError("X_unlabeled (transductive scaling) supports scaling='trace' "
                             f"only; got scaling={rule!r}.")
        X_unlabeled = validate_data(self, X_unlabeled, reset=False)
        bank = self.kernel_bank_
        extra = np.stack([k.diag(X_unlabeled) for k in bank.kernels_])
        if self.normalize == "trace":
            extra = extra * bank.trace_factors_[:, None]
        elif self.normalize == "cosine":
            extra = np.ones_like(extra)
        diag = np.concatenate([np.diagonal(K, axis1=1, axis2=2), extra], axis=1)
        return rls2_scaling(K, "trace", transductive_K=diag)

    @on_one_blas_thread  # kernels and solves: the same bits for every thread count
    def _fit_targets(self, X, targets, intercept, X_unlabeled):
        self.kernel_bank_ = self._build_bank()
        # Algorithm 1's K(d) + lam I, its Cholesky factor and temporaries: 8 Gram matrices
        K = self.kernel_bank_.fit_transform(X, workspace=8)
        K = check_kernel_stack(K, check_psd_=False)
        owner = type(self).__name__
        s = _resolve_scaling(owner, self.scaling, _KERNEL_RULES, K.shape[0], "n_kernels",
                             lambda rule: self._rule_scaling(K, rule, X_unlabeled))
        ops = _KernelOps(K, s)  # one scaling for all machines
        results = []
        for t in targets:
            b = _resolve_intercept(intercept, t, owner)
            results.append(self._solve(ops, t - b, b))
        return results

    def _set_selection(self, X):
        self.selected_kernels_ = np.flatnonzero(np.atleast_2d(self.weights_).any(axis=0))
        self.X_fit_ = X

    @on_one_blas_thread
    def _decision(self, X):
        check_is_fitted(self, "result_")
        X = validate_data(self, X, reset=False)
        results = self.result_ if isinstance(self.result_, list) else [self.result_]
        sel = self.selected_kernels_
        if self.normalize is None:  # only the selected kernels are evaluated
            from .kernels import kernel_stack

            K_sel = kernel_stack([self.kernel_bank_.kernels_[i] for i in sel], X, self.X_fit_)
        else:
            K_sel = self.kernel_bank_.transform(X)[sel]
        out = []
        for r in results:
            w = r.weights[sel] * r.scaling[sel]
            out.append(np.tensordot(w, K_sel, axes=1) @ r.dual_coef + r.intercept)
        return out[0] if len(out) == 1 else np.column_stack(out)


class _LinearRLS2(_RLS2Estimator):
    """Model hooks of the linear RLS2 estimators: one linear kernel per feature."""

    _linear = True

    @on_one_blas_thread  # kernels and solves: the same bits for every thread count
    def _fit_targets(self, X, targets, intercept, X_unlabeled):
        Xf = np.asarray(X, dtype=float)
        transductive = None
        if X_unlabeled is not None:
            transductive = np.vstack([Xf, validate_data(self, X_unlabeled, reset=False)])
        fisher_weighted = getattr(self, "fisher_weighted", False)
        results = []
        for t in targets:  # each machine has its own scaling (rule (17) depends on the labels)
            ops, yc, b = _linear_setup(Xf, t, self.scaling, transductive, fisher_weighted,
                                       intercept, type(self).__name__)
            results.append(self._solve(ops, yc, b))
        return results

    def _set_selection(self, X):
        self.selected_features_ = np.flatnonzero(np.atleast_2d(self.coef_).any(axis=0))

    @on_one_blas_thread
    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False)
        return X @ self.coef_.T + self.intercept_


@_estimator_doc("kernels", "rls2_solve", ova=False)
class RLS2Regressor(_RegressionTask, _KernelRLS2):
    r"""RLS2 regression: multiple kernel learning with the square loss (Problem 5 of [1]_).

    Learns kernel weights :math:`d` on the simplex and coefficients :math:`c` of
    :math:`f(x)=b+\sum_jc_j\sum_id_is_iK_i(x_j,x)` by Algorithm 1 (see :func:`rls2_solve`).

    Parameters
    ----------
    {kernels, lam_kernel, kernel_scaling, normalize, task, loop}

    {attributes}
    selected_kernels_ : ndarray of int
        Indices of the kernels with :math:`d_i>0`.
    {bank_attributes}

    See Also
    --------
    rls2_solve : the solver on precomputed Gram stacks.
    LinearRLS2Regressor : one linear kernel per feature.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.kernels import gaussian, linear
    >>> from mklcore.rls2 import RLS2Regressor
    >>> X = np.linspace(-1, 1, 30)[:, None]
    >>> reg = RLS2Regressor(kernels=[linear(), gaussian(gamma=1.0)], lam=1e-3)
    >>> reg.fit(X, 3 * X.ravel() + 1).weights_.round(3).tolist()
    [1.0, 0.0]
    """

    def __init__(self, *, kernels=None, lam=0.01, scaling="trace", normalize=None,
                 fit_intercept=True, tol=1e-6, residual_tol=None, max_iter=10_000,
                 simplex_solver="active_set", accelerate=True, verbose=0):
        store_params(self, locals())


@_estimator_doc("kernels", "rls2_solve", ova=True)
class RLS2Classifier(_ClassificationTask, _KernelRLS2):
    r"""RLS2 classification: square-loss MKL on labels, one-vs-all for several classes.

    Two classes: one RLS2 machine on the labels coded :math:`\pm1` (``classes_[1]`` is +1),
    intercept :math:`b=0`, prediction by the sign (Sec. 5.2 of [1]_). More classes: one
    machine per class ("each class is compared to all the others", Sec. 5.3), prediction by
    the largest output.

    Parameters
    ----------
    {kernels, lam_kernel, kernel_scaling, normalize, task, loop}

    {attributes}
    selected_kernels_ : ndarray of int
        Kernels selected by at least one machine.
    {bank_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.kernels import gaussian, linear
    >>> from mklcore.rls2 import RLS2Classifier
    >>> X = np.linspace(-1, 1, 30)[:, None]; y = X.ravel() > 0
    >>> clf = RLS2Classifier(kernels=[linear(), gaussian(gamma=1.0)], lam=0.1)
    >>> clf.fit(X, y).score(X, y)
    1.0
    """

    def __init__(self, *, kernels=None, lam=0.01, scaling="trace", normalize=None,
                 ova_coding="pm1", tol=1e-6, residual_tol=None, max_iter=10_000,
                 simplex_solver="active_set", accelerate=True, verbose=0):
        store_params(self, locals())


@_estimator_doc("features", "rls2_linear_solve", ova=False)
class LinearRLS2Regressor(_RegressionTask, _LinearRLS2):
    r"""Linear RLS2 regression: embedded feature selection (Sec. 4.2 of [1]_).

    RLS2 with one linear kernel per feature; the model is :math:`f(x)=b+w^\top x` with
    :math:`w_i=d_is_i\,x^{(i)\top}c` (eq. 12), sparse because :math:`d` is: the squared
    weighted-:math:`\ell_1` problem
    :math:`\min_w\tfrac12\|y-Xw\|^2+\tfrac\lambda2(\sum_i|w_i|/\sqrt{s_i})^2`.
    See :func:`rls2_linear_solve`.

    Parameters
    ----------
    {lam_linear}
    scaling : {"norm", "none"}, ndarray of shape (n_features,) or None, default="norm"
        Feature scaling: ``"norm"`` is rule (16), :math:`s_i=1/\|x^{(i)}\|^2`.
    {task, loop}

    {attributes}
    coef_ : ndarray of shape (n_features,)
        Linear coefficients :math:`w` (eq. 12).
    selected_features_ : ndarray of int
        Features with :math:`w_i\neq0`.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import LinearRLS2Regressor
    >>> X = np.random.default_rng(0).standard_normal((40, 6)); y = X[:, 0] - 2 * X[:, 3]
    >>> reg = LinearRLS2Regressor(lam=0.01, fit_intercept=False).fit(X, y)
    >>> reg.selected_features_.tolist(), reg.coef_.round(2).tolist()
    ([0, 3], [0.97, 0.0, 0.0, -1.98, 0.0, 0.0])
    """

    def __init__(self, *, lam=0.1, scaling="norm", fit_intercept=True, tol=1e-6,
                 residual_tol=None, max_iter=10_000, simplex_solver="active_set",
                 accelerate=True, verbose=0):
        store_params(self, locals())


@_estimator_doc("features", "rls2_linear_solve", ova=True)
class LinearRLS2Classifier(_ClassificationTask, _LinearRLS2):
    r"""Linear RLS2 classification with feature selection; one-vs-all for several classes.

    Two classes: one linear RLS2 machine on :math:`\pm1` labels, :math:`b=0`. More classes:
    one machine per class with its own scaling (rule (17) depends on the class), prediction
    by the largest output (the one-versus-all scheme of Sec. 5.3 of [1]_, its 14 Cancers
    experiment).

    Parameters
    ----------
    {lam_linear}
    scaling : {"norm", "fisher", "none"}, ndarray or None, default="norm"
        Feature scaling: rule (16) (``"norm"``) or rule (17) (``"fisher"``, within-class
        variances of each binary problem).
    {fisher_weighted, task, loop}

    {attributes}
    coef_ : ndarray of shape (n_features,) or (n_classes, n_features)
        Linear coefficients :math:`w` (eq. 12; one row per machine for three or more classes).
    selected_features_ : ndarray of int
        Features used by at least one machine ("selected genes" of the paper).

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.rls2 import LinearRLS2Classifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 5)); y = np.argmax(X[:, :3], axis=1)
    >>> clf = LinearRLS2Classifier(lam=1e-2).fit(X, y)
    >>> clf.coef_.shape, clf.score(X, y) > 0.8
    ((3, 5), True)
    """

    def __init__(self, *, lam=0.1, scaling="norm", fisher_weighted=False, ova_coding="pm1",
                 tol=1e-6, residual_tol=None, max_iter=10_000, simplex_solver="active_set",
                 accelerate=True, verbose=0):
        store_params(self, locals())
