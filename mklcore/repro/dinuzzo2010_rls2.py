r"""Experiment functions of ``notebooks/dinuzzo2010_rls2.ipynb`` (Dinuzzo, arXiv:1001.2709).

F. Dinuzzo. Kernel machines with two layers and multiple kernel learning. arXiv:1001.2709,
2010 ([1]_ below).

RLS2 (regularised least squares with two layers, Problem 5 of [1]_) learns kernel weights
:math:`d` on the simplex :math:`\Delta_m` and expansion coefficients :math:`c` by

.. math:: \min_{c\in\mathbb R^\ell,\ d\in\Delta_m}\ \tfrac12\|y-\mathbf K(d)c\|^2
          + \tfrac\lambda2\,c^\top\mathbf K(d)c,\qquad \mathbf K(d)=\sum_i d_is_i\mathbf K_i;

the solvers are in :mod:`mklcore.rls2`. This module holds the experiment code of the
notebook, one function per table, figure or claim:

* :data:`TABLE2`, :func:`rls2_benchmark_data`: the UCI data of Table 2 (Sec. 5.2);
* :func:`binary_strings_split`, :func:`prostate_split`, :func:`microarray_data`,
  :func:`standardise_rows`: the data of Experiments 1 and 2 (Sec. 5.1) and of Sec. 5.3;
* Experiment 1, Figure 3 (learning-curve lower bounds on the binary strings):
  :func:`rmse_columns`, :func:`squared_distances`, :func:`kernel_ridge_lower_bound`,
  :func:`lasso_lower_bound`, :func:`learning_curves`, :func:`plot_learning_curves`,
  :func:`weighted_lasso_difference` (linear RLS2 = a weighted Lasso with a squared penalty),
  :func:`learned_from`, :func:`extra_draws`;
* Experiment 2, Figure 2 and Table 1 (prostate): :func:`prostate_cv`,
  :func:`prostate_model`, :func:`prostate_study`, :func:`plot_prostate`,
  :func:`paper_table1`, :func:`table1_column`, :func:`least_squares_baseline`,
  :func:`table1_tables`, :func:`second_diff_ratio`, :func:`path_curvature`;
* Sec. 5.2, Tables 2–4 and Figures 4–8 (UCI): :class:`UCIPaths` (kernel bank, warm-started
  path per split), :func:`path_lambdas`, :func:`at_best_lambda`, :func:`uci_tables34`,
  :func:`uci_path_means`, :func:`table2_compare`, :func:`table3_compare`,
  :func:`plot_uci_performance`, :func:`plot_uci_kernels`, :func:`ablation`,
  :func:`ablation_tables`, :func:`plot_iterations`;
* Sec. 5.3, Table 5 and Figure 9 (microarray, one-vs-all): :func:`ova_path`,
  :func:`ova_predict`, :func:`microarray_rls2`, :func:`cv_choice`, :class:`OVALasso`,
  :func:`microarray_baselines`, :func:`paper_table5`, :func:`plot_microarray`;
* the claims checked by the notebook: :func:`flatness`, :func:`claim_lemma5`,
  :func:`claim_binary_strings`, :func:`claim_rls2_below_lasso`, :func:`claim_binary_weights`,
  :func:`claim_prostate`, :func:`claim_prostate_cv`, :func:`claim_prostate_error`,
  :func:`claim_path_curvature`, :func:`claim_uci`, :func:`claim_microarray`,
  :data:`CLAIM_SOURCES`, :data:`SIZE_TOL`, :data:`CURVE_TOL`, :data:`TABLE1_SUPPORT`;
  :func:`convergence_table` (how many fits met their stopping rule), :func:`summary_table`
  and :func:`differences_text` (the report's "What differs from the paper and why").

References
----------
.. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
   arXiv:1001.2709, 2010.
"""

import hashlib
import time
import warnings

import numpy as np

__all__ = [
    "TABLE2", "rls2_benchmark_data",
    "binary_strings_split", "prostate_split", "microarray_data", "standardise_rows",
    "rmse_columns", "squared_distances", "kernel_ridge_lower_bound", "lasso_lower_bound",
    "learning_curves", "plot_learning_curves", "METHODS_EXP1", "weighted_lasso_difference",
    "learned_from", "extra_draws",
    "prostate_cv", "prostate_model", "prostate_study", "plot_prostate", "paper_table1",
    "table1_column", "least_squares_baseline", "table1_tables", "second_diff_ratio",
    "path_curvature",
    "UCIPaths", "block", "path_lambdas", "at_best_lambda", "uci_tables34", "uci_path_means",
    "table2_compare", "table3_compare", "plot_uci_performance", "plot_uci_kernels",
    "ablation", "Ablation", "ablation_tables", "plot_iterations", "ABLATION_SOLVERS",
    "ova_path", "ova_predict", "microarray_rls2", "cv_choice", "OVALasso",
    "microarray_baselines", "paper_table5", "plot_microarray",
    "flatness", "claim_lemma5", "claim_binary_strings", "claim_rls2_below_lasso",
    "claim_binary_weights", "claim_prostate", "claim_prostate_cv", "claim_prostate_error",
    "claim_path_curvature", "claim_uci", "claim_microarray", "CLAIM_SOURCES", "SIZE_TOL",
    "CURVE_TOL", "TABLE1_SUPPORT", "convergence_table", "summary_table", "differences_text",
]


# --------------------------------------------------------------------------------------
# Data of the UCI benchmark (Table 2)
# --------------------------------------------------------------------------------------
#: Table 2 of [1]: task, standardised, examples, features N, kernels m (Sec. 5.2 of [1])
TABLE2 = {
    "autompg": ("regression", True, 392, 7, 104),
    "cpu": ("regression", True, 209, 8, 494),
    "servo": ("regression", False, 167, 4, 156),
    "housing": ("regression", True, 506, 13, 182),
    "heart": ("classification", True, 270, 13, 182),
    "liver": ("classification", False, 345, 6, 91),
    "pima": ("classification", True, 768, 8, 117),
    "ionosphere": ("classification", True, 351, 33, 442),
    "wpbc": ("classification", True, 194, 34, 455),
    "sonar": ("classification", False, 208, 60, 793),
}


def rls2_benchmark_data(name, *, download=False, erp=True, standin_size=True):
    r"""Inputs and outputs of one UCI set of Table 2 of [1]_, encoded as the paper did.

    Categorical inputs become indicators, rows with missing values are dropped, inputs are
    z-scored over all examples where Table 2 says "standardised" (Sec. 5.2 of [1]_); classification
    labels are mapped to :math:`\pm1`. Servo and Wpbc have no offline copy: with
    ``download=False`` (or without network) their documented stand-ins are returned
    (sklearn's ``load_diabetes`` for Servo, Wisconsin diagnostic ``wdbc`` for Wpbc), flagged by
    ``stand_in``.

    Parameters
    ----------
    name : str
        Data set of Table 2: "autompg", "cpu", "servo", "housing", "heart", "liver", "pima",
        "ionosphere", "wpbc" or "sonar".
    download : bool, default=False
        Allow :func:`mklcore.datasets.fetch_servo` / ``fetch_wpbc`` to download the UCI file
        (else only their cache is used).
    erp : bool, default=True
        Cpu only: keep ERP, the published performance estimate, as an input (what the
        paper's kernel count :math:`m = 494 = 13(37+1)` of Table 2 implies). False drops it
        (N = 36).
    standin_size : bool, default=True
        Subsample a stand-in (seeded, stratified for wdbc) to the number of examples of the
        set it replaces (167 for Servo, 194 for Wpbc), so that costs and split sizes match.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (n, N) float inputs, ``target`` (n,) outputs (:math:`\pm1` for
        classification), ``task``, ``standardised``, ``n_kernels`` (:math:`13(N+1)`),
        ``paper`` (Table 2's row: examples, features, kernels), ``stand_in`` (None or a
        description) and ``note``.

    References
    ----------
    .. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
       arXiv:1001.2709, 2010.
    """
    from sklearn.utils import Bunch

    from .. import datasets as ds

    if name not in TABLE2:
        raise ValueError(f"Unknown data set {name!r}; Table 2 has {', '.join(TABLE2)}.")
    task, standardised, n_paper, N_paper, m_paper = TABLE2[name]
    stand_in, note = None, ""
    if name == "autompg":
        X, y = ds.load_auto_mpg(return_X_y=True)
        note = "car name dropped, origin numeric"
    elif name == "cpu":
        b = ds.load_cpu()
        vendors = np.unique(b.vendor)
        onehot = (b.vendor[:, None] == vendors[None, :]).astype(float)
        parts = [onehot, b.data] + ([b.estperf[:, None]] if erp else [])
        X, y = np.column_stack(parts), b.target
        note = "vendor indicators (30) + 6 numeric"
        note += " + ERP as input" if erp else ", ERP dropped"
    elif name == "servo":
        try:
            X, y = ds.fetch_servo(download=download, return_X_y=True)
            note = "motor/screw one-hot (5 + 5) + pgain + vgain: N = 12, the paper has 11"
        except OSError:
            from sklearn.datasets import load_diabetes

            X, y = load_diabetes(return_X_y=True)
            stand_in = "sklearn load_diabetes (442 x 10): servo.data not available offline"
    elif name == "housing":
        X, y = ds.load_housing(return_X_y=True)
    elif name == "wpbc":
        try:
            b = ds.fetch_wpbc(download=download, dropna=True)
            X, y = np.column_stack([b.time, b.data]), b.target
            note = "ID dropped, time kept (outcome-related): N = 33, the paper has 34"
        except OSError:
            X, y = ds.load_wdbc(return_X_y=True)
            stand_in = "wdbc (569 x 30, diagnostic): wpbc.data not available offline"
    else:
        loader = {"heart": ds.load_heart, "liver": ds.load_bupa, "pima": ds.load_pima,
                  "ionosphere": ds.load_ionosphere, "sonar": ds.load_sonar}[name]
        X, y = loader(return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if stand_in is not None and standin_size and len(y) > n_paper:
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(len(y)), train_size=n_paper, random_state=0,
                                   stratify=y if task == "classification" else None)
        keep = np.sort(keep)
        X, y = X[keep], y[keep]
        stand_in += f", stratified subsample of {n_paper} rows" if task == "classification" \
            else f", random subsample of {n_paper} rows"
    if standardised:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if task == "classification":
        classes = np.unique(y)
        y = np.where(y == classes[-1], 1.0, -1.0)
    else:
        y = y.astype(float)
    return Bunch(data=X, target=y, task=task, standardised=standardised,
                 n_kernels=13 * (X.shape[1] + 1), paper={"examples": n_paper,
                                                         "features": N_paper,
                                                         "kernels": m_paper},
                 stand_in=stand_in, note=note, name=name)


# --------------------------------------------------------------------------------------
# Data of Experiments 1 and 2 (Sec. 5.1) and of the microarray study (Sec. 5.3)
# --------------------------------------------------------------------------------------
def binary_strings_split(seed):
    r"""The binary strings of Experiment 1 (Sec. 5.1 of [1]_), split as in the paper.

    250 strings of 100 i.i.d. Bernoulli(0.5) bits with :math:`y=x_1+x_2+x_3+\varepsilon`,
    :math:`\varepsilon\sim\mathcal N(0, 0.01^2)`; rows 1–150 train, rows 151–250 test.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Seed of :func:`mklcore.datasets.make_binary_strings`.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
        Shapes (150, 100), (150,), (100, 100), (100,).
    """
    from ..datasets import make_binary_strings

    X, y = make_binary_strings(250, random_state=seed)
    return X[:150], y[:150], X[150:], y[150:]


def prostate_split():
    """The prostate data of Experiment 2 (Sec. 5.1 of [1]_) with ESL's 67/30 split.

    Inputs are standardised with all 97 rows and the :math:`n-1` standard deviation, as ESL
    does (the paper: "normalizing all the inputs to zero mean and unit standard deviation").

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train`` (67, 8), ``y_train`` (lpsa), ``X_test`` (30, 8), ``y_test`` and
        ``features`` (the 8 input names).
    """
    from sklearn.utils import Bunch

    from ..datasets import load_prostate

    prostate = load_prostate()
    X = (prostate.data - prostate.data.mean(0)) / prostate.data.std(0, ddof=1)
    tr = prostate.train_mask
    return Bunch(X_train=X[tr], y_train=prostate.target[tr], X_test=X[~tr],
                 y_test=prostate.target[~tr], features=list(prostate.feature_names))


def standardise_rows(A):
    """Standardise each row (one patient's expression profile) to mean 0 and variance 1.

    The preprocessing of the microarray data in Sec. 5.3 of [1]_.

    Parameters
    ----------
    A : ndarray of shape (n_samples, n_genes)
        Expression matrix.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_genes)
    """
    return (A - A.mean(1, keepdims=True)) / A.std(1, keepdims=True)


