"""Packaging consistency: environment.yml mirrors pyproject.toml; licence, README and CI entry.

``pyproject.toml`` is the source of truth. ``environment.yml`` is read with a
small parser for its simple list format, so this test does not depend on PyYAML (installed
with Jupyter, but not a declared dependency).
"""

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
#: extras that environment.yml installs (its last line is ``pip install -e .[<these>]``)
EXTRAS = ("repro", "notebooks", "test")
#: pip name -> conda-forge name, where they differ
CONDA_NAMES = {}
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*(;.*)?$")


def normalize(name):
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text):
    """``"scikit-learn>=1.6"`` -> ``("scikit-learn", ">=1.6")`` (specifier without spaces)."""
    m = REQUIREMENT.match(text)
    assert m, f"cannot parse requirement {text!r}"
    return normalize(m.group(1)), re.sub(r"\s+", "", m.group(3))


def read_pyproject():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def parse_environment_yml(text):
    """Return ``(conda_deps, pip_deps)`` of a simple conda ``environment.yml``.

    Understands the usual layout: a top-level ``dependencies:`` list of ``- spec`` strings,
    optionally holding a ``- pip:`` entry with its own nested list. Comments are ignored.
    """
    conda, pip = [], []
    in_deps = in_pip = False
    deps_indent = pip_indent = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if indent == 0:
            in_deps = stripped == "dependencies:"
            in_pip = False
            continue
        if not in_deps or not stripped.startswith("- "):
            continue
        item = stripped[2:].strip().strip("'\"")
        if deps_indent is None:
            deps_indent = indent
        if in_pip and indent > pip_indent:
            pip.append(item)
            continue
        in_pip = False
        if indent == deps_indent and item == "pip:":
            in_pip, pip_indent = True, indent
            continue
        conda.append(item)
    return conda, pip


@pytest.fixture(scope="module")
def environment():
    conda, pip = parse_environment_yml((ROOT / "environment.yml").read_text())
    return conda, pip


def test_parse_environment_yml_reader():
    text = ("name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python>=3.10\n"
            "  # a comment\n  - numpy >=1.24  # trailing\n  - pip\n  - pip:\n"
            "      - -e .[notebooks,test]\nvariables:\n  - nope\n")
    assert parse_environment_yml(text) == (["python>=3.10", "numpy >=1.24", "pip"],
                                           ["-e .[notebooks,test]"])


def test_environment_yml_mirrors_pyproject(environment):
    project = read_pyproject()["project"]
    wanted = list(project["dependencies"])
    for extra in EXTRAS:
        wanted += project["optional-dependencies"][extra]
    expected = {}
    for req in wanted:
        name, spec = parse_requirement(req)
        expected[CONDA_NAMES.get(name, name)] = spec
    conda, _ = environment
    found = dict(parse_requirement(dep) for dep in conda)
    found.pop("python", None)
    found.pop("pip", None)
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    assert not missing, f"environment.yml lacks {missing} (declared in pyproject.toml)"
    assert not extra, f"environment.yml has {extra}, which pyproject.toml does not declare"
    differ = {n: (expected[n], found[n]) for n in expected if expected[n] != found[n]}
    assert not differ, f"lower bounds differ (pyproject, environment.yml): {differ}"


def test_environment_yml_python_and_editable_install(environment):
    conda, pip = environment
    python = dict(parse_requirement(dep) for dep in conda).get("python")
    assert python == read_pyproject()["project"]["requires-python"].replace(" ", "")
    assert "pip" in conda
    assert f"-e .[{','.join(EXTRAS)}]" in pip, (
        "environment.yml must end with pip install -e .[repro,notebooks,test]")


def test_license_is_bsd3():
    text = (ROOT / "LICENSE").read_text()
    assert text.splitlines()[0].strip() == "BSD 3-Clause License"
    for clause in ("Redistributions of source code must retain",
                   "Redistributions in binary form must reproduce",
                   "Neither the name of"):
        assert clause in text, f"LICENSE lacks the BSD-3 clause {clause!r}"
    project = read_pyproject()["project"]
    license_ = project.get("license")
    spdx = license_.get("text") if isinstance(license_, dict) else license_
    assert spdx == "BSD-3-Clause"


#: leftover fill-in markers (``KLOFT_FULL``, ``RLS2_CLAIMS``, ...) and TODO/TBD notes
README_PLACEHOLDER = re.compile(r"\b[A-Z0-9]+_(?:FULL|CLAIMS|QUICK|TODO)\b|TODO|TBD")


