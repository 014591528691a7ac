r"""The public extension point of mklcore's SVM-wrapper MKL solvers: one shared loop.

The solvers of Kloft et al. (2009), their l1 baselines (SimpleMKL, SILP) and Q-MKL (Hinrichs
et al. 2012) alternate an SVM on :math:`K_\theta=\sum_m\theta_mK_m` with an update of the
kernel weights :math:`\theta` (the "wrapper" scheme; Kloft et al. 2009, Sec. 2.4).
:func:`run_wrapper` runs that loop for all of them on the iteration contract
:class:`~mklcore._result.Monitor`: (1) SVM at the current weights :math:`\to\alpha`;
(2) :math:`S_m=\frac12\alpha^\top Q_m\alpha` (:math:`Q_m=YK_mY`), :math:`L=\mathbf1^\top\alpha`,
the objective :math:`J=L-\theta^\top S` (the inner value of the saddle-point problem
:math:`\min_\theta\max_\alpha L-\theta^\top S`, Sec. 2.4.2), the dual value
:math:`D_p(\alpha)=L-\|S\|_{p^*}` of their problem (6) (:math:`\|S\|_{p^*}` is the
:math:`\delta` of eq. (8)) and the relative duality gap
:math:`\Delta_{rel}=(\|S\|_{p^*}-\theta^\top S)/J\ge0` (Hölder; 0 iff :math:`\theta` is
optimal for this :math:`\alpha`); (3) the method's stopping value (``WeightStep.gap``);
(4) one history row, the callback and the stop test (:meth:`Monitor.record
<mklcore._result.Monitor.record>`); (5) the weight step (``WeightStep.step``), which may call
the SVM at trial weights through the oracle it is handed (SimpleMKL's line search). A final
SVM "polish" makes the returned :math:`(\alpha, b, \theta)` belong together, and the
tolerance-free certificate :math:`P_{hinge}-D_p(\alpha)\ge0` is computed.

SVM engines: ``svm_backend="smo"`` (default; the compiled engine as
:class:`mklcore.smo.StackSMO`, warm-started, with per-kernel gradient caches
:math:`H_m=K_m(\alpha\circ y)`, never forming :math:`K_\theta`) or another backend of
:func:`mklcore.svm.svm_solve` on the combined kernel (``"libsvm"``: scikit-learn's SVC, cold
starts; the reference).
Tasks: the SVM is the binary C-SVM on ``y`` by default; ``task=`` hands the loop other dual
problems of the same form (:mod:`mklcore.tasks`: the epsilon-SVR, one-vs-rest C-SVMs whose
summed duals share the weights), solved by the same engine; only :math:`L`, the sum over the
problems in :math:`S_m` and the loss of the primal change, so every weight step works unchanged.
Modes: ``"wrapper"`` (default; the SVM is solved to ``svm_tol`` before every weight step) or
``"interleaved"`` (``"smo"`` only; the chunking scheme of Sonnenburg et al. 2006, Algorithm 2:
a weight step after every ``mkl_every`` SMO iterations).

How to add a wrapper method
---------------------------
Subclass :class:`WeightStep`: starting weights (:meth:`~WeightStep.init`), weight set
(:attr:`~WeightStep.p` or :meth:`~WeightStep.dual_norm`), stopping value
(:meth:`~WeightStep.gap`) and update (:meth:`~WeightStep.step`, returning new weights or a
:class:`WrapperState` already evaluated at them). :func:`run_wrapper` does the rest (SVM
engines, warm starts, history, callback, status, warnings, polish, certificates)::

    import numpy as np
    from mklcore.wrapper import WeightStep, normalize_pnorm, run_wrapper

    class HalfStep(WeightStep):  # halfway to the closed-form l2 update (theta^2 S)^(1/3)
        p = 2.0
        method, label = "halfstep", "HalfStep (p=2)"

        def step(self, state, oracle):
            target = normalize_pnorm(np.cbrt(state.theta ** 2 * state.S), self.p)
            return normalize_pnorm(0.5 * (state.theta + target), self.p)

    result = run_wrapper(K, y, HalfStep(), C=1.0, tol=1e-5, max_iter=500, svm_tol=1e-3)

``K`` must be a valid stack (symmetric PSD, shape (n_kernels, n, n)) and ``y`` in {-1, +1}.
Column-generation methods derive from :class:`SIPWeightStep` and keep their cuts in
:class:`~mklcore.masters.Cuts` (their master problems: :mod:`mklcore.masters`); a step that
cannot continue raises :class:`NumericalFailure` (``status=2``); :class:`FixedWeights` is the
SVM at fixed weights (the sum kernel). A line search calls the SVM along a line of weights
through SimpleMKL's :class:`~mklcore.simplemkl.LineOracle`.
"""

import time
import warnings

import numpy as np

from ._result import Monitor, NumericalFailure
from ._validation import check_finite
from .masters import Cuts
from .rowsource import LazyStack
from .smo import StackSMO
from .svm import combine_kernels, default_svm_max_iter, svm_solve

__all__ = ["THETA_FLOOR", "SVM_GAP_LIMIT", "default_svm_max_iter", "SVMIterationLimit",
           "conjugate_exponent", "dual_norm", "log_sum_exp", "pnorm", "normalize_pnorm",
           "uniform_weights", "WrapperState", "SVMOracle", "WeightStep", "SIPWeightStep",
           "FixedWeights", "NumericalFailure", "run_wrapper"]

