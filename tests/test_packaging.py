"""Packaging consistency: environment.yml mirrors pyproject.toml; licence, README and CI entry.

``pyproject.toml`` is the source of truth (STYLE.md §8). ``environment.yml`` is read with a
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
EXTRAS = ("notebooks", "test")
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
        "environment.yml must end with pip install -e .[notebooks,test]")


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
