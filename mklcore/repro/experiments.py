"""Experiment protocol helpers: seeds, splits, grids, metrics, tidy result tables.

Every notebook follows the same pattern::

    def one_cell(*, dataset, C, repeat, seed):
        split = repeated_splits(y, n_repeats=1, seed=seed)[0]
        ...
        return {"accuracy": accuracy(y[test], y_pred), "n_iter": res.n_iter}

    df = run(one_cell, param_grid(dataset=["iono", "pima"], C=[1, 10]),
             n_repeats=20, seed=SEED, cache_dir=out_dir / "cache")
    summarize(df, by=["dataset", "C"], metrics="accuracy")

Randomness
----------
Nothing here touches a global random number generator. One master ``seed`` is turned
into per-repeat seeds with ``np.random.SeedSequence(seed).spawn(n)``
(:func:`spawn_seeds`), so that adding repeats never changes the earlier ones, and
every split helper takes an explicit ``seed``.
"""

import contextlib
import hashlib
import inspect
import itertools
import json
import math
import numbers
import os
import tempfile
import threading
import time
import warnings
from collections import namedtuple
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "spawn_seeds", "repeated_splits", "kfold_splits", "subsample", "param_grid",
    "accuracy", "error_rate", "mcc", "auc", "rmse", "sensitivity", "specificity",
    "score", "METRICS", "run", "summarize", "PairedTestResult", "paired_ttest", "wilcoxon",
    "cv52_f_test", "blas_thread_limit", "cap_blas_threads", "dask_client", "DASK_SCHEDULER_ENV",
    "code_version", "dependency_versions", "NUMERICAL_DEPENDENCIES", "PROGRESS_FILE_ENV",
]

#: columns that :func:`run` adds itself; settings and metrics may not use these names
_RESERVED = ("repeat", "seed")


# ---------------------------------------------------------------------------
# seeds and splits
# ---------------------------------------------------------------------------

def _check_seed(seed, name="seed"):
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"The '{name}' parameter must be a non-negative int. Got {seed!r} instead.")
    return int(seed)


def _check_count(value, name, minimum=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or value < minimum:
        raise ValueError(
            f"The '{name}' parameter must be an int >= {minimum}. Got {value!r} instead.")
    return int(value)


def spawn_seeds(seed, n):
    """Derive ``n`` independent integer seeds from one master seed.

    Uses ``np.random.SeedSequence(seed).spawn(n)``: child ``i`` depends only on
    ``seed`` and ``i``, so ``spawn_seeds(seed, 30)[:20] == spawn_seeds(seed, 20)``
    and adding repeats never changes the earlier ones.

    Parameters
    ----------
    seed : int
        Master seed, >= 0.
    n : int
        Number of seeds, >= 0.

    Returns
    -------
    seeds : list of int
        Seeds in ``[0, 2**32)``, usable as ``random_state`` anywhere in scikit-learn
        and as ``np.random.default_rng(s)``.

    Examples
    --------
    >>> from mklcore.experiments import spawn_seeds
    >>> spawn_seeds(0, 3) == spawn_seeds(0, 5)[:3]
    True
    """
    seed = _check_seed(seed)
    n = _check_count(n, "n", minimum=0)
    children = np.random.SeedSequence(seed).spawn(n)
    return [int(child.generate_state(1, dtype=np.uint32)[0]) for child in children]


def _is_categorical(y):
    from sklearn.utils.multiclass import type_of_target

    return type_of_target(y) in ("binary", "multiclass")


def _as_target(y):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got an array of shape {y.shape}.")
    if y.shape[0] < 2:
        raise ValueError(f"y must have at least 2 samples; got {y.shape[0]}.")
    return y


def _size(value, n, name, allow_none=True):
    """Turn a fraction in (0, 1) or an int count into a number of samples."""
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"The '{name}' parameter must be given.")
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"The '{name}' parameter must be a float in (0, 1) or an int "
                         f"in [1, {n}]. Got {value!r} instead.")
    if isinstance(value, numbers.Integral):
        if not 1 <= value <= n:
            raise ValueError(f"The '{name}' parameter must be an int in [1, {n}] "
                             f"(the number of samples). Got {value!r} instead.")
        return int(value)
    if isinstance(value, numbers.Real) and 0 < value < 1:
        return max(1, int(round(float(value) * n)))
    raise ValueError(f"The '{name}' parameter must be a float in (0, 1) or an int "
                     f"in [1, {n}]. Got {value!r} instead.")


def _draw(idx, y, size, seed, stratify):
    """Split ``idx`` into (chosen, rest) with ``len(chosen) == size``."""
    from sklearn.model_selection import train_test_split

    if size >= len(idx):
        return np.sort(idx), idx[:0]
    strat = y[idx] if stratify else None
    chosen, rest = train_test_split(idx, train_size=size, random_state=seed, stratify=strat)
    return np.sort(chosen), np.sort(rest)


def repeated_splits(y, *, n_repeats, test_size=0.2, val_size=None, train_size=None, seed=0,
                    stratify=True):
    """Random train / [validation] / test splits, one per repeat.

    Repeat ``r`` is drawn with seed ``spawn_seeds(seed, n_repeats)[r]``: the test set
    first, then the validation set from the rest, then (if ``train_size`` is given) the
    training set from what remains. Splits are stratified by class when ``y`` holds
    class labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Targets, used for stratification and to know ``n_samples``.
    n_repeats : int
        Number of splits, >= 1.
    test_size : float or int, default=0.2
        Fraction of *all* samples in (0, 1), or a number of samples.
    val_size : float or int, default=None
        Same convention; ``None`` means no validation set (and no ``"val"`` key).
    train_size : float or int, default=None
        Same convention; ``None`` means every sample not in the test or validation set.
        Papers that train on a fixed number of points (e.g. "100 training examples")
        pass an int.
    seed : int, default=0
        Master seed.
    stratify : bool, default=True
        Keep the class proportions of ``y`` in every part. Ignored (no stratification)
        when ``y`` is continuous (regression).

    Returns
    -------
    splits : list of dict
        One dict per repeat with keys ``"train"``, ``"val"`` (only if ``val_size`` is
        given), ``"test"`` (sorted integer index arrays, pairwise disjoint), and
        ``"repeat"`` and ``"seed"`` (the seed used for that repeat).

    Raises
    ------
    ValueError
        If ``n_repeats < 1``, a size is out of range, or the parts do not fit in
        ``n_samples``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.experiments import repeated_splits
    >>> y = np.array([0, 1] * 10)
    >>> s = repeated_splits(y, n_repeats=2, test_size=0.25, seed=0)
    >>> len(s), len(s[0]["train"]), len(s[0]["test"])
    (2, 15, 5)
    """
    y = _as_target(y)
    n_repeats = _check_count(n_repeats, "n_repeats")
    n = y.shape[0]
    n_test = _size(test_size, n, "test_size", allow_none=False)
    n_val = _size(val_size, n, "val_size")
    n_train = _size(train_size, n, "train_size")
    used = n_test + (n_val or 0) + (n_train or 0)
    if used > n or (n_train is None and n_test + (n_val or 0) >= n):
        raise ValueError(
            f"test_size={test_size!r}, val_size={val_size!r} and train_size={train_size!r} "
            f"need more than the {n} samples available (and at least one training sample).")
    strat = bool(stratify) and _is_categorical(y)
    splits = []
    for r, s in enumerate(spawn_seeds(seed, n_repeats)):
        rest = np.arange(n)
        test, rest = _draw(rest, y, n_test, s, strat)
        split = {}
        if n_val is not None:
            val, rest = _draw(rest, y, n_val, s, strat)
        if n_train is not None:
            rest, _ = _draw(rest, y, n_train, s, strat)
        split["train"] = rest
        if n_val is not None:
            split["val"] = val
        split["test"] = test
        split["repeat"] = r
        split["seed"] = s
        splits.append(split)
    return splits


