#!/usr/bin/env python
"""Run the paper notebooks with papermill and print a summary table.

Examples
--------
Quick mode (the default; what CI checks with nbval)::

    python scripts/run_notebooks.py notebooks/*.ipynb

Full mode (``make reproduce``; writes ``figures/<paper_id>/``)::

    python scripts/run_notebooks.py --full notebooks/*.ipynb

Extra parameters are passed through as with papermill's ``-p``::

    python scripts/run_notebooks.py -p SEED 1 -p QUICK_OUT_DIR /tmp/q notebooks/quickstart.ipynb

Executed notebooks go to ``build/executed/<name>.ipynb``. A full run with the default
parameters writes its outputs to the staging folder ``build/staging/<name>/`` (see
:func:`mklcore.repro.notebook.setup_run`); only when the notebook ran to its end without error,
its checks included, are they moved into ``figures/<name>/``, together with the executed
notebook, figures embedded, as ``figures/<name>/<name>.ipynb`` (committed with the run), and,
when the outputs changed, ``figures/<name>/run.json`` records the run (date, commit, code and
environment fingerprints, machine, runtime, cells computed and cached). A failed run leaves
``figures/`` untouched.

While a notebook runs, its experiments (``mklcore.repro.experiments.run``) report their
progress through a file (``$MKLCORE_PROGRESS_FILE``, set here) and one line per
``--progress-interval`` seconds goes to stderr: cells done of total, elapsed, an estimate. Every notebook is run, even after a failure; the exit
status is 1 if any failed, 2 for a usage error (unknown notebook, unknown parameter name).

Set ``MKLCORE_DASK_SCHEDULER=tcp://host:8786`` (or ``local``) to run the experiment cells on a
Dask cluster (see ``mklcore.repro.experiments.run``); the kernels inherit it.
"""

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT_DIR = ROOT / "build" / "executed"
KERNEL_NAME = "python3"


#: environment variable through which the notebook kernel's experiment runner reports its
#: progress (``mklcore.repro.experiments.PROGRESS_FILE_ENV``; not imported, to keep start-up fast)
PROGRESS_FILE_ENV = "MKLCORE_PROGRESS_FILE"
#: default seconds between two progress lines printed while a notebook runs
PROGRESS_INTERVAL = 60.0

#: MIME type of the ipywidgets outputs (the tqdm progress bars) left out of published notebooks
PROGRESS_WIDGET = "application/vnd.jupyter.widget-view+json"

def resolve_value(value):
    """Convert a ``-p`` value the way papermill's CLI does (True/False/None, int, float, str)."""
    if value == "True":
        return True
    if value == "False":
        return False
    if value == "None":
        return None
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Execute notebooks with papermill (quick mode by default).",
        epilog="Exit status: 0 all passed, 1 some notebook failed, 2 usage error.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="quick", action="store_true", default=True,
                      help="run with QUICK=True (default): small grids, a few minutes in all")
    mode.add_argument("--full", dest="quick", action="store_false",
                      help="run with QUICK=False: the papers' protocols, writes figures/<paper_id>/")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"),
                        help="notebook parameter passed to papermill (repeatable); values are "
                             "converted like papermill's -p (True/False/None/int/float/str)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per cell (default: none)")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR,
                        help="where executed notebooks go (default: build/executed)")
    parser.add_argument("--log-output", action="store_true",
                        help="stream the notebooks' cell outputs to this terminal")
    parser.add_argument("--progress-interval", type=float, default=PROGRESS_INTERVAL,
                        metavar="SECONDS",
                        help="while an experiment of a notebook runs, print its progress "
                             "(cells done of total, elapsed, estimate) every SECONDS "
                             f"(default: {PROGRESS_INTERVAL:g}; 0: never)")
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebooks to run")
    args = parser.parse_args(argv)
    for name, _ in args.parameter:
        if name == "QUICK":
            parser.error("set QUICK with --quick/--full, not with -p")
    return parser, args


def check_parameter_names(parser, notebooks, parameters):
    """Fail early (exit 2) when a ``-p`` name is not declared by a notebook.

    papermill itself only warns about unknown parameters and runs anyway, which would silently
    ignore a typo such as ``-p SEEDS 1``.
    """
    import papermill

    for path in notebooks:
        if not path.is_file():
            parser.error(f"notebook not found: {path}")
        declared = papermill.inspect_notebook(str(path))
        unknown = sorted(set(parameters) - set(declared))
        if unknown:
            parser.error(f"{path}: unknown notebook parameter(s) {', '.join(unknown)}; "
                         f"it declares {', '.join(sorted(declared)) or 'none'} "
                         f"(see: papermill --help-notebook {path})")
        if "QUICK" not in declared:
            parser.error(f"{path}: has no QUICK parameter in a cell tagged 'parameters'")