def microarray_data(download=False):
    """The multi-class microarray set of Sec. 5.3 of [1]_, or its stand-in.

    14 Cancers (ESL; 144/54 patients x 16063 genes) when it can be loaded, otherwise Khan
    SRBCT (63/20 x 2308, 4 classes). Each patient's profile is standardised
    (:func:`standardise_rows`).

    Parameters
    ----------
    download : bool, default=False
        Allow :func:`mklcore.datasets.fetch_14cancer` to download the files.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``name``, ``X_train``, ``X_test``, ``y_train``, ``y_test``.
    """
    from sklearn.utils import Bunch

    from ..datasets import fetch_14cancer, load_khan

    try:
        src = fetch_14cancer(download=download)
        name = "14 Cancers"
    except OSError:
        src = load_khan()
        name = "Khan SRBCT (stand-in for 14 Cancers)"
    X_tr, X_te = np.asarray(src.X_train, float), np.asarray(src.X_test, float)
    return Bunch(name=name, X_train=standardise_rows(X_tr), X_test=standardise_rows(X_te),
                 y_train=np.asarray(src.y_train), y_test=np.asarray(src.y_test))


# --------------------------------------------------------------------------------------
# Experiment 1 (Sec. 5.1, Figure 3): learning curves on the binary strings
# --------------------------------------------------------------------------------------
#: Methods of Figure 3 of [1]_, plus the weighted Lasso that linear RLS2 equals.
METHODS_EXP1 = ["ideal RLS", "ridge", "Gaussian RLS", "Lasso", "weighted Lasso (D1)",
                "linear RLS2"]


def rmse_columns(P, y):
    """Root mean squared error of every column of a prediction matrix.

    Parameters
    ----------
    P : ndarray of shape (n_samples, n_models)
        Predictions, one model per column.
    y : ndarray of shape (n_samples,)
        Targets.

    Returns
    -------
    rmse : ndarray of shape (n_models,)
    """
    return np.sqrt(np.mean((P - y[:, None]) ** 2, axis=0))


def squared_distances(A, B):
    r"""Squared Euclidean distances :math:`\|a_i-b_j\|^2`, clipped at 0.

    Parameters
    ----------
    A : ndarray of shape (n_a, n_features)
    B : ndarray of shape (n_b, n_features)

    Returns
    -------
    D : ndarray of shape (n_a, n_b)
    """
    return np.maximum((A ** 2).sum(1)[:, None] + (B ** 2).sum(1)[None, :] - 2 * A @ B.T, 0)


def kernel_ridge_lower_bound(K, K_te, y, y_te, lams):
    r"""Smallest test RMSE of kernel ridge regression (RLS) over a grid of :math:`\lambda`.

    RLS predicts :math:`f = \mathbf K_{\rm test}(\mathbf K+\lambda I)^{-1}y`; all values of
    the grid are solved at once from one eigendecomposition of :math:`\mathbf K`. This is
    the "lower bound of the learning curve" of Experiment 1 (Sec. 5.1 of [1]_).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Training Gram matrix.
    K_te : ndarray of shape (n_test, n)
        Test-by-training Gram matrix.
    y : ndarray of shape (n,)
        Training outputs.
    y_te : ndarray of shape (n_test,)
        Test outputs.
    lams : array-like of shape (n_lams,)
        Regularisation parameters.

    Returns
    -------
    rmse : float
        The smallest test RMSE over ``lams``.
    """
    lams = np.asarray(lams, dtype=float)
    w, U = np.linalg.eigh(K)
    C = U @ ((U.T @ y)[:, None] / (np.maximum(w, 0)[:, None] + lams[None, :]))
    return rmse_columns(K_te @ C, y_te).min()


def lasso_lower_bound(X, y, X_te, y_te, alphas, weights=None):
    r"""Smallest test RMSE along a Lasso path without intercept (Experiment 1).

    With ``weights`` :math:`u` the penalty is :math:`\sum_i u_i|w_i|` (weighted Lasso), solved
    as a plain Lasso on the columns :math:`x^{(i)}/u_i`; columns with :math:`u_i = 0` are
    dropped.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Training inputs.
    y : ndarray of shape (n,)
        Training outputs.
    X_te : ndarray of shape (n_test, p)
        Test inputs.
    y_te : ndarray of shape (n_test,)
        Test outputs.
    alphas : array-like
        sklearn's Lasso parameters (objective :math:`\|y-Xw\|^2/(2n)+\alpha\|w\|_1`).
    weights : ndarray of shape (p,), default=None
        Per-column penalty factors; None for the plain Lasso.

    Returns
    -------
    rmse : float
        The smallest test RMSE over ``alphas``.
    """
    from sklearn.linear_model import lasso_path

    scale = np.ones(X.shape[1]) if weights is None else weights
    keep = scale > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at the tiniest alphas
        _, coef, _ = lasso_path(X[:, keep] / scale[keep], y, alphas=alphas, tol=1e-8,
                                max_iter=100_000)
    return rmse_columns(X_te[:, keep] @ (coef / scale[keep][:, None]), y_te).min()


def learning_curves(X_tr, y_tr, X_te, y_te, n_grid, *, lams_rls2, lams_krr, gammas_rbf,
                    alphas_lasso):
    r"""Lower bounds of the learning curves of Figure 3 of [1]_ (Experiment 1).

    For each training size :math:`n` (the first :math:`n` rows), the smallest test RMSE over
    the regularisation path of: RLS with the ideal kernel (19)
    :math:`K(x,x')=\sum_{i\le3}x_ix'_i`, ridge regression (the linear kernel (9)), RLS with a
    Gaussian kernel (also minimised over the widths), the Lasso, the weighted Lasso on
    unit-norm columns and linear RLS2 with the scaling (16) and :math:`b=0`.

    Parameters
    ----------
    X_tr : ndarray of shape (n_train, p)
        Training strings.
    y_tr : ndarray of shape (n_train,)
        Training outputs.
    X_te : ndarray of shape (n_test, p)
        Test strings.
    y_te : ndarray of shape (n_test,)
        Test outputs.
    n_grid : list of int
        Training sizes.
    lams_rls2 : ndarray
        :math:`\lambda` grid of linear RLS2.
    lams_krr : ndarray
        :math:`\lambda` grid of the three RLS methods.
    gammas_rbf : ndarray
        Gaussian widths :math:`\gamma` of :math:`\exp(-\gamma\|x-x'\|^2)`.
    alphas_lasso : ndarray
        sklearn Lasso parameters.

    Returns
    -------
    curves : pandas.DataFrame
        One row per :math:`n`: the lower bound of every method of :data:`METHODS_EXP1`, and
        for linear RLS2 at its best :math:`\lambda` (``lam*``) the weights ``d1``, ``d2``,
        ``d3``, ``d other`` (sum of the rest), ``converged``, ``fits`` (path length),
        ``fits converged`` (how many met the duality-gap rule), ``max gap``, ``iterations``.
    """
    import pandas as pd

    from ..rls2 import rls2_linear_path

    rows = []
    for n in n_grid:
        X, y = X_tr[:n], y_tr[:n]
        D, D_te = squared_distances(X, X), squared_distances(X_te, X)
        path = rls2_linear_path(X, y, lams=lams_rls2, scaling="norm")  # b = 0, rule (16)
        errs = rmse_columns(X_te @ np.stack([r.coef for r in path], 1), y_te)
        best = path[int(np.argmin(errs))]
        norms = np.sqrt((X ** 2).sum(0))
        rows.append({
            "n": n,
            "ideal RLS": kernel_ridge_lower_bound(X[:, :3] @ X[:, :3].T, X_te[:, :3] @ X[:, :3].T,
                                                  y, y_te, lams_krr),
            "ridge": kernel_ridge_lower_bound(X @ X.T, X_te @ X.T, y, y_te, lams_krr),
            "Gaussian RLS": min(kernel_ridge_lower_bound(np.exp(-g * D), np.exp(-g * D_te), y,
                                                         y_te, lams_krr)
                                for g in gammas_rbf),
            "Lasso": lasso_lower_bound(X, y, X_te, y_te, alphas_lasso),
            "weighted Lasso (D1)": lasso_lower_bound(X, y, X_te, y_te, alphas_lasso,
                                                     weights=norms),
            "linear RLS2": errs.min(),
            "lam*": best.lam, "d1": best.weights[0], "d2": best.weights[1], "d3": best.weights[2],
            "d other": best.weights[3:].sum(), "converged": all(r.success for r in path),
            "fits": len(path), "fits converged": sum(r.success for r in path),
            "max gap": max(r.gap for r in path), "iterations": sum(r.n_iter for r in path),
        })
    return pd.DataFrame(rows)