def kfold_splits(y, n_splits=5, n_repeats=1, seed=0, *, stratify=True):
    """Repeated (stratified) K-fold cross-validation splits.

    Repeat ``r`` shuffles with seed ``spawn_seeds(seed, n_repeats)[r]``. With
    ``n_splits=2, n_repeats=5`` this is the 5x2 cv protocol of Dietterich (1998) and
    Alpaydin (1999), see :func:`cv52_f_test`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Targets, used for stratification.
    n_splits : int, default=5
        Number of folds, >= 2.
    n_repeats : int, default=1
        Number of repetitions with different shuffles, >= 1.
    seed : int, default=0
        Master seed.
    stratify : bool, default=True
        Use ``StratifiedKFold`` when ``y`` holds class labels (``KFold`` otherwise).

    Returns
    -------
    splits : list of dict
        ``n_repeats * n_splits`` dicts in order (repeat, fold) with keys ``"train"``,
        ``"test"`` (sorted index arrays), ``"repeat"``, ``"fold"`` and ``"seed"``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.experiments import kfold_splits
    >>> s = kfold_splits(np.array([0, 1] * 10), n_splits=2, n_repeats=5, seed=0)
    >>> len(s), s[1]["repeat"], s[1]["fold"]
    (10, 0, 1)
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    y = _as_target(y)
    n_splits = _check_count(n_splits, "n_splits", minimum=2)
    n_repeats = _check_count(n_repeats, "n_repeats")
    if n_splits > y.shape[0]:
        raise ValueError(f"n_splits={n_splits} is larger than the number of samples "
                         f"({y.shape[0]}).")
    strat = bool(stratify) and _is_categorical(y)
    out = []
    for r, s in enumerate(spawn_seeds(seed, n_repeats)):
        cls = StratifiedKFold if strat else KFold
        folds = cls(n_splits=n_splits, shuffle=True, random_state=s)
        for k, (train, test) in enumerate(folds.split(np.zeros(len(y)), y)):
            out.append({"train": np.sort(train), "test": np.sort(test), "repeat": r,
                        "fold": k, "seed": s})
    return out


def subsample(y, n, seed, stratify=True):
    """Indices of a random subset of ``n`` samples (class proportions kept).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Targets.
    n : int
        Subset size, 1 <= n <= n_samples; ``n == n_samples`` returns every index.
    seed : int
        Seed of this draw (for instance one of :func:`spawn_seeds`).
    stratify : bool, default=True
        Keep class proportions when ``y`` holds class labels.

    Returns
    -------
    idx : ndarray of shape (n,)
        Sorted integer indices.
    """
    y = _as_target(y)
    n = _check_count(n, "n")
    if n > y.shape[0]:
        raise ValueError(f"Cannot draw n={n} samples from {y.shape[0]}.")
    seed = _check_seed(seed)
    strat = bool(stratify) and _is_categorical(y)
    chosen, _ = _draw(np.arange(y.shape[0]), y, n, seed, strat)
    return chosen


# ---------------------------------------------------------------------------
# grids
# ---------------------------------------------------------------------------

def param_grid(**axes):
    """Cartesian product of parameter axes, as a list of dicts.

    The order is deterministic: keys keep the order they are passed in, and the last
    axis varies fastest (as in ``itertools.product``). :func:`run` also accepts any
    iterable of dicts, e.g. a hand-written list or ``sklearn.model_selection.ParameterGrid``
    (which sorts keys alphabetically).

    Parameters
    ----------
    **axes : list, tuple, ndarray or scalar
        Values of each parameter. A string or any other non-sequence is one value.

    Returns
    -------
    grid : list of dict
        ``param_grid()`` (no axes) is ``[{}]``: one setting with no parameters.

    Raises
    ------
    ValueError
        If an axis has no values.

    Examples
    --------
    >>> from mklcore.experiments import param_grid
    >>> param_grid(C=[1, 10], p=[1.5, 2])
    [{'C': 1, 'p': 1.5}, {'C': 1, 'p': 2}, {'C': 10, 'p': 1.5}, {'C': 10, 'p': 2}]
    """
    names, values = [], []
    for name, axis in axes.items():
        if isinstance(axis, (str, bytes, Mapping)) or not np.iterable(axis):
            axis = [axis]
        axis = [_py_scalar(v) for v in axis]
        if not axis:
            raise ValueError(f"Axis '{name}' of param_grid has no values.")
        names.append(name)
        values.append(axis)
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _py_scalar(value):
    """numpy scalar -> Python scalar (so grids print and serialise cleanly)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


# ---------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------

def _labels(y_true, y_pred, pos_label=None):
    """Return (y_true, y_pred as labels, classes, positive class).

    ``y_pred`` may be predicted labels, or, for binary problems, real decision
    values that are thresholded at 0 (``> 0`` -> positive class, as ``SVC.predict``).
    """
    y_true = np.asarray(y_true).ravel()
    y_pred = np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred have different lengths: {y_true.shape[0]} and "
                         f"{y_pred.shape[0]}.")
    if y_true.size == 0:
        raise ValueError("y_true is empty.")
    classes = np.unique(y_true)
    if pos_label is None:
        pos_label = classes[-1]
    is_labels = np.isin(y_pred, classes).all()
    if not is_labels and y_pred.dtype.kind in "fiu" and y_true.dtype.kind in "fiub":
        if len(classes) > 2:
            raise ValueError("Decision values can only be thresholded for binary targets; "
                             "pass predicted labels for multiclass problems.")
        neg = [c for c in classes if c != pos_label]
        neg_label = neg[0] if neg else (-1 if pos_label == 1 else 0)
        y_pred = np.where(y_pred > 0, pos_label, neg_label)
    return y_true, y_pred, classes, pos_label


