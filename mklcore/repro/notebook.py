"""Small helpers for the paper notebooks: parameter checks and output folders.

Every notebook of ``notebooks/`` has a cell tagged ``parameters`` (literals only, so that
``papermill --help-notebook`` documents them) and, in the next cell, derived settings that
start with::

    check_params(QUICK=QUICK, SEED=SEED, OUT_DIR=OUT_DIR, QUICK_OUT_DIR=QUICK_OUT_DIR)
    out_dir = setup_run("quickstart", QUICK, OUT_DIR, QUICK_OUT_DIR)

papermill passes ``-p QUICK false`` as the *string* ``"false"`` (only ``True``/``False`` are
converted to booleans), which is truthy; without a check the notebook would silently run in
quick mode. :func:`check_params` turns such values into a clear ``ValueError``.

A full run never writes into the committed ``figures/<paper_id>/`` directly: :func:`setup_run`
returns the staging folder ``build/staging/<paper_id>/``, and :func:`publish_run` moves its
files into ``figures/<paper_id>/`` once the whole notebook, checks included, has run without
error (``scripts/run_notebooks.py --full`` does this; after a full run by hand in Jupyter, call
``publish_run("<paper_id>")`` yourself). A run that fails leaves the committed outputs as
they were.
"""

import numbers
import os
import shutil
from pathlib import Path


__all__ = ["check_params", "setup_run", "project_root", "staging_dir", "publish_run",
           "markdown_section", "notebook_functions"]


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
    pkg_root = Path(__file__).resolve().parents[2]
    if (pkg_root / "pyproject.toml").is_file():
        return pkg_root
    raise FileNotFoundError(
        f"Could not find the mklcore repository root (a folder with pyproject.toml) "
        f"above {here}. Run from inside the repository or pass start=."
    )


_LITERAL_TYPES = (bool, int, float, str, type(None), list, tuple, dict)


def _describe(value):
    return f"{value!r} ({type(value).__name__})"


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _rule(name):
    """Return ``(predicate, allowed-in-words)`` for a parameter known by its name, or None."""
    if name == "QUICK":
        return (lambda v: isinstance(v, bool),
                "True or False (a bool; on the papermill command line write "
                "-p QUICK False with a capital F, or use scripts/run_notebooks.py --full)")
    if name == "SEED":
        return (lambda v: _is_int(v) and 0 <= v < 2**32,
                "an int in [0, 2**32)")
    if name.endswith(("_DIR", "_PATH", "_FILE")):
        return (lambda v: isinstance(v, (str, os.PathLike)) and str(v).strip() != "",
                "a non-empty path string (relative to the repository root, or absolute)")
    if name.startswith("N_") or name.endswith(("_REPEATS", "_FOLDS", "_ITER")):
        return (lambda v: _is_int(v) and v >= 1, "an int >= 1")
    return None


def check_params(*, choices=None, types=None, **params):
    """Validate notebook parameters after papermill has injected its overrides.

    Rules by name: ``QUICK`` must be a bool; ``SEED`` an int in [0, 2**32); names ending in
    ``_DIR``/``_PATH``/``_FILE`` non-empty path strings; ``N_*`` and names ending in
    ``_REPEATS``/``_FOLDS``/``_ITER`` ints >= 1. Other parameters can be constrained with
    ``choices`` (allowed values) or ``types`` (allowed type); without either they must be
    plain literals (bool, int, float, str, None, list, tuple, dict).

    Parameters
    ----------
    choices : dict of {str: iterable}, default=None
        Allowed values of some parameters, e.g. ``{"SOLVER": ("newton", "cutting_plane")}``.
    types : dict of {str: type or tuple of types}, default=None
        Allowed types of some parameters, e.g. ``{"C": float}``; ``float`` also accepts ints
        (papermill turns ``-p C 1`` into an int), never bools.
    **params
        The parameters, passed as ``NAME=NAME``.

    Returns
    -------
    params : dict
        The validated parameters, sorted by name (handy to print in the notebook).

    Raises
    ------
    ValueError
        ``Unknown value for notebook parameter <NAME>: <value> (<type>). Allowed: <...>.``
        naming every offending parameter.

    Examples
    --------
    >>> check_params(QUICK=True, SEED=0)
    {'QUICK': True, 'SEED': 0}
    >>> check_params(QUICK="false", SEED=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Unknown value for notebook parameter QUICK: 'false' (str). Allowed: True or False ...
    """
    choices = dict(choices or {})
    types = dict(types or {})
    for name in list(choices) + list(types):
        if name not in params:
            raise TypeError(f"check_params got a rule for {name!r}, which was not passed as "
                            f"a parameter; pass {name}={name}.")
    errors = []
    for name in sorted(params):
        value = params[name]
        if name in choices:
            allowed = list(choices[name])
            ok = any(value == a and type(value) is type(a) for a in allowed)
            words = "one of " + ", ".join(repr(a) for a in allowed)
        elif name in types:
            wanted = types[name] if isinstance(types[name], tuple) else (types[name],)
            if float in wanted:
                ok = _is_real(value) or isinstance(value, wanted)
            elif int in wanted and bool not in wanted:
                ok = _is_int(value) or (isinstance(value, wanted) and not isinstance(value, bool))
            else:
                ok = isinstance(value, wanted)
            words = "a value of type " + " or ".join(t.__name__ for t in wanted)
        elif (rule := _rule(name)) is not None:
            predicate, words = rule
            ok = predicate(value)
        else:
            ok = isinstance(value, _LITERAL_TYPES)
            words = "a literal (bool, int, float, str, None, list, tuple or dict)"
        if not ok:
            errors.append(f"Unknown value for notebook parameter {name}: {_describe(value)}. "
                          f"Allowed: {words}.")
    unknown = sorted(set(_injected_names()) - set(params))
    if unknown:
        errors.insert(0, f"Unknown notebook parameter(s) {', '.join(unknown)} (a typo?); this "
                         f"notebook's parameters are {', '.join(sorted(params))}.")
    if errors:
        raise ValueError("\n".join(errors))
    global _CHECKED
    _CHECKED = {name: params[name] for name in sorted(params)}
    return dict(_CHECKED)


