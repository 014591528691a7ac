"""Figure style, per-method colours and deterministic ``savefig`` for the notebooks.

Call :func:`set_theme` once at the top of a notebook, draw with matplotlib/seaborn or
the small helpers here, and save with :func:`savefig`, which writes PNG and SVG files
that are byte-identical from one run to the next (no dates or version stamps, fixed
``svg.hashsalt``), so that committed figures only change when their content does.
"""

import hashlib
import io
import re
from pathlib import Path

import numpy as np

__all__ = [
    "HASHSALT", "METHOD_COLORS", "set_theme", "method_palette", "savefig",
    "plot_weights", "plot_curves", "plot_gap_history",
]

#: fixed salt for the ids matplotlib writes into SVG files (random otherwise)
HASHSALT = "mklcore"

#: dpi of saved PNGs (``savefig.dpi``) and of figures shown inline (``figure.dpi``)
SAVEFIG_DPI = 150
FIGURE_DPI = 100

# seaborn's "colorblind" palette (Waskom), copied so that colours do not depend on
# the seaborn version, followed by its "dark" variant for overflow.
_COLORBLIND = [
    "#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc",
    "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9",
]
_OVERFLOW = [
    "#023eff", "#ff7c00", "#1ac938", "#e8000b", "#8b2be2",
    "#9f4800", "#f14cc1", "#a3a3a3", "#ffc400", "#00d7ff",
]

#: fixed colour of each method, keyed by the names of :data:`mklcore.registry.SOLVERS` (the
#: solve paths of one method share its colour) plus the family names ``"summkl"`` (the
#: unweighted sum kernel) and ``"svm"``; looked up after normalisation, see ``method_palette``
METHOD_COLORS = {
    "simplemkl": _COLORBLIND[0],
    "lpmkl": _COLORBLIND[1],
    "lpmkl_newton": _COLORBLIND[1],
    "lpmkl_cutting_plane": _COLORBLIND[1],
    "lpmkl_analytic": _COLORBLIND[1],
    "silp": _COLORBLIND[2],
    "summkl": _COLORBLIND[7],
    "sum_kernel": _COLORBLIND[7],
    "stpmkl": _COLORBLIND[3],
    "stpmkl_amp": _COLORBLIND[3],
    "stpmkl_vi": _COLORBLIND[3],
    "mipmkl": _COLORBLIND[4],
    "qmkl": _COLORBLIND[5],
    "qsvm": _COLORBLIND[6],
    "rls2": _COLORBLIND[8],
    "linear_rls2": _COLORBLIND[8],
    "lmkl": _COLORBLIND[9],
    "svm": "#3d3d3d",
}

# other spellings of the same methods
_ALIASES = {
    "sumkernelsvc": "summkl", "sumkernel": "summkl", "sumkernelsvm": "summkl",
    "uniform": "summkl", "uniformmkl": "summkl", "unweightedsum": "summkl",
    "linfmkl": "summkl", "linftymkl": "summkl",
    "lpmklclassifier": "lpmkl", "lpnormmkl": "lpmkl", "lpnorm": "lpmkl",
    "simplemklclassifier": "simplemkl",
    "silpmkl": "silp", "silpmklclassifier": "silp", "l1mkl": "silp", "sipmkl": "silp",
    "stpmklclassifier": "stpmkl", "mipmklclassifier": "mipmkl",
    "qmklclassifier": "qmkl", "qsvmclassifier": "qsvm",
    "rls2regressor": "rls2", "rls2classifier": "rls2",
    "linearrls2": "rls2", "linearrls2regressor": "rls2", "linearrls2classifier": "rls2",
    "lmklclassifier": "lmkl", "localizedmkl": "lmkl", "localisedmkl": "lmkl",
    "svc": "svm", "singlekernelsvm": "svm", "bestsinglekernel": "svm",
}


def _normalise(name):
    key = re.sub(r"[^0-9a-z]", "", str(name).lower())
    return _ALIASES.get(key, key)