#: floor applied to weights before logarithms in multiplicative updates (a weight that
#: reaches 0 would stay 0)
THETA_FLOOR = 1e-12


class SVMIterationLimit(NumericalFailure):
    """Raised by :class:`SVMOracle` when an SVM solve reaches its iteration cap.

    Parameters
    ----------
    message : str
        What happened and what to try.
    state : WrapperState
        The (unconverged) SVM solution at the cap.
    """

    def __init__(self, message, state):
        super().__init__(message)
        self.state = state


#: relative SVM duality gap :math:`(P_{hinge}-J)/|P_{hinge}|` of the final SVM above which a
#: wrapper run cannot be a success: the hinge primal is then more than ten times the dual
#: value and certifies nothing (huge C for the kernels' scale, or an SVM stopped early). A
#: KKT tolerance ``svm_tol`` allows a gap of up to about :math:`2Cn\,` ``svm_tol``, so the
#: relative gap of converged solves grows with C: about 1e-3 at C = 1 and 0.5 at C = 1000
#: on trace-normalised kernels, 0.9999 at C = 1e8
SVM_GAP_LIMIT = 0.9


# --------------------------------------------------------------------------------------
# norms in the log domain (exponents like 1/(p-1) explode as p -> 1)
# --------------------------------------------------------------------------------------

def conjugate_exponent(p):
    r"""Conjugate exponent :math:`p^*=p/(p-1)` (:math:`\infty` for p = 1, 1 for p = inf).

    Parameters
    ----------
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    p_star : float
    """
    p = float(p)
    if p == 1.0:
        return np.inf
    if np.isinf(p):
        return 1.0
    return p / (p - 1.0)


def log_sum_exp(a):
    r""":math:`\log\sum_i e^{a_i}` of a 1-D float array, stably.

    The computation of :func:`scipy.special.logsumexp` for real vectors, step for step (the
    same value to the last bit) for the small vectors of the weight updates: with
    :math:`a^*=\max_i a_i` attained :math:`k` times and :math:`s=\sum_{a_i<a^*}e^{a_i-a^*}`,
    the value is :math:`\log(1+s/k)+\log k+a^*`; where that is not finite,
    :math:`\log\sum_i e^{a_i}` directly.

    Parameters
    ----------
    a : ndarray of shape (n,)
        Float64 entries (``-inf`` allowed: a zero term), n >= 1.

    Returns
    -------
    value : numpy.float64
    """
    a = np.asarray(a, dtype=float).reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_max = np.max(a, axis=0, keepdims=True)
        at_max = a == a_max
        m = np.sum(at_max, axis=0, keepdims=True, dtype=float)
        rest = a.copy()
        rest[at_max] = -np.inf
        s = np.sum(np.exp(rest - a_max), axis=0, keepdims=True)
        s = np.where(s == 0, s, s / m)
        out = np.log1p(s) + np.log(m) + a_max
        if np.sign(s + 1)[0] * np.sign(m)[0] < 0:  # pragma: no cover - real a: never
            out[0] = np.nan
        if not np.isfinite(out[0]):
            out = np.log(np.sum(np.exp(a), axis=0, keepdims=True))
    return out[0]


def pnorm(theta, p):
    r""":math:`\|\theta\|_p` for non-negative ``theta``, computed in the log domain.

    Parameters
    ----------
    theta : array-like of shape (n_kernels,)
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    norm : float
    """
    theta = np.asarray(theta, dtype=float)
    if np.isinf(p):
        return float(np.max(np.abs(theta))) if theta.size else 0.0
    if p == 1.0:
        return float(np.sum(np.abs(theta)))
    a = np.abs(theta)
    if not np.any(a > 0):
        return 0.0
    with np.errstate(divide="ignore"):
        return float(np.exp(log_sum_exp(p * np.log(a)) / p))


def dual_norm(S, p):
    r""":math:`\|S\|_{p^*}`, the :math:`\delta` of eq. (8) of Kloft et al. (2009).

    The max for p = 1, the sum for p = inf, else computed in the log domain. Negative entries
    (round-off) are treated as 0.

    Parameters
    ----------
    S : array-like of shape (n_kernels,)
        Per-kernel terms :math:`S_m=\frac12\alpha^\top Q_m\alpha`.
    p : float
        Norm of the weight constraint, ``1 <= p <= inf`` (the dual norm uses :math:`p^*`).

    Returns
    -------
    norm : float
    """
    S = np.maximum(np.asarray(S, dtype=float), 0.0)
    return pnorm(S, conjugate_exponent(p))


def normalize_pnorm(theta, p):
    r"""Scale non-negative ``theta`` to :math:`\|\theta\|_p=1` (unchanged if it is 0).

    Parameters
    ----------
    theta : array-like of shape (n_kernels,)
        Negative entries are set to 0 first.
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    theta : ndarray of shape (n_kernels,)
    """
    theta = np.maximum(np.asarray(theta, dtype=float), 0.0)
    norm = pnorm(theta, p)
    if norm <= 0 or not np.isfinite(norm):
        return theta
    return theta / norm


