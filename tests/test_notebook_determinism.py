"""The quickstart notebook in quick mode is deterministic: two runs, each in a fresh kernel.

Its own module so that ``make test``'s two processes (``--dist loadscope`` keeps a module in
one process) can run it beside the other slow notebook tests.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
KERNEL_NAME = "python3"
#: per-cell limit; a quick-mode cell needs a few seconds
CELL_TIMEOUT = 300


@pytest.mark.slow
def test_quickstart_quick_mode_is_deterministic(tmp_path):
    """Two quick runs of the quickstart write byte-identical ``summary.csv`` files."""
    import papermill

    source = NOTEBOOK_DIR / "quickstart.ipynb"
    outputs = []
    for run in ("run1", "run2"):
        out_dir = tmp_path / run
        papermill.execute_notebook(
            str(source), str(tmp_path / f"{run}.ipynb"), kernel_name=KERNEL_NAME, cwd=str(ROOT),
            parameters={"QUICK": True, "QUICK_OUT_DIR": str(out_dir)}, progress_bar=False,
            execution_timeout=CELL_TIMEOUT)
        assert (out_dir / "summary.csv").is_file() and (out_dir / "REPORT.md").is_file()
        outputs.append((out_dir / "summary.csv").read_bytes())
    assert outputs[0] == outputs[1], "summary.csv differs between two runs with the same SEED"
