"""Input checks with uniform, explicit error messages.

Every solver and estimator validates its inputs here so that a user gets the same
kind of message everywhere: it names the parameter, the owner (estimator or
function), the allowed range and the value received.
"""

import numbers

import numpy as np

__all__ = [
    "Interval", "Options", "validate_params", "check_kernel_stack", "check_binary_labels",
    "check_finite", "check_psd", "smallest_eigenvalue", "PSD_TOL", "check_solver_inputs",
    "check_dense", "as_float_array", "BOOL_PARAMS", "check_labels_present",
    "check_regression_inputs", "check_class_labels", "check_classification_inputs",
]

#: relative tolerance for the smallest eigenvalue of a kernel, as a multiple of its trace
PSD_TOL = 1e-8


class Interval:
    """A numeric constraint ``left <= value <= right`` (open ends with ``closed=``).

    Parameters
    ----------
    kind : {"real", "int"}
    left, right : float or None
        Bounds; ``None`` means unbounded: every finite value on that side, never
        ``-inf`` / ``inf`` (the message shows the end as open, "(0, inf)"). Give the bound
        ``np.inf`` with a closed end, e.g. ``Interval("real", 0, np.inf, closed="right")``
        for (0, inf], to accept infinity.
    closed : {"both", "left", "right", "neither"}, default="both"
    """

    def __init__(self, kind, left, right, *, closed="both"):
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def __contains__(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.kind == "int" and not isinstance(value, numbers.Integral):
            return False
        if np.isnan(value):
            return False
        # an unbounded end is open: +-inf is outside "(0, inf)" as the message says
        if np.isinf(value) and (self.right if value > 0 else self.left) is None:
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        what = "an int" if self.kind == "int" else "a float"
        return f"{what} in the range {lb}{lo}, {hi}{rb}"


class Options:
    """A constraint ``value in {options}``."""

    def __init__(self, *options):
        self.options = options

    def __contains__(self, value):
        try:
            return any(value == o and type(value) is type(o) or value is o for o in self.options)
        except (TypeError, ValueError):
            return False

    def __str__(self):
        return "one of {" + ", ".join(repr(o) for o in self.options) + "}"


def _describe(constraints):
    parts = []
    for c in constraints:
        if c is None:
            parts.append("None")
        elif c is callable:
            parts.append("a callable")
        elif isinstance(c, type):
            parts.append(f"an instance of {c.__name__}")
        else:
            parts.append(str(c))
    return " or ".join(parts)


def _satisfies(value, c):
    if c is None:
        return value is None
    if c is callable:
        return callable(value)
    if c is bool:  # NumPy's booleans too, never a truthy str or number
        return isinstance(value, (bool, np.bool_))
    if isinstance(c, type):
        return isinstance(value, c)
    return value in c


#: switches that must be booleans wherever they appear, even when a function's constraints do
#: not list them (``check_input="no"`` is truthy: it must not mean True)
BOOL_PARAMS = ("check_input", "warn")


def validate_params(owner, constraints, params):
    """Check ``params`` against ``constraints`` and raise a clear error.

    Parameters
    ----------
    owner : str
        Name of the estimator or function, used in the message.
    constraints : dict
        ``{name: [constraint, ...]}``; a constraint is an :class:`Interval`, an
        :class:`Options`, ``None`` (the value may be None), ``callable`` or a type (``bool``
        also accepts ``np.bool_``, never a str or a number).
    params : dict
        ``{name: value}``; names missing from ``constraints`` are not checked, except the
        switches of :data:`BOOL_PARAMS` (``check_input``, ``warn``), which must be bools.

    Raises
    ------
    ValueError
        ``The 'C' parameter of SumKernelSVC must be a float in the range (0, inf). Got -1 instead.``
    """
    for name, value in params.items():
        if name not in constraints:
            if name in BOOL_PARAMS:
                validate_params(owner, {name: [bool]}, {name: value})
            continue
        allowed = constraints[name]
        if any(_satisfies(value, c) for c in allowed):
            continue
        raise ValueError(
            f"The {name!r} parameter of {owner} must be {_describe(allowed)}. "
            f"Got {value!r} instead.")


def check_dense(value, name):
    """Reject scipy.sparse input with one sentence naming the argument.

    Every solver works on dense Gram matrices and feature arrays, so sparse input is
    rejected (never densified behind the user's back), with the same message as the
    estimators' :func:`sklearn.utils.validation.validate_data`.

    Parameters
    ----------
    value : object
        The argument; a list or tuple is checked item by item (a list of kernels).
    name : str
        Its name in the message, e.g. ``"K"``.

    Returns
    -------
    value : object
        ``value`` unchanged.

    Raises
    ------
    TypeError
        ``Sparse data was passed for K, but dense data is required. Use '.toarray()' ...``
    """
    from scipy.sparse import issparse

    items = value if isinstance(value, (list, tuple)) else [value]
    for i, item in enumerate(items):
        if issparse(item):
            where = name if item is value else f"{name} (item {i} of {len(items)})"
            raise TypeError(f"Sparse data was passed for {where}, but dense data is required. "
                            f"Use '.toarray()' to convert to a dense numpy array.")
    return value


def as_float_array(value, name, owner="this function"):
    """``value`` as a float ndarray, with a message naming it when it does not hold numbers.

    Parameters
    ----------
    value : array-like
    name : str
        Its name in the message, e.g. ``"X"``.
    owner : str, default="this function"
        Used in the message.

    Returns
    -------
    array : ndarray of dtype float64

    Raises
    ------
    TypeError
        For scipy.sparse input (see :func:`check_dense`).
    ValueError
        If the values are not numbers (e.g. strings).
    """
    array = np.asarray(check_dense(value, name))
    if array.dtype.kind in "biuf":
        return array.astype(np.float64, copy=False)
    if array.dtype.kind == "O":  # e.g. a list of numbers and None
        try:
            return array.astype(np.float64)
        except (TypeError, ValueError):
            pass
    raise ValueError(f"{owner} needs numeric {name}; got an array of dtype {array.dtype} "
                     f"(e.g. {array.ravel()[:1].tolist()}).")


def _all_finite(array):
    """Whether a float or complex array holds no NaN or infinity.

    For real arrays one pass without a temporary first: NaN and infinities propagate into the
    sum, so a finite sum proves every entry finite; only a non-finite sum (which may also be
    an overflow of large finite entries) falls back to the entrywise test.
    """
    if array.size == 0:
        return True
    if array.dtype.kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.sum(array)):
                return True
    return bool(np.all(np.isfinite(array)))


