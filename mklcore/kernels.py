r"""Kernel functions, kernel banks, Gram stacks, normalisation, centring and alignment.

* **Kernels** (:class:`Kernel`) from the factories :func:`linear`, :func:`polynomial`,
  :func:`gaussian`, :func:`spectrum`, :func:`weighted_degree` or the tuple / callable forms
  of :func:`as_kernel`; ``k(X, Y)`` is the Gram matrix of shape ``(n_X, n_Y)``
  (scikit-learn's convention, ``Y=None`` means ``Y = X``).
* **Banks** (:func:`kernel_bank`): the ``"linear"``, ``"poly"``, ``"rbf"`` families and the
  named banks of the reproduced papers (``"simplemkl"``, ``"rls2_default"``, ``"xu2010"``,
  ``"kloft_median"``, ``"lmkl"``).
* **Stacks** (:func:`kernel_stack`): a bank evaluated into one array of shape
  ``(n_kernels, n_X, n_Y)``, rows ``X`` and columns ``Y``: ``kernel_stack(kernels, X_train)``
  for training and ``kernel_stack(kernels, X_test, X_train)`` for testing, the layout of every
  ``*_solve`` function and of :func:`mklcore.svm.svm_solve`.
* **Tools**: :func:`normalize_trace`, :func:`normalize_cosine`, :func:`center`,
  :func:`alignment`, :func:`is_psd`, and :class:`KernelBank`, the scikit-learn transformer
  from raw ``X`` to Gram stacks (so that ``Pipeline`` and ``GridSearchCV`` work on features).

Data-dependent parameters (``gaussian(gamma="scale")``, ``sigma="median"``, ``sigma="nn"``)
and per-feature templates (``columns="each"``) are resolved on training data by
:meth:`Kernel.fit` and :func:`fit_kernels`; :func:`kernel_stack` resolves them on the training
side, ``Y`` when given and ``X`` otherwise. :func:`kernel_bank` returns templates when
``n_features`` is not given (expanded at fit time, the preferred use).
"""

import copy
import math
import numbers
import os
import re

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from ._validation import PSD_TOL, Interval, Options, check_finite, check_psd, validate_params

__all__ = [
    "Kernel", "linear", "polynomial", "gaussian", "spectrum", "weighted_degree", "as_kernel",
    "fit_kernels", "kernel_bank", "kernel_stack", "normalize_trace", "normalize_cosine",
    "center", "alignment", "is_psd", "available_memory", "KernelBank", "KERNEL_BANKS",
    "CallableKernel", "MEMORY_CHECK_MIN_BYTES", "resolve_columns", "kernel_names",
]

# ----------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------

#: rows of a temporary block in the blocked squared-distance update (about 16 MB)
_BLOCK_ELEMENTS = 1 << 21

# Shared docstring texts, written at indentation 4 and substituted for ``{name}`` by ``_doc``.
_DOC = {
    "columns": """columns : None, int, sequence of int or str, or "each", default=None
        Features the kernel reads; None means all; ``"each"`` makes a per-feature template;
        names (a sequence of str) are DataFrame column names, resolved when the kernel is
        used on a DataFrame (or by an estimator fitted on one; see :func:`resolve_columns`).""",
    "kernel": """kernel : Kernel
        The kernel object.""",
    "positions": """positions : slice or (start, stop), default=None
        Window of the sequences to use (0-based, ``stop`` exclusive, as Python slicing);
        None uses whole sequences.""",
    "X_fit": """X : array-like of shape (n_samples, n_features) or sequence of strings
        Training data.
    y : None
        Ignored.""",
    "K": """K : ndarray of shape (n_kernels, n_rows, n_cols) or (n_rows, n_cols)""",
    "copy": """copy : bool, default=True
        If False and ``K`` is a float array, work in place.""",
}


def _doc(obj):
    """Fill the ``{name}`` lines of a docstring from ``_DOC``, at the placeholder's indentation."""
    def fill(m):
        indent, text = m.group(1), _DOC.get(m.group(2))
        return m.group(0) if text is None else indent + text.replace("\n    ", "\n" + indent)

    if obj.__doc__:  # None under python -OO
        obj.__doc__ = re.sub(r"^( *)\{(\w+)\}$", fill, obj.__doc__, flags=re.M)
    return obj


def _fmt_value(v):
    """Short readable form of a parameter value for ``repr``."""
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(f"{float(v):.6g}"))
    return repr(v)


def _fmt_bytes(n):
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.2f} {unit} ({int(n)} bytes)"
    return f"{int(n)} bytes"


def _check_columns(columns, owner):
    """Normalise ``columns`` to None, ``"each"`` or a tuple of non-negative ints."""
    if columns is None:
        return None
    if isinstance(columns, str):
        if columns == "each":
            return "each"
        raise ValueError(f"The 'columns' parameter of {owner} must be None, 'each', an int or a "
                         f"sequence of ints. Got {columns!r} instead.")
    if isinstance(columns, numbers.Integral) and not isinstance(columns, bool):
        columns = [columns]
    if (isinstance(columns, (list, tuple)) or hasattr(columns, "__array__")) and len(columns) \
            and all(isinstance(c, str) for c in columns):
        return tuple(columns)  # DataFrame column names, resolved by resolve_columns
    arr = np.asarray(columns)
    if arr.dtype == bool:
        arr = np.flatnonzero(arr)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu" or np.any(arr < 0):
        raise ValueError(f"The 'columns' parameter of {owner} must be None, 'each', an int or a "
                         f"non-empty sequence of non-negative ints. Got {columns!r} instead.")
    return tuple(int(c) for c in arr)


def _check_positions(positions, owner):
    """Normalise a sequence window to None or ``(start, stop)`` (0-based, stop exclusive)."""
    if positions is None:
        return None
    if isinstance(positions, slice):
        if positions.step not in (None, 1):
            raise ValueError(f"The 'positions' slice of {owner} must have step 1; got {positions}.")
        start, stop = positions.start, positions.stop
    elif isinstance(positions, (tuple, list)) and len(positions) == 2:
        start, stop = positions
    else:
        raise ValueError(f"The 'positions' parameter of {owner} must be None, a slice or a "
                         f"(start, stop) pair. Got {positions!r} instead.")
    start = 0 if start is None else start
    for v in (start, stop):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0):
            raise ValueError(f"The 'positions' window of {owner} must use non-negative ints; got "
                             f"{positions!r}.")
    if stop is not None and stop <= start:
        raise ValueError(f"The 'positions' window of {owner} is empty: {positions!r}.")
    return (int(start), None if stop is None else int(stop))


#: stacks (plus workspace) up to this size are built without checking the free memory (an
#: explicit ``max_bytes`` is always checked): on a busy machine ``MemAvailable`` can read
#: near 0 for a moment while the page cache is reclaimed, and refusing a few megabytes on that
#: reading made parallel experiment runs fail at random
MEMORY_CHECK_MIN_BYTES = 256 * 2**20


def available_memory():
    """Bytes of memory a new allocation can use, or None if unknown.

    Returns
    -------
    n_bytes : int or None
        The smallest of: ``MemAvailable`` of ``/proc/meminfo`` (free memory plus reclaimable
        caches; falls back to ``os.sysconf('SC_AVPHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')``
        where ``/proc`` is missing) and, inside a cgroup-v2 container with a memory limit,
        the limit minus the current usage. ``None`` when none of these can be read.
    """
    candidates = []
    try:
        with open("/proc/meminfo") as fh:
            candidates += [int(line.split()[1]) * 1024 for line in fh
                           if line.startswith("MemAvailable:")][:1]
    except (OSError, ValueError, IndexError):
        pass
    if not candidates:
        try:
            candidates.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                candidates.append(max(int(limit) - int(fh.read().strip()), 0))
    except (OSError, ValueError):
        pass
    return min(candidates) if candidates else None


def _check_dtype(dtype, owner):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"The 'dtype' parameter of {owner} must be one of {{'float64', "
                         f"'float32'}}. Got {dtype!r} instead.")
    return dt


# ----------------------------------------------------------------------------------------
# data preparation (cached per call)
# ----------------------------------------------------------------------------------------

# A, C, G, T (either case) -> 0..3; every other byte -> 4 ("matches nothing")
_DNA_CODE = np.full(256, 4, dtype=np.uint8)
for _i, _c in enumerate("ACGT"):
    _DNA_CODE[ord(_c)] = _i
    _DNA_CODE[ord(_c.lower())] = _i
_INVALID = 4


