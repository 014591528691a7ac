"""MKLResult, the one result type every mklcore solver returns, and the iteration contract
(:class:`Monitor`) every solver loop follows."""

import importlib
import time
import warnings

import numpy as np

__all__ = ["MKLResult", "STATUS_MESSAGES", "History", "Monitor", "decision", "TimeLimit",
           "BudgetExhausted", "NumericalFailure"]

#: status codes shared by every solver (as in scipy.optimize)
STATUS_MESSAGES = {
    0: "converged",
    1: "maximum number of iterations reached",
    2: "numerical failure",
    3: "stopped by callback",
}

_CORE_KEYS = (
    "weights", "dual_coef", "intercept", "objective", "gap", "n_iter",
    "success", "status", "message", "history", "method",
)


class MKLResult(dict):
    """Result of an MKL solver, a dict with attribute access (like ``OptimizeResult``).

    Core keys, always present:

    ``weights`` : ndarray of shape (n_kernels,)
        Kernel weights (the paper's theta, d, beta or u; each solver's docstring says which).
    ``dual_coef`` : ndarray of shape (n_samples,)
        Signed dual coefficients of the final model (``alpha * y`` for SVM-type methods), so
        that ``f(x) = sum_m weights[m] * K_m(x, X) @ dual_coef + intercept``.
    ``intercept`` : float
        Bias of the final model.
    ``objective``, ``gap`` : float
        Final objective value and relative duality gap (``nan`` if the method has none).
    ``n_iter`` : int
        Number of outer iterations.
    ``success``, ``status``, ``message``
        As in scipy: ``status`` 0 = converged, 1 = max_iter reached, 2 = numerical failure,
        3 = stopped by callback; ``message`` says it in words.
    ``history`` : dict of ndarray
        Equal-length arrays recorded every outer iteration: ``objective``, ``gap``,
        ``weights`` (n_iter, n_kernels), ``time`` (seconds since the start).
    ``method`` : str
        Name of the solver, e.g. ``"simplemkl"``.

    Solvers add documented extra keys (for example ``n_svm_calls``).
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        del self[name]

    def __dir__(self):
        return list(self.keys())

    def __repr__(self):
        if not self:
            return "MKLResult()"
        width = max(len(k) for k in self) + 1
        lines = []
        for key in sorted(self, key=lambda k: (k not in _CORE_KEYS, k)):
            value = self[key]
            if isinstance(value, dict):
                text = "{" + ", ".join(
                    f"{k}: {np.shape(v)}" for k, v in value.items()) + "}"
            elif isinstance(value, np.ndarray) and value.size > 8:
                text = f"array(shape={value.shape}, dtype={value.dtype})"
            else:
                text = repr(value)
            lines.append(f"{key.rjust(width)}: {text}")
        return "\n".join(lines)

    def decision(self, K_test, **inputs):
        """Evaluate the model on a test stack: :func:`decision` ``(self, K_test, **inputs)``."""
        return decision(self, K_test, **inputs)


#: method name -> "module:function" of its decision rule, for results whose model is not a
#: weighted kernel sum (imported on first use)
DECISION_RULES = {
    "stpmkl": "stpmkl:stpmkl_decision",
    "mipmkl": "stpmkl:stpmkl_decision",
    "lmkl": "localized:lmkl_decision",
    "rls2": "rls2:rls2_decision",
    "linear_rls2": "rls2:rls2_decision",
}


def decision(result, K_test, **inputs):
    """Evaluate a fitted model on a test stack: ``f = sum_m weights[m] K_test[m] dual_coef + b``.

    Parameters
    ----------
    result : MKLResult
        A fitted result with ``weights``, ``dual_coef`` and ``intercept``.
    K_test : ndarray of shape (n_kernels, n_test, n_train)
        Test stack; rows are test points, columns training points.
    **inputs
        Extra test inputs of methods whose model needs them (e.g. ``X_gate`` for localized
        MKL, whose gates depend on the test points).

    Returns
    -------
    f : ndarray of shape (n_test,) or (n_test, n_classes)
        One column per one-vs-rest problem when ``dual_coef`` has one row per class.

    Notes
    -----
    Methods whose model is not a weighted kernel sum register their rule in
    :data:`DECISION_RULES` (keyed by ``result.method``), so ``decision(result, K_test)``
    works for every solver.
    """
    rule = DECISION_RULES.get(result.get("method"))
    if rule is not None:
        module, name = rule.split(":")
        func = getattr(importlib.import_module(f"mklcore.{module}"), name)
        return func(result, K_test, **inputs)
    if inputs:
        raise TypeError(f"decision() got unexpected test inputs {sorted(inputs)} for a "
                        f"{result.get('method')!r} result.")
    K_test = np.asarray(K_test)
    weights = np.asarray(result["weights"], dtype=float)
    coef = np.asarray(result["dual_coef"], dtype=float)
    if coef.ndim == 2:  # one-vs-rest problems (kernel weights shared): one column per class
        intercept = np.asarray(result["intercept"], dtype=float)
        return np.column_stack([decision({"weights": weights, "dual_coef": c, "intercept": b},
                                         K_test) for c, b in zip(coef, intercept)])
    if K_test.ndim != 3 or K_test.shape[0] != weights.shape[0] or K_test.shape[2] != coef.shape[0]:
        raise ValueError(
            f"K_test must have shape (n_kernels={weights.shape[0]}, n_test, "
            f"n_train={coef.shape[0]}); got {K_test.shape}.")
    active = np.flatnonzero(weights)
    f = np.zeros(K_test.shape[1])
    for m in active:  # skip zero-weight kernels
        f += weights[m] * (K_test[m] @ coef)
    return f + float(result["intercept"])


class History:
    """Accumulates per-iteration records and turns them into equal-length arrays.

    ``History.append(objective=..., gap=..., weights=..., **extra)`` adds one row;
    ``time`` is filled in automatically (seconds since construction).
    """

    def __init__(self):
        self._clock = time.perf_counter
        self._t0 = self._clock()
        self._rows = {"objective": [], "gap": [], "weights": [], "time": []}

    def append(self, *, objective, gap, weights, **extra):
        self._rows["objective"].append(float(objective))
        self._rows["gap"].append(float(gap))
        self._rows["weights"].append(np.array(weights, dtype=float, copy=True))
        self._rows["time"].append(self._clock() - self._t0)
        for key, value in extra.items():
            self._rows.setdefault(key, []).append(value)

    def __len__(self):
        return len(self._rows["objective"])

    def elapsed(self):
        return self._clock() - self._t0

    def as_dict(self, n_kernels=None):
        out = {}
        for key, values in self._rows.items():
            if key == "weights":
                if values:
                    out[key] = np.vstack(values)
                else:
                    out[key] = np.empty((0, n_kernels or 0))
            else:
                out[key] = np.asarray(values)
        return out


# --------------------------------------------------------------------------------------
# the iteration contract
# --------------------------------------------------------------------------------------

class BudgetExhausted(StopIteration):
    """Raised by a callback to end a solver like ``max_iter`` does: status 1, with a message.

    A plain ``StopIteration`` from a callback means "the user stopped the run" (status 3);
    this subclass means "the budget ran out" (status 1, a ``ConvergenceWarning`` when a
    tolerance was given, and its text in the result's ``message``).
    """


class NumericalFailure(RuntimeError):
    """Raised by a solver step that cannot continue (e.g. its master problem failed); a loop
    ends with status 2 (:meth:`Monitor.fail`)."""


class TimeLimit:
    """A wall-clock budget for any solver, given as its ``callback``.

    ``simplemkl_solve(K, y, callback=TimeLimit(60))`` stops after the first iteration that
    ends more than 60 s after the start, with status 1 ("did not converge ... the
    wall-clock budget of 60 s ran out") and the last iterate, like ``max_iter``. Results
    then depend on the machine's speed, so the paper reproductions never use it; it is for
    interactive use, where a run of many minutes should end with a message, not silently.

    Parameters
    ----------
    seconds : float
        The budget, > 0, measured from the solver's start (the ``time`` of each iteration).
    callback : callable, default=None
        A further callback called first on every iteration (it may still raise
        ``StopIteration`` itself).

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore import TimeLimit, simplemkl_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> K = np.stack([X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))])
    >>> res = simplemkl_solve(K, y, callback=TimeLimit(1e-9))   # doctest: +SKIP
    >>> res.status, "wall-clock budget" in res.message           # doctest: +SKIP
    (1, True)
    """

    def __init__(self, seconds, callback=None):
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.number)) \
                or not np.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"The 'seconds' parameter of TimeLimit must be a finite number "
                             f"> 0. Got {seconds!r} instead.")
        if callback is not None and not callable(callback):
            raise TypeError(f"The 'callback' parameter of TimeLimit must be callable or None. "
                            f"Got {type(callback).__name__} instead.")
        self.seconds = float(seconds)
        self.callback = callback

    def __call__(self, intermediate_result):
        if self.callback is not None:
            self.callback(intermediate_result)
        if intermediate_result["time"] > self.seconds:
            raise BudgetExhausted(f"the wall-clock budget of {self.seconds:g} s ran out")

    def __repr__(self):
        return f"TimeLimit({self.seconds:g})"


class Monitor:
    r"""The iteration contract every mklcore solver loop follows.

    A solver creates one ``Monitor``, calls :meth:`record` once per outer iteration (after
    computing that iteration's objective, certificate and weights) and stops as soon as it
    returns ``True``; a step that cannot continue calls :meth:`fail`; :meth:`finish` builds
    the :class:`MKLResult`. The rules are the same for every solver:

    * **History**: one row per iteration, so ``n_iter == len(history["objective"])``; keys
      ``objective``, ``gap``, ``criterion``, ``weights``, ``time`` and the solver's extras
      (the same keys in every row).
    * **Stopping**: status 0 when the criterion is ``<= tol`` (and the iterate is ``ready``,
      e.g. the SVM is solved at the current weights); ``tol=None`` switches the test off, so
      the loop runs ``max_iter`` iterations and ends with status 1 and no warning (a fixed
      budget the user asked for); ``tol=0`` keeps the test (only an exact optimum stops).
      Status 1 when ``max_iter`` iterations are done or the callback raised
      :class:`BudgetExhausted` (e.g. :class:`TimeLimit`, a wall-clock budget), 2 after
      :meth:`fail`, 3 when the callback raised ``StopIteration``.
    * **Callback**: ``callback(intermediate_result)`` after every row, with an
      :class:`MKLResult` holding ``n_iter``, ``objective``, ``gap``, ``criterion``,
      ``weights``, ``time``, ``method`` and the loop's ``snapshot`` keys.
    * **Warnings**: a :class:`~sklearn.exceptions.ConvergenceWarning` for status 1 (with a
      tolerance) and status 2, worded with the criterion, its value and what to try.
    * **Sanity gate** (:meth:`finish`): ``success=True`` only if the run converged, every
      output is finite, the certificate is finite (for solvers that have one) and the model
      is not empty; otherwise status 2 with a message saying what went wrong.

    Parameters
    ----------
    method : str
        Short solver name stored in the result (``"simplemkl"``).
    tol : float or None
        Stopping tolerance on the criterion; ``None``: no stopping test.
    max_iter : int
        Maximum number of outer iterations.
    callback : callable, default=None
        See above.
    verbose : int, default=0
        ``1``: a progress line on the first iteration, every ``10`` iterations and at the
        end; ``>= 2``: every iteration.
    label : str, default=None
        Name used in messages (``"LpMKL (newton, p=2)"``); ``method`` by default.
    criterion_name : str, default="relative duality gap"
        What the criterion is, for messages.
    certified : bool, default=True
        Whether ``gap`` is an optimality certificate (``False`` for methods with none, whose
        ``gap`` is ``nan``: the sanity gate then does not ask for a finite gap).
    advice : str, default="Increase max_iter or loosen tol."
        What to try when ``max_iter`` is reached.
    input_check : callable, default=None
        Run by :meth:`finish` when the sanity gate finds a non-finite output, before the
        result is built: the full input check that the solver's sampled checks deferred
        (:func:`mklcore._validation.check_kernel_stack`), which raises a ``ValueError`` naming
        the input when it holds NaN or infinity.
    hint : str, default=""
        The likely cause of a failure, known before the run (e.g. kernels of very different
        scales); appended to the message of status 1 (instead of ``advice``) and status 2.
    """

    def __init__(self, method, *, tol, max_iter, callback=None, verbose=0, label=None,
                 criterion_name="relative duality gap", certified=True,
                 advice="Increase max_iter or loosen tol.", hint="", input_check=None):
        self.method = method
        self.label = label or method
        self.tol = None if tol is None else float(tol)
        self.max_iter = int(max_iter)
        self.callback = callback
        self.verbose = int(verbose)
        self.criterion_name = criterion_name
        self.certified = bool(certified)
        self.advice = advice
        self.input_check = input_check
        self.hint = hint
        self.history = History()
        self.n_iter = 0
        self.status = None
        self.detail = ""
        self.criterion = np.nan
        self.ready = True

    # -- during the loop -----------------------------------------------------------------
    def record(self, *, objective, gap, weights, criterion=None, ready=True, snapshot=None,
               **extra):
        """Add the row of one iteration; return ``True`` when the loop must stop.

        Parameters
        ----------
        objective, gap : float
            The iteration's objective and relative duality gap (``nan`` if none).
        weights : array-like of shape (n_kernels,)
        criterion : float, default=None
            The stopping value, if not ``gap`` (e.g. a SIP gap).
        ready : bool, default=True
            Whether the iterate may stop the loop when the criterion is met (``False``
            e.g. while the inner SVM is not yet solved at the current weights).
        snapshot : dict, default=None
            Extra keys for the callback payload (not stored in the history).
        **extra
            Extra history columns.
        """
        self.n_iter += 1
        crit = float(gap if criterion is None else criterion)
        self.criterion, self.ready = crit, bool(ready)
        self.history.append(objective=objective, gap=gap, weights=weights, criterion=crit,
                            **extra)
        if self.tol is not None and ready and crit <= self.tol:
            self.status = 0
        if self.verbose and (self.n_iter == 1 or self.verbose >= 2 or self.n_iter % 10 == 0
                             or self.status == 0):
            print(f"{self.label} iter {self.n_iter:4d}: objective {float(objective):.8e}  "
                  f"{self.criterion_name} {crit:.2e}  time {self.history.elapsed():.2f}s")
        if self.callback is not None:
            payload = MKLResult(n_iter=self.n_iter, objective=float(objective),
                                gap=float(gap), criterion=crit,
                                weights=np.array(weights, dtype=float, copy=True),
                                time=self.history.elapsed(), method=self.method)
            payload.update(snapshot or {})
            try:
                self.callback(payload)
            except BudgetExhausted as exc:
                if self.status is None:
                    self.status, self.detail = 1, str(exc) or "the budget ran out"
            except StopIteration:
                if self.status is None:
                    self.status = 3
        if self.status is None and self.n_iter >= self.max_iter:
            self.status = 1
        return self.status is not None

    def fail(self, detail):
        """Stop with status 2 (numerical failure); ``detail`` says what happened."""
        self.status, self.detail = 2, str(detail)

    def succeed(self, detail=""):
        """Stop with status 0 on a test the loop makes itself, not :meth:`record`'s.

        For a second stopping rule, or for an iterate reached after the last row (set
        :attr:`criterion` to its value first); ``detail`` (e.g. which rule was met) replaces
        the usual ``"<criterion> <= tol"`` part of the message.

        Parameters
        ----------
        detail : str, default=""
            What converged; empty: the usual message with :attr:`criterion` and ``tol``.
        """
        self.status, self.detail = 0, str(detail)

    @property
    def stopped(self):
        """Whether the loop must stop."""
        return self.status is not None

    def elapsed(self):
        """Seconds since the monitor was created."""
        return self.history.elapsed()

    # -- at the end ----------------------------------------------------------------------
    def _message(self):
        message = self._status_message()
        if self.hint and self.status in (1, 2) and self.hint not in message:
            message = f"{message.rstrip('.')}. Likely cause: {self.hint}"
        return message

    def _status_message(self):
        status, crit, tol = self.status, self.criterion, self.tol
        if status == 0 and self.detail:
            return f"converged: {self.detail} after {self.n_iter} iterations"
        if status == 0:
            return (f"converged: {self.criterion_name} {crit:.1e} <= tol {tol:.1e} after "
                    f"{self.n_iter} iterations")
        if status == 1:
            if tol is None and self.detail:
                return f"{self.label} stopped: {self.detail} after {self.n_iter} iterations"
            if tol is None:
                return f"{STATUS_MESSAGES[1]} ({self.n_iter}; no tolerance given)"
            if crit <= tol and not self.ready:
                reason = (f"{self.criterion_name} {crit:.1e} <= tol {tol:.1e} but, at the final "
                          f"iterate, the inner problem was not solved or no weight step was "
                          f"taken yet")
            else:
                reason = f"{self.criterion_name} {crit:.1e} > tol {tol:.1e}"
            if self.detail:  # a budget other than max_iter ran out
                return (f"{self.label} did not converge: {self.detail} after {self.n_iter} "
                        f"iterations, with {reason}.")
            if self.hint:
                return f"{self.label} did not converge in {self.n_iter} iterations: {reason}."
            return (f"{self.label} did not converge in {self.n_iter} iterations: {reason}. "
                    f"{self.advice}")
        if status == 2:
            return f"{self.label}: {STATUS_MESSAGES[2]}: {self.detail}"
        return f"{STATUS_MESSAGES[3]} after {self.n_iter} iterations"

    def _gate(self, weights, dual_coef, intercept, objective, gap, empty_ok):
        """The sanity gate: a reason why the result cannot be a success, or ``None``."""
        named = {"weights": weights, "dual_coef": dual_coef, "intercept": intercept,
                 "objective": objective}
        for name, value in named.items():
            value = np.asarray(value, dtype=float)
            if not np.all(np.isfinite(value)):
                return (f"non-finite {name}; scale the kernels (normalize='trace'), lower C "
                        f"or raise the regularisation")
        if self.certified and not np.isfinite(gap):
            return "the duality gap is not finite, so the result is not certified"
        if not empty_ok and not np.any(np.asarray(dual_coef, dtype=float)):
            return ("empty model (every dual coefficient is 0, the decision is constant); "
                    "scale the kernels or raise C")
        return None

    def finish(self, *, weights, dual_coef, intercept, objective, gap, empty_ok=False,
               warn=True, stacklevel=3, **extras):
        """Build the :class:`MKLResult`, after the sanity gate.

        Parameters
        ----------
        weights, dual_coef, intercept, objective, gap
            The final model and its certificate (core keys of :class:`MKLResult`).
        empty_ok : bool, default=False
            Whether an all-zero ``dual_coef`` is a valid model (e.g. RLS2 above
            ``lambda_max``).
        warn : bool, default=True
            Whether to raise a ``ConvergenceWarning`` for status 1 and 2.
        stacklevel : int, default=3
            Of the warning (3: the caller of the solver function that calls ``finish``).
        **extras
            Method-specific keys.

        Returns
        -------
        result : MKLResult
            Core keys plus ``criterion``, ``criterion_name``, ``tol``, ``time`` and the extras.
        """
        if self.status is None:  # a loop that ended without its last record
            self.status = 1
        problem = self._gate(weights, dual_coef, intercept, objective, gap, empty_ok)
        if problem is not None and problem.startswith("non-finite") and self.input_check:
            self.input_check()
        if problem is not None and self.status in (0, 1, 3):
            self.status, self.detail = 2, problem
        message = self._message()
        if warn and (self.status == 2 or (self.status == 1 and self.tol is not None)):
            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel)
        if self.verbose:
            print(f"{self.label}: {message}")
        result = MKLResult(
            weights=np.asarray(weights, dtype=float), dual_coef=np.asarray(dual_coef),
            intercept=intercept if np.ndim(intercept) else float(intercept),
            objective=float(objective), gap=float(gap), n_iter=self.n_iter,
            success=self.status == 0, status=self.status, message=message,
            history=self.history.as_dict(np.size(weights)), method=self.method,
            criterion=float(self.criterion), criterion_name=self.criterion_name,
            tol=np.nan if self.tol is None else self.tol, time=self.history.elapsed())
        result.update(extras)
        return result
