"""Experiment functions of ``notebooks/quickstart.ipynb``, the teaching tour.

* :func:`ionosphere_bank`: the tour's kernel bank (linear, five Gaussian widths on all
  features, one Gaussian kernel per feature);
* :func:`single_kernel_cell`: one (model, split) cell of the "single kernels vs their sum"
  comparison, for :func:`mklcore.repro.experiments.run`;
* :func:`plot_kernel_accuracy`, :func:`plot_cv_curve`: the tour's two figures.
"""

import functools

import matplotlib.pyplot as plt
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..datasets import load_ionosphere
from ..kernels import kernel_bank, linear
from ..lpnorm import SumKernelSVC
from .experiments import accuracy, repeated_splits

__all__ = ["SIGMAS", "SUM", "ionosphere_bank", "candidates", "single_kernel_cell",
           "plot_kernel_accuracy", "plot_cv_curve"]

#: Gaussian widths of the kernels on all features
SIGMAS = [1.0, 2.0, 5.0, 10.0, 20.0]

#: name of the model that uses the whole bank
SUM = "sum of all"


def ionosphere_bank(n_features):
    """The tour's bank: a linear kernel, Gaussian kernels of widths :data:`SIGMAS` on all
    features and one Gaussian kernel (width 1) per single feature.

    Parameters
    ----------
    n_features : int

    Returns
    -------
    bank : list of Kernel
    """
    return [linear(),
            *kernel_bank("rbf", sigma=SIGMAS, per_feature=False),
            *kernel_bank("rbf", sigma=[1.0], per_feature="only", n_features=n_features)]


def candidates(bank):
    """The compared models: the sum of the whole bank and every kernel alone.

    Parameters
    ----------
    bank : list of Kernel

    Returns
    -------
    models : dict of {str: list of Kernel}
        ``{SUM: bank, repr(kernel): [kernel], ...}``.
    """
    return {SUM: bank, **{repr(k): [k] for k in bank}}


@functools.lru_cache(maxsize=4)
def _data_and_splits(test_size, n_repeats, master_seed):
    """Ionosphere and its splits, loaded once per process (every cell shares them)."""
    X, y = load_ionosphere(return_X_y=True)
    return X, y, repeated_splits(y, n_repeats=n_repeats, test_size=test_size, seed=master_seed)


def single_kernel_cell(*, model, repeat, seed, C, test_size, n_repeats, master_seed):
    """Test accuracy of one model on one split (a cell of :func:`~.experiments.run`).

    The split is ``repeated_splits(y, n_repeats=n_repeats, test_size=test_size,
    seed=master_seed)[repeat]``, the same for every model; the model is a trace-normalised
    :class:`~mklcore.SumKernelSVC` on standardised features. Every argument is a plain
    value, so the cache key of the cell holds each of them exactly.

    Parameters
    ----------
    model : str
        A key of :func:`candidates`.
    repeat, seed : int
        Split index and the per-repeat seed of ``run`` (unused: the split is drawn from
        ``master_seed``).
    C, test_size : float
    n_repeats, master_seed : int

    Returns
    -------
    row : dict
        ``accuracy`` and ``converged``.
    """
    X, y, splits = _data_and_splits(test_size, n_repeats, master_seed)
    split = splits[repeat]
    kernels = candidates(ionosphere_bank(X.shape[1]))[model]
    clf = make_pipeline(StandardScaler(), SumKernelSVC(kernels=kernels, C=C, normalize="trace"))
    clf.fit(X[split["train"]], y[split["train"]])
    y_pred = clf.predict(X[split["test"]])
    return {"accuracy": accuracy(y[split["test"]], y_pred), "converged": clf[-1].converged_}


def plot_kernel_accuracy(singles, sum_acc, n_repeats):
    """Bar chart: test accuracy of each kernel alone, with the sum's as a vertical line.

    Parameters
    ----------
    singles : pandas.DataFrame
        Rows of the single kernels with ``model``, ``accuracy_mean``, ``accuracy_sd``.
    sum_acc : float
    n_repeats : int

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(6.5, 0.18 * len(singles) + 1.2))
    ax.barh(singles.model, singles.accuracy_mean, xerr=singles.accuracy_sd.fillna(0),
            color="#949494", label="single kernel")
    ax.axvline(sum_acc, color="#0173b2", lw=2, label=f"sum of all ({sum_acc:.3f})")
    ax.invert_yaxis()
    ax.set_xlim(0.5, 1.0)
    ax.set_xlabel(f"test accuracy (mean ± sd over {n_repeats} splits)")
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(loc="lower right")
    ax.set_title("Ionosphere: each kernel alone vs the unweighted sum")
    return fig


def plot_cv_curve(cv_curve, best_C, n_folds):
    """Cross-validation accuracy over C with its standard deviation.

    Parameters
    ----------
    cv_curve : pandas.DataFrame
        Columns ``C``, ``cv_accuracy``, ``cv_sd``.
    best_C : float
    n_folds : int

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(cv_curve.C, cv_curve.cv_accuracy, yerr=cv_curve.cv_sd, marker="o",
                capsize=3, color="#0173b2")
    ax.axvline(best_C, color="#949494", ls="--", label=f"best C = {best_C:g}")
    ax.set_xscale("log")
    ax.set_xlabel("C")
    ax.set_ylabel(f"{n_folds}-fold CV accuracy")
    ax.set_title("Sum-kernel SVM: cross-validation over C")
    ax.legend()
    return fig
