"""Experiment functions of ``notebooks/quickstart.ipynb``, the teaching tour.

* :func:`ionosphere_bank`: the tour's kernel bank (linear, five Gaussian widths on all
  features, one Gaussian kernel per feature);
* :func:`single_kernel_cell`: one (model, split) cell of the "single kernels vs their sum"
  comparison, for :func:`mklcore.repro.experiments.run`;
* :func:`certificate`, :func:`show`: how a fit stopped (the gap it stopped on and its
  ``tol``) and the tables' display format;
* :func:`lp_path`: lp-norm MKL (Kloft et al., 2009) for several p on one split;
* :func:`l1_agreement`: SimpleMKL (Rakotomamonjy et al., 2008) and SILP (Sonnenburg et al.,
  2006), two algorithms for the same p = 1 problem;
* :func:`lmkl_demo`: localized MKL (Gönen & Alpaydın, 2008) on the 2-D Gauss4 data;
* :func:`plot_kernel_accuracy`, :func:`plot_cv_curve`, :func:`plot_weights_vs_p`,
  :func:`plot_gaps`, :func:`plot_lmkl_boundary`: the tour's figures.
"""

import functools
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..datasets import gauss4_bayes_accuracy, load_ionosphere, make_gauss4
from ..kernels import kernel_bank, linear
from ..localized import LMKLClassifier
from ..lpnorm import LpMKLClassifier, SumKernelSVC
from ..silp import SILPMKLClassifier
from ..simplemkl import SimpleMKLClassifier
from .experiments import accuracy, repeated_splits
from .plotting import plot_gap_history, plot_gated_boundary, plot_weights, shorten_label

__all__ = ["SIGMAS", "SUM", "P_VALUES", "QUICK_P_VALUES", "GAP_COLUMNS", "ionosphere_bank",
           "candidates", "single_kernel_cell", "p_label", "effective_kernels", "certificate",
           "show", "lp_path", "l1_agreement",
           "lmkl_demo", "plot_kernel_accuracy", "plot_cv_curve", "plot_weights_vs_p",
           "plot_gaps", "plot_lmkl_boundary"]

#: the norms of the lp-norm MKL path of the full run, from sparse (1) to uniform (inf)
P_VALUES = (1.0, 1.1, 4 / 3, 2.0, 4.0, math.inf)

#: the norms of the quick run
QUICK_P_VALUES = (1.0, 4 / 3, 2.0, math.inf)

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

    Kernel names are shortened with :func:`~mklcore.repro.plotting.shorten_label`
    (``"gaussian(sigma=1.0, columns=[3])"`` is drawn as ``"gaussian 1.0 [3]"``).

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
    ax.barh([shorten_label(m) for m in singles.model], singles.accuracy_mean,
            xerr=singles.accuracy_sd.fillna(0), color="#949494", label="single kernel")
    ax.axvline(sum_acc, color="#0173b2", lw=2, label=f"sum of all ({sum_acc:.3f})")
    ax.invert_yaxis()
    ax.set_xlim(0.5, 1.0)
    ax.set_xlabel(f"test accuracy (mean ± sd over {n_repeats} splits)")
    ax.tick_params(axis="y", labelsize=8)
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


def p_label(p):
    """Legend label of a norm: ``"p = 1"``, ``"p = 4/3"``, ``"p = inf"``.

    Parameters
    ----------
    p : float

    Returns
    -------
    label : str
    """
    if math.isinf(p):
        return "p = inf"
    if math.isclose(p, 4 / 3):
        return "p = 4/3"
    return f"p = {p:g}"


def effective_kernels(weights):
    r"""Effective number of kernels :math:`(\sum_m\theta_m)^2/\sum_m\theta_m^2`.

    It is 1 when one kernel has all the weight and ``M`` when all ``M`` weights are equal.

    Parameters
    ----------
    weights : array-like of shape (n_kernels,)

    Returns
    -------
    n_eff : float
    """
    w = np.asarray(weights, dtype=float)
    return float(w.sum() ** 2 / np.sum(w ** 2))