def uniform_weights(n_kernels, p):
    r"""The uniform starting point :math:`M^{-1/p}\mathbf 1` with unit p-norm.

    The starting point of Kloft et al. (2009, Sec. 2.4.2).

    Parameters
    ----------
    n_kernels : int
    p : float
        Norm, ``1 <= p <= inf`` (all ones for p = inf).

    Returns
    -------
    theta : ndarray of shape (n_kernels,)
    """
    if np.isinf(p):
        return np.ones(n_kernels)
    return np.full(n_kernels, float(n_kernels) ** (-1.0 / p))


# --------------------------------------------------------------------------------------
# one SVM evaluation and what the weight steps read from it
# --------------------------------------------------------------------------------------

class WrapperState:
    r"""The SVM solution at one weight vector and the MKL quantities derived from it.

    Parameters
    ----------
    theta : array-like of shape (n_kernels,)
        Kernel weights.
    alpha, dual_coef : ndarray of shape (n,)
        Unsigned dual variables and ``alpha * y``.
    intercept : float
        Bias of the SVM.
    S : array-like of shape (n_kernels,)
        :math:`S_m=\frac12\alpha^\top Q_m\alpha` (unweighted kernels).
    p : float or callable
        Norm of the weight set, or a callable ``S -> dual norm`` (its support function).
    primal_objective : float, default=nan
        Hinge primal at the current bias (``nan`` for a rescored state).
    exact : bool, default=True
        Whether alpha came from an SVM solve at ``theta``.
    svm : MKLResult, default=None
        The raw :func:`~mklcore.svm.svm_solve` result, if any.
    H : ndarray of shape (n_kernels, n), default=None
        The per-kernel gradient caches :math:`H_m=K_m(\alpha\circ y)` of the ``"smo"`` engine.
    L : float, default=None
        The linear part of the dual, :math:`\mathbf1^\top\alpha` (the C-SVM) by default;
        another task's (:mod:`mklcore.tasks`, e.g. the epsilon-SVR's
        :math:`y^\top c-\epsilon\mathbf1^\top(\alpha+\alpha^*)`) when given. For a task of
        several problems ``alpha``, ``dual_coef``, ``intercept`` and ``H`` have a leading
        axis of one entry per problem.

    Attributes
    ----------
    L : float
        :math:`\mathbf1^\top\alpha` (or the task's linear part).
    J : float
        :math:`L-\theta^\top S`, the SVM dual value at :math:`\theta` (the inner value of the
        saddle-point problem).
    dual_norm : float
        :math:`\|S\|_{p^*}`, the :math:`\delta` of eq. (8) of Kloft et al. (2009).
    dual_objective : float
        :math:`D_p(\alpha)=L-\|S\|_{p^*}`, the MKL dual value.
    rel_gap : float
        :math:`\Delta_{rel}=(\|S\|_{p^*}-\theta^\top S)/J`.
    """

    __slots__ = ("theta", "alpha", "dual_coef", "intercept", "S", "L", "J", "dual_norm",
                 "dual_objective", "rel_gap", "primal_objective", "exact", "svm", "H")

    def __init__(self, theta, alpha, dual_coef, intercept, S, p, *, primal_objective=np.nan,
                 exact=True, svm=None, H=None, L=None):
        self.theta = np.asarray(theta, dtype=float)
        self.alpha = alpha
        self.dual_coef = dual_coef
        self.intercept = (float(intercept) if np.ndim(intercept) == 0
                          else np.asarray(intercept, dtype=float))
        self.S = np.maximum(np.asarray(S, dtype=float), 0.0)
        self.L = float(np.sum(alpha)) if L is None else float(L)
        tS = float(self.theta @ self.S)
        self.J = self.L - tS
        self.dual_norm = p(self.S) if callable(p) else dual_norm(self.S, p)
        self.dual_objective = self.L - self.dual_norm
        excess = self.dual_norm - tS
        if self.J > 0:
            self.rel_gap = excess / self.J
        else:  # alpha = 0: nothing to gain
            self.rel_gap = 0.0 if excess <= 0 else np.inf
        self.primal_objective = float(primal_objective)
        self.exact = exact
        self.svm = svm
        self.H = H


