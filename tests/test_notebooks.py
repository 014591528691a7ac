"""Notebook harness tests: lint every notebook (no execution), parameter checks, sanitizer.

The lint checks the notebook layout: a Markdown H1 title with a citation first; exactly one cell
tagged ``parameters`` (typed literals, with ``QUICK`` and ``SEED``); derived settings in the
next cell, validated with :func:`mklcore.repro.notebook.check_params`; outputs only in cells tagged
``keep_output``; ascending execution counts; no skipped heading levels; no ``%store``; short
code cells and functions; and the committed file is what ``make strip`` produces. The notebooks
themselves are executed by nbval (``make test``), the runner script is tested in
``test_runner.py`` and the quickstart's determinism in ``test_notebook_determinism.py``.
"""

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from mklcore.repro.notebook import check_params, setup_run

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
SANITIZE_CFG = ROOT / "tests" / "nbval_sanitize.cfg"
KERNEL_NAME = "python3"
#: the Makefile's STRIP flags; read from the Makefile below when it defines them
DEFAULT_STRIP_FLAGS = ["--keep-count", "--extra-keys", "metadata.papermill cell.metadata.papermill"]

notebook_params = pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])

CITATION = re.compile(
    r"\([^()]*\b(19|20)\d{2}[a-z]?\)"        # (Kloft et al., 2009) or (2009)
    r"|\b10\.\d{4,9}/\S+"                    # DOI
    r"|https?://\S+")                        # URL
HEADING = re.compile(r"^(#{1,6})\s+\S", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
STRAY_CELL_METADATA = {"papermill", "execution", "ExecuteTime", "collapsed", "scrolled"}
STRAY_NOTEBOOK_METADATA = {"papermill", "widgets", "signature"}
SIMPLE_TYPES = {"bool": bool, "int": int, "float": (int, float), "str": str}


# ----------------------------------------------------------------------------- helpers
def read(path):
    return nbformat.read(path, as_version=4)


def tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def headings(cell):
    """ATX heading levels of a Markdown cell, ignoring fenced code blocks."""
    text = FENCE.sub("", cell.source)
    return [len(m.group(1)) for m in HEADING.finditer(text)]


def parameters_index(nb):
    found = [i for i, c in enumerate(nb.cells) if "parameters" in tags(c)]
    assert len(found) == 1, f"expected exactly one cell tagged 'parameters', found {len(found)}"
    return found[0]


def parse_parameters(source):
    """Return ``{name: (annotation, value)}`` of a parameters cell; fail on anything else."""
    params = {}
    for stmt in ast.parse(source).body:
        assert isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name), (
            f"parameters cell line {stmt.lineno}: only typed assignments `NAME: type = literal` "
            f"are allowed (papermill --help-notebook documents them)")
        assert stmt.value is not None, f"parameters cell line {stmt.lineno}: no value"
        try:
            value = ast.literal_eval(stmt.value)
        except ValueError:
            pytest.fail(f"parameters cell: {stmt.target.id} is not a literal "
                        f"({ast.unparse(stmt.value)}); compute it in the next cell")
        params[stmt.target.id] = (ast.unparse(stmt.annotation), value)
    return params