def accuracy(y_true, y_pred):
    """Fraction of correct predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels, or (binary problems) decision values thresholded at 0.

    Returns
    -------
    accuracy : float
    """
    y_true, y_pred, _, _ = _labels(y_true, y_pred)
    return float(np.mean(y_true == y_pred))


def error_rate(y_true, y_pred):
    """Fraction of wrong predictions, ``1 - accuracy`` (same arguments as :func:`accuracy`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels (or binary decision values).

    Returns
    -------
    error : float
    """
    return 1.0 - accuracy(y_true, y_pred)


def mcc(y_true, y_pred):
    """Matthews correlation coefficient (``sklearn.metrics.matthews_corrcoef``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels (or binary decision values, thresholded at 0).

    Returns
    -------
    mcc : float
        In [-1, 1]; 0 when a confusion-matrix margin is empty.
    """
    from sklearn.metrics import matthews_corrcoef

    y_true, y_pred, _, _ = _labels(y_true, y_pred)
    return float(matthews_corrcoef(y_true, y_pred))


def auc(y_true, decision):
    """Area under the ROC curve from real decision values (binary problems).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels; the larger label is the positive class.
    decision : array-like of shape (n_samples,)
        Decision values ``f(x)``, larger meaning more positive.

    Returns
    -------
    auc : float
    """
    from sklearn.metrics import roc_auc_score

    y_true = np.asarray(y_true).ravel()
    decision = np.asarray(decision, dtype=float).ravel()
    classes = np.unique(y_true)
    if len(classes) != 2:
        raise ValueError(f"auc needs exactly two classes in y_true; got {len(classes)}.")
    if decision.shape != y_true.shape:
        raise ValueError(f"y_true and decision have different lengths: {y_true.shape[0]} and "
                         f"{decision.shape[0]}.")
    return float(roc_auc_score(y_true == classes[-1], decision))


def rmse(y_true, y_pred):
    """Root mean squared error.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted real values.

    Returns
    -------
    rmse : float
    """
    y_true = np.asarray(y_true, dtype=float).ravel()
    y_pred = np.asarray(y_pred, dtype=float).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred have different lengths: {y_true.shape[0]} and "
                         f"{y_pred.shape[0]}.")
    if y_true.size == 0:
        raise ValueError("y_true is empty.")
    return float(np.sqrt(np.mean((y_true - y_pred) ** 2)))


def sensitivity(y_true, y_pred, *, pos_label=None):
    """True positive rate (recall of the positive class).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels (or binary decision values, thresholded at 0).
    pos_label : label, default=None
        Positive class; the larger label by default (``1`` for {-1, 1} and {0, 1}).

    Returns
    -------
    sensitivity : float
        ``nan`` if there are no positive samples.
    """
    y_true, y_pred, _, pos = _labels(y_true, y_pred, pos_label)
    mask = y_true == pos
    return float(np.mean(y_pred[mask] == pos)) if mask.any() else float("nan")


def specificity(y_true, y_pred, *, pos_label=None):
    """True negative rate (recall of the negative classes).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels (or binary decision values, thresholded at 0).
    pos_label : label, default=None
        Positive class; the larger label by default.

    Returns
    -------
    specificity : float
        ``nan`` if there are no negative samples.
    """
    y_true, y_pred, _, pos = _labels(y_true, y_pred, pos_label)
    mask = y_true != pos
    return float(np.mean(y_pred[mask] != pos)) if mask.any() else float("nan")


#: metric name -> function(y_true, y_pred_or_decision), used by :func:`score`
METRICS = {
    "accuracy": accuracy,
    "error": error_rate,
    "mcc": mcc,
    "auc": auc,
    "rmse": rmse,
    "sensitivity": sensitivity,
    "specificity": specificity,
}


def score(metric, y_true, y_pred):
    """Evaluate a metric by name.

    Parameters
    ----------
    metric : str or callable
        One of ``METRICS`` ({"accuracy", "error", "mcc", "auc", "rmse", "sensitivity",
        "specificity"}, case-insensitive), or a callable ``f(y_true, y_pred)``.
    y_true : array-like of shape (n_samples,)
        True targets.
    y_pred : array-like of shape (n_samples,)
        Predictions: labels, or decision values (required for ``"auc"``; thresholded at
        0 for the label metrics of a binary problem), or real values for ``"rmse"``.

    Returns
    -------
    value : float

    Raises
    ------
    ValueError
        If ``metric`` is not a known name.
    """
    if callable(metric):
        return float(metric(y_true, y_pred))
    key = str(metric).lower()
    if key not in METRICS:
        raise ValueError(f"Unknown metric {metric!r}. Known metrics: {', '.join(sorted(METRICS))}.")
    return METRICS[key](y_true, y_pred)


# ---------------------------------------------------------------------------
# JSON helpers for the cache
# ---------------------------------------------------------------------------

class _NotJSON(TypeError):
    pass


def _jsonable(value, where):
    """Convert numpy scalars/arrays, tuples and nested containers to JSON types."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf" and value.dtype != object:
            raise _NotJSON(f"{where}: arrays of dtype {value.dtype} cannot be stored as JSON.")
        return [_jsonable(v, where) for v in value.tolist()] if value.ndim else \
            _jsonable(value.item(), where)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, where) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _NotJSON(f"{where}: dict keys must be str, got {k!r}.")
            out[k] = _jsonable(v, where)
        return out
    raise _NotJSON(f"{where}: a value of type {type(value).__name__} cannot be stored as "
                   f"JSON ({value!r:.60}).")


def _canonical(obj):
    """Canonical JSON text: sorted keys, no spaces, floats by repr (round-trip exact)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True)


def _func_identity(func):
    """Name (and bound arguments of a functools.partial) identifying ``func``."""
    if isinstance(func, partial):
        inner = _func_identity(func.func)
        try:
            args = _jsonable(list(func.args), "partial args")
            keywords = _jsonable(dict(func.keywords), "partial keywords")
        except _NotJSON:
            args = [repr(a) for a in func.args]
            keywords = {k: repr(v) for k, v in func.keywords.items()}
        return {"partial": inner, "args": args, "keywords": keywords}
    module = getattr(func, "__module__", None) or type(func).__module__
    name = getattr(func, "__qualname__", None) or type(func).__qualname__
    return f"{module}.{name}"


_CODE_VERSION = None


