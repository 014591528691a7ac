"""Tests of the solver registry (mklcore.registry): one entry per solve path, and every entry
has a plot colour."""

import pytest

from mklcore.registry import INPUTS, SOLVERS, TASKS, get_solver, list_solvers

NAMES = list(SOLVERS)


def test_registry_is_complete_and_consistent():
    assert set(INPUTS) >= {info.inputs for info in SOLVERS.values()}
    assert set(TASKS) >= {info.task for info in SOLVERS.values()}
    assert list_solvers() == NAMES
    assert list_solvers(task="regression") == ["rls2", "linear_rls2", "sum_kernel_svr",
                                               "lpmkl_svr", "simplemkl_svr", "silp_svr"]
    assert get_solver("silp") is SOLVERS["silp"]
    with pytest.raises(ValueError, match="unknown solver 'foo'"):
        get_solver("foo")
    with pytest.raises(ValueError, match="fixes"):
        SOLVERS["lpmkl_newton"].run(None, None, solver="analytic")
    with pytest.raises(TypeError):
        SOLVERS["silp"].options["C"] = 1.0


def test_every_method_has_a_plot_colour():
    """Every entry carries its colour; the figures use it, one colour per method."""
    from mklcore.repro.plotting import METHOD_COLORS, method_palette

    assert set(NAMES) <= set(METHOD_COLORS)
    for name, info in SOLVERS.items():
        assert info.color.startswith("#") and len(info.color) == 7
        assert method_palette([name])[name] == METHOD_COLORS[name] == info.color
        if name.endswith("_svr"):  # an epsilon-SVR path has its classifier path's colour
            assert info.color == METHOD_COLORS[name[:-len("_svr")]]
    # the solve paths of one method share its colour; different methods differ
    assert SOLVERS["lpmkl_newton"].color == SOLVERS["lpmkl_analytic"].color
    assert len({SOLVERS[n].color for n in ("simplemkl", "silp", "lpmkl_newton", "sum_kernel",
                                           "stpmkl_amp", "mipmkl", "qmkl", "qsvm", "rls2",
                                           "lmkl")}) == 10
