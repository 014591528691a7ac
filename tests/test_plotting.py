"""Tests of mklcore.repro.plotting: deterministic savefig, palettes and the plot helpers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mklcore.repro.plotting import (  # noqa: E402
    METHOD_COLORS, method_palette, plot_curves, plot_gap_history, plot_weights, savefig,
    set_theme,
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