def _encode_dna(X, name):
    """Encode DNA sequences as an ``(n, L)`` uint8 code array (4 = invalid / padding).

    Returns ``(codes, lengths)``; shorter sequences are padded with the invalid code.
    """
    if isinstance(X, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of DNA strings or an (n, L) array of single "
                         f"characters; got a single string.")
    arr = np.asarray(X)
    if arr.ndim == 2:
        if arr.dtype.kind == "O":
            if not all(isinstance(c, (str, bytes)) and len(c) <= 1 for c in arr.ravel()):
                raise ValueError(f"{name}: a 2-D sequence array must hold single characters.")
            arr = arr.astype("U1")
        if arr.dtype.kind == "U":
            if arr.dtype.itemsize != 4 and np.any(np.char.str_len(arr) > 1):
                raise ValueError(f"{name}: a 2-D sequence array must hold single characters.")
            arr = np.ascontiguousarray(arr.astype("U1"))
            raw = arr.view(np.uint32).reshape(arr.shape)
        elif arr.dtype.kind == "S":
            arr = np.ascontiguousarray(arr.astype("S1"))
            raw = arr.view(np.uint8).reshape(arr.shape)
        else:
            raise ValueError(f"{name} must hold DNA characters (A, C, G, T); got an array of "
                             f"dtype {arr.dtype}.")
        lengths = np.full(arr.shape[0], arr.shape[1], dtype=np.int64)
        lengths -= np.sum(raw == 0, axis=1)  # '' entries of a char array count as padding
    elif arr.ndim == 1:
        if arr.dtype.kind == "O":
            if not all(isinstance(s, (str, bytes)) for s in arr):
                raise ValueError(f"{name} must be a sequence of strings.")
            arr = np.asarray([s.decode("latin-1") if isinstance(s, bytes) else s for s in arr])
        if arr.dtype.kind not in "US":
            raise ValueError(f"{name} must be a sequence of DNA strings; got dtype {arr.dtype}.")
        if arr.size == 0:
            raise ValueError(f"{name} holds no sequences.")
        lengths = np.char.str_len(arr).astype(np.int64)
        width = max(int(arr.dtype.itemsize // (4 if arr.dtype.kind == "U" else 1)), 1)
        arr = np.ascontiguousarray(arr)
        view = np.uint32 if arr.dtype.kind == "U" else np.uint8
        raw = arr.view(view).reshape(arr.shape[0], width)
    else:
        raise ValueError(f"{name} must be a sequence of DNA strings or an (n, L) array of single "
                         f"characters; got an array with {arr.ndim} dimensions.")
    codes = _DNA_CODE[np.minimum(raw, 255)]
    return codes, lengths


class _Data:
    """One data argument of a kernel computation, converted lazily and cached."""

    def __init__(self, X, name):
        self.raw, self.name = X, name
        self._numeric = None
        self._dna = None

    def numeric(self):
        if self._numeric is None:
            X = check_array(self.raw, dtype=np.float64, ensure_all_finite=False,
                            input_name=self.name)
            check_finite(X, self.name)
            self._numeric = np.ascontiguousarray(X)
        return self._numeric

    def cols(self, columns):
        X = self.numeric()
        if columns is None:
            return X
        if max(columns) >= X.shape[1]:
            raise ValueError(f"Kernel columns {list(columns)} are out of range for {self.name} "
                             f"with {X.shape[1]} features.")
        return np.ascontiguousarray(X[:, list(columns)])

    def raw_cols(self, columns):
        if columns is None:
            return self.raw
        X = np.asarray(self.raw)
        if X.ndim != 2 or max(columns) >= X.shape[1]:
            raise ValueError(f"Kernel columns {list(columns)} cannot be taken from {self.name} of "
                             f"shape {X.shape}.")
        return X[:, list(columns)]

    def dna(self):
        if self._dna is None:
            self._dna = _encode_dna(self.raw, self.name)
        return self._dna

    def n_samples(self, family):
        if family in ("dot", "dist"):
            return self.numeric().shape[0]
        if family == "string":
            return self.dna()[0].shape[0]
        if hasattr(self.raw, "shape"):
            return int(self.raw.shape[0])
        return len(self.raw)

    def n_features(self):
        return self.numeric().shape[1]


# ----------------------------------------------------------------------------------------
# Kernel objects
# ----------------------------------------------------------------------------------------


@_doc
class Kernel:
    r"""Base class of mklcore kernels: ``k(X, Y)[i, j] = k(x_i, y_j)``, shape ``(n_X, n_Y)``.

    Kernels are immutable (:meth:`fit` returns a new object); make them with the factories
    (:func:`linear`, :func:`gaussian`, ...) rather than the classes.

    Parameters
    ----------
    {columns}
    """

    kind = "kernel"
    family = "other"
    #: a name given by a bank (e.g. ``"clinical: gaussian(sigma=1.0)"`` for a feature group of
    #: :func:`kernel_bank`); None: the kernel is named by its ``repr``
    name = None
    #: bool: True when every Gram matrix of the kernel is symmetric PSD by construction (an
    #: inner product of explicit feature maps: linear, polynomial with ``coef0 >= 0``,
    #: Gaussian, string kernels, and their normalisations); the training stacks skip the
    #: eigenvalue check for such kernels (see :func:`kernel_stack`'s ``check_psd``)
    psd_by_construction = True

    def __init__(self, columns=None):
        self.columns = _check_columns(columns, self.kind)

    # -- description -------------------------------------------------------------------
    def _params(self):
        return {}

    def _fitted_params(self):
        return {}

    def __repr__(self):
        parts = [f"{k}={_fmt_value(v)}" for k, v in self._params().items()]
        if self.columns is not None:
            cols = "'each'" if self.columns == "each" else str(list(self.columns))
            parts.append(f"columns={cols}")
        parts += [f"{k}={_fmt_value(v)}" for k, v in self._fitted_params().items()]
        return f"{self.kind}({', '.join(parts)})"

    def __eq__(self, other):
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))

    # -- fitting -----------------------------------------------------------------------
    @property
    def is_fitted(self):
        """bool: True when the kernel needs no training data (all parameters resolved)."""
        return self.columns != "each" and not self._unresolved()

    def _unresolved(self):
        return False

    def _with_columns(self, columns):
        new = copy.copy(self)
        new.columns = columns
        return new

    def expand(self, n_features):
        """Expand a per-feature template (``columns="each"``) into one kernel per feature.

        Parameters
        ----------
        n_features : int
            Number of input features.

        Returns
        -------
        kernels : list of Kernel
            ``self`` with ``columns=[0]``, ..., ``[n_features-1]`` for a template, else ``[self]``.
        """
        if self.columns != "each":
            return [self]
        return [self._with_columns((j,)) for j in range(int(n_features))]

    def fit(self, X):
        """Resolve the data-dependent parameters on training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.

        Returns
        -------
        kernel : Kernel
            A fitted copy.
        """
        if self.columns == "each":
            raise ValueError(f"{self!r} is a per-feature template; fitting it gives several "
                             f"kernels: use fit_kernels([kernel], X) or kernel.expand(n_features).")
        fitted = fit_kernels([self], X)[0]
        return copy.copy(fitted) if fitted is self else fitted

    def _fit_stats(self, stats):
        return copy.copy(self)

    # -- evaluation --------------------------------------------------------------------
    def __call__(self, X, Y=None):
        """Gram matrix between ``X`` (rows) and ``Y`` (columns).

        Parameters
        ----------
        X : array-like of shape (n_X, n_features) or sequence of strings
            Row data.
        Y : array-like of shape (n_Y, n_features), default=None
            Column data; None means ``Y = X``. An unfitted kernel is fitted on this side.

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
            Gram matrix, float64.
        """
        return _stack([self], X, Y, np.float64, None, "auto", "kernel")[0][0]

    def diag(self, X):
        """Diagonal ``k(x_i, x_i)`` without forming the Gram matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of strings
            Data.

        Returns
        -------
        d : ndarray of shape (n_samples,)
            ``k(x_i, x_i)`` for every row of ``X``.
        """
        if self.columns == "each":
            raise ValueError(f"{self!r} is a per-feature template; expand it first.")
        data = X if isinstance(X, _Data) else _Data(X, "X")
        return np.asarray(self._diag(data), dtype=np.float64)

    def _diag(self, data):  # pragma: no cover - abstract
        raise NotImplementedError


class _DotKernel(Kernel):
    """Kernels of the inner product ``<x, y>``: subclasses define ``_from_gram(G, out)``
    (write k of the Gram matrix G into ``out``) and ``_from_sqnorm(sq)`` (k(x, x))."""

    family = "dot"

    def _diag(self, data):
        Xc = data.cols(self.columns)
        return self._from_sqnorm(np.einsum("ij,ij->i", Xc, Xc))


class LinearKernel(_DotKernel):
    r"""Linear kernel :math:`k(x, z) = \langle x, z\rangle`; see :func:`linear`."""

    kind = "linear"

    def _from_gram(self, G, out):
        if out is not G:
            np.copyto(out, G, casting="same_kind")

    def _from_sqnorm(self, sq):
        return sq


