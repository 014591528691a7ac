r"""l1-norm MKL by semi-infinite linear programming (SILP; Sonnenburg et al., JMLR 2006).

Column generation for the semi-infinite program of Kloft et al. (2009, Sec. 2.4.2) at p = 1: each
SVM at the current weights yields a cut :math:`\eta\ge\mathbf1^\top\alpha^r-\theta^\top S(\alpha^r)`
and a linear program over the cuts (:func:`scipy.optimize.linprog`, HiGHS) gives the next
weights (Sonnenburg et al. 2006, Algorithm 1). Runs inside the shared wrapper loop of
:mod:`mklcore.wrapper`.
"""

import numpy as np

from ._base import BaseMKLClassifier, BaseMKLRegressor, common_constraints, fill_doc
from ._validation import (Interval, Options, check_classification_inputs,
                          check_regression_inputs, validate_params)
from .lpnorm import EPSILON_CONSTRAINT, default_engine
from .tasks import OneVsRestTask, RegressionTask
from .masters import lp_master
from .wrapper import SIPWeightStep, run_wrapper

__all__ = ["silp_solve", "SILPMKLClassifier", "silp_svr_solve", "SILPMKLRegressor"]


class _SILPStep(SIPWeightStep):
    r"""SILP weight step: add the cut of the current alpha, re-solve the LP.

    Algorithm 1 of Sonnenburg et al. (2006).

    Line 4's test is :math:`\Delta_{rel}` by default, Sonnenburg's :math:`\epsilon_{MKL}`
    (the SIP gap) with ``stop="sip"`` (see :class:`~mklcore.wrapper.SIPWeightStep`).
    """

    p = 1.0
    method = "silp"
    label = "SILP-MKL"

    def init(self, n_kernels):  # line 1: theta = 1/M
        super().init(n_kernels)
        return np.full(n_kernels, 1.0 / n_kernels)

    def master(self, state):  # line 5
        self.n_master_solves += 1
        return lp_master(self.cuts)


_SILP_CONSTRAINTS = {
    **common_constraints("C", "tol", "max_iter", "svm_tol", "verbose", "callback"),
    "max_cuts": [Interval("int", 1, None)],
    "prune_cuts": [bool],
    "svm_backend": [str, None],
    "mode": [Options("wrapper", "interleaved"), None],
    "mkl_every": [Interval("int", 1, None), None],
    "stop": [Options("gap", "sip")],
    "svm_max_iter": [Interval("int", 1, None), None],
}