def certificate(mkl):
    r"""How a fitted MKL estimator stopped: the columns every table of the tour shows.

    ``relative gap`` is :math:`\Delta_{rel}` (``gap_``); ``stopping gap`` is the value the
    solver compared with ``tol`` (``criterion_``): :math:`\Delta_{rel}` itself, except
    for the cutting plane and SILP at p = 1, which stop on the smaller of :math:`\Delta_{rel}`
    and the LP bound :math:`|1-\eta/J|` (both bound the distance to the optimum).
    ``converged`` is True only when the stopping gap is at most ``tol``.

    Parameters
    ----------
    mkl : fitted estimator
        Any estimator of :mod:`mklcore` with ``result_``.

    Returns
    -------
    row : dict
        ``n_iter``, ``converged``, ``objective J``, ``relative gap``, ``stopping gap``, ``tol``.
    """
    res = mkl.result_
    return {"n_iter": int(mkl.n_iter_), "converged": bool(mkl.converged_),
            "objective J": float(mkl.objective_), "relative gap": float(mkl.gap_),
            "stopping gap": float(mkl.criterion_),
            "tol": np.nan if res.tol is None else float(res.tol)}


#: columns of the tour's tables printed in scientific notation (see :func:`show`)
GAP_COLUMNS = ("relative gap", "stopping gap", "tol")


def show(table, index=None):
    """A results table for display: gaps and tolerances as ``1.2e-05``, the rest to 3 decimals.

    Parameters
    ----------
    table : pandas.DataFrame
    index : str, default=None
        Column to use as the index (``"p"``, ``"method"``); None keeps the table's index.

    Returns
    -------
    table : pandas.DataFrame
        A copy; the gap columns hold strings.
    """
    out = table.round(3)
    for col in GAP_COLUMNS:
        if col in out:
            out[col] = [f"{v:.1e}" for v in table[col]]
    return out if index is None else out.set_index(index)


def _fit_and_describe(estimator, X, y, split, **row):
    """Fit ``StandardScaler -> estimator`` on the training part; one row of a results table."""
    model = make_pipeline(StandardScaler(), estimator).fit(X[split["train"]], y[split["train"]])
    mkl = model[-1]
    w = mkl.weights_
    y_pred = model.predict(X[split["test"]])
    return mkl, {**row, "test accuracy": accuracy(y[split["test"]], y_pred), **certificate(mkl),
                 "kernels >= 1% of max": int(np.sum(w >= 0.01 * w.max())),
                 "effective kernels": effective_kernels(w)}


def lp_path(X, y, split, bank, p_values, *, C=1.0):
    r"""lp-norm MKL (Kloft et al., 2009, problem (6)) for each ``p`` on one split.

    Each fit is ``StandardScaler -> LpMKLClassifier(p=p, normalize="trace")`` on the training
    part (the cutting-plane solver at p = 1, Newton steps otherwise; default ``tol=1e-5``).

    Parameters
    ----------
    X, y : ndarray
        Features and labels.
    split : dict
        ``{"train": idx, "test": idx}``, e.g. an entry of
        :func:`~mklcore.repro.experiments.repeated_splits`.
    bank : list of Kernel
    p_values : sequence of float
        Norms, each in ``[1, inf]``.
    C : float, default=1.0

    Returns
    -------
    table : pandas.DataFrame
        One row per p: ``p``, ``test accuracy``, the columns of :func:`certificate`,
        ``kernels >= 1% of max`` and ``effective kernels``.
    shares : dict of {str: ndarray}
        Per :func:`p_label`, the weights divided by their sum.
    gaps : dict of {str: ndarray}
        Per :func:`p_label`, the relative duality gap of every iteration.
    """
    rows, shares, gaps = [], {}, {}
    for p in p_values:
        solver = "cutting_plane" if p == 1 else "newton"
        mkl, row = _fit_and_describe(LpMKLClassifier(kernels=bank, p=p, C=C, solver=solver,
                                                     normalize="trace"), X, y, split, p=p_label(p))
        rows.append(row)
        shares[p_label(p)] = mkl.weights_ / mkl.weights_.sum()
        gaps[p_label(p)] = np.asarray(mkl.history_["gap"], dtype=float)
    return pd.DataFrame(rows), shares, gaps