def code_version():
    """Fingerprint of the installed mklcore code: sha256 of every ``.py`` file of the package.

    Part of every cache key of :func:`run`, so that a cell computed by other code (a changed
    solver, kernel or experiment function) is never reused: editing any module of mklcore
    invalidates the cached cells, and a resumed run recomputes them.

    Returns
    -------
    version : str
        16 hexadecimal digits.
    """
    global _CODE_VERSION
    if _CODE_VERSION is None:
        package = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256()
        for path in sorted(package.rglob("*.py")):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
        _CODE_VERSION = digest.hexdigest()[:16]
    return _CODE_VERSION


#: distributions whose version is part of every cache key of :func:`run` (with the BLAS in use)
NUMERICAL_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "cvxpy", "numba")

_BLAS = None


#: prints the BLAS libraries that numpy and scipy load, as threadpoolctl reports them
_BLAS_PROBE = ("import json, numpy, scipy.linalg\n"
               "from threadpoolctl import threadpool_info\n"
               "print(json.dumps(sorted({(str(i.get('internal_api')), str(i.get('version')), "
               "str(i.get('architecture'))) for i in threadpool_info() "
               "if i.get('user_api') == 'blas'})))")


def _blas_in_use():
    """The BLAS libraries numpy and scipy compute with: ``internal_api``, ``version`` and
    ``architecture`` (the CPU kernel OpenBLAS chose), sorted.

    Asked once per process from a fresh interpreter (same executable and environment) that
    imports only numpy and scipy.linalg, so that the answer does not depend on what this
    process loaded before (cvxpy's solvers bring their own BLAS once they ran); in this
    process if that fails.
    """
    global _BLAS
    if _BLAS is None:
        import subprocess
        import sys

        try:
            out = subprocess.run([sys.executable, "-c", _BLAS_PROBE], capture_output=True,
                                 text=True, timeout=120, check=True)
            _BLAS = [tuple(item) for item in json.loads(out.stdout)]
        except (OSError, subprocess.SubprocessError, ValueError):
            import scipy.linalg  # noqa: F401 - loads scipy's own BLAS beside numpy's
            from threadpoolctl import threadpool_info

            _BLAS = sorted({(str(i.get("internal_api")), str(i.get("version")),
                             str(i.get("architecture")))
                            for i in threadpool_info() if i.get("user_api") == "blas"})
    return [{"internal_api": api, "version": version, "architecture": arch}
            for api, version, arch in _BLAS]


def dependency_versions():
    """Versions of the numerical dependencies and the BLAS this process computes with.

    Part of every cache key of :func:`run`, beside :func:`code_version`: a cell computed with
    another numpy, scipy, scikit-learn, cvxpy or numba, or on another BLAS (another
    implementation, version or CPU kernel, e.g. OpenBLAS' ``Haswell`` against
    ``SkylakeX``), is recomputed instead of being loaded from the cache, since such a change
    can move results in their last bits or more.

    Returns
    -------
    versions : dict
        ``{name: version}`` for :data:`NUMERICAL_DEPENDENCIES` (read from the installed
        distributions, ``"not installed"`` if absent; nothing is imported) and ``"blas"``: a
        sorted list of ``{"internal_api", "version", "architecture"}`` of the BLAS libraries
        that numpy and scipy load (``threadpoolctl.threadpool_info`` in a fresh interpreter,
        once per process; thread counts and paths are left out, they do not change
        results).
    """
    import importlib.metadata

    versions = {}
    for name in NUMERICAL_DEPENDENCIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["blas"] = _blas_in_use()
    return versions


def _func_source(func):
    """Source text of a cell function defined outside mklcore (e.g. in a notebook cell)."""
    while isinstance(func, partial):
        func = func.func
    func = inspect.unwrap(func)
    module = getattr(func, "__module__", "") or ""
    if module == "mklcore" or module.startswith("mklcore."):
        return None  # covered by code_version()
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        return None


def _cell_key(func_id, setting, repeat, seed, code=None):
    payload = {"func": func_id, "setting": setting, "repeat": repeat, "seed": seed}
    if code is not None:
        payload["code"] = code
    return hashlib.sha256(_canonical(payload).encode("ascii")).hexdigest()


def _rows_checksum(rows, key):
    """sha256 of the canonical JSON of a cell's key and rows (stored beside them in the cache)."""
    return hashlib.sha256(_canonical({"key": key, "rows": rows}).encode("ascii")).hexdigest()


def _read_cell(path, key):
    """Rows of the cache file of the cell ``key`` and ``None``, or ``None`` and why the file
    cannot be trusted (unreadable, empty, altered, or the file of another cell)."""
    try:
        payload = json.loads(path.read_text(encoding="ascii"))
        rows, checksum = payload["rows"], payload["checksum"]
    except (ValueError, KeyError, UnicodeDecodeError, TypeError):
        return None, "unreadable or written by an older version"
    if not isinstance(payload, dict) or "key" not in payload:
        return None, "written by an older version, without its cell key"
    if payload["key"] != key:
        return None, (f"it holds the cell {str(payload['key'])[:16]}..., not this one: "
                      f"copied or renamed")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and r for r in rows):
        return None, "structurally empty"
    if _rows_checksum(rows, key) != checksum:
        return None, "its content does not match its checksum"
    return rows, None


def _check_writable(cache_dir, n_missing):
    """Raise an error naming ``cache_dir`` unless a file can be created in it.

    ``PermissionError`` for a read-only folder (the error of the same ``OSError`` type as the
    cause otherwise, e.g. ``FileExistsError`` when ``cache_dir`` is a file).
    """
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test.", suffix=".tmp", dir=cache_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise type(exc)(
            f"cache_dir {str(cache_dir)!r} is not writable ({exc.strerror or exc}), so the "
            f"{n_missing} missing cells could not be saved; nothing was computed. Pass a "
            f"writable cache_dir, or cache_dir=None to run without a cache.") from exc


def _atomic_write(path, text):
    folder = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# threads and workers
# ---------------------------------------------------------------------------

#: environment variable naming the Dask scheduler that :func:`run` sends its cells to
DASK_SCHEDULER_ENV = "MKLCORE_DASK_SCHEDULER"


