"""Build the mklcore book: stage its sources under ``build/book/src``, then run Sphinx.

Usage, from the repository root (``make book`` does this)::

    python docs/build_book.py            # writes build/book/html/index.html

The staged source tree holds the hand-written pages of ``docs/`` (``*.md``, ``*.rst``) plus, copied from the
repository, the executed full-run notebooks ``figures/<paper_id>/<paper_id>.ipynb`` (one page
per paper, rendered as committed: nothing is executed), each paper's ``REPORT.md`` with its
figures, the README's paper table with its links pointed at those pages, and an
execution-status page (:func:`status_page`) from each run's ``run.json`` and ``summary.csv``. Files are copied
only when their content changed, so a second build is incremental.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: hand-written pages of docs/ that are not part of the book
NOT_PAGES = {"README.md"}
ROW_LINK = re.compile(r"\]\(([^)]+)\)")
NOTEBOOK_LINK = re.compile(r"^notebooks/(\w+)\.ipynb$")
REPORT_LINK = re.compile(r"^figures/(\w+)/REPORT\.md$")
WIDGET = "application/vnd.jupyter.widget-view+json"


def write_if_changed(path, data):
    """Write ``data`` (bytes) to ``path`` unless it already holds exactly that.

    Parameters
    ----------
    path : pathlib.Path
        Destination file; its folder is created if needed.
    data : bytes
        Content to write.

    Returns
    -------
    bool
        True when the file was (re)written.
    """
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def without_progress_bars(notebook):
    """The executed notebook without its progress-bar outputs, as JSON bytes.

    The progress bars are ipywidgets whose final state needs a widget manager loaded from a
    CDN (a static page would show them at 0 %); they carry no result, so the book leaves them
    out together with the notebook's saved widget state. Every other output is kept as is.

    Parameters
    ----------
    notebook : pathlib.Path
        An executed ``.ipynb`` file.

    Returns
    -------
    bytes
        The notebook, UTF-8 JSON.
    """
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        if "outputs" in cell:
            cell["outputs"] = [out for out in cell["outputs"]
                               if WIDGET not in out.get("data", {})]
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def paper_table(readme_text):
    """The README's paper table with its links pointed at the book's pages.

    Parameters
    ----------
    readme_text : str
        Text of ``README.md``.

    Returns
    -------
    table : str
        The Markdown table (header, rule and one row per paper): a link to
        ``notebooks/<id>.ipynb`` is kept (the book has its page at the same path) and
        ``figures/<id>/REPORT.md`` becomes ``reports/<id>/REPORT.md``.
    paper_ids : list of str
        The papers in the table's order.
    """
    lines = readme_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| paper |"))
    stop = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")),
                len(lines))
    paper_ids = []

    def relink(match):
        target = match.group(1)
        notebook, report = NOTEBOOK_LINK.match(target), REPORT_LINK.match(target)
        if notebook:
            paper_ids.append(notebook.group(1))
            return match.group(0)
        if report:
            return f"](reports/{report.group(1)}/REPORT.md)"
        raise ValueError(f"README paper table: no book page for the link {target!r}")

    table = "\n".join(ROW_LINK.sub(relink, line) for line in lines[start:stop])
    return table + "\n", paper_ids


def report_text(report):
    """A ``REPORT.md`` for the book: the link to the git-ignored ``runtime.json`` becomes text.

    ``runtime.json`` (wall-clock time, git commit, cache use) is written beside the report by
    every run and never committed, so the book has no page for it.

    Parameters
    ----------
    report : pathlib.Path
        A ``figures/<id>/REPORT.md``.

    Returns
    -------
    str
        Its Markdown with ``[`runtime.json`](runtime.json)`` written as ``runtime.json``.
    """
    return report.read_text(encoding="utf-8").replace("[`runtime.json`](runtime.json)",
                                                      "`runtime.json`")


STATUS_INTRO = """\
# Execution status

Every paper page of this book is the executed notebook of a committed full run
(`make reproduce`); nothing is executed when the book is built. This page says, for each
notebook, when and how that run was made, from the run's own files: `run.json`, which the run
writes beside its outputs in `figures/<paper_id>/` (committed) when it changed them, and the
claims of its `summary.csv`. A rerun that reproduces the committed outputs byte for byte keeps
the record of the run that produced them, so that reruns leave git clean; every run, whatever
it changed, also writes its wall-clock time, commit and machine to `runtime.json` beside them,
which git ignores.

* **commit**: the git commit the run started from (*modified*: the notebook or `mklcore/`
  differed from it; *committed*: a run published before `run.json` existed, shown with the
  commit and date that last changed its folder in git); **code**: the fingerprint of mklcore's
  code (sha256 of its modules), which the experiment cache is keyed on.