def check_params_calls(source):
    """Keyword names of every ``check_params(...)`` call in a cell."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "check_params":
                calls.append({kw.arg: kw.value for kw in node.keywords if kw.arg})
    return calls


def strip_command():
    exe = Path(sys.executable).parent / "nbstripout"
    exe = str(exe) if exe.exists() else shutil.which("nbstripout")
    if exe is None:
        pytest.fail("nbstripout is not installed (pip install -e .[test])")
    flags = DEFAULT_STRIP_FLAGS
    makefile = ROOT / "Makefile"
    if makefile.is_file():
        m = re.search(r"^STRIP\s*:?=\s*nbstripout\s+(.*)$", makefile.read_text(), re.MULTILINE)
        if m:
            flags = shlex.split(m.group(1))
    return [exe, *flags]


# ----------------------------------------------------------------------------- lint
def test_notebooks_exist():
    assert NOTEBOOKS, "no notebooks in notebooks/"
    assert (NOTEBOOK_DIR / "quickstart.ipynb") in NOTEBOOKS


@notebook_params
def test_valid_nbformat(path):
    nb = read(path)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == KERNEL_NAME, (
        f"kernelspec must be {KERNEL_NAME!r} (what papermill and nbval start)")


@notebook_params
def test_title_cell(path):
    nb = read(path)
    first = nb.cells[0]
    assert first.cell_type == "markdown", "the first cell must be the Markdown title cell"
    levels = headings(first)
    assert levels and levels[0] == 1, "the title cell must start with an H1 '# Title'"
    h1 = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and 1 in headings(c)]
    assert len(h1) == 1 and h1[0][0] == 0 and levels.count(1) == 1, (
        "exactly one H1 heading, in the first cell")
    assert CITATION.search(first.source), (
        "the title cell must cite its source: a year in parentheses, a DOI or a URL")


@notebook_params
def test_heading_levels_do_not_skip(path):
    previous = 0
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type != "markdown":
            continue
        for level in headings(cell):
            assert level <= previous + 1, (
                f"cell {i}: heading level {level} follows level {previous} (skips a level)")
            previous = level


@notebook_params
def test_parameters_cell(path):
    nb = read(path)
    idx = parameters_index(nb)
    cell = nb.cells[idx]
    assert cell.cell_type == "code"
    params = parse_parameters(cell.source)
    assert "QUICK" in params and "SEED" in params, "parameters must define QUICK and SEED"
    assert params["QUICK"][0] == "bool" and params["QUICK"][1] is True, (
        "QUICK: bool = True (quick mode is the default for CI and first-time readers)")
    assert params["SEED"][0] == "int"
    for name, (annotation, value) in params.items():
        assert name.isupper(), f"parameter {name} should be UPPER_CASE"
        if annotation in SIMPLE_TYPES:
            ok = isinstance(value, SIMPLE_TYPES[annotation])
            if annotation != "bool":
                ok = ok and not isinstance(value, bool)
            assert ok, f"parameter {name}: value {value!r} does not match its annotation {annotation}"


@notebook_params
def test_parameters_cell_explains_the_injected_cell(path):
    """An executed copy shows papermill's ``injected-parameters`` cell under the parameters
    cell: the Markdown cell above the parameters says what it is."""
    nb = read(path)
    idx = parameters_index(nb)
    above = nb.cells[idx - 1] if idx > 0 else None
    assert above is not None and above.cell_type == "markdown", (
        "a Markdown cell must precede the parameters cell")
    assert "papermill" in above.source and "injected-parameters" in above.source, (
        "the Markdown cell above the parameters must explain papermill's injected cell")


@notebook_params
def test_derived_settings_cell_validates_parameters(path):
    nb = read(path)
    idx = parameters_index(nb)
    assert idx + 1 < len(nb.cells), "the parameters cell must be followed by derived settings"
    nxt = nb.cells[idx + 1]
    assert nxt.cell_type == "code" and "parameters" not in tags(nxt), (
        "the cell after 'parameters' must be a code cell with the derived settings "
        "(papermill inserts its overrides between the two)")
    declared = set(parse_parameters(nb.cells[idx].source))
    calls = check_params_calls(nxt.source)
    assert calls, "the derived-settings cell must call mklcore.repro.notebook.check_params(...)"
    passed = set().union(*map(set, calls))
    assert declared <= passed, (
        f"check_params is not given {sorted(declared - passed)}; pass every parameter")
    for call in calls:
        for name, value in call.items():
            if name in declared:
                assert isinstance(value, ast.Name) and value.id == name, (
                    f"pass parameters as {name}={name}")


@notebook_params
def test_outputs_only_in_keep_output_cells(path):
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type != "code":
            continue
        t = tags(cell)
        if cell.outputs:
            assert "keep_output" in t, (
                f"cell {i} has outputs but no 'keep_output' tag; run `make strip`")
        if "nbval-check-output" in t:
            assert "keep_output" in t, (
                f"cell {i} is tagged 'nbval-check-output' but not 'keep_output': "
                "nbstripout would delete the reference output nbval compares against")
            assert cell.outputs and cell.execution_count is not None, (
                f"cell {i} is tagged 'nbval-check-output' but has no stored output/count; "
                "execute the notebook in quick mode, then `make strip`")


@notebook_params
def test_execution_counts_ascend(path):
    counts = [c.execution_count for c in read(path).cells
              if c.cell_type == "code" and c.execution_count is not None]
    assert counts == sorted(counts) and len(set(counts)) == len(counts), (
        f"execution counts must ascend (run top to bottom in a fresh kernel): {counts}")


@notebook_params
def test_no_hidden_state_magics(path):
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type == "code":
            assert not re.search(r"(^|\s)%store\b|run_line_magic\(\s*['\"]store", cell.source), (
                f"cell {i} uses %store; notebooks must not share state")


#: longest code cell allowed (non-blank lines)
MAX_CODE_LINES = 40
#: longest function defined in a notebook (lines, signature and docstring included)
MAX_FUNCTION_LINES = 30


@notebook_params
def test_code_cells_are_short(path):
    """Code cells are short and the functions a notebook defines (the cell functions of the
    cached runner, small protocol steps) are short too; no classes: what several notebooks
    share or a reader need not see lives in ``mklcore/repro/``."""
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        classes = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        assert not classes, f"cell {i} defines classes {classes}; move them to mklcore/repro/"
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= MAX_FUNCTION_LINES, (
                    f"cell {i}: function {node.name} has {length} lines (at most "
                    f"{MAX_FUNCTION_LINES}); split it")
        n_lines = len([line for line in cell.source.splitlines() if line.strip()])
        assert n_lines <= MAX_CODE_LINES, (
            f"cell {i} has {n_lines} lines (at most {MAX_CODE_LINES}); split it")


def code_lines(source):
    """Lines of code of a Python source: no blank lines, comments or docstrings."""
    import io
    import tokenize

    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstrings)


#: paper notebooks that show their experiment (issue 29): the protocol of every table and
#: figure is notebook code; the module keeps data, cached cells, helpers and plots
SHOWS_ITS_EXPERIMENT = ["hinrichs2012_qmkl", "dinuzzo2010_rls2", "yang2012_stpmkl",
                        "kloft2009_lpmkl", "gonen2008_lmkl"]
#: least share of the experiment's code lines in the notebook, most lines of the paper module
MIN_NOTEBOOK_SHARE, MAX_MODULE_LINES = 0.35, 1200


@pytest.mark.parametrize("paper_id", SHOWS_ITS_EXPERIMENT)
def test_notebook_shows_its_experiment(paper_id):
    nb = read(NOTEBOOK_DIR / f"{paper_id}.ipynb")
    in_notebook = sum(code_lines(c.source) for c in nb.cells if c.cell_type == "code")
    module = ROOT / "mklcore" / "repro" / f"{paper_id}.py"
    in_module = code_lines(module.read_text(encoding="utf-8"))
    share = in_notebook / (in_notebook + in_module)
    assert share >= MIN_NOTEBOOK_SHARE, (
        f"{paper_id}: the notebook holds {share:.0%} of the experiment's code lines "
        f"({in_notebook} of {in_notebook + in_module}); at least {MIN_NOTEBOOK_SHARE:.0%}")
    n_lines = len(module.read_text(encoding="utf-8").splitlines())
    assert n_lines <= MAX_MODULE_LINES, f"{module.name} has {n_lines} lines"


@pytest.mark.parametrize("paper_id", SHOWS_ITS_EXPERIMENT)
def test_cell_functions_travel_to_worker_processes(paper_id):
    """Quick runs call ``experiments.run`` in one process (worker start-up costs more than
    the quick grids gain); the full run sends the notebook's cell functions to loky worker
    processes with cloudpickle. Every function a paper notebook defines pickles by value (the
    notebook is no importable module) and comes back working: what a quick run no longer
    exercises."""
    import types

    import cloudpickle  # what joblib's loky workers use

    from mklcore.repro.notebook import notebook_functions

    ns = notebook_functions(paper_id)
    funcs = {name: f for name, f in ns.items()
             if isinstance(f, types.FunctionType) and f.__module__ == ns["__name__"]}
    assert funcs, f"{paper_id}: no functions found"
    for name, f in funcs.items():
        back = cloudpickle.loads(cloudpickle.dumps(f))
        assert back.__code__.co_code == f.__code__.co_code, name


@notebook_params
def test_no_stray_metadata(path):
    nb = read(path)
    stray = STRAY_NOTEBOOK_METADATA & set(nb.metadata)
    assert not stray, f"notebook metadata {sorted(stray)}; run `make strip`"
    for i, cell in enumerate(nb.cells):
        stray = STRAY_CELL_METADATA & set(cell.get("metadata", {}))
        assert not stray, f"cell {i} metadata {sorted(stray)}; run `make strip`"


@pytest.fixture(scope="module")
def strip_verify():
    """``nbstripout --verify`` over every notebook, in one process (nbstripout's start-up,
    mostly importing nbformat and jsonschema, takes seconds): ``(command, process)``; the
    process lists each notebook it would change as ``Dry run: would have stripped <path>``."""
    cmd = strip_command()
    return cmd, subprocess.run([*cmd, "--verify", *map(str, NOTEBOOKS)], capture_output=True,
                               text=True)


@notebook_params
def test_nbstripout_verify(path, strip_verify):
    cmd, proc = strip_verify
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    changed = re.findall(r"^Dry run: would have stripped (.+)$", proc.stdout, re.MULTILINE)
    assert proc.returncode == bool(changed), proc.stdout + proc.stderr
    assert str(path) not in changed, (
        f"{path.name} is not stripped ({' '.join(cmd[1:])}); run `make strip`.\n"
        f"{proc.stdout}{proc.stderr}")


# ----------------------------------------------------------------------------- parameter checks
def test_check_params_accepts_defaults():
    assert check_params(SEED=0, QUICK=True, OUT_DIR="figures/x", N_REPEATS=20) == {
        "N_REPEATS": 20, "OUT_DIR": "figures/x", "QUICK": True, "SEED": 0}


@pytest.mark.parametrize("name, value, allowed", [
    ("QUICK", "false", "True or False"),
    ("QUICK", 0, "True or False"),
    ("QUICK", None, "True or False"),
    ("SEED", -1, "an int in [0, 2**32)"),
    ("SEED", 1.5, "an int in [0, 2**32)"),
    ("SEED", True, "an int in [0, 2**32)"),
    ("OUT_DIR", "", "a non-empty path string"),
    ("N_REPEATS", 0, "an int >= 1"),
    ("EXTRA", object(), "a literal"),
])
def test_check_params_rejects_unknown_values(name, value, allowed):
    params = {"QUICK": True, "SEED": 0, name: value}
    with pytest.raises(ValueError, match=re.escape(
            f"Unknown value for notebook parameter {name}: {value!r} ({type(value).__name__}). "
            f"Allowed: {allowed}")):
        check_params(**params)


def test_check_params_reports_every_bad_parameter():
    with pytest.raises(ValueError) as info:
        check_params(QUICK="False", SEED="0")
    assert str(info.value).count("Unknown value for notebook parameter") == 2


def test_check_params_choices_and_types():
    assert check_params(SOLVER="newton", choices={"SOLVER": ("newton", "analytic")})
    with pytest.raises(ValueError, match=r"SOLVER: 'nweton' \(str\). Allowed: one of 'newton', "
                                         r"'analytic'"):
        check_params(SOLVER="nweton", choices={"SOLVER": ("newton", "analytic")})
    with pytest.raises(ValueError, match="Allowed: one of 1, 2"):
        check_params(P=True, choices={"P": (1, 2)})  # True == 1, but it is not a valid choice
    assert check_params(C=1, types={"C": float})  # papermill turns "-p C 1" into an int
    with pytest.raises(ValueError, match="C: 'big' .* Allowed: a value of type float"):
        check_params(C="big", types={"C": float})
    with pytest.raises(ValueError, match="of type int"):
        check_params(K=False, types={"K": int})
    with pytest.raises(TypeError, match="pass MISSING=MISSING"):
        check_params(QUICK=True, choices={"MISSING": (1,)})


@pytest.fixture(autouse=True)
def _restore_pandas_options():
    """setup_run sets pandas display options for the whole kernel; undo that after a test."""
    import pandas as pd

    before = pd.get_option("display.max_colwidth")
    yield
    pd.set_option("display.max_colwidth", before)


def test_setup_run_quick_and_full(tmp_path):
    quick = setup_run("demo", True, "figures/demo", "build/quick/demo", root=tmp_path)
    assert quick == (tmp_path / "build" / "quick" / "demo").resolve() and quick.is_dir()
    # a full run aimed at figures/demo is staged; publish_run moves it there afterwards
    full = setup_run("demo", False, "figures/demo", "build/quick/demo", root=tmp_path)
    assert full == (tmp_path / "build" / "staging" / "demo").resolve() and full.is_dir()
    assert not (tmp_path / "figures").exists()
    assert setup_run("demo", True, root=tmp_path) == quick
    assert setup_run("demo", False, root=tmp_path) == full
    elsewhere = tmp_path / "elsewhere"
    assert setup_run("demo", True, "figures/demo", str(elsewhere), root=tmp_path) == elsewhere.resolve()
    assert setup_run("demo", False, str(elsewhere), root=tmp_path) == elsewhere.resolve()


def test_setup_run_shows_whole_texts_and_caps_threads(tmp_path):
    """Tables are never cut with '...', and the kernel keeps cores // N_JOBS BLAS threads."""
    import pandas as pd
    from threadpoolctl import threadpool_info, threadpool_limits

    from mklcore.repro.experiments import blas_thread_limit

    pd.set_option("display.max_colwidth", 50)
    with threadpool_limits(64):
        setup_run("demo", True, root=tmp_path, n_jobs=2)
        assert pd.get_option("display.max_colwidth") is None
        assert max(p["num_threads"] for p in threadpool_info()) <= blas_thread_limit(2)
    assert "..." not in repr(pd.DataFrame({"claim": ["x" * 120]}))