def blas_thread_limit(n_jobs=1):
    """BLAS/OpenMP threads per worker when ``n_jobs`` workers share this machine.

    Parameters
    ----------
    n_jobs : int or None, default=1
        Number of concurrent workers, as given to ``joblib.Parallel`` (``None`` and
        negative values are resolved by ``joblib.effective_n_jobs``, which follows
        ``joblib.parallel_config``).

    Returns
    -------
    limit : int
        ``max(1, cores // workers)``, with ``cores`` from ``joblib.cpu_count()`` (which
        honours CPU affinity and container quotas).
    """
    import joblib

    workers = max(1, int(joblib.effective_n_jobs(n_jobs)))
    return max(1, joblib.cpu_count() // workers)


def cap_blas_threads(max_threads):
    """Cap the BLAS and OpenMP thread pools of this process at ``max_threads``.

    Pools that already use fewer threads (e.g. because ``OMP_NUM_THREADS=1`` is set) are
    left alone: the cap never raises a thread count. Oversubscription (``n_jobs`` workers
    each starting one BLAS thread per core) makes a loaded machine many times slower.

    Parameters
    ----------
    max_threads : int
        Upper bound, >= 1; usually :func:`blas_thread_limit`.

    Returns
    -------
    limiter : threadpoolctl limiter
        The cap applies at once. Used as a context manager (``with cap_blas_threads(1):``)
        the previous limits come back at the end of the block; otherwise it stays.
    """
    from threadpoolctl import ThreadpoolController

    max_threads = _check_count(max_threads, "max_threads")
    controller = ThreadpoolController()
    over = [info["filepath"] for info in controller.info()
            if info.get("num_threads", 0) > max_threads]
    return controller.select(filepath=over).limit(limits=max_threads)


_DASK_CLIENTS = {}


def dask_client(scheduler):
    """Return a ``dask.distributed`` client for ``scheduler`` (one per process and address).

    Parameters
    ----------
    scheduler : str
        ``"local"`` starts a ``LocalCluster`` on this machine (one single-threaded worker
        process per core); anything else is a scheduler address such as
        ``"tcp://10.0.0.5:8786"`` of a running cluster.

    Returns
    -------
    client : distributed.Client
        Kept open and reused by later calls with the same ``scheduler`` (closed when the
        interpreter exits).

    Raises
    ------
    ImportError
        If ``dask.distributed`` is missing (``pip install "mklcore[dask]"``).
    """
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(f"The 'scheduler' parameter must be 'local' or a scheduler address "
                         f"such as 'tcp://host:8786'. Got {scheduler!r} instead.")
    scheduler = scheduler.strip()
    client, _ = _DASK_CLIENTS.get(scheduler, (None, None))
    if client is not None and client.status == "running":
        return client
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ImportError(f"Running experiments on Dask ({DASK_SCHEDULER_ENV}={scheduler!r}) "
                          f"needs dask.distributed: pip install \"mklcore[dask]\".") from exc
    cluster = None
    if scheduler == "local":
        import joblib

        cluster = LocalCluster(n_workers=joblib.cpu_count(), threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster, set_as_default=False)
    else:
        client = Client(scheduler, set_as_default=False)
    if not _DASK_CLIENTS:
        import atexit

        atexit.register(_close_dask_clients)
    _DASK_CLIENTS[scheduler] = (client, cluster)  # the cluster (if ours) closes with it
    return client


def _close_dask_clients():
    for client, cluster in _DASK_CLIENTS.values():
        try:
            client.close()
            if cluster is not None:
                cluster.close()
        except Exception:  # pragma: no cover - best effort at interpreter exit
            pass
    _DASK_CLIENTS.clear()


def _backend(scheduler):
    """Context manager selecting the joblib backend of :func:`run` (Dask or unchanged)."""
    if scheduler is None:
        scheduler = os.environ.get(DASK_SCHEDULER_ENV, "").strip() or None
    if scheduler is None:
        return contextlib.nullcontext()
    from joblib import parallel_config

    return parallel_config(backend="dask", client=dask_client(scheduler))


#: seconds between two checks of a worker process that the process of run() is alive
_PARENT_POLL = 0.5
#: the process of run() a worker process watches (set once per worker)
_WATCHED_PARENT = None


def _watch_parent(parent):
    """End this worker process as soon as the process ``parent`` of :func:`run` is gone.

    joblib's loky workers are children of the process that calls :func:`run`; when it dies
    without closing them (``kill -9``, a crash, an out-of-memory kill) they are re-parented and
    would finish their cell, then idle until loky's timeout (300 s). A daemon thread started
    with the first cell a worker runs polls ``os.getppid()`` every :data:`_PARENT_POLL` seconds
    and calls ``os._exit`` once the parent changed. Only for workers that are direct children
    of ``parent`` (not Dask workers); on POSIX (on Windows a dead parent's pid stays).
    """
    global _WATCHED_PARENT
    if _WATCHED_PARENT == parent or os.getppid() != parent:
        return
    _WATCHED_PARENT = parent

    def watch():
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL)
        os._exit(1)  # the parent died: its results can no longer be delivered

    threading.Thread(target=watch, name="mklcore-run-parent-watch", daemon=True).start()


def _call_cell(func, index, setting, repeat, seed, blas_limit=None, parent=None):
    if parent is not None and os.getpid() != parent:
        _watch_parent(parent)
    if blas_limit is not None and os.getpid() != parent:
        # a worker process: cap its thread pools for this cell (the parent process, which
        # also runs the cells of the sequential and threading backends, caps itself in run())
        with cap_blas_threads(blas_limit):
            return _call_cell(func, index, setting, repeat, seed)
    try:
        out = func(**setting, repeat=repeat, seed=seed)
    except Exception as exc:
        if hasattr(exc, "add_note"):
            exc.add_note(f"mklcore.experiments.run: raised in cell {index} with setting "
                         f"{setting!r}, repeat={repeat}, seed={seed}.")
        raise
    return index, out


def _rows_of(out, index, setting):
    where = f"Cell {index} (setting {setting!r})"
    if isinstance(out, Mapping):
        rows = [out]
    elif isinstance(out, (list, tuple)) and all(isinstance(r, Mapping) for r in out):
        rows = list(out)
    else:
        raise TypeError(f"{where}: func must return a dict of metrics or a list of dicts; "
                        f"got {type(out).__name__}.")
    clean = []
    for row in rows:
        new = {}
        for key, value in row.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: metric names must be str; got {key!r}.")
            if key in setting or key in _RESERVED:
                raise ValueError(f"{where}: func returned the key {key!r}, which is already a "
                                 f"column of the result (a setting, 'repeat' or 'seed'). "
                                 f"Rename the metric.")
            try:
                new[key] = _jsonable(value, where)
            except _NotJSON:
                new[key] = value  # kept as is; only a problem when caching
        clean.append(new)
    return clean


#: environment variable naming a file where :func:`run` keeps a record of its progress
PROGRESS_FILE_ENV = "MKLCORE_PROGRESS_FILE"
#: seconds between two rewrites of the progress file while cells finish
_PROGRESS_EVERY = 0.5
#: cells loaded and computed by the runs of this process so far (a notebook kernel's totals)
_SESSION = {"runs": 0, "cached": 0, "computed": 0}


