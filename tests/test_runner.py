"""The notebook runner ``scripts/run_notebooks.py``: parameter parsing, its progress lines, and
whole runs in a tiny project (publishing only after the checks pass, Ctrl-C).

Split from ``test_notebooks.py`` so that ``make test``'s two processes (``--dist loadscope``
keeps a module in one process) can run these slow runs beside the other notebook tests.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUNNER = ROOT / "scripts" / "run_notebooks.py"
KERNEL_NAME = "python3"


def load_runner():
    spec = importlib.util.spec_from_file_location("run_notebooks", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runner_resolves_values_like_papermill():
    runner = load_runner()
    assert [runner.resolve_value(v) for v in ("True", "False", "None", "3", "0.5", "false", "x")] == [
        True, False, None, 3, 0.5, "false", "x"]


def test_runner_joins_printed_chunks():
    runner = load_runner()
    out = [nbformat.v4.new_output("stream", name="stdout", text="wrote REPORT.md"),
           nbformat.v4.new_output("stream", name="stdout", text="\n"),
           nbformat.v4.new_output("stream", name="stderr", text="warn\n"),
           nbformat.v4.new_output("display_data", data={"text/plain": "x"}),
           nbformat.v4.new_output("stream", name="stdout", text="after\n")]
    merged = runner.merge_streams(out)
    assert [o.get("name") for o in merged] == ["stdout", "stderr", None, "stdout"]
    assert merged[0]["text"] == "wrote REPORT.md\n"


def test_runner_table():
    runner = load_runner()
    table = runner.format_table([("notebooks/a.ipynb", "full", "ok", "1m02.0s")])
    lines = table.splitlines()
    assert lines[0].split(" | ")[:3] == ["notebook         ", "mode", "status"]
    assert "notebooks/a.ipynb | full | ok     | 1m02.0s" in lines[2]
    assert runner.format_runtime(62.0) == "1m02.0s" and runner.format_runtime(3.25) == "3.2s"


def test_runner_progress_line():
    runner = load_runner()
    record = {"desc": "Table 1", "done": 130, "total": 400, "cached": 30, "started": 1000.0,
              "updated": 1290.0, "finished": False}
    line = runner.progress_line(record, 1300.0, "[3/7] gonen", 724.0)
    assert line == ("[3/7] gonen, 12m04.0s: Table 1: 130 of 400 cells (30 from the cache), "
                    "5m00.0s in this step, about 14 min left")  # 270 cells at 3 s each
    first = runner.progress_line({**record, "done": 30}, 1010.0, "[1/1] x", 10.0)
    assert first.endswith("no estimate before its first cell")
    done = runner.progress_line({**record, "done": 400, "finished": True}, 5000.0, "x", 9.0)
    assert done.endswith("4m50.0s in this step, done")  # the step's own time, not now's
    assert [runner.format_estimate(s) for s in (40.4, 179, 3900)] == ["40 s", "3 min",
                                                                     "1 h 05 min"]


def test_runner_progress_printer_prints_every_interval(tmp_path):
    import io

    runner = load_runner()
    stream = io.StringIO()
    printer = runner.ProgressPrinter(tmp_path / "p.json", "[1/1] nb", interval=60, stream=stream)
    t0 = printer.started
    assert printer.check(t0 + 120) is None  # no experiment has started: nothing to say
    record = {"desc": "grid", "done": 2, "total": 10, "cached": 0, "started": t0 + 100,
              "updated": t0 + 130, "finished": False}
    (tmp_path / "p.json").write_text(json.dumps(record))
    assert printer.check(t0 + 150).startswith("[1/1] nb, 2m30.0s: grid: 2 of 10 cells")
    assert printer.check(t0 + 180) is None  # less than the interval since the last line
    assert stream.getvalue().count("\n") == 1
    (tmp_path / "p.json").write_text(json.dumps({**record, "done": 10, "finished": True}))
    assert printer.check(t0 + 211).endswith(", done")
    assert printer.check(t0 + 300) is None  # a finished run is printed once
    with printer:  # the kernel finds the file through the environment
        assert os.environ[runner.PROGRESS_FILE_ENV] == str(tmp_path / "p.json")
        assert not (tmp_path / "p.json").exists()  # an earlier run's record is removed
    assert runner.PROGRESS_FILE_ENV not in os.environ


@pytest.mark.skipif(not NOTEBOOKS, reason="no notebooks")
def test_runner_rejects_unknown_parameter_name():
    proc = subprocess.run([sys.executable, str(RUNNER), "-p", "SEEDS", "1", str(NOTEBOOKS[0])],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "unknown notebook parameter(s) SEEDS" in proc.stderr


def test_runner_rejects_quick_as_parameter():
    proc = subprocess.run([sys.executable, str(RUNNER), "-p", "QUICK", "False", "x.ipynb"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "--quick/--full" in proc.stderr


@pytest.mark.slow
def test_runner_interrupt_prints_one_message_and_exits_130(tmp_path):
    """Ctrl-C during a run: exit status 130, a few lines, no tracebacks."""
    import signal
    import time

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "language": "python",
                                 "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell("QUICK = True", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import time\ntime.sleep(120)")]
    path = tmp_path / "sleepy.ipynb"
    nbformat.write(nb, path)
    proc = subprocess.Popen(
        [sys.executable, str(RUNNER), "--output-dir", str(tmp_path / "out"), str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
        start_new_session=True, env={**os.environ, "TQDM_DISABLE": "1"},
        # as in a terminal: a shell starts background jobs with SIGINT ignored, and a child
        # that inherits SIG_IGN never sees Ctrl-C (CI may run the tests that way)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    out_path = tmp_path / "out" / "sleepy.ipynb"

    def sleeping():
        """Whether papermill has marked the sleep cell as running (a cold kernel can take
        several seconds to start: an interrupt before that would test something else)."""
        try:
            cells = json.loads(out_path.read_text())["cells"]
        except (OSError, ValueError, KeyError):  # not written yet, or being written
            return False
        return cells[-1].get("metadata", {}).get("papermill", {}).get("status") == "running"

    deadline = time.monotonic() + 90
    while not sleeping() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
    assert sleeping(), "the notebook never reached its sleep cell"
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    lines = out.strip().splitlines()
    assert proc.returncode == 130, out
    assert len(lines) <= 5 and "Traceback" not in out, out
    assert "Interrupted" in lines[-1]


@pytest.mark.slow
def test_runner_publishes_figures_only_after_the_checks_pass(tmp_path):
    """``run_notebooks.py --full`` in a tiny project: the notebook that fails at its last cell
    (its checks) leaves ``figures/bad/`` as committed; the one that passes replaces
    ``figures/good/``, executed notebook included. REPORT.md is the same on a rerun; the
    runtime goes to the git-ignored runtime.json."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "notebooks").mkdir()
    (project / "mklcore").mkdir()  # what project_root() looks for; the package comes from
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")  # the environment
    shutil.copy(RUNNER, project / "scripts" / RUNNER.name)
    for name, check in (("good", "assert RESULT == 1"), ("bad", "assert RESULT == 2")):
        committed = project / "figures" / name
        committed.mkdir(parents=True)
        (committed / "REPORT.md").write_text("committed report\n")
        (committed / "fig.svg").write_text("committed figure\n")
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "language": "python",
                                     "display_name": "Python 3"}
        nb.cells = [
            nbformat.v4.new_code_cell("QUICK = True", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell(
                "import time\n"
                "from mklcore.repro.notebook import setup_run\n"
                "from mklcore.repro.reporting import write_report\n"
                f"out_dir = setup_run({name!r}, QUICK)\n"
                "RESULT = 1\n"
                "(out_dir / 'fig.svg').write_text('new figure\\n')\n"
                "write_report(out_dir, title='demo', env={'python': '3', 'git_commit': 'x'},\n"
                "             runtime=time.perf_counter())"),
            nbformat.v4.new_code_cell(check),
        ]
        if name == "good":  # a long cell: its experiment's progress goes to the terminal
            nb.cells.insert(2, nbformat.v4.new_code_cell(
                "from mklcore.repro.experiments import run\n"
                "def slow(*, k, repeat, seed):\n"
                "    time.sleep(0.4)\n"
                "    return {'x': k}\n"
                "_ = run(slow, [{'k': k} for k in range(8)], desc='slow grid')"))
        nbformat.write(nb, project / "notebooks" / f"{name}.ipynb")

    def run_full(*names):
        return subprocess.run(
            [sys.executable, str(project / "scripts" / RUNNER.name), "--full",
             "--progress-interval", "0.5", *(f"notebooks/{name}.ipynb" for name in names)],
            capture_output=True, text=True, cwd=project, timeout=300,
            env={**os.environ, "TQDM_DISABLE": "1"})

    proc = run_full("good", "bad")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    bad = project / "figures" / "bad"
    assert sorted(p.name for p in bad.iterdir()) == ["REPORT.md", "fig.svg"]
    assert (bad / "REPORT.md").read_text() == "committed report\n"
    assert (bad / "fig.svg").read_text() == "committed figure\n"
    assert "figures/bad/ left unchanged" in proc.stdout
    # the long cell's progress reached the terminal (stderr), and not the published notebook
    assert re.search(r"\[1/2\] good, [0-9.ms]+: slow grid: \d of 8 cells", proc.stderr), \
        proc.stderr
    assert "of 8 cells" not in (project / "figures" / "good" / "good.ipynb").read_text()
    good = project / "figures" / "good"
    assert sorted(p.name for p in good.iterdir()) == ["REPORT.md", "fig.svg", "good.ipynb",
                                                      "run.json", "runtime.json"]
    record = json.loads((good / "run.json").read_text())
    assert record["cells"] == {"computed": 8, "cached": 0} and record["runtime_s"] > 0
    assert (good / "fig.svg").read_text() == "new figure\n"
    report = (good / "REPORT.md").read_bytes()
    assert b"## Runtime" in report and b"git_commit" not in report
    assert not (project / "build" / "staging" / "good").exists()

    runtime = (good / "runtime.json").read_bytes()
    assert run_full("good").returncode == 0
    assert (good / "REPORT.md").read_bytes() == report  # a rerun leaves the report as it was
    assert (good / "runtime.json").read_bytes() != runtime
    assert json.loads((good / "run.json").read_text()) == record  # and the committed record