def test_publish_run_moves_staged_files_and_keeps_the_rest(tmp_path):
    from mklcore.repro.notebook import publish_run, staging_dir

    target = tmp_path / "figures" / "demo"
    target.mkdir(parents=True)
    (target / "REPORT.md").write_text("old")
    (target / "extra.csv").write_text("kept")
    assert publish_run("demo", root=tmp_path) == []  # nothing staged
    stage = setup_run("demo", False, root=tmp_path)
    assert stage == staging_dir("demo", tmp_path)
    (stage / "REPORT.md").write_text("new")
    (stage / "sub").mkdir()
    (stage / "sub" / "fig.png").write_text("png")
    assert publish_run("demo", root=tmp_path) == [target / "REPORT.md", target / "sub" / "fig.png",
                                                  target / "run.json"]
    assert (target / "REPORT.md").read_text() == "new" and (target / "extra.csv").read_text() == "kept"
    assert (target / "sub" / "fig.png").is_file() and not stage.exists()
    # a new run starts from an empty staging folder: a failed run's leftovers never go out
    (setup_run("demo", False, root=tmp_path) / "stale.png").write_text("stale")
    assert not any(setup_run("demo", False, root=tmp_path).iterdir())


def test_publish_run_records_the_run_only_when_the_outputs_change(tmp_path):
    """run.json (committed) describes the run that produced the committed outputs: a rerun
    that reproduces them byte for byte leaves it alone, so reruns leave git clean."""
    from mklcore.repro.experiments import code_version
    from mklcore.repro.notebook import publish_run

    def publish(report, **kwargs):
        stage = setup_run("demo", False, root=tmp_path)
        (stage / "REPORT.md").write_text(report)
        (stage / "runtime.json").write_text(json.dumps({"runtime_s": 12.5}))  # changes always
        return publish_run("demo", root=tmp_path, **kwargs)

    target = tmp_path / "figures" / "demo"
    assert publish("one", cells={"computed": 7, "cached": 3})[-1] == target / "run.json"
    record = json.loads((target / "run.json").read_text())
    assert record["paper_id"] == "demo" and record["code"] == code_version()
    assert record["runtime_s"] == 12.5  # from the run's runtime.json when not given
    assert record["cells"] == {"computed": 7, "cached": 3}
    assert len(record["environment"]["fingerprint"]) == 12
    assert {"python", "numpy", "scipy", "scikit-learn", "cvxpy", "numba", "blas"} <= set(
        record["environment"]["versions"])
    assert set(record["machine"]) == {"platform", "n_cpus"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", record["date"])
    first = (target / "run.json").read_bytes()
    moved = publish("one", runtime=99.0)  # the same outputs: the record stays
    assert target / "run.json" not in moved and (target / "run.json").read_bytes() == first
    moved = publish("two", runtime=99.0)  # changed outputs: a new record
    assert moved[-1] == target / "run.json"
    assert json.loads((target / "run.json").read_text())["runtime_s"] == 99.0
    (target / "run.json").unlink()  # a missing record is written even for the same outputs
    assert publish("two")[-1] == target / "run.json"


def test_markdown_section_reads_the_notebook_cell(tmp_path):
    import nbformat

    from mklcore.repro.notebook import markdown_section

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"),
                nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_markdown_cell("## What differs\n\n- one\n- two\n")]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks" / "demo.ipynb")
    assert markdown_section("demo", "What differs", root=tmp_path) == "- one\n- two"
    with pytest.raises(LookupError, match="no Markdown cell headed"):
        markdown_section("demo", "x = 1", root=tmp_path)


