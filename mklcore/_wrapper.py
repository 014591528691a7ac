r"""The one wrapper loop shared by the SVM-based MKL solvers (lp-norm MKL, SimpleMKL, SILP).

Every solver of Kloft et al. (2009) and its two l1 baselines alternates between an SVM on
the combined kernel :math:`K_\theta=\sum_m\theta_mK_m` and an update of the kernel weights
:math:`\theta` (spec §2.0, "wrapper scheme"). :func:`run_wrapper` runs that loop once for all
of them:

1. SVM at the current weights (:func:`mklcore.svm.svm_solve`, warm-started where the backend
   supports it) :math:`\to\alpha`;
2. per-kernel quantities :math:`S_m=\frac12\alpha^\top Q_m\alpha` (unweighted kernels) and
   :math:`L=\mathbf 1^\top\alpha`, objective :math:`J=t(\alpha,\theta)=L-\theta^\top S`
   (the inner value of the saddle-point problem (SP)), dual value
   :math:`D_p(\alpha)=L-\|S\|_{p^*}` of the dual (9), and the relative duality gap of §1.7,
   :math:`\Delta_{rel}=(\|S\|_{p^*}-\theta^\top S)/J`;
3. the method's own stopping criterion (``WeightStep.gap``: :math:`\Delta_{rel}` for Newton
   and analytic updates and SimpleMKL, the SIP gap :math:`|1-\eta/J|` for cutting planes);
4. history, ``callback`` (raise ``StopIteration`` to stop with ``status=3``) and the stop test;
5. the method's weight step (``WeightStep.step``), which may call the SVM at trial weights
   through the oracle it is handed (SimpleMKL's line search).

The loop ends with an SVM "polish" at the final weights whenever the last alpha does not
belong to them, then computes the rigorous certificate of §1.7 item 2,
:math:`P_{hinge}-D_p(\alpha)\ge 0`, and returns one :class:`~mklcore._result.MKLResult`.
Methods only supply a small :class:`WeightStep` subclass (``init``, ``gap``, ``step``).

Two SVM engines and two modes:

* ``svm_backend="libsvm"`` (default): :func:`mklcore.svm.svm_solve` on the combined kernel
  (one pass over the stack to combine, one for the per-kernel terms, no warm start);
* ``svm_backend="smo"``: :class:`CachedSMO`, a warm-startable SMO with per-kernel gradient
  caches :math:`H_m=K_m(\alpha\circ y)` that never forms :math:`K_\theta` (spec §2.0);
* ``mode="wrapper"`` (default): the SVM is solved to ``svm_tol`` before every weight step;
* ``mode="interleaved"`` (``"smo"`` only): the paper's scheme, a weight step after every
  ``mkl_every`` SMO iterations; stops when the SVM is converged at the current weights and
  the criterion is below ``tol``.
"""

import time
import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from ._result import STATUS_MESSAGES, History, MKLResult
from .svm import combine_kernels, svm_solve

__all__ = ["THETA_FLOOR", "conjugate_exponent", "dual_norm", "pnorm", "normalize_pnorm",
           "uniform_weights", "WrapperState", "CachedSMO", "SVMOracle", "WeightStep",
           "FixedWeights", "NumericalFailure", "Cuts", "run_wrapper"]

#: floor applied to weights before logarithms in multiplicative updates (spec §2.0, §2.9.5)
THETA_FLOOR = 1e-12


class NumericalFailure(RuntimeError):
    """Raised by a weight step that cannot continue (e.g. its master problem failed)."""


# --------------------------------------------------------------------------------------
# norms in the log domain (spec §2.0 "Numerics", §2.9 item 2)
# --------------------------------------------------------------------------------------

def conjugate_exponent(p):
    r"""Conjugate exponent :math:`p^*=p/(p-1)` (:math:`\infty` for p = 1, 1 for p = inf)."""
    p = float(p)
    if p == 1.0:
        return np.inf
    if np.isinf(p):
        return 1.0
    return p / (p - 1.0)


