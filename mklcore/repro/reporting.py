"""Paper-vs-ours tables, claim verdicts, ``summary.csv`` and ``REPORT.md``.

Each notebook section ends with a comparison of the paper's numbers and ours::

    rows = [
        {"item": "ionosphere accuracy, SimpleMKL", "paper": 0.92, "ours": acc,
         "atol": 0.02, "source": "Table 2, p. 2510"},
    ]
    table = compare(rows)  # item, paper, ours, diff, verdict, tolerance, rule, note, source

and the notebook ends with :func:`write_summary` and :func:`write_report`. The
verdicts are descriptive: this module never asserts; the notebook decides which
checks must hold.
"""

import hashlib
import importlib.metadata
import json
import math
import numbers
import os
import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = [
    "DEFAULT_RTOL", "verdict", "compare", "Claim", "claims_table", "write_summary",
    "environment_info", "markdown_table", "write_report", "summary_table", "VERDICTS",
    "SUMMARY_COLUMNS", "RUNTIME_FILE", "VOLATILE_ENV_KEYS", "GainTest", "gain_verdict",
    "EquivalenceTest", "equivalence_verdict",
    "tolerance_text", "SETTING_RULE", "gain_text", "no_gain_text", "count_verdict",
    "readable_means", "RUN_FILE", "run_record", "claims_held", "environment_fingerprint",
    "at_tolerance", "verdict_at_edge",
]

#: file of :func:`write_report` holding what changes on every run (git-ignored)
RUNTIME_FILE = "runtime.json"

#: file of a published full run with the facts of the run that produced its committed
#: outputs (date, commit, environment fingerprint, runtime; see :func:`run_record`); committed
RUN_FILE = "run.json"

#: facts of :func:`environment_info` that change without the results changing (the commit, and
#: the machine: its platform string names the kernel build, its core count the hardware); they
#: go to :data:`RUNTIME_FILE`, not to ``REPORT.md``, so that a rerun on another machine leaves
#: the committed files as they were
VOLATILE_ENV_KEYS = ("git_commit", "platform", "n_cpus")

#: relative tolerance used by :func:`verdict` when neither ``rtol`` nor ``atol`` is given
DEFAULT_RTOL = 0.05

_COMPARE_COLUMNS = ["item", "paper", "ours", "diff", "verdict", "edge", "tolerance", "rule",
                    "note", "source"]
_ROW_KEYS = {"item", "paper", "ours", "rtol", "atol", "close_factor", "note", "source",
             "comparable", "rule"}

#: the rule of a summary row that reports a setting or a result with no paper number
SETTING_RULE = "setting or result with no paper number, not compared"


def _is_missing(value):
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _slack(a, b):
    """Floating-point round-off allowed when comparing ``a`` with the limit ``b``."""
    return 1e-9 * abs(b) + 4 * np.finfo(float).eps * max(abs(a), abs(b))


def at_tolerance(value, limit):
    """Whether a comparison ``value <= limit`` is decided at its edge: ``value == limit``.

    Equality is up to floating-point round-off (``1e-9 * |limit|`` plus a few ulps), the
    slack with which :func:`verdict` makes its boundaries inclusive. A pass decided this way
    holds only at the tolerance (``|ours - paper|`` exactly at ``tol``, a size exactly
    ``tol`` examples from the paper's) or on a tie (0 errors against 0 errors: ``limit = 0``),
    and the claims tables mark it (the ``edge`` column of :func:`compare`,
    :func:`claims_table` and ``summary.csv``; :attr:`Claim.edge`).

    Parameters
    ----------
    value : float
        The compared quantity, e.g. ``|ours - paper|`` or ``errors_ours - errors_baseline``.
    limit : float
        What it is compared against, e.g. the tolerance (0 for a tie).

    Returns
    -------
    edge : bool
        ``False`` when either is missing or not finite.

    Examples
    --------
    >>> from mklcore.repro.reporting import at_tolerance
    >>> at_tolerance(abs(14 - 12), 2), at_tolerance(abs(13 - 12), 2), at_tolerance(0, 0)
    (True, False, True)
    """
    if _is_missing(value) or _is_missing(limit):
        return False
    value, limit = float(value), float(limit)
    if not (math.isfinite(value) and math.isfinite(limit)):
        return False
    return bool(abs(value - limit) <= _slack(value, limit))


def verdict_at_edge(paper, ours, *, rtol=None, atol=None, close_factor=3.0):
    """Whether the verdict of :func:`verdict` is decided at the edge of its tolerance.

    ``True`` for a ``"match"`` with ``|ours - paper|`` equal to ``tol`` and for a
    ``"close"`` with ``|ours - paper|`` equal to ``close_factor * tol``, up to round-off
    (:func:`at_tolerance`). A zero tolerance asks for equality, which is not an edge, and
    ``"differs"`` / ``"n/a"`` are never one.

    Parameters
    ----------
    paper, ours, rtol, atol, close_factor
        As in :func:`verdict`.

    Returns
    -------
    edge : bool

    Examples
    --------
    >>> from mklcore.repro.reporting import verdict_at_edge
    >>> verdict_at_edge(0.90, 0.91, atol=0.01), verdict_at_edge(0.90, 0.905, atol=0.01)
    (True, False)
    """
    v = verdict(paper, ours, rtol=rtol, atol=atol, close_factor=close_factor)
    if v not in ("match", "close") or not (_is_number(paper) and _is_number(ours)):
        return False
    if rtol is None and atol is None:
        rtol = DEFAULT_RTOL
    tol = (atol or 0.0) + (rtol or 0.0) * abs(float(paper))
    if not tol > 0 or math.isinf(float(paper)):
        return False
    diff = abs(float(ours) - float(paper))
    return at_tolerance(diff, tol if v == "match" else close_factor * tol)