def check_finite(array, name):
    """Raise ``ValueError`` if ``array`` contains NaN or infinity, naming it.

    Parameters
    ----------
    array : array-like
    name : str
        Its name in the message, e.g. ``"K"``.

    Returns
    -------
    array : ndarray
        ``np.asarray(array)``.
    """
    array = np.asarray(check_dense(array, name))
    if array.dtype.kind in "fc" and not _all_finite(array):
        n_bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
        raise ValueError(f"{name} contains NaN or infinity ({n_bad} entries); "
                         f"remove or impute them first.")
    return array


#: above this size the smallest eigenvalue is found by Lanczos iteration instead of a full
#: eigendecomposition (only needed for the message of a kernel that failed the check)
_DENSE_EIG_MAX = 3000


def smallest_eigenvalue(K):
    """Smallest eigenvalue of the symmetric matrix ``K`` (Lanczos for large ``K``)."""
    n = K.shape[0]
    if n <= _DENSE_EIG_MAX:
        return float(np.linalg.eigvalsh(K)[0])
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    try:
        v0 = np.ones(n) / np.sqrt(n)  # deterministic start
        return float(eigsh(K, k=1, which="SA", tol=1e-6, v0=v0, maxiter=20 * n,
                           return_eigenvectors=False)[0])
    except ArpackNoConvergence:  # pragma: no cover - fall back to the dense solver
        return float(np.linalg.eigvalsh(K)[0])


def check_psd(K, *, index=None, n_kernels=None, description=None, tol=PSD_TOL):
    """Raise ``ValueError`` if the symmetric matrix ``K`` has an eigenvalue below ``-tol * trace``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    index, n_kernels : int, optional
        Used only in the message ("Kernel 3 of 12").
    description : str, optional
        Kernel description for the message.
    tol : float, default=1e-8
        Allowed relative negative eigenvalue.
    """
    from scipy.linalg import LinAlgError, cholesky

    K = np.asarray(K, dtype=float)
    if K.shape[0] == 0:
        return
    scale = max(float(np.trace(K)), np.finfo(float).tiny)
    # K + tol*trace*I has a Cholesky factor iff every eigenvalue of K is above -tol*trace:
    # one O(n^3/3) factorisation, far cheaper than an eigensolver; eigenvalues only on failure
    shifted = K + (tol * scale) * np.eye(K.shape[0])
    try:
        cholesky(shifted, lower=True, overwrite_a=True, check_finite=False)
        return
    except LinAlgError:
        smallest = smallest_eigenvalue(K)
    if smallest < -tol * scale:
        where = "Kernel" if index is None else f"Kernel {index} of {n_kernels}"
        if description:
            where += f" ({description})"
        raise ValueError(
            f"{where} is not positive semidefinite: smallest eigenvalue {smallest:.2e} "
            f"(allowed: -{tol:g} * trace = {-tol * scale:.2e}). Indefinite kernels (e.g. sigmoid) "
            f"make MKL problems non-convex; change their parameters or drop them.")


