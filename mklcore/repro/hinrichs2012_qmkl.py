r"""Experiment functions of ``notebooks/hinrichs2012_qmkl.ipynb`` (Hinrichs et al., NIPS 2012).

C. Hinrichs, V. Singh, J. Peng, S. C. Johnson. Q-MKL: Matrix-induced Regularization in
Multi-Kernel Learning with Applications to Neuroimaging. NIPS 25, 2012 ([1]_ below).

* :func:`multiview_kernels`: the paper's t-statistic feature stages x linear / quadratic /
  Gaussian kernels per modality (Sec. 5);
* :func:`theorem2_proxy`: the quantity of Theorem 2 that Q-MKL's bound depends on;
* :func:`dirichlet_ratio`, :func:`isolated_pockets`: roughness of Q-SVM weight maps (Fig. 1).

References
----------
.. [1] C. Hinrichs, V. Singh, J. Peng, S. C. Johnson. Q-MKL: Matrix-induced Regularization in
   Multi-Kernel Learning with Applications to Neuroimaging. NIPS 25, 2012.
"""

import numpy as np

from ..qmkl import check_q

__all__ = ["multiview_kernels", "theorem2_proxy", "dirichlet_ratio", "isolated_pockets"]


def dirichlet_ratio(w, L):
    r"""Roughness of a weight map, :math:`E(w)=w^\top Lw/w^\top w` (spec Sec. 4.3).

    With :math:`L` a grid Laplacian (``grid_laplacian(h, w, add_identity=False)``) this is
    the mean squared difference between neighbouring weights per unit weight energy: small
    for smooth maps (Fig. 1 of [1]_).

    Parameters
    ----------
    w : array-like of shape (d,)
        Weight vector (e.g. ``QSVMClassifier.coef_``).
    L : array-like or sparse matrix of shape (d, d)
        Graph Laplacian.

    Returns
    -------
    ratio : float
        ``nan`` for ``w = 0``.
    """
    w = np.asarray(w, dtype=float)
    energy = float(w @ w)
    return float(w @ (L @ w)) / energy if energy > 0 else float("nan")


def isolated_pockets(w, shape, *, rtol=1e-8):
    """Number of isolated "pockets" in a 2-D weight map (Fig. 1 of [1]_, spec Sec. 4.3).

    A pocket is a pixel with a non-zero weight whose sign is opposite to that of every one of
    its non-zero 8-neighbours (it needs at least one). Weights below ``rtol * max|w|`` count
    as zero (e.g. the constant border pixels of the digits, where the SVM weight is 0).

    Parameters
    ----------
    w : array-like of shape (h * w,)
        Weights in row-major pixel order.
    shape : tuple of int
        ``(h, w)``.
    rtol : float, default=1e-8
        Relative threshold below which a weight is zero.

    Returns
    -------
    n_pockets : int

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.qmkl import isolated_pockets
    >>> isolated_pockets(np.array([1, 1, 1, 1, -1, 1, 1, 1, 1.0]), (3, 3))
    1
    """
    h, wd = shape
    W = np.asarray(w, dtype=float).reshape(h, wd)
    top = float(np.max(np.abs(W))) if W.size else 0.0
    sign = np.where(np.abs(W) > rtol * top, np.sign(W), 0.0)
    padded = np.pad(sign, 1)
    count = 0
    for i in range(h):
        for j in range(wd):
            if sign[i, j] == 0:
                continue
            around = padded[i:i + 3, j:j + 3].ravel()
            around = np.delete(around, 4)
            around = around[around != 0]
            if around.size and np.all(around == -sign[i, j]):
                count += 1
    return count


def theorem2_proxy(Q):
    r"""Theorem-2 proxy :math:`\mathbf 1^\top Q^{-1}\mathbf 1/M` of [1]_ (l2-MKL gives 1).

    With unit-trace kernels, the Rademacher bound of Theorem 2 scales with
    :math:`\sqrt{\mathbf 1^\top Q^{-1}\mathbf 1}`; values below 1 mean a smaller bound than
    l2-MKL's. It is exactly 1 for :math:`I+L` (spec Sec. 1.5 caveat).

    Parameters
    ----------
    Q : array-like of shape (n_kernels, n_kernels)
        Symmetric positive definite.

    Returns
    -------
    value : float
    """
    Q = check_q(Q, owner="theorem2_proxy", require_pd=True)
    ones = np.ones(Q.shape[0])
    return float(ones @ np.linalg.solve(Q, ones) / Q.shape[0])