@fill_doc
def silp_solve(K, y, *, C=1.0, tol=1e-5, max_iter=1000, svm_tol=1e-3, callback=None, verbose=0,
               check_input=True, max_cuts=100, prune_cuts=True, mode=None, mkl_every=None,
               svm_backend=None, stop="gap", svm_max_iter=None):
    r"""Solve l1-norm MKL by the SILP column-generation method of Sonnenburg et al. (2006).

    Solves problem (6) of Kloft et al. (2009) with :math:`p=1` in its semi-infinite form
    (their Sec. 2.4.2)

    .. math::
        \min_{\eta,\ \theta\ge0,\ \sum_m\theta_m=1}\ \eta\quad\text{s.t.}\quad
        \eta\ge\mathbf1^\top\alpha-\tfrac12\sum_m\theta_m\alpha^\top Q_m\alpha
        \quad\forall\alpha\in\mathcal A ,

    alternating an SVM at the current weights, which yields the most violated constraint
    (a cut), with a linear program over the collected cuts (HiGHS via
    :func:`scipy.optimize.linprog`). The LP value :math:`\eta` is a lower bound and
    :math:`J(\theta)` an upper bound of the optimum.

    Parameters
    ----------
    {K}
    {y}
    {C}
    tol : float, default=1e-5
        Stop when the criterion chosen by ``stop`` is at most ``tol``.
    {max_iter}
    {svm_tol}
    {callback}
    {verbose}
    {check_input}
    max_cuts : int, default=100
        Keep at most ``max(max_cuts, 2 * n_active)`` cuts (SHOGUN's rule).
    prune_cuts : bool, default=True
        Whether to prune cuts at all.
    mode : {"wrapper", "interleaved"}, default=None
        ``"wrapper"``: column generation with each SVM solved to ``svm_tol``;
        ``"interleaved"``: Sonnenburg's chunking variant (a cut after every ``mkl_every`` SMO
        iterations; Algorithm 2 of [1]_), the method timed by Kloft et al. (2009). ``None``:
        ``"interleaved"``, the faster one (see Notes).
    mkl_every : int, default=None
        SMO iterations between LP solves in interleaved mode; ``max(10, n // 20)``.
    svm_backend : str, default=None
        ``"smo"`` (the compiled engine with per-kernel gradient caches, warm-started; the
        default, required in interleaved mode) or ``"libsvm"`` (scikit-learn's SVC, cold
        starts: the reference; wrapper mode only).
    stop : {"gap", "sip"}, default="gap"
        Stopping criterion. ``"gap"``: :math:`\min(\Delta_{rel}, |1-\eta/J|)`, the better of
        two relative duality gaps, with the lower bounds :math:`D_1(\alpha)` (giving
        :math:`\Delta_{rel}=(\max_mS_m-\theta^\top S)/J`, the certificate of every mklcore
        solver) and the LP value :math:`\eta` (the LP's vertex weights need not certify
        through :math:`D_1(\alpha)` when the optimal weights are not unique). ``"sip"``: the
        SIP gap :math:`|1-\eta/J|` alone (Sonnenburg's :math:`\epsilon_{MKL}` test,
        Algorithm 1 of [1]_). ``history["gap"]`` and ``gap`` hold :math:`\Delta_{rel}`;
        ``criterion`` (and the message) hold the stopping value, named
        ``criterion_name``.
    svm_max_iter : int, default=None
        Cap on the iterations of one SVM solve; ``None``: ``max(10**6, 100 n)``. Reaching it
        ends the run with status 2 (see :func:`mklcore.wrapper.run_wrapper`).

    Returns
    -------
    result : MKLResult
        The keys of :func:`mklcore.wrapper.run_wrapper` (``weights`` = :math:`\theta` on the
        simplex, ``objective`` = :math:`J(\theta)`, ``gap`` = :math:`\Delta_{rel}` at p = 1,
        ``criterion`` = the final ``stop`` value, ``method="silp"``...) plus ``eta`` (last LP
        value), ``n_master_solves``, ``n_cuts`` and ``n_cuts_pruned``; ``history`` adds
        ``eta`` and ``n_cuts``.

    See Also
    --------
    simplemkl_solve : the same problem by reduced gradient.
    lpmkl_solve : lp-norm MKL (``p=1, solver="cutting_plane"`` is this method).
    mklcore.lpnorm.default_engine : the choice of the default mode.

    Notes
    -----
    The default engine is interleaved, as for :func:`~mklcore.lpnorm.lpmkl_solve` (measured
    costs: ``benchmarks/README.md``). Both modes stop at a certified gap ``tol`` (in
    interleaved mode usually through the LP bound :math:`|1-\eta/J|`).

    References
    ----------
    .. [1] S. Sonnenburg, G. Rätsch, C. Schäfer, B. Schölkopf. Large Scale Multiple Kernel
       Learning. JMLR 7:1531-1565, 2006.
    .. [2] M. Kloft, U. Brefeld, S. Sonnenburg, P. Laskov, K.-R. Müller, A. Zien. Efficient
       and Accurate lp-Norm Multiple Kernel Learning. NIPS 22, 2009.

    {simplex_solve_example}
    """
    validate_params("silp_solve", _SILP_CONSTRAINTS, locals())
    K, y_pm, Y = check_classification_inputs(K, y, "silp_solve", check_input)
    task = None if Y is None else OneVsRestTask(Y)
    return _silp(K, y_pm, task, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                 callback=callback, verbose=verbose, max_cuts=max_cuts, prune_cuts=prune_cuts,
                 mode=mode, mkl_every=mkl_every, svm_backend=svm_backend, stop=stop,
                 svm_max_iter=svm_max_iter, extras={"p": 1.0})


def _silp(K, y_pm, task, *, C, tol, max_iter, svm_tol, callback, verbose, max_cuts, prune_cuts,
          mode, mkl_every, svm_backend, stop, svm_max_iter, extras):
    """The loop of :func:`silp_solve` and :func:`silp_svr_solve`."""
    mode, svm_backend, mkl_every = default_engine("cutting_plane", 1.0, K.shape[1], mode=mode,
                                                  svm_backend=svm_backend, mkl_every=mkl_every)
    step = _SILPStep(max_cuts=max_cuts, prune_cuts=prune_cuts, stop=stop)
    return run_wrapper(K, y_pm, step, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                       callback=callback, verbose=int(verbose), svm_backend=svm_backend,
                       extras=extras, mode=mode, mkl_every=mkl_every,
                       svm_max_iter=svm_max_iter, task=task)