def verdict(paper, ours, *, rtol=None, atol=None, close_factor=3.0):
    """Compare one number of the paper with ours.

    The tolerance is ``tol = atol + rtol * |paper|`` (as in ``numpy.isclose``; a
    missing one counts as 0, and when both are missing ``rtol=DEFAULT_RTOL`` = 5 %).

    Parameters
    ----------
    paper : float or str or bool or None
        The paper's value. ``None``/NaN (the paper gives no number) gives ``"n/a"``.
    ours : float or str or bool or None
        Our value. ``None``/NaN (we have no number) gives ``"differs"``: a missing
        result never counts as reproduced.
    rtol : float, default=None
        Relative tolerance, >= 0.
    atol : float, default=None
        Absolute tolerance, >= 0 (e.g. ``0.01`` for accuracies printed with two digits).
    close_factor : float, default=3.0
        ``"close"`` means within ``close_factor * tol``; must be >= 1.

    Returns
    -------
    verdict : {"match", "close", "differs", "n/a"}
        Non-numeric values (strings, bools) match when equal and differ otherwise.

    Examples
    --------
    >>> from mklcore.reporting import verdict
    >>> verdict(0.90, 0.905, atol=0.01), verdict(0.90, 0.92, atol=0.01), verdict(0.90, 0.95, atol=0.01)
    ('match', 'close', 'differs')
    """
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value is not None and (not _is_number(value) or not value >= 0):
            raise ValueError(f"The '{name}' parameter must be a float >= 0 or None. "
                             f"Got {value!r} instead.")
    if not _is_number(close_factor) or not close_factor >= 1:
        raise ValueError(f"The 'close_factor' parameter must be a float >= 1. "
                         f"Got {close_factor!r} instead.")
    if _is_missing(paper):
        return "n/a"
    if _is_missing(ours):
        return "differs"
    if not (_is_number(paper) and _is_number(ours)):
        return "match" if paper == ours else "differs"
    if rtol is None and atol is None:
        rtol = DEFAULT_RTOL
    paper, ours = float(paper), float(ours)
    if math.isinf(paper) or math.isinf(ours):
        return "match" if paper == ours else "differs"
    tol = (atol or 0.0) + (rtol or 0.0) * abs(paper)
    diff = abs(ours - paper)
    # boundaries are inclusive up to floating-point noise (0.91 - 0.90 > 0.01 in floats)
    slack = 1e-9 * tol + 4 * np.finfo(float).eps * max(abs(paper), abs(ours))
    if diff <= tol + slack:  # an exact-tolerance pass is marked by verdict_at_edge
        return "match"
    if diff <= close_factor * (tol + slack):
        return "close"
    return "differs"


def tolerance_text(paper, ours=None, *, rtol=None, atol=None, close_factor=3.0):
    """The tolerance and the rule :func:`verdict` applies to one row, in words.

    Parameters
    ----------
    paper, ours : float or str or bool or None
        As in :func:`verdict`.
    rtol, atol, close_factor : float, default=None, None, 3.0
        As in :func:`verdict`.

    Returns
    -------
    tolerance : str
        The absolute tolerance ``atol + rtol * |paper|`` as a number (``"0.01"``), with
        its make-up when a relative part is used (``"0.045 (5% of paper)"``); ``"exact"``
        for non-numeric values; ``"n/a"`` when the paper gives no number.
    rule : str
        How the verdict was decided.

    Examples
    --------
    >>> from mklcore.reporting import tolerance_text
    >>> tolerance_text(0.9, 0.91, atol=0.01)
    ('0.01', 'match if abs(ours - paper) <= tol, close if <= 3 tol, else differs')
    """
    if _is_missing(paper):
        return "n/a", "the paper gives no number: not compared"
    if not (_is_number(paper) and (ours is None or _is_missing(ours) or _is_number(ours))):
        return "exact", "match if equal, else differs"
    if rtol is None and atol is None:
        rtol = DEFAULT_RTOL
    tol = (atol or 0.0) + (rtol or 0.0) * abs(float(paper))
    text = f"{tol:.3g}"
    if rtol:
        parts = ([f"{atol:.3g}"] if atol else []) + [f"{100 * rtol:.3g}% of paper"]
        text += f" ({' + '.join(parts)})"
    factor = f"{close_factor:g}"
    return text, f"match if abs(ours - paper) <= tol, close if <= {factor} tol, else differs"


def compare(rows):
    """Paper-vs-ours table with a verdict per row.

    Parameters
    ----------
    rows : iterable of dict or pandas.DataFrame
        One dict (or DataFrame row) per compared number with keys ``item`` (what is compared),
        ``paper``, ``ours`` (required), and optionally ``rtol``, ``atol``,
        ``close_factor`` (see :func:`verdict`), ``note`` (e.g. why it differs),
        ``source`` (where the paper's number is, e.g. ``"Table 1, p. 6"``),
        ``comparable`` (default ``True``; ``False`` or a string giving the reason, such as
        ``"different data: ADNI -> mfeat"`` or ``"matched by construction"``, makes the
        verdict ``"n/a"``) and ``rule`` (text replacing the default description of the
        rule, for a row decided otherwise).

    Returns
    -------
    table : pandas.DataFrame
        Columns ``item, paper, ours, diff, verdict, edge, tolerance, rule, note, source``, in
        the order of ``rows``; ``diff = ours - paper`` (NaN when either is not a number);
        ``edge`` is ``True`` for a verdict decided exactly at its tolerance
        (:func:`verdict_at_edge`); ``tolerance`` and ``rule`` say what decided the verdict
        (:func:`tolerance_text`).

    Raises
    ------
    ValueError
        If a row lacks ``item``, ``paper`` or ``ours``, or has an unknown key (a
        typo such as ``"rtl"`` would otherwise silently use the default tolerance).

    Examples
    --------
    >>> from mklcore.reporting import compare
    >>> compare([{"item": "acc", "paper": 0.9, "ours": 0.91, "atol": 0.02,
    ...           "source": "Table 1, p. 6"}])[["item", "verdict", "source"]]
      item verdict         source
    0  acc   match  Table 1, p. 6
    """
    if isinstance(rows, pd.DataFrame):
        rows = rows.to_dict("records")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise TypeError(f"Row {i} must be a dict; got {type(row).__name__}.")
        missing = [k for k in ("item", "paper", "ours") if k not in row]
        if missing:
            raise ValueError(f"Row {i} ({row.get('item', '?')!r}) lacks {missing}.")
        unknown = sorted(set(row) - _ROW_KEYS)
        if unknown:
            raise ValueError(f"Row {i} ({row['item']!r}) has unknown keys {unknown}; allowed: "
                             f"{sorted(_ROW_KEYS)}.")
        paper, ours = row["paper"], row["ours"]
        if isinstance(paper, np.generic):
            paper = paper.item()
        if isinstance(ours, np.generic):
            ours = ours.item()
        options = {"rtol": row.get("rtol"), "atol": row.get("atol"),
                   "close_factor": row.get("close_factor", 3.0)}
        v = verdict(paper, ours, **options)
        edge = verdict_at_edge(paper, ours, **options)
        tolerance, rule = tolerance_text(paper, ours, **options)
        comparable = row.get("comparable", True)
        if comparable is not True:
            if comparable is False or not str(comparable).strip():
                raise ValueError(f"Row {i} ({row['item']!r}): 'comparable' must be True or a "
                                 f"string giving the reason the row is not compared; got "
                                 f"{comparable!r}.")
            v, edge, tolerance, rule = "n/a", False, "n/a", f"not compared: {comparable}"
        if row.get("rule"):
            rule = str(row["rule"])
        if _is_number(paper) and _is_number(ours):
            diff = float(ours) - float(paper)
        else:
            diff = float("nan")
        out.append({"item": row["item"], "paper": paper, "ours": ours, "diff": diff,
                    "verdict": v, "edge": edge, "tolerance": tolerance, "rule": rule,
                    "note": row.get("note", ""), "source": row.get("source", "")})
    return pd.DataFrame(out, columns=_COMPARE_COLUMNS)