def test_notebook_functions_define_without_running(tmp_path):
    import nbformat

    from mklcore.repro.notebook import notebook_functions

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import math\nQUICK: bool = True"),
                nbformat.v4.new_code_cell("SCALE = 2 if QUICK else 3\nresult = run_everything()\n"
                                          "TOTAL = result.sum()\nprint('ran')"),
                nbformat.v4.new_code_cell("def area(r):\n    return SCALE * math.pi * r ** 2")]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks" / "demo.ipynb")
    ns = notebook_functions("demo", root=tmp_path)
    assert ns["area"](1.0) == pytest.approx(2 * 3.141592653589793)
    assert "result" not in ns and "TOTAL" not in ns  # the run and what needs it are skipped
    ns["SCALE"] = 3  # the functions look their globals up in the namespace
    assert ns["area"](1.0) == pytest.approx(3 * 3.141592653589793)


def test_setup_run_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="Quick runs must not write into figures/"):
        setup_run("demo", True, "figures/demo", "figures/demo", root=tmp_path)
    with pytest.raises(ValueError, match="Unknown value for notebook parameter QUICK"):
        setup_run("demo", "false", root=tmp_path)
    with pytest.raises(ValueError, match="paper_id"):
        setup_run("", True, root=tmp_path)


def test_setup_run_default_root_is_repository():
    # relative paths are taken from the repository root, wherever the kernel was started
    path = setup_run("pytest-setup-run", True)
    try:
        assert path == ROOT / "build" / "quick" / "pytest-setup-run"
    finally:
        path.rmdir()