def _welch_t(X, y):
    """|Welch t-statistic| of each column of X between the classes y > 0 and y <= 0."""
    pos, neg = X[y > 0], X[y <= 0]
    var = pos.var(axis=0, ddof=1) / max(len(pos), 1) + neg.var(axis=0, ddof=1) / max(len(neg), 1)
    diff = np.abs(pos.mean(axis=0) - neg.mean(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(var > 0, diff / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    return t


def multiview_kernels(views_train, y_train, views_test=None, *,
                      fractions=(0.25, 0.5, 0.75, 1.0), kinds=("linear", "quadratic", "gaussian"),
                      min_features=2):
    r"""The paper's multi-modality kernel bank (Sec. 5 of [1]_), built on the training fold.

    For ADNI, [1]_ ranks the voxels of each image set by a t-statistic inside each training
    fold, keeps the top voxels in several stages and builds a linear, a quadratic and a
    Gaussian kernel per stage (96 kernels). This builds the same bank for any set of views
    (spec Sec. 4.1): per view, features are z-scored with the training mean and standard
    deviation and ranked by the absolute Welch t-statistic between the classes; for each
    fraction in ``fractions`` the top ``max(min_features, ceil(fraction * d))`` features
    (``d'`` of them) give the kernels

    - ``"linear"``: :math:`x^	op z/d'`;
    - ``"quadratic"``: :math:`(1+x^	op z/d')^2`;
    - ``"gaussian"``: :math:`\exp(-\|x-z\|^2/(2s^2))`, :math:`s` the median training pairwise
      distance.

    Each training kernel is scaled to mean diagonal 1 and the test kernels by the same
    factor. Kernels are ordered by view, then kind, then fraction.

    Parameters
    ----------
    views_train : dict of {str: ndarray of shape (n_train, d_v)}
        Training features of each view (modality).
    y_train : array-like of shape (n_train,)
        Labels in {-1, +1} (for the t-statistics).
    views_test : dict of {str: ndarray of shape (n_test, d_v)}, default=None
        Test features with the same keys; if given, test kernels are returned too.
    fractions : sequence of float, default=(0.25, 0.5, 0.75, 1.0)
        Fractions of each view's features kept (the paper's "stages").
    kinds : sequence of {"linear", "quadratic", "gaussian"}, default=all three
        Kernel types per stage.
    min_features : int, default=2
        Fewest features per stage.

    Returns
    -------
    K_train : ndarray of shape (n_kernels, n_train, n_train)
        Training stack.
    K_test : ndarray of shape (n_kernels, n_test, n_train) or None
        Test stack (rows: test points), ``None`` without ``views_test``.
    groups : ndarray of shape (n_kernels,)
        View name of each kernel (the groups of :func:`block_diagonal_q`).
    descriptions : list of str
        ``"<view>:<kind>:<n features>"`` for each kernel.
    """
    y_train = np.asarray(y_train, dtype=float)
    for kind in kinds:
        if kind not in ("linear", "quadratic", "gaussian"):
            raise ValueError(f"Unknown kernel kind {kind!r}; use 'linear', 'quadratic' or "
                             f"'gaussian'.")
    K_train, K_test, groups, names = [], [], [], []
    for view, Xtr in views_train.items():
        Xtr = np.asarray(Xtr, dtype=float)
        mean, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        Ztr = (Xtr - mean) / sd
        Zte = None if views_test is None else (np.asarray(views_test[view], float) - mean) / sd
        order = np.argsort(-_welch_t(Ztr, y_train), kind="stable")
        d = Ztr.shape[1]
        for kind in kinds:
            for fraction in fractions:
                k = int(min(d, max(min_features, np.ceil(fraction * d))))
                A = Ztr[:, order[:k]]
                B = None if Zte is None else Zte[:, order[:k]]
                if kind == "gaussian":
                    sq = np.sum(A ** 2, axis=1)
                    D = np.maximum(sq[:, None] + sq[None, :] - 2 * A @ A.T, 0.0)
                    off = D[np.triu_indices_from(D, k=1)]
                    s2 = float(np.median(off)) if off.size and np.median(off) > 0 else 1.0
                    Ktr = np.exp(-D / (2 * s2))  # s^2 = median squared = (median distance)^2
                    if B is not None:
                        Dte = np.maximum(np.sum(B ** 2, axis=1)[:, None] + sq[None, :]
                                         - 2 * B @ A.T, 0.0)
                        Kte = np.exp(-Dte / (2 * s2))
                else:
                    Ktr = A @ A.T / k
                    Kte = None if B is None else B @ A.T / k
                    if kind == "quadratic":
                        Ktr = (1.0 + Ktr) ** 2
                        Kte = None if Kte is None else (1.0 + Kte) ** 2
                factor = Ktr.shape[0] / np.trace(Ktr)  # mean diagonal 1
                K_train.append(0.5 * (Ktr + Ktr.T) * factor)
                if B is not None:
                    K_test.append(Kte * factor)
                groups.append(view)
                names.append(f"{view}:{kind}:{k}")
    K_test = np.stack(K_test) if views_test is not None else None
    return np.stack(K_train), K_test, np.array(groups), names


# ---------------------------------------------------------------------------
# Q-SVM (spec Sec. 1.4)
# ---------------------------------------------------------------------------