@dataclass(frozen=True)
class Claim:
    """A qualitative claim of a paper and whether our run supports it.

    Parameters
    ----------
    id : str
        Short identifier, e.g. ``"C1"``.
    text : str
        The claim, in the paper's words where possible (with its location).
    holds : bool or None or "inconclusive"
        ``True`` if our results support it, ``False`` if not, ``None`` if not tested,
        ``"inconclusive"`` if the run cannot decide (the difference is inside the noise).
    evidence : str, default=""
        The numbers behind ``holds`` (printed from code, not typed).
    hard : bool, default=True
        ``True`` for a central claim the reproduction must support; ``False`` for a
        secondary observation.
    rule : str, default=""
        How ``holds`` is decided, in words with its thresholds (e.g. the test of
        :func:`gain_verdict`).
    tolerance : str, default=""
        The tolerance or significance level the rule uses, e.g. ``"0.01 AUC"`` or
        ``"p < 0.05"``.
    source : str, default=""
        Where in the paper the claim is made, e.g. ``"Sec. 5.1"`` (the ``source`` column of
        :func:`claims_table` and ``summary.csv``).
    edge : bool, default=False
        ``True`` when the rule that decided ``holds`` compared a value exactly at its
        tolerance or on a tie (:func:`at_tolerance`), e.g. a size exactly 2 examples from
        the paper's with a tolerance of 2, or 0 errors against 0: the claim holds only at
        the edge. Marked in the ``edge`` column of :func:`claims_table` (only for a claim
        that holds).
    """

    id: str
    text: str
    holds: object
    evidence: str = ""
    hard: bool = True
    rule: str = ""
    tolerance: str = ""
    source: str = ""
    edge: bool = False

    def __post_init__(self):
        if not (self.holds is None
                or (isinstance(self.holds, str) and self.holds == INCONCLUSIVE)
                or isinstance(self.holds, (bool, np.bool_, numbers.Integral))):
            raise ValueError(f"Claim {self.id!r}: 'holds' must be True, False, None or "
                             f"{INCONCLUSIVE!r}; got {self.holds!r}.")
        if not isinstance(self.edge, (bool, np.bool_)):
            raise ValueError(f"Claim {self.id!r}: 'edge' must be True or False; got "
                             f"{self.edge!r}.")


#: the value of :attr:`Claim.holds` (and a verdict) for a claim the run cannot decide
INCONCLUSIVE = "inconclusive"


class GainTest(NamedTuple):
    """Outcome of :func:`gain_verdict`.

    Attributes
    ----------
    holds : bool or "inconclusive"
        ``True``: a significant gain; ``False``: no gain (the upper confidence bound is
        <= 0); ``"inconclusive"``: the interval contains 0 and positive gains.
    mean, se : float
        Mean gain and its standard error.
    n : int
        Number of paired differences (0 when ``mean`` and ``se`` were given).
    p_value : float
        One-sided p-value of "no gain" against "gain".
    rule, evidence : str
        The rule applied and its numbers, in words, for :class:`Claim`.
    """

    holds: object
    mean: float
    se: float
    n: int
    p_value: float
    rule: str
    evidence: str


