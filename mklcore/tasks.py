r"""The SVM-type dual problems that the MKL wrapper loop optimises the kernel weights for.

Every wrapper method of mklcore (lp-norm MKL, SimpleMKL, SILP, the sum kernel) minimises over
the kernel weights :math:`\theta` the optimal value of a dual problem that depends on
:math:`\theta` only through the quadratic term (Kloft et al. 2009, Sec. 2.4.2; Rakotomamonjy
et al. 2008, Sec. 3 and 5 for regression and multiclass):

.. math::
    J(\theta)=\max_{\alpha\in\mathcal A}\ L(\alpha)-\sum_m\theta_mS_m(\alpha),\qquad
    S_m(\alpha)=\tfrac12\sum_kc_k^\top K_mc_k ,

a sum over one or several problems :math:`k` of LIBSVM's form (Chang & Lin 2011, Sec. 2):
variables :math:`\alpha_t\in[0,C]` with signs :math:`y_t`, a linear term :math:`p_t`, a kernel
row :math:`i_t`, one equality :math:`\sum_ty_t\alpha_t=0` per problem,
:math:`L=-\sum_tp_t\alpha_t` and :math:`(c_k)_i=\sum_{t:i_t=i}y_t\alpha_t`. A task names its
problems and their loss (for the primal value that certifies the solution):

* :class:`OneVsRestTask`: one C-SVM per labelling in {-1, +1} (:math:`p=-\mathbf 1`,
  hinge loss); one labelling is the binary SVM, several the one-vs-rest problems whose duals
  are summed so that the kernel weights are shared across classes (Rakotomamonjy et al. 2008,
  Sec. 5.1; Zien & Ong 2007).
* :class:`RegressionTask`: the epsilon-SVR (Smola & Schölkopf 2004, eq. (10)), two variables
  per point on the same kernel row, :math:`p=(\epsilon-y,\ \epsilon+y)`,
  :math:`c=\alpha-\alpha^*`, epsilon-insensitive loss.

The gradient :math:`\partial J/\partial\theta_m=-S_m` (Danskin), the dual norms, gaps and
weight steps of :mod:`mklcore.wrapper` are the same for every task.
"""

import numpy as np

__all__ = ["SVMTask", "OneVsRestTask", "RegressionTask"]


class SVMTask:
    r"""Dual problems of LIBSVM's form sharing one kernel (see the module docstring).

    Parameters
    ----------
    signs : ndarray of shape (n_problems, n_var)
        :math:`y_t` in {-1, +1}.
    linear : ndarray of shape (n_problems, n_var)
        :math:`p_t`.
    kidx : ndarray of shape (n_var,) or None
        Kernel row of each variable (the same for every problem); None: one variable per
        point.
    n_samples : int
        Number of kernel rows (training points).
    single : bool
        Whether the results are those of one problem (``dual_coef`` of shape (n,), a float
        intercept) rather than of shape (n_problems, n).

    Attributes
    ----------
    empty_ok : bool
        Whether a model with every dual coefficient 0 is a valid solution (regression: every
        target within the tube of a constant) rather than a failure.
    """

    empty_ok = False

    def __init__(self, signs, linear, kidx, n_samples, single):
        self.signs = np.atleast_2d(np.asarray(signs, dtype=np.float64))
        self.linear = np.atleast_2d(np.asarray(linear, dtype=np.float64))
        self.kidx = None if kidx is None else np.asarray(kidx, dtype=np.int64)
        self.n_samples = int(n_samples)
        self.single = bool(single)

    @property
    def n_problems(self):
        """Number of dual problems."""
        return self.signs.shape[0]

    def coef(self, alpha):
        r""":math:`c_k`, shape (n_problems, n), from ``alpha`` of shape (n_problems, n_var)."""
        signed = alpha * self.signs
        if self.kidx is None:
            return signed
        return np.stack([np.bincount(self.kidx, weights=row, minlength=self.n_samples)
                         for row in signed])

    def linear_value(self, alpha):
        r""":math:`L=-\sum_k\sum_tp_{kt}\alpha_{kt}`."""
        return -float(np.sum(self.linear * alpha))

    def loss(self, f):  # pragma: no cover - abstract
        """Sum of the losses of the decision values ``f`` (n_problems, n) on the training
        points (the data term of the primal, without C)."""
        raise NotImplementedError

    def squeeze(self, a):
        """``a[0]`` for a single-problem task, else ``a``."""
        return a[0] if self.single else a


class OneVsRestTask(SVMTask):
    r"""C-SVMs on one or several labellings in {-1, +1} (hinge loss).

    Parameters
    ----------
    Y : ndarray of shape (n_problems, n) or (n,)
        Labellings; a 1-D ``Y`` is the binary SVM (single problem).
    """

    def __init__(self, Y):
        Y = np.asarray(Y, dtype=np.float64)
        single = Y.ndim == 1
        Y = np.atleast_2d(Y)
        super().__init__(Y, -np.ones_like(Y), None, Y.shape[1], single)
        self.Y = Y

    def loss(self, f):
        return float(np.maximum(0.0, 1.0 - self.Y * f).sum())


class RegressionTask(SVMTask):
    r"""The epsilon-SVR dual (Smola & Schölkopf 2004, eq. (10)) in LIBSVM's form.

    Variables :math:`(\alpha, \alpha^*)` on rows :math:`(1..n, 1..n)` with signs
    :math:`(+1, -1)` and linear term :math:`(\epsilon-y, \epsilon+y)`, so that
    :math:`c=\alpha-\alpha^*` and :math:`L=y^\top c-\epsilon\mathbf1^\top(\alpha+\alpha^*)`.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Real targets.
    epsilon : float
        Width of the insensitive tube, >= 0.
    """

    empty_ok = True

    def __init__(self, y, epsilon):
        y = np.asarray(y, dtype=np.float64)
        n = y.shape[0]
        signs = np.concatenate([np.ones(n), -np.ones(n)])
        linear = np.concatenate([epsilon - y, epsilon + y])
        super().__init__(signs, linear, np.concatenate([np.arange(n), np.arange(n)]), n, True)
        self.y, self.epsilon = y, float(epsilon)

    def loss(self, f):
        return float(np.maximum(0.0, np.abs(self.y - f) - self.epsilon).sum())