#: the sampled checks of :func:`check_kernel_stack` (``thorough=False``) look at the principal
#: block of ``max(16, min(CHECK_SAMPLE, n // 16))`` evenly spaced points of every kernel (its
#: rows are about 1/16 of the stack at most), and at all of it when n <= CHECK_SAMPLE
CHECK_SAMPLE = 64


def check_kernel_stack(K, y=None, *, check_psd_=True, psd_tol=PSD_TOL, square=True,
                       symmetric_tol=1e-8, descriptions=None, dtype=(np.float64, np.float32),
                       thorough=True):
    """Validate a stack of Gram matrices and return it as an ndarray.

    The checks, in one place: shape, dtype, ``y``'s length, finiteness, symmetry (relative to
    each kernel's own largest entry) and positive semidefiniteness (a shifted Cholesky
    factorisation per kernel). ``thorough=False`` (what the solve functions of the SVM-based
    solvers run) makes the last three cost :math:`O(Ms^3)` instead of :math:`O(Mn^3)`: the
    diagonals must be finite and the principal block of up to :data:`CHECK_SAMPLE` evenly
    spaced points of each kernel must be finite, symmetric and PSD (a principal block of a PSD matrix
    is PSD, so a failure is always real; for n <= :data:`CHECK_SAMPLE` the block is the whole
    kernel). A non-finite entry outside the block that a solver reads makes its solution
    non-finite; the solvers then run :func:`check_finite` on the whole stack, so the error
    still names ``K`` (see :class:`mklcore._result.Monitor`).

    Parameters
    ----------
    K : array-like of shape (n_kernels, n_samples, n_samples) or list of such matrices
        A single (n, n) matrix is accepted and promoted to a stack of one.
    y : array-like of shape (n_samples,), optional
        If given, its length must match the kernels.
    check_psd_ : bool, default=True
        Check positive semidefiniteness (one shifted Cholesky factorisation per kernel).
    psd_tol : float, default=1e-8
    square : bool, default=True
        Require square, symmetric kernels (training stacks). Set False for test stacks.
    symmetric_tol : float or None, default=1e-8
        Allowed ``max|K - K^T|`` relative to ``max|K|``; None skips the symmetry test (for
        stacks symmetric by construction, e.g. those of :class:`mklcore.kernels.KernelBank`).
    descriptions : list of str, optional
        Kernel descriptions used in messages.
    dtype : tuple of dtypes, default=(float64, float32)
        Dtypes kept as they are; others are converted to float64.
    thorough : bool, default=True
        Check every entry (finiteness, symmetry) and every eigenvalue; False: the sampled
        checks above.

    Returns
    -------
    K : ndarray of shape (n_kernels, n_rows, n_cols)
    """
    check_dense(K, "K")
    if isinstance(K, (list, tuple)):
        if len(K) == 0:
            raise ValueError("The kernel list is empty: give at least one kernel.")
        K = np.stack([np.asarray(k) for k in K])
    K = np.asarray(K)
    if K.dtype not in dtype:
        K = as_float_array(K, "K", "a kernel method")
    if K.ndim == 2:
        K = K[None]
    if K.ndim != 3:
        raise ValueError(f"K must have shape (n_kernels, n_samples, n_samples); got {K.shape}.")
    if K.shape[0] == 0:
        raise ValueError("The kernel list is empty: give at least one kernel.")
    if not thorough and square and K.shape[1] == K.shape[2] and K.shape[1] > CHECK_SAMPLE:
        _check_sampled(K, y, check_psd_, psd_tol, symmetric_tol, descriptions)
        return K
    check_finite(K, "K")
    if square:
        if K.shape[1] != K.shape[2]:
            raise ValueError(
                f"Training kernels must be square; got shape {K.shape} "
                f"(n_kernels, n_rows, n_cols).")
        if symmetric_tol is not None:
            _check_symmetric(K, symmetric_tol)
        if check_psd_:
            for m in range(K.shape[0]):
                desc = descriptions[m] if descriptions is not None else None
                check_psd(K[m], index=m, n_kernels=K.shape[0], description=desc, tol=psd_tol)
    if y is not None:
        check_labels_present(y)
        n_y = np.shape(y)[0]
        if K.shape[-1] != n_y or (square and K.shape[1] != n_y):
            raise ValueError(
                f"K and y do not match: the kernels are {K.shape[1]} x {K.shape[2]} "
                f"but y has {n_y} entries.")
    return K