def gain_verdict(diffs=None, *, mean=None, se=None, alpha=0.05):
    """Test a claimed gain: is ``new - baseline`` significantly positive?

    A claim that a method *improves* on another is tested as a gain, not as
    non-inferiority: with paired differences ``d_k = new_k - baseline_k`` (one per
    split or fold), the one-sided lower confidence bound ``mean - t_{1-alpha, n-1} se``
    must be above 0 (a one-sided paired t-test at level ``alpha``).

    Parameters
    ----------
    diffs : array-like of shape (n,), default=None
        Paired differences, positive = gain. ``n >= 2``.
    mean, se : float, default=None
        Alternatively, a mean gain and its standard error (normal approximation);
        used when ``diffs`` is None.
    alpha : float, default=0.05
        One-sided significance level, in (0, 0.5).

    Returns
    -------
    test : GainTest
        ``holds`` is ``True`` when the lower ``1 - alpha`` bound is > 0, ``False`` when
        the upper bound is <= 0 (ours shows no gain at all), and ``"inconclusive"``
        otherwise (the gain is inside the noise).

    Examples
    --------
    >>> from mklcore.reporting import gain_verdict
    >>> gain_verdict([0.02, 0.03, 0.025, 0.03]).holds
    True
    >>> gain_verdict([0.01, -0.01, 0.004, -0.002]).holds
    'inconclusive'
    """
    from scipy import stats

    if not (_is_number(alpha) and 0 < alpha < 0.5):
        raise ValueError(f"The 'alpha' parameter must be a float in (0, 0.5). Got {alpha!r} "
                         f"instead.")
    if diffs is not None:
        d = np.asarray(diffs, dtype=float).ravel()
        if d.size < 2 or not np.all(np.isfinite(d)):
            raise ValueError(f"'diffs' must hold at least 2 finite paired differences; got "
                             f"{d.size} values.")
        n, mean_, se_ = int(d.size), float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))
        if se_ <= 1e-12 * max(float(np.abs(d).max()), 1e-300):  # every pair differs equally
            return _constant_gain(d, alpha)
        crit = float(stats.t.ppf(1 - alpha, n - 1))
        p_value = float(stats.t.sf(mean_ / se_, n - 1))
        how = f"one-sided paired t-test over {n} pairs"
    else:
        if mean is None or se is None or not (_is_number(mean) and _is_number(se) and se >= 0):
            raise ValueError("Give either 'diffs' or both 'mean' and 'se' (se >= 0).")
        n, mean_, se_ = 0, float(mean), float(se)
        crit = float(stats.norm.ppf(1 - alpha))
        if se_ > 0:
            p_value = float(stats.norm.sf(mean_ / se_))
        else:
            p_value = 0.0 if mean_ > 0 else 1.0
        how = "one-sided z-test on the mean and its standard error"
    lower, upper = mean_ - crit * se_, mean_ + crit * se_
    if lower > 0:
        holds = True
    elif upper <= 0:
        holds = False
    else:
        holds = INCONCLUSIVE
    level = f"{100 * (1 - 2 * alpha):g}%"
    rule = (f"gain test ({how}, alpha = {alpha:g}): holds if the lower bound of the "
            f"{level} interval of the mean gain is > 0; does not hold if its upper bound is "
            f"<= 0; else inconclusive")
    evidence = (f"mean gain {mean_:+.4g} (se {se_:.2g}), {level} interval "
                f"[{lower:+.4g}, {upper:+.4g}], one-sided p = {p_value:.3g}")
    return GainTest(holds, mean_, se_, n, p_value, rule, evidence)


def _constant_gain(d, alpha):
    """:func:`gain_verdict` when every paired difference is the same (no variance).

    The t-test is undefined; the exact one-sided sign test is used: ``n`` pairs that all
    gain give ``p = 2^-n`` (so 2 pairs can never be significant at 5 %, 5 can); all equal
    to 0 is no gain at all.
    """
    n, value = int(d.size), float(d[0])
    if value == 0.0:
        holds, p_value = False, 1.0
    else:
        p_value = 0.5 ** n if value > 0 else 1.0
        holds = True if p_value < alpha else (False if value < 0 else INCONCLUSIVE)
    rule = (f"gain test (all {n} paired differences are equal, so an exact one-sided sign "
            f"test, alpha = {alpha:g}): holds if all pairs gain and 2^-n < alpha; does not "
            f"hold if no pair gains; else inconclusive")
    evidence = f"every one of {n} pairs gains {value:+.4g}; one-sided sign-test p = {p_value:.3g}"
    return GainTest(holds, value, 0.0, n, p_value, rule, evidence)


def gain_text(test):
    """A :class:`GainTest` in a few words, for the evidence of a claim.

    Parameters
    ----------
    test : GainTest
        From :func:`gain_verdict`.

    Returns
    -------
    text : str
        ``"<mean> (se <se>, one-sided p = <p>)"``.

    Examples
    --------
    >>> from mklcore.repro.reporting import gain_text, gain_verdict
    >>> gain_text(gain_verdict([0.02, 0.03, 0.025, 0.03]))
    '+0.026 (se 0.002, one-sided p = 0.00081)'
    """
    return f"{test.mean:+.3f} (se {test.se:.3f}, one-sided p = {test.p_value:.2g})"


def no_gain_text(diffs, what="test accuracy", unit="folds"):
    """Evidence prefix for paired differences that are all exactly zero, else ``""``.

    Parameters
    ----------
    diffs : array-like
        Paired differences new - baseline.
    what, unit : str
        What was measured and what the pairs are, for the text.

    Returns
    -------
    text : str
        ``"the same <what> on all <n> <unit>, i.e. no gain; "`` or ``""``.
    """
    d = np.asarray(diffs, dtype=float)
    if d.size and np.all(d == 0):
        return f"the same {what} on all {d.size} {unit}, i.e. no gain; "
    return ""


def count_verdict(results, need):
    """Verdict of "at least ``need`` of these hold" from per-item verdicts.

    Parameters
    ----------
    results : iterable of bool or "inconclusive"
        Per-item verdicts (e.g. the ``holds`` of one :func:`gain_verdict` per data set).
    need : int
        How many must hold.

    Returns
    -------
    holds : bool or "inconclusive"
        ``True`` if at least ``need`` are ``True``; ``False`` if so many are ``False`` that
        ``need`` cannot be reached; else :data:`INCONCLUSIVE`.

    Examples
    --------
    >>> from mklcore.repro.reporting import count_verdict
    >>> count_verdict([True, "inconclusive", False], 2)
    'inconclusive'
    """
    results = list(results)
    n_true = sum(r is True for r in results)
    n_false = sum(r is False for r in results)
    if n_true >= need:
        return True
    return False if n_false > len(results) - need else INCONCLUSIVE


class EquivalenceTest(NamedTuple):
    """Outcome of :func:`equivalence_verdict`.

    Attributes
    ----------
    holds : bool or "inconclusive"
        See :func:`equivalence_verdict`.
    mean, lower, upper : float
        Mean difference and the bounds of its ``1 - 2 alpha`` t-interval (equal to ``mean``
        when there is no noise estimate).
    n : int
        Number of paired differences.
    """

    holds: object
    mean: float
    lower: float
    upper: float
    n: int