class SVMOracle:
    r"""Solves the SVM at given weights and turns the result into a :class:`WrapperState`.

    Handed to :meth:`WeightStep.step` so that a method can evaluate :math:`J(\theta)` at trial
    weights. Counts the SVM calls, the backend's iterations and the time spent in the SVM.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n)
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C, svm_tol : float
        SVM box constraint and KKT tolerance.
    p : float or callable
        Norm of the MKL problem, used for :math:`\|S\|_{p^*}`; or a callable ``S -> dual
        norm`` for weight sets that are not a p-norm ball (Q-MKL's support function).
    backend : str, default="smo"
        ``"smo"`` (the warm-started :class:`~mklcore.smo.StackSMO`) or a backend of
        :func:`mklcore.svm.svm_solve`.
    svm_max_iter : int, default=None
        Cap on the iterations of one SVM solve; :func:`default_svm_max_iter` of ``n``. A solve
        that reaches it raises :class:`SVMIterationLimit`.
    task : SVMTask, default=None
        The dual problems solved at each weight vector (:mod:`mklcore.tasks`: the
        epsilon-SVR, one-vs-rest C-SVMs with shared weights); ``None``: the binary C-SVM on
        ``y``. A task needs ``backend="smo"``; ``y`` is then not used.

    Attributes
    ----------
    n_calls, n_smo_iter, svm_time : int, int, float
        SVM solves, engine iterations and seconds spent in the SVM.
    last : WrapperState or None
        The last state solved (the default warm start).
    kernel_buffer : ndarray of shape (n, n) or None
        The combined kernel of the last LIBSVM-type solve (reused by the next one).
    """

    def __init__(self, K, y, *, C, svm_tol, p, backend="smo", svm_max_iter=None, task=None):
        if task is not None and y is None:
            y = task.signs[0]
        self.task = task
        self.K, self.y, self.C, self.svm_tol, self.p = K, y, float(C), float(svm_tol), p
        self.backend = backend
        self.svm_max_iter = int(default_svm_max_iter(K.shape[1]) if svm_max_iter is None
                                else svm_max_iter)
        self.n_calls = 0
        self.n_smo_iter = 0
        self.svm_time = 0.0
        self.last = None
        self.kernel_buffer = None
        self._smo = None

    def __call__(self, theta, *, start=None, tol=None, max_iter=None):
        """SVM at ``theta``, warm-started from the state ``start`` (default: the last one).

        ``max_iter`` caps the SMO iterations (``"smo"`` backend only; interleaved mode): the
        returned state then has ``exact=False`` unless the SVM converged within the cap.
        Without it, a solve that reaches :attr:`svm_max_iter` raises
        :class:`SVMIterationLimit` (carrying the unconverged state).
        """
        theta = np.asarray(theta, dtype=float)
        tol = self.svm_tol if tol is None else float(tol)
        start = self.last if start is None else start
        t0 = time.perf_counter()
        if self.backend == "smo":
            state, capped = self._solve_smo(theta, start, tol, max_iter)
        else:
            if self.kernel_buffer is None:
                self.kernel_buffer = np.empty(self.K.shape[1:], dtype=np.float64)
            K_theta = combine_kernels(self.K, theta, out=self.kernel_buffer)
            res, capped = self.solve_combined(self.K, theta, K_theta, tol,
                                              None if start is None else start.alpha)
            state = WrapperState(theta, res.alpha, res.dual_coef, res.intercept, 0.5 * res.q,
                                 self.p, primal_objective=res.primal_objective, svm=res,
                                 exact=not capped)
        self.svm_time += time.perf_counter() - t0
        self.n_calls += 1
        self.last = state
        if not (np.isfinite(state.J) and np.isfinite(state.S).all()):
            self.input_check()  # a non-finite kernel entry was read: name it
        if capped:
            raise self.limit_error(state)
        return state

    def input_check(self):
        """The input checks the sampled ones deferred: raise ``ValueError`` if the stack holds
        NaN or infinity (see :func:`mklcore._validation.check_kernel_stack`)."""
        if isinstance(self.K, LazyStack):
            self.K.check_finite()
        else:
            check_finite(self.K, "K")

    def solve_combined(self, K, weights, K_combined, tol, alpha0=None):
        """One capped :func:`~mklcore.svm.svm_solve` call of the LIBSVM-type backend.

        Parameters
        ----------
        K : ndarray of shape (n_kernels, n, n) or (n, n)
            The kernels whose quadratic terms ``q`` the result holds.
        weights : ndarray of shape (n_kernels,) or None
            Their weights.
        K_combined : ndarray of shape (n, n)
            The combined kernel the SVM is trained on.
        tol : float
            KKT tolerance.
        alpha0 : ndarray of shape (n,), default=None
            Warm start (for backends that use one).

        Returns
        -------
        res : MKLResult
            The result of :func:`~mklcore.svm.svm_solve`.
        capped : bool
            Whether the solve reached :attr:`svm_max_iter` (the iterations are counted in
            :attr:`n_smo_iter`).
        """
        with warnings.catch_warnings():  # scikit-learn's "terminated early": ours instead
            warnings.filterwarnings("ignore", "Solver terminated early")
            res = svm_solve(K, self.y, weights=weights, C=self.C, tol=tol, alpha0=alpha0,
                            backend=self.backend, K_combined=K_combined,
                            max_iter=self.svm_max_iter, check_input=False)
        self.n_smo_iter += max(int(res.n_iter), 0)
        return res, int(res.n_iter) >= self.svm_max_iter

    def limit_error(self, state=None):
        """The :class:`SVMIterationLimit` of a solve that reached :attr:`svm_max_iter`.

        Parameters
        ----------
        state : WrapperState, default=None
            The unconverged solution, if there is one at the oracle's weights.

        Returns
        -------
        error : SVMIterationLimit
            Naming the likely causes (huge C, unscaled features) and the remedies.
        """
        n = self.K.shape[1]
        diag = (self.K.diag() if isinstance(self.K, LazyStack)
                else self.K[:, np.arange(n), np.arange(n)])
        traces = np.abs(diag.sum(axis=1))
        spread = traces.max() / max(traces.min(), np.finfo(float).tiny)
        cause = (f"the kernels' traces differ by a factor {spread:.1e}" if spread > 1e4
                 else "huge C? unscaled features?")
        return SVMIterationLimit(
            f"the SVM did not converge within svm_max_iter={self.svm_max_iter} iterations "
            f"at C={self.C:g} ({cause}); scale the kernels (normalize='trace') or the "
            f"features, lower C, or raise svm_max_iter", state)

    def engine(self):
        """The oracle's :class:`~mklcore.smo.StackSMO` (created on first use)."""
        if self._smo is None:
            self._smo = (self.K.engine(self.y, self.C) if isinstance(self.K, LazyStack)
                         else StackSMO(self.K, self.y, self.C))
        return self._smo

    def _solve_smo(self, theta, start, tol, max_iter):
        if self.task is not None:
            return self.solve_task(theta, start, tol, max_iter)
        n_kernels, n = self.K.shape[0], self.K.shape[1]
        self.engine()
        if start is None or start.H is None:
            alpha0, H = np.zeros(n), np.zeros((n_kernels, n))
        else:
            alpha0, H = start.alpha, start.H.copy()
        capped_run = max_iter is None  # a partial solve (interleaved chunk) is no failure
        alpha, H, b, n_iter, converged = self._smo.solve(
            theta, alpha0, H, tol, self.svm_max_iter if capped_run else max_iter,
            full=capped_run)
        self.n_smo_iter += n_iter
        coef = alpha * self.y
        q = np.maximum(H @ coef, 0.0)
        f = theta @ H + b
        primal = 0.5 * float(theta @ q) + self.C * float(np.maximum(0.0, 1.0 - self.y * f).sum())
        state = WrapperState(theta, alpha, coef, b, 0.5 * q, self.p, primal_objective=primal,
                             H=H, exact=converged)
        return state, capped_run and not converged

    def solve_task(self, theta, start, tol, max_iter):
        """The task's problems at ``theta`` on the engine, each warm-started from ``start``:
        ``(state, capped)``."""
        task, smo = self.task, self.engine()
        k, n_var = task.signs.shape
        n_kernels, n = self.K.shape[0], self.K.shape[1]
        if start is None or start.H is None:
            alpha0, H = np.zeros((k, n_var)), np.zeros((k, n_kernels, n))
        else:
            alpha0 = np.reshape(start.alpha, (k, n_var))
            H = np.reshape(start.H, (k, n_kernels, n)).copy()
        capped_run = max_iter is None
        alpha, b, converged = np.empty((k, n_var)), np.empty(k), True
        for j in range(k):
            alpha[j], _, b[j], n_iter, ok = smo.solve(
                theta, alpha0[j], H[j], tol, self.svm_max_iter if capped_run else max_iter,
                full=capped_run, y=task.signs[j], p=task.linear[j], kidx=task.kidx)
            self.n_smo_iter += n_iter
            converged = converged and ok
        state = self.task_state(theta, alpha, H, b, exact=converged)
        return state, capped_run and not converged

    def task_state(self, theta, alpha, H, intercept, *, exact=True):
        r"""The :class:`WrapperState` of a solution of the task's problems at ``theta``.

        Parameters
        ----------
        theta : ndarray of shape (n_kernels,)
        alpha : ndarray of shape (n_problems, n_var) (or (n_var,) for one problem)
        H : ndarray of shape (n_problems, n_kernels, n) (or (n_kernels, n))
            Caches :math:`H_m=K_mc`.
        intercept : ndarray of shape (n_problems,) or float
        exact : bool, default=True

        Returns
        -------
        state : WrapperState
            :math:`S_m=\frac12\sum_kc_k^\top H_{km}`, the task's :math:`L`, and the primal
            :math:`\frac12\theta^\top q+C\sum` loss at the decision values
            :math:`\sum_m\theta_mH_{km}+b_k`.
        """
        task = self.task
        k = task.n_problems
        n_kernels, n = self.K.shape[0], self.K.shape[1]
        alpha = np.reshape(alpha, (k, -1))
        H = np.reshape(H, (k, n_kernels, n))
        b = np.reshape(np.asarray(intercept, dtype=float), (k,))
        coef = task.coef(alpha)
        q = np.maximum(H[0] @ coef[0], 0.0)
        for j in range(1, k):
            q += np.maximum(H[j] @ coef[j], 0.0)
        f = np.einsum("m,kmn->kn", theta, H) + b[:, None]
        primal = 0.5 * float(theta @ q) + self.C * task.loss(f)
        return WrapperState(theta, task.squeeze(alpha), task.squeeze(coef), task.squeeze(b),
                            0.5 * q, self.p, primal_objective=primal, H=task.squeeze(H),
                            exact=exact, L=task.linear_value(alpha))

    def rescore(self, state, theta):
        """Same alpha, new weights (no SVM): used after small clean-ups of the weights."""
        return WrapperState(theta, state.alpha, state.dual_coef, state.intercept, state.S,
                            self.p, exact=False, H=state.H, L=state.L)


