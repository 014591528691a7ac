"""Shared estimator machinery: kernel building, label handling, fit bookkeeping.

Every MKL classifier of mklcore is a thin layer over a ``*_solve`` function that works on a
precomputed Gram stack. :class:`BaseMKLClassifier` does the rest once: it validates the
parameters, maps the labels to {-1, +1}, builds the training stack with
:class:`mklcore.kernels.KernelBank`, calls the subclass's ``_solve`` and copies the
:class:`~mklcore._result.MKLResult` into the fitted attributes (``weights_``, ``dual_coef_``,
``history_``...). Prediction builds only the test kernels between new points and the
training points.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._result import decision
from ._validation import (Interval, Options, check_binary_labels, check_kernel_stack,
                          validate_params)

__all__ = ["BaseMKLClassifier", "COMMON_CONSTRAINTS", "KernelBankMixin"]

#: constraints shared by the estimators (each class adds its own)
COMMON_CONSTRAINTS = {
    "C": [Interval("real", 0, None, closed="neither")],
    "normalize": [Options("trace", "cosine"), None],
    "tol": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", 1, None)],
    "svm_tol": [Interval("real", 0, None, closed="neither")],
    "verbose": [Interval("int", 0, None), bool],
}


class KernelBankMixin:
    """Builds an estimator's training :class:`~mklcore.kernels.KernelBank` (not for direct use).

    Uses the estimator's ``kernels`` and ``normalize`` parameters; when ``kernels`` is None and
    the class sets ``_default_kernels`` (a name of :func:`mklcore.kernels.kernel_bank`), that
    bank is used instead of the ``KernelBank`` default.
    """

    #: name of the kernel_bank used when ``kernels`` is None (None: KernelBank's default)
    _default_kernels = None

    def _build_bank(self):
        from .kernels import KernelBank, kernel_bank

        kernels = self.kernels
        if kernels is None and self._default_kernels is not None:
            kernels = kernel_bank(self._default_kernels)
        return KernelBank(kernels=kernels, normalize=self.normalize)


class BaseMKLClassifier(KernelBankMixin, ClassifierMixin, BaseEstimator):
    """Base class of the binary MKL classifiers (not for direct use).

    Subclasses define ``__init__`` (storing every argument unchanged), a
    ``_parameter_constraints`` dict and ``_solve(K, y)`` returning an ``MKLResult``
    whose ``dual_coef`` are the signed coefficients of
    ``f(x) = sum_m weights[m] k_m(x, X_fit) @ dual_coef + intercept``.
    """

    _parameter_constraints = {}
    #: whether to run the (Lanczos) PSD check on the training kernels
    _check_psd = True

    def _solve(self, K, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_params(self):
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(deep=False))

    def fit(self, X, y):
        """Fit the model on features ``X`` and binary labels ``y``.

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
        X, y = validate_data(self, X, y, dtype=None if self._accepts_strings() else "numeric")
        check_classification_targets(y)
        y_pm, self.classes_ = check_binary_labels(y, type(self).__name__)
        self.kernel_bank_ = self._build_bank()
        K = self.kernel_bank_.fit_transform(X)
        K = check_kernel_stack(K, y_pm, check_psd_=self._check_psd,
                               descriptions=getattr(self.kernel_bank_, "descriptions_", None))
        result = self._solve(K, y_pm)
        self._set_fitted(result)
        self.X_fit_ = X
        return self

    def _accepts_strings(self):
        return False

    def _set_fitted(self, result):
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
        X = validate_data(self, X, reset=False,
                          dtype=None if self._accepts_strings() else "numeric")
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