def merge_streams(outputs):
    """Join consecutive stream outputs of the same name (stdout, stderr) into one.

    The kernel flushes printed text in chunks whose boundaries depend on timing, so one
    ``print`` can arrive as one output or as two; joined, a rerun gives the same notebook.
    """
    merged = []
    for out in outputs:
        if (merged and out.get("output_type") == "stream"
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] = merged[-1]["text"] + out["text"]
        else:
            merged.append(out)
    return merged


def publish_executed(executed, folder):
    """Copy an executed full-run notebook, outputs and figures kept, into ``folder``.

    The copy is what a reader sees on the repository page beside ``REPORT.md``: papermill's
    timing metadata and the progress bars (widgets whose state holds elapsed times) are
    dropped, since they change on every run, and consecutive chunks of printed text are
    joined (:func:`merge_streams`); every other cell output stays.

    Parameters
    ----------
    executed : Path
        The notebook papermill wrote.
    folder : Path
        The run's output folder (the staging folder of :func:`publish_outputs`).

    Returns
    -------
    path : Path
        ``folder / executed.name``.
    """
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    nb.metadata.pop("papermill", None)
    nb.metadata.pop("widgets", None)  # progress-bar state: elapsed times, no result
    for cell in nb.cells:
        for key in ("papermill", "execution", "ExecuteTime"):
            cell.metadata.pop(key, None)
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.id = "injected-parameters"  # papermill draws a random id on every run
        if cell.cell_type == "code":
            cell.outputs = merge_streams([out for out in cell.outputs
                                          if PROGRESS_WIDGET not in out.get("data", {})])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / executed.name
    nbformat.write(nb, path)
    return path


def publish_outputs(paper_id, executed, error, prefix, runtime=None, cells=None):
    """After a full run: move the staged outputs into ``figures/<paper_id>/`` if it succeeded.

    ``figures/<paper_id>/run.json`` (committed) then records this run's date, commit,
    environment, ``runtime`` and ``cells`` if the run changed a committed output
    (:func:`mklcore.repro.notebook.publish_run`).

    Parameters
    ----------
    paper_id : str
        Notebook name without ``.ipynb``.
    executed : Path
        The notebook papermill wrote.
    error : Exception or None
        What the run raised (``None``: it finished, its checks passed).
    prefix : str
        Start of the printed lines, e.g. ``"[1/6]"``.
    runtime : float, default=None
        Wall-clock seconds of the notebook run.
    cells : dict, default=None
        Experiment cells ``{"computed": n, "cached": m}`` of the run.

    Returns
    -------
    moved : list of Path
        Files now in ``figures/<paper_id>/`` (empty after a failure).
    """
    from mklcore.repro.notebook import publish_run, staging_dir

    stage = staging_dir(paper_id, ROOT)
    if error is not None:
        if stage.is_dir():
            print(f"{prefix} figures/{paper_id}/ left unchanged; the failed run's outputs are "
                  f"in {os.path.relpath(stage, Path.cwd())}/", flush=True)
        return []
    publish_executed(executed, stage)
    moved = publish_run(paper_id, ROOT, runtime=runtime, cells=cells)
    record = ("run.json updated: the outputs changed" if any(p.name == "run.json" for p in moved)
              else "outputs unchanged, run.json kept")
    print(f"{prefix} {len(moved)} output file(s), the executed notebook with its figures among "
          f"them -> {os.path.relpath(ROOT / 'figures' / paper_id, Path.cwd())}/ ({record})",
          flush=True)
    return moved


