r"""lp-norm multiple kernel learning (Kloft et al., NIPS 2009) and the uniform-sum baseline.

The uniform sum-kernel SVM is the :math:`p=\infty` end of the lp-norm family: the SVM with
kernel :math:`\sum_m K_m` (all weights 1, not 1/M; Kloft et al. 2009, Sec. 2 and our spec
§2.6).
"""

import numpy as np

from ._base import COMMON_CONSTRAINTS, BaseMKLClassifier
from ._result import History, MKLResult
from ._validation import check_kernel_stack, validate_params
from .svm import svm_solve

__all__ = ["sum_kernel_svm_solve", "SumKernelSVC"]


def sum_kernel_svm_solve(K, y, *, C=1.0, svm_tol=1e-3, check_input=True):
    r"""Train the SVM on the unweighted sum of the kernels (the l-infinity MKL baseline).

    Solves the SVM dual with :math:`K = \sum_m K_m`, which is the :math:`p\to\infty` limit of
    the lp-norm MKL dual (9) of Kloft et al. (2009): there :math:`\|S(\alpha)\|_1 =
    \frac12\alpha^\top Y(\sum_m K_m)Y\alpha`.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Training Gram matrices.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    C : float, default=1.0
        Box constraint of the SVM. Must be > 0.
    svm_tol : float, default=1e-3
        KKT tolerance of the SVM solver.
    check_input : bool, default=True
        Validate K and y (shapes, finiteness, symmetry, PSD).

    Returns
    -------
    result : MKLResult
        ``weights`` are all ones; ``objective`` is the SVM primal value (hinge loss at the
        returned alpha) and ``gap`` its relative duality gap to the SVM dual, the optimality
        certificate of this fixed-weight problem. ``dual_objective`` is added.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore import sum_kernel_svm_solve
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1, -1, 1, 1])
    >>> res = sum_kernel_svm_solve(np.stack([X @ X.T, np.exp(-(X - X.T) ** 2)]), y, C=10.0)
    >>> res.weights.tolist(), res.success
    ([1.0, 1.0], True)
    """
    validate_params("sum_kernel_svm_solve", COMMON_CONSTRAINTS, {"C": C, "svm_tol": svm_tol})
    if check_input:
        K = check_kernel_stack(K, y)
    weights = np.ones(K.shape[0])
    history = History()
    svm = svm_solve(K, y, weights=weights, C=C, tol=svm_tol)
    history.append(objective=svm.primal_objective, gap=svm.gap, weights=weights)
    return MKLResult(
        weights=weights, dual_coef=svm.dual_coef, intercept=svm.intercept,
        objective=svm.primal_objective, dual_objective=svm.dual_objective, gap=svm.gap,
        n_iter=1, success=True, status=0, message="converged", history=history.as_dict(),
        method="sum_kernel", alpha=svm.alpha, n_svm_calls=1)


class SumKernelSVC(BaseMKLClassifier):
    """SVM on the unweighted sum of a bank of kernels (the uniform-sum MKL baseline).

    Parameters
    ----------
    kernels : list, default=None
        Kernel bank: Kernel objects, ``(name, params)`` / ``(name, params, columns)`` tuples or
        callables (see :func:`mklcore.kernels.kernel_bank`). ``None`` uses a linear and a
        Gaussian kernel.
    C : float, default=1.0
        Box constraint of the SVM. Must be > 0.
    normalize : {"trace", "cosine"} or None, default=None
        Normalisation of each kernel, fitted on the training data.
    svm_tol : float, default=1e-3
        KKT tolerance of the SVM solver.

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        All ones (the sum kernel).
    dual_coef_ : ndarray of shape (n_samples,)
        Signed dual coefficients ``alpha * y`` (zero for non-support vectors).
    intercept_ : float
        Bias ``b``.
    support_ : ndarray of shape (n_support,)
        Indices of the support vectors.
    classes_ : ndarray of shape (2,)
        Class labels; ``classes_[1]`` is the positive class.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data, used to build test kernels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_iter_ : int
        Always 1.
    converged_ : bool
        Whether the solver converged.
    objective_ : float
        SVM primal objective.
    gap_ : float
        Relative SVM duality gap.
    history_ : dict of ndarray
        One-row history (``objective``, ``gap``, ``weights``, ``time``).
    result_ : MKLResult
        The full solver result.
    kernel_bank_ : KernelBank
        The fitted kernel bank.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from mklcore import SumKernelSVC
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> clf = SumKernelSVC(C=1.0).fit(X, y)
    >>> clf.weights_.tolist()
    [1.0, 1.0]
    """

    _parameter_constraints = {k: COMMON_CONSTRAINTS[k] for k in ("C", "normalize", "svm_tol")}
    _parameter_constraints["kernels"] = [list, tuple, None]

    def __init__(self, *, kernels=None, C=1.0, normalize=None, svm_tol=1e-3):
        self.kernels = kernels
        self.C = C
        self.normalize = normalize
        self.svm_tol = svm_tol

    def _solve(self, K, y):
        return sum_kernel_svm_solve(K, y, C=self.C, svm_tol=self.svm_tol, check_input=False)
