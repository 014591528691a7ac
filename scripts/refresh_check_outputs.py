#!/usr/bin/env python
"""Refresh the stored outputs that nbval checks (cells tagged ``nbval-check-output``).

When a change moves numbers that a notebook's checked cells print in quick mode (a new solver
engine, say), run the notebooks in quick mode and copy the new outputs of exactly those cells
into ``notebooks/*.ipynb``; every other cell, and every execution count, is left as it is.
Review the diff before committing: it is the change the quick runs see.

Usage::

    python scripts/refresh_check_outputs.py notebooks/kloft2009_lpmkl.ipynb [...]
"""

import argparse
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TAG = "nbval-check-output"


def refresh(path, executed_dir):
    """Run ``path`` in quick mode and copy its checked cells' outputs back; return the count
    of cells whose outputs changed."""
    executed = executed_dir / path.name
    subprocess.run([sys.executable, "-m", "papermill", str(path), str(executed), "-p", "QUICK",
                    "True", "--cwd", str(ROOT), "--log-level", "WARNING"], check=True)
    new = nbformat.read(executed, as_version=4)
    by_source = {}
    for cell in new.cells:
        if cell.cell_type == "code":
            by_source.setdefault(cell.source, cell)
    nb = nbformat.read(path, as_version=4)
    changed = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or TAG not in cell.metadata.get("tags", []):
            continue
        fresh = by_source.get(cell.source)
        if fresh is None:
            raise SystemExit(f"{path}: a checked cell is missing from the executed copy")
        outputs = fresh.outputs
        for out in outputs:  # the stored copy keeps its own execution counts
            if out.get("output_type") == "execute_result":
                out["execution_count"] = cell.execution_count
        if outputs != cell.outputs:
            cell.outputs = outputs
            changed += 1
    nbformat.write(nb, path)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    executed_dir = ROOT / "build" / "refresh"
    executed_dir.mkdir(parents=True, exist_ok=True)
    for path in args.notebooks:
        print(f"{path}: {refresh(path, executed_dir)} checked cell(s) changed", flush=True)


if __name__ == "__main__":
    main()
