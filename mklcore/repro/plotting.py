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

from ..registry import SOLVERS

__all__ = [
    "HASHSALT", "METHOD_COLORS", "set_theme", "method_palette", "savefig",
    "place_legend", "shorten_label", "plot_weights", "plot_curves", "plot_gap_history",
    "plot_gated_boundary",
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

#: fixed colour of each method: the registry's colour of every solve path
#: (:attr:`mklcore.registry.SolverInfo.color`) under its name, plus the family names
#: ``"lpmkl"``, ``"stpmkl"``, ``"summkl"`` (the unweighted sum kernel) and ``"svm"``; looked up
#: after normalisation, see ``method_palette``
METHOD_COLORS = {
    **{name: info.color for name, info in SOLVERS.items()},
    "lpmkl": SOLVERS["lpmkl_newton"].color,
    "stpmkl": SOLVERS["stpmkl_amp"].color,
    "summkl": SOLVERS["sum_kernel"].color,
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


def place_legend(ax, where="best", **kwargs):
    """Draw the legend of an axes where it does not hide the data.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes whose labelled artists go into the legend.
    where : {"best", "outside", "below"} or None, default="best"
        ``"best"``: inside the axes at matplotlib's least crowded spot; ``"outside"``: to
        the right of the axes, top-aligned; ``"below"``: under the x-axis label, in up to
        four columns; ``None``: no legend (an existing one is removed).
    **kwargs
        Extra arguments of ``Axes.legend`` (e.g. ``title``, ``fontsize``).

    Returns
    -------
    legend : matplotlib.legend.Legend or None
    """
    if where is None:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        return None
    if where == "best":
        return ax.legend(loc="best", **kwargs)
    if where == "outside":
        return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                         **kwargs)
    if where == "below":
        n = len(ax.get_legend_handles_labels()[1])
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), borderaxespad=0.0,
                         ncol=max(1, min(4, n)), **kwargs)
    raise ValueError(f"where must be 'best', 'outside', 'below' or None; got {where!r}.")


def shorten_label(label, max_len=24):
    """Shorten a tick label to at most ``max_len`` characters.

    Kernel names such as ``"gaussian(sigma=1.0, columns=[12])"`` lose the function name's
    parentheses and keyword names first (``"gaussian 1.0 [12]"``), and are cut with an
    ellipsis only if still too long.

    Parameters
    ----------
    label : object
        The label (converted with ``str``).
    max_len : int, default=24
        Longest label kept.

    Returns
    -------
    short : str
    """
    text = str(label)
    if len(text) <= max_len:
        return text
    m = re.fullmatch(r"\s*(\w+)\((.*)\)\s*", text)
    if m:
        args = re.sub(r"\b\w+=", "", m.group(2)).replace(",", "")
        text = f"{m.group(1)} {' '.join(args.split())}".strip()
    if len(text) > max_len:
        text = text[: max_len - 1] + "\u2026"
    return text