@notebook_params
def test_notebook_rejects_unknown_parameter_value(path, monkeypatch):
    """The notebook up to its derived-settings cell, with papermill's injected parameters
    ``-p QUICK false``-style values, executed in this process (papermill's own
    ``parameterize_notebook`` writes the injected cell, as in a batch run).

    papermill passes ``false`` (lower case) as the string ``"false"``, which is truthy; the
    derived-settings cell must turn that into a clear error instead of a silent quick run.
    """
    from IPython.core.interactiveshell import InteractiveShell
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    from mklcore.repro import notebook

    nb = load_notebook_node(str(path))  # as papermill reads it (every cell gets its tags)
    idx = parameters_index(nb)
    nb.cells = nb.cells[: idx + 2]
    nb = parameterize_notebook(nb, {"QUICK": "false", "SEED": -1, "SEDE": 3})
    monkeypatch.setattr(notebook, "_CHECKED", None)
    environ = dict(os.environ)  # a notebook's first cell may set thread variables
    shell = InteractiveShell.instance()  # what the kernel runs: the cells enter its history
    try:
        for cell in nb.cells:
            if cell.cell_type == "code":
                result = shell.run_cell(cell.source, silent=False, store_history=True)
                if not result.success:
                    break
    finally:
        InteractiveShell.clear_instance()
        os.environ.clear()
        os.environ.update(environ)
    error = result.error_in_exec
    assert isinstance(error, ValueError), f"expected a ValueError, got {error!r}"
    message = str(error)
    assert "Unknown notebook parameter(s) SEDE (a typo?)" in message
    assert "Unknown value for notebook parameter QUICK: 'false' (str)" in message
    assert "Unknown value for notebook parameter SEED: -1 (int)" in message