class PolynomialKernel(_DotKernel):
    r"""Polynomial kernel :math:`(s\langle x, z\rangle + c)^p`; see :func:`polynomial`."""

    kind = "polynomial"

    def __init__(self, degree=2, coef0=1.0, scale=1.0, columns=None):
        validate_params("polynomial", {
            "degree": [Interval("int", 1, None)],
            "coef0": [Interval("real", 0, None)],
            "scale": [Interval("real", 0, None, closed="neither")],
        }, {"degree": degree, "coef0": coef0, "scale": scale})
        super().__init__(columns)
        self.degree, self.coef0, self.scale = int(degree), float(coef0), float(scale)

    def _params(self):
        p = {"degree": self.degree, "coef0": self.coef0}
        if self.scale != 1.0:
            p["scale"] = self.scale
        return p

    def _from_gram(self, G, out):
        np.multiply(G, self.scale, out=out, casting="same_kind")
        out += self.coef0
        if self.degree > 4:
            np.power(out, self.degree, out=out)
        elif self.degree > 1:
            # small integer powers by repeated multiplication (several times faster than
            # np.power), blockwise so that the temporary stays small
            block = max(1, _BLOCK_ELEMENTS // max(out.shape[1], 1))
            for s in range(0, out.shape[0], block):
                base = out[s:s + block].copy()
                for _ in range(self.degree - 1):
                    out[s:s + block] *= base

    def _from_sqnorm(self, sq):
        return (self.scale * sq + self.coef0) ** self.degree


class GaussianKernel(Kernel):
    r"""Gaussian kernel :math:`\exp(-\gamma\|x - z\|^2)`; see :func:`gaussian`."""

    kind = "gaussian"
    family = "dist"

    def __init__(self, sigma=None, gamma=None, scale=1.0, columns=None):
        validate_params("gaussian", {
            "sigma": [Interval("real", 0, None, closed="neither"), Options("median", "nn"), None],
            "gamma": [Interval("real", 0, None, closed="neither"), Options("scale", "auto"), None],
            "scale": [Interval("real", 0, None, closed="neither")],
        }, {"sigma": sigma, "gamma": gamma, "scale": scale})
        if sigma is not None and gamma is not None:
            raise ValueError(f"gaussian takes sigma or gamma (gamma = 1 / (2 sigma^2)), not both; "
                             f"got sigma={sigma!r} and gamma={gamma!r}.")
        if sigma is None and gamma is None:
            gamma = "scale"
        data_dependent = isinstance(sigma, str) or isinstance(gamma, str)
        if not data_dependent and scale != 1.0:
            raise ValueError(f"gaussian: 'scale' multiplies a data-dependent width (sigma='median' "
                             f"or 'nn', gamma='scale' or 'auto'); with a fixed sigma or gamma set "
                             f"the width directly. Got scale={scale!r}.")
        super().__init__(columns)
        self.sigma, self.gamma, self.scale = sigma, gamma, float(scale)
        if sigma is not None and not isinstance(sigma, str):
            self.sigma = float(sigma)
            self.gamma_ = 1.0 / (2.0 * self.sigma ** 2)
        elif gamma is not None and not isinstance(gamma, str):
            self.gamma = float(gamma)
            self.gamma_ = self.gamma
        else:
            self.gamma_ = None

    @property
    def sigma_(self):
        """float: the resolved width :math:`\\sigma = 1/\\sqrt{2\\gamma}` (None before fit)."""
        if self.gamma_ is None:
            return None
        return math.inf if self.gamma_ == 0 else 1.0 / math.sqrt(2.0 * self.gamma_)

    def _params(self):
        p = {"sigma": self.sigma} if self.sigma is not None else {"gamma": self.gamma}
        if self.scale != 1.0:
            p["scale"] = self.scale
        return p

    def _fitted_params(self):
        if (isinstance(self.sigma, str) or isinstance(self.gamma, str)) and self.gamma_ is not None:
            return {"gamma_": self.gamma_}
        return {}

    def _unresolved(self):
        return self.gamma_ is None

    def _fit_stats(self, stats):
        new = copy.copy(self)
        if self.gamma == "scale":
            var = stats.variance()
            base = 1.0 / (stats.n_features * var) if var != 0 else 1.0  # as sklearn's SVC
            new.gamma_ = base / self.scale
        elif self.gamma == "auto":
            new.gamma_ = 1.0 / (stats.n_features * self.scale)
        else:
            ref = stats.median_sqdist() if self.sigma == "median" else stats.mean_nn_dist() ** 2
            new.gamma_ = 0.0 if ref == 0 else 1.0 / (self.scale * ref)
        return new

    def _from_sqdist(self, D, out):
        np.multiply(D, -self.gamma_, out=out, casting="same_kind")
        np.exp(out, out=out)

    def _diag(self, data):
        return np.ones(data.n_samples("dist"))


class _StringKernel(Kernel):
    """Kernels on DNA sequences through sparse k-mer feature maps, given by ``_maps``."""

    family = "string"

    def __init__(self, positions=None):
        super().__init__(None)
        self.positions = _check_positions(positions, self.kind)

    def _window(self, data):
        codes, lengths = data.dna()
        if self.positions is None:
            return codes, lengths
        start, stop = self.positions
        stop_eff = codes.shape[1] if stop is None else stop
        window = codes[:, start:stop_eff]
        lengths = np.clip(lengths - start, 0, stop_eff - start)
        if window.shape[1] < stop_eff - start:  # window reaches past every sequence: pad
            pad = np.full((codes.shape[0], stop_eff - start - window.shape[1]), _INVALID, np.uint8)
            window = np.concatenate([window, pad], axis=1)
        return np.ascontiguousarray(window), lengths

    def _gram(self, dX, dY, symmetric):
        cX = self._window(dX)
        if symmetric:
            (left, right), = self._maps([cX])
            K = (left @ right.T).toarray()
            K += K.T  # exact symmetry; the maps are built so that K = (L R^T + R L^T) / 2
            K *= 0.5
            return K
        cY = self._window(dY)
        (left, _), (_, right) = self._maps([cX, cY])
        return (left @ right.T).toarray()

    def _diag(self, data):
        (left, right), = self._maps([self._window(data)])
        return np.asarray(left.multiply(right).sum(axis=1)).ravel()

    def _params(self):
        return {"positions": self.positions} if self.positions is not None else {}


def _kmers(codes, k):
    """k-mer codes (base-4, first letter most significant) and validity, shape (n, L-k+1)."""
    n, L = codes.shape
    P = L - k + 1
    if P <= 0:
        return np.zeros((n, 0), np.int64), np.zeros((n, 0), bool)
    kc = np.zeros((n, P), np.int64)
    valid = np.ones((n, P), bool)
    for j in range(k):
        w = codes[:, j:j + P]
        kc *= 4
        kc += np.minimum(w, 3)
        valid &= w < _INVALID
    return kc, valid


def _compact(keys):
    """Map column keys of several matrices to one shared compact range ``0..p-1``.

    Keys are int64 arrays, or (n, 2) arrays of (position, k-mer) pairs where one int64 key
    would overflow.
    """
    if keys and keys[0].ndim == 2:
        sizes = np.cumsum([0] + [k.shape[0] for k in keys])
        _, inverse = np.unique(np.concatenate(keys), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        parts = [inverse[a:b] for a, b in zip(sizes[:-1], sizes[1:])]
        return parts, int(inverse.max(initial=-1)) + 1
    allk = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    uniq = np.unique(allk)
    return [np.searchsorted(uniq, k) for k in keys], uniq.size


def _pair_keys(pos, kmer, k, L):
    """Column key of each (position, k-mer) pair: ``pos * 4^k + kmer``, or the pair itself."""
    if L * 4 ** k < 2 ** 62:
        return pos.astype(np.int64) * (4 ** k) + kmer
    return np.stack([pos.astype(np.int64), kmer], axis=1)


def _csr(parts, shape):
    """CSR matrix summing the ``(rows, cols, weights)`` triples of ``parts``."""
    if not parts:
        parts = [(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))]
    r, c, w = (np.concatenate(x) for x in zip(*parts))
    return sp.csr_matrix((w, (r, c)), shape=shape)


class SpectrumKernel(_StringKernel):
    r"""Spectrum kernel :math:`\langle\phi_k(x), \phi_k(z)\rangle`; see :func:`spectrum`."""

    kind = "spectrum"

    def __init__(self, k=3, positions=None):
        validate_params("spectrum", {"k": [Interval("int", 1, 31)]}, {"k": k})
        super().__init__(positions)
        self.k = int(k)

    def _params(self):
        return {"k": self.k, **super()._params()}

    def _maps(self, codes_list):
        entries = []
        for codes, _ in codes_list:
            kc, valid = _kmers(codes, self.k)
            entries.append((np.nonzero(valid)[0], kc[valid]))
        cols, p = _compact([c for _, c in entries])
        maps = []
        for (rows, _), c, (codes, _) in zip(entries, cols, codes_list):
            # duplicates (repeated k-mers) are summed: phi_u(x) = count of u in x
            phi = sp.csr_matrix((np.ones(rows.size), (rows, c)), shape=(codes.shape[0], p))
            maps.append((phi, phi))
        return maps


class WeightedDegreeKernel(_StringKernel):
    r"""Weighted-degree kernel (with shifts); see :func:`weighted_degree`."""

    kind = "weighted_degree"

    def __init__(self, d=3, shift=0, positions=None):
        validate_params("weighted_degree", {"d": [Interval("int", 1, 30)],
                                            "shift": [Interval("int", 0, None)]},
                        {"d": d, "shift": shift})
        super().__init__(positions)
        self.d, self.shift = int(d), int(shift)

    def _params(self):
        p = {"d": self.d}
        if self.shift:
            p["shift"] = self.shift
        return {**p, **super()._params()}

    def _beta(self, k):
        return 2.0 * (self.d - k + 1) / (self.d * (self.d + 1))

    def _maps(self, codes_list):
        L = {codes.shape[1] for codes, _ in codes_list}
        lens = np.concatenate([lengths for _, lengths in codes_list])
        if len(L) != 1 or np.any(lens != lens[0]) or lens[0] != next(iter(L)):
            raise ValueError(
                f"{self!r} needs sequences of one common length (after the positions window); "
                f"got lengths {int(lens.min())}..{int(lens.max())}.")
        L = next(iter(L))
        n_list = [codes.shape[0] for codes, _ in codes_list]
        # For every k: Phi (positional one-hot k-mers) and Psi = sum_s delta_s Phi_{+s}.
        # Left map  = [beta_k (Phi + Psi), beta_k Phi]_k, right map = [Phi, Psi]_k, so that
        # left(x) . right(z) = sum_k beta_k (Phi Phi^T + Psi Phi^T + Phi Psi^T) = WD with shifts.
        left_parts = [[] for _ in codes_list]
        right_parts = [[] for _ in codes_list]
        offset = 0
        for k in range(1, self.d + 1):
            P = L - k + 1
            if P <= 0:
                break
            beta = self._beta(k)
            per_data = []
            for codes, _ in codes_list:
                kc, valid = _kmers(codes, k)
                rows, pos = np.nonzero(valid)
                phi = (rows, _pair_keys(pos, kc[valid], k, L), np.ones(rows.size))
                psi_r, psi_k, psi_w = [], [], []
                for s in range(1, min(self.shift, P - 1) + 1):
                    # Phi_{+s}: k-mer starting at l + s placed at position l (l < P - s)
                    v = valid[:, s:]
                    r, pos_s = np.nonzero(v)
                    psi_r.append(r)
                    psi_k.append(_pair_keys(pos_s, kc[:, s:][v], k, L))
                    psi_w.append(np.full(r.size, 1.0 / (2 * (s + 1))))
                psi = ((np.concatenate(psi_r), np.concatenate(psi_k), np.concatenate(psi_w))
                       if psi_r else None)
                per_data.append((phi, psi))
            keys = [phi[1] for phi, _ in per_data] + [psi[1] for _, psi in per_data if psi]
            mapped, p = _compact(keys)
            it = iter(mapped[len(per_data):])
            for j, (phi, psi) in enumerate(per_data):
                phi_c = mapped[j] + offset
                left_parts[j].append((phi[0], phi_c, beta * phi[2]))
                right_parts[j].append((phi[0], phi_c, phi[2]))
                if psi is not None:
                    psi_c = next(it) + offset
                    left_parts[j].append((psi[0], psi_c, beta * psi[2]))
                    # second block: left beta Phi against right Psi
                    left_parts[j].append((phi[0], phi_c + p, beta * phi[2]))
                    right_parts[j].append((psi[0], psi_c + p, psi[2]))
            offset += 2 * p if self.shift else p
        return [tuple(_csr(parts, (n, max(offset, 1))) for parts in (left_parts[j], right_parts[j]))
                for j, n in enumerate(n_list)]


class CallableKernel(Kernel):
    """A user function ``f(X, Y) -> Gram`` of shape ``(n_X, n_Y)``; see :func:`as_kernel`.

    Parameters
    ----------
    func : callable
        ``func(X, Y)`` returns the Gram matrix of shape ``(n_X, n_Y)``.
    columns : None, int or sequence of int, default=None
        Features handed to ``func``; None means all.
    psd : bool, default=False
        The user's guarantee that ``func`` is a symmetric PSD kernel: its training matrices
        then skip the symmetry and eigenvalue checks of ``check_psd="auto"``.
    """

    kind = "callable"
    family = "callable"

    def __init__(self, func, columns=None, psd=False):
        if not callable(func):
            raise TypeError(f"CallableKernel needs a callable; got {type(func).__name__}.")
        validate_params("CallableKernel", {"psd": [bool]}, {"psd": psd})
        super().__init__(columns)
        if self.columns == "each":
            raise ValueError("Callable kernels do not support columns='each'.")
        self.func = func
        self.psd = psd

    @property
    def psd_by_construction(self):
        """bool: only what the user declared with ``psd=True``."""
        return self.psd

    def __eq__(self, other):
        return (type(other) is type(self) and other.func is self.func
                and other.columns == self.columns)

    def __hash__(self):
        return hash((id(self.func), self.columns))

    def __repr__(self):
        name = getattr(self.func, "__name__", type(self.func).__name__)
        cols = "" if self.columns is None else f", columns={list(self.columns)}"
        return f"callable({name}{cols})"

    def _evaluate(self, A, B, n_A, n_B):
        K = np.asarray(self.func(A, B), dtype=np.float64)
        if K.shape != (n_A, n_B):
            raise ValueError(f"Kernel {self!r} returned shape {K.shape}; expected ({n_A}, {n_B}) "
                             f"(rows = first argument, columns = second).")
        check_finite(K, f"The Gram matrix of {self!r}")
        return K

    def _gram(self, dX, dY, symmetric):
        A = dX.raw_cols(self.columns)
        B = A if symmetric else dY.raw_cols(self.columns)
        return self._evaluate(A, B, dX.n_samples("callable"), dY.n_samples("callable"))

    def _diag(self, data):
        A = data.raw_cols(self.columns)
        if isinstance(A, (list, tuple)):
            A = np.asarray(A)
        n = data.n_samples("callable")
        return np.array([self._evaluate(A[i:i + 1], A[i:i + 1], 1, 1)[0, 0] for i in range(n)])


# ----------------------------------------------------------------------------------------
# factories
# ----------------------------------------------------------------------------------------


@_doc
def linear(columns=None):
    r"""Linear kernel :math:`k(x, z) = \langle x, z\rangle`.

    Parameters
    ----------
    {columns}

    Returns
    -------
    {kernel}

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.kernels import linear
    >>> linear()(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """
    return LinearKernel(columns)


@_doc
def polynomial(degree=2, coef0=1.0, scale=1.0, columns=None):
    r"""Polynomial kernel :math:`k(x, z) = (s\,\langle x, z\rangle + c)^p`.

    Equal to scikit-learn's ``polynomial_kernel(X, Z, degree=p, gamma=s, coef0=c)``.

    Parameters
    ----------
    degree : int, default=2
        Degree :math:`p \ge 1`.
    coef0 : float, default=1.0
        Offset :math:`c \ge 0` (non-negative so that the kernel is PSD).
    scale : float, default=1.0
        Multiplier :math:`s > 0` of the inner product (scikit-learn's ``gamma``).
    {columns}

    Returns
    -------
    {kernel}
    """
    return PolynomialKernel(degree, coef0, scale, columns)


@_doc
def gaussian(sigma=None, gamma=None, columns=None, *, scale=1.0):
    r"""Gaussian (RBF) kernel :math:`\exp(-\|x - z\|^2 / (2\sigma^2)) = \exp(-\gamma\|x - z\|^2)`.

    Give ``sigma`` or ``gamma``, not both. Data-dependent widths are resolved by
    :meth:`Kernel.fit` on the training data (restricted to ``columns``), with
    :math:`D_{ij} = \|x_i - x_j\|^2` and :math:`s` = ``scale``:

    * ``gamma="scale"`` (the default): :math:`\gamma = 1/(s\, d\, \mathrm{Var}(X))`,
      scikit-learn's ``SVC(gamma="scale")`` for :math:`s = 1` (1 when the variance is 0);
      ``gamma="auto"``: :math:`1/(s\,d)`.
    * ``sigma="median"``: :math:`\gamma = 1/(s\, d_{med})`, :math:`d_{med} =
      \mathrm{median}_{i\ne j} D_{ij}` (the median of the positive :math:`D_{ij}` if that is
      0; :math:`\gamma = 0` if all points coincide). Kloft et al. 2009, Sec. 3.1, do not give
      the widths of their Gaussian bank; this heuristic is our choice.
    * ``sigma="nn"``: :math:`\gamma = 1/(s\, \bar d^2)`, :math:`\bar d = \frac1n\sum_i
      \min_{j\ne i}\|x_i - x_j\|` (Gönen & Alpaydın 2008's :math:`\exp(-\|x-z\|^2/\bar d^2)`
      for :math:`s = 1`, the ``2s^2`` form for :math:`s = 2`).

    Parameters
    ----------
    sigma : float or {"median", "nn"}, default=None
        Width :math:`\sigma > 0`, or a data-dependent rule.
    gamma : float or {"scale", "auto"}, default=None
        Inverse width :math:`\gamma > 0`, or a data-dependent rule.
    {columns}
    scale : float, default=1.0
        Multiplier :math:`s` of a data-dependent squared width; 1 with a fixed width.

    Returns
    -------
    kernel : Kernel
        The kernel object; once fitted, ``kernel.gamma_`` and ``kernel.sigma_`` hold the width.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.kernels import gaussian
    >>> X = np.array([[0.0], [1.0]])
    >>> np.round(gaussian(sigma=1.0)(X), 4)
    array([[1.    , 0.6065],
           [0.6065, 1.    ]])
    >>> gaussian(sigma=2.0, columns=[3])
    gaussian(sigma=2.0, columns=[3])
    """
    return GaussianKernel(sigma=sigma, gamma=gamma, scale=scale, columns=columns)


@_doc
def spectrum(k=3, positions=None):
    r"""Spectrum kernel on DNA sequences (Leslie et al. 2002).

    :math:`k(x, z) = \sum_{u \in \{A,C,G,T\}^k} \phi_u(x)\, \phi_u(z)`, where
    :math:`\phi_u(x)` counts the occurrences of the k-mer :math:`u` in :math:`x` (the promoter
    and exon kernels of Kloft et al. 2009, Sec. 3.3), computed as a product of sparse count
    matrices. A k-mer containing a letter other than A, C, G, T (either case) is not counted.

    Parameters
    ----------
    k : int, default=3
        k-mer length, 1 <= k <= 31.
    {positions}

    Returns
    -------
    kernel : Kernel
        The kernel object; data are a sequence of strings or an ``(n, L)`` array of characters.
    """
    return SpectrumKernel(k, positions)


@_doc
def weighted_degree(d=3, shift=0, positions=None):
    r"""Weighted-degree kernel, optionally with shifts, on DNA sequences of one length L.

    With maximal shift :math:`S` = ``shift`` (Rätsch & Sonnenburg; the TSS kernel of Kloft
    et al. 2009, Sec. 3.3, is :math:`S = 0`, where only the :math:`s = 0` term remains):

    .. math::
        k(x, z) = \sum_{k=1}^{d}\beta_k\sum_{l=1}^{L-k+1}\ \sum_{s=0,\ s+l\le L-k+1}^{S}
        \delta_s\big(\mathbb 1[x_{l+s:l+s+k}=z_{l:l+k}] + \mathbb 1[x_{l:l+k}=z_{l+s:l+s+k}]\big),

    :math:`\beta_k = 2(d-k+1)/(d(d+1))`, :math:`\delta_s = 1/(2(s+1))`. Computed with sparse
    positional one-hot k-mer maps :math:`\Phi^{(k)}`: :math:`\sum_k \beta_k
    \Phi^{(k)}\Phi^{(k)\top}` plus :math:`\delta_s(\Phi^{(k)}_{+s}\Phi^{(k)\top} +
    \Phi^{(k)}\Phi^{(k)\top}_{+s})` for the shifts. Letters other than A, C, G, T match nothing.

    Parameters
    ----------
    d : int, default=3
        Maximal k-mer length (degree), 1 <= d <= 30.
    shift : int, default=0
        Maximal shift :math:`S \ge 0`.
    {positions}

    Returns
    -------
    {kernel}
    """
    return WeightedDegreeKernel(d, shift, positions)


_FACTORIES = {
    "linear": linear, "poly": polynomial, "polynomial": polynomial, "rbf": gaussian,
    "gaussian": gaussian, "spectrum": spectrum, "wd": weighted_degree,
    "weighted_degree": weighted_degree,
}


def as_kernel(spec):
    """Convert a kernel description to a :class:`Kernel`.

    Parameters
    ----------
    spec : Kernel, str, tuple or callable
        One of: a :class:`Kernel` (returned as is); a name; ``(name, params)`` or ``(name,
        params, columns)`` with ``name`` in {"linear", "poly", "polynomial", "rbf",
        "gaussian", "spectrum", "wd", "weighted_degree"} and ``params`` a dict of the factory's
        keyword arguments (e.g. ``("rbf", {"gamma": 0.1}, [0, 2])``); or a callable
        ``f(X, Y) -> ndarray of shape (n_X, n_Y)``.

    Returns
    -------
    kernel : Kernel
        The kernel object.
    """
    if isinstance(spec, Kernel):
        return spec
    if isinstance(spec, str):
        spec = (spec, {})
    if isinstance(spec, (tuple, list)) and len(spec) in (1, 2, 3) and isinstance(spec[0], str):
        name = spec[0]
        params = dict(spec[1]) if len(spec) > 1 and spec[1] is not None else {}
        if name not in _FACTORIES:
            raise ValueError(f"Unknown kernel name {name!r}; known names: "
                             f"{sorted(_FACTORIES)}.")
        if len(spec) == 3:
            if "columns" in params:
                raise ValueError(f"Kernel spec {spec!r} gives columns twice.")
            params["columns"] = spec[2]
        try:
            return _FACTORIES[name](**params)
        except TypeError as exc:
            raise TypeError(f"Bad parameters for kernel {name!r}: {exc}") from None
    if callable(spec):
        return CallableKernel(spec)
    raise TypeError(f"Cannot interpret {spec!r} as a kernel: give a Kernel, a (name, params[, "
                    f"columns]) tuple or a callable f(X, Y) -> Gram.")


def _as_kernel_list(kernels):
    if isinstance(kernels, (Kernel, str)) or callable(kernels) or (
            isinstance(kernels, tuple) and kernels and isinstance(kernels[0], str)):
        kernels = [kernels]
    try:
        klist = [as_kernel(k) for k in kernels]
    except TypeError as exc:
        if "not iterable" in str(exc):
            raise TypeError(f"kernels must be a list of kernels; got {kernels!r}.") from None
        raise
    if not klist:
        raise ValueError("The kernel list is empty: give at least one kernel.")
    return klist


def resolve_columns(kernels, feature_names, owner="this estimator"):
    """Replace the column names of kernels by column positions.

    Parameters
    ----------
    kernels : list of kernel specs
        Anything :func:`as_kernel` accepts; kernels with ``columns`` given by name (a
        sequence of str) are resolved.
    feature_names : sequence of str or None
        The columns of the training data (a DataFrame's ``columns``, an estimator's
        ``feature_names_in_``); None when the data have no column names.
    owner : str, default="this estimator"
        Used in the messages.

    Returns
    -------
    kernels : list of Kernel
        The same kernels, with ``columns`` as integer positions (names kept).

    Raises
    ------
    ValueError
        A name that is not a column, or names without column names (a NumPy array).
    """
    out = []
    names = None if feature_names is None else [str(c) for c in feature_names]
    for kernel in _as_kernel_list(kernels):
        cols = kernel.columns
        if isinstance(cols, tuple) and cols and isinstance(cols[0], str):
            if names is None:
                raise ValueError(f"{kernel!r} reads columns by name, but {owner} got data without "
                                 f"column names: pass a pandas DataFrame, or integer columns.")
            unknown = [c for c in cols if c not in names]
            if unknown:
                raise ValueError(f"{kernel!r}: columns {unknown} are not columns of the data "
                                 f"({len(names)} columns: {names[:5]}...).")
            resolved = kernel._with_columns(tuple(names.index(c) for c in cols))
            if kernel.name is None:  # named as the user wrote it
                resolved.name = repr(kernel)
            kernel = resolved
        out.append(kernel)
    return out


def kernel_names(kernels):
    """Display names of kernels: the bank's name of each (:attr:`Kernel.name`), else its
    ``repr``.

    Parameters
    ----------
    kernels : list of Kernel

    Returns
    -------
    names : list of str
    """
    return [k.name if k.name is not None else repr(k) for k in kernels]


# ----------------------------------------------------------------------------------------
# fitting (data-dependent parameters and per-feature templates)
# ----------------------------------------------------------------------------------------


class _DistStats:
    """Statistics of the training data restricted to one column subset, computed lazily."""

    def __init__(self, Xc, D=None):
        self.Xc, self._D = Xc, D
        self.n_features = Xc.shape[1]
        self._median = self._nn = None

    def D(self):
        if self._D is None:
            n = self.Xc.shape[0]
            self._D = np.empty((n, n))
            _sqdist(self._D, self.Xc, self.Xc, symmetric=True, have_gram=False)
        return self._D

    def variance(self):
        return float(self.Xc.var())

    def median_sqdist(self):
        if self._median is None:
            D = self.D()
            n = D.shape[0]
            n_off = n * (n - 1)
            if n_off == 0:
                raise ValueError("sigma='median' needs at least 2 training samples.")
            # the n diagonal zeros are the smallest entries: the off-diagonal median sits at
            # ranks n + (n_off-1)//2 and n + n_off//2 of the full matrix (each pair counted twice
            # does not change the median)
            k1, k2 = n + (n_off - 1) // 2, n + n_off // 2
            flat = D.ravel().copy()
            flat.partition((k1, k2))
            med = 0.5 * (flat[k1] + flat[k2])
            if med == 0:
                pos = flat[flat > 0]
                med = float(np.median(pos)) if pos.size else 0.0
            self._median = float(med)
        return self._median

    def mean_nn_dist(self):
        if self._nn is None:
            D = self.D()
            if D.shape[0] < 2:
                raise ValueError("sigma='nn' needs at least 2 training samples.")
            np.fill_diagonal(D, np.inf)
            try:
                nearest = D.min(axis=1)
            finally:
                np.fill_diagonal(D, 0.0)
            self._nn = float(np.mean(np.sqrt(nearest)))
        return self._nn


def _expand(klist, data):
    out = []
    for k in klist:
        if k.columns == "each":
            out.extend(k.expand(data.n_features()))
        else:
            out.append(k)
    return out


def _fit_kernel_list(klist, data):
    """Expand templates and resolve data-dependent parameters on ``data`` (a _Data)."""
    klist = _expand(klist, data)
    groups = {}
    for i, k in enumerate(klist):
        if not k.is_fitted:
            groups.setdefault(k.columns, []).append(i)
    out = list(klist)
    for cols, idx in groups.items():
        stats = _DistStats(data.cols(cols))
        for i in idx:
            out[i] = klist[i]._fit_stats(stats)
        del stats
    return out


def fit_kernels(kernels, X):
    """Expand per-feature templates and resolve data-dependent parameters on training data.

    Kernels sharing a column subset share the work: the squared-distance matrix of the
    training data is computed once per subset.

    Parameters
    ----------
    kernels : list of kernel specs
        Anything :func:`as_kernel` accepts, or a list of such.
    X : array-like of shape (n_samples, n_features) or sequence of strings
        Training data.

    Returns
    -------
    kernels : list of Kernel
        Fitted kernels; each template with ``columns="each"`` is replaced by ``n_features``
        single-feature kernels, in feature order, at its place in the list.
    """
    return _fit_kernel_list(_as_kernel_list(kernels), _Data(X, "X"))


# ----------------------------------------------------------------------------------------
# banks
# ----------------------------------------------------------------------------------------

#: Named banks and generic families accepted by :func:`kernel_bank`
KERNEL_BANKS = ("linear", "poly", "polynomial", "rbf", "gaussian", "simplemkl", "rls2_default",
                "xu2010", "kloft_median", "lmkl")

_SIMPLEMKL_SIGMAS = (0.5, 1.0, 2.0, 5.0, 7.0, 10.0, 12.0, 15.0, 17.0, 20.0)


def _as_list(v):
    if isinstance(v, str):
        return [v]
    return list(np.atleast_1d(np.asarray(v, dtype=object)).ravel())


def _gaussians(sigma=None, gamma=None, scale=None):
    if sigma is not None and gamma is not None:
        raise ValueError("kernel_bank: give sigma or gamma, not both.")
    if sigma is None and gamma is None:
        raise ValueError("kernel_bank('rbf') needs sigma=[...] or gamma=[...] (or sigma='median' "
                         "with scale=[...]).")
    key, value = ("sigma", sigma) if sigma is not None else ("gamma", gamma)
    if isinstance(value, str):
        scales = [1.0] if scale is None else _as_list(scale)
        return [gaussian(**{key: value}, scale=float(s)) for s in scales]
    if scale is not None:
        raise ValueError("kernel_bank: scale=[...] goes with sigma='median'/'nn' or "
                         "gamma='scale'/'auto'; with numeric widths list them in sigma or gamma.")
    return [gaussian(**{key: float(v)}) for v in _as_list(value)]


def _bank_templates(kind, params):
    """Return ``(kernels, default per_feature)`` of a bank."""
    p = dict(params)

    def take(accepted):
        bad = sorted(set(p) - set(accepted))
        if bad:
            raise TypeError(f"kernel_bank({kind!r}) got unexpected parameter(s) {bad}; accepted: "
                            f"{sorted(accepted)}.")
        return {k: p[k] for k in accepted if k in p}

    def polys(a):  # (<x,z> + 1)^p for the listed degrees
        return [polynomial(int(d), coef0=1.0) for d in _as_list(a.get("degree", (1, 2, 3)))]

    def fixed_gaussians(a, key, default):
        return [gaussian(**{key: float(v)}) for v in _as_list(a.get(key, default))]

    if kind == "linear":
        take([])
        return [linear()], False
    if kind in ("poly", "polynomial"):
        a = take(["degree", "coef0", "scale"])
        if "degree" not in a:
            raise ValueError("kernel_bank('poly') needs degree=[...].")
        return [polynomial(int(d), coef0=a.get("coef0", 1.0), scale=a.get("scale", 1.0))
                for d in _as_list(a["degree"])], False
    if kind in ("rbf", "gaussian"):
        a = take(["sigma", "gamma", "scale"])
        return _gaussians(**a), False
    if kind == "simplemkl":
        # Rakotomamonjy et al. 2008 (SVM-KM conventions): exp(-||x-z||^2/(2 sigma^2)),
        # (<x,z> + 1)^p
        a = take(["sigma", "degree"])
        return fixed_gaussians(a, "sigma", _SIMPLEMKL_SIGMAS) + polys(a), True
    if kind == "rls2_default":
        # Dinuzzo's UCI benchmark (Tables 2-4): (<x,x'>+1)^p, p = 1..3, and exp(-gamma ||x-x'||^2),
        # gamma in logspace(-3, 3, 10)
        a = take(["gamma", "degree"])
        return polys(a) + fixed_gaussians(a, "gamma", np.logspace(-3, 3, 10)), True
    if kind == "xu2010":
        # Yang et al. 2012 (widths of Xu et al. 2010): exp(-||x-z||^2/(2 sigma^2)), sigma 2^-3..2^6
        return fixed_gaussians(take(["sigma"]), "sigma", 2.0 ** np.arange(-3, 7)), True
    if kind == "kloft_median":
        # Gaussian bank of Kloft et al. 2009, Sec. 3.1 (median-heuristic widths: our choice):
        # K_k = exp(-D/(c_k d_med)), c_k = 10^(-2 + 4(k-1)/(M-1))
        a = take(["n_kernels", "scale"])
        if "scale" in a and "n_kernels" in a:
            raise ValueError("kernel_bank('kloft_median'): give n_kernels or scale, not both.")
        if "scale" in a:
            scales = [float(s) for s in _as_list(a["scale"])]
        else:
            M = a.get("n_kernels", 50)
            validate_params("kernel_bank", {"n_kernels": [Interval("int", 1, None)]},
                            {"n_kernels": M})
            scales = [1.0] if M == 1 else list(np.logspace(-2, 2, M))
        return [gaussian(sigma="median", scale=c) for c in scales], False
    if kind == "lmkl":
        # Gönen & Alpaydın 2008: K_L, K_P = (<x,z>+1)^q, K_G = exp(-D/s^2)
        a = take(["degree", "gaussian_form"])
        form = a.get("gaussian_form", "s2")
        validate_params("kernel_bank", {"gaussian_form": [Options("s2", "2s2")]},
                        {"gaussian_form": form})
        return [linear(), polynomial(int(a.get("degree", 2)), coef0=1.0),
                gaussian(sigma="nn", scale=1.0 if form == "s2" else 2.0)], False
    raise ValueError(f"Unknown kernel bank {kind!r}; known kinds: {', '.join(KERNEL_BANKS)}.")


def kernel_bank(kind, *, per_feature=None, n_features=None, groups=None, approx=None,
                rank=None, random_state=0, **params):
    r"""Build a list of kernels: a generic family or a named bank of the reproduced papers.

    Parameters
    ----------
    kind : str
        Generic families: ``"linear"`` (one linear kernel); ``"poly"`` / ``"polynomial"``
        (``degree=[...]`` required, ``coef0=1.0``, ``scale=1.0``); ``"rbf"`` / ``"gaussian"``
        (``sigma=[...]`` or ``gamma=[...]``, or a rule ``sigma="median"``, ``"nn"``,
        ``gamma="scale"`` with ``scale=[...]``, see :func:`gaussian`). Named banks:

        * ``"simplemkl"`` (Rakotomamonjy et al. 2008): Gaussian
          :math:`\exp(-\|x-z\|^2/(2\sigma^2))`, ``sigma`` in (0.5, 1, 2, 5, 7, 10, 12, 15, 17,
          20), and :math:`(\langle x,z\rangle+1)^p`, ``degree`` in (1, 2, 3), on all variables
          and on each single variable: :math:`13(d+1)` kernels.
        * ``"rls2_default"`` (Dinuzzo's UCI benchmark, Tables 2-4): :math:`(\langle
          x,x'\rangle+1)^p`, p = 1..3, and :math:`\exp(-\gamma\|x-x'\|^2)`, ``gamma`` =
          ``logspace(-3, 3, 10)``, on all and on each single feature: :math:`13(N+1)`. The
          trace scaling (18) is the solver's ``scaling="trace"``, not done here.
        * ``"xu2010"`` (Yang et al. 2012, widths of Xu et al. 2010): Gaussian with ``sigma`` =
          :math:`2^{-3},\dots,2^{6}` on all and on each single attribute: :math:`10(d+1)`.
          The widths are fixed and assume attributes min-max scaled to :math:`[0,1]`, as in
          Yang et al. (2012); neither this bank nor :class:`~mklcore.stpmkl.StPMKLClassifier`
          scales ``X``, so scale first, e.g. ``make_pipeline(MinMaxScaler(),
          StPMKLClassifier(kernels=kernel_bank("xu2010")))``.
        * ``"kloft_median"`` (the Gaussian bank of Kloft et al. 2009, Sec. 3.1; the widths are
          our choice): ``n_kernels=M`` (default 50) kernels :math:`\exp(-D/(c_k d_{med}))`,
          :math:`c_k` log-spaced from :math:`10^{-2}` to :math:`10^2` (or ``scale=[...]``).
        * ``"lmkl"`` (Gönen & Alpaydın 2008): :math:`K_L`, :math:`K_P = (\langle
          x,z\rangle+1)^q` (``degree=2``) and :math:`K_G = \exp(-\|x-z\|^2/s^2)`, :math:`s`
          the mean nearest-neighbour distance (``gaussian_form="2s2"`` for :math:`2s^2`).
    per_feature : bool or "only", default=None
        True: the kernels on all features, then the same kernels on each single feature
        (kernel by kernel, features in order); ``"only"``: the single-feature kernels only;
        False: all features only. None: True for "simplemkl", "rls2_default", "xu2010".
    n_features : int, default=None
        Number of input features. Given: single-feature kernels are created now
        (``columns=[j]``); None: they are templates (``columns="each"``) expanded on the
        training data by :func:`fit_kernels`, :func:`kernel_stack` and :class:`KernelBank`.
    groups : dict, default=None
        Named, possibly overlapping feature groups ``{"name": columns}`` (integer positions or
        DataFrame column names, e.g. one group per data source or gene set): the bank is then
        every kernel of ``kind`` on every group, in the order of the groups, each named
        ``"<group>: <kernel>"`` (:attr:`Kernel.name`, the ``kernel_names_`` of a fitted
        estimator). Add a group of all columns for kernels on every feature;
        ``per_feature`` must then be None.
    approx : {"nystroem", "rff"} or None, default=None
        ``"nystroem"``: mark the bank for low-rank approximation, :math:`K_m\approx\Phi_m
        \Phi_m^\top` from ``rank`` landmarks (see :mod:`mklcore.lowrank`); ``"rff"``: random
        Fourier features (Gaussian kernels only); the estimators with a ``memory`` parameter
        then fit on the factors. None: exact kernels.
    rank : int, default=None
        Landmarks (``"rff"``: features) per kernel (required with ``approx``).
    random_state : int, default=0
        Seed of the landmarks (with ``approx``).
    **params : dict
        Parameters of the family or overrides of the named bank's lists (``sigma``,
        ``gamma``, ``degree``, ``scale``, ``n_kernels``, ``coef0``, ``gaussian_form``).

    Returns
    -------
    kernels : list of Kernel
        The bank (an :class:`~mklcore.lowrank.ApproxBank`, a list, with ``approx``).

    Raises
    ------
    ValueError
        For an unknown ``kind`` (the message lists the known kinds) or bad parameters.

    Examples
    --------
    >>> from mklcore.kernels import kernel_bank
    >>> len(kernel_bank("simplemkl", n_features=4))
    65
    >>> kernel_bank("rbf", gamma=[0.1, 1.0])
    [gaussian(gamma=0.1), gaussian(gamma=1.0)]
    >>> bank = kernel_bank("rbf", gamma=[0.1, 1.0], groups={"a": [0, 1], "b": ["age"]})
    >>> [k.name for k in bank][1:3]
    ['a: gaussian(gamma=1.0)', 'b: gaussian(gamma=0.1)']
    """
    if not isinstance(kind, str):
        raise ValueError(f"Unknown kernel bank {kind!r}; known kinds: {', '.join(KERNEL_BANKS)}.")
    kind = kind.lower()
    templates, default_pf = _bank_templates(kind, params)
    if groups is not None and per_feature is not None:
        raise ValueError("kernel_bank takes groups or per_feature, not both: add a group of "
                         "all columns for kernels on every feature.")
    if per_feature is None:
        per_feature = default_pf
    if per_feature not in (True, False, "only"):
        raise ValueError(f"The 'per_feature' parameter of kernel_bank must be True, False or "
                         f"'only'. Got {per_feature!r} instead.")
    if n_features is not None:
        validate_params("kernel_bank", {"n_features": [Interval("int", 1, None)]},
                        {"n_features": n_features})
    if groups is not None:
        if not isinstance(groups, dict) or not groups:
            raise ValueError(f"The 'groups' parameter of kernel_bank must be a non-empty dict "
                             f"{{name: columns}}. Got {groups!r} instead.")
        bank = []
        for group, columns in groups.items():
            cols = _check_columns(columns, f"kernel_bank (group {group!r})")
            if cols == "each" or cols is None:
                raise ValueError(f"The columns of group {group!r} of kernel_bank must be "
                                 f"integer positions or column names. Got {columns!r} instead.")
            for t in templates:
                kernel = t._with_columns(cols)
                kernel.name = f"{group}: {t!r}"
                bank.append(kernel)
    else:
        bank = [] if per_feature == "only" else list(templates)
        if per_feature:
            for t in templates:
                each = t._with_columns("each")
                bank.extend(each.expand(n_features) if n_features is not None else [each])
    if approx is not None or rank is not None:
        from .lowrank import ApproxBank

        return ApproxBank(bank, approx, rank, random_state)
    return bank


# ----------------------------------------------------------------------------------------
# stacks
# ----------------------------------------------------------------------------------------


#: up to this many features, Gram matrices are summed feature by feature in a fixed order
#: (exact IEEE products and sums, the same bits on every CPU); above it, BLAS (whose kernels
#: are chosen per CPU type and may differ in the last bits between machines)
EXACT_GRAM_MAX_FEATURES = 64


def _gram(Xc, Yc, out):
    r"""Write :math:`X_cY_c^\top` into ``out`` (float64, C-contiguous).

    With at most :data:`EXACT_GRAM_MAX_FEATURES` columns the sum over features runs in
    column order with elementwise operations, so the result is the same on every machine
    (and exactly symmetric when ``Xc is Yc``); BLAS is used for wider data.
    """
    d = Xc.shape[1]
    if d > EXACT_GRAM_MAX_FEATURES or d == 0:
        np.matmul(Xc, Yc.T, out=out)
        return
    np.multiply.outer(Xc[:, 0], Yc[:, 0], out=out)
    if d > 1:
        tmp = np.empty_like(out)
        for j in range(1, d):
            np.multiply.outer(Xc[:, j], Yc[:, j], out=tmp)
            out += tmp


def _sqdist(work, Xc, Yc, *, symmetric, have_gram):
    r"""Write :math:`\|x_i - y_j\|^2` into ``work`` (float64, C-contiguous).

    If ``have_gram``, ``work`` already holds ``Xc @ Yc.T`` and is converted in place
    (blockwise, a ~16 MB temporary). The symmetric case is exactly symmetric with a zero
    diagonal.
    """
    n_X, n_Y = work.shape
    if Xc.shape[1] == 1:  # one feature: direct and exact
        np.subtract.outer(Xc[:, 0], Yc[:, 0], out=work)
        np.square(work, out=work)
        return
    if not have_gram:
        _gram(Xc, Yc, work)
    xx = np.einsum("ij,ij->i", Xc, Xc)
    yy = xx if symmetric else np.einsum("ij,ij->i", Yc, Yc)
    block = max(1, _BLOCK_ELEMENTS // max(n_Y, 1))
    for s in range(0, n_X, block):
        blk = work[s:s + block]
        blk *= -2.0
        # (xx_i + yy_j) first: symmetric in (i, j) bit for bit when xx is yy
        blk += np.add.outer(xx[s:s + block], yy)
    np.maximum(work, 0.0, out=work)
    if symmetric:
        np.fill_diagonal(work, 0.0)


def _stack(kernels, X, Y, dtype, max_bytes, check_psd_, owner, sink=None, workspace=0):
    """Compute the stack and return ``(stack, fitted kernels)``.

    With ``sink``, no stack is kept (``stack`` is None): each kernel is computed in float64
    into one scratch matrix and handed to ``sink(i, K_i)`` (after its checks), which may
    change it in place; memory is then that of two Gram matrices, not of M. ``workspace``
    float64 Gram-sized matrices are reserved for the solver that will read the stack.
    """
    dtype = _check_dtype(dtype, owner)
    if check_psd_ not in ("auto", True, False):
        raise ValueError(f"The 'check_psd' parameter of {owner} must be 'auto', True or False. "
                         f"Got {check_psd_!r} instead.")
    if max_bytes is not None:
        validate_params(owner, {"max_bytes": [Interval("real", 0, None)]},
                        {"max_bytes": max_bytes})
    klist = resolve_columns(kernels, getattr(getattr(X, "raw", X), "columns", None), owner)
    dX = X if isinstance(X, _Data) else _Data(X, "X")
    symmetric = Y is None
    if symmetric:
        dY = dX
        klist = _expand(klist, dX)  # data-dependent widths are fitted below, from the stack's D
    else:
        dY = Y if isinstance(Y, _Data) else _Data(Y, "Y")
        klist = _fit_kernel_list(klist, dY)
    families = {k.family for k in klist}
    first = klist[0].family
    n_X, n_Y = dX.n_samples(first), dY.n_samples(first)
    if not symmetric and families & {"dot", "dist"}:
        if dX.n_features() != dY.n_features():
            raise ValueError(f"X has {dX.n_features()} features but Y has {dY.n_features()}; "
                             f"kernels need the same features on both sides.")
    M = len(klist)

    # memory: the stack, plus a float64 workspace of one Gram matrix when the stack is float32
    # or when other temporaries are needed (medians, string and callable kernels)
    stack_bytes = (M * n_X * n_Y * dtype.itemsize if sink is None else n_X * n_Y * 8)
    n_work = (int(bool(families & {"dot", "dist"}) and (dtype != np.float64 or sink is not None))
              + int(symmetric and any(not k.is_fitted for k in klist))
              + 2 * int(bool(families & {"string", "callable"})))
    work_bytes = (n_work + int(workspace)) * n_X * n_Y * 8  # + the solver's (n, n) matrices
    if max_bytes is not None:
        limit = max_bytes
    elif stack_bytes + work_bytes <= MEMORY_CHECK_MIN_BYTES:
        limit = None  # a reading of free memory is a snapshot: never refuse a small stack on it
    else:
        limit = available_memory()  # read only when it matters (it opens /proc/meminfo)
    if limit is not None and stack_bytes + work_bytes > limit:
        source = "max_bytes" if max_bytes is not None else "free memory"
        raise MemoryError(
            f"{owner}: a stack of {M} kernels of shape ({n_X}, {n_Y}) in {dtype.name} needs "
            f"{_fmt_bytes(stack_bytes)} plus {_fmt_bytes(work_bytes)} of workspace, "
            f"{_fmt_bytes(stack_bytes + work_bytes)} in all, but only {_fmt_bytes(limit)} are "
            f"available ({source}). Use dtype=np.float32 (halves the stack), fewer kernels or "
            f"fewer samples, or pass max_bytes= to change the limit.")
    stack = np.empty((M, n_X, n_Y), dtype=dtype) if sink is None else None
    scratch = np.empty((n_X, n_Y)) if sink is not None else None

    def emit(i, Ki):
        """Kernel ``i`` is in ``Ki``: checked and handed to the sink (sink mode only)."""
        if symmetric and check_psd_ is not False:
            _check_kernel(i, klist[i], Ki, M, check_psd_)
        sink(i, Ki)

    # numeric kernels: one Gram / squared-distance matrix per column subset
    groups = {}
    for i, k in enumerate(klist):
        if k.family in ("dot", "dist"):
            groups.setdefault(k.columns, []).append(i)
    work64 = None
    for cols, idx in groups.items():
        Xc = dX.cols(cols)
        Yc = Xc if symmetric else dY.cols(cols)
        dots = [i for i in idx if klist[i].family == "dot"]
        dists = [i for i in idx if klist[i].family == "dist"]
        if dtype == np.float64 and sink is None:
            # work in the slot of the group's last consumer, computed last (no extra memory)
            work_idx = dists[-1] if dists else dots[-1]
            work = stack[work_idx]
        else:
            if work64 is None:
                work64 = np.empty((n_X, n_Y))
            work_idx, work = -1, work64
        have_gram = bool(dots) or (bool(dists) and Xc.shape[1] > 1)
        if have_gram:
            _gram(Xc, Yc, work)
        for i in dots:
            target = work if i == work_idx else (scratch if sink else stack[i])
            klist[i]._from_gram(work, target)
            if sink:
                emit(i, target)
        if dists:
            _sqdist(work, Xc, Yc, symmetric=symmetric, have_gram=have_gram)
            stats = None
            for i in dists:
                if not klist[i].is_fitted:
                    if stats is None:
                        stats = _DistStats(Xc, D=work)
                    klist[i] = klist[i]._fit_stats(stats)
                target = work if i == work_idx else (scratch if sink else stack[i])
                klist[i]._from_sqdist(work, target)
                if sink:
                    emit(i, target)
            del stats

    # string and callable kernels, one at a time
    for i, k in enumerate(klist):
        if k.family in ("string", "callable"):
            if sink:
                scratch[...] = k._gram(dX, dY, symmetric)
                emit(i, scratch)
            else:
                stack[i] = k._gram(dX, dY, symmetric)

    if symmetric and check_psd_ is not False and sink is None:
        for i, k in enumerate(klist):
            _check_kernel(i, k, stack[i], M, check_psd_)
    return stack, klist


def _check_kernel(i, k, Ki, M, check_psd_):
    """Symmetry and PSD checks of training kernel ``i`` of ``M`` (``check_psd`` of
    :func:`kernel_stack`: every kernel if True, else those not PSD by construction)."""
    if check_psd_ is True or not k.psd_by_construction:
        asym, scale = _asymmetry(Ki)
        if asym > 1e-8 * scale:
            raise ValueError(f"Kernel {i} of {M} ({k!r}) is not symmetric: max |K - K^T| "
                             f"= {asym:.2e}. A kernel must satisfy k(x, z) = k(z, x).")
        check_psd(Ki, index=i, n_kernels=M, description=repr(k))


def kernel_stack(kernels, X, Y=None, *, dtype=np.float64, max_bytes=None, check_psd="auto"):
    r"""Evaluate a list of kernels into one pre-allocated Gram stack.

    ``stack[m, i, j] = k_m(x_i, y_j)``: the training stack is ``kernel_stack(kernels,
    X_train)``, shape ``(M, n, n)``, exactly symmetric; the test stack ``kernel_stack(kernels,
    X_test, X_train)``, shape ``(M, n_test, n_train)``. Kernels sharing a column subset share
    one inner-product matrix :math:`G = X_c Y_c^\top` (linear and polynomial kernels), turned
    in place into :math:`D_{ij} = \|x_i\|^2 + \|y_j\|^2 - 2G_{ij}` (Gaussian kernels). In
    float64 the workspace is the slot of the subset's last kernel: no memory beyond the stack
    and small blocks.

    Parameters
    ----------
    kernels : list of kernel specs
        Anything :func:`as_kernel` accepts, or a list of such. Templates are expanded and
        data-dependent widths resolved on the training side (``Y`` if given, else ``X``);
        pass fitted kernels (e.g. ``KernelBank.kernels_``) to avoid it.
    X : array-like of shape (n_X, n_features) or sequence of strings
        Row data (the test data for a test stack).
    Y : array-like of shape (n_Y, n_features) or sequence of strings, default=None
        Column data (the training data); None means ``Y = X``.
    dtype : {np.float64, np.float32}, default=np.float64
        Type of the stack; with float32 the matrices are computed in one float64 workspace
        and rounded when stored.
    max_bytes : int, default=None
        Memory the stack and its workspace may use; None: :func:`available_memory`.
    check_psd : {"auto", True, False}, default="auto"
        For training stacks: check symmetry and positive semidefiniteness (one shifted
        Cholesky factorisation per kernel, see :func:`is_psd`) of the kernels that are not
        PSD by construction ("auto": callables not declared ``psd=True``; the built-in kernels
        have ``psd_by_construction``), of every kernel (True) or of none (False).

    Returns
    -------
    stack : ndarray of shape (n_kernels, n_X, n_Y)
        The Gram matrices, in the order of the (expanded) kernel list.

    Raises
    ------
    MemoryError
        Before allocating, if the stack plus workspace exceeds ``max_bytes`` (or the
        available memory); the message gives both numbers.
    ValueError
        For NaN or infinite input, mismatched features, or a callable kernel that is not
        symmetric PSD.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.kernels import kernel_bank, kernel_stack
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> kernel_stack(kernel_bank("rbf", gamma=[0.1, 1.0]), X[:5], X).shape
    (2, 5, 20)
    """
    return _stack(kernels, X, Y, dtype, max_bytes, check_psd, "kernel_stack")[0]


# ----------------------------------------------------------------------------------------
# normalisation, centring, alignment, PSD
# ----------------------------------------------------------------------------------------


def _as_stack(K, name):
    """``(K, stack view of shape (M, n_rows, n_cols), whether K is a single matrix)``."""
    K = np.asarray(K)
    if K.dtype.kind not in "f":
        K = K.astype(np.float64)
    if K.ndim not in (2, 3):
        raise ValueError(f"{name} must have shape (n_rows, n_cols) or (n_kernels, n_rows, n_cols); "
                         f"got {K.shape}.")
    return K, (K[None] if K.ndim == 2 else K), K.ndim == 2


def _asymmetry(K):
    """``max|K - K^T|`` and the scale ``max|K|`` it is compared with (at least ``tiny``)."""
    scale = max(float(np.max(np.abs(K))) if K.size else 0.0, np.finfo(float).tiny)
    return (float(np.max(np.abs(K - K.T))) if K.size else 0.0), scale


@_doc
def normalize_trace(K, factors=None, *, target="n", copy=True):
    r"""Scale each kernel to a fixed trace t: :math:`\tilde K_m = K_m\, t/\mathrm{tr}(K_m)`.

    :math:`t = n` (``target="n"``) is Kloft et al. 2009's ``K * n / trace(K)`` and Hinrichs et
    al. 2012's "mean diagonal 1" (Gaussian kernels are unchanged); ``target=1.0`` is Gönen &
    Alpaydın 2008's and Dinuzzo's unit trace (which only rescales C or lambda by n). Test
    kernels use the training factors, passed as ``factors``. A zero-trace kernel keeps f = 1.

    Parameters
    ----------
    {K}
        Kernels; square when ``factors`` is None.
    factors : ndarray of shape (n_kernels,) or float, default=None
        Factors computed on the training kernels; None computes them from ``K``.
    target : "n" or float, default="n"
        Trace after normalisation.
    {copy}

    Returns
    -------
    K_normalized : ndarray of the shape of ``K``
        The scaled kernels.
    factors : ndarray of shape (n_kernels,) or float
        The factors :math:`f_m = t/\mathrm{tr}(K_m)` (a float for a single matrix).
    """
    K, Ks, single = _as_stack(K, "K")
    if factors is None:
        if Ks.shape[1] != Ks.shape[2]:
            raise ValueError(f"normalize_trace computes factors from square training kernels; got "
                             f"shape {K.shape}. Pass the training factors for test kernels.")
        t = Ks.shape[1] if (isinstance(target, str) and target == "n") else target
        if isinstance(t, str) or not isinstance(t, numbers.Real) or t <= 0:
            raise ValueError(f"The 'target' parameter of normalize_trace must be 'n' or a positive "
                             f"float. Got {target!r} instead.")
        traces = np.trace(Ks, axis1=1, axis2=2).astype(np.float64)
        f = np.where(traces > 0, float(t) / np.where(traces > 0, traces, 1.0), 1.0)
    else:
        f = np.atleast_1d(np.asarray(factors, dtype=np.float64)).ravel()
        if f.size != Ks.shape[0]:
            raise ValueError(f"Got {f.size} factors for {Ks.shape[0]} kernels.")
    out = Ks.copy() if copy else Ks
    for m in range(out.shape[0]):
        out[m] *= f[m]
    return (out[0] if single else out), (float(f[0]) if single else f)


@_doc
def normalize_cosine(K, diag_rows=None, diag_cols=None, *, copy=True):
    r"""Cosine normalisation to a unit diagonal: :math:`k(x, z)/\sqrt{k(x, x)\, k(z, z)}`.

    (Kloft et al. 2009: "normalised to unit length in feature space".) A square training
    kernel takes its diagonals from ``K``; a test kernel ``K(X_test, X_train)`` needs
    ``diag_rows`` on the test points (:meth:`Kernel.diag`) and ``diag_cols`` on the training
    points. Points with :math:`k(x, x) = 0` get 0. A symmetric ``K`` stays exactly symmetric.

    Parameters
    ----------
    {K}
        Kernels.
    diag_rows : ndarray of shape (n_kernels, n_rows) or (n_rows,), default=None
        :math:`k(x_i, x_i)` of the row points.
    diag_cols : ndarray of shape (n_kernels, n_cols) or (n_cols,), default=None
        :math:`k(z_j, z_j)` of the column points.
    {copy}

    Returns
    -------
    K_normalized : ndarray of the shape of ``K``
        The normalised kernels.
    """
    K, Ks, single = _as_stack(K, "K")
    M, n_r, n_c = Ks.shape
    if (diag_rows is None) != (diag_cols is None):
        raise ValueError("normalize_cosine: give both diag_rows and diag_cols (test kernels) or "
                         "neither (square training kernels).")
    if diag_rows is None:
        if n_r != n_c:
            raise ValueError(f"normalize_cosine needs diag_rows and diag_cols for a non-square "
                             f"kernel; got shape {K.shape}.")
        dr = dc = np.diagonal(Ks, axis1=1, axis2=2).astype(np.float64)
    else:
        dr = np.asarray(diag_rows, dtype=np.float64).reshape(M, -1)
        dc = np.asarray(diag_cols, dtype=np.float64).reshape(M, -1)
        if dr.shape[1] != n_r or dc.shape[1] != n_c:
            raise ValueError(f"normalize_cosine: diagonals of shapes {dr.shape} and {dc.shape} do "
                             f"not match kernels of shape {Ks.shape}.")
    out = Ks.copy() if copy else Ks
    block = max(1, _BLOCK_ELEMENTS // max(n_c, 1))
    for m in range(M):
        r, c = np.maximum(dr[m], 0.0), np.maximum(dc[m], 0.0)
        for s in range(0, n_r, block):
            denom = np.sqrt(np.multiply.outer(r[s:s + block], c))
            blk = out[m, s:s + block]
            np.divide(blk, denom, out=blk, where=denom > 0, casting="same_kind")
            blk[denom == 0] = 0.0
    return out[0] if single else out


@_doc
def center(K, K_train=None):
    r"""Centre kernels in feature space, :math:`\phi(x) \to \phi(x) - \bar\phi`.

    Training (square ``K``): :math:`\tilde K = HKH`, :math:`H = I - \frac1n\mathbf 1\mathbf
    1^\top`. Test (``K`` of shape (n_test, n_train), ``K_train`` given), with the training
    mean :math:`\bar\phi`:

    .. math::
        \tilde K(x, x_j) = K(x, x_j) - \tfrac1n\textstyle\sum_k K(x, x_k)
        - \tfrac1n\sum_k K_{\rm train}(x_k, x_j) + \tfrac1{n^2}\sum_{kl}K_{\rm train}(x_k, x_l).

    Parameters
    ----------
    {K}
        Training kernels (square) or test kernels.
    K_train : ndarray of shape (n_kernels, n_train, n_train) or (n_train, n_train), default=None
        Training kernels, for test kernels.

    Returns
    -------
    K_centered : ndarray of the shape of ``K``
        Centred kernels (a new array; exactly symmetric for a symmetric training ``K``).
    """
    K = _as_stack(K, "K")[0]
    if K_train is None:
        if K.shape[-1] != K.shape[-2]:
            raise ValueError(f"center: training kernels must be square; got {K.shape}. Pass "
                             f"K_train to centre test kernels.")
        r = K.mean(axis=-1)
        symmetric = np.array_equal(K, np.swapaxes(K, -1, -2))
        c = r if symmetric else K.mean(axis=-2)
        a = K.mean(axis=(-2, -1))
    else:
        K_train = _as_stack(K_train, "K_train")[0]
        if K_train.shape[-1] != K.shape[-1] or K_train.shape[-2] != K_train.shape[-1]:
            raise ValueError(f"center: K of shape {K.shape} and K_train of shape {K_train.shape} "
                             f"do not match (K_train must be (n_train, n_train)).")
        r = K.mean(axis=-1)
        c = K_train.mean(axis=-2)
        a = K_train.mean(axis=(-2, -1))
    return K - (r[..., :, None] + c[..., None, :]) + a[..., None, None]


def alignment(K1, K2, *, centered=False):
    r"""Kernel-target or kernel-kernel alignment.

    Uncentred (Cristianini et al. 2002, the quantity behind Dinuzzo's Lemma 5):
    :math:`A(K_1, K_2) = \langle K_1, K_2\rangle_F / (\|K_1\|_F\,\|K_2\|_F)`.
    ``centered=True``: the centred alignment of Cortes, Mohri & Rostamizadeh (2012), the same
    ratio after centring both kernels (:func:`center`).

    Parameters
    ----------
    K1 : ndarray of shape (n_kernels, n, n) or (n, n)
        Kernel(s).
    K2 : ndarray of shape (n, n) or (n,)
        Second kernel, or a label vector ``y`` standing for :math:`yy^\top`.
    centered : bool, default=False
        Centre both kernels first.

    Returns
    -------
    a : float or ndarray of shape (n_kernels,)
        Alignment(s) in [-1, 1] (nan where a kernel is zero).
    """
    K1, Ks, single = _as_stack(K1, "K1")
    Ks = Ks.astype(np.float64, copy=False)
    K2 = np.asarray(K2, dtype=np.float64)
    if centered:
        Ks = center(Ks)
    if K2.ndim == 1:
        y = K2 - K2.mean() if centered else K2
        if y.shape[0] != Ks.shape[1]:
            raise ValueError(f"alignment: y has {y.shape[0]} entries for kernels of shape "
                             f"{Ks.shape[1:]}.")
        num = np.einsum("mij,i,j->m", Ks, y, y)
        norm2 = float(y @ y)
    else:
        if K2.shape != Ks.shape[1:]:
            raise ValueError(f"alignment: K1 of shape {K1.shape} and K2 of shape {K2.shape} do not "
                             f"match.")
        if centered:
            K2 = center(K2)
        num = np.einsum("mij,ij->m", Ks, K2)
        norm2 = float(np.sqrt(np.sum(K2 * K2)))
    norm1 = np.sqrt(np.einsum("mij,mij->m", Ks, Ks))
    with np.errstate(invalid="ignore", divide="ignore"):
        a = num / (norm1 * norm2)
    return float(a[0]) if single else a


def is_psd(K, tol=PSD_TOL):
    """Whether kernel matrices are symmetric positive semidefinite.

    A matrix passes when ``max|K - K^T| <= 1e-8 max|K|`` and its smallest eigenvalue is at
    least ``-tol * trace(K)`` (the rule of :func:`mklcore._validation.check_psd`).

    Parameters
    ----------
    K : ndarray of shape (n, n) or (n_kernels, n, n)
        Kernel matrix or stack.
    tol : float, default=1e-8
        Allowed negative eigenvalue relative to the trace.

    Returns
    -------
    psd : bool or ndarray of shape (n_kernels,) of bool
        One flag per kernel.
    """
    K, Ks, single = _as_stack(K, "K")
    if Ks.shape[1] != Ks.shape[2]:
        raise ValueError(f"is_psd needs square matrices; got shape {K.shape}.")
    flags = np.zeros(Ks.shape[0], dtype=bool)
    for m in range(Ks.shape[0]):
        Km = np.asarray(Ks[m], dtype=np.float64)
        asym, scale = _asymmetry(Km)
        if asym > 1e-8 * scale:
            continue
        try:
            check_psd(Km, tol=tol)
        except ValueError:
            continue
        flags[m] = True
    return bool(flags[0]) if single else flags


# ----------------------------------------------------------------------------------------
# transformer
# ----------------------------------------------------------------------------------------


class KernelBank(TransformerMixin, BaseEstimator):
    r"""Turn raw features into Gram stacks: the bridge between ``X`` and the MKL solvers.

    ``fit(X)`` resolves the kernels on training data; ``fit_transform(X)`` returns the training
    stack ``(n_kernels, n, n)``; ``transform(X)`` the stack ``(n_kernels, n_X, n_fit)`` between
    new and training points, normalised with the training statistics (the test stack every
    ``*_solve`` result and ``decision`` expect).

    Parameters
    ----------
    kernels : list of kernel specs, default=None
        Anything :func:`as_kernel` accepts (Kernel objects, ``(name, params[, columns])``
        tuples, callables), e.g. a :func:`kernel_bank`. None means ``[linear(),
        gaussian(gamma="scale")]``.
    normalize : {"trace", "cosine"} or None, default=None
        ``"trace"``: each training kernel scaled to trace n (:func:`normalize_trace`), test
        kernels by the same factor. ``"cosine"``: unit diagonal (:func:`normalize_cosine`),
        test kernels divided by :math:`\sqrt{k(x,x)\,k(x_j,x_j)}` with the training diagonal.
    dtype : {"float64", "float32"}, default="float64"
        Type of the returned stacks (float32 halves their memory).
    check_psd : {"auto", True, False}, default="auto"
        Checks of the training stack of :meth:`fit_transform` (see :func:`kernel_stack`):
        symmetry and positive semidefiniteness of the kernels not PSD by construction
        ("auto", i.e. user callables), of every kernel (True) or of none (False).

    Attributes
    ----------
    kernels_ : list of Kernel
        Fitted kernels (templates expanded, data-dependent widths resolved).
    n_kernels_ : int
        Number of kernels M.
    descriptions_ : list of str
        ``repr`` of each kernel, e.g. ``"gaussian(sigma=2.0, columns=[3])"``.
    kernel_names_ : list of str
        The name of each kernel: its bank's name (feature groups of :func:`kernel_bank`,
        e.g. ``"clinical: gaussian(sigma=1.0)"``), else its ``repr``.
    X_fit_ : ndarray of shape (n_fit, n_features) or sequence of strings
        Training data; test stacks are computed against it.
    n_features_in_ : int
        Number of features (for 2-D numeric input).
    train_diag_ : ndarray of shape (n_kernels, n_fit)
        Diagonals :math:`k_m(x_i, x_i)` of the unnormalised training kernels.
    trace_factors_ : ndarray of shape (n_kernels,)
        Trace factors :math:`f_m = n / \mathrm{tr}(K_m)` of the training kernels (used when
        ``normalize="trace"``).

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.kernels import KernelBank, kernel_bank
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> bank = KernelBank(kernels=kernel_bank("rbf", gamma=[0.1, 1.0]), normalize="trace")
    >>> bank.fit_transform(X[:20]).shape, bank.transform(X[20:]).shape
    ((2, 20, 20), (2, 10, 20))
    """

    def __init__(self, kernels=None, normalize=None, dtype="float64", check_psd="auto"):
        self.kernels = kernels
        self.normalize = normalize
        self.dtype = dtype
        self.check_psd = check_psd

    def _fit(self, X, transform, weights=None, workspace=0):
        """Fit on ``X``; return the normalised training stack if ``transform`` (their weighted
        sum if ``transform == "sum"``), else self."""
        validate_params("KernelBank", {"normalize": [Options("trace", "cosine"), None],
                                       "check_psd": [Options("auto", True, False)]},
                        {"normalize": self.normalize, "check_psd": self.check_psd})
        dtype = _check_dtype(self.dtype, "KernelBank")
        kernels = ([linear(), gaussian(gamma="scale")] if self.kernels is None
                   else resolve_columns(self.kernels, getattr(X, "columns", None), "KernelBank"))
        data = _Data(X, "X")
        if transform == "sum":
            diags = {}
            total, sink = self._sum_sink(data, weights, diags)
            _, kernels = _stack(kernels, data, None, dtype, None, self.check_psd,
                                "KernelBank", sink=sink)
            diag = np.stack([diags[i] for i in range(len(kernels))])
        elif transform:
            stack, kernels = _stack(kernels, data, None, dtype, None, self.check_psd,
                                    "KernelBank", workspace=workspace)
            diag = np.diagonal(stack, axis1=1, axis2=2).astype(np.float64)
        else:
            kernels = _fit_kernel_list(kernels, data)
            diag = np.stack([k.diag(data) for k in kernels])
        if any(k.family in ("dot", "dist") for k in kernels):
            X = data.numeric()
            self.n_features_in_ = X.shape[1]
        else:
            X = data.raw
            shape = np.shape(X)
            if len(shape) == 2:
                self.n_features_in_ = shape[1]
        self.X_fit_ = X
        self.kernels_ = kernels
        self.n_kernels_ = len(kernels)
        self.descriptions_ = [repr(k) for k in kernels]
        self.kernel_names_ = kernel_names(kernels)
        self.train_diag_ = diag
        traces = diag.sum(axis=1)
        n = diag.shape[1]
        self.trace_factors_ = np.where(traces > 0, n / np.where(traces > 0, traces, 1.0), 1.0)
        if transform == "sum":
            return total["total"]
        return self._normalize(stack, None) if transform else self

    @_doc
    def fit(self, X, y=None):
        """Resolve the kernels on training data and record normalisation statistics.

        Parameters
        ----------
        {X_fit}

        Returns
        -------
        self : KernelBank
            The fitted transformer.
        """
        return self._fit(X, transform=False)

    @_doc
    def fit_transform(self, X, y=None, *, workspace=0):
        """Fit and return the (normalised) training stack.

        Parameters
        ----------
        {X_fit}
        workspace : int, default=0
            Gram-sized float64 matrices that the solver reading the stack will allocate: the
            memory check before the stack is allocated counts them too, so that a fit that
            cannot finish is refused with a ``MemoryError`` instead of being killed later.

        Returns
        -------
        K : ndarray of shape (n_kernels, n_samples, n_samples)
            Training Gram stack.
        """
        return self._fit(X, transform=True, workspace=workspace)

    def transform(self, X):
        """Stack between ``X`` (rows) and the training data (columns).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of strings
            New data.

        Returns
        -------
        K : ndarray of shape (n_kernels, n_samples, n_fit)
            Test Gram stack, normalised with the training statistics.
        """
        check_is_fitted(self, "kernels_")
        data = self._check_transform_data(X)
        dtype = _check_dtype(self.dtype, "KernelBank")
        stack, _ = _stack(self.kernels_, data, _Data(self.X_fit_, "X_fit_"), dtype, None,
                          False, "KernelBank")
        return self._normalize(stack, data)

    def _check_transform_data(self, X):
        """``X`` as data for a test stack, with its number of features checked."""
        data = _Data(X, "X")
        if hasattr(self, "n_features_in_") and any(k.family in ("dot", "dist")
                                                   for k in self.kernels_):
            n_feat = data.numeric().shape[1]
            if n_feat != self.n_features_in_:
                raise ValueError(f"X has {n_feat} features, but KernelBank was fitted with "
                                 f"{self.n_features_in_} features.")
        return data

    def fit_transform_sum(self, X, weights=None):
        r"""Fit and return the weighted sum of the (normalised) training kernels.

        :math:`\sum_m w_mK_m` without the stack: each kernel is computed, normalised and added
        in turn, so memory is that of two Gram matrices instead of M and the kernels never
        leave the cache (for many small kernels, several times faster than summing
        :meth:`fit_transform`). Always float64. The fitted attributes are those of
        :meth:`fit_transform`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of strings
            Training data.
        weights : array-like of shape (n_kernels,), default=None
            Kernel weights :math:`w_m`; None sums with weight 1.

        Returns
        -------
        K : ndarray of shape (n_samples, n_samples)
            The weighted sum of the training kernels.
        """
        return self._fit(X, transform="sum", weights=weights)

    def transform_sum(self, X, weights=None):
        r"""The weighted sum of the (normalised) test kernels, without the stack.

        :math:`\sum_m w_mK_m(X, X_{fit})`, as :meth:`fit_transform_sum` does for training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of strings
            New data.
        weights : array-like of shape (n_kernels,), default=None
            Kernel weights :math:`w_m`; None sums with weight 1.

        Returns
        -------
        K : ndarray of shape (n_samples, n_fit)
            The weighted sum of the test kernels.
        """
        check_is_fitted(self, "kernels_")
        data = self._check_transform_data(X)
        total, sink = self._sum_sink(data, weights, None)
        _stack(self.kernels_, data, _Data(self.X_fit_, "X_fit_"), np.float64, None, False,
               "KernelBank", sink=sink)
        return total["total"]

    def _sum_sink(self, data, weights, diags):
        """``(state, sink)``: a sink for :func:`_stack` that normalises each kernel and adds it,
        weighted, into ``state["total"]`` (created by the first kernel); a training sink
        (``diags`` a dict) records the diagonals."""
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64).ravel()
        state = {}

        def sink(i, Ki):
            if weights is not None and i >= weights.size:
                raise ValueError(f"KernelBank: got {weights.size} weights for more kernels "
                                 f"(kernel {i} has none); give one weight per kernel.")
            if diags is not None:  # training kernel
                d = diags[i] = np.diagonal(Ki).astype(np.float64)
                if self.normalize == "trace":
                    trace = d.sum()
                    Ki *= Ki.shape[0] / trace if trace > 0 else 1.0
                elif self.normalize == "cosine":
                    normalize_cosine(Ki, copy=False)
            elif self.normalize == "trace":
                Ki *= self.trace_factors_[i]
            elif self.normalize == "cosine":
                normalize_cosine(Ki, self.kernels_[i].diag(data), self.train_diag_[i],
                                 copy=False)
            w = 1.0 if weights is None else weights[i]
            if "total" not in state:
                state["total"] = np.multiply(Ki, w) if w != 1.0 else Ki.copy()
            elif w == 1.0:
                state["total"] += Ki
            elif w != 0.0:
                state["total"] += w * Ki

        return state, sink

    def _normalize(self, stack, data):
        """Normalise a training (``data`` None) or test stack in place with training statistics."""
        if self.normalize == "trace":
            normalize_trace(stack, self.trace_factors_, copy=False)
        elif self.normalize == "cosine" and data is None:
            normalize_cosine(stack, copy=False)
        elif self.normalize == "cosine":
            diag_rows = np.stack([k.diag(data) for k in self.kernels_])
            normalize_cosine(stack, diag_rows, self.train_diag_, copy=False)
        return stack
