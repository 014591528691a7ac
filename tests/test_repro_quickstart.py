"""Tests of mklcore.repro.quickstart: the MKL tour's experiment and figure functions, and the
"Try it" snippets of notebooks/quickstart.ipynb."""

import ast
import math
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mklcore.datasets import add_label_noise, load_ionosphere  # noqa: E402
from mklcore.kernels import gaussian  # noqa: E402
from mklcore.lpnorm import SumKernelSVC  # noqa: E402
from mklcore.repro import quickstart as qs  # noqa: E402
from mklcore.repro.experiments import repeated_splits  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"


@pytest.fixture(scope="module")
def data():
    X, y = load_ionosphere(return_X_y=True)
    split = repeated_splits(y, n_repeats=1, test_size=0.3, seed=0)[0]
    bank = qs.ionosphere_bank(X.shape[1])[:8]  # linear, 5 widths, 2 single features: fast
    return X, y, split, bank


def test_p_label_and_effective_kernels():
    assert [qs.p_label(p) for p in (1.0, 4 / 3, 2.0, math.inf)] == [
        "p = 1", "p = 4/3", "p = 2", "p = inf"]
    assert qs.effective_kernels([0, 0, 3.0]) == 1.0
    assert qs.effective_kernels(np.ones(7)) == pytest.approx(7.0)
    assert list(qs.QUICK_P_VALUES) == [p for p in qs.P_VALUES if p in qs.QUICK_P_VALUES]


def test_lp_path_weights_spread_with_p(data):
    X, y, split, bank = data
    table, shares, gaps = qs.lp_path(X, y, split, bank, [1.0, 2.0, math.inf])
    assert list(table.p) == ["p = 1", "p = 2", "p = inf"] and table.converged.all()
    n_eff = table["effective kernels"].to_numpy()
    assert n_eff[0] < n_eff[1] < n_eff[2] == pytest.approx(len(bank))
    for w in shares.values():
        assert w.shape == (len(bank),) and w.sum() == pytest.approx(1.0)
    assert len(gaps["p = 2"]) == table.n_iter[1] and gaps["p = 2"][-1] <= 1e-5
    assert table["test accuracy"].between(0.8, 1.0).all()
    # converged means: the gap the solver stopped on is within the tol it used
    assert (table["stopping gap"] <= table["tol"]).all() and (table["tol"] == 1e-5).all()
    # Newton steps stop on the relative duality gap itself
    assert table["stopping gap"][1] == table["relative gap"][1]


def test_l1_agreement(data):
    X, y, split, bank = data
    table, weights, gaps, agreement = qs.l1_agreement(X, y, split, bank)
    assert list(table.method) == ["SimpleMKL", "SILP"] and table.converged.all()
    assert agreement["relative objective difference"] < 1e-3
    assert agreement["max |weight difference|"] < 0.05
    for w in weights.values():
        assert w.sum() == pytest.approx(1.0)
    assert set(gaps) == {"SimpleMKL", "SILP"}
    assert list(table["tol"]) == [1e-3, 1e-5]
    assert (table["stopping gap"] <= table["tol"]).all()
    # SILP stops on the better of its two certificates
    assert table["stopping gap"][1] <= table["relative gap"][1]


def test_certificate_and_show(data):
    """The columns the tour prints: the gap a fit stopped on and the tol it used; ``show``
    writes gaps in scientific notation and rounds the rest."""
    X, y, split, bank = data
    clf = SumKernelSVC(kernels=bank, normalize="trace").fit(X[split["train"]], y[split["train"]])
    row = qs.certificate(clf)
    assert set(row) == {"n_iter", "converged", "objective J", "relative gap", "stopping gap",
                        "tol"}
    assert row["converged"] and row["stopping gap"] <= row["tol"]
    table = pd.DataFrame([{"model": "a", "test accuracy": 0.93333, **row}])
    shown = qs.show(table, "model")
    assert shown.index.tolist() == ["a"] and shown.loc["a", "test accuracy"] == 0.933
    assert shown.loc["a", "tol"] == f"{row['tol']:.1e}"
    assert qs.show(table.set_index("model")).equals(shown)


def test_lmkl_demo_and_figures(data):
    demo = qs.lmkl_demo(n_samples=120, n_test=400, max_iter=5, n_grid=25)
    assert demo["f"].shape == demo["xx"].shape == (25, 25)
    assert demo["gates"].shape == (625, 3)
    np.testing.assert_allclose(demo["gates"].sum(axis=1), 1.0)
    assert set(demo["accuracy"]) == {"LMKL", "linear SVM", "Bayes"}
    assert 0 < demo["crispness"] <= 1
    fig = qs.plot_lmkl_boundary(demo)
    assert len(fig.axes) == 2  # the plot and its colour bar
    plt.close(fig)
    X, y, split, bank = data
    names = [repr(k) for k in bank]
    shares = {"p = 1": np.eye(len(bank))[1], "p = inf": np.full(len(bank), 1 / len(bank))}
    fig = qs.plot_weights_vs_p(shares, names, n_top=5)
    assert len(fig.axes[1].get_yticklabels()) == 5
    plt.close(fig)
    fig = qs.plot_gaps({"SimpleMKL": np.logspace(0, -3, 9)})
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


def test_try_it_snippets_run(data):
    """The exercises of the notebook are runnable as written (here on a smaller bank)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    text = next(c.source for c in nb.cells if c.cell_type == "markdown"
                and c.source.startswith("## Try it"))
    snippets = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(snippets) == 3
    X, y, split, bank = data
    namespace = {"qs": qs, "np": np, "pd": pd, "math": math, "gaussian": gaussian,
                 "add_label_noise": add_label_noise, "X": X, "y": y, "splits": [split],
                 "bank": bank, "C": 1.0, "SEED": 0}
    values = []
    for snippet in snippets:
        tree = ast.parse(textwrap.dedent(snippet))
        last = ast.Expression(tree.body.pop().value)  # each snippet ends with what it shows
        exec(compile(tree, "<snippet>", "exec"), namespace)
        values.append(eval(compile(last, "<snippet>", "eval"), namespace))
    assert namespace["X_junk"].shape == (X.shape[0], X.shape[1] + 1)
    # exercise 2 shows the noise kernel's share beside reference shares, for each p
    assert list(values[1].columns) == ["p = 1", "p = 2", "p = inf"]
    assert list(values[1].index) == ["noise kernel", "median of the others", "largest",
                                     "equal share 1/M"]
    assert values[1].loc["equal share 1/M"].tolist() == [round(1 / (len(bank) + 1), 4)] * 3
    assert (namespace["y_noisy"] != y).mean() == pytest.approx(0.2 * 0.7, abs=0.06)