def pnorm(theta, p):
    r""":math:`\|\theta\|_p` for non-negative ``theta``, computed in the log domain."""
    theta = np.asarray(theta, dtype=float)
    if np.isinf(p):
        return float(np.max(np.abs(theta))) if theta.size else 0.0
    if p == 1.0:
        return float(np.sum(np.abs(theta)))
    a = np.abs(theta)
    if not np.any(a > 0):
        return 0.0
    with np.errstate(divide="ignore"):
        return float(np.exp(logsumexp(p * np.log(a)) / p))


def dual_norm(S, p):
    r""":math:`\|S\|_{p^*}` of eq. (8)/(9): max for p = 1, sum for p = inf, else log domain.

    Negative entries (round-off) are treated as 0 (spec §2.0).
    """
    S = np.maximum(np.asarray(S, dtype=float), 0.0)
    return pnorm(S, conjugate_exponent(p))


def normalize_pnorm(theta, p):
    r"""Scale non-negative ``theta`` to :math:`\|\theta\|_p=1` (unchanged if it is 0)."""
    theta = np.maximum(np.asarray(theta, dtype=float), 0.0)
    norm = pnorm(theta, p)
    if norm <= 0 or not np.isfinite(norm):
        return theta
    return theta / norm


def uniform_weights(n_kernels, p):
    r"""The uniform starting point :math:`M^{-1/p}\mathbf 1` with unit p-norm (spec §2.7)."""
    if np.isinf(p):
        return np.ones(n_kernels)
    return np.full(n_kernels, float(n_kernels) ** (-1.0 / p))


# --------------------------------------------------------------------------------------
# one SVM evaluation and what the weight steps read from it
# --------------------------------------------------------------------------------------

class WrapperState:
    r"""The SVM solution at one weight vector and the MKL quantities derived from it.

    Attributes: ``theta``, ``alpha`` (unsigned), ``dual_coef`` (``alpha*y``), ``intercept``,
    ``S`` (:math:`\frac12\alpha^\top Q_m\alpha`, unweighted), ``L`` (:math:`\mathbf1^\top\alpha`),
    ``J`` (:math:`L-\theta^\top S`, eq. (SP)), ``dual_norm`` (:math:`\|S\|_{p^*}`, eq. (8)),
    ``dual_objective`` (:math:`D_p(\alpha)`, eq. (9)), ``rel_gap`` (:math:`\Delta_{rel}` of
    §1.7), ``primal_objective`` (hinge primal at the current bias, ``nan`` for a rescored
    state), ``exact`` (alpha came from an SVM solve at ``theta``), ``svm`` (the raw
    :func:`~mklcore.svm.svm_solve` result or ``None``) and ``H`` (the per-kernel gradient
    caches :math:`H_m=K_m(\alpha\circ y)` of the ``"smo"`` backend, else ``None``).
    """

    __slots__ = ("theta", "alpha", "dual_coef", "intercept", "S", "L", "J", "dual_norm",
                 "dual_objective", "rel_gap", "primal_objective", "exact", "svm", "H")

    def __init__(self, theta, alpha, dual_coef, intercept, S, p, *, primal_objective=np.nan,
                 exact=True, svm=None, H=None):
        self.theta = np.asarray(theta, dtype=float)
        self.alpha = alpha
        self.dual_coef = dual_coef
        self.intercept = float(intercept)
        self.S = np.maximum(np.asarray(S, dtype=float), 0.0)
        self.L = float(np.sum(alpha))
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