* **environment**: a fingerprint of Python and the numerical dependencies (numpy, scipy,
  scikit-learn, cvxpy, numba and the BLAS in use with its CPU kernel), the other part of the
  cache keys; the table *Environments* below lists its versions.
* **runtime**: wall-clock time of the whole notebook; **cells**: experiment cells computed,
  and loaded from the cache of an earlier run (a run from the cache is much faster than a cold
  one).
* **claims held**: claims of the paper our run supports, of those checked (*inconclusive*: the
  test could not decide).
"""


def _format_seconds(seconds):
    """``"3 min 43 s"``, ``"12 s"`` or ``"–"``."""
    if not isinstance(seconds, (int, float)):
        return "–"
    minutes, sec = divmod(int(round(seconds)), 60)
    return f"{minutes} min {sec:02d} s" if minutes else f"{sec} s"


def _git_last_change(folder):
    """``(short commit, date)`` of the last commit that changed ``folder``, or ``None``."""
    try:
        out = subprocess.run(["git", "log", "-1", "--date=format-local:%Y-%m-%d %H:%M",
                              "--format=%h %cd", "--", str(folder)], cwd=ROOT,
                             capture_output=True, text=True, timeout=10, check=False,
                             env={**os.environ, "TZ": "UTC"})
    except (OSError, subprocess.SubprocessError):
        return None
    commit, _, date = out.stdout.strip().partition(" ")
    return (commit, date) if out.returncode == 0 and commit else None


def _blas_text(blas):
    return "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')})"
                     for b in blas or []) or "–"


def status_page(paper_ids, figures=None):
    """The Markdown of the book's execution-status page.

    Parameters
    ----------
    paper_ids : list of str
        The notebooks, in the book's order.
    figures : pathlib.Path, optional
        Folder of the committed runs (default: ``figures/`` of the repository).

    Returns
    -------
    str
        One table row per notebook (date, commit, environment fingerprint, runtime, claims
        held), a second (code fingerprint, cells computed and cached, machine), both from
        ``figures/<id>/run.json`` and ``summary.csv``, then one row per environment fingerprint
        with its versions. A notebook without
        ``run.json`` (a run published before it existed) shows the commit and date that last
        changed its folder in git, marked *committed*, and the runtime of the git-ignored
        ``runtime.json`` if present, marked *latest local run*.
    """
    from mklcore.repro.reporting import RUN_FILE, RUNTIME_FILE, claims_held

    figures = ROOT / "figures" if figures is None else Path(figures)
    rows, details, environments = [], [], {}
    for pid in paper_ids:
        folder = figures / pid
        record = {}
        if (folder / RUN_FILE).is_file():
            record = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        if record:
            date = str(record.get("date", "–")).replace("T", " ").rstrip("Z")
            commit = f"`{str(record.get('commit', 'unknown'))[:7]}`"
            if record.get("source_modified"):
                commit += " (modified)"
            code = f"`{record.get('code', '–')}`"
            env = record.get("environment") or {}
            fingerprint = env.get("fingerprint")
            if fingerprint:
                environments.setdefault(fingerprint, env.get("versions") or {})
            environment = f"`{fingerprint}`" if fingerprint else "–"
            machine = record.get("machine") or {}
            machine = (f"{machine.get('platform', '–')}, {machine.get('n_cpus', '?')} cores"
                       if machine else "–")
            runtime = _format_seconds(record.get("runtime_s"))
            cells = record.get("cells") or {}
            cells = (f"{cells.get('computed', '?')} computed, {cells.get('cached', '?')} cached"
                     if cells else "–")
        else:
            change = _git_last_change(folder)
            commit, date = ((f"`{change[0]}` (committed)", change[1]) if change
                            else ("–", "–"))
            code = cells = machine = "– (no run.json)"
            environment = "–"
            runtime = "–"
            if (folder / RUNTIME_FILE).is_file():
                latest = json.loads((folder / RUNTIME_FILE).read_text(encoding="utf-8"))
                if isinstance(latest.get("runtime_s"), (int, float)):
                    runtime = f"{_format_seconds(latest['runtime_s'])} (latest local run)"
        claims = "–"
        if (folder / "summary.csv").is_file():
            counts = claims_held(folder / "summary.csv")
            if counts["total"]:
                claims = f"{counts['held']} of {counts['total']}"
                if counts["inconclusive"]:
                    claims += f", {counts['inconclusive']} inconclusive"
        link = f"[{pid}](notebooks/{pid}.ipynb)"
        rows.append(f"| {link} | {date} | {commit} | {environment} | {runtime} | {claims} |")
        details.append(f"| {pid} | {code} | {cells} | {machine} |")
    lines = [STATUS_INTRO, "## Runs", "",
             "| notebook | date (UTC) | commit | environment | runtime | claims held |",
             "|---|---|---|---|---:|---|", *rows, "",
             "## Code, cells and machine", "",
             "| notebook | code | cells | machine |", "|---|---|---|---|", *details, ""]
    lines += ["## Environments", ""]
    if environments:
        names = ["python", "numpy", "scipy", "scikit-learn", "cvxpy", "numba"]
        lines += ["| environment | " + " | ".join(names) + " | BLAS |",
                  "|---" * (len(names) + 2) + "|"]
        for fingerprint, versions in sorted(environments.items()):
            lines.append(f"| `{fingerprint}` | "
                         + " | ".join(str(versions.get(n, "–")) for n in names)
                         + f" | {_blas_text(versions.get('blas'))} |")
    else:
        lines.append("No committed run has a `run.json` yet: the next `make reproduce` writes "
                     "them.")
    return "\n".join(lines) + "\n"


def stage(src):
    """Copy the book's sources into ``src`` and return the paper ids.

    Only files whose content changed are rewritten, and files that are no longer part of the
    book are deleted, so Sphinx rebuilds exactly what changed.

    Parameters
    ----------
    src : pathlib.Path
        Sphinx source folder to fill.

    Returns
    -------
    list of str
        Paper ids in the README's order.
    """
    files = {}
    for page in [*DOCS.glob("*.md"), *DOCS.glob("*.rst")]:
        if page.name not in NOT_PAGES:
            files[page.name] = page.read_bytes()
    table, paper_ids = paper_table((ROOT / "README.md").read_text(encoding="utf-8"))
    files["_paper_table.md"] = table.encode()
    toc = "\n".join(f"notebooks/{pid}" for pid in paper_ids)
    reports = "\n".join(f"reports/{pid}/REPORT" for pid in paper_ids)
    files["_toc.md"] = (
        f"```{{toctree}}\n:caption: Papers\n:maxdepth: 1\n\n{toc}\n```\n\n"
        f"```{{toctree}}\n:caption: Reports\n:maxdepth: 1\n\n{reports}\n```\n\n"
        "```{toctree}\n:caption: Runs\n:maxdepth: 1\n\nstatus\n```\n\n"
        "```{toctree}\n:caption: API reference\n:maxdepth: 2\n\napi\napi_repro\n```\n"
    ).encode()
    files["status.md"] = status_page(paper_ids).encode("utf-8")
    for pid in paper_ids:
        folder = ROOT / "figures" / pid
        notebook = folder / f"{pid}.ipynb"
        if not notebook.is_file():
            raise FileNotFoundError(f"{notebook} is missing: run `make reproduce-{pid}`")
        files[f"notebooks/{pid}.ipynb"] = without_progress_bars(notebook)
        files[f"reports/{pid}/REPORT.md"] = report_text(folder / "REPORT.md").encode("utf-8")
        for item in sorted(folder.glob("*.png")):
            files[f"reports/{pid}/{item.name}"] = item.read_bytes()
    for name, data in files.items():
        write_if_changed(src / name, data)
    for path in sorted(src.rglob("*"), reverse=True):
        rel = path.relative_to(src).as_posix()
        if path.is_file() and rel not in files:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return paper_ids


def build(out=ROOT / "build" / "book", quiet=True):
    """Stage the sources and build the HTML book.

    Parameters
    ----------
    out : pathlib.Path, optional
        Build folder; the site is written to ``out / "html"``.
    quiet : bool, optional
        Pass ``-q`` to Sphinx (only warnings and errors are printed).

    Returns
    -------
    pathlib.Path
        The site's ``index.html``.
    """
    out = Path(out)
    src, html = out / "src", out / "html"
    # Sphinx does not see a change of the configuration's functions: rebuild all when the
    # configuration or this script changed since the last build
    stamp = out / "config.sha256"
    digest = hashlib.sha256((DOCS / "conf.py").read_bytes()
                            + Path(__file__).read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        shutil.rmtree(html, ignore_errors=True)
        shutil.rmtree(out / "doctrees", ignore_errors=True)
    stage(src)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(DOCS),
           "-d", str(out / "doctrees"), str(src), str(html)]
    subprocess.run(cmd + (["-q"] if quiet else []), check=True, cwd=ROOT)
    stamp.write_text(digest)
    return html / "index.html"


def main(argv=None):
    """Command-line entry point: build the book and print where it is and how long it took.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    parser.add_argument("--clean", action="store_true", help="delete the build folder first")
    args = parser.parse_args(argv)
    if args.clean:
        shutil.rmtree(args.out, ignore_errors=True)
    start = time.perf_counter()
    index = build(args.out)
    print(f"book built in {time.perf_counter() - start:.1f} s: open {index}")


if __name__ == "__main__":
    main()