# --------------------------------------------------------------------------------------
# the method-specific part
# --------------------------------------------------------------------------------------

class WeightStep:
    """What a method adds to the shared loop: start point, stopping criterion, weight step.

    Subclasses set ``p``, ``method`` (short name stored in the result), ``label`` (used in
    messages, e.g. ``"LpMKL (newton, p=2)"``) and ``criterion_name``, and override
    :meth:`step` (and :meth:`init`, :meth:`gap` where they differ from the defaults).
    """

    p = 1.0
    method = "mkl"
    label = "MKL"
    criterion_name = "relative duality gap"
    #: weight steps the loop takes before it may stop on the criterion: the returned weights
    #: are never the unoptimised starting point, even when the criterion is already below
    #: ``tol`` there (0 for :class:`FixedWeights`)
    min_steps = 1

    def init(self, n_kernels):
        """Starting weights; default: uniform with unit p-norm (:func:`uniform_weights`)."""
        return uniform_weights(n_kernels, self.p)

    def dual_norm(self, S):
        r"""Dual norm of ``S`` for the weight set (its support function); default
        :math:`\|S\|_{p^*}` (:func:`dual_norm`). Determines ``dual_objective`` and ``rel_gap``."""
        return dual_norm(S, self.p)

    def gap(self, state):
        r"""The method's stopping criterion at ``state``; default :math:`\Delta_{rel}`."""
        return state.rel_gap

    def step(self, state, oracle):  # pragma: no cover - abstract
        """Return new weights, or a :class:`WrapperState` already evaluated at them."""
        raise NotImplementedError

    def history_extras(self):
        """Per-iteration extras for the history (same keys at every call)."""
        return {}

    def result_extras(self):
        """Extras added to the final result."""
        return {}

    def note(self):
        """A remark for the result's message (e.g. a fallback taken), or ``""``."""
        return ""