def equivalence_verdict(diffs, margin, *, alpha=0.05):
    """Test a claim of equal performance ("similar", "as accurate as") within ``margin``.

    Two one-sided tests on paired differences: the ``1 - 2 alpha`` t-interval of the mean
    difference must lie within ``[-margin, margin]``.

    Parameters
    ----------
    diffs : array-like of shape (n,)
        Paired differences (per split, fold or data set).
    margin : float
        Equivalence margin, > 0, in the units of ``diffs``.
    alpha : float, default=0.05
        One-sided level, in (0, 0.5).

    Returns
    -------
    test : EquivalenceTest
        ``holds`` is ``True`` when the interval lies within the margin, ``False`` when it
        lies entirely outside, and ``"inconclusive"`` otherwise, and also with fewer than 2
        pairs or equal differences (no noise estimate).

    Examples
    --------
    >>> from mklcore.repro.reporting import equivalence_verdict
    >>> equivalence_verdict([0.01, -0.01, 0.005, 0.0], 0.02).holds
    True
    """
    from scipy import stats

    if not (_is_number(margin) and margin > 0):
        raise ValueError(f"The 'margin' parameter must be a float > 0. Got {margin!r} instead.")
    if not (_is_number(alpha) and 0 < alpha < 0.5):
        raise ValueError(f"The 'alpha' parameter must be a float in (0, 0.5). Got {alpha!r} "
                         f"instead.")
    d = np.asarray(diffs, dtype=float).ravel()
    mean = float(d.mean())
    if d.size < 2 or float(d.std(ddof=1)) == 0.0:
        return EquivalenceTest(INCONCLUSIVE, mean, mean, mean, int(d.size))
    half = float(stats.t.ppf(1 - alpha, d.size - 1)) * float(d.std(ddof=1) / np.sqrt(d.size))
    lo, hi = mean - half, mean + half
    if -margin <= lo and hi <= margin:
        holds = True
    elif lo > margin or hi < -margin:
        holds = False
    else:
        holds = INCONCLUSIVE
    return EquivalenceTest(holds, mean, lo, hi, int(d.size))


#: the one verdict vocabulary of every table and ``summary.csv``: for a number, ``match``
#: (within its tolerance), ``close`` (within ``close_factor`` times it), ``differs``; for a
#: claim, ``match`` (our run supports it), ``differs`` (it does not) or ``inconclusive``
#: (the run cannot decide: the difference is inside the noise); ``n/a``: nothing to
#: compare (the paper gives no number, the numbers come from different data or match by
#: construction, or the claim was not tested)
VERDICTS = ("match", "close", "differs", INCONCLUSIVE, "n/a")

#: the columns of every ``summary.csv``: each row says the tolerance and the rule that
#: decided its verdict, and ``edge`` whether that verdict was decided exactly at the tolerance
#: or on a tie (:func:`at_tolerance`)
SUMMARY_COLUMNS = ["item", "paper", "ours", "verdict", "tolerance", "rule", "source", "note",
                   "edge"]


def _claim_verdict(holds):
    if isinstance(holds, str) and holds == INCONCLUSIVE:
        return INCONCLUSIVE
    if holds is None or _is_missing(holds):
        return "n/a"
    return "match" if bool(holds) else "differs"


def _holds_value(holds):
    if isinstance(holds, str) and holds == INCONCLUSIVE:
        return INCONCLUSIVE
    return None if holds is None or _is_missing(holds) else bool(holds)


def claims_table(claims):
    """Table of claims with a verdict column.

    Parameters
    ----------
    claims : iterable of Claim or dict
        Claims (dicts with the fields of :class:`Claim` are accepted).

    Returns
    -------
    table : pandas.DataFrame
        Columns ``id, claim, hard, holds, verdict, edge, tolerance, rule, evidence`` (and
        ``source`` when a claim gives one); ``edge`` is ``True`` for a claim that holds only at
        the edge of its tolerance or on a tie (:attr:`Claim.edge`);
        ``verdict`` is ``"match"`` (our run supports the claim), ``"differs"`` (it does
        not), ``"inconclusive"`` (inside the noise) or ``"n/a"`` (not tested), the
        vocabulary of :data:`VERDICTS`. Nothing is asserted here.
    """
    rows = []
    for c in claims:
        if isinstance(c, dict):
            c = Claim(**c)
        if not isinstance(c, Claim):
            raise TypeError(f"claims must be Claim objects or dicts; got {type(c).__name__}.")
        holds = _holds_value(c.holds)
        rows.append({"id": str(c.id), "claim": c.text, "hard": bool(c.hard), "holds": holds,
                     "verdict": _claim_verdict(holds), "edge": bool(c.edge) and holds is True,
                     "tolerance": c.tolerance, "rule": c.rule, "evidence": c.evidence,
                     "source": c.source})
    columns = ["id", "claim", "hard", "holds", "verdict", "edge", "tolerance", "rule",
               "evidence"]
    if any(row["source"] for row in rows):
        columns.append("source")
    return pd.DataFrame(rows, columns=columns)