#: the parameters of the last :func:`check_params` call (read by :func:`setup_run`)
_CHECKED = None


def _injected_names():
    """Names that papermill injected into the running notebook (its ``# Parameters`` cell).

    papermill only warns about a parameter the notebook does not declare and runs on with
    the defaults; the injected cell is in the kernel's input history, so the names can be
    checked against the declared ones. Empty outside IPython or without injection.
    """
    import ast

    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebooks extra
        return []
    shell = get_ipython()
    if shell is None:
        return []
    names = []
    for source in shell.user_ns.get("In", []):
        if source.lstrip().startswith("# Parameters"):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            names = [t.id for node in tree.body if isinstance(node, ast.Assign)
                     for t in node.targets if isinstance(t, ast.Name)]
    return names


def _notebook_defaults(root, paper_id):
    """Default parameter values declared by ``notebooks/<paper_id>.ipynb`` (or ``None``)."""
    path = Path(root) / "notebooks" / f"{paper_id}.ipynb"
    if not path.is_file():
        return None
    try:
        import papermill
    except ImportError:  # pragma: no cover - papermill comes with the notebooks extra
        return None
    declared = papermill.inspect_notebook(str(path))
    defaults = {}
    for name, info in declared.items():
        try:
            defaults[name] = _literal(info["default"])
        except ValueError:
            return None
    return defaults


def _literal(text):
    """``ast.literal_eval`` of a parameter default as papermill reports it (a source string)."""
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"not a literal: {text!r}") from exc


def _changed_parameters(root, paper_id):
    """Names of the checked parameters whose values differ from the notebook's defaults."""
    if _CHECKED is None:
        return []
    defaults = _notebook_defaults(root, paper_id)
    if defaults is None or _CHECKED.get("OUT_DIR") != defaults.get("OUT_DIR"):
        return []  # no defaults to compare with, or an explicit OUT_DIR: write there
    return [name for name, value in _CHECKED.items()
            if name not in ("QUICK", "OUT_DIR", "QUICK_OUT_DIR", "N_JOBS") and name in defaults
            and defaults[name] != value]


def staging_dir(paper_id, root=None):
    """Folder where a full run stages its outputs before they go to ``figures/<paper_id>/``.

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb``.
    root : str or Path, default=None
        Repository root; found from the working directory by default.

    Returns
    -------
    path : Path
        ``<root>/build/staging/<paper_id>`` (not created here).
    """
    root = Path(root) if root is not None else project_root()
    return (root / "build" / "staging" / paper_id).resolve()