class FixedWeights(WeightStep):
    r"""No weight step: the SVM at fixed weights (e.g. the sum kernel, :math:`p=\infty`)."""

    criterion_name = "relative duality gap"
    min_steps = 0

    def __init__(self, weights, *, p=np.inf, method="fixed", label="SVM"):
        self.weights, self.p, self.method, self.label = weights, p, method, label

    def init(self, n_kernels):
        return np.asarray(self.weights, dtype=float)

    def gap(self, state):
        return 0.0  # nothing to optimise over the weights

    def step(self, state, oracle):  # pragma: no cover - never reached (gap is 0)
        return state.theta


class SIPWeightStep(WeightStep):
    r"""Base of the column-generation steps (SILP, lp-norm cutting plane): the stop rule.

    ``stop="gap"`` (default) stops on :math:`\Delta_{rel}` (lower bound :math:`D_p(\alpha)`),
    at ``p = 1`` on :math:`\min(\Delta_{rel}, |1-\eta/J|)`, the LP value :math:`\eta` being
    a second lower bound of the optimum (the LP's vertex weights need not certify through
    :math:`D_1(\alpha)` when the optimal :math:`\theta` is not unique; for ``p > 1`` the
    SQCLP value is no lower bound). ``stop="sip"`` stops on the SIP gap :math:`|1-\eta/J|`
    at every p (the :math:`\epsilon_{MKL}` test of Sonnenburg et al. 2006, Algorithm 1; the
    "inner SIP precision" of Kloft et al. 2009, Sec. 3.1).

    The step adds the cut of the current alpha to :attr:`cuts` (a :class:`~mklcore.masters.Cuts`), solves the
    restricted master over them (:meth:`master`, returning :math:`(\theta, \eta)`) and
    prunes the cuts.

    Parameters
    ----------
    max_cuts : int, default=100
        Pruning rule of :class:`~mklcore.masters.Cuts`.
    prune_cuts : bool, default=True
        Whether to prune cuts at all.
    stop : {"gap", "sip"}, default="gap"
        The stopping rule.
    """

    eta = -np.inf
    STOP_NAMES = {"gap": "relative duality gap", "sip": "SIP gap |1 - eta/J|",
                  "gap_l1": "min(relative duality gap, SIP gap |1 - eta/J|)"}

    def __init__(self, *, max_cuts=100, prune_cuts=True, stop="gap"):
        self.max_cuts, self.prune_cuts = max_cuts, prune_cuts
        self.stop = stop  # validated by the public solvers' parameter constraints
        self.n_master_solves = 0
        self.cuts = None

    @property
    def criterion_name(self):
        """Name of :meth:`gap` for messages: ``gap`` (the result's relative duality gap)
        and the criterion differ at p = 1 with ``stop="gap"``, so the names differ too."""
        if self.stop == "gap" and self.p == 1:
            return self.STOP_NAMES["gap_l1"]
        return self.STOP_NAMES[self.stop]

    def init(self, n_kernels):
        self.cuts = Cuts(n_kernels, max_cuts=self.max_cuts, prune=self.prune_cuts)
        return super().init(n_kernels)

    def master(self, state):  # pragma: no cover - abstract
        """Solve the restricted master over :attr:`cuts`: ``(theta, eta)``."""
        raise NotImplementedError

    def step(self, state, oracle):
        self.cuts.add(state.L, state.S)
        theta, self.eta = self.master(state)
        self.cuts.prune(theta, self.eta)
        return theta

    def history_extras(self):
        return {"eta": self.eta, "n_cuts": 0 if self.cuts is None else len(self.cuts)}

    def result_extras(self):
        return {"eta": self.eta, "n_master_solves": self.n_master_solves,
                "n_cuts": len(self.cuts), "n_cuts_pruned": self.cuts.n_pruned}

    def sip_gap(self, state):
        r""":math:`|1-\eta/J|` (``inf`` before the first master problem)."""
        if not np.isfinite(self.eta) or state.J <= 0:
            return np.inf
        return abs(1.0 - self.eta / state.J)

    def gap(self, state):
        if self.stop == "sip":
            return self.sip_gap(state)
        if self.p == 1:  # the LP value is a lower bound: use the better certificate
            return min(state.rel_gap, self.sip_gap(state))
        return state.rel_gap