def summary_table(df):
    """Bring a table of reproduced items to the one summary schema.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :func:`compare` (``item, paper, ours, verdict, ...``), of
        :func:`claims_table` (``id, claim, holds, verdict, evidence``) or ``item, value``
        rows of settings and results with no paper number.

    Returns
    -------
    table : pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS` (``item, paper, ours, verdict, tolerance, rule,
        source, note, edge``) with verdicts from :data:`VERDICTS`; ``edge`` (``False`` when
        the input has no such column) marks a verdict decided exactly at its tolerance or on
        a tie. A claim becomes
        ``paper="holds"`` and ``ours`` ``"holds"`` / ``"does not hold"`` /
        ``"inconclusive"`` (a claim whose rule uses no tolerance gets tolerance ``"none"``);
        a value with no paper number gets ``n/a``, tolerance ``n/a`` and the rule
        :data:`SETTING_RULE`.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame; got {type(df).__name__}.")
    df = df.copy()
    if {"claim", "holds"} <= set(df.columns):
        def said(h):
            h = _holds_value(h)
            if h is None:
                return ""
            return h if h == INCONCLUSIVE else ("holds" if h else "does not hold")

        ident = df["id"].astype(str) + ": " if "id" in df.columns else ""
        df = pd.DataFrame({"item": ident + df["claim"].astype(str), "paper": "holds",
                           "ours": df["holds"].map(said),
                           "verdict": df["holds"].map(_claim_verdict),
                           "tolerance": df.get("tolerance", pd.Series("", index=df.index))
                           .map(lambda t: t if str(t).strip() else "none"),
                           "rule": df.get("rule", ""),
                           "source": df.get("source", ""),
                           "note": df.get("evidence", ""),
                           "edge": df.get("edge", pd.Series(False, index=df.index))})
    elif "value" in df.columns and "ours" not in df.columns:
        df = df.rename(columns={"value": "ours"})
        df["paper"] = ""
        df["verdict"] = "n/a"
        df["tolerance"] = "n/a"
        df["rule"] = SETTING_RULE
    missing = [c for c in ("item", "ours", "verdict") if c not in df.columns]
    if missing:
        raise ValueError(f"A summary table needs the columns item, ours and verdict; "
                         f"{missing} missing in {list(df.columns)}.")
    unknown = sorted(set(df["verdict"].astype(str)) - set(VERDICTS))
    if unknown:
        raise ValueError(f"Unknown verdicts {unknown}; the vocabulary is {list(VERDICTS)}.")
    if "edge" not in df.columns:
        df["edge"] = False
    df["edge"] = df["edge"].map(_edge_value)
    for column in SUMMARY_COLUMNS:
        if column not in df.columns:
            df[column] = ""
    return df[SUMMARY_COLUMNS].reset_index(drop=True)


def _edge_value(value):
    """``edge`` of a summary row as a bool (``True``/``"True"``); missing counts as False."""
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return False if _is_missing(value) else bool(value)


#: readable names of metrics in :func:`readable_means` (others keep their column name)
METRIC_NAMES = {"dirichlet": "E(w)"}


def readable_means(summary, unit="folds"):
    """A table of means (e.g. from :func:`mklcore.repro.experiments.summarize`) for a report.

    Parameters
    ----------
    summary : pandas.DataFrame
        Indexed by method, columns ``n`` and ``<metric>_mean``, ``<metric>_se``.
    unit : str, default="folds"
        What ``n`` counts.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``method``, ``<unit>``, ``<metric> (mean)``, ``<metric> (s.e.)``, rounded to
        4 decimals (metric names as in :data:`METRIC_NAMES`).
    """
    names = {"n": unit}
    for col in summary.columns:
        for suffix, word in (("_mean", "mean"), ("_se", "s.e.")):
            if col.endswith(suffix):
                metric = col[:-len(suffix)]
                names[col] = f"{METRIC_NAMES.get(metric, metric)} ({word})"
    out = summary.rename(columns=names).round(4)
    out.index.name = "method"
    return out.reset_index()


def write_summary(df, out_dir, *, filename="summary.csv", float_format="%.6g"):
    """Write the summary table to ``out_dir/summary.csv``, byte-identically across runs.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per reproduced item; brought to the one schema by :func:`summary_table`.
    out_dir : str or Path
        Output folder, created if needed.
    filename : str, default="summary.csv"
        File name.
    float_format : str, default="%.6g"
        Format of floating-point numbers (6 significant digits hides last-bit noise).

    Returns
    -------
    path : Path
        The file written (UTF-8, ``\\n`` line endings, no index column).
    """
    df = summary_table(df)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / filename
    text = df.to_csv(index=False, float_format=float_format, lineterminator="\n")
    path.write_bytes(text.encode("utf-8"))
    return path


_PACKAGES = ["numpy", "scipy", "scikit-learn", "pandas", "cvxpy", "matplotlib", "seaborn",
             "joblib", "mklcore"]


def _git_commit():
    try:
        from .notebook import project_root

        root = project_root()
    except Exception:
        root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = out.stdout.strip()
    if out.returncode != 0 or len(commit) != 40:
        return "unknown"  # no git, not a repository, or no commit yet
    return commit


def environment_info():
    """Versions and machine facts for the notebook's environment cell and REPORT.md.

    Package versions are read from the installed distributions (nothing is imported,
    so this is fast even for cvxpy).

    Returns
    -------
    info : dict of {str: str or int}
        Keys ``python``, ``numpy``, ``scipy``, ``scikit-learn``, ``pandas``, ``cvxpy``,
        ``matplotlib``, ``seaborn``, ``joblib``, ``mklcore`` (``"not installed"`` if
        absent), ``platform``, ``n_cpus`` and ``git_commit`` (``"unknown"`` outside a
        git checkout or before the first commit).
    """
    info = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            info[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            info[name] = "not installed"
    if info["mklcore"] == "not installed":
        from .. import __version__

        info["mklcore"] = __version__
    info["platform"] = platform.platform()
    info["n_cpus"] = os.cpu_count() or 1
    info["git_commit"] = _git_commit()
    return info


def environment_fingerprint():
    """A short fingerprint of the numerical environment, and what it is made of.

    Returns
    -------
    fingerprint : str
        12 hexadecimal digits: sha256 of the canonical JSON of ``versions``.
    versions : dict
        ``python`` and :func:`mklcore.repro.experiments.dependency_versions` (numpy, scipy,
        scikit-learn, cvxpy, numba and the BLAS in use with its CPU kernel): what the cache keys
        of the experiment runner cover besides the code.
    """
    from .experiments import dependency_versions

    versions = {"python": platform.python_version(), **dependency_versions()}
    text = json.dumps(versions, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12], versions


def _source_modified(root, paths):
    """Whether ``paths`` (relative to ``root``) differ from git's HEAD (``None``: unknown)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=root,
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip()) if out.returncode == 0 else None