def quiet_kernel_manager(log_path):
    """A kernel manager whose kernel writes its own stderr (start-up notices, and the socket
    errors of an interrupted run) to ``log_path`` instead of this terminal."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw.setdefault("stderr", open(log_path, "w"))  # noqa: SIM115 - the kernel owns it
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    return QuietKernelManager


def progress_line(record, now, prefix, notebook_elapsed):
    """One line saying how far the notebook's current experiment is.

    Parameters
    ----------
    record : dict
        The progress record the kernel's experiment runner wrote
        (``mklcore.repro.experiments.run``): ``desc``, ``done``, ``total``, ``cached``,
        ``started``, ``updated``, ``finished``.
    now : float
        The current ``time.time()``.
    prefix : str
        Start of the line, e.g. ``"[3/7] gonen2008_lmkl"``.
    notebook_elapsed : float
        Seconds since the notebook started.

    Returns
    -------
    line : str
        E.g. ``[3/7] gonen2008_lmkl, 12m04.0s: Table 1: 120 of 400 cells (30 from the
        cache), 5m10.0s in this step, about 16 min left``. The estimate assumes the remaining
        cells take as long as the ones computed so far.
    """
    done, total, cached = int(record["done"]), int(record["total"]), int(record["cached"])
    end = record["updated"] if record.get("finished") else now
    elapsed = max(0.0, end - float(record["started"]))
    text = (f"{prefix}, {format_runtime(notebook_elapsed)}: {record['desc']}: {done} of "
            f"{total} cells")
    if cached:
        text += f" ({cached} from the cache)"
    text += f", {format_runtime(elapsed)} in this step"
    if record.get("finished"):
        return text + ", done"
    computed = done - cached
    if computed > 0:
        left = (total - done) * elapsed / computed
        return text + f", about {format_estimate(left)} left"
    return text + ", no estimate before its first cell"


class ProgressPrinter:
    """Print the progress of a notebook's experiments to this terminal while it runs.

    The notebook kernel is a separate process whose printed output goes into the notebook;
    its experiment runner (``mklcore.repro.experiments.run``) writes a small JSON record to the
    file named by ``$MKLCORE_PROGRESS_FILE`` instead, which a thread of this process reads
    every ``poll`` seconds. Every ``interval`` seconds during which an experiment ran, one
    :func:`progress_line` goes to ``stream`` (through ``tqdm.write``, so that papermill's
    progress bar is redrawn below it); a notebook whose experiments take less than
    ``interval`` prints nothing more than before. Nothing is added to the notebook.

    Use as a context manager around ``papermill.execute_notebook``.
    """

    def __init__(self, path, prefix, interval=PROGRESS_INTERVAL, poll=1.0, stream=None):
        self.path, self.prefix, self.interval, self.poll = Path(path), prefix, interval, poll
        self.stream = stream
        self.started = time.time()
        self.last_print = self.started
        self.printed = None  # the record of the last line printed
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.watch, name="progress", daemon=True)

    def __enter__(self):
        self.path.unlink(missing_ok=True)  # a record of an earlier run is not this run's
        self.previous = os.environ.get(PROGRESS_FILE_ENV)
        os.environ[PROGRESS_FILE_ENV] = str(self.path)  # the kernel inherits it
        if self.interval > 0:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
        if self.previous is None:
            os.environ.pop(PROGRESS_FILE_ENV, None)
        else:
            os.environ[PROGRESS_FILE_ENV] = self.previous
        return False

    def read(self):
        """The kernel's last progress record, or ``None`` (none yet, or unreadable)."""
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def check(self, now=None):
        """Print a line if an experiment ran during the last ``interval`` seconds."""
        now = time.time() if now is None else now
        if now - self.last_print < self.interval:
            return None
        record = self.read()
        if record is None or (record.get("finished") and record == self.printed):
            return None  # nothing ran since the last line
        try:
            line = progress_line(record, now, self.prefix, now - self.started)
        except (KeyError, TypeError, ValueError):
            return None
        self.last_print, self.printed = now, record
        self.write(line)
        return line

    def write(self, line):
        stream = self.stream or sys.stderr
        try:
            from tqdm import tqdm

            tqdm.write(line, file=stream)
        except ImportError:  # pragma: no cover - tqdm comes with papermill
            print(line, file=stream, flush=True)

    def watch(self):
        while not self.stop.wait(self.poll):
            self.check()


def run_one(path, output, parameters, args, prefix=None):
    import papermill

    start = time.perf_counter()
    error = None
    printer = ProgressPrinter(output.with_suffix(".progress.json"), prefix or path.stem,
                              interval=args.progress_interval)
    try:
        with printer:
            papermill.execute_notebook(
                str(path), str(output), parameters=parameters, kernel_name=KERNEL_NAME,
                cwd=str(ROOT), progress_bar=True, log_output=args.log_output,
                execution_timeout=args.timeout,
                kernel_manager_class=quiet_kernel_manager(output.with_suffix(".kernel.log")))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # report and go on with the next notebook
        error = exc
    seconds = time.perf_counter() - start
    session = (printer.read() or {}).get("session")
    cells = ({"computed": session["computed"], "cached": session["cached"]}
             if isinstance(session, dict) else None)
    return seconds, error, cells


