"""Shared estimator machinery: kernel building, label handling, fit bookkeeping, docs.

Every MKL classifier of mklcore is a thin layer over a ``*_solve`` function that works on a
precomputed Gram stack. :class:`BaseMKLClassifier` does the rest once: it validates the
parameters, maps the labels to {-1, +1}, builds the training stack with
:class:`mklcore.kernels.KernelBank` (through :class:`KernelBankMixin`), calls the subclass's
``_solve`` and copies the :class:`~mklcore._result.MKLResult` into the fitted attributes.
Prediction builds only the test kernels between new points and the training points.

Hooks for subclasses: ``_default_kernels`` (the bank used when ``kernels=None``),
``_bank_params()`` (the ``kernels`` and ``normalize`` handed to the bank), ``_fit_inputs``
(what ``_solve`` receives instead of the kernel stack), ``_solve_inputs`` (extra keyword
arguments of ``_solve``) and ``_set_fitted(result)`` (extra fitted attributes).

The parameter and attribute descriptions that the solvers and estimators share live once in
:data:`DOC_PARAMS`; :func:`fill_doc` substitutes them into docstrings.
"""

import functools

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._result import decision
from ._validation import (Interval, Options, as_float_array, check_binary_labels,
                          check_finite, check_kernel_stack, check_labels_present,
                          validate_params)

__all__ = ["BaseMKLClassifier", "BaseMKLRegressor", "KernelBankMixin", "store_params", "COMMON_CONSTRAINTS",
           "common_constraints", "WRAPPER_PARAMS", "DOC_PARAMS", "fill_doc", "forget_fitted",
           "fit_or_unfitted"]

#: constraints shared by the solvers and estimators (each adds its own)
COMMON_CONSTRAINTS = {
    "kernels": [list, tuple, None],
    "C": [Interval("real", 0, None, closed="neither")],
    "normalize": [Options("trace", "cosine"), None],
    "tol": [Interval("real", 0, None, closed="left"), None],  # None: no stopping test
    "max_iter": [Interval("int", 1, None)],
    # a KKT tolerance on gradients of size 1: large ones stop the SVM at alpha = 0 (no model)
    "svm_tol": [Interval("real", 0, 1, closed="neither")],
    "verbose": [Interval("int", 0, None), bool],
    "callback": [callable, None],
    "svm_max_iter": [Interval("int", 1, None), None],
    "check_input": [bool],
}


#: the parameters of the wrapper-family estimators (lp-norm, SimpleMKL, SILP...)
WRAPPER_PARAMS = ("kernels", "C", "normalize", "tol", "max_iter", "svm_tol", "verbose")


def common_constraints(*names):
    """The :data:`COMMON_CONSTRAINTS` of ``names``, as a new dict.

    Parameters
    ----------
    *names : str
        Keys of :data:`COMMON_CONSTRAINTS`.

    Returns
    -------
    constraints : dict
        ``{name: COMMON_CONSTRAINTS[name]}`` in the order given.
    """
    return {name: COMMON_CONSTRAINTS[name] for name in names}


