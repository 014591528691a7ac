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
import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._result import decision
from ._validation import (Interval, Options, as_float_array, check_class_labels,
                          check_finite, check_kernel_stack, check_labels_present,
                          validate_params)

__all__ = ["BaseMKLClassifier", "BaseMKLRegressor", "KernelBankMixin", "platt_sigmoid",
           "store_params", "COMMON_CONSTRAINTS", "common_constraints", "WRAPPER_PARAMS",
           "DOC_PARAMS", "fill_doc", "forget_fitted", "fit_or_unfitted"]

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
    "multiclass": [Options("ovr", "ovr-per-class")],
    "probability": [bool],
    "random_state": [Interval("int", 0, None), np.random.RandomState, None],
}

#: parameters every classifier may have, checked whether or not its constraints list them
_CLASSIFIER_OPTIONS = ("multiclass", "probability", "random_state")


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
    "svr_C": """C : float, default=1.0
        Penalty of the epsilon-insensitive loss. Must be > 0.
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube (in the units of ``y``).""",
    "svr_fitted": r"""dual_coef_ : ndarray of shape (n_samples,)
        :math:`\alpha-\alpha^*` (zero for non-support vectors).
    intercept_ : float
    support_ : ndarray of shape (n_support,)
    X_fit_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int
    n_iter_ : int
    converged_ : bool""",
    "simplex_svr_solve_example": """Examples
    --------
    >>> import numpy as np
    >>> from {obj_module} import {obj_name}
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = X[:, 0] + 0.1 * rng.normal(size=40)
    >>> K = np.stack([np.outer(X[:, 0], X[:, 0]), np.outer(X[:, 1], X[:, 1])])
    >>> res = {obj_name}(K, y, C=1.0, epsilon=0.1)
    >>> res.success, round(float(res.weights.sum()), 6)
    (True, 1.0)""",
    "simplex_svr_example": """Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from mklcore import {obj_name}
    >>> X, y = make_regression(n_samples=60, n_features=4, noise=1.0, random_state=0)
    >>> reg = {obj_name}(C=10.0, normalize="trace").fit(X, y / y.std())
    >>> reg.weights_.shape, round(float(reg.weights_.sum()), 6)
    ((2,), 1.0)""",
    "multiclass": """multiclass : {"ovr", "ovr-per-class"}, default="ovr"
        More than two classes: ``"ovr"`` learns one kernel weight vector shared by the
        one-vs-rest problems (the sum of their duals is minimised over the weights, as in the
        multiclass SimpleMKL of Rakotomamonjy et al. 2008, Sec. 5.1, and Zien & Ong 2007; the
        duality gap certifies the joint problem; ``weights_`` has shape (n_kernels,),
        ``dual_coef_`` (n_classes, n_samples)); ``"ovr-per-class"`` fits one binary model per
        class with its own weights (``weights_`` of shape (n_classes, n_kernels), the models
        in ``estimators_``). Prediction: the class of the largest decision value.""",
    "probability": """probability : bool, default=False
        Fit Platt's sigmoid :math:`P(y=1|f)=1/(1+\\exp(Af+B))` (Platt 2000, with the targets
        and Newton method of Lin, Lin & Weng 2007) to decision values of a 5-fold internal
        cross-validation, as ``sklearn.svm.SVC(probability=True)`` does, so that
        :meth:`predict_proba` and :meth:`predict_log_proba` exist; more than two classes: one
        sigmoid per one-vs-rest problem, normalised to sum 1. Costs five more fits.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds of the internal cross-validation (``probability=True``).""",
    "fitted_run": """criterion_ : float
        The value the stopping test compared with ``tol`` (``result_.criterion_name`` says
        which): ``converged_`` requires ``criterion_ <= tol``. It equals ``gap_`` except for the
        cutting-plane and SILP solvers, which stop on the smaller of ``gap_`` and their LP
        master's bound :math:`|1 - \\eta/J|`, and for methods without a gap.
    history_ : dict of ndarray
        Per-iteration ``objective``, ``gap``, ``weights``, ``time`` and the solver's extras.
    result_ : MKLResult
        The full solver result.
    kernel_bank_ : KernelBank
        The fitted kernel bank.
    kernel_names_ : list of str
        The name of each kernel (feature groups of
        :func:`~mklcore.kernels.kernel_bank` name theirs; else the kernel's ``repr``); the
        weights by name: :meth:`kernel_weights`.""",
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
        from .kernels import KernelBank, resolve_columns

        kernels, normalize = self._bank_params()
        if kernels is not None:  # columns named after the DataFrame the estimator was fitted on
            kernels = resolve_columns(kernels, getattr(self, "feature_names_in_", None),
                                      type(self).__name__)
        check_psd = "auto" if getattr(self, "check_input", True) else False
        return KernelBank(kernels=kernels, normalize=normalize, check_psd=check_psd)