def test_full_run_with_changed_parameters_writes_under_build(tmp_path, monkeypatch, capsys):
    """A full run whose parameters differ from the notebook's defaults does not write into
    figures/ unless OUT_DIR says so."""
    from mklcore.repro import notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("QUICK = True\nSEED = 0\nOUT_DIR = 'figures/demo'\n",
                                          metadata={"tags": ["parameters"]})]
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "language": "python",
                                 "display_name": "Python 3"}
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks" / "demo.ipynb")
    monkeypatch.setattr(notebook, "_CHECKED", None)
    default = "figures/demo"
    notebook.check_params(QUICK=False, SEED=0, OUT_DIR=default)
    assert notebook.setup_run("demo", False, default, root=tmp_path) == (
        tmp_path / "build" / "staging" / "demo")  # published to figures/demo at the end
    notebook.check_params(QUICK=False, SEED=3, OUT_DIR=default)
    assert notebook.setup_run("demo", False, default, root=tmp_path) == (
        tmp_path / "build" / "full" / "demo")
    assert "SEED" in capsys.readouterr().out
    notebook.check_params(QUICK=False, SEED=3, OUT_DIR="mine")
    assert notebook.setup_run("demo", False, "mine", root=tmp_path) == tmp_path / "mine"


# ----------------------------------------------------------------------------- sanitizer
def sanitize(text):
    from nbval.plugin import get_sanitize_patterns

    for regex, replace in dict(get_sanitize_patterns(SANITIZE_CFG.read_text())).items():
        text = re.sub(regex, replace, text)
    return text