def run_record(paper_id, *, runtime=None, cells=None, root=None):
    """The facts of a full run that a reader of its committed outputs wants to know.

    Written by :func:`mklcore.repro.notebook.publish_run` to ``figures/<paper_id>/run.json``
    (:data:`RUN_FILE`, committed) when a run changed the committed outputs, and shown on the
    book's execution-status page.

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb``.
    runtime : float, default=None
        Wall-clock seconds of the whole notebook run.
    cells : dict, default=None
        ``{"computed": n, "cached": m}``: the experiment cells the run computed and loaded from
        the cache (a run from the cache is much faster than a cold one).
    root : str or Path, default=None
        Repository root; :func:`mklcore.repro.notebook.project_root` by default.

    Returns
    -------
    record : dict
        ``paper_id``; ``date`` (UTC, ``YYYY-MM-DDTHH:MMZ``); ``commit`` (git HEAD, or
        ``"unknown"``) and ``source_modified`` (whether ``mklcore/`` or the notebook differed
        from that commit, ``None`` if unknown); ``code`` (the fingerprint of mklcore's code,
        :func:`mklcore.repro.experiments.code_version`); ``environment`` (``fingerprint`` and
        ``versions`` of :func:`environment_fingerprint`); ``machine`` (``platform``,
        ``n_cpus``); ``runtime_s``; ``cells``.
    """
    import datetime

    from .experiments import code_version
    from .notebook import project_root

    root = Path(root) if root is not None else project_root()
    fingerprint, versions = environment_fingerprint()
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "paper_id": paper_id,
        "date": now.strftime("%Y-%m-%dT%H:%MZ"),
        "commit": _git_commit(),
        "source_modified": _source_modified(root, ["mklcore", f"notebooks/{paper_id}.ipynb"]),
        "code": code_version(),
        "environment": {"fingerprint": fingerprint, "versions": versions},
        "machine": {"platform": platform.platform(), "n_cpus": os.cpu_count() or 1},
        "runtime_s": None if runtime is None else round(float(runtime), 1),
        "cells": None if cells is None else {k: int(cells[k]) for k in ("computed", "cached")
                                             if k in cells},
    }


def claims_held(summary):
    """Count the paper's claims a run supports, from its ``summary.csv`` table.

    Parameters
    ----------
    summary : pandas.DataFrame or str or Path
        A table of :func:`summary_table` or the path of a ``summary.csv``.

    Returns
    -------
    counts : dict
        ``total`` (claims: rows whose ``paper`` is ``"holds"``), ``held`` (``ours`` is
        ``"holds"``) and ``inconclusive``.
    """
    if not isinstance(summary, pd.DataFrame):
        summary = pd.read_csv(summary, keep_default_na=False, dtype=str)
    claims = summary[summary["paper"].astype(str) == "holds"]
    ours = claims["ours"].astype(str)
    return {"total": len(claims), "held": int((ours == "holds").sum()),
            "inconclusive": int((ours == INCONCLUSIVE).sum())}


def _cell(value, float_format):
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return "nan"
        return float_format % value
    if isinstance(value, np.generic):
        value = value.item()
    text = str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "<br>") \
        .replace("\n", "<br>")


def markdown_table(df, *, float_format="%.4g"):
    """Render a DataFrame as a GitHub-flavoured Markdown table (no ``tabulate`` needed).

    Parameters
    ----------
    df : pandas.DataFrame
        The table; a non-default index is written as leading column(s).
    float_format : str, default="%.4g"
        Format of floating-point cells; NaN is written ``nan``, ``None`` as empty.

    Returns
    -------
    text : str
        Header, alignment row (numbers right-aligned) and one line per row, no
        trailing newline. ``|`` in cells is escaped, line breaks become ``<br>``.
    """
    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(df)
    if not (isinstance(df.index, pd.RangeIndex) and df.index.start == 0
            and df.index.step == 1 and df.index.name is None):
        df = df.reset_index()
    header = [_cell(c, "%s") for c in df.columns]
    align = []
    for col in df.columns:
        numeric = pd.api.types.is_numeric_dtype(df[col]) and \
            not pd.api.types.is_bool_dtype(df[col])
        align.append("---:" if numeric else "---")
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for row in df.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_cell(v, float_format) for v in row) + " |")
    return "\n".join(lines)


def _pairs(items):
    """Normalise ``[x, (caption, x), ...]`` to a list of (caption or None, x)."""
    out = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            out.append(item)
        else:
            out.append((None, item))
    return out


_IMAGE_SUFFIXES = {".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp"}


def _figure_link(path, out_dir):
    path = Path(path)
    if path.suffix.lower() not in _IMAGE_SUFFIXES:
        path = path.with_name(path.name + ".png")
    out_abs = out_dir.resolve()
    if not path.is_absolute():
        candidate = path.resolve()  # relative to the working directory?
        if out_abs in candidate.parents or candidate.exists():
            path = candidate
        else:
            return path.as_posix()  # taken as relative to out_dir
    try:
        rel = os.path.relpath(path, out_abs)
    except ValueError:  # another drive on Windows
        rel = str(path)
    return Path(rel).as_posix()


#: a table column (or caption) holding measured times: "time", "fit_time", "time/path",
#: "wall_s", "cpu_s", "fit s", "time (s)", "CPU time [s]", "seconds"
_TIME_NAME = re.compile(r"(?:^|[\s_/(])(?:time|times|seconds)(?:$|[\s_/)])|\b(?:wall|cpu|fit)[_ ]s\b"
                        r"|\((?:s|sec)\)|\[s\]", re.IGNORECASE)


def _measured_times(tables):
    """Where the report's tables hold measured times: table captions and column names."""
    found = []
    for k, (caption, table) in enumerate(tables, start=1):
        name = caption if caption else f"Table {k}"
        if caption and _TIME_NAME.search(str(caption)):
            found.append(f"the table \"{name}\"")
            continue
        columns = [str(c) for c in getattr(table, "columns", []) if _TIME_NAME.search(str(c))]
        if columns:
            found.append(", ".join(f"`{c}`" for c in columns)
                         + f" of the table \"{name}\"")
    return found