def _check_sampled(K, y, check_psd_, psd_tol, symmetric_tol, descriptions):
    """The sampled checks of :func:`check_kernel_stack` (``thorough=False``), batched over the
    kernels (one LAPACK call per kernel only when a block fails)."""
    n = K.shape[1]
    size = max(16, min(CHECK_SAMPLE, n // 16))
    idx = np.unique(np.linspace(0, n - 1, size).astype(np.intp))
    block = np.ascontiguousarray(K[:, idx[:, None], idx[None, :]], dtype=np.float64)
    diag = K[:, np.arange(n), np.arange(n)]
    if not (_all_finite(diag) and _all_finite(block)):
        check_finite(K, "K")  # names the entries
    if symmetric_tol is not None:
        scale = np.maximum(np.abs(block).max(axis=(1, 2)), np.finfo(float).tiny)
        asym = np.abs(block - block.transpose(0, 2, 1)).max(axis=(1, 2))
        if np.any(asym > symmetric_tol * scale):
            _check_symmetric(block, symmetric_tol)  # names the kernel
    if check_psd_:
        traces = np.maximum(np.trace(block, axis1=1, axis2=2), np.finfo(float).tiny)
        shifted = block + (psd_tol * traces)[:, None, None] * np.eye(idx.size)
        try:
            np.linalg.cholesky(shifted)
        except np.linalg.LinAlgError:
            for m in range(K.shape[0]):
                desc = descriptions[m] if descriptions is not None else None
                check_psd(block[m], index=m, n_kernels=K.shape[0], description=desc,
                          tol=psd_tol)
    if y is not None:
        check_labels_present(y)
        if np.shape(y)[0] != n:
            raise ValueError(f"K and y do not match: the kernels are {n} x {n} but y has "
                             f"{np.shape(y)[0]} entries.")


def _check_symmetric(K, symmetric_tol):
    """Raise unless ``max|K_m - K_m^T| <= symmetric_tol * max|K_m|`` for every kernel m.

    Kernel by kernel (each relative to its own scale, so that a small asymmetric kernel beside
    a large one is found), with temporaries the size of one matrix.
    """
    for m in range(K.shape[0]):
        Km = K[m]
        scale = max(float(max(np.max(Km), -np.min(Km))), np.finfo(float).tiny)
        asym = float(np.max(np.abs(Km - Km.T)))
        if asym > symmetric_tol * scale:
            raise ValueError(
                f"Kernel {m} of {K.shape[0]} is not symmetric: max |K - K^T| = {asym:.2e}. "
                f"Training kernels must be symmetric; pass (K + K^T)/2 if this is round-off.")


def check_labels_present(y):
    """Refuse an object array of labels holding None or NaN (``np.unique`` fails on them).

    Parameters
    ----------
    y : array-like
        Labels (any dtype; only object arrays can hold None).

    Raises
    ------
    ValueError
        ``y must hold labels; got None or NaN at 12 entries (first: index 1).``
    """
    y = np.asarray(y)
    if y.dtype.kind != "O":
        return
    missing = [i for i, v in enumerate(y.ravel())
               if v is None or (isinstance(v, numbers.Real) and not np.isfinite(v))]
    if missing:
        raise ValueError(f"y must hold labels; got None or NaN at {len(missing)} entries "
                         f"(first: index {missing[0]}).")


def check_class_labels(y, owner="this method"):
    """The classes of labels ``y`` (at least two) and each label's index among them.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    owner : str
        Used in the message.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The sorted original labels.
    y_index : ndarray of shape (n_samples,), int
        ``classes[y_index] == y``.
    """
    y = np.asarray(check_dense(y, "y"))
    if y.ndim != 1:
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        else:
            raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    if y.dtype.kind in "fc":
        check_finite(y, "y")
    check_labels_present(y)
    try:
        classes, index = np.unique(y, return_inverse=True)
    except TypeError:  # e.g. numbers and strings mixed in an object array
        kinds = sorted({type(v).__name__ for v in y})
        raise ValueError(f"y must hold labels of one comparable type; got a mix of "
                         f"{', '.join(kinds)}.") from None
    if classes.size < 2:
        raise ValueError(
            f"y has only one class ({classes[0] if classes.size else 'none'}); "
            f"{owner} needs two classes.")
    return classes, index.reshape(-1)


def check_binary_labels(y, owner="this method"):
    """Map binary labels to {-1, +1}.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    owner : str
        Used in the message.

    Returns
    -------
    y_pm : ndarray of shape (n_samples,) with values in {-1.0, +1.0}
        ``classes[1]`` maps to +1.
    classes : ndarray of shape (2,)
        The sorted original labels.
    """
    classes, index = check_class_labels(y, owner)
    if classes.size > 2:
        raise ValueError(
            f"y has {classes.size} classes; {owner} is binary-only. Only binary classification "
            f"is supported: use sklearn.multiclass.OneVsRestClassifier for more classes.")
    y_pm = np.where(index == 1, 1.0, -1.0)
    return y_pm, classes


def check_solver_inputs(K, y, owner, check_input=True):
    """The training stack and the {-1, +1} labels of a ``*_solve`` function.

    Parameters
    ----------
    K : array-like of shape (n_kernels, n_samples, n_samples)
    y : array-like of shape (n_samples,)
        Two classes (any labels; the larger one maps to +1).
    owner : str
        Used in the messages.
    check_input : bool, default=True
        Validate ``K`` with :func:`check_kernel_stack` (its sampled checks,
        ``thorough=False``); ``False`` takes it as it is.

    Returns
    -------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
    y_pm : ndarray of shape (n_samples,) with values in {-1.0, +1.0}
    """
    validate_params(owner, {"check_input": [bool]}, {"check_input": check_input})
    K = check_kernel_stack(K, y, thorough=False) if check_input else np.asarray(K)
    return K, check_binary_labels(y, owner)[0]


def check_regression_inputs(K, y, owner, check_input=True):
    """The training stack and the real targets of a regression ``*_solve`` function.

    Parameters
    ----------
    K : array-like of shape (n_kernels, n_samples, n_samples)
    y : array-like of shape (n_samples,)
        Real, finite targets.
    owner : str
        Used in the messages.
    check_input : bool, default=True
        Validate ``K`` with :func:`check_kernel_stack` (``thorough=False``).

    Returns
    -------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
    y : ndarray of shape (n_samples,), float64
    """
    validate_params(owner, {"check_input": [bool]}, {"check_input": check_input})
    y = as_float_array(y, "y", owner)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    check_finite(y, "y")
    K = check_kernel_stack(K, y, thorough=False) if check_input else np.asarray(K)
    return K, y


def check_classification_inputs(K, y, owner, check_input=True):
    """The training stack and the labels of a classifier's ``*_solve`` function that handles
    several classes (one-vs-rest problems sharing the kernel weights).

    Parameters
    ----------
    K : array-like of shape (n_kernels, n_samples, n_samples)
    y : array-like of shape (n_samples,)
        Two or more classes (any labels).
    owner : str
        Used in the messages.
    check_input : bool, default=True
        Validate ``K`` with :func:`check_kernel_stack` (``thorough=False``).

    Returns
    -------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
    y_pm : ndarray of shape (n_samples,) or None
        For two classes, the labels in {-1, +1} (the larger label is +1); else None.
    Y : ndarray of shape (n_classes, n_samples) or None
        For more classes, the one-vs-rest labellings in {-1, +1} (row k: ``classes[k]``
        against the rest, classes sorted); else None.
    """
    validate_params(owner, {"check_input": [bool]}, {"check_input": check_input})
    K = check_kernel_stack(K, y, thorough=False) if check_input else np.asarray(K)
    classes, index = check_class_labels(y, owner)
    if classes.size == 2:
        return K, np.where(index == 1, 1.0, -1.0), None
    Y = np.where(index[None, :] == np.arange(classes.size)[:, None], 1.0, -1.0)
    return K, None, Y