def _same_bytes(a, b):
    return b.is_file() and a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def publish_run(paper_id, root=None, *, runtime=None, cells=None):
    """Move the staged outputs of a finished full run into ``figures/<paper_id>/``.

    Call it only when the notebook ran to its end without error: every file of
    :func:`staging_dir` replaces its namesake in ``figures/<paper_id>/`` (files that the run
    did not write stay), then the staging folder is removed.

    When the run changed a committed output (a file whose bytes differ, or a new file;
    ``runtime.json`` does not count), or ``figures/<paper_id>/run.json`` is missing, it also
    writes ``run.json`` (:data:`mklcore.repro.reporting.RUN_FILE`, committed): the date,
    commit, environment fingerprint, machine, runtime and cell counts of this run
    (:func:`mklcore.repro.reporting.run_record`). A rerun that reproduces every output byte
    for byte leaves it alone, so that it always describes the run that produced the committed
    outputs, and reruns leave git clean.

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb``.
    root : str or Path, default=None
        Repository root; found from the working directory by default.
    runtime : float, default=None
        Wall-clock seconds of the notebook run, for ``run.json``; by default the
        ``runtime_s`` of the run's own ``runtime.json`` (the notebook's timer), if any.
    cells : dict, default=None
        ``{"computed": n, "cached": m}``: experiment cells computed and loaded from the cache,
        for ``run.json``.

    Returns
    -------
    moved : list of Path
        The files now in ``figures/<paper_id>/``, sorted, then ``run.json`` if it was
        written; empty when nothing was staged (a quick run, or a run with another output
        folder).
    """
    import json

    from .reporting import RUN_FILE, RUNTIME_FILE, run_record

    root = Path(root) if root is not None else project_root()
    stage = staging_dir(paper_id, root)
    if not stage.is_dir():
        return []
    target = (root / "figures" / paper_id).resolve()
    moved, changed = [], []
    for src in sorted(p for p in stage.rglob("*") if p.is_file()):
        dest = target / src.relative_to(stage)
        if src.name not in (RUNTIME_FILE, RUN_FILE) and not _same_bytes(src, dest):
            changed.append(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), str(dest))
        moved.append(dest)
    shutil.rmtree(stage)
    record_path = target / RUN_FILE
    if changed or not record_path.is_file():
        if runtime is None:
            try:
                runtime = json.loads((target / RUNTIME_FILE).read_text())["runtime_s"]
            except (OSError, ValueError, KeyError, TypeError):
                runtime = None
        record = run_record(paper_id, runtime=runtime, cells=cells, root=root)
        record_path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                               encoding="utf-8")
        moved.append(record_path)
    return moved


def _configure_session(n_jobs):
    """Display and thread settings of a notebook kernel (see :func:`setup_run`)."""
    import pandas as pd

    from .experiments import blas_thread_limit, cap_blas_threads

    pd.set_option("display.max_colwidth", None)  # claim texts are never cut with "..."
    cap_blas_threads(blas_thread_limit(n_jobs))


def setup_run(paper_id, quick, out_dir=None, quick_out_dir=None, *, root=None, n_jobs=None):
    """Create and return the output folder of a notebook run, and set up the kernel.

    Quick runs write to ``quick_out_dir`` (default ``build/quick/<paper_id>``), full runs to
    ``out_dir`` (default ``figures/<paper_id>``, the committed full run; when a parameter
    checked by :func:`check_params` differs from the notebook's default, e.g. another
    ``SEED``, the default is ``build/full/<paper_id>`` instead, so that a batch run never
    overwrites the committed results by accident). A full run aimed at
    ``figures/<paper_id>`` gets the staging folder :func:`staging_dir` (emptied first)
    instead; :func:`publish_run` moves it into ``figures/`` after the notebook's checks
    passed. Relative paths are taken from the repository root (:func:`project_root`), so the
    notebook behaves the same under nbval (kernel started in ``notebooks/``), papermill and
    Jupyter.

    It also sets pandas' ``display.max_colwidth`` to ``None`` (tables show whole texts) and
    caps the BLAS/OpenMP threads of the kernel at ``cores // n_jobs``
    (:func:`mklcore.repro.experiments.cap_blas_threads`), since ``n_jobs`` worker
    processes share the machine with it.

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb``; also the name of its ``figures/`` folder.
    quick : bool
        The notebook's ``QUICK`` parameter.
    out_dir, quick_out_dir : str or Path, default=None
        The notebook's ``OUT_DIR`` and ``QUICK_OUT_DIR`` parameters.
    root : str or Path, default=None
        Repository root; found from the working directory by default.
    n_jobs : int, default=None
        Worker processes of the notebook's experiments; ``None`` takes the ``N_JOBS``
        parameter passed to the last :func:`check_params` call, or 1.

    Returns
    -------
    path : Path
        Absolute path of the (now existing, for a staged run empty) output folder.

    Raises
    ------
    ValueError
        If ``paper_id`` is empty or a quick run would write into ``figures/`` (quick runs never
        overwrite the committed full-run figures).
    """
    if not isinstance(paper_id, str) or not paper_id.strip() or "/" in paper_id:
        raise ValueError(f"paper_id must be a non-empty name without '/'. Got {paper_id!r}.")
    if not isinstance(quick, bool):
        raise ValueError(f"Unknown value for notebook parameter QUICK: {_describe(quick)}. "
                         "Allowed: True or False.")
    root = Path(root) if root is not None else project_root()
    if quick:
        rel = quick_out_dir if quick_out_dir is not None else Path("build", "quick", paper_id)
    else:
        rel = out_dir if out_dir is not None else Path("figures", paper_id)
        changed = _changed_parameters(root, paper_id)
        if changed:
            rel = Path("build", "full", paper_id)
            print(f"Parameters differ from the committed full run ({', '.join(changed)}): "
                  f"writing to {rel.as_posix()}/, not figures/ (pass OUT_DIR to choose).")
    path = (root / rel).resolve()
    if quick and path.is_relative_to((root / "figures").resolve()):
        raise ValueError(f"Quick runs must not write into figures/ (got QUICK_OUT_DIR={str(rel)!r}); "
                         "quick results would overwrite the committed full-run outputs. "
                         f"Use e.g. 'build/quick/{paper_id}'.")
    if not quick and path == (root / "figures" / paper_id).resolve():
        stage = staging_dir(paper_id, root)
        if stage.exists():
            shutil.rmtree(stage)  # leftovers of a failed run are never published
        print(f"Full run: outputs are staged in {stage.relative_to(root.resolve()).as_posix()}/ "
              f"and replace those in figures/{paper_id}/ only after the whole notebook ran "
              f"without error (scripts/run_notebooks.py does this; after a run by hand, call "
              f"mklcore.repro.notebook.publish_run({paper_id!r})).")
        path = stage
    path.mkdir(parents=True, exist_ok=True)
    if n_jobs is None:
        n_jobs = (_CHECKED or {}).get("N_JOBS", 1)
    _configure_session(n_jobs)
    return path