class BaseMKLClassifier(KernelBankMixin, ClassifierMixin, BaseEstimator):
    """Base class of the MKL classifiers (not for direct use).

    Two classes are mapped to {-1, +1}; more are one-vs-rest problems, solved by ``_solve``
    itself with shared kernel weights when ``_shared_multiclass`` (the wrapper solvers) and
    ``multiclass="ovr"``, else by one binary model per class (``estimators_``).
    ``probability=True`` adds Platt's sigmoids (:meth:`predict_proba`).

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
    #: whether ``_solve`` handles more than two classes itself (one-vs-rest problems sharing
    #: the kernel weights, :class:`mklcore.tasks.OneVsRestTask`); otherwise, and with
    #: ``multiclass="ovr-per-class"``, one binary model is fitted per class
    _shared_multiclass = False
    #: parameters of the estimator that the solver does not take (``random_state`` is passed
    #: on only to a ``_solver`` that takes it)
    _estimator_params = ("kernels", "normalize", "check_input", "multiclass", "probability")
    #: fixed unit weights (the sum kernel): the bank is summed kernel by kernel
    #: (:meth:`~mklcore.kernels.KernelBank.fit_transform_sum`), never stacked, and the solver
    #: receives the one summed kernel
    _sum_kernel = False

    def _solve(self, K, y):
        return self._solver(K, y, **self.solver_params(), check_input=False)

    def _solve_inputs(self, X):
        """Extra keyword arguments of ``_solve`` computed from the training features ``X``.

        None by default; a subclass whose solver needs more than the Gram stack overrides it
        (localized MKL: the gating inputs ``X_gate``).
        """
        return {}

    def _store_params(self, params):
        """Store the ``__init__`` arguments (``params``: its ``locals()``) unchanged."""
        store_params(self, params)

    def solver_params(self):
        """The keyword arguments this estimator's ``fit`` hands on to its solve function.

        All parameters but ``_estimator_params``: ``kernels``, ``normalize`` (used by the
        bank), ``check_input`` (used by :meth:`_fit_inputs`; the solver is called with
        ``check_input=False``), ``multiclass`` and ``probability`` (used by :meth:`fit`),
        and ``random_state`` when the solver takes none. Code that solves on a precomputed
        stack what the estimator would fit (e.g. a benchmark reusing one stack over a grid)
        calls it instead of listing these names again.

        Returns
        -------
        params : dict
        """
        params = self.get_params(deep=False)
        params = {k: v for k, v in params.items() if k not in self._estimator_params}
        if ("random_state" in params and self._solver is not None
                and "random_state" not in inspect.signature(self._solver).parameters):
            del params["random_state"]
        return params

    def _validate_params(self):
        params = self.get_params(deep=False)
        options = {k: COMMON_CONSTRAINTS[k] for k in _CLASSIFIER_OPTIONS
                   if k in params and k not in self._parameter_constraints}
        validate_params(type(self).__name__, {**self._parameter_constraints, **options},
                        params)

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
        """Fit the model on features ``X`` and class labels ``y``.

        A fit that raises (invalid input, a failed solve, ``KeyboardInterrupt``) leaves the
        estimator unfitted (the previous model is dropped when ``fit`` starts): ``predict``
        then raises :class:`~sklearn.exceptions.NotFittedError`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; the kernels of ``kernels`` are evaluated on it.
        y : array-like of shape (n_samples,)
            Two or more classes (any labels); with two, ``classes_[1]`` is the positive
            class; with more, one-vs-rest problems (see ``multiclass``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype="numeric")
        check_labels_present(y)  # None labels: an error naming y, not "unknown label type"
        check_classification_targets(y)
        self.classes_, index = check_class_labels(y, type(self).__name__)
        shared = self._shared_multiclass and getattr(self, "multiclass", "ovr") == "ovr"
        if self.classes_.size > 2 and not shared:
            self._fit_per_class(X, index)
        else:  # two classes in {-1, +1}, or the class indices (one-vs-rest in the solver)
            labels = np.where(index == 1, 1.0, -1.0) if self.classes_.size == 2 else index
            result = self._solve(self._fit_inputs(X, labels), labels, **self._solve_inputs(X))
            self._set_fitted(result)
        self.X_fit_ = X
        if getattr(self, "probability", False):
            self._fit_probability(X, index)
        return self

    def _submodel(self):
        """An unfitted copy for internal fits (per class, cross-validation): no sigmoid."""
        from sklearn.base import clone

        model = clone(self)
        params = model.get_params(deep=False)
        if "probability" in params:
            model.set_params(probability=False)
        names = getattr(self, "feature_names_in_", None)
        if names is not None and params.get("kernels") is not None:
            # the internal fits see arrays: columns named after the DataFrame become positions
            from .kernels import resolve_columns

            model.set_params(kernels=resolve_columns(params["kernels"], names,
                                                     type(self).__name__))
        return model

    def _fit_probability(self, X, index, n_folds=5):
        """Platt's sigmoids on the decision values of an internal cross-validation.

        ``probA_`` and ``probB_`` (one per one-vs-rest problem; one for two classes), fitted by
        :func:`platt_sigmoid` on out-of-fold decision values of ``n_folds`` stratified folds
        (fewer when a class has fewer points; on the training decision values when a class
        has a single point), seeded by ``random_state``.
        """
        from sklearn.model_selection import StratifiedKFold

        counts = np.bincount(index)
        folds = min(n_folds, int(counts.min()))
        if folds >= 2:
            f = np.zeros((index.size, 1 if counts.size == 2 else counts.size))
            cv = StratifiedKFold(folds, shuffle=True, random_state=self.random_state)
            for train, test in cv.split(X, index):
                model = self._submodel().fit(X[train], index[train])
                f[test] = model.decision_function(X[test]).reshape(test.size, -1)
        else:
            f = self.decision_function(X).reshape(index.size, -1)
        targets = ([index == 1] if counts.size == 2
                   else [index == k for k in range(counts.size)])
        ab = np.array([platt_sigmoid(f[:, k], t) for k, t in enumerate(targets)])
        self.probA_, self.probB_ = ab[:, 0], ab[:, 1]

    @available_if(lambda self: getattr(self, "probability", False))
    def predict_proba(self, X):
        """Class probabilities from Platt's sigmoids (``probability=True``).

        Two classes: :math:`P(\\text{classes\\_[1]})=1/(1+\\exp(Af+B))`; more: one sigmoid per
        one-vs-rest decision value, normalised to sum 1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self, "probA_")
        f = self.decision_function(X).reshape(-1, self.probA_.size)
        p = _sigmoid(f, self.probA_, self.probB_)
        if self.classes_.size == 2:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)

    @available_if(lambda self: getattr(self, "probability", False))
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _fit_per_class(self, X, index):
        """One binary model per class (``classes_[k]`` against the rest) in ``estimators_``;
        their weights, coefficients and intercepts stacked by class."""
        self.estimators_ = [self._submodel().fit(X, np.where(index == k, 1, -1))
                            for k in range(self.classes_.size)]
        models = self.estimators_
        for name in ("kernel_bank_", "Q_", "kernel_names_"):
            if hasattr(models[0], name):
                setattr(self, name, getattr(models[0], name))
        for name in ("weights_", "dual_coef_", "intercept_"):
            if all(hasattr(m, name) for m in models):
                setattr(self, name, np.stack([np.asarray(getattr(m, name)) for m in models]))
        self.support_ = np.flatnonzero(np.any(self.dual_coef_ != 0, axis=0))
        self.result_ = [m.result_ for m in models]
        self.history_ = [m.history_ for m in models]
        self.n_iter_ = max(m.n_iter_ for m in models)
        self.converged_ = all(m.converged_ for m in models)
        self.objective_ = float(sum(m.objective_ for m in models))
        self.gap_ = float(max(m.gap_ for m in models))
        self.criterion_ = float(max(m.criterion_ for m in models))

    def _per_class_decision(self, X):
        """Decision values of the per-class models (``estimators_``), one column per class."""
        X = validate_data(self, X, reset=False, dtype="numeric")  # the models saw arrays
        return np.column_stack([m.decision_function(X) for m in self.estimators_])

    def _set_fitted(self, result):
        if self._sum_kernel:  # solved on the summed kernel: one unit weight per bank kernel
            result = type(result)(result)
            result.weights = np.ones(self.kernel_bank_.n_kernels_)
        self.result_ = result
        self.weights_ = np.asarray(result.weights, dtype=float)
        self.kernel_names_ = (list(self.kernel_bank_.kernel_names_)
                              if hasattr(self, "kernel_bank_")
                              else [f"kernel {m}" for m in range(self.weights_.shape[-1])])
        self.dual_coef_ = np.asarray(result.dual_coef, dtype=float)
        self.intercept_ = (float(result.intercept) if np.ndim(result.intercept) == 0
                           else np.asarray(result.intercept, dtype=float))
        self.support_ = np.flatnonzero(np.any(np.atleast_2d(self.dual_coef_) != 0, axis=0))
        self.n_iter_ = int(result.n_iter)
        self.converged_ = bool(result.success)
        self.objective_ = float(result.objective)
        self.gap_ = float(result.gap)
        self.criterion_ = float(result.get("criterion", result.gap))
        self.history_ = result.history

    def kernel_weights(self):
        """The kernel weights by kernel name: ``weights_`` as a pandas object.

        Returns
        -------
        weights : pandas.Series or pandas.DataFrame
            A Series indexed by ``kernel_names_``; with one weight vector per class
            (``multiclass="ovr-per-class"``), a DataFrame with a row per class.
        """
        import pandas as pd

        check_is_fitted(self)
        if np.ndim(self.weights_) == 2:
            return pd.DataFrame(self.weights_, index=pd.Index(self.classes_, name="class"),
                                columns=self.kernel_names_)
        return pd.Series(self.weights_, index=self.kernel_names_, name="weight")

    def decision_function(self, X):
        """Decision values ``f(x)`` of the paper (positive means ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        f : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class (its one-vs-rest problem) for more than two classes.
        """
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            return self._per_class_decision(X)
        X = validate_data(self, X, reset=False, dtype="numeric")
        if self._sum_kernel:
            return self.kernel_bank_.transform_sum(X) @ self.dual_coef_.T + self.intercept_
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
        f = self.decision_function(X)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f > 0).astype(int)]


def _sigmoid(f, A, B):
    """:math:`1/(1+e^{Af+B})`, computed without overflow."""
    z = A * f + B
    out = np.empty_like(z)
    pos = z >= 0
    e = np.exp(-z[pos])
    out[pos] = e / (1.0 + e)
    out[~pos] = 1.0 / (1.0 + np.exp(z[~pos]))
    return out


def platt_sigmoid(f, positive, *, max_iter=100, min_step=1e-10, sigma=1e-12, eps=1e-5):
    r"""Fit Platt's sigmoid :math:`P(y=1|f)=1/(1+\exp(Af+B))` to decision values.

    The algorithm of Lin, Lin & Weng (2007, Algorithm 1; the one LIBSVM runs): Platt's (2000)
    regularised targets :math:`t_+=(N_++1)/(N_++2)`, :math:`t_-=1/(N_-+2)`, Newton's method on
    the negative log-likelihood with a backtracking line search, evaluated stably.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Decision values (out of sample).
    positive : ndarray of shape (n,), bool
        Whether each point belongs to the positive class.
    max_iter, min_step, sigma, eps : float
        Newton iterations, smallest line-search step, Hessian ridge and stopping tolerance on
        the gradient (the constants of the paper).

    Returns
    -------
    A, B : float
    """
    f = np.asarray(f, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def nll(A, B):
        z = A * f + B
        with np.errstate(over="ignore"):
            return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-z)),
                                         (t - 1.0) * z + np.log1p(np.exp(z)))))

    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = nll(A, B)
    for _ in range(max_iter):
        p = _sigmoid(f, A, B)  # 1 / (1 + exp(z)) = P(y=1)
        q = 1.0 - p
        d2 = p * q
        h11 = sigma + float(np.sum(f * f * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(f * d2))
        d1 = t - p
        g1, g2 = float(np.sum(f * d1)), float(np.sum(d1))
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            new = nll(A + step * dA, B + step * dB)
            if new < value + 1e-4 * step * gd:
                A, B, value = A + step * dA, B + step * dB, new
                break
            step /= 2.0
        else:
            break
    return float(A), float(B)


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
    _estimator_params = BaseMKLClassifier._estimator_params

    # the same bookkeeping as the classifiers (one implementation)
    _solve = BaseMKLClassifier._solve
    _solve_inputs = BaseMKLClassifier._solve_inputs
    _store_params = BaseMKLClassifier._store_params
    solver_params = BaseMKLClassifier.solver_params
    _validate_params = BaseMKLClassifier._validate_params
    _fit_inputs = BaseMKLClassifier._fit_inputs
    _set_fitted = BaseMKLClassifier._set_fitted
    kernel_weights = BaseMKLClassifier.kernel_weights

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