def plot_learning_curves(curves, methods=METHODS_EXP1):
    """Figure 3 of [1]_: learning-curve lower bounds, all sizes and zoomed on n <= 30.

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`learning_curves`.
    methods : list of str, default=METHODS_EXP1
        Columns to plot.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from .plotting import method_palette

    palette = method_palette(methods)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, top in zip(axes, [150, 30]):
        part = curves[curves.n <= top]
        for m in methods:
            style = (dict(ls="--", lw=1.2) if m.startswith("weighted")
                     else dict(lw=2.4, marker=".", zorder=3) if m == "linear RLS2"
                     else dict(lw=1.6))
            ax.plot(part.n, part[m], label=m, color=palette[m], **style)
        ax.set_yscale("log")
        ax.set_xlabel("number of training examples n")
        ax.set_ylabel("lower bound of the test RMSE")
        ax.set_title("Figure 3: learning curves" + (" (zoom, n ≤ 30)" if top == 30 else ""))
    axes[0].legend(fontsize="small")
    return fig


def weighted_lasso_difference(X_tr, y_tr, curves, ns=(20, 50, 150)):
    r"""Largest difference between linear RLS2 and the equivalent weighted Lasso.

    Linear RLS2 at :math:`\lambda` (Problem 8 of [1]_ with the scaling :math:`s`) has the same
    solution as the Lasso with penalty :math:`\mu\sum_i|w_i|/\sqrt{s_i}` at
    :math:`\mu=\lambda\sum_i|w_i|/\sqrt{s_i}` (minimising Problem 8 over :math:`d` for fixed
    :math:`w` gives the squared penalty :math:`\tfrac\lambda2(\sum_i|w_i|/\sqrt{s_i})^2`). Both
    are solved at the RMSE-optimal :math:`\lambda` of Experiment 1 for a few :math:`n`.

    Parameters
    ----------
    X_tr : ndarray of shape (n_train, p)
        Training strings.
    y_tr : ndarray of shape (n_train,)
        Training outputs.
    curves : pandas.DataFrame
        Output of :func:`learning_curves` (column ``lam*``); a size missing from it uses
        :math:`\lambda = 10^{-3}`.
    ns : tuple of int, default=(20, 50, 150)
        Training sizes.

    Returns
    -------
    max_diff : float
        :math:`\max|w_{\rm RLS2}-w_{\rm weighted\ Lasso}|` over the sizes and coefficients.
    """
    from sklearn.linear_model import Lasso

    from ..rls2 import rls2_linear_solve

    max_diff = 0.0
    for n in ns:
        lam = float(curves.loc[curves.n == n, "lam*"].iloc[0]) if n in set(curves.n) else 1e-3
        X, y = X_tr[:n], y_tr[:n]
        res = rls2_linear_solve(X, y, lam=lam, scaling="norm", tol=1e-12)
        keep = res.scaling > 0
        root_s = np.sqrt(res.scaling[keep])
        mu = lam * np.sum(np.abs(res.coef[keep]) / root_s)
        lasso = Lasso(alpha=mu / n, fit_intercept=False, tol=1e-14, max_iter=1_000_000)
        beta = lasso.fit(X[:, keep] * root_s, y).coef_
        max_diff = max(max_diff, np.abs(beta * root_s - res.coef[keep]).max())
    return max_diff


def learned_from(df, col, threshold=0.1):
    """Smallest training size from which a learning curve stays at or below a threshold.

    Parameters
    ----------
    df : pandas.DataFrame
        Learning curves with a column ``n`` (increasing).
    col : str
        Method column.
    threshold : float, default=0.1
        RMSE threshold (10 times the noise standard deviation of the binary strings).

    Returns
    -------
    n : int or None
        None if the curve is above the threshold at the largest size.
    """
    ok = (df[col] <= threshold).to_numpy()
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(df.n.iloc[bad[-1] + 1]) if bad.size else int(df.n.iloc[0])


def extra_draws(seed, n_draws, grids, n_max=30):
    """Learning curves on further draws of the binary strings (robustness of claim C2).

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Parent seed; draw ``k`` uses ``spawn_seeds(seed, n_draws)[k]``.
    n_draws : int
        Number of draws (0 gives an empty table).
    grids : dict
        Keyword arguments of :func:`learning_curves` (``lams_rls2``, ``lams_krr``,
        ``gammas_rbf``, ``alphas_lasso``).
    n_max : int, default=30
        Training sizes ``1..n_max``.

    Returns
    -------
    extra : pandas.DataFrame
        One row per draw: from which n RLS2 and the Lasso learn the concept, and the sizes
        where the Lasso is below RLS2.
    """
    import pandas as pd

    from ..datasets import make_binary_strings
    from .experiments import spawn_seeds

    rows = []
    for k, s in enumerate(spawn_seeds(seed, n_draws) if n_draws else []):
        X, y = make_binary_strings(250, random_state=s)
        df = learning_curves(X[:150], y[:150], X[150:], y[150:], list(range(1, n_max + 1)),
                             **grids)
        rows.append({"draw": k + 1, "RLS2 learns from n": learned_from(df, "linear RLS2"),
                     "Lasso learns from n": learned_from(df, "Lasso"),
                     "Lasso below RLS2 for n in": [int(n) for n in
                                                   df.n[df.Lasso < df["linear RLS2"] - 1e-4]]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Experiment 2 (Sec. 5.1, Figure 2, Table 1): prostate cancer
# --------------------------------------------------------------------------------------
def prostate_cv(X, y, lams, seed):
    r"""10-fold cross-validation of linear RLS2 over :math:`\lambda` (Figure 2 of [1]_).

    Folds are contiguous blocks of 7 after a seeded shuffle (the toolbox's scheme; the
    paper's folds are unknown); intercept :math:`b` = mean training output; the choice is
    the one-standard-error rule (the largest :math:`\lambda` whose CV error is within one
    standard error of the best).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Training inputs.
    y : ndarray of shape (n,)
        Training outputs.
    lams : ndarray
        :math:`\lambda` grid.
    seed : int or numpy.random.SeedSequence
        Seed of the shuffle.

    Returns
    -------
    lams : ndarray
        The grid in decreasing order.
    mean, se : ndarray
        CV mean squared error and its standard error per :math:`\lambda`.
    lam_1se : float
        :math:`\lambda` of the one-standard-error rule.
    lam_min : float
        :math:`\lambda` with the smallest CV error.
    """
    from ..rls2 import rls2_linear_path

    perm = np.random.default_rng(seed).permutation(len(y))
    folds = [perm[i:i + 7] for i in range(0, len(perm), 7)]
    err = np.zeros((len(folds), lams.size))
    for k, f in enumerate(folds):
        fit = np.setdiff1d(np.arange(len(y)), f)
        path = rls2_linear_path(X[fit], y[fit], lams=lams, intercept="mean")
        W = np.stack([r.coef for r in path], 1)
        err[k] = np.mean((X[f] @ W + path[0].intercept - y[f][:, None]) ** 2, axis=0)
    lams = np.sort(lams)[::-1]
    mean, se = err.mean(0), err.std(0, ddof=1) / np.sqrt(len(folds))
    best = int(np.argmin(mean))
    within = np.flatnonzero(mean <= mean[best] + se[best])
    return lams, mean, se, float(lams[within[np.argmax(lams[within])]]), float(lams[best])


def prostate_model(data, lam):
    r"""Linear RLS2 on the 67 prostate training cases and its test error (Table 1 of [1]_).

    Parameters
    ----------
    data : sklearn.utils.Bunch
        Output of :func:`prostate_split`.
    lam : float
        Regularisation parameter.

    Returns
    -------
    res : MKLResult
        Solution of :func:`mklcore.rls2.rls2_linear_solve` (intercept = mean training lpsa,
        relative duality gap :math:`\le 10^{-10}`).
    test_mse : float
        Mean squared error on the 30 test cases.
    test_se : float
        Its standard error (sd of the squared errors / :math:`\sqrt{30}`).
    """
    from ..rls2 import rls2_linear_solve

    res = rls2_linear_solve(data.X_train, data.y_train, lam=lam, intercept="mean", tol=1e-10)
    sq = (data.X_test @ res.coef + res.intercept - data.y_test) ** 2
    return res, sq.mean(), sq.std(ddof=1) / np.sqrt(sq.size)


def prostate_study(data, lams, fold_seeds, lam_table=0.088):
    r"""Cross-validation and the two prostate models of Table 1 of [1]_.

    Parameters
    ----------
    data : sklearn.utils.Bunch
        Output of :func:`prostate_split`.
    lams : ndarray
        CV grid of :math:`\lambda`.
    fold_seeds : list
        One seed per fold assignment; the first one is plotted (Figure 2).
    lam_table : float, default=0.088
        :math:`\lambda` of the model compared with Table 1.

    Returns
    -------
    study : sklearn.utils.Bunch
        ``cv_lams``, ``cv_mean``, ``cv_se``, ``lam_cv`` (one-SE rule), ``lam_min`` of the
        first fold assignment; ``cv_picks`` (one-SE :math:`\lambda` of every assignment) and
        ``picks_5`` (how many of them select exactly 5 variables); ``res_cv``, ``test_cv``,
        ``se_cv`` (model at ``lam_cv``) and ``res_table``, ``test_table``, ``se_table``
        (model at ``lam_table``), as returned by :func:`prostate_model`.
    """
    from sklearn.utils import Bunch

    X, y = data.X_train, data.y_train
    cv_lams, cv_mean, cv_se, lam_cv, lam_min = prostate_cv(X, y, lams, fold_seeds[0])
    cv_picks = [lam_cv] + [prostate_cv(X, y, lams, s)[3] for s in fold_seeds[1:]]
    models = {}  # the fold assignments often pick the same lambda: one fit per value

    def model(lam):
        if lam not in models:
            models[lam] = prostate_model(data, lam)
        return models[lam]

    res_cv, test_cv, se_cv = model(lam_cv)
    res_tab, test_tab, se_tab = model(lam_table)
    picks_5 = sum(np.count_nonzero(model(lam)[0].coef) == 5 for lam in cv_picks)
    return Bunch(cv_lams=cv_lams, cv_mean=cv_mean, cv_se=cv_se, lam_cv=lam_cv, lam_min=lam_min,
                 cv_picks=cv_picks, picks_5=picks_5, res_cv=res_cv, test_cv=test_cv, se_cv=se_cv,
                 res_table=res_tab, test_table=test_tab, se_table=se_tab, lam_table=lam_table)


def plot_prostate(study, path, features):
    """Figure 2 of [1]_ (CV curve) and the coefficient profiles against the df (15).

    Parameters
    ----------
    study : sklearn.utils.Bunch
        Output of :func:`prostate_study`.
    path : list of MKLResult
        A fine regularisation path of linear RLS2 on the training cases.
    features : list of str
        Input names.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    coef_path = np.stack([r.coef for r in path])
    df_path = np.array([r.df for r in path])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax = axes[0]
    ax.errorbar(study.cv_lams, study.cv_mean, yerr=study.cv_se, fmt="o-", ms=3, capsize=2, lw=1)
    ax.axvline(study.lam_cv, color="C3", ls="--", label=f"one-SE rule: λ = {study.lam_cv:.3g}")
    ax.axvline(study.lam_table, color="C2", ls=":", label=f"λ = {study.lam_table} (Table 1)")
    ax.axhline(study.cv_mean.min() + study.cv_se[np.argmin(study.cv_mean)], color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("10-fold CV mean squared error")
    ax.set_title("Figure 2: cross-validation (prostate)")
    ax.legend(fontsize="small")
    ax = axes[1]
    for j, name in enumerate(features):
        ax.plot(df_path, coef_path[:, j], label=name)
    ax.axvline(study.res_table.df, color="C2", ls=":")
    ax.set_xlabel("degrees of freedom (15)")
    ax.set_ylabel("coefficient w (12)")
    ax.set_title("Coefficient profiles (the paper's 'Figure 3' of Sec. 5.1)")
    ax.legend(fontsize="x-small", ncol=2)
    return fig


def paper_table1(features):
    """Table 1 of [1]_ (p. 14 of arXiv v1): prostate coefficients and test errors.

    The RLS2 column is the paper's; the others are ESL's Table 3.3 as the paper prints them
    (blank = 0).

    Parameters
    ----------
    features : list of str
        The 8 input names, in the data's order.

    Returns
    -------
    table : pandas.DataFrame
        Rows ``Intercept``, the features, ``Test error``, ``Std error``; one column per method.
    """
    import pandas as pd

    return pd.DataFrame({
        "RLS2": [2.452, 0.544, 0.207, 0, 0.104, 0.170, 0, 0, 0.064, 0.454, 0.152],
        "LS": [2.465, 0.680, 0.263, -0.141, 0.210, 0.305, -0.288, -0.021, 0.267, 0.521, 0.179],
        "Best subset": [2.477, 0.740, 0.316, 0, 0, 0, 0, 0, 0, 0.492, 0.143],
        "Ridge": [2.452, 0.420, 0.238, -0.046, 0.162, 0.227, 0.000, 0.040, 0.133, 0.492, 0.165],
        "Lasso": [2.468, 0.533, 0.169, 0, 0.002, 0.094, 0, 0, 0, 0.479, 0.164],
        "PCR": [2.497, 0.543, 0.289, -0.152, 0.214, 0.315, -0.051, 0.232, -0.056, 0.449, 0.105],
        "PLS": [2.452, 0.419, 0.344, -0.026, 0.220, 0.243, 0.079, 0.011, 0.084, 0.528, 0.152],
    }, index=["Intercept", *features, "Test error", "Std error"])


def table1_column(res, test, se):
    """One column of Table 1: intercept, coefficients (12), test error and its standard error.

    Parameters
    ----------
    res : MKLResult
        A linear RLS2 solution (``intercept``, ``coef``).
    test : float
        Test mean squared error.
    se : float
        Its standard error.

    Returns
    -------
    column : list of float
    """
    return [res.intercept, *res.coef, test, se]


def least_squares_baseline(data):
    """Least squares with intercept on the prostate split (a check of the data and split).

    Parameters
    ----------
    data : sklearn.utils.Bunch
        Output of :func:`prostate_split`.

    Returns
    -------
    column : list of float
        Intercept, coefficients, test mean squared error and its standard error, as in the
        LS column of Table 1 of [1]_.
    """
    A = np.column_stack([np.ones(len(data.y_train)), data.X_train])
    beta_ls = np.linalg.lstsq(A, data.y_train, rcond=None)[0]
    sq_ls = (np.column_stack([np.ones(len(data.y_test)), data.X_test]) @ beta_ls
             - data.y_test) ** 2
    return [*beta_ls, sq_ls.mean(), sq_ls.std(ddof=1) / np.sqrt(sq_ls.size)]


def table1_tables(study, data, table1_paper):
    r"""Table 1 of [1]_ side by side with ours, and the paper-vs-ours comparisons.

    Two RLS2 models are compared with the paper's column: the one of the paper's protocol
    (:math:`\lambda` by 10-fold CV with the one-standard-error rule, Sec. 5.1 of [1]_; the
    primary result) and the one at ``study.lam_table``, a value set by hand because it
    reproduces the paper's column (its rows are matched by construction, verdict n/a).

    Parameters
    ----------
    study : sklearn.utils.Bunch
        Output of :func:`prostate_study`.
    data : sklearn.utils.Bunch
        Output of :func:`prostate_split`.
    table1_paper : pandas.DataFrame
        Output of :func:`paper_table1`.

    Returns
    -------
    table1 : pandas.DataFrame
        The paper's columns next to ours (RLS2 at the protocol's :math:`\lambda`, RLS2 at
        ``study.lam_table``, least squares), 3 decimals.
    table1_compare : pandas.DataFrame
        :func:`mklcore.repro.reporting.compare` of both RLS2 columns (tolerance 0.01 on the
        intercept and coefficients, 0.005 on the errors; the hand-set rows not compared) and of
        the least-squares test error (a check of the data and the split).
    """
    import pandas as pd

    from .reporting import compare

    protocol = table1_column(study.res_cv, study.test_cv, study.se_cv)
    hand = table1_column(study.res_table, study.test_table, study.se_table)
    ls = least_squares_baseline(data)
    lab_cv = f"λ = {study.lam_cv:.3g} from the paper's protocol (10-fold CV, one-SE rule)"
    lab_hand = f"λ = {study.lam_table:g} hand-set to the paper's value"
    table1 = pd.DataFrame({
        "paper RLS2": table1_paper["RLS2"],
        f"ours RLS2, {lab_cv}": protocol,
        f"ours RLS2, {lab_hand}": hand,
        "paper LS": table1_paper["LS"],
        "ours LS": ls,
        **{f"paper {c}": table1_paper[c] for c in ["Best subset", "Ridge", "Lasso", "PCR", "PLS"]},
    }).round(3)
    by_construction = (f"matched by construction: λ = {study.lam_table:g} was chosen by hand "
                       "because it reproduces the paper's column (the paper does not print its λ)")
    rows = []
    for label, column, comparable in [(lab_cv, protocol, True), (lab_hand, hand, by_construction)]:
        rows += [{"item": f"Table 1 RLS2 {name} ({label})",
                  "paper": float(table1_paper.loc[name, "RLS2"]), "ours": round(float(v), 4),
                  "atol": 0.01 if k < 9 else 0.005, "source": "Table 1",
                  "comparable": comparable}
                 for k, (name, v) in enumerate(zip(table1_paper.index, column))]
    rows.append({"item": "Table 1 LS test error (check of data and split)", "paper": 0.521,
                 "ours": round(float(ls[-2]), 4), "atol": 0.005, "source": "Table 1 (ESL)"})
    return table1, compare(rows)


def second_diff_ratio(t, W):
    """Largest second difference of a path relative to its largest first difference.

    Zero (up to rounding) for a path that is linear in ``t``.

    Parameters
    ----------
    t : ndarray of shape (n,)
        Path parameter (increasing or decreasing).
    W : ndarray of shape (n, p)
        Coefficients along the path.

    Returns
    -------
    ratio : float
    """
    d1 = np.diff(W, axis=0) / np.diff(t)[:, None]
    d2 = np.diff(d1, axis=0)
    return float(np.abs(d2).max() / np.abs(d1).max())


def path_curvature(data, lams):
    r"""Curvature of the linear RLS2 path in :math:`\lambda` and in the Lasso parameter :math:`\mu`.

    On a stretch of constant support the path is not piecewise linear in :math:`\lambda`
    (Sec. 5.1 of [1]_), while it is linear in :math:`\mu=\lambda\sum_i|w_i|/\sqrt{s_i}`, the
    parameter of the equivalent weighted Lasso.

    Parameters
    ----------
    data : sklearn.utils.Bunch
        Output of :func:`prostate_split`.
    lams : ndarray
        :math:`\lambda` values of the stretch.

    Returns
    -------
    same_support : bool
        True if the support of :math:`w` is the same at every value.
    curv_lam : float
        :func:`second_diff_ratio` in :math:`\lambda`.
    curv_mu : float
        :func:`second_diff_ratio` in :math:`\mu`.
    """
    from ..rls2 import rls2_linear_solve

    seg = [rls2_linear_solve(data.X_train, data.y_train, lam=lam, intercept="mean", tol=1e-13)
           for lam in lams]
    W_seg = np.stack([r.coef for r in seg])
    mu_seg = np.array([lam * np.sum(np.abs(r.coef) / np.sqrt(r.scaling))
                       for lam, r in zip(lams, seg)])
    same_support = len({tuple(np.flatnonzero(r.coef)) for r in seg}) == 1
    return same_support, second_diff_ratio(lams, W_seg), second_diff_ratio(mu_seg, W_seg)


# --------------------------------------------------------------------------------------
# Sec. 5.2 (Tables 2-4, Figures 4-8): nonlinear RLS2 on the UCI sets
# --------------------------------------------------------------------------------------
def path_lambdas(Ktr, y, s, intercept, grid):
    r"""The :math:`\lambda` grid of a path, extended up to the Lemma-5 threshold if needed.

    Above the threshold :math:`\lambda_1` the solution is the vertex :math:`e_{i^\star}` of the
    kernel with the largest alignment :math:`s_iy^\top\mathbf K_iy` (Lemma 5 of [1]_); a path
    starts there. If :math:`\lambda_1` lies above the grid's top, :math:`1.01\lambda_1` is
    appended.

    Parameters
    ----------
    Ktr : ndarray of shape (m, n, n)
        Training Gram stack.
    y : ndarray of shape (n,)
        Training outputs.
    s : ndarray of shape (m,)
        Scaling.
    intercept : float or "mean"
        Intercept rule.
    grid : ndarray
        The common grid.

    Returns
    -------
    lams : ndarray
        The grid, possibly with :math:`1.01\lambda_1` appended.
    lam1 : float
        The threshold :math:`\lambda_1`.
    """
    from ..rls2 import rls2_lambda_max

    lam1 = rls2_lambda_max(Ktr, y, scaling=s, intercept=intercept, check_input=False)
    return (grid if lam1 <= grid.max() else np.r_[grid, 1.01 * lam1]), lam1


def block(K, rows, cols):
    """The sub-stack ``K[:, rows][:, :, cols]``, C-contiguous, one kernel at a time.

    Parameters
    ----------
    K : ndarray of shape (m, n, n)
        Gram stack.
    rows : ndarray of int
        Row indices.
    cols : ndarray of int
        Column indices.

    Returns
    -------
    K_sub : ndarray of shape (m, len(rows), len(cols))
    """
    out = np.empty((K.shape[0], len(rows), len(cols)))
    for i in range(K.shape[0]):  # the column gather writes straight into the output
        K[i].take(rows, axis=0).take(cols, axis=1, out=out[i])
    return out


#: The kernel stack of the last UCI data set used in this process (see UCIPaths.stack).
_STACKS = {}


class UCIPaths:
    r"""Warm-started RLS2 paths on random splits of the UCI sets (Sec. 5.2 of [1]_).

    The basis kernels are the bank of the paper (``kernel_bank("rls2_default")``: polynomial
    degrees 1–3 and 10 Gaussian widths, on all features and on each single feature,
    :math:`m=13(N+1)`), computed once on all examples of a data set with the transductive
    trace scaling (18). Calling the object runs one split; it is the ``func`` of
    :func:`mklcore.repro.experiments.run`.

    Parameters
    ----------
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    lams : ndarray
        Common :math:`\lambda` grid of the paths.
    """

    def __init__(self, uci, lams):
        self.uci = uci
        self.lams = lams

    def stack(self, name):
        """Kernel stack on all examples of a data set and its transductive trace scaling.

        Only the last data set's stack is kept in memory, per process and keyed by the data
        (not by this object, which parallel runs send to their workers afresh with every
        cell): consecutive cells of one data set in a worker compute it once.

        Parameters
        ----------
        name : str
            Data set name.

        Returns
        -------
        K : ndarray of shape (m, n, n)
            Gram stack.
        s : ndarray of shape (m,)
            Scaling (18).
        """
        from ..kernels import kernel_bank, kernel_stack
        from ..rls2 import rls2_scaling

        X = np.ascontiguousarray(self.uci[name].data)
        key = (name, X.dtype.str, X.shape, hashlib.sha256(X.tobytes()).hexdigest())
        if key not in _STACKS:
            _STACKS.clear()
            K = kernel_stack(kernel_bank("rls2_default", n_features=X.shape[1]), X)
            _STACKS[key] = (K, rls2_scaling(K, "trace"))
        return _STACKS[key]

    def __call__(self, data, ratio, version, repeat, seed):
        r"""One random split: the warm-started path and the test performance per :math:`\lambda`.

        Regression: intercept = mean training output, RMSE; classification: :math:`b = 0`,
        accuracy of the sign.

        Parameters
        ----------
        data : str
            Data set name.
        ratio : float
            Training fraction (0.6 or 0.7).
        version : int
            Cache version (not used in the computation).
        repeat : int
            Split index (not used in the computation; the split comes from ``seed``).
        seed : int or numpy.random.SeedSequence
            Seed of the split.

        Returns
        -------
        rows : list of dict
            One per :math:`\lambda`: ``lam``, ``start`` (above the common grid), ``lam1``,
            ``perf``, ``n_selected``, ``n_iter``, ``gap``, ``success``, ``path_time``,
            ``path_iters``, ``vertex_first`` (the first solution is the max-alignment
            vertex), ``selected``.
        """
        from ..rls2 import rls2_path
        from .experiments import repeated_splits

        b = self.uci[data]
        K, s = self.stack(data)
        split = repeated_splits(b.target, n_repeats=1, test_size=round(1 - ratio, 2), seed=seed,
                                stratify=b.task == "classification")[0]
        tr, te = split["train"], split["test"]
        regression = b.task == "regression"
        intercept = "mean" if regression else 0.0
        Ktr = block(K, tr, tr)
        t0 = time.perf_counter()
        lams, lam1 = path_lambdas(Ktr, b.target[tr], s, intercept, self.lams)
        path = rls2_path(Ktr, b.target[tr], lams=lams, scaling=s, intercept=intercept,
                         check_input=False)
        seconds = time.perf_counter() - t0  # includes finding lambda_1
        a = path[0].alignment
        blocks = {}

        def test_block(i):  # test-by-training block of kernel i, extracted once per split
            if i not in blocks:
                blocks[i] = K[i].take(te, axis=0).take(tr, axis=1)
            return blocks[i]

        rows = []
        for r in path:
            sel = np.flatnonzero(r.weights)
            f = sum(r.weights[i] * s[i] * (test_block(i) @ r.dual_coef) for i in sel)
            f = f + r.intercept
            y_te = b.target[te]
            perf = (np.sqrt(np.mean((f - y_te) ** 2)) if regression
                    else np.mean(np.where(f > 0, 1.0, -1.0) == y_te))
            rows.append({"lam": r.lam, "start": r.lam > self.lams.max(), "lam1": lam1,
                         "perf": perf, "n_selected": r.n_selected, "n_iter": r.n_iter,
                         "gap": r.gap, "success": r.success, "path_time": seconds,
                         "path_iters": sum(p.n_iter for p in path),
                         "vertex_first": bool(np.argmax(path[0].weights) == np.argmax(a)
                                              and path[0].n_selected == 1),
                         "selected": sel.tolist()})
        return rows


def table2_compare(uci):
    """Table 2 of [1]_ (examples and kernels per data set) against our encoding.

    Parameters
    ----------
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`, in the order of :data:`TABLE2`.

    Returns
    -------
    table : pandas.DataFrame
        :func:`mklcore.repro.reporting.compare` rows (exact match required); stand-ins are
        flagged in the item and not compared (verdict n/a): their size was subsampled to the
        paper's, and their kernel count is that of other data.
    """
    from .reporting import compare

    rows = []
    for name, (_, _, n_ex, _, n_ker) in TABLE2.items():
        b = uci[name]
        tag = " (stand-in)" if b.stand_in else ""
        size_ok = kernels_ok = True
        if b.stand_in:
            size_ok = (f"matched by construction: the stand-in was subsampled to the paper's "
                       f"{n_ex} rows ({b.stand_in})" if b.data.shape[0] == n_ex
                       else f"different data: {b.stand_in}")
            kernels_ok = (f"different data: {b.stand_in}; {b.data.shape[1]} inputs give "
                          f"13(N+1) = {b.n_kernels} kernels")
        rows += [{"item": f"Table 2 {name}{tag} examples", "paper": n_ex, "ours": b.data.shape[0],
                  "atol": 0, "source": "Table 2", "note": b.stand_in or "",
                  "comparable": size_ok},
                 {"item": f"Table 2 {name}{tag} kernels", "paper": n_ker, "ours": b.n_kernels,
                  "atol": 0, "source": "Table 2", "note": b.stand_in or b.note,
                  "comparable": kernels_ok}]
    return compare(rows)


def at_best_lambda(df):
    r"""Statistics of one (data set, ratio) at :math:`\lambda^*` (Tables 3 and 4 of [1]_).

    :math:`\lambda^*` is the value with the best average test performance over the splits.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :class:`UCIPaths` for one data set and ratio (columns ``lam``, ``perf``,
        ``metric``, ``n_selected``, ``repeat``, ``path_iters``, ``n_iter``, ``path_time``,
        ``success``, ``gap``).

    Returns
    -------
    row : pandas.Series
        ``metric``, ``lam*``, ``perf mean``/``sd``, ``kernels mean``/``sd`` at
        :math:`\lambda^*`; ``iters/path``, ``iters/lambda``, ``time/path`` over the path;
        ``all converged``, ``max gap``.
    """
    import pandas as pd

    mean = df.groupby("lam").perf.mean()
    lam_star = mean.idxmin() if df.metric.iloc[0] == "rmse" else mean.idxmax()
    at = df[df.lam == lam_star]
    return pd.Series({
        "metric": df.metric.iloc[0], "lam*": lam_star,
        "perf mean": at.perf.mean(), "perf sd": at.perf.std(ddof=1) if len(at) > 1 else np.nan,
        "kernels mean": at.n_selected.mean(),
        "kernels sd": at.n_selected.std(ddof=1) if len(at) > 1 else np.nan,
        "iters/path": df.groupby("repeat").path_iters.first().mean(),
        "iters/lambda": df.n_iter.mean(),
        "time/path": df.groupby("repeat").path_time.first().mean(),
        "all converged": bool(df.success.all()), "max gap": df.gap.max(),
    })


def uci_tables34(uci_raw, path_starts, uci):
    """Tables 3 and 4 of [1]_: performance, kernels, iterations and time at the best lambda.

    Parameters
    ----------
    uci_raw : pandas.DataFrame
        Rows of :class:`UCIPaths` on the common grid.
    path_starts : pandas.DataFrame
        The first (largest-lambda) row of every path.
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.

    Returns
    -------
    tables34 : pandas.DataFrame
        Indexed by (data, ratio): ``stand-in``, the columns of :func:`at_best_lambda`,
        ``kernels of m``, ``first-lambda iters``, ``vertex at largest lambda``.
    """
    tables34 = uci_raw.groupby(["data", "ratio"], sort=False).apply(at_best_lambda,
                                                                    include_groups=False)
    tables34["kernels of m"] = [uci[d].n_kernels for d, _ in tables34.index]
    starts = path_starts.groupby(["data", "ratio"], sort=False)
    tables34["first-lambda iters"] = starts.n_iter.max()
    tables34["vertex at largest lambda"] = starts.vertex_first.all()
    tables34.insert(0, "stand-in", ["yes" if uci[d].stand_in else "" for d, _ in tables34.index])
    return tables34


def table3_compare(tables34):
    """Heart's accuracy, the one surviving cell of Table 3 of [1]_ ("84 (3.28)"), against ours.

    Parameters
    ----------
    tables34 : pandas.DataFrame
        Output of :func:`uci_tables34`.

    Returns
    -------
    table : pandas.DataFrame
        :func:`mklcore.repro.reporting.compare` rows, one per ratio (none without Heart);
        tolerance = the paper's standard deviation over splits.
    """
    from .reporting import compare

    rows = []
    if "heart" in tables34.index.get_level_values(0):
        for ratio, row in tables34.loc["heart"].iterrows():
            rows.append({"item": f"Table 3 heart accuracy % ({int(ratio * 100)}/"
                                 f"{int(100 - ratio * 100)})",
                         "paper": 84.0, "ours": round(100 * row["perf mean"], 2), "atol": 3.28,
                         "source": "Table 3 (only surviving cell; split column unknown)",
                         "note": "tolerance = the paper's sd over splits"})
    return compare(rows)


def uci_path_means(uci_raw):
    """Mean and sd over the splits along the UCI paths (the curves of Figures 4–8 of [1]_).

    Parameters
    ----------
    uci_raw : pandas.DataFrame
        Rows of :class:`UCIPaths` on the common grid.

    Returns
    -------
    summ : pandas.DataFrame
        One row per (data, ratio, lam): ``perf``, ``perf_sd``, ``k`` (selected kernels),
        ``k_sd``, ``it`` (iterations).
    """
    return uci_raw.groupby(["data", "ratio", "lam"]).agg(
        perf=("perf", "mean"), perf_sd=("perf", "std"), k=("n_selected", "mean"),
        k_sd=("n_selected", "std"), it=("n_iter", "mean")).reset_index()


def _panel_grid(n_panels, title):
    import matplotlib.pyplot as plt

    ncol = 5 if n_panels > 5 else n_panels
    nrow = int(np.ceil(n_panels / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.6 * nrow), squeeze=False)
    fig.suptitle(title)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, axes.flat


def plot_uci_performance(summ, tables34, uci, ratios):
    """Figures 4–8 (a) of [1]_: test performance along the path, one panel per data set.

    Parameters
    ----------
    summ : pandas.DataFrame
        Output of :func:`uci_path_means`.
    tables34 : pandas.DataFrame
        Output of :func:`uci_tables34` (the vertical line at lambda*).
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    ratios : list of float
        Training fractions, one curve each.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    sets = list(dict.fromkeys(tables34.index.get_level_values(0)))
    fig, axes = _panel_grid(len(sets), "Figures 4–8 (a): test performance along the path "
                                       "(mean ± sd over splits)")
    for ax, name in zip(axes, sets):
        for ratio in ratios:
            g = summ[(summ.data == name) & (summ.ratio == ratio)]
            ax.plot(g.lam, g.perf, label=f"{int(ratio * 100)}/{int(100 - ratio * 100)}")
            ax.fill_between(g.lam, g.perf - g.perf_sd.fillna(0), g.perf + g.perf_sd.fillna(0),
                            alpha=0.2)
            ax.axvline(tables34.loc[(name, ratio), "lam*"], ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_title(name + (" (stand-in)" if uci[name].stand_in else ""), fontsize="small")
        ax.set_ylabel("RMSE" if uci[name].task == "regression" else "accuracy", fontsize="small")
        ax.set_xlabel("λ", fontsize="small")
    axes[0].legend(fontsize="x-small")
    return fig


def plot_uci_kernels(summ, tables34, uci, ratio):
    """Figures 4–8 (b) of [1]_: number of selected kernels along the path.

    Parameters
    ----------
    summ : pandas.DataFrame
        Output of :func:`uci_path_means`.
    tables34 : pandas.DataFrame
        Output of :func:`uci_tables34`.
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    ratio : float
        Training fraction plotted.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    sets = list(dict.fromkeys(tables34.index.get_level_values(0)))
    fig, axes = _panel_grid(len(sets), "Figures 4–8 (b): selected kernels along the path "
                                       "(mean ± sd)")
    for ax, name in zip(axes, sets):
        g = summ[(summ.data == name) & (summ.ratio == ratio)]
        ax.plot(g.lam, g.k)
        ax.fill_between(g.lam, g.k - g.k_sd.fillna(0), g.k + g.k_sd.fillna(0), alpha=0.25)
        ax.axvline(tables34.loc[(name, ratio), "lam*"], ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_title(f"{name} (m = {uci[name].n_kernels})", fontsize="small")
        ax.set_xlabel("λ", fontsize="small")
        ax.set_ylabel("selected kernels", fontsize="small")
    return fig


#: The three solvers of the warm-start ablation: our certified solver, and the paper's plain
#: Algorithm 1 with the toolbox's residual stopping rule, with and without warm starts.
ABLATION_SOLVERS = [("certified, warm", {}),
                    ("toolbox rule, warm", {"accelerate": False, "residual_tol": 1e-4}),
                    ("toolbox rule, cold", {"accelerate": False, "residual_tol": 1e-4,
                                            "warm_start": False})]


def ablation(paths, name, seed, lams):
    r"""Iterations per :math:`\lambda` with and without warm starts on one 70/30 split.

    Runs the three solvers of :data:`ABLATION_SOLVERS` along the same path (started at the
    Lemma-5 threshold if it lies above ``lams``; the start point is set apart).

    Parameters
    ----------
    paths : UCIPaths
        Holds the data and the kernel stacks.
    name : str
        Data set name.
    seed : int or numpy.random.SeedSequence
        Seed of the split.
    lams : ndarray
        :math:`\lambda` grid.

    Returns
    -------
    rows : list of dict
        One per solver: ``data``, ``solver``, ``iters/lambda``, ``iters/path``, ``time/path``,
        ``max relative gap``, ``fits`` (the λ values of the common grid), ``fits converged``
        (how many met the solver's stopping rule), ``iters by lambda``.
    """
    from ..rls2 import rls2_path
    from .experiments import repeated_splits

    b = paths.uci[name]
    K, s = paths.stack(name)
    split = repeated_splits(b.target, n_repeats=1, test_size=0.3, seed=seed,
                            stratify=b.task == "classification")[0]
    Ktr = block(K, split["train"], split["train"])
    intercept = "mean" if b.task == "regression" else 0.0
    lams_path, _ = path_lambdas(Ktr, b.target[split["train"]], s, intercept, lams)
    out = []
    for label, kw in ABLATION_SOLVERS:
        t0 = time.perf_counter()
        path = rls2_path(Ktr, b.target[split["train"]], lams=lams_path, scaling=s,
                         intercept=intercept, check_input=False, **kw)
        path = path[len(path) - lams.size:]  # the common grid (start point set apart)
        out.append({"data": name, "solver": label,
                    "iters/lambda": np.mean([r.n_iter for r in path]),
                    "iters/path": sum(r.n_iter for r in path),
                    "time/path": time.perf_counter() - t0,
                    "max relative gap": max(r.gap for r in path),
                    "fits": len(path), "fits converged": sum(r.success for r in path),
                    "iters by lambda": [r.n_iter for r in path]})
    return out


class Ablation:
    r"""The warm-start ablation of one data set as a cell of :func:`mklcore.repro.experiments.run`.

    ``run(Ablation(paths, lams), [{"data": name} ...], seed=seed)`` gives the rows of
    :func:`ablation` for every data set (the same split seed ``spawn_seeds(seed, 1)[0]``),
    computed in parallel and cached.

    Parameters
    ----------
    paths : UCIPaths
        Holds the data and the kernel stacks.
    lams : ndarray
        :math:`\lambda` grid.
    """

    def __init__(self, paths, lams):
        self.paths = paths
        self.lams = lams

    def __call__(self, data, version, repeat, seed):
        """Rows of :func:`ablation` for data set ``data`` (without the ``data`` key).

        Parameters
        ----------
        data : str
            Data set name.
        version : int
            Cache version (not used in the computation).
        repeat : int
            Repeat index (not used; the split comes from ``seed``).
        seed : int or numpy.random.SeedSequence
            Seed of the split.

        Returns
        -------
        rows : list of dict
            One per solver, the keys of :func:`ablation` but ``data``.
        """
        rows = ablation(self.paths, data, seed, self.lams)
        return [{k: v for k, v in row.items() if k != "data"} for row in rows]


def ablation_tables(abl, sets):
    """Iterations per lambda and largest duality gap, one row per data set, one column per solver.

    Parameters
    ----------
    abl : pandas.DataFrame
        Rows of :func:`ablation`.
    sets : list of str
        Data sets, in display order.

    Returns
    -------
    iters : pandas.DataFrame
        Mean iterations per lambda.
    gaps : pandas.DataFrame
        Largest relative duality gap on the path.
    """
    iters = abl.pivot(index="data", columns="solver", values="iters/lambda").loc[sets]
    gaps = abl.pivot(index="data", columns="solver", values="max relative gap").loc[sets]
    return iters, gaps


def plot_iterations(abl, lams):
    """Figures 4–8 (c) of [1]_: iterations per lambda, mean over the data sets, per solver.

    Parameters
    ----------
    abl : pandas.DataFrame
        Rows of :func:`ablation`.
    lams : ndarray
        The common grid.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for (label, _), style in zip(ABLATION_SOLVERS, ["-", "--", ":"]):
        its = np.mean([r for r in abl[abl.solver == label]["iters by lambda"]], axis=0)
        ax.plot(np.sort(lams)[::-1], its, style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("λ (the path runs from right to left)")
    ax.set_ylabel("iterations (mean over data sets)")
    ax.set_title("Figures 4–8 (c): iterations per λ")
    ax.legend(fontsize="small")
    return fig


# --------------------------------------------------------------------------------------
# Sec. 5.3 (Table 5, Figure 9): one-vs-all linear RLS2 on a microarray set
# --------------------------------------------------------------------------------------
def ova_path(X, targets, scalings, rows, lams):
    r"""One warm-started linear RLS2 path per class (one-vs-all, :math:`b = 0`).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Inputs.
    targets : list of ndarray
        :math:`\pm1` targets, one per class.
    scalings : list of ndarray
        Scaling of each binary problem (Fisher rule (17) of [1]_).
    rows : ndarray of int
        Training rows.
    lams : ndarray
        :math:`\lambda` grid.

    Returns
    -------
    W : ndarray of shape (n_lams, n_classes, p)
        Coefficients (12) by decreasing :math:`\lambda`.
    paths : list of list of MKLResult
        The paths.
    """
    from ..rls2 import rls2_linear_path

    paths = [rls2_linear_path(X[rows], t[rows], lams=lams, scaling=s)
             for t, s in zip(targets, scalings)]
    return np.stack([[r.coef for r in p] for p in paths], axis=1), paths


def ova_predict(W, X, classes):
    """One-vs-all prediction, the class with the largest output, for every lambda.

    Parameters
    ----------
    W : ndarray of shape (n_lams, n_classes, p)
        Output of :func:`ova_path`.
    X : ndarray of shape (n, p)
        Inputs.
    classes : ndarray of shape (n_classes,)
        Class labels.

    Returns
    -------
    y_pred : ndarray of shape (n_lams, n)
    """
    return classes[np.argmax(np.einsum("lkg,ng->lnk", W, X), axis=2)]


def microarray_rls2(data, n_folds, n_lams, seed):
    r"""One-vs-all linear RLS2 with Fisher scaling, chosen by CV (Sec. 5.3 of [1]_).

    The grid has ``n_lams`` log-spaced values over the four decades below the largest
    Lemma-5 threshold of the binary problems; the **largest** :math:`\lambda` with the best
    stratified CV accuracy is chosen, and the test errors are averaged over all values that
    tie for the best CV accuracy (as in Table 5). "Selected genes" are those with a non-zero
    weight in at least one binary model.

    Parameters
    ----------
    data : sklearn.utils.Bunch
        Output of :func:`microarray_data`.
    n_folds : int
        Folds of the stratified CV.
    n_lams : int
        Number of :math:`\lambda` values.
    seed : int or numpy.random.SeedSequence
        Seed of the folds.

    Returns
    -------
    micro : sklearn.utils.Bunch
        ``folds``, ``lam_desc`` (the grid, decreasing), ``train_acc``, ``cv_mean``,
        ``cv_se``, ``test_err`` (per :math:`\lambda`), ``test_wrong_ties`` (per test patient,
        the fraction of the CV-tied :math:`\lambda` values that misclassify it), ``pick``
        (index of the choice), ``paths`` and ``summary`` (test errors averaged over the CV ties
        and at the choice, genes, :math:`\lambda`, CV accuracy, all converged, number of fits
        and of fits that met their stopping rule).
    """
    from sklearn.utils import Bunch

    from ..rls2 import rls2_lambda_max, rls2_linear_scaling
    from .experiments import kfold_splits

    X_tr, y_tr = data.X_train, data.y_train
    classes = np.unique(y_tr)
    targets = [np.where(y_tr == k, 1.0, -1.0) for k in classes]
    scalings = [rls2_linear_scaling(X_tr, "fisher", y=t) for t in targets]  # all training data
    lam1 = max(rls2_lambda_max(X_tr, t, linear=True, scaling=s) for t, s in zip(targets, scalings))
    lams = np.logspace(np.log10(lam1) - 4, np.log10(lam1), n_lams)
    folds = kfold_splits(y_tr, n_splits=n_folds, seed=seed)
    cv_acc = np.array([(ova_predict(ova_path(X_tr, targets, scalings, f["train"], lams)[0],
                                    X_tr[f["test"]], classes) == y_tr[f["test"]]).mean(1)
                       for f in folds])
    W_all, paths_all = ova_path(X_tr, targets, scalings, np.arange(len(y_tr)), lams)
    lam_desc = np.sort(lams)[::-1]
    train_acc = (ova_predict(W_all, X_tr, classes) == y_tr).mean(1)
    test_wrong = ova_predict(W_all, data.X_test, classes) != data.y_test
    test_err = test_wrong.sum(1)
    genes = (W_all != 0).any(axis=1).sum(1)
    cv_mean, cv_se = cv_acc.mean(0), cv_acc.std(0, ddof=1) / np.sqrt(len(folds))
    ties = np.flatnonzero(np.isclose(cv_mean, cv_mean.max()))
    pick = ties[np.argmax(lam_desc[ties])]  # the largest lambda with the best CV accuracy
    summary = {"test errors (mean over CV ties)": test_err[ties].mean(),
               "test errors (largest CV-optimal lambda)": int(test_err[pick]),
               "genes": int(genes[pick]), "lambda": lam_desc[pick], "CV accuracy": cv_mean[pick],
               "all converged": all(r.success for p in paths_all for r in p),
               "fits": sum(len(p) for p in paths_all),
               "fits converged": sum(r.success for p in paths_all for r in p)}
    return Bunch(folds=folds, lam_desc=lam_desc, train_acc=train_acc, cv_mean=cv_mean,
                 cv_se=cv_se, test_err=test_err, test_wrong_ties=test_wrong[ties].mean(0),
                 pick=pick, paths=paths_all, summary=summary)


def cv_choice(make, grid, X, y, folds):
    """The parameter with the best mean CV accuracy (ties: the first, i.e. the simplest).

    Parameters
    ----------
    make : callable
        ``make(p)`` returns an unfitted classifier.
    grid : list
        Parameter values.
    X : ndarray of shape (n, p)
        Training inputs.
    y : ndarray of shape (n,)
        Training labels.
    folds : list of dict
        ``{"train": idx, "test": idx}`` folds.

    Returns
    -------
    best : object
        The chosen element of ``grid``.
    """
    scores = [np.mean([(make(p).fit(X[f["train"]], y[f["train"]]).predict(X[f["test"]])
                        == y[f["test"]]).mean() for f in folds]) for p in grid]
    return grid[int(np.argmax(scores))]


class OVALasso:
    r"""One-vs-all Lasso regression on :math:`\pm1` targets; prediction by the largest output.

    The "Lasso regression (OVA)" baseline of Table 5 of [1]_.

    Parameters
    ----------
    alpha : float
        sklearn's Lasso parameter.
    """

    def __init__(self, alpha):
        self.alpha = alpha

    def fit(self, X, y):
        """Fit one Lasso per class.

        Parameters
        ----------
        X : ndarray of shape (n, p)
            Inputs.
        y : ndarray of shape (n,)
            Class labels.

        Returns
        -------
        self : OVALasso
        """
        from sklearn.linear_model import Lasso

        self.classes_ = np.unique(y)
        self.models_ = [Lasso(alpha=self.alpha, max_iter=20_000).fit(X, np.where(y == k, 1.0, -1.0))
                        for k in self.classes_]
        return self

    def predict(self, X):
        """Class with the largest Lasso output.

        Parameters
        ----------
        X : ndarray of shape (n, p)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n,)
        """
        return self.classes_[np.argmax(np.column_stack([m.predict(X) for m in self.models_]), 1)]


def microarray_baselines(data, micro, return_wrong=False):
    r"""Table 5 run here: a linear SVM, one-vs-all Lasso and one-vs-all linear RLS2.

    The SVM's ``C`` and the Lasso's ``alpha`` are chosen by CV on the folds of RLS2.

    Parameters
    ----------
    data : sklearn.utils.Bunch
        Output of :func:`microarray_data`.
    micro : sklearn.utils.Bunch
        Output of :func:`microarray_rls2`.
    return_wrong : bool, default=False
        Also return which test patients each method misclassifies.

    Returns
    -------
    table5 : pandas.DataFrame
        ``method``, ``test errors``, ``selected genes``.
    wrong : dict
        Only with ``return_wrong``: method -> (n_test,) float array, 1 where the patient is
        misclassified (for RLS2 the fraction of the CV-tied :math:`\lambda` values that
        misclassify it, so that it sums to the averaged test errors).
    """
    import pandas as pd
    from sklearn.svm import LinearSVC

    X_tr, y_tr, X_te, y_te = data.X_train, data.y_train, data.X_test, data.y_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear / coordinate-descent convergence chatter
        C_svm = cv_choice(lambda C: LinearSVC(C=C, max_iter=20_000), list(np.logspace(-5, 1, 7)),
                          X_tr, y_tr, micro.folds)
        svm = LinearSVC(C=C_svm, max_iter=20_000).fit(X_tr, y_tr)
        a_lasso = cv_choice(OVALasso, list(np.logspace(-3, -0.5, 6)), X_tr, y_tr, micro.folds)
        ova_lasso = OVALasso(a_lasso).fit(X_tr, y_tr)
    wrong = {"linear SVM": (svm.predict(X_te) != y_te).astype(float),
             "OVA Lasso": (ova_lasso.predict(X_te) != y_te).astype(float),
             "Linear RLS2 (OVA)": micro.test_wrong_ties}
    table5 = pd.DataFrame([
        {"method": "Support vector classifier (linear SVM, OvR)",
         "test errors": int(wrong["linear SVM"].sum()), "selected genes": X_tr.shape[1]},
        {"method": "Lasso regression (OVA)",
         "test errors": int(wrong["OVA Lasso"].sum()),
         "selected genes": int(np.any([m.coef_ != 0 for m in ova_lasso.models_], axis=0).sum())},
        {"method": "Linear RLS2 (OVA)",
         "test errors": micro.summary["test errors (mean over CV ties)"],
         "selected genes": micro.summary["genes"]},
    ])
    return (table5, wrong) if return_wrong else table5


def paper_table5():
    """Table 5 of [1]_ (14 Cancers, 54 test patients; the other rows from ESL Table 18.1).

    Returns
    -------
    table5 : pandas.DataFrame
        ``method``, ``test errors``, ``selected genes``.
    """
    import pandas as pd

    return pd.DataFrame({
        "method": ["Support vector classifier", "L1-penalised multinomial",
                   "Lasso regression (OVA)", "L2-penalised discriminant analysis",
                   "Elastic-net penalised multinomial", "Linear RLS2 (OVA)"],
        "test errors": [14.0, 13.0, 12.5, 12.0, 11.8, 9.8],
        "selected genes": [16063, 269, 1429, 16063, 384, 855]})


def plot_microarray(micro, name, n_folds, n_test):
    """Figure 9 of [1]_: training, CV and test accuracy of one-vs-all linear RLS2 against lambda.

    Parameters
    ----------
    micro : sklearn.utils.Bunch
        Output of :func:`microarray_rls2`.
    name : str
        Data set name (title).
    n_folds : int
        Number of CV folds (legend).
    n_test : int
        Number of test patients.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    lam_desc = micro.lam_desc
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(lam_desc, micro.train_acc, label="training accuracy")
    ax.errorbar(lam_desc, micro.cv_mean, yerr=micro.cv_se, fmt="o-", ms=3, capsize=2, lw=1,
                label=f"{n_folds}-fold CV accuracy ± SE")
    ax.plot(lam_desc, 1 - micro.test_err / n_test, label="test accuracy")
    ax.axvline(lam_desc[micro.pick], color="grey", ls=":", label="chosen λ")
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("accuracy")
    ax.set_title(f"Figure 9: one-vs-all linear RLS2 on {name}")
    ax.legend(fontsize="small")
    return fig


# --------------------------------------------------------------------------------------
# Claims and the summary table
# --------------------------------------------------------------------------------------
#: Where in [1]_ each checked claim is made.
CLAIM_SOURCES = {
    "C1": "Lemma 5; Sec. 5.2",
    "C2": "Sec. 5.1, Experiment 1 (Figure 3)",
    "C2b": "Sec. 5.1, Experiment 1 (Figure 3, zoom)",
    "C2c": "Sec. 5.1, Experiment 1",
    "C3": "Sec. 5.1, Experiment 2 (Table 1)",
    "C3b": "Sec. 5.1, Experiment 2 (Figure 2)",
    "C3c": "Sec. 5.1, Experiment 2 (Table 1)",
    "C3d": "Sec. 5.1, Experiment 2 (coefficient profiles)",
    "C4": "Sec. 5.2 (Tables 3-4, Figures 4-8)",
    "C5": "Sec. 5.3 (Table 5)",
}

#: Tolerance, in training examples, on the sizes "12" and "100" of Experiment 1 of [1]_
#: (our draw of the binary strings is not the paper's).
SIZE_TOL = {"sparse": 2, "ridge": 30}

#: RMSE tolerance when comparing two learning curves of Experiment 1 (1 % of the noise sd).
CURVE_TOL = 1e-4


def claim_lemma5(path_starts):
    """Claim C1: Lemma 5 of [1]_ at the largest lambda of every UCI path.

    Parameters
    ----------
    path_starts : pandas.DataFrame
        The first row of every path of :class:`UCIPaths` (``n_iter``, ``vertex_first``,
        ``start``, ``lam1``).

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
        Holds if every path needs one iteration at its first lambda and starts at the
        max-alignment vertex.
    """
    from .reporting import Claim

    c1 = bool(path_starts.n_iter.eq(1).all() and path_starts.vertex_first.all())
    return Claim("C1", "Lemma 5: at the largest λ the solution is the max-alignment vertex and "
                 "the first λ of every path needs one iteration", bool(c1),
                 f"{len(path_starts)} UCI paths started at max(100, 1.01 λ_1): first-λ iterations "
                 f"{sorted(set(path_starts.n_iter.tolist()))}, solution = max-alignment vertex on "
                 f"all: {bool(path_starts.vertex_first.all())} ({int(path_starts.start.sum())} "
                 f"paths needed the λ_1 start, λ_1 up to {path_starts.lam1.max():.3g})",
                 rule="holds if every UCI path needs exactly 1 iteration at its first λ and its "
                      "solution there has one kernel, the one of largest alignment s_i yᵀK_i y",
                 tolerance="exact")


def claim_binary_strings(curves, learn_n):
    """Claim C2: how fast the methods of Experiment 1 of [1]_ learn the concept.

    The paper: Lasso and linear RLS2 "learn the underlying concept after seeing only 12
    examples"; ridge regression after "about 100 strings". Holds if the size from which the
    lower bound stays at or below 0.1 (ten times the noise sd, :func:`learned_from`) is within
    :data:`SIZE_TOL` of 12 for the Lasso and RLS2 and of 100 for ridge.

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`learning_curves`.
    learn_n : dict
        Method -> output of :func:`learned_from`.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    from .reporting import Claim

    ts, tr = SIZE_TOL["sparse"], SIZE_TOL["ridge"]

    def near(n, target, tol):
        return n is not None and abs(n - target) <= tol

    c2 = bool(near(learn_n["linear RLS2"], 12, ts) and near(learn_n["Lasso"], 12, ts)
              and near(learn_n["ridge"], 100, tr))
    grid = curves.n.tolist()
    return Claim("C2", "Binary strings: the Lasso and linear RLS2 learn the concept after about 12 "
                 "examples, ridge regression after about 100",
                 c2,
                 f"lower bound ≤ 0.1 from n = {learn_n['linear RLS2']} on (linear RLS2), "
                 f"{learn_n['Lasso']} (Lasso), {learn_n['ridge']} (ridge), "
                 f"{learn_n.get('Gaussian RLS')} (Gaussian RLS); training sizes "
                 f"{grid[0]}..{grid[-1]} ({len(grid)} values)",
                 rule=f"holds if the size n from which the test-RMSE lower bound stays ≤ 0.1 "
                      f"(10 noise sd) is within {ts} of 12 for both the Lasso and linear RLS2 and "
                      f"within {tr} of 100 for ridge regression",
                 tolerance=f"{ts} examples (Lasso, RLS2), {tr} examples (ridge)")


def claim_rls2_below_lasso(curves):
    """Claim C2b: after the 8th example RLS2's learning curve stays below the Lasso's.

    Holds if, for every training size :math:`8 < n \\le 30` of the grid, the lower bound of
    linear RLS2 is at most that of the Lasso plus :data:`CURVE_TOL`.

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`learning_curves`.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    from .reporting import Claim

    zoom = curves[curves.n <= 30]
    excess = zoom["linear RLS2"] - zoom.Lasso
    after = zoom.n > 8
    fails = zoom.n[after & (excess > CURVE_TOL)].astype(int).tolist()
    early = zoom.n[~after & (excess > CURVE_TOL)].astype(int).tolist()
    late = after & (zoom.n >= 14)
    big = zoom.n[after & (excess > 0.01)].astype(int).tolist()
    wl = zoom.set_index("n")["weighted Lasso (D1)"]
    evidence = (f"Lasso below RLS2 by more than {CURVE_TOL:g} for n in {fails} of the sizes "
                f"9..30 of the grid (and for n in {early} of the sizes ≤ 8; the paper: all "
                f"n ≤ 8); RLS2 - Lasso up to {excess[after].max():.3g}")
    if big:
        evidence += (f"; by more than 0.01 at n = {big}, where the weighted Lasso (D1), the same "
                     f"model family, reaches {', '.join(f'{wl[n]:.3g}' for n in big)}")
    if late.any():
        evidence += (f"; for n ≥ 14 |RLS2 - Lasso| ≤ {excess[late].abs().max():.1e} (the paper: "
                     "essentially equal from n = 12)")
    return Claim("C2b", "Binary strings (zoom, n ≤ 30): after the 8th example the RLS2 learning "
                 "curve stays uniformly below the Lasso's", not fails, evidence,
                 rule=f"holds if the lower bound of linear RLS2 is ≤ that of the Lasso + "
                      f"{CURVE_TOL:g} at every training size 8 < n ≤ 30 of the grid",
                 tolerance=f"{CURVE_TOL:g} RMSE (1 % of the noise sd)")


def claim_binary_weights(curves):
    """Claim C2c: after 12 examples RLS2 keeps only the first three kernels, each about 1/3.

    Holds if, from some size :math:`n \\le 12 +` ``SIZE_TOL["sparse"]`` of the grid on, the
    weights at the RMSE-optimal :math:`\\lambda` have :math:`d_1+d_2+d_3\\ge0.95` with each in
    [0.25, 0.42].

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`learning_curves`.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    from .reporting import Claim

    d123 = curves[["d1", "d2", "d3"]]
    d_ok = ((d123.sum(axis=1) >= 0.95)
            & d123.apply(lambda r: r.between(0.25, 0.42).all(), axis=1)).to_numpy()
    bad = np.flatnonzero(~d_ok)
    n_from = None if not d_ok[-1] else int(curves.n.iloc[bad[-1] + 1] if bad.size
                                            else curves.n.iloc[0])
    limit = 12 + SIZE_TOL["sparse"]
    after = curves[curves.n >= (n_from or limit)]
    return Claim("C2c", "Binary strings: after the first 12 examples RLS2 sets every kernel "
                 "weight to zero except the first three, which are about 1/3 each",
                 bool(n_from is not None and n_from <= limit),
                 f"d1+d2+d3 ≥ 0.95 with each in [0.25, 0.42] for every n ≥ {n_from} of the grid; "
                 f"there the other 97 weights sum to at most {after['d other'].max():.3f} and "
                 f"d1..d3 lie in [{after[['d1', 'd2', 'd3']].min().min():.3f}, "
                 f"{after[['d1', 'd2', 'd3']].max().max():.3f}]",
                 rule=f"holds if from some n ≤ {limit} of the grid on the weights at the "
                      "RMSE-optimal λ have d1+d2+d3 ≥ 0.95 and each of d1, d2, d3 in [0.25, 0.42]",
                 tolerance=f"{SIZE_TOL['sparse']} examples; 0.05 total weight off the first three; "
                           "d_i within [0.25, 0.42] of 1/3")


#: the variables of the RLS2 column of Table 1 of [1]_
TABLE1_SUPPORT = ["lcavol", "lweight", "lbph", "svi", "pgg45"]


def claim_prostate(study, table1_paper, features):
    """Claim C3: Table 1 of [1]_ from the paper's protocol (10-fold CV, one-SE rule).

    Decided on the model at the :math:`\\lambda` of the protocol (``study.lam_cv``, the first
    seeded fold assignment), not on the hand-set ``study.lam_table``.

    Parameters
    ----------
    study : sklearn.utils.Bunch
        Output of :func:`prostate_study`.
    table1_paper : pandas.DataFrame
        Output of :func:`paper_table1`.
    features : list of str
        Input names.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
        Holds if the model selects exactly lcavol, lweight, lbph, svi and pgg45, its intercept
        and coefficients are within 0.01 of Table 1 and its test MSE within 0.005 of 0.454.
    """
    from .reporting import Claim

    paper = table1_paper["RLS2"].to_numpy()[:9]
    terms = list(table1_paper.index[:9])

    def fit(res):
        diff = np.abs(np.r_[res.intercept, res.coef] - paper)
        return [f for f, w in zip(features, res.coef) if w != 0], diff

    nz, diff = fit(study.res_cv)
    worst = np.argsort(diff)[::-1][:3]
    nz_hand, diff_hand = fit(study.res_table)
    c3 = bool(nz == TABLE1_SUPPORT and diff.max() <= 0.01
              and abs(study.test_cv - 0.454) <= 0.005)
    return Claim("C3", "Prostate: at the λ chosen by 10-fold CV with the one-SE rule, RLS2 "
                 "selects 5 of 8 variables (lcavol, lweight, lbph, svi, pgg45) with the "
                 "coefficients and test error of Table 1 (0.454)", c3,
                 f"protocol λ = {study.lam_cv:.3g}: {nz}, max |coef - Table 1| = "
                 f"{diff.max():.3f} ("
                 + ", ".join(f"{terms[k]} {float(np.r_[study.res_cv.intercept, study.res_cv.coef][k]):.3f}"
                             f" vs {paper[k]:g}" for k in worst)
                 + f"), test MSE {study.test_cv:.3f} (SE {study.se_cv:.3f}); for comparison the "
                 f"hand-set λ = {study.lam_table:g}: {len(nz_hand)} variables, max |coef - "
                 f"Table 1| = {diff_hand.max():.4f}, test MSE {study.test_table:.4f} (matched by "
                 "construction of λ, not evidence)",
                 rule="decided on the protocol model only: holds if it selects exactly lcavol, "
                      "lweight, lbph, svi, pgg45, |ours - paper| ≤ 0.01 for the intercept and "
                      "every coefficient and |test MSE - 0.454| ≤ 0.005",
                 tolerance="0.01 (coefficients), 0.005 (test MSE)")


def claim_prostate_cv(study):
    """Claim C3b (secondary): 10-fold CV with the one-SE rule picks the 5-variable model.

    Holds if at least half of the seeded fold assignments pick a model with exactly the five
    variables of Table 1.

    Parameters
    ----------
    study : sklearn.utils.Bunch
        Output of :func:`prostate_study`.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    from .reporting import Claim

    picks = study.cv_picks
    return Claim("C3b", "Prostate: 10-fold CV with the one-SE rule chooses a model with 5 of the 8 "
                 "variables", study.picks_5 / len(picks) >= 0.5,
                 f"{study.picks_5} of {len(picks)} seeded fold assignments pick 5 variables; "
                 f"one-SE λ from {min(picks):.3g} to {max(picks):.3g} (the paper's folds are "
                 f"unknown)", hard=False,
                 rule="holds if at least half of the seeded fold assignments give a one-SE model "
                      "with exactly 5 non-zero coefficients",
                 tolerance="half of the fold assignments")


def claim_prostate_error(study, table1_paper):
    """Claim C3c: RLS2 has the second lowest test error of Table 1 (after PCR).

    A claim of rank, as in the paper, which prints standard errors (about 0.1 to 0.2 here)
    far larger than the differences it ranks and claims no significance: it holds if our
    protocol model's test error is below the printed test error of every method of Table 1
    but PCR. Whether the margin over the best of them is a significant gain
    (:func:`mklcore.repro.reporting.gain_verdict` with our test MSE's standard error; the
    other methods' per-case errors are not available) is shown in the evidence, not used
    for the verdict.

    Parameters
    ----------
    study : sklearn.utils.Bunch
        Output of :func:`prostate_study`.
    table1_paper : pandas.DataFrame
        Output of :func:`paper_table1`.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    from .reporting import Claim, gain_verdict

    others = table1_paper.loc["Test error"].drop(["RLS2", "PCR"])
    rival = others.idxmin()
    g = gain_verdict(mean=float(others[rival] - study.test_cv), se=float(study.se_cv))
    holds = bool(study.test_cv < others[rival])
    return Claim("C3c", "Prostate: RLS2 achieves the second lowest test error of Table 1 (after "
                 "PCR) using only 5 variables", holds,
                 f"protocol model: test MSE {study.test_cv:.3f} (SE {study.se_cv:.3f}) vs "
                 f"{rival} {others[rival]:.3f}, the best of Table 1 but PCR "
                 f"({table1_paper.loc['Test error', 'PCR']:.3f}); is the margin a significant "
                 f"gain? {g.evidence} ({g.holds})",
                 rule="holds if our test error is below the printed test error of every method "
                      "of Table 1 but PCR (a rank, as the paper claims it, without significance); "
                      f"the evidence adds the gain test ({g.rule})",
                 tolerance="none (rank)")


def claim_path_curvature(curvature):
    """Claim C3d: the RLS2 coefficient profile is not piecewise linear in lambda.

    Parameters
    ----------
    curvature : tuple
        Output of :func:`path_curvature`.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
        Holds if, on a stretch of constant support, the relative second differences of the
        path in :math:`\\lambda` exceed 1000 times those in the Lasso parameter :math:`\\mu`
        (where the path is linear up to rounding).
    """
    from .reporting import Claim

    same_support, curv_lam, curv_mu = curvature
    return Claim("C3d", "Prostate: the RLS2 coefficient profile is not piecewise linear in λ",
                 bool(same_support and curv_lam > 1e3 * curv_mu),
                 f"on a stretch of constant support ({same_support}) relative second "
                 f"differences {curv_lam:.1e} in λ vs {curv_mu:.1e} in the Lasso parameter μ",
                 rule="holds if on a stretch of λ with constant support the largest second "
                      "difference of w relative to the largest first difference is > 1000 times "
                      "larger in λ than in μ = λ Σ|w_i|/√s_i (the equivalent weighted Lasso's "
                      "parameter, in which the path is piecewise linear)",
                 tolerance="factor 1000")


def flatness(df):
    r"""How flat the test performance is around :math:`\lambda^*`.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of one (data set, ratio) (``lam``, ``perf``, ``metric``).

    Returns
    -------
    flatness : float
        Largest change of the mean performance at the grid neighbours of :math:`\lambda^*`,
        in units of the standard deviation over splits at :math:`\lambda^*` (NaN if that is 0).
    """
    mean = df.groupby("lam").perf.mean()
    lam_star = mean.idxmin() if df.metric.iloc[0] == "rmse" else mean.idxmax()
    k = list(mean.index).index(lam_star)
    near = mean.iloc[max(k - 1, 0):k + 2]
    sd = df[df.lam == lam_star].perf.std(ddof=1)
    return float(np.abs(near - mean[lam_star]).max() / (sd if sd > 0 else np.nan))


def claim_uci(summ, path_starts, abl, uci_raw, tables34, uci_sets):
    """Claim C4: the UCI benchmark of Sec. 5.2 of [1]_.

    Holds if every path has 1 kernel at its largest lambda; the mean number of kernels never
    rises by more than 1 when lambda grows by one step, and spans at least 5 along each path;
    warm-started Algorithm 1 with the toolbox rule needs 1–3 iterations per lambda on average
    and the cold start at least 1.5 times as many on every set; the median flatness at
    lambda* is <= 1 sd; and Heart's accuracy is within 3.28 points of 84 %.

    Parameters
    ----------
    summ : pandas.DataFrame
        Output of :func:`uci_path_means`.
    path_starts : pandas.DataFrame
        First row of every path.
    abl : pandas.DataFrame
        Rows of :func:`ablation`.
    uci_raw : pandas.DataFrame
        Rows of :class:`UCIPaths` on the common grid.
    tables34 : pandas.DataFrame
        Output of :func:`uci_tables34`.
    uci_sets : list of str
        The data sets run.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    import pandas as pd

    from .reporting import Claim

    trend = summ.groupby(["data", "ratio"]).apply(
        lambda g: g[["lam", "k"]].corr(method="spearman").iloc[0, 1], include_groups=False)
    # largest increase of the mean number of kernels when lambda grows by one grid step
    rise = summ.sort_values("lam").groupby(["data", "ratio"]).k.apply(lambda k: np.diff(k).max())
    span = summ.groupby(["data", "ratio"]).k.apply(lambda k: k.max() - k.min())
    ones_at_top = path_starts.n_selected.eq(1).all()
    it_warm = abl.loc[abl.solver == "toolbox rule, warm", "iters/lambda"]
    it_cold = abl.loc[abl.solver == "toolbox rule, cold", "iters/lambda"]
    it_cert = abl.loc[abl.solver == "certified, warm", "iters/lambda"]
    flat = uci_raw.groupby(["data", "ratio"]).apply(flatness, include_groups=False)
    heart_acc = (tables34.xs("heart", level=0)["perf mean"] if "heart" in uci_sets
                 else pd.Series(dtype=float))
    discarded = 1 - tables34["kernels mean"] / tables34["kernels of m"]
    c4 = bool(ones_at_top and (rise <= 1).all() and (span >= 5).all() and 1 <= it_warm.mean() <= 3
              and (it_cold.to_numpy() >= 1.5 * it_warm.to_numpy()).all()
              and np.nanmedian(flat) <= 1.0 and (np.abs(heart_acc - 0.84) <= 0.0328).all())
    return Claim("C4", "UCI: 1 kernel at large λ, more as λ decreases; 1–3 iterations per λ with "
                 "warm starts (more without); performance flat near λ*; Heart accuracy ≈ 84 %", c4,
                 f"1 kernel at the largest λ on all paths: {bool(ones_at_top)}; mean kernels rise "
                 f"by at most {rise.max():.2f} when λ grows one step (from 1 up to "
                 f"{span.max() + 1:.0f} along the path; Spearman(λ, kernels) ≤ {trend.max():.2f}); "
                 f"iterations/λ toolbox rule warm {it_warm.mean():.2f} on average "
                 f"({it_warm.min():.2f}–{it_warm.max():.2f}), cold {it_cold.min():.1f}–"
                 f"{it_cold.max():.1f}, certified warm {it_cert.min():.2f}–{it_cert.max():.2f}; "
                 f"change at the neighbours of λ* ≤ {np.nanmax(flat):.2f} sd (median "
                 f"{np.nanmedian(flat):.2f}); Heart accuracy "
                 f"{', '.join(f'{100 * v:.1f} %' for v in heart_acc)}; kernels discarded at λ* "
                 f"{discarded.min():.0%}–{discarded.max():.0%}",
                 rule="holds if every path has 1 kernel at its largest λ; the mean number of "
                      "kernels never rises by more than 1 when λ grows one grid step and spans "
                      "≥ 5 along each path; the paper's Algorithm 1 with its stopping rule and warm "
                      "starts needs 1–3 iterations per λ on average and cold starts ≥ 1.5 times "
                      "as many on every set; the median change of the mean performance at the "
                      "grid neighbours of λ* is ≤ 1 sd over splits; Heart's accuracy is within "
                      "3.28 points (the paper's sd over splits) of 84 %",
                 tolerance="1 kernel per step; 1–3 iterations; factor 1.5; 1 sd; 3.28 points")


def claim_microarray(micro, wrong, name, n_genes):
    """Claim C5: Sec. 5.3 of [1]_ (one-vs-all linear RLS2 on microarray data).

    The paper: linear RLS2 "seems to work rather well on this problem and achieve the best
    test performances" with few genes, adding that "the test set size is too small to draw
    significative conclusions from this comparison". The claim is therefore one of rank, not
    of a significant gain: it holds if RLS2 makes no more test errors than any baseline run
    here (linear SVM, one-vs-all Lasso; a tie for the best counts as the best) and selects at
    most 10 % of the genes. The per-patient paired differences are tested with
    :func:`mklcore.repro.reporting.gain_verdict` and shown in the evidence (is the rank
    backed by a significant gain?), not used for the verdict.

    Parameters
    ----------
    micro : sklearn.utils.Bunch
        Output of :func:`microarray_rls2`.
    wrong : dict
        The per-patient errors of :func:`microarray_baselines` (``return_wrong=True``).
    name : str
        Data set name.
    n_genes : int
        Number of genes.

    Returns
    -------
    claim : mklcore.repro.reporting.Claim
    """
    from .reporting import Claim, gain_verdict

    ours = wrong["Linear RLS2 (OVA)"]
    gains = {m: gain_verdict(wrong[m] - ours) for m in ["linear SVM", "OVA Lasso"]}
    genes = micro.summary["genes"]
    frac_genes = genes / n_genes
    c5 = bool(frac_genes <= 0.1 and all(ours.sum() <= wrong[m].sum() for m in gains))
    return Claim("C5", f"Linear RLS2 (OVA) achieves the best test performance, with a small "
                 f"fraction of the genes (tested on {name})", c5,
                 f"{name}: RLS2 {ours.sum():.2f} test errors of {ours.size} with {genes} genes "
                 f"({frac_genes:.1%}); "
                 + "; ".join(f"{m} {wrong[m].sum():.0f} errors: {g.evidence}"
                             for m, g in gains.items())
                 + "; paper (14 Cancers, 54 test patients): 9.8 errors, 855 genes",
                 rule="holds if RLS2 makes no more test errors than each baseline (a tie for "
                      "the best counts: the paper reports no significance and calls the test "
                      "set too small for it) and keeps ≤ 10 % of the genes; the gain tests in "
                      f"the evidence ({gains['OVA Lasso'].rule}) say whether the rank is backed "
                      "by a significant gain",
                 tolerance="0 test errors; 10 % of the genes")


def convergence_table(curves, prostate_fits, uci_raw, path_starts, abl, micro):
    """How many fits of each experiment met their stopping rule.

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`learning_curves` (``fits``, ``fits converged``).
    prostate_fits : list of MKLResult
        The prostate models fitted on the 67 training cases (the CV fits are not recorded).
    uci_raw : pandas.DataFrame
        Rows of :class:`UCIPaths` on the common grid (``success``).
    path_starts : pandas.DataFrame
        The first row of every UCI path (``start``: a point above the common grid).
    abl : pandas.DataFrame
        Rows of :func:`ablation`.
    micro : sklearn.utils.Bunch
        Output of :func:`microarray_rls2` (the fits on all training patients; the CV fits
        are not recorded).

    Returns
    -------
    table : pandas.DataFrame
        ``experiment``, ``stopping rule``, ``fits``, ``met the rule``.
    """
    import pandas as pd

    gap = "relative duality gap ≤ 1e-6"
    extra = path_starts[path_starts.start]
    rows = [("Experiment 1: linear RLS2 paths (Figure 3)", gap, curves.fits.sum(),
             curves["fits converged"].sum()),
            ("Experiment 2: prostate models on the 67 training cases", "relative duality gap "
             "≤ 1e-10", len(prostate_fits), sum(r.success for r in prostate_fits)),
            ("Sec. 5.2: UCI paths", gap, len(uci_raw) + len(extra),
             uci_raw.success.sum() + extra.success.sum())]
    for (label, kw), part in zip(ABLATION_SOLVERS, [abl[abl.solver == lab]
                                                    for lab, _ in ABLATION_SOLVERS]):
        rule = (f"residual rule of Algorithm 1, {kw['residual_tol']:g}" if "residual_tol" in kw
                else gap)
        rows.append((f"Sec. 5.2 ablation: {label}", rule, part.fits.sum(),
                     part["fits converged"].sum()))
    rows.append(("Sec. 5.3: one-vs-all paths on all training patients", gap,
                 micro.summary["fits"], micro.summary["fits converged"]))
    return pd.DataFrame([{"experiment": e, "stopping rule": r, "fits": int(n),
                          "met the rule": int(m)} for e, r, n, m in rows])


def summary_table(paper_vs_ours, claims):
    """One row per compared number and per claim (the notebook's ``summary.csv``).

    Parameters
    ----------
    paper_vs_ours : pandas.DataFrame
        Concatenated :func:`mklcore.repro.reporting.compare` tables.
    claims : list of mklcore.repro.reporting.Claim
        The checked claims; their source is :data:`CLAIM_SOURCES`.

    Returns
    -------
    summary : pandas.DataFrame
        Columns :data:`mklcore.repro.reporting.SUMMARY_COLUMNS` (``item``, ``paper``,
        ``ours``, ``verdict``, ``tolerance``, ``rule``, ``source``, ``note``), the rows of
        :func:`mklcore.repro.reporting.summary_table` with each claim's source.
    """
    import pandas as pd

    from .reporting import claims_table
    from .reporting import summary_table as to_summary

    part = to_summary(claims_table(claims))
    part["source"] = [CLAIM_SOURCES.get(c.id, "") for c in claims]
    return pd.concat([to_summary(paper_vs_ours), part], ignore_index=True)


def differences_text(uci, micro_data, study, table1_paper, curves, claims, n_splits, convergence,
                     csv_files):
    """The report's section "What differs from the paper and why", computed from the run.

    Parameters
    ----------
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    micro_data : sklearn.utils.Bunch
        Output of :func:`microarray_data`.
    study : sklearn.utils.Bunch
        Output of :func:`prostate_study`.
    table1_paper : pandas.DataFrame
        Output of :func:`paper_table1`.
    curves : pandas.DataFrame
        Output of :func:`learning_curves`.
    claims : list of mklcore.repro.reporting.Claim
        The checked claims (C2b's evidence is quoted, C3's verdict is named).
    n_splits : int
        Random splits per ratio of the UCI runs.
    convergence : pandas.DataFrame
        Output of :func:`convergence_table`.
    csv_files : list of str
        Names of the tables written as CSV files beside the report.

    Returns
    -------
    text : str
        Markdown bullet list: stand-ins with their sizes, the hand-set λ of Table 1 next to
        the protocol's result, Experiment 1 (where RLS2 is above the Lasso and a hypothesis on
        why), the UCI protocol, how many fits met their stopping rule, the CSV files.
    """
    from .reporting import claims_table

    verdicts = claims_table(claims).set_index("id").verdict
    evidence = {c.id: c.evidence for c in claims}
    stand_ins = [f"{n} → {b.stand_in} ({b.data.shape[0]} rows × {b.data.shape[1]} inputs, "
                 f"{b.n_kernels} kernels; paper {b.paper['examples']} × {b.paper['features']}, "
                 f"{b.paper['kernels']} kernels)" for n, b in uci.items() if b.stand_in]
    if micro_data.name != "14 Cancers":
        stand_ins.append(f"14 Cancers → {micro_data.name} ({len(micro_data.y_train)}/"
                         f"{len(micro_data.y_test)} patients × {micro_data.X_train.shape[1]} "
                         "genes; paper 144/54 × 16063)")
    paper = table1_paper["RLS2"].to_numpy()[:9]
    ours_cv = np.r_[study.res_cv.intercept, study.res_cv.coef]
    diff_cv = np.abs(ours_cv - paper)
    diff_hand = np.abs(np.r_[study.res_table.intercept, study.res_table.coef] - paper)
    k = int(np.argmax(diff_cv))
    picks = study.cv_picks
    zoom = curves[(curves.n > 8) & (curves.n <= 30)]
    gaps = zoom[(zoom["linear RLS2"] - zoom.Lasso) > 0.01]
    gap_cause = ""
    if len(gaps):  # a grid effect? the weighted Lasso (D1) is RLS2's model on another grid
        same = bool(((gaps["weighted Lasso (D1)"] - gaps["linear RLS2"]).abs()
                     <= 0.1 * (gaps["linear RLS2"] - gaps.Lasso)).all())
        gap_cause = (" The weighted Lasso (D1), RLS2's model on its own λ grid, is as far from the "
                     "Lasso at those n, so the gaps larger than 0.01 are not a grid effect: we "
                     "think they come from the scaling (16), which weights the bits by their "
                     "column norms where the plain Lasso uses them raw." if same else
                     " The weighted Lasso (D1), RLS2's model on another λ grid, is closer to the "
                     "Lasso at those n, so we think RLS2's λ grid misses a narrow window of good "
                     "λ there.")
    conv = "; ".join(f"{r['experiment']}: {r['met the rule']} of {r['fits']} "
                     f"({r['stopping rule']})" for _, r in convergence.iterrows())
    return "\n".join([
        "- **Stand-ins.** " + ("; ".join(stand_ins) + ". Their Table 2 rows are not compared; "
                               "claims C4 (UCI) and C5 (microarray) are tested on them."
                               if stand_ins else "none: all data sets are the paper's."),
        f"- **Hand-set λ (Table 1).** λ = {study.lam_table:g} was set by hand because it "
        f"reproduces the paper's RLS2 column (max |coef − Table 1| = {diff_hand.max():.4f}, test "
        f"MSE {study.test_table:.4f}); the paper's protocol (10-fold CV, one-SE rule, first seeded "
        f"fold assignment) gives λ = {study.lam_cv:.3g}: test MSE {study.test_cv:.3f} (SE "
        f"{study.se_cv:.3f}), {np.count_nonzero(study.res_cv.coef)} variables, max |coef − "
        f"Table 1| = {diff_cv.max():.3f} ({table1_paper.index[k]}: {ours_cv[k]:.3f} vs "
        f"{paper[k]:g}). Over {len(picks)} seeded fold assignments the one-SE λ ranges from "
        f"{min(picks):.3g} to {max(picks):.3g}. A likely cause is the fold assignment or the λ "
        f"grid, neither of which the paper gives. C3 is decided on the protocol model (verdict: "
        f"{verdicts.get('C3', 'n/a')}).",
        f"- **Experiment 1.** Our draw of the binary strings is not the paper's file, and the λ "
        f"grids and the Gaussian width are ours. {evidence.get('C2b', '')}.{gap_cause}",
        f"- **UCI.** {n_splits} random split(s) per ratio (paper: 100); the numbers of Tables 3–4 "
        "are lost in our copy of the paper except Heart's accuracy. The paper's iteration counts "
        "come from its plain Algorithm 1 with the toolbox rule, which we run only in the "
        "ablation; all other fits use our certified solver (Newton steps added, duality gap "
        "≤ 1e-6).",
        f"- **Convergence.** {conv}.",
        f"- **Tables not in the paper**, as CSV files beside this report: {', '.join(csv_files)}.",
    ])