def readme_problems(text):
    """What is wrong with a README text: placeholders, missing commands, table order."""
    problems = []
    found = sorted({m.group(0) for m in README_PLACEHOLDER.finditer(text)})
    if found:
        problems.append(f"leftover placeholders {found}")
    lines = text.splitlines()

    def first(predicate):
        return next((i for i, line in enumerate(lines) if predicate(line)), None)

    commands = {cmd: first(lambda line, c=cmd: line.lstrip().startswith(c))
                for cmd in ("make reproduce", "make test")}
    missing = [cmd for cmd, i in commands.items() if i is None]
    if missing:
        problems.append(f"no line starting with the set-up command(s) {missing}")
    table = first(lambda line: line.startswith("| paper |"))
    if table is None:
        problems.append("no paper table (a line starting with '| paper |')")
    elif not missing and table < max(commands.values()):
        problems.append("the paper table comes before the set-up commands "
                        f"(table line {table + 1}, commands on lines "
                        f"{sorted(i + 1 for i in commands.values())})")
    return problems


def test_readme_checker_catches_bad_readmes():
    good = ("# x\n```bash\nmake reproduce   # full\nmake test        # quick\n```\n"
            "| paper | notebook |\n|---|---|\n| a | b |\n")
    assert readme_problems(good) == []
    assert "KLOFT_FULL" in readme_problems(good.replace("| b |", "| KLOFT_FULL |"))[0]
    for marker in ("RLS2_CLAIMS", "X_QUICK", "A1_TODO", "TODO: fill", "TBD"):
        assert readme_problems(good + marker + "\n"), marker
    assert readme_problems(good + "QUICK mode, FULL mode, MKL_FULLY\n") == []
    late = good.replace("make test        # quick\n", "") + "make test\n"
    assert "before the set-up commands" in readme_problems(late)[0]
    assert readme_problems(good.replace("make test ", "pytest "))
    assert readme_problems(good.replace("| paper |", "| method |"))


def test_readme_names_the_two_commands():
    readme = ROOT / "README.md"
    assert readme.is_file(), "README.md is missing"
    text = readme.read_text()
    assert "make reproduce" in text and "make test" in text
    problems = readme_problems(text)
    assert not problems, "README.md: " + "; ".join(problems)