#: numpydoc texts shared by the docstrings of the solvers and estimators, substituted for
#: ``{key}`` by :func:`fill_doc` (parameters with their usual default, and the fitted
#: attributes every :class:`BaseMKLClassifier` has)
DOC_PARAMS = {
    "K": """K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices (unweighted, PSD).""",
    "y": """y : array-like of shape (n_samples,)
        Binary labels; mapped to {-1, +1} (larger label = +1).""",
    "kernels": """kernels : list, default=None
        Kernel bank: Kernel objects, ``(name, params)`` / ``(name, params, columns)`` tuples or
        callables (see :func:`mklcore.kernels.kernel_bank`). ``None`` uses a linear and a
        Gaussian kernel.""",
    "C": """C : float, default=1.0
        Misclassification penalty. Must be > 0.""",
    "normalize": """normalize : {"trace", "cosine"} or None, default=None
        Normalisation of each kernel, fitted on the training data.""",
    "max_iter": """max_iter : int, default=1000
        Maximum number of outer iterations.""",
    "svm_tol": """svm_tol : float, default=1e-3
        KKT tolerance of each SVM solve, in (0, 1).""",
    "callback": """callback : callable, default=None
        ``callback(intermediate_result)`` after each outer iteration, with an
        :class:`~mklcore._result.MKLResult` holding ``weights``, ``objective``, ``gap``,
        ``criterion``, ``n_iter``...; raising ``StopIteration`` stops with ``status=3``.""",
    "verbose": """verbose : int, default=0
        ``1`` prints a line every 10 iterations, ``2`` every iteration.""",
    "check_input": """check_input : bool, default=True
        Validate ``K`` and ``y`` (shapes, finiteness, symmetry, PSD).""",
    "check_input_fit": """check_input : bool, default=True
        Validate the training kernels built by the bank: finiteness, and symmetry and positive
        semidefiniteness of the kernels that are not PSD by construction (user callables; the
        linear, polynomial, Gaussian and string kernels, normalised or not, are). ``False``
        skips every check of the stack (the features ``X`` and labels ``y`` are still
        validated).""",
    "svm_max_iter": """svm_max_iter : int, default=None
        Cap on the iterations of one SVM solve; ``None``: ``max(10**6, 100 n)``
        (:func:`mklcore.wrapper.default_svm_max_iter`). Reaching it ends the run with status 2
        and a ``ConvergenceWarning`` (huge C, unscaled features; see
        :func:`mklcore.wrapper.run_wrapper`).""",
    "fitted_model": r"""dual_coef_ : ndarray of shape (n_samples,)
        Signed dual coefficients :math:`\alpha\circ y` (zero for non-support vectors).
    intercept_ : float
        Bias :math:`b`.
    support_ : ndarray of shape (n_support,)
        Indices of the support vectors.
    classes_ : ndarray of shape (2,)
        Class labels; ``classes_[1]`` is the positive class.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data, used to build test kernels.
    n_features_in_ : int
        Number of features seen in ``fit``.""",
    "simplex_solve_example": """Examples
    --------
    >>> import numpy as np
    >>> from {obj_module} import {obj_name}
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.sign(X[:, 0] + 0.1)
    >>> K = np.stack([np.outer(X[:, 0], X[:, 0]), np.outer(X[:, 1], X[:, 1])])
    >>> res = {obj_name}(K, y, C=1.0)
    >>> res.success, round(float(res.weights.sum()), 6)
    (True, 1.0)""",
    "simplex_example": """Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from {obj_module} import {obj_name}
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> clf = {obj_name}().fit(X, y)
    >>> clf.weights_.shape, round(float(clf.weights_.sum()), 6)
    ((2,), 1.0)""",
    "fitted_run": """history_ : dict of ndarray
        Per-iteration ``objective``, ``gap``, ``weights``, ``time`` and the solver's extras.
    result_ : MKLResult
        The full solver result.
    kernel_bank_ : KernelBank
        The fitted kernel bank.""",
}


def fill_doc(obj, parts=None):
    """Substitute the shared texts of :data:`DOC_PARAMS` for ``{key}`` in a docstring.

    Then ``{obj_name}`` and ``{obj_module}`` become the name and module of ``obj``.

    Parameters
    ----------
    obj : function or class
        Its ``__doc__`` is rewritten in place (nothing happens under ``python -OO``).
    parts : dict, default=None
        More ``{key: text}`` substitutions (a module's own shared texts), applied first.

    Returns
    -------
    obj : function or class
        The same object, so that ``fill_doc`` can be used as a decorator.
    """
    doc = obj.__doc__
    if doc:
        for key, text in {**(parts or {}), **DOC_PARAMS}.items():
            doc = doc.replace("{" + key + "}", text)
        obj.__doc__ = doc.replace("{obj_name}", obj.__name__).replace("{obj_module}",
                                                                     obj.__module__)
    return obj


def store_params(estimator, params):
    """Store the ``__init__`` arguments of a scikit-learn estimator unchanged.

    Parameters
    ----------
    estimator : BaseEstimator
    params : dict
        The ``locals()`` of its ``__init__``: every parameter of
        ``estimator._get_param_names()`` is set as an attribute of the same name.
    """
    for name in estimator._get_param_names():
        setattr(estimator, name, params[name])


def forget_fitted(estimator):
    """Delete every fitted attribute of ``estimator``: it is then unfitted.

    The fitted attributes are those :func:`sklearn.utils.validation.check_is_fitted` looks
    for: the public names ending with ``"_"`` (``classes_``, ``n_features_in_``, ...).

    Parameters
    ----------
    estimator : BaseEstimator
    """
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("_")]:
        delattr(estimator, name)


def fit_or_unfitted(fit):
    """Decorate a ``fit`` method: the estimator ends fitted by this call, or unfitted.

    The previous model is dropped when ``fit`` starts, and whatever ``fit`` set is dropped if
    it raises (invalid input, a failed solve, ``KeyboardInterrupt``): ``predict`` then raises
    :class:`~sklearn.exceptions.NotFittedError`, never an ``AttributeError`` on a half-built
    model or a mix of the old and the new one (e.g. the old feature count beside new classes).

    Parameters
    ----------
    fit : callable
        The method ``fit(self, X, y, ...)``.

    Returns
    -------
    wrapped : callable
    """
    @functools.wraps(fit)
    def wrapped(self, *args, **kwargs):
        forget_fitted(self)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            forget_fitted(self)
            raise
    return wrapped