# METHOD_COLORS under normalised keys ("lpmkl_newton" -> "lpmklnewton"); a key that is an
# alias ("sum_kernel" -> "summkl") keeps its alias's colour
_COLORS = {re.sub(r"[^0-9a-z]", "", k): v for k, v in METHOD_COLORS.items()}


def set_theme(**overrides):
    """Set the figure style used by every mklcore notebook.

    seaborn ``context="notebook"``, ``style="whitegrid"``, the colourblind palette,
    the DejaVu Sans font shipped with matplotlib (so text looks the same on every
    machine), fixed dpi (``figure.dpi`` 100, ``savefig.dpi`` 150) and a fixed
    ``svg.hashsalt``.

    Parameters
    ----------
    **overrides
        Extra matplotlib rcParams, applied last.

    Returns
    -------
    None
    """
    import seaborn as sns

    rc = {
        "figure.dpi": FIGURE_DPI,
        "savefig.dpi": SAVEFIG_DPI,
        "svg.hashsalt": HASHSALT,
        "svg.fonttype": "path",
        "figure.constrained_layout.use": True,
        "axes.titlesize": "medium",
    }
    rc.update(overrides)
    sns.set_theme(context="notebook", style="whitegrid", palette=_COLORBLIND,
                  font="DejaVu Sans", rc=rc)


def method_palette(methods):
    """Colours for methods, the same for one method in every figure.

    Known method families (``METHOD_COLORS``, matched after lower-casing and
    dropping punctuation, with common aliases such as ``"SimpleMKLClassifier"`` or
    ``"uniform"``) get their fixed colour. Other names get a colour chosen from a
    hash of the name (stable across runs and machines); a name whose colour is
    already taken in this call moves to the next free one.

    Parameters
    ----------
    methods : iterable of str
        Method names as they appear in the figure's legend.

    Returns
    -------
    palette : dict
        ``{method: hex colour}``, usable as seaborn's ``palette=``.
    """
    methods = list(dict.fromkeys(methods))
    pool = _COLORBLIND + _OVERFLOW
    palette, used = {}, set()
    pending = []
    for m in methods:
        colour = _COLORS.get(_normalise(m))
        if colour is not None and colour not in used:
            palette[m] = colour
            used.add(colour)
        else:
            pending.append(m)
    for m in pending:
        start = int(hashlib.sha256(_normalise(m).encode()).hexdigest(), 16) % len(pool)
        for k in range(len(pool)):
            colour = pool[(start + k) % len(pool)]
            if colour not in used:
                break
        palette[m] = colour
        used.add(colour)
    return {m: palette[m] for m in methods}


_FORMATS = ("png", "svg", "pdf")
_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}


def savefig(fig, path, *, formats=("png", "svg"), dpi=None, bbox_inches="tight"):
    """Save a figure as PNG and SVG (and optionally PDF), byte-identically across runs.

    Dates and software/version stamps are removed from the metadata and
    ``svg.hashsalt`` is fixed, so saving the same figure twice gives identical files.
    Parent folders are created. Nothing is printed.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or Path
        Output path *without* suffix, e.g. ``out_dir / "fig3_weights_vs_C"``; a
        suffix ``.png``, ``.svg`` or ``.pdf`` is dropped, any other dot is kept
        (``"fig_C=0.1"`` gives ``fig_C=0.1.png``).
    formats : sequence of {"png", "svg", "pdf"}, default=("png", "svg")
        Files to write.
    dpi : float, default=None
        Resolution of the PNG; ``rcParams["savefig.dpi"]`` by default (150 after
        :func:`set_theme`).
    bbox_inches : str or None, default="tight"
        Passed to ``Figure.savefig``.

    Returns
    -------
    paths : list of Path
        The files written, in the order of ``formats``.

    Raises
    ------
    ValueError
        If ``formats`` is empty or names an unsupported format.
    """
    import matplotlib as mpl

    if isinstance(formats, str):
        formats = (formats,)
    formats = [f.lower().lstrip(".") for f in formats]
    if not formats or any(f not in _FORMATS for f in formats):
        raise ValueError(f"formats must be a non-empty subset of {_FORMATS}; got {formats!r}.")
    path = Path(path)
    if path.suffix.lower().lstrip(".") in _FORMATS:
        path = path.with_suffix("")
    path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with mpl.rc_context({"svg.hashsalt": HASHSALT}):
        for fmt in formats:
            out = path.with_name(f"{path.name}.{fmt}")
            kwargs = {"format": fmt, "metadata": _METADATA[fmt], "bbox_inches": bbox_inches}
            if dpi is not None:
                kwargs["dpi"] = dpi
            if fmt == "svg":
                buffer = io.BytesIO()
                fig.savefig(buffer, **kwargs)
                out.write_bytes(_renumber_svg_ids(buffer.getvalue().decode("utf-8"))
                                .encode("utf-8"))
            else:
                fig.savefig(out, **kwargs)
            written.append(out)
    return written