def test_ci_runs_make_test():
    ci = ROOT / ".ci" / "run"
    assert ci.is_file(), ".ci/run is missing"
    commands = [line.strip() for line in ci.read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert "make test" in commands, ".ci/run must call `make test`"


# ----------------------------------------------------------------------------- the layout
HEAVY = ("pandas", "matplotlib", "seaborn", "joblib", "tqdm", "threadpoolctl", "dask",
         "distributed")


def test_import_mklcore_is_light():
    """``import mklcore`` in a fresh interpreter loads none of the reproduction stack."""
    import subprocess

    code = ("import sys, mklcore; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    assert out == "", f"import mklcore imported {out}"


def test_optional_engines_are_imported_lazily():
    """threadpoolctl and Dask are imported inside functions only: never at the top of a core
    module, and importing the experiment runner does not start dask."""
    import ast
    import subprocess

    def top_level_imports(path):
        names = []
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                names += [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.append(node.module.split(".")[0])
        return names

    lazy = {"threadpoolctl", "dask", "distributed"}
    offenders = [p.name for p in _core_files() if lazy & set(top_level_imports(p))]
    assert offenders == []
    code = ("import sys, mklcore.repro.experiments; "
            "print(','.join(m for m in ('dask', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    assert out == "", f"import mklcore.repro.experiments imported {out}"


def test_dask_extra_is_declared_and_tested():
    extras = read_pyproject()["project"]["optional-dependencies"]
    assert [parse_requirement(r)[0] for r in extras["dask"]] == ["dask"]
    assert set(extras["dask"]) <= set(extras["test"]), "make test installs the dask extra"
    core = [parse_requirement(r)[0] for r in read_pyproject()["project"]["dependencies"]]
    assert "threadpoolctl" in core


def readme_papermill_block(text):
    """The lines of the README's fenced block that runs papermill, or None."""
    for block in re.findall(r"^```(?:bash|sh)?\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if any("papermill " in line for line in lines):
            return lines
    return None


def papermill_command_problems(lines):
    """Why the README's papermill lines would fail on a fresh clone after ``make install``."""
    import shlex

    problems = []
    runs = [shlex.split(line.split(" #", 1)[0]) for line in lines if "papermill " in line]
    makedirs = [shlex.split(line)[2:] for line in lines if line.startswith("mkdir -p ")]
    venv = re.search(r"^VENV\s*\??=\s*(\S+)", (ROOT / "Makefile").read_text(), re.MULTILINE)
    exe = f"{venv.group(1) if venv else '.venv'}/bin/papermill"
    for i, argv in enumerate(runs):
        if argv[0] != exe:
            problems.append(f"papermill is not run from the venv ({argv[0]!r}, want {exe!r}: "
                            f"the README never activates .venv)")
        outputs = [a for a in argv[1:] if a.endswith(".ipynb")][1:2]
        for out in outputs:
            folder = str(Path(out).parent)
            made = any(folder == d or folder.startswith(d.rstrip("/") + "/")
                       for dirs in makedirs for d in dirs)
            if folder not in (".", "") and not made:
                problems.append(f"output folder {folder}/ is not created (mkdir -p) before "
                                f"papermill writes {out}")
        if "--cwd" not in argv:
            problems.append("papermill runs without --cwd (the notebooks expect the root)")
    return problems


def test_readme_papermill_line_works_on_a_fresh_clone():
    lines = readme_papermill_block((ROOT / "README.md").read_text())
    assert lines, "README.md shows no papermill command"
    assert papermill_command_problems(lines) == []
    bad = ["papermill notebooks/a.ipynb build/executed/a.ipynb -p QUICK False --cwd ."]
    assert len(papermill_command_problems(bad)) == 2


def _core_files():
    return [p for p in (ROOT / "mklcore").rglob("*.py") if "repro" not in p.parts]


def test_core_never_imports_repro():
    pattern = re.compile(r"^\s*(from\s+(mklcore)?\.*repro|import\s+mklcore\.repro)", re.M)
    offenders = [p.name for p in _core_files() if pattern.search(p.read_text())]
    assert offenders == []


def _private_imports(text, module_is_mklcore):
    """``from <mklcore module> import _name`` statements in a piece of Python source."""
    import ast

    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and module_is_mklcore(node):
            found += [f"from {'.' * node.level}{node.module or ''} import {a.name}"
                      for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_private_name_imported_across_modules():
    """Library, benchmarks, scripts and notebooks import no ``_private`` name of an mklcore
    module (tests may)."""
    import json

    def is_mklcore(node):
        return node.level > 0 or (node.module or "").split(".")[0] == "mklcore"

    texts = {p: p.read_text() for p in [*(ROOT / "mklcore").rglob("*.py"),
                                        *(ROOT / "benchmarks").glob("*.py"),
                                        *(ROOT / "scripts").glob("*.py")]}
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text())["cells"]
        texts[nb] = "\n".join("".join(c["source"]) for c in cells
                              if c["cell_type"] == "code" and not "".join(c["source"])
                              .lstrip().startswith(("%", "!")))
    offenders = [f"{path.relative_to(ROOT)}: {imp}" for path, text in texts.items()
                 for imp in _private_imports(text, is_mklcore)]
    assert offenders == [], "\n".join(offenders)


def test_no_reference_to_private_notes():
    """Nothing cites the implementation notes that are not part of the repository."""
    files = [p for ext in ("py", "ipynb", "md", "cfg", "toml", "yml")
             for p in ROOT.rglob(f"*.{ext}")
             if not {".git", ".venv", "build", "node_modules"} & set(p.parts)
             and p.name != "test_packaging.py"]
    pattern = re.compile(r"\bspec\s*(§|Sec\.|section|\w+\.md)|§|papers/\w+\.md|STYLE\.md|"
                         r"ADDENDA", re.I)
    offenders = sorted(str(p.relative_to(ROOT)) for p in files if pattern.search(p.read_text()))
    assert offenders == []


@pytest.mark.slow
def test_wheel_imports_solves_and_explains_missing_data(tmp_path):
    """A wheel built from the repository imports and solves; without a checkout the dataset
    loaders say in one line where the data must be."""
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(ROOT)], check=True,
                   capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("mklcore-*.whl")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(site), str(wheel)], check=True, capture_output=True)
    code = """
import numpy as np, mklcore
assert mklcore.__file__.startswith(SITE), mklcore.__file__
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = np.where(X[:, 0] > 0, 1, -1)
K = np.stack([X @ X.T, (X @ X.T + 1) ** 2])
res = mklcore.lpmkl_solve(K, y, p=2.0)
assert res.success, res.message
try:
    mklcore.load_ionosphere()
except FileNotFoundError as exc:
    print(exc)
""".replace("SITE", repr(str(site)))
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("MKLCORE_DATA_DIR", "MKLCORE_DATA_HOME", "PYTHONPATH")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={**env, "PYTHONPATH": str(site)})
    assert out.returncode == 0, out.stderr
    message = out.stdout.strip()
    assert "\n" not in message and "MKLCORE_DATA_HOME" in message and "checkout" in message


def test_citation_file_matches_the_package():
    """CITATION.cff (what the README asks to cite) states the package's version and licence."""
    text = (ROOT / "CITATION.cff").read_text()
    fields = dict(re.findall(r"^([a-z-]+):\s*(\S.*)$", text, re.M))
    assert fields["cff-version"] == "1.2.0" and "authors" in text
    assert fields["version"] == read_pyproject()["project"]["version"]
    assert fields["license"] == "BSD-3-Clause"