def plot_weights(weights, labels=None, ax=None, *, palette=None, orient="auto",
                 max_label_len=24, legend="best"):
    """Bar chart of kernel weights.

    Parameters
    ----------
    weights : array-like of shape (n_kernels,) or dict of {str: array-like}
        Weights of one model, or of several methods (grouped bars, one colour per
        method from :func:`method_palette`).
    labels : sequence of str, default=None
        Kernel names; kernel indices by default. Long names are shortened with
        :func:`shorten_label`.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure by default.
    palette : dict, default=None
        ``{method: colour}`` for the dict form; :func:`method_palette` by default.
    orient : {"auto", "v", "h"}, default="auto"
        Vertical bars (kernels on the x axis) or horizontal bars (kernels on the y axis,
        read top to bottom, names never overlap). ``"auto"``: horizontal when there are
        more than 8 kernels or a label is longer than 10 characters.
    max_label_len : int, default=24
        Longest kernel name drawn (see :func:`shorten_label`).
    legend : {"best", "outside", "below"} or None, default="best"
        Where the legend of the dict form goes (:func:`place_legend`).

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    if orient not in ("auto", "v", "h"):
        raise ValueError(f"orient must be 'auto', 'v' or 'h'; got {orient!r}.")
    ax = _get_ax(ax)
    series = weights if isinstance(weights, dict) else {None: weights}
    series = {k: np.asarray(v, dtype=float).ravel() for k, v in series.items()}
    sizes = {v.size for v in series.values()}
    if len(sizes) != 1:
        raise ValueError(f"All weight vectors must have the same length; got {sorted(sizes)}.")
    n = sizes.pop()
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels has {len(labels)} entries for {n} kernels.")
    names = None if labels is None else [shorten_label(lab, max_label_len) for lab in labels]
    if orient == "auto":
        long_names = names is not None and max(map(len, names), default=0) > 10
        orient = "h" if n > 8 or long_names else "v"
    horizontal = orient == "h"
    bar = ax.barh if horizontal else ax.bar
    x = np.arange(n)
    if None in series:
        bar(x, series[None], color=_COLORBLIND[0])
    else:
        colours = palette or method_palette(series)
        width = 0.8 / len(series)
        for k, (name, w) in enumerate(series.items()):
            # the third argument is the bar width (vertical) or height (horizontal)
            bar(x - 0.4 + width * (k + 0.5), w, width, label=str(name), color=colours[name])
        place_legend(ax, legend)
    set_ticks, set_labels = ((ax.set_yticks, ax.set_yticklabels) if horizontal
                             else (ax.set_xticks, ax.set_xticklabels))
    set_ticks(x)
    if names is not None:
        set_labels(names)
    if horizontal:
        ax.set_ylim(n - 0.5, -0.5)  # first kernel on top
        ax.set_ylabel("kernel")
        ax.set_xlabel("weight")
    else:
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
                palette=None, marker="o", legend="best"):
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
    legend : {"best", "outside", "below"} or None, default="best"
        Where the legend goes when ``hue`` is given (:func:`place_legend`).

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
        place_legend(ax, legend, title=hue)
    return ax


def plot_gap_history(histories, ax=None, *, palette=None, legend="best"):
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
    legend : {"best", "outside", "below"} or None, default="best"
        Where the legend goes (:func:`place_legend`); ``"outside"`` never hides a curve.

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
        place_legend(ax, legend)
    return ax


def plot_gated_boundary(xx, yy, decision, gates, *, X=None, y=None, kernel_names=None,
                        ax=None, cmap="viridis"):
    r"""Decision boundary of a localized MKL model over its gating, with a colour bar.

    Two kernels: the gate :math:`\eta_2(x)` of the second kernel is drawn as a continuous
    map (0: all weight on kernel 1, 1: all on kernel 2). More kernels: each point gets
    the colour of its dominant kernel :math:`\arg\max_m \eta_m(x)`, the colour bar naming
    the kernels. The zero level of the decision function is drawn in black, and the
    training points (if given) as blue circles (positive class) and orange crosses.

    Parameters
    ----------
    xx, yy : ndarray of shape (n_rows, n_cols)
        Grid coordinates (``numpy.meshgrid``).
    decision : ndarray of shape (n_rows, n_cols) or (n_rows * n_cols,)
        Decision values on the grid.
    gates : ndarray of shape (n_rows * n_cols, n_kernels)
        Gating outputs :math:`\eta_m` on the grid points in ``ravel`` order.
    X : ndarray of shape (n_samples, 2), default=None
        Training points to draw.
    y : array-like of shape (n_samples,), default=None
        Their labels; the larger of the two values is the positive class.
    kernel_names : sequence of str, default=None
        Names on the colour bar; ``"kernel 1"``, ... by default.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure by default.
    cmap : str, default="viridis"
        Colour map of the gating.

    Returns
    -------
    ax : matplotlib.axes.Axes
    colorbar : matplotlib.colorbar.Colorbar
    """
    import matplotlib.pyplot as plt

    ax = _get_ax(ax)
    gates = np.asarray(gates, dtype=float)
    n_kernels = gates.shape[1]
    if gates.shape[0] != xx.size:
        raise ValueError(f"gates has {gates.shape[0]} rows for {xx.size} grid points.")
    names = list(kernel_names) if kernel_names is not None else [
        f"kernel {m + 1}" for m in range(n_kernels)]
    if len(names) != n_kernels:
        raise ValueError(f"kernel_names has {len(names)} entries for {n_kernels} kernels.")
    if n_kernels == 2:
        mesh = ax.pcolormesh(xx, yy, gates[:, 1].reshape(xx.shape), cmap=cmap, vmin=0.0,
                             vmax=1.0, shading="auto", alpha=0.85, rasterized=True)
        colorbar = ax.figure.colorbar(mesh, ax=ax, label=f"gate of {names[1]}")
    else:
        colours = plt.get_cmap(cmap, n_kernels)
        region = gates.argmax(axis=1).reshape(xx.shape)
        mesh = ax.pcolormesh(xx, yy, region, cmap=colours, vmin=-0.5, vmax=n_kernels - 0.5,
                             shading="auto", alpha=0.45, rasterized=True)
        colorbar = ax.figure.colorbar(mesh, ax=ax, ticks=np.arange(n_kernels),
                                      label="dominant kernel (largest gate)")
        colorbar.ax.set_yticklabels(names)
    if X is not None and y is not None:
        X, y = np.asarray(X), np.asarray(y)
        pos = y == np.max(y)
        ax.scatter(*X[pos].T, s=10, c="#0173b2", marker="o", lw=0, label=f"class {np.max(y)}")
        ax.scatter(*X[~pos].T, s=12, c="#d55e00", marker="x", lw=0.8, label=f"class {np.min(y)}")
    ax.contour(xx, yy, np.asarray(decision, dtype=float).reshape(xx.shape), levels=[0.0],
               colors="k", linewidths=1.6)
    ax.set_xlim(xx.min(), xx.max())
    ax.set_ylim(yy.min(), yy.max())
    ax.grid(False)
    return ax, colorbar