def test_sanitize_config_parses():
    from nbval.plugin import get_sanitize_patterns

    text = SANITIZE_CFG.read_text()
    pairs = get_sanitize_patterns(text)
    # every [section] must hold one regex/replace pair on consecutive lines (nbval's format)
    assert len(pairs) == len(re.findall(r"^\[[^\]]+\]\s*$", text, re.MULTILINE))
    for regex, _ in pairs:
        re.compile(regex)


@pytest.mark.parametrize("raw, clean", [
    ("fit in 3.2 s, cv took 120ms", "fit in <TIME>, cv took <TIME>"),
    ("<Figure at 0x7f3a2b1c>", "<Figure at <ADDR>>"),
    ("/home/u/.venv/lib/python3.12/site-packages/sklearn/x.py",
     "<PATH>/site-packages/sklearn/x.py"),
    ("saved /work/main/figures/quickstart/summary.csv", "saved <ROOT>/figures/quickstart/summary.csv"),
    ("wrote /tmp/pytest-1/run/summary.csv", "wrote <TMP>"),
    ("100%|##########| 12/12 [00:03<00:00,  3.41it/s]", "<PROGRESS>"),
    ("run at 2025-01-31T12:00:03", "run at <DATE>"),
    ("accuracy -0.000", "accuracy 0.000"),
])
def test_sanitizer_rewrites_volatile_text(raw, clean):
    assert sanitize(raw) == clean