def markdown_section(paper_id, heading, root=None):
    """The Markdown of the notebook cell that starts with ``heading``, for a report.

    A notebook writes a passage such as "What differs from the paper and why" once, as a
    Markdown cell beside the printed facts of the run; ``REPORT.md`` takes the same text
    from the notebook file instead of a second copy in code.

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb`` (``notebooks/<paper_id>.ipynb``).
    heading : str
        Text of the cell's first line without the leading ``#`` marks.
    root : str or Path, default=None
        Repository root; :func:`project_root` by default.

    Returns
    -------
    text : str
        The cell's Markdown after its heading line.

    Raises
    ------
    LookupError
        If no Markdown cell of the notebook starts with that heading.
    """
    import nbformat

    root = Path(root) if root is not None else project_root()
    nb = nbformat.read(root / "notebooks" / f"{paper_id}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        first, _, rest = cell.source.partition("\n")
        if first.startswith("#") and first.lstrip("#").strip() == heading.strip():
            return rest.strip()
    raise LookupError(f"notebooks/{paper_id}.ipynb has no Markdown cell headed {heading!r}.")


def _definition(stmt):
    """Is ``stmt`` an import, a function, a parameter or an UPPER_CASE constant assignment?"""
    import ast

    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AnnAssign)):
        return True
    if isinstance(stmt, ast.Assign):
        names = [n for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        return bool(names) and all(n.id.isupper() and len(n.id) > 1 for n in names)
    return False


def notebook_functions(paper_id, root=None):
    """The functions and constants a notebook defines, without running its experiments.

    Executes, in a fresh namespace and in cell order, only the imports, the function
    definitions, the parameters (their defaults: quick mode) and the assignments to
    UPPER_CASE names (two characters or more) of the notebook's code cells; everything else
    (the runs, the prints, the plots, ``setup_run``) is skipped, and so is a constant that
    needs a value of the run (its assignment raises ``NameError``). Benchmarks and tests use it to call a notebook's
    cell functions (e.g. one Table 1 fold) as the notebook does.

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb`` (``notebooks/<paper_id>.ipynb``).
    root : str or Path, default=None
        Repository root; :func:`project_root` by default.

    Returns
    -------
    namespace : dict
        The notebook's globals after those statements: its functions look their helpers up
        here, so replacing an entry (e.g. a solver) changes what they call.
    """
    import ast

    import nbformat

    root = Path(root) if root is not None else project_root()
    nb = nbformat.read(root / "notebooks" / f"{paper_id}.ipynb", as_version=4)
    namespace = {"__name__": f"notebook_{paper_id}"}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for stmt in ast.parse(cell.source).body:
            if not _definition(stmt):
                continue
            code = compile(ast.Module([stmt], type_ignores=[]), f"notebooks/{paper_id}.ipynb",
                           "exec")
            try:
                exec(code, namespace)  # noqa: S102
            except NameError:
                if not isinstance(stmt, ast.Assign):
                    raise
    return namespace