def l1_agreement(X, y, split, bank, *, C=1.0, simplemkl_tol=1e-3, silp_tol=1e-5):
    r"""SimpleMKL and SILP on the same p = 1 problem (problem (6) of Kloft et al. with p = 1).

    SimpleMKL (Rakotomamonjy et al., 2008, Algorithm 1) descends the reduced gradient of
    :math:`J(\theta)` on the simplex; SILP (Sonnenburg et al., 2006) solves the semi-infinite
    linear program by column generation. Both stop on the relative duality gap.

    Parameters
    ----------
    X, y : ndarray
    split : dict
        ``{"train": idx, "test": idx}``.
    bank : list of Kernel
    C : float, default=1.0
    simplemkl_tol, silp_tol : float, default=1e-3, 1e-5
        Stopping tolerances.

    Returns
    -------
    table : pandas.DataFrame
        One row per method, with the columns of :func:`lp_path` (``method`` instead of ``p``).
    weights : dict of {str: ndarray}
        The weights :math:`\theta` (on the simplex) of each method.
    gaps : dict of {str: ndarray}
        The relative duality gap of every iteration of each method.
    agreement : dict
        ``max |weight difference|`` and ``relative objective difference``
        :math:`|J_1-J_2|/J_2` between the two methods.
    """
    rows, weights, gaps = [], {}, {}
    for name, est in (("SimpleMKL", SimpleMKLClassifier(kernels=bank, C=C, tol=simplemkl_tol,
                                                         normalize="trace")),
                      ("SILP", SILPMKLClassifier(kernels=bank, C=C, tol=silp_tol,
                                                 normalize="trace"))):
        mkl, row = _fit_and_describe(est, X, y, split, method=name)
        rows.append(row)
        weights[name] = np.asarray(mkl.weights_, dtype=float)
        gaps[name] = np.asarray(mkl.history_["gap"], dtype=float)
    table = pd.DataFrame(rows)
    J = table["objective J"].to_numpy()
    diff = np.abs(weights["SimpleMKL"] - weights["SILP"])
    agreement = {"max |weight difference|": float(diff.max()),
                 "relative objective difference": float(abs(J[0] - J[1]) / abs(J[1]))}
    return table, weights, gaps, agreement


def lmkl_demo(*, n_samples=400, n_test=2000, C=10.0, max_iter=30, seed=0, n_grid=150):
    r"""Localized MKL with three linear kernels on Gauss4, against the linear SVM.

    The setting of Fig. 1 of Gönen & Alpaydın (2008): Gauss4 (``variant="equal"``), three
    linear kernels combined by a softmax gating :math:`\eta_m(x)` (eq. (8):
    :math:`f(x)=\sum_i\alpha_iy_i\sum_m\eta_m(x)K_m(x,x_i)\eta_m(x_i)+b`), so that each
    region of the input space gets its own linear classifier. The baseline is the SVM on the
    unweighted sum of the same kernels, i.e. one linear SVM.

    Parameters
    ----------
    n_samples, n_test : int, default=400, 2000
        Training and test points (independent draws).
    C : float, default=10.0
    max_iter : int, default=30
        Gating updates of LMKL (Algorithm 1).
    seed : int, default=0
        Seed of the training draw (the test draw uses ``seed + 1``) and of the initial gating.
    n_grid : int, default=150
        Grid points per axis of the boundary figure.

    Returns
    -------
    demo : dict
        ``X``, ``y`` (training data), ``accuracy`` (test accuracy of ``"LMKL"``, ``"linear SVM"``
        and ``"Bayes"``), ``mean gates`` (mean :math:`\eta_m` over the training set),
        ``crispness`` (mean :math:`\max_m\eta_m`, 1 = every point uses one kernel), ``n_iter``
        and the grid ``xx``, ``yy``, ``f`` (LMKL), ``f_linear`` and ``gates``.
    """
    X, y = make_gauss4(n_samples=n_samples, variant="equal", random_state=seed)
    X_test, y_test = make_gauss4(n_samples=n_test, variant="equal", random_state=seed + 1)
    kernels = [linear(), linear(), linear()]
    lmkl = LMKLClassifier(kernels=kernels, C=C, max_iter=max_iter, random_state=seed).fit(X, y)
    svm = SumKernelSVC(kernels=kernels, C=C).fit(X, y)
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], n_grid), np.linspace(lo[1], hi[1], n_grid))
    grid = np.c_[xx.ravel(), yy.ravel()]
    eta = lmkl.gating_function(X)
    return {"X": X, "y": y, "n_iter": int(lmkl.n_iter_),
            "accuracy": {"LMKL": accuracy(y_test, lmkl.predict(X_test)),
                         "linear SVM": accuracy(y_test, svm.predict(X_test)),
                         "Bayes": float(gauss4_bayes_accuracy("equal"))},
            "mean gates": eta.mean(axis=0), "crispness": float(eta.max(axis=1).mean()),
            "xx": xx, "yy": yy, "f": lmkl.decision_function(grid).reshape(xx.shape),
            "f_linear": svm.decision_function(grid).reshape(xx.shape),
            "gates": lmkl.gating_function(grid)}