class _ProgressFile:
    """The progress of one :func:`run` call, kept in the file named by ``$MKLCORE_PROGRESS_FILE``.

    A notebook kernel is another process than the one that runs the notebook (papermill), and
    its printed output goes into the notebook; this file is a channel to that process that
    leaves the notebook alone. ``scripts/run_notebooks.py`` sets the variable and prints the
    record to its terminal. The record (JSON, replaced atomically, rewritten at most every
    :data:`_PROGRESS_EVERY` seconds and at the start and end of the run): ``desc``, ``done``
    and ``total`` cells, ``cached`` (cells loaded from the cache), ``started`` and ``updated``
    (``time.time()``), ``finished`` and ``session`` (the cells loaded and computed by every
    run of this process so far). Nothing is written when the variable is unset; a file that
    cannot be written is skipped silently (progress is a convenience, never a failure).
    """

    def __init__(self, desc, total, cached):
        path = os.environ.get(PROGRESS_FILE_ENV, "").strip()
        self.path = Path(path) if path else None
        self.record = {"desc": str(desc), "done": cached, "total": total, "cached": cached,
                       "started": time.time(), "updated": None, "finished": False}
        self.last = 0.0
        _SESSION["runs"] += 1
        _SESSION["cached"] += cached
        self.write(force=True)

    def update(self, done):
        self.record["done"] = done
        _SESSION["computed"] += 1
        self.write()

    def finish(self):
        self.record["finished"] = True
        self.write(force=True)

    def write(self, force=False):
        now = time.time()
        if self.path is None or (not force and now - self.last < _PROGRESS_EVERY):
            return
        self.last = now
        self.record["updated"] = now
        text = json.dumps({**self.record, "session": dict(_SESSION)})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".progress.", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        except OSError:
            pass