@fill_doc
def silp_svr_solve(K, y, *, C=1.0, epsilon=0.1, tol=1e-5, max_iter=1000, svm_tol=1e-3,
                   callback=None, verbose=0, check_input=True, max_cuts=100, prune_cuts=True,
                   mode=None, mkl_every=None, stop="gap", svm_max_iter=None):
    r"""SILP for regression: l1-norm MKL with an epsilon-SVR (Sonnenburg et al. 2006).

    The column generation of :func:`silp_solve` on the regression form of the semi-infinite
    program (Sec. 2.2 of [1]_): every epsilon-SVR at the current weights gives the cut
    :math:`\eta\ge L(\alpha^r)-\theta^\top S(\alpha^r)` with
    :math:`L=y^\top c-\epsilon\mathbf1^\top(\alpha+\alpha^*)`,
    :math:`S_m=\frac12c^\top K_mc`, :math:`c=\alpha-\alpha^*`; the LP over the cuts gives
    the next weights. Runs on the compiled engine (:mod:`mklcore.smo`).

    Parameters
    ----------
    {K}
    y : array-like of shape (n_samples,)
        Real targets.
    {svr_C}
    tol : float, default=1e-5
        Stop when the criterion chosen by ``stop`` is at most ``tol``.
    {max_iter}
    {svm_tol}
    {callback}
    {verbose}
    {check_input}
    max_cuts, prune_cuts, mode, mkl_every, stop
        As in :func:`silp_solve`.
    {svm_max_iter}

    Returns
    -------
    result : MKLResult
        The keys of :func:`silp_solve` (``dual_coef`` = :math:`\alpha-\alpha^*`) plus
        ``task="regression"`` and ``epsilon``.

    References
    ----------
    .. [1] S. Sonnenburg, G. Rätsch, C. Schäfer, B. Schölkopf. Large Scale Multiple Kernel
       Learning. JMLR 7:1531-1565, 2006.

    {simplex_svr_solve_example}
    """
    constraints = {**_SILP_CONSTRAINTS, "epsilon": EPSILON_CONSTRAINT}
    del constraints["svm_backend"]
    validate_params("silp_svr_solve", constraints, locals())
    K, y = check_regression_inputs(K, y, "silp_svr_solve", check_input)
    return _silp(K, None, RegressionTask(y, epsilon), C=C, tol=tol, max_iter=max_iter,
                 svm_tol=svm_tol, callback=callback, verbose=verbose, max_cuts=max_cuts,
                 prune_cuts=prune_cuts, mode=mode, mkl_every=mkl_every, svm_backend="smo",
                 stop=stop, svm_max_iter=svm_max_iter,
                 extras={"p": 1.0, "task": "regression", "epsilon": float(epsilon)})


@fill_doc
class SILPMKLClassifier(BaseMKLClassifier):
    r"""l1-norm MKL classifier trained by SILP (Sonnenburg et al., JMLR 2006).

    Kernel weights :math:`\theta` on the simplex and an SVM on :math:`\sum_m\theta_mK_m`,
    solving problem (6) of Kloft et al. (2009) with p = 1 (see :func:`silp_solve`).

    Parameters
    ----------
    {kernels}
    {C}
    {normalize}
    tol : float, default=1e-5
        Relative duality gap at which to stop: :math:`\min(\Delta_{rel}, |1-\eta/J|)`, the
        better of the two certificates of :func:`silp_solve` (``stop="gap"``).
    {max_iter}
    {svm_tol}
    {verbose}
    {svm_max_iter}
    {check_input_fit}
    {multiclass}
    {probability}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`\theta` (Sonnenburg's :math:`\beta`), summing to 1.
    {fitted_model}
    n_iter_ : int
        Number of outer iterations.
    converged_ : bool
        Whether the stopping value :attr:`criterion_` fell below ``tol``.
    objective_ : float
        Final objective :math:`J(\theta)`.
    gap_ : float
        Final relative duality gap :math:`\Delta_{rel}`.
    {fitted_run}

    See Also
    --------
    silp_solve : the solver on precomputed kernels.

    {simplex_example}
    """

    _parameter_constraints = {**BaseMKLClassifier._parameter_constraints,
                              **common_constraints("multiclass")}
    _solver = staticmethod(silp_solve)
    _shared_multiclass = True

    def __init__(self, *, kernels=None, C=1.0, normalize=None, tol=1e-5, max_iter=1000,
                 svm_tol=1e-3, verbose=0, svm_max_iter=None, check_input=True,
                 multiclass="ovr",
                 probability=False, random_state=None):
        self._store_params(locals())


@fill_doc
class SILPMKLRegressor(BaseMKLRegressor):
    r"""l1-norm MKL for regression trained by SILP (Sonnenburg et al. 2006, Sec. 2.2): weights
    :math:`\theta` on the simplex and an epsilon-SVR on :math:`\sum_m\theta_mK_m` (see
    :func:`silp_svr_solve`).

    Parameters
    ----------
    {kernels}
    {svr_C}
    {normalize}
    tol : float, default=1e-5
        Relative duality gap at which to stop (see :func:`silp_solve`).
    {max_iter}
    {svm_tol}
    {verbose}
    {svm_max_iter}
    {check_input_fit}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`\theta`, summing to 1.
    {svr_fitted}
    objective_ : float
        Final objective :math:`J(\theta)`.
    gap_ : float
        Final relative duality gap.
    {fitted_run}

    {simplex_svr_example}
    """

    _parameter_constraints = {**BaseMKLClassifier._parameter_constraints,
                              "epsilon": EPSILON_CONSTRAINT}
    _solver = staticmethod(silp_svr_solve)

    def __init__(self, *, kernels=None, C=1.0, epsilon=0.1, normalize=None, tol=1e-5,
                 max_iter=1000, svm_tol=1e-3, verbose=0, svm_max_iter=None, check_input=True):
        self._store_params(locals())