class KernelBankMixin:
    """Builds the :class:`~mklcore.kernels.KernelBank` of an estimator, once for all of them.

    For estimators with ``kernels`` and ``normalize`` parameters (and optionally
    ``check_input``: ``False`` builds the bank with ``check_psd=False``, so that not even user
    callables are checked). ``kernels=None`` uses
    ``_default_kernels``: ``None`` (the bank's own default, a linear and a Gaussian kernel), a
    name of :func:`mklcore.kernels.kernel_bank` (e.g. ``"xu2010"``) or a callable returning the
    list of kernels. Estimators whose parameters need translating (e.g. another spelling of
    ``normalize``) override :meth:`_bank_params`.
    """

    #: the kernels used when ``kernels=None`` (see the class docstring)
    _default_kernels = None

    def _bank_params(self):
        """The ``kernels`` and ``normalize`` arguments of the kernel bank.

        Returns
        -------
        kernels : list or None
            ``self.kernels``, or the ``_default_kernels`` when it is ``None``.
        normalize : str or None
            ``self.normalize``.
        """
        kernels = self.kernels
        default = self._default_kernels
        if kernels is None and default is not None:
            if isinstance(default, str):
                from .kernels import kernel_bank

                kernels = kernel_bank(default)
            else:
                kernels = default()
        return kernels, self.normalize

    def _build_bank(self):
        """A new (unfitted) :class:`~mklcore.kernels.KernelBank` for this estimator.

        Returns
        -------
        bank : KernelBank
        """
        from .kernels import KernelBank

        kernels, normalize = self._bank_params()
        check_psd = "auto" if getattr(self, "check_input", True) else False
        return KernelBank(kernels=kernels, normalize=normalize, check_psd=check_psd)