@pytest.mark.parametrize("stable", [
    "X: (351, 34)  y: (351,)", "accuracy 0.914", "classes {-1: 126, 1: 225}",
    "n_kernels 15", "  C  mean_test_score\n0 0.1 0.852", "weights sum 1.000", "-0.05",
])
def test_sanitizer_keeps_checked_values(stable):
    assert sanitize(stable) == stable


@notebook_params
def test_committed_full_run_notebook_shows_its_figures(path):
    """``figures/<id>/<id>.ipynb``, the executed full run, embeds at least one image per
    figure file of the run (so a reader sees them on the repository page)."""
    folder = ROOT / "figures" / path.stem
    executed = folder / path.name
    assert executed.is_file(), f"{executed} missing: run make reproduce-{path.stem}"
    nb = nbformat.read(executed, as_version=4)
    images = sum("image/png" in out.get("data", {}) for cell in nb.cells
                 if cell.cell_type == "code" for out in cell.get("outputs", []))
    n_png = len(list(folder.glob("*.png")))
    assert images >= max(1, n_png), f"{images} images in {executed.name}, {n_png} PNG files"


@notebook_params
def test_no_control_characters(path):
    """A TeX command written in a non-raw Python string ("\\theta", "\\frac") turns into a tab or a
    form feed and breaks the rendered equation; no cell may contain such characters."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    bad = [(i, repr(ch)) for i, cell in enumerate(nb.cells)
           for ch in "\t\x07\x08\x0b\x0c" if ch in cell.source]
    assert not bad, f"{path.name}: control characters in cells {bad}"


@notebook_params
def test_committed_summary_rows_state_tolerance_and_rule(path):
    """Every row of ``figures/<id>/summary.csv`` says the tolerance and the rule that decided
    its verdict; a row comparing different data or a number matched by construction is
    ``n/a``; every claim has a rule, and no REPORT.md links the git-ignored runtime.json."""
    import pandas as pd

    from mklcore.repro.reporting import SUMMARY_COLUMNS, VERDICTS

    folder = ROOT / "figures" / path.stem
    table = pd.read_csv(folder / "summary.csv", keep_default_na=False, dtype=str)
    assert list(table.columns) == SUMMARY_COLUMNS
    assert set(table["verdict"]) <= set(VERDICTS)
    blank = table[(table["tolerance"].str.strip() == "") | (table["rule"].str.strip() == "")]
    assert blank.empty, f"rows without a tolerance or a rule: {blank['item'].tolist()}"
    cross = table[table["item"].str.contains("different data|by construction", case=False)
                  | table["rule"].str.contains("not compared", case=False)]
    assert set(cross["verdict"]) <= {"n/a"}, cross[["item", "verdict"]].to_string()
    report = (folder / "REPORT.md").read_text(encoding="utf-8")
    assert "](runtime.json)" not in report