def format_runtime(seconds):
    minutes, sec = divmod(seconds, 60)
    return f"{int(minutes)}m{sec:04.1f}s" if minutes else f"{sec:.1f}s"


def format_estimate(seconds):
    """A rough duration: ``"40 s"``, ``"3 min"``, ``"1 h 05 min"``."""
    if seconds < 60:
        return f"{int(round(seconds))} s"
    minutes = int(round(seconds / 60))
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def format_table(rows):
    header = ("notebook", "mode", "status", "runtime")
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip(),
             "-|-".join("-" * w for w in widths)]
    lines += [" | ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def main(argv=None):
    parser, args = parse_args(argv)
    # the kernels inherit these: figures embedded in the executed notebooks (the inline
    # backend), stable hashing (set by the Makefile too)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    os.environ.setdefault("PYTHONHASHSEED", "0")
    notebooks = [p.resolve() for p in args.notebooks]
    extra = {name: resolve_value(value) for name, value in args.parameter}
    check_parameter_names(parser, notebooks, extra)
    parameters = {"QUICK": args.quick, **extra}
    mode = "quick" if args.quick else "full"
    output_dir = args.output_dir if args.output_dir.is_absolute() else Path.cwd() / args.output_dir
    output_dir.mkdir(parents=True, exist_ok=True)

    rows, failures = [], []
    try:
        run_all(notebooks, parameters, args, output_dir, mode, rows, failures)
    except KeyboardInterrupt:
        done = ", ".join(r[0] for r in rows) or "none"
        resume = "make reproduce" if not args.quick else "the same command"
        sys.stderr.write(
            f"\nInterrupted. Finished notebooks: {done}. Finished cells of full runs are cached "
            f"under build/cache/; {resume} resumes from them.\n")
        return 130

    print()
    print(format_table(rows))
    for shown, error in failures:
        print(f"\n=== {shown} failed ===\n{error}", file=sys.stderr)
    if failures:
        print(f"\n{len(failures)} of {len(rows)} notebook(s) failed; executed copies with the "
              f"traceback are in {os.path.relpath(output_dir, Path.cwd())}/", file=sys.stderr)
    return 1 if failures else 0


def run_all(notebooks, parameters, args, output_dir, mode, rows, failures):
    """Run every notebook, appending ``(name, mode, status, runtime)`` rows and failures."""
    for i, path in enumerate(notebooks, 1):
        output = output_dir / path.name
        shown = os.path.relpath(path, Path.cwd())
        params = " ".join(f"{k}={v!r}" for k, v in parameters.items())
        print(f"[{i}/{len(notebooks)}] {shown} ({mode}; {params}) -> "
              f"{os.path.relpath(output, Path.cwd())}", flush=True)
        seconds, error, cells = run_one(path, output, parameters, args,
                                        prefix=f"[{i}/{len(notebooks)}] {path.stem}")
        status = "ok" if error is None else "FAILED"
        if not args.quick and set(parameters) == {"QUICK"}:
            publish_outputs(path.stem, output, error, f"[{i}/{len(notebooks)}]",
                            runtime=seconds, cells=cells)
        rows.append((shown, mode, status, format_runtime(seconds)))
        if error is not None:
            failures.append((shown, error))
            print(f"[{i}/{len(notebooks)}] {shown} FAILED after {format_runtime(seconds)}: "
                  f"{type(error).__name__}", flush=True)
        else:
            print(f"[{i}/{len(notebooks)}] {shown} ok in {format_runtime(seconds)}", flush=True)


def _quiet_interrupts():
    """Ctrl-C: one message from :func:`main`, no tracebacks from papermill's threads."""
    import logging
    import threading

    for name in ("papermill", "traitlets", "asyncio"):  # asyncio: "Task exception was never
        logging.getLogger(name).setLevel(logging.CRITICAL)  # retrieved" of the killed cell
    threading.excepthook = lambda info: None if issubclass(
        info.exc_type, (KeyboardInterrupt, SystemExit)) else threading.__excepthook__(info)


if __name__ == "__main__":
    _quiet_interrupts()
    try:
        status = main()
    except KeyboardInterrupt:  # during start-up or the final table
        sys.stderr.write("\nInterrupted.\n")
        status = 130
    sys.exit(status)