class BaseMKLClassifier(KernelBankMixin, ClassifierMixin, BaseEstimator):
    """Base class of the binary MKL classifiers (not for direct use).

    Subclasses define ``__init__`` (storing every argument unchanged, e.g. with
    ``self._store_params(locals())``), a ``_parameter_constraints`` dict (unless the default,
    that of :data:`WRAPPER_PARAMS`, fits) and either a ``_solver`` (a
    ``*_solve(K, y, **params, check_input=False)`` function that takes every parameter but
    ``kernels`` and ``normalize``) or their own ``_solve(K, y)``. The solver
    returns an ``MKLResult`` whose ``dual_coef`` are the signed coefficients of
    ``f(x) = sum_m weights[m] k_m(x, X_fit) @ dual_coef + intercept``. ``K`` is what
    ``_fit_inputs`` returns: by default the validated training stack of the kernel bank.
    """

    #: default: the constraints of the wrapper-family parameters, ``svm_max_iter`` and
    #: ``check_input`` (only those present are checked)
    _parameter_constraints = common_constraints(*WRAPPER_PARAMS, "svm_max_iter", "check_input")
    #: the ``*_solve`` function called by the default ``_solve`` (a staticmethod)
    _solver = None
    #: Gram-sized float64 matrices the solver allocates besides the stack (the combined
    #: kernel and the SVM's temporaries), reserved by the memory check before the stack is built
    _solver_workspace = 3
    #: fixed unit weights (the sum kernel): the bank is summed kernel by kernel
    #: (:meth:`~mklcore.kernels.KernelBank.fit_transform_sum`), never stacked, and the solver
    #: receives the one summed kernel
    _sum_kernel = False

    def _solve(self, K, y):
        return self._solver(K, y, **self._solver_params(), check_input=False)

    def _solve_inputs(self, X):
        """Extra keyword arguments of ``_solve`` computed from the training features ``X``.

        None by default; a subclass whose solver needs more than the Gram stack overrides it
        (localized MKL: the gating inputs ``X_gate``).
        """
        return {}

    def _store_params(self, params):
        """Store the ``__init__`` arguments (``params``: its ``locals()``) unchanged."""
        store_params(self, params)

    def _solver_params(self):
        """The parameters handed on to the solver.

        All but ``kernels``, ``normalize`` (used by the bank) and ``check_input`` (used by
        :meth:`_fit_inputs`; the solver is called with ``check_input=False``).
        """
        params = self.get_params(deep=False)
        return {k: v for k, v in params.items()
                if k not in ("kernels", "normalize", "check_input")}

    def _validate_params(self):
        validate_params(type(self).__name__, self._parameter_constraints,
                        self.get_params(deep=False))

    def _fit_inputs(self, X, y):
        """What ``_solve`` receives for the validated training data ``X``.

        Default: fits the kernel bank (``kernel_bank_``) and returns the validated training
        stack. Estimators that do not work on kernels (e.g. the Q-SVM on features) override it.
        The bank's stack is symmetric by construction and the bank has already checked the
        kernels that may be indefinite (user callables), so only finiteness is left to check
        (a polynomial kernel may overflow); with ``check_input=False`` nothing is checked.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
            Labels in {-1, +1}.

        Returns
        -------
        K : ndarray of shape (n_kernels, n_samples, n_samples)
        """
        self.kernel_bank_ = self._build_bank()
        if self._sum_kernel:
            K = self.kernel_bank_.fit_transform_sum(X)[np.newaxis]
        else:
            K = self.kernel_bank_.fit_transform(X, workspace=self._solver_workspace)
        if not getattr(self, "check_input", True):
            return K
        return check_kernel_stack(K, y, check_psd_=False, symmetric_tol=None)

    @fit_or_unfitted
    def fit(self, X, y):
        """Fit the model on features ``X`` and binary labels ``y``.

        A fit that raises (invalid input, a failed solve, ``KeyboardInterrupt``) leaves the
        estimator unfitted (the previous model is dropped when ``fit`` starts): ``predict``
        then raises :class:`~sklearn.exceptions.NotFittedError`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; the kernels of ``kernels`` are evaluated on it.
        y : array-like of shape (n_samples,)
            Two classes (any labels); ``classes_[1]`` is the positive class.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype="numeric")
        check_labels_present(y)  # None labels: an error naming y, not "unknown label type"
        check_classification_targets(y)
        y_pm, self.classes_ = check_binary_labels(y, type(self).__name__)
        result = self._solve(self._fit_inputs(X, y_pm), y_pm, **self._solve_inputs(X))
        self._set_fitted(result)
        self.X_fit_ = X
        return self

    def _set_fitted(self, result):
        if self._sum_kernel:  # solved on the summed kernel: one unit weight per bank kernel
            result = type(result)(result)
            result.weights = np.ones(self.kernel_bank_.n_kernels_)
        self.result_ = result
        self.weights_ = np.asarray(result.weights, dtype=float)
        self.dual_coef_ = np.asarray(result.dual_coef, dtype=float)
        self.intercept_ = float(result.intercept)
        self.support_ = np.flatnonzero(self.dual_coef_)
        self.n_iter_ = int(result.n_iter)
        self.converged_ = bool(result.success)
        self.objective_ = float(result.objective)
        self.gap_ = float(result.gap)
        self.history_ = result.history

    def decision_function(self, X):
        """Decision values ``f(x)`` of the paper (positive means ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        f : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype="numeric")
        if self._sum_kernel:
            return self.kernel_bank_.transform_sum(X) @ self.dual_coef_ + self.intercept_
        K_test = self.kernel_bank_.transform(X)
        return decision(self.result_, K_test)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class BaseMKLRegressor(KernelBankMixin, RegressorMixin, BaseEstimator):
    """Base class of the MKL regressors (not for direct use).

    The machinery of :class:`BaseMKLClassifier` (parameters, kernel bank, solver call, fitted
    attributes, test kernels) on real targets: ``_solver`` is a ``*_solve(K, y, **params,
    check_input=False)`` function for real ``y`` (e.g. the epsilon-SVR MKL solvers) and
    ``predict`` returns ``f(x) = sum_m weights[m] k_m(x, X_fit) @ dual_coef + intercept``;
    ``score`` is R².
    """

    _parameter_constraints = BaseMKLClassifier._parameter_constraints
    _solver = None
    _solver_workspace = BaseMKLClassifier._solver_workspace
    _sum_kernel = False

    # the same bookkeeping as the classifiers (one implementation)
    _solve = BaseMKLClassifier._solve
    _solve_inputs = BaseMKLClassifier._solve_inputs
    _store_params = BaseMKLClassifier._store_params
    _solver_params = BaseMKLClassifier._solver_params
    _validate_params = BaseMKLClassifier._validate_params
    _fit_inputs = BaseMKLClassifier._fit_inputs
    _set_fitted = BaseMKLClassifier._set_fitted

    @fit_or_unfitted
    def fit(self, X, y):
        """Fit the model on features ``X`` and real targets ``y``.

        A fit that raises leaves the estimator unfitted (see :meth:`BaseMKLClassifier.fit`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; the kernels of ``kernels`` are evaluated on it.
        y : array-like of shape (n_samples,)
            Real targets.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype="numeric")
        y = check_finite(as_float_array(y, "y", type(self).__name__), "y")
        result = self._solve(self._fit_inputs(X, y), y, **self._solve_inputs(X))
        self._set_fitted(result)
        self.X_fit_ = X
        return self

    def predict(self, X):
        """Predicted targets ``f(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return BaseMKLClassifier.decision_function(self, X)