class CachedSMO:
    r"""Warm-startable SMO on :math:`K_\theta=\sum_m\theta_mK_m` with per-kernel gradient caches.

    The SVM core of spec §2.0: solves
    :math:`\min_\alpha\frac12\alpha^\top Q_\theta\alpha-\mathbf1^\top\alpha`,
    :math:`y^\top\alpha=0`, :math:`0\le\alpha\le C`, by SMO with LIBSVM's second-order
    working-set selection (WSS2 of Fan, Chen & Lin 2005) and the same stopping rule as LIBSVM
    (maximal violating pair :math:`m(\alpha)-M(\alpha)\le` ``tol``, §1.7 item 1). It never
    forms :math:`K_\theta`: rows :math:`K_\theta[i,:]=\sum_m\theta_mK_m[i,:]` are computed
    when SMO touches index i (and cached for this :math:`\theta`), and the caches
    :math:`H_m=K_m(\alpha\circ y)` are updated with the rows of the changed indices only. A
    new :math:`\theta` then costs :math:`O(nM)` (:math:`\nabla=y\circ\sum_m\theta_mH_m-\mathbf1`),
    and :math:`q_m=(\alpha\circ y)^\top H_m` comes for free; warm starts from a nearby alpha
    touch few rows. Pure NumPy (a Python loop over SMO steps), so it pays off when the stack
    is large and the warm starts are good; LIBSVM is faster on a cold start of a small problem.
    """

    #: memory for cached rows of K_theta (n * 8 bytes each), at most 4096 rows
    cache_bytes = 2 ** 28

    def __init__(self, K, y, C):
        self.K, self.y, self.C = K, np.asarray(y, dtype=float), float(C)
        idx = np.arange(K.shape[1])
        self.diag = np.ascontiguousarray(K[:, idx, idx], dtype=np.float64)  # (M, n)

    def solve(self, theta, alpha, H, tol, max_iter=None):
        """SMO from ``alpha`` (with caches ``H``, updated in place) at weights ``theta``.

        Returns ``alpha, H, intercept, n_iter, converged``.
        """
        K, y, C = self.K, self.y, self.C
        n = y.size
        theta = np.asarray(theta, dtype=float)
        alpha = np.array(alpha, dtype=float, copy=True)
        active = np.flatnonzero(theta)
        all_active = active.size == theta.size
        theta_act = theta[active]
        Kd = theta @ self.diag
        G = y * (theta @ H) - 1.0  # gradient of 1/2 a'Q a - 1'a
        rows = {}
        max_rows = max(64, min(4096, self.cache_bytes // (8 * n)))

        def row(i):
            r = rows.get(i)
            if r is None:
                if len(rows) >= max_rows:
                    rows.clear()
                r = theta @ K[:, i, :] if all_active else theta_act @ K[active, i, :]
                r = rows[i] = np.asarray(r, dtype=np.float64)
            return r

        dc = np.zeros(n)  # change of alpha * y, for the caches
        ypos = y > 0
        # yG = -y * G (the "-y_t grad_t" of LIBSVM) is kept up to date instead of G, and the
        # index sets enter as penalties (0 inside, -inf/+inf outside), updated at i, j only
        yG = -y * G
        pen_up = np.where(np.where(ypos, alpha < C, alpha > 0), 0.0, -np.inf)
        pen_low = np.where(np.where(ypos, alpha > 0, alpha < C), 0.0, np.inf)
        tmp, a = np.empty(n), np.empty(n)
        if max_iter is None:
            max_iter = max(100_000, 100 * n)
        n_iter, converged = 0, False
        while n_iter < max_iter:
            # WSS2: i maximises -y_t G_t over I_up, j minimises -b^2/a over I_low
            np.add(yG, pen_up, out=tmp)
            i = int(np.argmax(tmp))
            g_max = tmp[i]
            np.add(yG, pen_low, out=tmp)
            if g_max - tmp.min() < tol:
                converged = True
                break
            Ki = row(i)
            np.subtract(g_max, tmp, out=tmp)  # b_t = g_max + y_t G_t (-inf outside I_low)
            np.maximum(tmp, 0.0, out=tmp)
            np.multiply(Ki, -2.0, out=a)  # a_t = K_ii + K_tt - 2 K_it
            a += Kd
            a += Kd[i]
            np.maximum(a, 1e-12, out=a)
            np.square(tmp, out=tmp)
            np.divide(tmp, a, out=tmp)
            j = int(np.argmax(tmp))  # = argmin of -b^2/a
            if not tmp[j] > 0:  # pragma: no cover - cannot happen above tol
                converged = True
                break
            Kj = row(j)
            quad = max(Kd[i] + Kd[j] - 2.0 * Ki[j], 1e-12)
            ai, aj = alpha[i], alpha[j]
            Gi, Gj = -y[i] * yG[i], -y[j] * yG[j]
            if y[i] != y[j]:  # LIBSVM's two-variable update, verbatim
                delta = (-Gi - Gj) / quad
                diff = ai - aj
                ni, nj = ai + delta, aj + delta
                if diff > 0:
                    if nj < 0:
                        nj, ni = 0.0, diff
                elif ni < 0:
                    ni, nj = 0.0, -diff
                if diff > 0:
                    if ni > C:
                        ni, nj = C, C - diff
                elif nj > C:
                    nj, ni = C, C + diff
            else:
                delta = (Gi - Gj) / quad
                total = ai + aj
                ni, nj = ai - delta, aj + delta
                if total > C:
                    if ni > C:
                        ni, nj = C, total - C
                elif nj < 0:
                    nj, ni = 0.0, total
                if total > C:
                    if nj > C:
                        nj, ni = C, total - C
                elif ni < 0:
                    ni, nj = 0.0, total
            dci, dcj = y[i] * (ni - ai), y[j] * (nj - aj)
            alpha[i], alpha[j] = ni, nj
            # yG_t -= y_t * y_t * (K_ti dc_i + K_tj dc_j)
            np.multiply(Ki, dci, out=tmp)
            yG -= tmp
            np.multiply(Kj, dcj, out=tmp)
            yG -= tmp
            for t, at in ((i, ni), (j, nj)):
                if ypos[t]:
                    pen_up[t] = 0.0 if at < C else -np.inf
                    pen_low[t] = 0.0 if at > 0 else np.inf
                else:
                    pen_up[t] = 0.0 if at > 0 else -np.inf
                    pen_low[t] = 0.0 if at < C else np.inf
            dc[i] += dci
            dc[j] += dcj
            n_iter += 1
        G = -y * yG
        # caches: H_m += K_m[:, changed] dc[changed] (rows, by symmetry), in chunks
        changed = np.flatnonzero(dc)
        for start in range(0, changed.size, 64):
            ids = changed[start:start + 64]
            H += np.tensordot(dc[ids], K[:, ids, :], axes=([0], [1]))
        # intercept by LIBSVM's rule (b = -rho)
        yG = y * G
        at_ub, at_lb = alpha >= C, alpha <= 0
        free = ~(at_ub | at_lb)
        if np.any(free):
            rho = float(np.mean(yG[free]))
        else:
            ub_mask = (at_ub & ~ypos) | (at_lb & ypos)
            lb_mask = (at_ub & ypos) | (at_lb & ~ypos)
            ub = yG[ub_mask].min() if np.any(ub_mask) else np.inf
            lb = yG[lb_mask].max() if np.any(lb_mask) else -np.inf
            rho = 0.5 * (ub + lb)
        return alpha, H, -rho, n_iter, converged


class SVMOracle:
    r"""Solves the SVM at given weights and turns the result into a :class:`WrapperState`.

    Handed to :meth:`WeightStep.step` so that a method can evaluate
    :math:`J(\theta)` at trial weights (SimpleMKL's line search). Counts the SVM calls,
    the backend's iterations and the time spent in the SVM.

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
    backend : str, default="libsvm"
        ``"smo"``: the warm-started :class:`CachedSMO` with per-kernel gradient caches;
        otherwise a backend of :func:`mklcore.svm.svm_solve` (``"libsvm"``: scikit-learn's
        SVC on the combined kernel, no warm start).
    """

    def __init__(self, K, y, *, C, svm_tol, p, backend="libsvm"):
        self.K, self.y, self.C, self.svm_tol, self.p = K, y, float(C), float(svm_tol), p
        self.backend = backend
        self.n_calls = 0
        self.n_smo_iter = 0
        self.svm_time = 0.0
        self.last = None
        self._buffer = None
        self._smo = None

    def __call__(self, theta, *, start=None, tol=None, max_iter=None):
        """SVM at ``theta``, warm-started from the state ``start`` (default: the last one).

        ``max_iter`` caps the SMO iterations (``"smo"`` backend only; interleaved mode): the
        returned state then has ``exact=False`` unless the SVM converged within the cap.
        """
        theta = np.asarray(theta, dtype=float)
        tol = self.svm_tol if tol is None else float(tol)
        start = self.last if start is None else start
        t0 = time.perf_counter()
        if self.backend == "smo":
            state = self._solve_smo(theta, start, tol, max_iter)
        else:
            if self._buffer is None:
                self._buffer = np.empty(self.K.shape[1:], dtype=np.float64)
            K_theta = combine_kernels(self.K, theta, out=self._buffer)
            res = svm_solve(self.K, self.y, weights=theta, C=self.C, tol=tol,
                            alpha0=None if start is None else start.alpha,
                            backend=self.backend, K_combined=K_theta)
            self.n_smo_iter += max(int(res.n_iter), 0)
            state = WrapperState(theta, res.alpha, res.dual_coef, res.intercept, 0.5 * res.q,
                                 self.p, primal_objective=res.primal_objective, svm=res)
        self.svm_time += time.perf_counter() - t0
        self.n_calls += 1
        self.last = state
        return state

    def _solve_smo(self, theta, start, tol, max_iter):
        n_kernels, n = self.K.shape[0], self.K.shape[1]
        if self._smo is None:
            self._smo = CachedSMO(self.K, self.y, self.C)
        if start is None or start.H is None:
            alpha0, H = np.zeros(n), np.zeros((n_kernels, n))
        else:
            alpha0, H = start.alpha, start.H.copy()
        alpha, H, b, n_iter, converged = self._smo.solve(theta, alpha0, H, tol, max_iter)
        if not converged and max_iter is None:
            warnings.warn(f"SMO stopped after {n_iter} iterations before reaching svm_tol "
                          f"{tol:g}.", ConvergenceWarning, stacklevel=4)
        self.n_smo_iter += n_iter
        coef = alpha * self.y
        q = np.maximum(H @ coef, 0.0)
        f = theta @ H + b
        primal = 0.5 * float(theta @ q) + self.C * float(np.maximum(0.0, 1.0 - self.y * f).sum())
        return WrapperState(theta, alpha, coef, b, 0.5 * q, self.p, primal_objective=primal, H=H,
                            exact=converged)

    def rescore(self, state, theta):
        """Same alpha, new weights (no SVM): used after small clean-ups of the weights."""
        return WrapperState(theta, state.alpha, state.dual_coef, state.intercept, state.S,
                            self.p, exact=False, H=state.H)


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

    def init(self, n_kernels):
        """Starting weights; default: uniform with unit p-norm (spec §2.7)."""
        return uniform_weights(n_kernels, self.p)

    def dual_norm(self, S):
        r"""Dual norm of ``S`` for the weight set (its support function); default
        :math:`\|S\|_{p^*}` of eq. (8). Determines ``dual_objective`` and ``rel_gap``."""
        return dual_norm(S, self.p)

    def gap(self, state):
        r"""The method's stopping criterion at ``state``; default :math:`\Delta_{rel}` (§1.7)."""
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


class FixedWeights(WeightStep):
    r"""No weight step: the SVM at fixed weights (e.g. the sum kernel, :math:`p=\infty`)."""

    criterion_name = "relative duality gap"

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

    ``stop="gap"`` (default) stops on a relative duality gap (upper bound :math:`J(\theta)`
    minus a lower bound of the optimum, over :math:`J`), the certificate every other solver
    stops on: :math:`\Delta_{rel}` of §1.7 item 2 (lower bound :math:`D_p(\alpha)`). At
    ``p = 1`` the value :math:`\eta` of the LP master is a second lower bound (every cut is
    at most :math:`J(\theta)` for all :math:`\theta`), and the better of the two is used:
    :math:`\min(\Delta_{rel}, |1-\eta/J|)`. This matters because the LP returns vertex
    weights whose SVM need not certify through :math:`D_1(\alpha)` when the optimal
    :math:`\theta` is not unique. For ``p > 1`` the SQCLP value is not a lower bound, so
    only :math:`\Delta_{rel}` counts. ``stop="sip"`` stops on the SIP gap
    :math:`|1-\eta/J|` of §1.7 item 3 (Sonnenburg's :math:`\epsilon_{MKL}`, the paper's
    "inner SIP precision") at every p. Subclasses set ``self.eta``.
    """

    eta = -np.inf
    stop = "gap"
    STOP_NAMES = {"gap": "relative duality gap", "sip": "SIP gap |1 - eta/J|"}

    def _set_stop(self, stop):  # validated by the public solvers' parameter constraints
        self.stop = stop
        self.criterion_name = self.STOP_NAMES[stop]

    def sip_gap(self, state):
        r""":math:`|1-\eta/J|` (``inf`` before the first master problem)."""
        if not np.isfinite(self.eta):
            return np.inf
        return abs(1.0 - self.eta / state.J)

    def gap(self, state):
        if self.stop == "sip":
            return self.sip_gap(state)
        if self.p == 1:  # the LP value is a lower bound: use the better certificate
            return min(state.rel_gap, self.sip_gap(state))
        return state.rel_gap


class Cuts:
    r"""Cutting planes :math:`\eta\ge L^r-\theta^\top S^r` of the (SIP), with pruning.

    Shared by the SIP solvers (lp-norm cutting plane, SILP). Pruning follows SHOGUN (spec
    §2.2): after a master solve, if there are more than ``max(max_cuts, 2 * n_active)``
    cuts (active: slack below ``1e-6`` relative), the cut with the largest slack is deleted.

    Parameters
    ----------
    n_kernels : int
    max_cuts : int, default=100
    prune : bool, default=True
    """

    def __init__(self, n_kernels, *, max_cuts=100, prune=True):
        self.L = np.empty(0)
        self.S = np.empty((0, n_kernels))
        self.max_cuts, self.prune_ = int(max_cuts), bool(prune)
        self.n_added = 0
        self.n_pruned = 0

    def __len__(self):
        return self.L.shape[0]

    def add(self, L, S):
        """Append the cut of one alpha (``L = 1'alpha``, ``S_m = alpha'Q_m alpha / 2``)."""
        self.L = np.append(self.L, float(L))
        self.S = np.vstack([self.S, np.asarray(S, dtype=float)[None]])
        self.n_added += 1

    def values(self, theta):
        r""":math:`L^r-\theta^\top S^r` for every cut."""
        return self.L - self.S @ np.asarray(theta, dtype=float)

    def prune(self, theta, eta):
        """Delete the loosest cut if there are too many (see class docstring)."""
        if not self.prune_ or len(self) == 0:
            return
        slack = eta - self.values(theta)
        n_active = int(np.sum(slack < 1e-6 * max(1.0, abs(eta))))
        if len(self) > max(self.max_cuts, 2 * n_active):
            worst = int(np.argmax(slack))
            self.L = np.delete(self.L, worst)
            self.S = np.delete(self.S, worst, axis=0)
            self.n_pruned += 1


# --------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------

def _check_weights(theta, n_kernels, where):
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (n_kernels,) or not np.all(np.isfinite(theta)) or np.any(theta < 0):
        raise NumericalFailure(f"{where} produced invalid weights {theta!r}.")
    return theta


def _snapshot(state, n_iter, crit, step):
    return MKLResult(
        weights=state.theta.copy(), dual_coef=state.dual_coef, intercept=state.intercept,
        objective=state.J, gap=state.rel_gap, n_iter=n_iter, criterion=crit,
        dual_objective=state.dual_objective, alpha=state.alpha, method=step.method)


def run_wrapper(K, y, step, *, C, tol, max_iter, svm_tol, callback=None, verbose=0,
                svm_backend="libsvm", polish_tol=None, extras=None, mode="wrapper",
                mkl_every=None):
    r"""Run the shared MKL wrapper loop with one method's weight step.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n_samples, n_samples)
        Validated training stack.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    step : WeightStep
        The method (start point, stopping criterion, weight update).
    C : float
        Box constraint of problem (6).
    tol : float
        Stop when ``step.gap(state) <= tol``.
    max_iter : int
        Maximum number of outer iterations (SVM solve + criterion + weight step).
    svm_tol : float
        KKT tolerance of every SVM solve (§1.7 item 1).
    callback : callable, default=None
        ``callback(intermediate_result)`` after every outer iteration; ``StopIteration``
        stops the loop with ``status=3``.
    verbose : int, default=0
        ``1``: a line every 10 iterations; ``>= 2``: every iteration.
    svm_backend : {"libsvm", "smo"} or str, default="libsvm"
        ``"smo"``: the warm-started :class:`CachedSMO`; else a :func:`mklcore.svm.svm_solve`
        backend.
    polish_tol : float, default=None
        If given and smaller than ``svm_tol``, the final SVM is re-solved at this tolerance.
    extras : dict, default=None
        Extra keys stored in the result (e.g. ``p``, ``solver``).
    mode : {"wrapper", "interleaved"}, default="wrapper"
        ``"wrapper"``: the SVM is solved to ``svm_tol`` before every weight step.
        ``"interleaved"`` (spec §2.0, the paper's scheme): only ``mkl_every`` SMO iterations
        run between weight steps (needs ``svm_backend="smo"``); the loop stops when the SVM
        is converged at the current weights and the criterion is below ``tol``.
    mkl_every : int, default=None
        SMO iterations between weight steps in interleaved mode; ``max(10, n // 10)``.

    Returns
    -------
    result : MKLResult
        Core keys (``weights``, ``dual_coef``, ``intercept``, ``objective`` = :math:`J(\theta)`,
        ``gap`` = :math:`\Delta_{rel}`, ``n_iter``, ``success``, ``status``, ``message``,
        ``history``, ``method``) plus ``alpha``, ``dual_objective`` (:math:`D_p(\alpha)`, eq. (9)),
        ``primal_objective`` (:math:`P_{hinge}`), ``rigorous_gap``
        (:math:`P_{hinge}-D_p(\alpha)`, §1.7 item 2), ``criterion`` and ``criterion_name``
        (the method's stopping value), ``tol``, ``n_svm_calls``, ``n_smo_iter``, ``svm_time``,
        ``time`` and the method's extras.
    """
    t_start = time.perf_counter()
    n_kernels = K.shape[0]
    interleaved = mode == "interleaved"
    if interleaved and svm_backend != "smo":
        raise ValueError("mode='interleaved' needs svm_backend='smo' (partial SVM solves with "
                         f"per-kernel gradient caches); got svm_backend={svm_backend!r}.")
    chunk = (mkl_every or max(10, K.shape[1] // 10)) if interleaved else None
    oracle = SVMOracle(K, y, C=C, svm_tol=svm_tol, p=step.dual_norm, backend=svm_backend)
    history = History()
    every = 1 if verbose >= 2 else 10

    theta = _check_weights(step.init(n_kernels), n_kernels, f"{step.label} initialisation")
    state = oracle(theta, max_iter=chunk)
    status, detail = None, ""
    n_iter = 0
    while True:
        n_iter += 1
        crit = float(step.gap(state))
        history.append(objective=state.J, gap=state.rel_gap, weights=state.theta,
                       criterion=crit, dual_objective=state.dual_objective,
                       n_svm_calls=oracle.n_calls, **step.history_extras())
        mkl_done = bool(crit <= tol)
        converged = mkl_done and state.exact
        if verbose and (n_iter == 1 or n_iter % every == 0 or converged):
            print(f"{step.label} iter {n_iter:4d}: objective {state.J:.8e}  "
                  f"gap {state.rel_gap:.2e}  {step.criterion_name} {crit:.2e}  "
                  f"svm calls {oracle.n_calls}  time {history.elapsed():.2f}s")
        if converged:
            status = 0
        if callback is not None:
            try:
                callback(_snapshot(state, n_iter, crit, step))
            except StopIteration:
                if status is None:
                    status = 3
        if status is not None:
            break
        if n_iter >= max_iter:
            status = 1
            break
        try:
            if mkl_done:  # interleaved: weights are done, finish the SVM at them
                new_state = oracle(state.theta, start=state)
            else:
                out = step.step(state, oracle)
                if isinstance(out, WrapperState):
                    _check_weights(out.theta, n_kernels, f"{step.label} weight step")
                    new_state = out
                else:
                    new_state = oracle(
                        _check_weights(out, n_kernels, f"{step.label} weight step"),
                        start=state, max_iter=chunk)
        except NumericalFailure as exc:
            status, detail = 2, str(exc)
            break
        if not (np.isfinite(new_state.J) and np.isfinite(new_state.rel_gap)):
            status, detail = 2, f"non-finite objective at weights {new_state.theta!r}"
            break
        state = new_state

    # polish: the returned (alpha, b, theta) must belong together (spec §1.6, §2.9.8)
    if not state.exact or (polish_tol is not None and polish_tol < svm_tol):
        state = oracle(state.theta, start=state, tol=polish_tol)
    final_crit = float(step.gap(state))

    if status == 0:
        message = (f"converged: {step.criterion_name} {crit:.1e} <= tol {tol:.1e} "
                   f"after {n_iter} iterations")
    elif status == 1:
        if crit <= tol:  # interleaved: weights done, SVM not yet converged at them
            reason = (f"{step.criterion_name} {crit:.1e} <= tol {tol:.1e} but the SVM had not "
                      f"reached svm_tol {svm_tol:.1e} at the final weights")
        else:
            reason = f"{step.criterion_name} {crit:.1e} > tol {tol:.1e}"
        message = (f"{step.label} did not converge in {n_iter} iterations: {reason}. "
                   f"Increase max_iter or loosen tol.")
        warnings.warn(message, ConvergenceWarning, stacklevel=3)
    elif status == 2:
        message = f"{step.label}: {STATUS_MESSAGES[2]}: {detail}"
        warnings.warn(message, ConvergenceWarning, stacklevel=3)
    else:
        message = f"{STATUS_MESSAGES[3]} after {n_iter} iterations"
    if verbose:
        print(f"{step.label}: {message}")

    result = MKLResult(
        weights=state.theta.copy(), dual_coef=state.dual_coef, intercept=state.intercept,
        objective=state.J, gap=state.rel_gap, n_iter=n_iter, success=status == 0,
        status=status, message=message, history=history.as_dict(n_kernels),
        method=step.method, alpha=state.alpha, dual_objective=state.dual_objective,
        primal_objective=state.primal_objective,
        rigorous_gap=state.primal_objective - state.dual_objective,
        criterion=final_crit, criterion_name=step.criterion_name, tol=float(tol),
        n_svm_calls=oracle.n_calls, n_smo_iter=oracle.n_smo_iter, svm_time=oracle.svm_time,
        mode=mode, svm_backend=svm_backend,
        time=time.perf_counter() - t_start)
    result.update(step.result_extras())
    if extras:
        result.update(extras)
    return result
