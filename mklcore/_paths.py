"""Locate the repository root and the vendored data folder."""

import os
from pathlib import Path

__all__ = ["project_root", "data_dir", "data_home"]


def project_root(start=None):
    """Return the repository root: the first folder upwards holding ``pyproject.toml``.

    Notebooks call this so that paths work whether the kernel was started in
    ``notebooks/`` (nbval, Jupyter) or in the repository root (papermill).

    Parameters
    ----------
    start : str or Path, default=None
        Where to start looking; the current working directory by default.

    Returns
    -------
    root : Path
    """
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "mklcore").is_dir():
            return folder
    # fall back to the checkout this package was imported from
    pkg_root = Path(__file__).resolve().parent.parent
    if (pkg_root / "pyproject.toml").is_file():
        return pkg_root
    raise FileNotFoundError(
        f"Could not find the mklcore repository root (a folder with pyproject.toml) "
        f"above {here}. Run from inside the repository or pass start=."
    )


def data_dir():
    """Folder of the vendored raw data (``<repo>/data``), or ``$MKLCORE_DATA_DIR``."""
    env = os.environ.get("MKLCORE_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "data"


def data_home(data_home=None):
    """Cache folder for downloaded datasets: ``data_home``, ``$MKLCORE_DATA_HOME`` or ``~/.cache/mklcore``."""
    if data_home is None:
        data_home = os.environ.get("MKLCORE_DATA_HOME", Path.home() / ".cache" / "mklcore")
    path = Path(data_home).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path