def run(func, grid, *, n_repeats=1, seed=0, cache_dir=None, n_jobs=1, progress=True,
        desc=None, scheduler=None):
    """Run ``func`` on every setting of a grid and every repeat; return a tidy table.

    For each setting in ``grid`` and each repeat ``r`` this calls
    ``func(**setting, repeat=r, seed=s)`` with ``s = spawn_seeds(seed, n_repeats)[r]``
    (the same ``s`` for every setting, so methods are compared on the same splits).

    Parameters
    ----------
    func : callable
        ``func(**setting, repeat, seed)`` returning a dict of metrics (e.g.
        ``{"accuracy": 0.91, "n_iter": 12, "converged": True, "fit_time": 0.3}``) or a
        list of such dicts (one result row each, e.g. one per point of a
        regularisation path). It must not depend on a global random state: derive all
        randomness from ``seed``. With a process-based backend it is sent to the
        workers with cloudpickle (joblib's default ``loky``), so functions defined in
        a notebook work too.
    grid : iterable of dict
        Settings, e.g. from :func:`param_grid`, a list of dicts, or
        ``sklearn.model_selection.ParameterGrid``. Keys must be str and may not be
        ``"repeat"`` or ``"seed"``.
    n_repeats : int, default=1
        Repeats per setting, >= 1.
    seed : int, default=0
        Master seed; per-repeat seeds come from :func:`spawn_seeds`.
    cache_dir : str or Path, default=None
        If given, every finished cell is written atomically to
        ``cache_dir/<key>.json`` where ``key`` is the sha256 of the canonical JSON of
        (qualified name of ``func``, setting, repeat, seed, and the code and environment:
        :func:`code_version` of mklcore, the source of ``func`` when it is defined outside
        mklcore, e.g. in a notebook, and :func:`dependency_versions`, the versions of numpy,
        scipy, scikit-learn, cvxpy, numba and of the BLAS in use). A rerun loads the cells
        found there and computes only the missing ones, so an interrupted run resumes
        where it stopped. Each file stores its key, and its checksum covers key and rows: a
        file copied or renamed to another cell's name, altered, or written by an older
        version (without the key) is ignored with a ``RuntimeWarning`` and recomputed. If
        cells are missing, the folder must be writable: otherwise ``PermissionError`` naming
        it is raised before any cell is computed (a read-only folder that holds every cell
        is fine); a file that cannot be written later (a full disk) is skipped with a
        ``RuntimeWarning``, its cell kept in the result. The key does *not* cover the data
        of ``func``: use a fresh folder (or add e.g. ``version=2`` to the grid) after
        changing them.
        Settings and returned values must then be JSON-serialisable (numbers,
        strings, bools, None, lists, numpy scalars and numeric arrays).
    n_jobs : int or None, default=1
        Passed to ``joblib.Parallel``. The backend follows
        ``joblib.parallel_config(backend=...)``, so threads, loky processes, Dask or
        Ray can be used; ``None`` takes ``n_jobs`` from ``parallel_config`` too. Every
        worker caps its BLAS/OpenMP thread pools at :func:`blas_thread_limit` ``(n_jobs)``
        threads (``cores // n_jobs``; see :func:`cap_blas_threads`), so that parallel
        cells do not oversubscribe the machine.
    progress : bool, default=True
        Show a ``tqdm.auto`` bar over finished cells. Set the environment variable
        ``TQDM_DISABLE=1`` to silence it everywhere (CI). Independently of it, when the
        environment variable ``MKLCORE_PROGRESS_FILE`` (:data:`PROGRESS_FILE_ENV`) names a
        file, the run keeps a JSON record of its progress there (cells done of total, from the
        cache, start time), which ``scripts/run_notebooks.py`` prints to its terminal while a
        notebook runs.
    desc : str, default=None
        Label of the progress bar; the name of ``func`` by default.
    scheduler : str, default=None
        Run the cells on a Dask cluster through joblib's Dask backend: ``"local"`` (a
        ``LocalCluster`` on this machine) or a scheduler address such as
        ``"tcp://10.0.0.5:8786"`` (see :func:`dask_client`; needs the ``dask`` extra).
        ``None`` reads the environment variable ``MKLCORE_DASK_SCHEDULER``
        (:data:`DASK_SCHEDULER_ENV`); unset or empty means the local joblib backend.
        The cluster then sets the parallelism (``n_jobs`` is ignored); the cache and the
        result are the same as with a local run, since every cell depends only on its
        setting and seed and the cache is written by this process.

    Returns
    -------
    df : pandas.DataFrame
        One row per setting x repeat (x returned row), in grid order then repeat order
        whatever ``n_jobs`` is. Columns: the setting keys (in order of first
        appearance), ``repeat``, ``seed``, then the metric keys (in order of first
        appearance; missing values are NaN). Numpy scalars and arrays come back as
        Python scalars and lists, so cached and fresh results give identical tables.
        ``df.attrs`` holds ``n_cached`` and ``n_computed`` (cells loaded from and
        written to the cache) and ``cache_dir``.

    Raises
    ------
    ValueError
        If the grid is empty, ``n_repeats < 1``, a setting uses a reserved name, or
        ``func`` returns a key that is already a column.
    TypeError
        If a setting is not a dict, ``func`` returns something else than a dict or a
        list of dicts, or (with ``cache_dir``) a value is not JSON-serialisable.

    Notes
    -----
    Exceptions raised by ``func`` propagate (with a note naming the cell); cells that
    finished before are already in the cache.

    Examples
    --------
    >>> from mklcore.experiments import run, param_grid
    >>> def f(*, C, repeat, seed):
    ...     return {"score": C * 10 + repeat}
    >>> run(f, param_grid(C=[1, 2]), n_repeats=2, progress=False)[["C", "repeat", "score"]]
       C  repeat  score
    0  1       0     10
    1  1       1     11
    2  2       0     20
    3  2       1     21
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    if not callable(func):
        raise TypeError(f"func must be callable; got {type(func).__name__}.")
    if isinstance(grid, Mapping):
        raise TypeError("grid must be an iterable of dicts (one per setting), not a single "
                        "dict; build a product with param_grid(**axes) or wrap it in a list.")
    grid = [dict(s) if isinstance(s, Mapping) else s for s in grid]
    if not grid:
        raise ValueError("The grid is empty: pass at least one setting (use [{}] for a "
                         "single setting without parameters).")
    for i, setting in enumerate(grid):
        if not isinstance(setting, dict):
            raise TypeError(f"Setting {i} of the grid is a {type(setting).__name__}, "
                            f"not a dict.")
        for key in setting:
            if not isinstance(key, str):
                raise TypeError(f"Setting {i} has a non-str key {key!r}.")
            if key in _RESERVED:
                raise ValueError(f"Setting {i} uses the reserved name {key!r}; run() passes "
                                 f"'repeat' and 'seed' itself.")
    n_repeats = _check_count(n_repeats, "n_repeats")
    seeds = spawn_seeds(seed, n_repeats)
    cells = [(i * n_repeats + r, setting, r, seeds[r])
             for i, setting in enumerate(grid) for r in range(n_repeats)]

    func_id = _func_identity(func)
    code = {"mklcore": code_version(), "source": _func_source(func),
            "dependencies": dependency_versions()}
    paths = {}
    results = {}
    if cache_dir is not None:
        cache_dir = Path(cache_dir)
        for index, setting, r, s in cells:
            try:
                jsetting = _jsonable(setting, f"Setting {index // n_repeats} of the grid")
            except _NotJSON as exc:
                raise TypeError(f"{exc} With cache_dir, settings must be JSON-serialisable: "
                                f"pass a name and look the object up inside func.") from None
            key = _cell_key(func_id, jsetting, r, s, code)
            path = cache_dir / f"{key}.json"
            paths[index] = path
            if path.is_file():
                rows, problem = _read_cell(path, key)
                if problem is None:
                    results[index] = rows
                else:
                    warnings.warn(f"Ignoring cache file {path} ({problem}); recomputing it.",
                                  RuntimeWarning, stacklevel=2)
    n_cached = len(results)
    todo = [cell for cell in cells if cell[0] not in results]
    if cache_dir is not None and todo:  # before any work: a result that cannot be saved is lost
        _check_writable(cache_dir, len(todo))

    if desc is None:
        desc = getattr(func, "__name__", None) or getattr(getattr(func, "func", None),
                                                          "__name__", "run")
    bar_kwargs = {} if progress else {"disable": True}
    bar = tqdm(total=len(cells), initial=n_cached, desc=desc, unit="cell", **bar_kwargs)
    progress_file = _ProgressFile(desc, len(cells), n_cached)
    context = contextlib.ExitStack()
    try:
        if todo:
            context.enter_context(_backend(scheduler))
            blas_limit = blas_thread_limit(n_jobs)
            context.enter_context(cap_blas_threads(blas_limit))
            parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            jobs = (delayed(_call_cell)(func, index, setting, r, s, blas_limit, os.getpid())
                    for index, setting, r, s in todo)
            by_index = {cell[0]: cell for cell in cells}
            stream = parallel(jobs)
        else:
            stream = ()
        try:
            for index, out in stream:
                _, setting, r, s = by_index[index]
                rows = _rows_of(out, index, setting)
                if cache_dir is not None:
                    key = paths[index].stem
                    payload = {"key": key, "func": func_id, "setting": _jsonable(setting, ""),
                               "repeat": r, "seed": s, "code": code, "rows": rows,
                               "checksum": _rows_checksum(rows, key)}
                    try:
                        text = json.dumps(payload, indent=1, ensure_ascii=True,
                                          allow_nan=True) + "\n"
                    except TypeError as exc:
                        raise TypeError(f"Cell {index} (setting {setting!r}): {exc}. With "
                                        f"cache_dir, func must return JSON-serialisable "
                                        f"values (numbers, strings, bools, lists, numpy "
                                        f"arrays).") from None
                    rows = json.loads(text)["rows"]  # exactly what a rerun will load
                    try:
                        _atomic_write(paths[index], text)
                    except OSError as exc:  # e.g. the disk filled up: keep the result
                        warnings.warn(f"Could not write the cache file {paths[index]} "
                                      f"({exc.strerror or exc}); cell {index} is kept in the "
                                      f"result but not cached.", RuntimeWarning, stacklevel=2)
                results[index] = rows
                bar.update(1)
                progress_file.update(len(results))
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # stop joblib's workers if we leave early
    finally:
        context.close()
        bar.close()
        progress_file.finish()

    setting_cols, metric_cols = [], []
    for setting in grid:
        for key in setting:
            if key not in setting_cols:
                setting_cols.append(key)
    records = []
    for index, setting, r, s in cells:
        for row in results[index]:
            for key in row:
                if key in setting_cols or key in _RESERVED:
                    raise ValueError(f"Cell {index}: the returned key {key!r} is already a "
                                     f"column of the result. Rename the metric.")
                if key not in metric_cols:
                    metric_cols.append(key)
            records.append({**setting, "repeat": r, "seed": s, **row})
    columns = setting_cols + list(_RESERVED) + metric_cols
    df = pd.DataFrame.from_records(records, columns=columns) if records else \
        pd.DataFrame(columns=columns)
    df.attrs["n_cached"] = n_cached
    df.attrs["n_computed"] = len(todo)
    df.attrs["cache_dir"] = None if cache_dir is None else str(cache_dir)
    return df


# ---------------------------------------------------------------------------
# aggregation and tests
# ---------------------------------------------------------------------------

def summarize(df, by, metrics, *, ci="se"):
    """Mean and spread of metrics per group.

    Parameters
    ----------
    df : pandas.DataFrame
        A tidy table, e.g. from :func:`run`.
    by : str or list of str or None
        Grouping columns (``None`` or ``[]``: one group). Groups keep their order of
        first appearance (grid order); NaN keys form their own group.
    metrics : str or list of str
        Metric columns to summarise.
    ci : {"se", "sd", "ci95"} or None, default="se"
        Spread reported next to the mean: standard error ``sd / sqrt(n)``, sample
        standard deviation (``ddof=1``), or the half-width of a Student-t 95 %
        confidence interval. NaN when fewer than two values.

    Returns
    -------
    summary : pandas.DataFrame
        One row per group: the ``by`` columns, ``n`` (rows in the group), then
        ``<metric>_mean`` and ``<metric>_<ci>`` for each metric. NaN metric values are
        skipped.

    Examples
    --------
    >>> import pandas as pd
    >>> from mklcore.experiments import summarize
    >>> df = pd.DataFrame({"m": ["a", "a", "b", "b"], "acc": [0.8, 1.0, 0.5, 0.5]})
    >>> summarize(df, "m", "acc").round(3)
       m  n  acc_mean  acc_se
    0  a  2       0.9     0.1
    1  b  2       0.5     0.0
    """
    if ci not in ("se", "sd", "ci95", None):
        raise ValueError(f"The 'ci' parameter must be one of 'se', 'sd', 'ci95' or None. "
                         f"Got {ci!r} instead.")
    by = [] if by is None else ([by] if isinstance(by, str) else list(by))
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise ValueError("metrics is empty.")
    missing = [c for c in by + metrics if c not in df.columns]
    if missing:
        raise ValueError(f"Columns {missing} are not in the table; it has "
                         f"{list(df.columns)}.")
    if by:
        groups = df.groupby(by, sort=False, dropna=False)
        items = [((k,) if not isinstance(k, tuple) else k, g) for k, g in groups]
    else:
        items = [((), df)]
    rows = []
    for key, g in items:
        row = dict(zip(by, key))
        row["n"] = len(g)
        for m in metrics:
            values = pd.to_numeric(g[m], errors="coerce").to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            k = values.size
            mean = float(values.mean()) if k else float("nan")
            sd = float(values.std(ddof=1)) if k > 1 else float("nan")
            row[f"{m}_mean"] = mean
            if ci == "sd":
                row[f"{m}_sd"] = sd
            elif ci == "se":
                row[f"{m}_se"] = sd / math.sqrt(k) if k > 1 else float("nan")
            elif ci == "ci95":
                row[f"{m}_ci95"] = (float(stats.t.ppf(0.975, k - 1)) * sd / math.sqrt(k)
                                    if k > 1 else float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)


PairedTestResult = namedtuple("PairedTestResult", ["statistic", "pvalue"])
PairedTestResult.__doc__ = """Result of :func:`paired_ttest`, :func:`wilcoxon` and :func:`cv52_f_test`.

    Parameters
    ----------
    statistic : float
        Test statistic.
    pvalue : float
        p-value (two-sided for the t and Wilcoxon tests, upper tail for the F test).
    """


def _paired(a, b):
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same length; got {a.size} and {b.size}.")
    if a.size < 2:
        raise ValueError(f"A paired test needs at least 2 pairs; got {a.size}.")
    return a, b


def paired_ttest(a, b):
    """Two-sided paired t-test (``scipy.stats.ttest_rel``).

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired scores, e.g. per-repeat accuracies of two methods on the same splits.

    Returns
    -------
    result : PairedTestResult
        ``statistic`` (t) and ``pvalue``; both NaN when all differences are equal.
    """
    a, b = _paired(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_rel(a, b)
    return PairedTestResult(float(res.statistic), float(res.pvalue))


def wilcoxon(a, b):
    """Two-sided Wilcoxon signed-rank test on paired scores (``scipy.stats.wilcoxon``).

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired scores.

    Returns
    -------
    result : PairedTestResult
        ``statistic`` and ``pvalue``. If every difference is zero the test is
        undefined; this returns ``statistic=nan, pvalue=1.0``.
    """
    a, b = _paired(a, b)
    if np.all(a == b):
        return PairedTestResult(float("nan"), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = stats.wilcoxon(a, b)
    return PairedTestResult(float(res.statistic), float(res.pvalue))


def cv52_f_test(diffs):
    r"""Combined 5x2 cv F test of Alpaydin (1999).

    ``diffs[i, j]`` is the difference :math:`p_i^{(j)}` between the error rates (or
    any score) of two methods on fold ``j`` of replication ``i`` of 5x2 cross-validation
    (see :func:`kfold_splits` with ``n_splits=2, n_repeats=5``). With
    :math:`\bar p_i = (p_i^{(1)} + p_i^{(2)})/2` and
    :math:`s_i^2 = (p_i^{(1)} - \bar p_i)^2 + (p_i^{(2)} - \bar p_i)^2`,

    .. math::
        f = \frac{\sum_{i=1}^{5} \sum_{j=1}^{2} (p_i^{(j)})^2}{2 \sum_{i=1}^{5} s_i^2}

    is approximately F-distributed with (10, 5) degrees of freedom under the null
    hypothesis of equal performance.

    Parameters
    ----------
    diffs : array-like of shape (5, 2)
        Score differences. Other numbers of replications ``r`` (shape ``(r, 2)``) are
        accepted and use an F(2r, r) reference distribution.

    Returns
    -------
    result : PairedTestResult
        ``statistic`` (f) and ``pvalue`` (upper tail). If every :math:`s_i^2` is 0 the
        statistic is ``inf`` (p = 0) when some difference is nonzero, else ``nan``
        (p = 1).

    References
    ----------
    .. [1] E. Alpaydin. Combined 5 x 2 cv F test for comparing supervised
       classification learning algorithms. Neural Computation 11(8):1885-1892, 1999.
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] < 1:
        raise ValueError(f"diffs must have shape (5, 2) (replications x folds); got {d.shape}.")
    if not np.all(np.isfinite(d)):
        raise ValueError("diffs contains NaN or infinite values.")
    r = d.shape[0]
    mean = d.mean(axis=1, keepdims=True)
    s2 = ((d - mean) ** 2).sum(axis=1)
    num = float((d ** 2).sum())
    den = 2.0 * float(s2.sum())
    if den == 0.0:
        return PairedTestResult(float("inf"), 0.0) if num > 0 else PairedTestResult(float("nan"), 1.0)
    f = num / den
    return PairedTestResult(f, float(stats.f.sf(f, 2 * r, r)))