# --------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------

def _check_weights(theta, n_kernels, where):
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (n_kernels,) or not np.all(np.isfinite(theta)) or np.any(theta < 0):
        raise NumericalFailure(f"{where} produced invalid weights {theta!r}.")
    return theta


def _snapshot(state):
    """The callback's view of an iterate beyond the keys every Monitor payload has."""
    return {"dual_coef": state.dual_coef, "intercept": state.intercept,
            "dual_objective": state.dual_objective, "alpha": state.alpha}


def _svm_gap(state):
    r"""Relative duality gap :math:`(P_{hinge}-J)/|P_{hinge}|` of the SVM at the state's
    weights (0 when the primal is unknown or 0)."""
    primal = state.primal_objective
    if not np.isfinite(primal) or primal == 0:
        return 0.0
    return max(primal - state.J, 0.0) / abs(primal)


def run_wrapper(K, y, step, *, C, tol, max_iter, svm_tol, callback=None, verbose=0,
                svm_backend="smo", polish_tol=None, extras=None, mode="wrapper",
                mkl_every=None, svm_max_iter=None, task=None):
    r"""Run the shared MKL wrapper loop with one method's weight step.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples) or LazyStack
        Validated training stack, or a :class:`~mklcore.rowsource.LazyStack` (kernel rows
        computed from the features; ``svm_backend="smo"`` and weight steps that do not
        form combined kernels, e.g. those of :func:`mklcore.lpnorm.lpmkl_solve`).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    step : WeightStep
        The method (start point, stopping criterion, weight update).
    C : float
        Box constraint of the SVM (the :math:`C` of problem (6) of Kloft et al. 2009).
    tol : float or None
        Stop when ``step.gap(state) <= tol``, the SVM is solved at the current weights and
        at least ``step.min_steps`` weight steps were taken (one, except for
        :class:`FixedWeights`: a run never returns its unoptimised starting weights);
        ``None``: no stopping test, run ``max_iter`` iterations (status 1, no warning).
    max_iter : int
        Maximum number of outer iterations (SVM solve + criterion + weight step).
    svm_tol : float
        KKT tolerance of every SVM solve (LIBSVM's maximal violating pair; the "outer SVM
        epsilon" of Kloft et al. 2009, Sec. 3.1).
    callback : callable, default=None
        ``callback(intermediate_result)`` after every outer iteration; ``StopIteration``
        stops the loop with ``status=3``.
    verbose : int, default=0
        ``1``: a line every 10 iterations; ``>= 2``: every iteration.
    svm_backend : {"smo", "libsvm"} or str, default="smo"
        ``"smo"`` (:class:`mklcore.smo.StackSMO`) or a :func:`mklcore.svm.svm_solve` backend.
    polish_tol : float, default=None
        If given and smaller than ``svm_tol``, the final SVM is re-solved at this tolerance.
    extras : dict, default=None
        Extra keys stored in the result (e.g. ``p``, ``solver``).
    mode : {"wrapper", "interleaved"}, default="wrapper"
        ``"interleaved"`` (needs ``svm_backend="smo"``): ``mkl_every`` SMO iterations between
        weight steps, stopping when the SVM is converged at the current weights and the
        criterion is below ``tol`` (see the module docstring).
    mkl_every : int, default=None
        SMO iterations between weight steps in interleaved mode; ``max(10, n // 10)``.
    svm_max_iter : int, default=None
        Cap on the iterations of every SVM solve (LIBSVM's ``max_iter``, the SMO's cap);
        ``None``: :func:`default_svm_max_iter` (``max(10**6, 100 n)``). A solve that reaches
        it ends the run with status 2 and a ``ConvergenceWarning`` naming the likely cause
        (huge C, unscaled features), so that no run is unbounded.
    task : SVMTask, default=None
        The dual problems whose summed optimal value is minimised over the weights
        (:mod:`mklcore.tasks`: :class:`~mklcore.tasks.RegressionTask` for the epsilon-SVR,
        :class:`~mklcore.tasks.OneVsRestTask` for one-vs-rest problems sharing the
        weights); ``None``: the binary C-SVM on ``y`` (``y`` is not used otherwise).
        Needs ``svm_backend="smo"``. ``dual_coef``, ``intercept`` and ``alpha`` of a task of
        several problems have one row per problem.

    Returns
    -------
    result : MKLResult
        Built by :meth:`Monitor.finish <mklcore._result.Monitor.finish>`: core keys
        (``weights``, ``dual_coef`` = :math:`\alpha\circ y`, ``intercept``, ``objective`` =
        :math:`J(\theta)`, ``gap`` = :math:`\Delta_{rel}`, ``n_iter``, ``success``,
        ``status``, ``message``, ``history`` with ``n_iter`` rows, ``method``) plus
        ``alpha``, ``dual_objective`` (:math:`D_p(\alpha)`), ``primal_objective``
        (:math:`P_{hinge}`), ``rigorous_gap`` (:math:`P_{hinge}-D_p(\alpha)\ge0`),
        ``criterion`` and ``criterion_name`` (the method's stopping value), ``tol``,
        ``n_svm_calls``, ``n_smo_iter``, ``svm_time``, ``time``, ``mode``, ``svm_backend``
        and the method's extras. The sanity gate of the wrapper: a run whose final SVM is not
        certified, :math:`(P_{hinge}-J)/|P_{hinge}|` above :data:`SVM_GAP_LIMIT`, ends with
        status 2 ("the SVM did not converge"), whatever its MKL criterion.
    """
    if isinstance(K, LazyStack):  # rows from raw features (mklcore.rowsource)
        if svm_backend != "smo":
            raise ValueError(f"a LazyStack (kernel rows from features) needs "
                             f"svm_backend='smo'; got svm_backend={svm_backend!r}.")
    elif not K.flags.c_contiguous:
        # one memory layout, so that a Fortran-ordered or strided stack gives the same bits
        K = np.ascontiguousarray(K)
    n_kernels = K.shape[0]
    interleaved = mode == "interleaved"
    if interleaved and svm_backend != "smo":
        raise ValueError("mode='interleaved' needs svm_backend='smo' (partial SVM solves with "
                         f"per-kernel gradient caches); got svm_backend={svm_backend!r}.")
    if task is not None and svm_backend != "smo":
        raise ValueError(f"a {type(task).__name__} needs svm_backend='smo' (the compiled "
                         f"engine); got svm_backend={svm_backend!r}.")
    chunk = (mkl_every or max(10, K.shape[1] // 10)) if interleaved else None
    oracle = SVMOracle(K, y, C=C, svm_tol=svm_tol, p=step.dual_norm, backend=svm_backend,
                       svm_max_iter=svm_max_iter, task=task)
    monitor = Monitor(step.method, tol=tol, max_iter=max_iter, callback=callback,
                      verbose=verbose, label=step.label, criterion_name=step.criterion_name,
                      input_check=oracle.input_check)

    theta = _check_weights(step.init(n_kernels), n_kernels, f"{step.label} initialisation")
    n_steps = 0  # weight steps taken: a run may stop only after step.min_steps of them
    capped = None
    try:
        state = oracle(theta, max_iter=chunk)
    except SVMIterationLimit as exc:  # no better state to return: record it, then stop
        state, capped = exc.state, exc
    while True:
        crit = float(step.gap(state))
        if monitor.record(objective=state.J, gap=state.rel_gap, weights=state.theta,
                          criterion=crit, ready=state.exact and n_steps >= step.min_steps,
                          snapshot=_snapshot(state),
                          dual_objective=state.dual_objective, n_svm_calls=oracle.n_calls,
                          **step.history_extras()) or capped is not None:
            break
        try:
            if tol is not None and crit <= tol and n_steps >= step.min_steps:
                # interleaved: weights done, finish the SVM
                new_state = oracle(state.theta, start=state)
            else:
                n_steps += 1
                out = step.step(state, oracle)
                if isinstance(out, WrapperState):
                    _check_weights(out.theta, n_kernels, f"{step.label} weight step")
                    new_state = out
                else:
                    new_state = oracle(
                        _check_weights(out, n_kernels, f"{step.label} weight step"),
                        start=state, max_iter=chunk)
        except NumericalFailure as exc:
            monitor.fail(exc)
            break
        # a partial (interleaved) solve may leave J <= 0, hence an infinite gap: not a failure
        if not (np.isfinite(new_state.J)
                and (np.isfinite(new_state.rel_gap) or not new_state.exact)):
            monitor.fail(f"non-finite objective at weights {new_state.theta!r}")
            break
        state = new_state

    # polish: the returned (alpha, b, theta) must belong together
    if capped is None and (not state.exact or (polish_tol is not None
                                               and polish_tol < svm_tol)):
        try:
            state = oracle(state.theta, start=state, tol=polish_tol)
        except SVMIterationLimit as exc:
            state, capped = exc.state, exc
    if capped is not None:
        monitor.fail(capped)
    svm_gap = _svm_gap(state)
    if svm_gap > max(SVM_GAP_LIMIT, tol or 0.0) and monitor.status != 2:
        monitor.fail(f"the SVM did not converge (huge C?): its relative duality gap "
                     f"(P_hinge - J)/P_hinge is {svm_gap:.2g} at C={float(C):g}; scale the "
                     f"kernels (normalize='trace'), lower C or tighten svm_tol")
    result = monitor.finish(
        weights=state.theta.copy(), dual_coef=state.dual_coef, intercept=state.intercept,
        objective=state.J, gap=state.rel_gap, stacklevel=4, alpha=state.alpha,
        empty_ok=task is not None and task.empty_ok,
        dual_objective=state.dual_objective, primal_objective=state.primal_objective,
        rigorous_gap=state.primal_objective - state.dual_objective, svm_gap=svm_gap,
        criterion=float(step.gap(state)), n_svm_calls=oracle.n_calls,
        n_smo_iter=oracle.n_smo_iter, svm_time=oracle.svm_time, mode=mode,
        svm_backend=svm_backend)
    result.update(step.result_extras())
    note = step.note()
    if note:
        result["message"] = f"{result['message']} ({note})"
    if extras:
        result.update(extras)
    return result