def plot_weights_vs_p(shares, names, n_top=10):
    """Kernel weights of lp-norm MKL for several p: the weight profile and the top kernels.

    Parameters
    ----------
    shares : dict of {str: ndarray}
        Per p, the weights divided by their sum (from :func:`lp_path`).
    names : sequence of str
        Kernel names.
    n_top : int, default=10
        Kernels in the bar chart: those with the largest weight at any p.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, (ax_rank, ax_bar) = plt.subplots(1, 2, figsize=(11, 4.6),
                                          gridspec_kw={"width_ratios": [1, 1.25]})
    floor = 1e-4
    colours = dict(zip(shares, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(shares)))))
    for label, w in shares.items():
        ranked = np.maximum(np.sort(w)[::-1], floor)
        ax_rank.plot(np.arange(1, w.size + 1), ranked, marker=".", label=label,
                     color=colours[label])
    ax_rank.set_yscale("log")
    ax_rank.set_ylim(floor / 1.5, 1.0)
    ax_rank.set_xlabel("kernel rank (largest weight first)")
    ax_rank.set_ylabel(f"share of the total weight (zero drawn at {floor:g})")
    ax_rank.set_title("(a) weight profile: sparse at p = 1, flat at p = inf")
    ax_rank.legend(loc="upper right", fontsize="small")
    top = np.argsort(-np.max(np.vstack(list(shares.values())), axis=0), kind="stable")[:n_top]
    plot_weights({k: w[top] for k, w in shares.items()}, labels=[names[i] for i in top],
                 ax=ax_bar, palette={k: colours[k] for k in shares}, orient="h",
                 legend="outside")
    ax_bar.set_xlabel("share of the total weight")
    ax_bar.set_title(f"(b) the {len(top)} kernels with the largest weights")
    return fig


def plot_gaps(gaps):
    """Relative duality gap per iteration of several MKL solvers (log-log).

    Parameters
    ----------
    gaps : dict of {str: ndarray}
        Per solver, the gap of every iteration (zero gaps are not drawn).

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(7, 4))
    plot_gap_history(gaps, ax=ax, legend="outside")
    ax.set_ylabel("relative duality gap")
    ax.set_title("The duality gap certifies convergence")
    return fig


def plot_lmkl_boundary(demo):
    """LMKL's decision boundary over its gating, with the linear SVM's for comparison.

    Parameters
    ----------
    demo : dict
        Output of :func:`lmkl_demo`.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    plot_gated_boundary(demo["xx"], demo["yy"], demo["f"], demo["gates"], X=demo["X"],
                        y=demo["y"], kernel_names=["linear 1", "linear 2", "linear 3"], ax=ax)
    ax.contour(demo["xx"], demo["yy"], demo["f_linear"], levels=[0.0], colors="#7f7f7f",
               linewidths=1.2, linestyles="--")
    acc = demo["accuracy"]
    ax.set_title(f"LMKL (black, test acc. {acc['LMKL']:.3f}) vs linear SVM "
                 f"(grey dashed, {acc['linear SVM']:.3f})", fontsize=9)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.legend(loc="lower left", fontsize="small")
    return fig
