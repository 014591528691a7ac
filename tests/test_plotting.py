"""Tests of mklcore.repro.plotting: deterministic savefig, palettes and the plot helpers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mklcore.repro.plotting import (  # noqa: E402
    METHOD_COLORS, method_palette, place_legend, plot_curves, plot_gap_history,
    plot_gated_boundary, plot_weights, savefig, set_theme, shorten_label,
)


@pytest.fixture
def figure():
    set_theme()
    fig, axes = plt.subplots(1, 2, figsize=(6, 3))
    plot_weights({"SimpleMKL": [0.2, 0.5, 0.3], "lp-MKL (p=2)": [0.3, 0.3, 0.4]},
                 labels=["rbf 0.1", "rbf 1", "poly 2"], ax=axes[0])
    plot_gap_history({"SimpleMKL": np.logspace(0, -4, 30), "SILP": np.logspace(0, -3, 12)},
                     ax=axes[1])
    axes[1].set_title("duality gap")
    yield fig
    plt.close(fig)


def test_savefig_writes_png_and_svg_byte_identical(figure, tmp_path, capsys):
    target = tmp_path / "sub" / "fig1_weights"
    paths = savefig(figure, target)
    assert paths == [tmp_path / "sub" / "fig1_weights.png", tmp_path / "sub" / "fig1_weights.svg"]
    first = [p.read_bytes() for p in paths]
    assert first[0][:8] == b"\x89PNG\r\n\x1a\n"
    svg = first[1].decode()
    assert "<svg" in svg and "Matplotlib v" not in svg and "<dc:date>" not in svg
    assert b"Software" not in first[0] and b"matplotlib" not in first[0].lower()
    again = savefig(figure, target)
    assert [p.read_bytes() for p in again] == first
    # the suffix is optional, and other dots are kept
    assert savefig(figure, str(target) + ".png", formats=("svg",)) == [paths[1]]
    assert paths[1].read_bytes() == first[1]
    dotted = savefig(figure, tmp_path / "fig_C=0.1", formats=["png"])
    assert dotted == [tmp_path / "fig_C=0.1.png"]
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_savefig_same_bytes_for_a_redrawn_figure(tmp_path):
    def draw():
        set_theme()
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([1, 2, 3], [3, 1, 2], marker="o", label="x")
        ax.legend()
        return fig

    fig_a, fig_b = draw(), draw()
    a = savefig(fig_a, tmp_path / "a")
    b = savefig(fig_b, tmp_path / "b")
    plt.close(fig_a)
    plt.close(fig_b)
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes()


def test_savefig_rejects_unknown_format(figure, tmp_path):
    with pytest.raises(ValueError, match="formats"):
        savefig(figure, tmp_path / "x", formats=("bmp",))


def test_method_palette_is_stable():
    methods = ["lp-MKL (p=2)", "SimpleMKL", "my new method", "uniform"]
    pal = method_palette(methods)
    assert list(pal) == methods
    assert pal == method_palette(methods)  # deterministic
    assert pal["SimpleMKL"] == METHOD_COLORS["simplemkl"]
    assert pal["uniform"] == METHOD_COLORS["summkl"]  # alias
    assert method_palette(["SimpleMKLClassifier"])["SimpleMKLClassifier"] == pal["SimpleMKL"]
    assert len(set(pal.values())) == len(methods)  # distinct within one figure
    both = method_palette(["SimpleMKL", "simplemkl"])
    assert len(set(both.values())) == 2


def test_plot_curves_aggregates_tidy_frame():
    df = pd.DataFrame({"C": [1, 1, 10, 10] * 2, "method": ["a"] * 4 + ["b"] * 4,
                       "acc": [0.8, 0.9, 0.7, 0.9, 0.6, 0.6, 0.5, 0.7]})
    fig, ax = plt.subplots()
    plot_curves(df, "C", "acc", "method", err="se", logx=True, ax=ax)
    assert ax.get_xscale() == "log"
    lines = ax.get_lines()
    np.testing.assert_allclose(lines[0].get_ydata(), [0.85, 0.8])
    assert ax.get_legend() is not None
    plt.close(fig)
    with pytest.raises(ValueError, match="err"):
        plot_curves(df, "C", "acc", "method", err="iqr")


def test_plot_gap_history_accepts_history_dicts():
    fig, ax = plt.subplots()
    plot_gap_history({"m": {"gap": np.array([1.0, 0.1, 0.0])}}, ax=ax)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert np.isnan(ax.get_lines()[0].get_ydata()[-1])  # zero gap not drawn
    plt.close(fig)


def test_plot_weights_horizontal_for_many_or_long_names():
    names = [f"gaussian(sigma=1.0, columns=[{j}])" for j in range(12)]
    fig, ax = plt.subplots()
    plot_weights(np.linspace(0, 1, 12), labels=names, ax=ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[3] == "gaussian 1.0 [3]"  # shortened, on the y axis: no overlap
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # first kernel on top
    assert ax.get_xlabel() == "weight"
    plt.close(fig)
    fig, ax = plt.subplots()
    plot_weights({"a": [1, 2], "b": [2, 1]}, labels=["k1", "k2"], ax=ax, legend="outside")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["k1", "k2"]  # short: vertical
    assert ax.get_legend() is not None
    plt.close(fig)
    with pytest.raises(ValueError, match="orient"):
        plot_weights([1.0], orient="x")


def test_shorten_label():
    assert shorten_label("linear()") == "linear()"
    assert shorten_label("gaussian(sigma=1.0, columns=[12])") == "gaussian 1.0 [12]"
    assert shorten_label("x" * 30, max_len=10) == "x" * 9 + "\u2026"


@pytest.mark.parametrize("where", ["best", "outside", "below", None])
def test_place_legend(where):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], label="a")
    ax.legend()
    leg = place_legend(ax, where)
    assert (ax.get_legend() is None) == (where is None) and (leg is None) == (where is None)
    plt.close(fig)
    with pytest.raises(ValueError, match="where"):
        place_legend(ax, "left")


def test_plot_gap_history_legend_outside_does_not_cover_the_axes(tmp_path):
    set_theme()
    fig, ax = plt.subplots(figsize=(5, 3))
    plot_gap_history({"SimpleMKL": np.logspace(0, -4, 30), "SILP": np.logspace(0, -3, 12)},
                     ax=ax, legend="outside")
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    assert box.x0 >= ax.get_window_extent().x1  # entirely to the right of the axes
    plt.close(fig)


@pytest.mark.parametrize("n_kernels", [2, 3])
def test_plot_gated_boundary_draws_a_colorbar(n_kernels):
    xx, yy = np.meshgrid(np.linspace(-1, 1, 20), np.linspace(-1, 1, 15))
    rng = np.random.default_rng(0)
    gates = rng.dirichlet(np.ones(n_kernels), size=xx.size)
    fig, ax = plt.subplots()
    ax, cbar = plot_gated_boundary(xx, yy, xx + yy, gates, X=rng.normal(size=(10, 2)),
                                   y=np.r_[[1] * 5, [-1] * 5], ax=ax)
    assert len(fig.axes) == 2 and cbar.ax in fig.axes
    if n_kernels == 2:
        assert cbar.vmin == 0.0 and cbar.vmax == 1.0
    else:
        assert [t.get_text() for t in cbar.ax.get_yticklabels()] == ["kernel 1", "kernel 2",
                                                                     "kernel 3"]
    plt.close(fig)
    with pytest.raises(ValueError, match="grid points"):
        plot_gated_boundary(xx, yy, xx, gates[:5])