# ids that matplotlib's SVG backend derives from a salted hash of clip rectangles,
# markers and hatches (``RendererSVG._make_id``): one letter and 10 hex digits
_SVG_HASH_ID = re.compile(r'id="([a-z][0-9a-f]{10})"')


def _renumber_svg_ids(text):
    """Replace matplotlib's hashed SVG ids by counters in order of appearance.

    The hashes cover full-precision floats of clip rectangles (and, for clip paths,
    ``id()`` of a Python object), so they can change between runs or between two saves
    of the same figure (constrained layout moves axes by ~1e-13) while everything
    drawn is identical. Counters keep the file stable.
    """
    mapping = {}
    for match in _SVG_HASH_ID.finditer(text):
        old = match.group(1)
        if old not in mapping:
            mapping[old] = f"{old[0]}{len(mapping) + 1:010d}"
    if not mapping:
        return text
    pattern = re.compile(r'(?<=["#])(' + "|".join(map(re.escape, mapping)) + r')(?=["\)])')
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def _get_ax(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def plot_weights(weights, labels=None, ax=None, *, palette=None):
    """Bar chart of kernel weights.

    Parameters
    ----------
    weights : array-like of shape (n_kernels,) or dict of {str: array-like}
        Weights of one model, or of several methods (grouped bars, one colour per
        method from :func:`method_palette`).
    labels : sequence of str, default=None
        Kernel names for the x axis; kernel indices by default.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure by default.
    palette : dict, default=None
        ``{method: colour}`` for the dict form; :func:`method_palette` by default.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    ax = _get_ax(ax)
    series = weights if isinstance(weights, dict) else {None: weights}
    series = {k: np.asarray(v, dtype=float).ravel() for k, v in series.items()}
    sizes = {v.size for v in series.values()}
    if len(sizes) != 1:
        raise ValueError(f"All weight vectors must have the same length; got {sorted(sizes)}.")
    n = sizes.pop()
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels has {len(labels)} entries for {n} kernels.")
    x = np.arange(n)
    if None in series:
        ax.bar(x, series[None], color=_COLORBLIND[0])
    else:
        colours = palette or method_palette(series)
        width = 0.8 / len(series)
        for k, (name, w) in enumerate(series.items()):
            ax.bar(x - 0.4 + width * (k + 0.5), w, width=width, label=str(name),
                   color=colours[name])
        ax.legend()
    ax.set_xticks(x)
    if labels is not None:
        ax.set_xticklabels([str(lab) for lab in labels], rotation=90 if n > 8 else 0)
    ax.set_xlabel("kernel")
    ax.set_ylabel("weight")
    return ax


def _spread(values, err):
    values = values[~np.isnan(values)]
    k = values.size
    if err is None or k < 2:
        return float("nan")
    sd = float(values.std(ddof=1))
    if err == "sd":
        return sd
    se = sd / np.sqrt(k)
    if err == "se":
        return se
    from scipy import stats

    return float(stats.t.ppf(0.975, k - 1)) * se  # "ci95"


def plot_curves(df, x, y, hue=None, *, err=None, logx=False, logy=False, ax=None,
                palette=None, marker="o"):
    """Mean curves with error bars from a tidy table.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy table, e.g. from :func:`mklcore.experiments.run` (several rows per
        ``(hue, x)``, averaged here) or from :func:`mklcore.experiments.summarize`.
    x, y : str
        Columns on the horizontal and vertical axis.
    hue : str, default=None
        Column with one curve per value (e.g. ``"method"``), coloured with
        :func:`method_palette`.
    err : {"se", "sd", "ci95"} or str, default=None
        Error bars: standard error, standard deviation or t 95 % interval of the
        rows of each ``(hue, x)``; or the name of a column holding precomputed
        half-widths (then ``y`` is used as is). ``None``: no error bars.
    logx, logy : bool, default=False
        Logarithmic axes.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure by default.
    palette : dict, default=None
        ``{hue value: colour}``; :func:`method_palette` by default.
    marker : str, default="o"
        Marker of the data points.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    for col in (x, y) + ((hue,) if hue is not None else ()):
        if col not in df.columns:
            raise ValueError(f"Column {col!r} is not in the table; it has {list(df.columns)}.")
    precomputed = err is not None and err in df.columns
    if err is not None and not precomputed and err not in ("se", "sd", "ci95"):
        raise ValueError(f"err must be 'se', 'sd', 'ci95', a column name or None; got {err!r}.")
    ax = _get_ax(ax)
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=False))
    colours = palette or (method_palette([g for g, _ in groups]) if hue is not None else {})
    for name, g in groups:
        if precomputed:
            xs = g[x].to_numpy()
            means = g[y].to_numpy(dtype=float)
            errs = g[err].to_numpy(dtype=float)
            order = np.argsort(xs, kind="stable")
            xs, means, errs = xs[order], means[order], errs[order]
        else:
            xs, means, errs = [], [], []
            for xv, gx in g.groupby(x, sort=True):
                vals = gx[y].to_numpy(dtype=float)
                xs.append(xv)
                means.append(np.nanmean(vals) if np.any(~np.isnan(vals)) else np.nan)
                errs.append(_spread(vals, err))
            xs, means, errs = np.asarray(xs), np.asarray(means), np.asarray(errs)
        kwargs = {"marker": marker, "label": None if name is None else str(name)}
        if name is not None:
            kwargs["color"] = colours[name]
        if err is not None:
            ax.errorbar(xs, means, yerr=errs, capsize=3, **kwargs)
        else:
            ax.plot(xs, means, **kwargs)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if hue is not None:
        ax.legend(title=hue)
    return ax


def plot_gap_history(histories, ax=None, *, palette=None):
    """Log-log plot of the duality gap against the iteration number.

    Parameters
    ----------
    histories : dict of {str: array-like or dict or MKLResult}
        Per method, the gap at every outer iteration, or a ``history`` dict / an
        ``MKLResult`` (its ``history["gap"]`` is used). Non-positive and NaN gaps
        are not drawn (they have no logarithm).
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure by default.
    palette : dict, default=None
        ``{method: colour}``; :func:`method_palette` by default.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    ax = _get_ax(ax)
    colours = palette or method_palette(histories)
    for name, h in histories.items():
        if isinstance(h, dict):
            h = h["history"]["gap"] if "history" in h else h["gap"]
        gap = np.asarray(h, dtype=float).ravel()
        gap = np.where(gap > 0, gap, np.nan)
        ax.plot(np.arange(1, gap.size + 1), gap, label=str(name), color=colours[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("duality gap")
    if histories:
        ax.legend()
    return ax