def write_report(out_dir, *, title, intro="", sections=(), figures=(), tables=(), claims=None,
                 env=None, runtime=None, run_info=None, measured_times=(),
                 filename="REPORT.md", float_format="%.4g"):
    """Write ``out_dir/REPORT.md``: a Markdown record of one notebook run.

    Layout: ``# title``, intro, the free-text sections, ``## Tables``, ``## Figures``,
    ``## Claims``, ``## Runtime``, ``## Environment``. The output depends only on
    the arguments (no timestamps are added). What changes on every run, the wall-clock
    ``runtime`` and the environment's :data:`VOLATILE_ENV_KEYS` (the git commit, the
    machine's platform string and core count), goes to ``out_dir/runtime.json``
    (:data:`RUNTIME_FILE`, git-ignored) instead, so that a rerun with the same seed, on this
    machine or another, rewrites ``REPORT.md`` byte for byte; the ``## Runtime`` section
    points to that file and names the measured times among the results (``measured_times``).

    Parameters
    ----------
    out_dir : str or Path
        Output folder, created if needed.
    title : str
        Report title (the only H1).
    intro : str, default=""
        Markdown paragraph(s) under the title.
    sections : sequence of (heading, markdown) or str, default=()
        Free-text sections; a bare string is a paragraph without a heading.
    figures : sequence of path or (caption, path), default=()
        Image files, embedded as ``![caption](relative/path.png)``. Absolute paths,
        and relative paths that point into ``out_dir`` from the working directory, are
        made relative to ``out_dir``; other relative paths are taken as relative to
        ``out_dir`` already. A path without an image suffix (as given to
        :func:`mklcore.plotting.savefig`) gets ``.png``. The caption defaults to the
        file name.
    tables : sequence of DataFrame or (caption, DataFrame), default=()
        Tables rendered with :func:`markdown_table`, each under a ``###`` caption.
    claims : sequence of Claim or DataFrame, default=None
        Claims (rendered through :func:`claims_table` unless already a DataFrame).
    env : dict or False, default=None
        Environment facts; ``None`` collects :func:`environment_info`, ``False``
        leaves the section out. Keys in :data:`VOLATILE_ENV_KEYS` are written to
        ``runtime.json``, the others to the report.
    runtime : float or str, default=None
        Wall-clock time of the run, in seconds if a number; written to ``runtime.json``
        (keys ``runtime`` as text and ``runtime_s``, the seconds or ``null``).
    run_info : dict, default=None
        Further facts of this run that change between reruns without the results changing,
        e.g. ``{"cells_from_cache": 12, "cells_computed": 3}``; written to ``runtime.json``
        (JSON-serialisable values), never to the report.
    measured_times : sequence of str, default=()
        The outputs of the run that hold measured (wall-clock or CPU) times besides the
        report's tables, e.g. ``["`timings.csv`", "Figure 1", "the evidence of claims T1-T5"]``.
        The ``## Runtime`` section lists them, together with every table of ``tables`` whose
        caption or column names say they hold times (``time``, ``fit_time``, ``time/path``,
        ``wall_s``, ``cpu_s``, ``time (s)``, ``[s]`` ...), as results that a rerun from the
        cache repeats but that change whenever their cells are recomputed (on another machine,
        or from an empty cache).
    filename : str, default="REPORT.md"
        File name.
    float_format : str, default="%.4g"
        Format of floating-point table cells.

    Returns
    -------
    path : Path
        The report written (UTF-8, ``\\n`` line endings).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = [f"# {title}"]
    if intro:
        parts.append(str(intro).strip())
    for section in sections:
        if isinstance(section, tuple) and len(section) == 2:
            heading, body = section
            parts.append(f"## {heading}")
            if body:
                parts.append(str(body).strip())
        else:
            parts.append(str(section).strip())
    tables = _pairs(tables)
    if tables:
        parts.append("## Tables")
        for k, (caption, table) in enumerate(tables, start=1):
            parts.append(f"### {caption if caption else f'Table {k}'}")
            parts.append(markdown_table(table, float_format=float_format))
    figures = _pairs(figures)
    if figures:
        parts.append("## Figures")
        for caption, fig_path in figures:
            link = _figure_link(fig_path, out_dir)
            text = caption if caption else Path(link).stem
            parts.append(f"![{text}]({link})")
    if claims is not None:
        table = claims if isinstance(claims, pd.DataFrame) else claims_table(claims)
        parts.append("## Claims")
        parts.append(markdown_table(table, float_format=float_format))
    info = {} if env is False else (environment_info() if env is None else dict(env))
    volatile = {key: str(info.pop(key)) for key in VOLATILE_ENV_KEYS if key in info}
    volatile.update(run_info or {})
    if isinstance(measured_times, str):
        measured_times = [measured_times]
    timed = [*measured_times, *_measured_times(tables)]
    if runtime is not None or volatile or timed:
        parts.append("## Runtime")
    if runtime is not None or volatile:
        _write_runtime(out_dir / RUNTIME_FILE, runtime, volatile)
        parts.append(f"The wall-clock time, the git commit, the machine (platform string and "
                     f"number of cores) and the cache use of a run are written to "
                     f"`{RUNTIME_FILE}` beside this report by the run itself; it is not "
                     f"committed, since it changes on every run while this report does not.")
    if timed:
        parts.append("Measured times are results of this run: " + "; ".join(timed) + ". A "
                     "rerun that finds its cells in the cache repeats them, but they change "
                     "whenever their cells are recomputed (another machine, an empty cache, "
                     "other code or dependency versions), and so do the files that hold them "
                     "(timing verdicts can change with them).")
    if env is not False:
        parts.append("## Environment")
        parts.append(markdown_table(pd.DataFrame(
            {"item": list(info), "value": [str(v) for v in info.values()]})))
    text = "\n\n".join(parts) + "\n"
    path = out_dir / filename
    path.write_bytes(text.encode("utf-8"))
    return path


def _write_runtime(path, runtime, facts):
    """Write the per-run facts of :func:`write_report` as JSON."""
    record = {"runtime": None, "runtime_s": None, **facts}
    if _is_number(runtime):
        record["runtime_s"] = round(float(runtime), 3)
        record["runtime"] = f"{float(runtime):.1f} s ({float(runtime) / 60:.1f} min)"
    elif runtime is not None:
        record["runtime"] = str(runtime)
    path.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
