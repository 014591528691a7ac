"""Tests of mklcore.repro.experiments: seeds, splits, grids, metrics, run() and its cache, tests."""

import json
import threading

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm
from sklearn.model_selection import ParameterGrid

from mklcore.repro.experiments import (
    METRICS, accuracy, auc, blas_thread_limit, cap_blas_threads, cv52_f_test, error_rate, kfold_splits, mcc, paired_ttest,
    param_grid, repeated_splits, rmse, run, score, sensitivity, specificity, spawn_seeds,
    subsample, summarize, wilcoxon,
)

SEED = 0


def _labels(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.array([-1] * (n * 2 // 3) + [1] * (n - n * 2 // 3))
    return rng.permutation(y)


# --------------------------------------------------------------------------- seeds

def test_spawn_seeds_stable_when_n_grows():
    short, long = spawn_seeds(7, 5), spawn_seeds(7, 12)
    assert long[:5] == short
    assert len(set(long)) == 12
    assert all(isinstance(s, int) and 0 <= s < 2**32 for s in long)
    assert spawn_seeds(7, 5) == short  # deterministic
    assert spawn_seeds(8, 5) != short
    assert spawn_seeds(7, 0) == []


@pytest.mark.parametrize("bad", [-1, 1.5, "0", None, True])
def test_spawn_seeds_rejects_bad_seed(bad):
    with pytest.raises(ValueError, match="seed"):
        spawn_seeds(bad, 3)


# --------------------------------------------------------------------------- splits

def test_repeated_splits_stratified_disjoint_deterministic():
    y = _labels(60)
    splits = repeated_splits(y, n_repeats=4, test_size=0.25, val_size=0.25, seed=SEED)
    assert len(splits) == 4
    for r, s in enumerate(splits):
        assert s["repeat"] == r and s["seed"] == spawn_seeds(SEED, 4)[r]
        train, val, test = s["train"], s["val"], s["test"]
        assert len(test) == 15 and len(val) == 15 and len(train) == 30
        assert not set(train) & set(val) and not set(train) & set(test) \
            and not set(val) & set(test)
        assert sorted(np.concatenate([train, val, test]).tolist()) == list(range(60))
        for part in (train, val, test):
            assert np.all(np.diff(part) > 0)  # sorted, no duplicates
            # stratified: class proportions 2/3 and 1/3 kept (up to rounding)
            assert abs(np.mean(y[part] == 1) - 1 / 3) <= 1 / len(part)
    again = repeated_splits(y, n_repeats=4, test_size=0.25, val_size=0.25, seed=SEED)
    for a, b in zip(splits, again):
        for key in ("train", "val", "test"):
            np.testing.assert_array_equal(a[key], b[key])
    # adding repeats keeps the earlier splits
    more = repeated_splits(y, n_repeats=6, test_size=0.25, val_size=0.25, seed=SEED)
    np.testing.assert_array_equal(more[3]["test"], splits[3]["test"])
    assert not np.array_equal(splits[0]["test"], splits[1]["test"])


def test_repeated_splits_train_size_and_no_val():
    y = _labels(60)
    s = repeated_splits(y, n_repeats=2, test_size=20, train_size=12, seed=1)[0]
    assert "val" not in s
    assert len(s["train"]) == 12 and len(s["test"]) == 20
    assert np.sum(y[s["train"]] == 1) == 4
    assert not set(s["train"]) & set(s["test"])


def test_repeated_splits_regression_targets_not_stratified():
    y = np.linspace(0, 1, 30)
    s = repeated_splits(y, n_repeats=1, test_size=0.2, seed=0)[0]
    assert len(s["test"]) == 6 and len(s["train"]) == 24


@pytest.mark.parametrize("kwargs, match", [
    ({"n_repeats": 0}, "n_repeats"),
    ({"n_repeats": 1, "test_size": 1.5}, "test_size"),
    ({"n_repeats": 1, "test_size": 0.5, "val_size": 0.5}, "samples"),
    ({"n_repeats": 1, "test_size": 10, "train_size": 60}, "samples"),
])
def test_repeated_splits_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        repeated_splits(_labels(60), **kwargs)


def test_kfold_splits_5x2():
    y = _labels(40)
    splits = kfold_splits(y, n_splits=2, n_repeats=5, seed=SEED)
    assert len(splits) == 10
    assert [(s["repeat"], s["fold"]) for s in splits] == [(r, k) for r in range(5)
                                                          for k in range(2)]
    for r in range(5):
        a, b = splits[2 * r], splits[2 * r + 1]
        np.testing.assert_array_equal(a["train"], b["test"])  # two folds swap roles
        assert np.sum(y[a["test"]] == 1) in (6, 7)  # stratified (13 positives in 40)
    again = kfold_splits(y, 2, 5, SEED)
    np.testing.assert_array_equal(again[7]["test"], splits[7]["test"])
    with pytest.raises(ValueError, match="n_splits"):
        kfold_splits(y, n_splits=1)


def test_subsample():
    y = _labels(60)
    idx = subsample(y, 30, seed=3)
    assert len(idx) == 30 and len(set(idx)) == 30 and np.all(np.diff(idx) > 0)
    assert np.sum(y[idx] == 1) == 10
    np.testing.assert_array_equal(idx, subsample(y, 30, seed=3))
    np.testing.assert_array_equal(subsample(y, 60, seed=0), np.arange(60))
    with pytest.raises(ValueError, match="Cannot draw"):
        subsample(y, 61, seed=0)


# --------------------------------------------------------------------------- grids

def test_param_grid_order_and_scalars():
    grid = param_grid(dataset=["a", "b"], C=np.array([1.0, 10.0]), kernel="rbf")
    assert grid == [
        {"dataset": "a", "C": 1.0, "kernel": "rbf"},
        {"dataset": "a", "C": 10.0, "kernel": "rbf"},
        {"dataset": "b", "C": 1.0, "kernel": "rbf"},
        {"dataset": "b", "C": 10.0, "kernel": "rbf"},
    ]
    assert type(grid[0]["C"]) is float  # numpy scalars become Python scalars
    assert param_grid() == [{}]
    with pytest.raises(ValueError, match="'C'"):
        param_grid(C=[])


# --------------------------------------------------------------------------- metrics

def test_metrics_against_sklearn():
    rng = np.random.default_rng(1)
    y = rng.choice([-1, 1], size=50)
    f = y * 0.5 + rng.normal(size=50)
    pred = np.where(f > 0, 1, -1)
    assert accuracy(y, pred) == pytest.approx(skm.accuracy_score(y, pred))
    assert accuracy(y, f) == pytest.approx(skm.accuracy_score(y, pred))  # decision values
    assert error_rate(y, pred) == pytest.approx(1 - skm.accuracy_score(y, pred))
    assert mcc(y, pred) == pytest.approx(skm.matthews_corrcoef(y, pred))
    assert auc(y, f) == pytest.approx(skm.roc_auc_score(y, f))
    assert sensitivity(y, pred) == pytest.approx(skm.recall_score(y, pred, pos_label=1))
    assert specificity(y, pred) == pytest.approx(skm.recall_score(y, pred, pos_label=-1))
    y01 = (y + 1) // 2
    assert sensitivity(y01, f) == pytest.approx(skm.recall_score(y01, (f > 0).astype(int)))
    yr, pr = rng.normal(size=20), rng.normal(size=20)
    assert rmse(yr, pr) == pytest.approx(np.sqrt(skm.mean_squared_error(yr, pr)))
    for name in METRICS:
        assert score(name.upper(), y, f if name == "auc" else pred) == \
            pytest.approx(METRICS[name](y, f if name == "auc" else pred))
    assert accuracy(np.array(["a", "b", "a"]), np.array(["a", "a", "a"])) == pytest.approx(2 / 3)


def test_score_unknown_metric_lists_names():
    with pytest.raises(ValueError, match="Unknown metric 'f2'.*accuracy.*rmse"):
        score("f2", [0, 1], [0, 1])


# --------------------------------------------------------------------------- run

def cell(*, method, C, repeat, seed):
    """Cheap deterministic stand-in for one experiment cell."""
    rng = np.random.default_rng(seed)
    return {"accuracy": np.float64(rng.random() / C), "n_iter": np.int64(len(method) + repeat),
            "converged": np.bool_(C < 10), "weights": rng.random(2)}


def path_cell(*, C, repeat, seed):
    """Returns several rows, one per point of a path."""
    return [{"lam": lam, "obj": C * lam + repeat} for lam in (0.1, 1.0)]


GRID = param_grid(method=["simplemkl", "lpmkl"], C=[1.0, 10.0])


def test_run_tidy_frame():
    df = run(cell, GRID, n_repeats=3, seed=SEED, progress=False)
    assert list(df.columns) == ["method", "C", "repeat", "seed", "accuracy", "n_iter",
                                "converged", "weights"]
    assert len(df) == 12
    assert df["repeat"].tolist() == [0, 1, 2] * 4
    assert df["seed"].tolist() == spawn_seeds(SEED, 3) * 4
    assert df["method"].tolist() == ["simplemkl"] * 6 + ["lpmkl"] * 6
    assert df["C"].tolist() == ([1.0] * 3 + [10.0] * 3) * 2
    expected = cell(method="lpmkl", C=10.0, repeat=2, seed=spawn_seeds(SEED, 3)[2])
    assert df["accuracy"].iloc[11] == expected["accuracy"]
    assert df["weights"].iloc[11] == expected["weights"].tolist()  # arrays -> lists
    assert df["converged"].dtype == bool and df["n_iter"].dtype == np.int64
    assert df.attrs["n_cached"] == 0 and df.attrs["n_computed"] == 12


def test_run_accepts_lists_of_rows_and_parametergrid():
    df = run(path_cell, ParameterGrid({"C": [1, 2]}), n_repeats=2, progress=False)
    assert list(df.columns) == ["C", "repeat", "seed", "lam", "obj"]
    assert len(df) == 8
    assert df["lam"].tolist() == [0.1, 1.0] * 4
    assert df["obj"].tolist() == [0.1, 1.0, 1.1, 2.0, 0.2, 2.0, 1.2, 3.0]


def test_run_parallel_same_as_serial():
    serial = run(cell, GRID, n_repeats=3, seed=SEED, progress=False)
    with joblib.parallel_config(backend="threading"):
        parallel = run(cell, GRID, n_repeats=3, seed=SEED, n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)


@pytest.mark.parametrize("grid, kwargs, exc, match", [
    ([], {}, ValueError, "empty"),
    (GRID, {"n_repeats": 0}, ValueError, "n_repeats"),
    ([{"seed": 1}], {}, ValueError, "reserved"),
    ({"C": [1, 2]}, {}, TypeError, "param_grid"),
    ([1, 2], {}, TypeError, "not a dict"),
])
def test_run_bad_input(grid, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        run(cell, grid, progress=False, **kwargs)


def test_run_rejects_metric_named_like_a_setting():
    def bad(*, C, repeat, seed):
        return {"C": 1.0}

    with pytest.raises(ValueError, match="'C'"):
        run(bad, [{"C": 1}], progress=False)


class Counter:
    """Wraps ``cell`` and counts calls (thread-safe); same qualified name as ``cell``."""

    def __init__(self, fail_at=None):
        self.calls = []
        self.fail_at = fail_at
        self._lock = threading.Lock()
        self.__qualname__ = cell.__qualname__
        self.__module__ = cell.__module__
        self.__name__ = cell.__name__
        self.__wrapped__ = cell  # same code identity as ``cell`` for the cache key

    def __call__(self, **kwargs):
        with self._lock:
            self.calls.append(kwargs)
            if self.fail_at is not None and len(self.calls) > self.fail_at:
                raise RuntimeError("boom")
        return cell(**kwargs)


def test_run_cache_resumes_only_missing_cells(tmp_path):
    cache = tmp_path / "cache"
    first = run(cell, GRID, n_repeats=3, seed=SEED, cache_dir=cache, progress=False)
    files = sorted(cache.glob("*.json"))
    assert len(files) == 12
    assert not list(cache.glob("*.tmp"))
    assert first.attrs["n_computed"] == 12

    # a fresh run without a cache gives the same table
    pd.testing.assert_frame_equal(first, run(cell, GRID, n_repeats=3, seed=SEED,
                                             progress=False))

    deleted = files[:2]
    removed = [json.loads(f.read_text()) for f in deleted]
    text_before = {f.name: f.read_bytes() for f in files}
    for f in deleted:
        f.unlink()
    counter = Counter()
    second = run(counter, GRID, n_repeats=3, seed=SEED, cache_dir=cache, progress=False)
    assert len(counter.calls) == 2
    recomputed = sorted((c["method"], c["C"], c["repeat"]) for c in counter.calls)
    assert recomputed == sorted((p["setting"]["method"], p["setting"]["C"], p["repeat"])
                                for p in removed)
    assert second.attrs["n_cached"] == 10 and second.attrs["n_computed"] == 2
    pd.testing.assert_frame_equal(first, second)
    # rewritten cache files are byte-identical to the first ones
    assert {f.name: f.read_bytes() for f in sorted(cache.glob("*.json"))} == text_before

    third_counter = Counter()
    third = run(third_counter, GRID, n_repeats=3, seed=SEED, cache_dir=cache, progress=False)
    assert third_counter.calls == [] and third.attrs["n_cached"] == 12
    pd.testing.assert_frame_equal(first, third)


def test_run_cache_keeps_cells_finished_before_a_failure(tmp_path):
    cache = tmp_path / "cache"
    failing = Counter(fail_at=5)
    with pytest.raises(RuntimeError, match="boom"):
        run(failing, GRID, n_repeats=3, seed=SEED, cache_dir=cache, progress=False)
    assert len(list(cache.glob("*.json"))) == 5
    resumed = Counter()
    df = run(resumed, GRID, n_repeats=3, seed=SEED, cache_dir=cache, progress=False)
    assert len(resumed.calls) == 7
    assert df.attrs["n_cached"] == 5
    pd.testing.assert_frame_equal(df, run(cell, GRID, n_repeats=3, seed=SEED, progress=False))


def test_run_cache_key_depends_on_seed_and_function(tmp_path):
    run(cell, GRID[:1], n_repeats=2, seed=0, cache_dir=tmp_path, progress=False)
    df = run(cell, GRID[:1], n_repeats=2, seed=1, cache_dir=tmp_path, progress=False)
    assert df.attrs["n_cached"] == 0
    df = run(path_cell, [{"C": 1.0}], n_repeats=2, seed=0, cache_dir=tmp_path,
             progress=False)
    assert df.attrs["n_cached"] == 0
    assert len(list(tmp_path.glob("*.json"))) == 6


def _cache_files(cache):
    return sorted(cache.glob("*.json"))


@pytest.mark.parametrize("tamper, reason", [
    (lambda d: d["rows"][0].update(accuracy=0.123456), "does not match its checksum"),
    (lambda d: d.update(rows=[]), "structurally empty"),
    (lambda d: d.pop("checksum"), "unreadable"),
])
def test_run_cache_ignores_tampered_or_empty_files(tmp_path, tamper, reason):
    first = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    (path,) = _cache_files(tmp_path)
    data = json.loads(path.read_text())
    tamper(data)
    path.write_text(json.dumps(data))
    with pytest.warns(RuntimeWarning, match=reason):
        again = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert again.attrs["n_cached"] == 0
    pd.testing.assert_frame_equal(first, again)


def _file_of(cache, **setting):
    """The cache file of the one cell of ``setting`` (repeat 0)."""
    for path in _cache_files(cache):
        if json.loads(path.read_text())["setting"] == setting:
            return path
    raise LookupError(setting)


def test_run_cache_refuses_the_file_of_another_cell(tmp_path):
    """Issue 28, item 3a: a valid file copied over another cell's file was trusted (its
    checksum covered the rows only), so both cells came back with the first one's values.
    The file stores its key: the copy is ignored with a warning and its cell recomputed."""
    grid = [{"method": "a", "C": 1.0}, {"method": "b", "C": 2.0}]
    first = run(cell, grid, n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    a, b = _file_of(tmp_path, method="a", C=1.0), _file_of(tmp_path, method="b", C=2.0)
    b.write_bytes(a.read_bytes())
    counter = Counter()
    with pytest.warns(RuntimeWarning, match=r"Ignoring cache file .* \(it holds the cell "
                                             r"[0-9a-f]{16}\.\.\., not this one"):
        again = run(counter, grid, n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert [c["method"] for c in counter.calls] == ["b"] and again.attrs["n_cached"] == 1
    pd.testing.assert_frame_equal(first, again)
    assert first["accuracy"].iloc[0] != first["accuracy"].iloc[1]


def test_run_cache_recomputes_files_without_a_key(tmp_path):
    """A file of the earlier format (no key; checksum of the rows alone) is recomputed with a
    warning, and rewritten in the new format."""
    import hashlib

    from mklcore.repro.experiments import _canonical

    first = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    (path,) = _cache_files(tmp_path)
    data = json.loads(path.read_text())
    del data["key"]
    data["checksum"] = hashlib.sha256(_canonical(data["rows"]).encode("ascii")).hexdigest()
    path.write_text(json.dumps(data))
    with pytest.warns(RuntimeWarning, match="written by an older version, without its cell key"):
        again = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert again.attrs["n_cached"] == 0
    pd.testing.assert_frame_equal(first, again)
    assert json.loads(path.read_text())["key"] == path.stem


def _unwritable(monkeypatch):
    """Make every new file in a folder fail as in a read-only folder (the tests run as root,
    for whom chmod does not forbid writing)."""
    from mklcore.repro import experiments

    def mkstemp(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(experiments.tempfile, "mkstemp", mkstemp)


def test_run_unwritable_cache_fails_before_computing(tmp_path, monkeypatch):
    """Issue 28, item 3b: a read-only cache folder failed with PermissionError after the
    first missing cell was computed, losing it. Now: PermissionError naming cache_dir before
    any cell runs; a read-only folder holding every cell still serves them."""
    full = run(cell, GRID, n_repeats=1, seed=SEED, cache_dir=tmp_path / "full", progress=False)
    _unwritable(monkeypatch)
    counter = Counter()
    with pytest.raises(PermissionError, match=r"^cache_dir '.*empty' is not writable "
                                              r"\(Permission denied\), so the 4 missing cells "
                                              r"could not be saved; nothing was computed"):
        run(counter, GRID, n_repeats=1, seed=SEED, cache_dir=tmp_path / "empty",
            progress=False)
    assert counter.calls == []
    cached = run(counter, GRID, n_repeats=1, seed=SEED, cache_dir=tmp_path / "full",
                 progress=False)
    assert counter.calls == [] and cached.attrs["n_cached"] == 4
    pd.testing.assert_frame_equal(full, cached)
    monkeypatch.undo()
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(FileExistsError, match=r"^cache_dir '.*file' is not writable"):
        run(counter, GRID, n_repeats=1, seed=SEED, cache_dir=tmp_path / "file", progress=False)
    assert counter.calls == []


def test_run_keeps_cells_whose_cache_file_cannot_be_written(tmp_path, monkeypatch):
    """A write failing after the early check (e.g. a full disk): a warning, the cell is kept."""
    from mklcore.repro import experiments

    def full_disk(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(experiments, "_atomic_write", full_disk)
    with pytest.warns(RuntimeWarning, match=r"Could not write the cache file .* \(No space "
                                            r"left on device\); cell 0 is kept"):
        df = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(df, run(cell, GRID[:1], n_repeats=1, seed=SEED,
                                          progress=False), check_like=True)
    assert _cache_files(tmp_path) == []


_KILLED_RUN = """
import os, sys, time
from mklcore.repro.experiments import run

def cell(*, i, repeat, seed):
    with open(os.path.join(sys.argv[1], f"{os.getpid()}.pid"), "w") as fh:
        fh.write(str(os.getppid()))
    time.sleep(60)
    return {"x": i}

run(cell, [{"i": i} for i in range(4)], n_jobs=2, progress=False)
"""


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie is dead
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs /proc")
def test_workers_die_with_a_killed_run(tmp_path):
    """Issue 28, item 3c: after kill -9 of run(..., n_jobs=2) the loky workers lived on (they
    finished their cell, then idled for loky's 300 s). Each worker now watches its parent and
    exits within a second of its death."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "killed_run.py"
    script.write_text(_KILLED_RUN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path)], env=env)
    workers = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.1)
            workers = [int(p.stem) for p in tmp_path.glob("*.pid")]
        assert len(workers) == 2, "the workers did not start their cells"
        assert all(int((tmp_path / f"{w}.pid").read_text()) == parent.pid for w in workers)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_alive, workers)), "workers outlived the killed run by 10 s"
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


def test_run_cache_key_includes_code_version(tmp_path, monkeypatch):
    from mklcore.repro import experiments

    run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert len(experiments.code_version()) == 16
    monkeypatch.setattr(experiments, "_CODE_VERSION", "0" * 16)  # "edited" library code
    df = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert df.attrs["n_cached"] == 0 and len(_cache_files(tmp_path)) == 2


def test_run_cache_key_includes_dependency_versions(tmp_path, monkeypatch):
    import importlib.metadata

    from mklcore.repro import experiments

    deps = experiments.dependency_versions()
    assert set(deps) == {"numpy", "scipy", "scikit-learn", "cvxpy", "numba", "blas"}
    assert deps["numpy"] == np.__version__
    assert deps["blas"] and all(set(b) == {"internal_api", "version", "architecture"}
                                for b in deps["blas"])
    run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    again = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert again.attrs["n_cached"] == 1  # same versions: the cell comes from the cache
    stored = json.loads(next(iter(_cache_files(tmp_path))).read_text())
    assert stored["code"]["dependencies"] == deps  # the cache file says what computed it

    real_version = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.0.0-other"
                        if name == "scipy" else real_version(name))  # "upgraded" scipy
    df = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert df.attrs["n_cached"] == 0 and len(_cache_files(tmp_path)) == 2
    monkeypatch.undo()

    blas = [dict(b, architecture="OtherCPU") for b in deps["blas"]]  # another BLAS kernel
    monkeypatch.setattr(experiments, "_blas_in_use", lambda: blas)
    df = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert df.attrs["n_cached"] == 0 and len(_cache_files(tmp_path)) == 3
    monkeypatch.undo()
    df = run(cell, GRID[:1], n_repeats=1, seed=SEED, cache_dir=tmp_path, progress=False)
    assert df.attrs["n_cached"] == 1  # back to the real versions: a hit again


def test_run_cache_key_includes_source_of_notebook_functions(tmp_path):
    import importlib.util

    cache = tmp_path / "cache"
    for value in (1, 2):  # the same function name, its body edited between two runs
        src = tmp_path / f"nb{value}.py"
        src.write_text(f"def cellfun(repeat, seed):\n    return {{'x': {value}}}\n")
        spec = importlib.util.spec_from_file_location("nbcells", src)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        df = run(module.cellfun, [{}], cache_dir=cache, progress=False)
    assert df.attrs["n_cached"] == 0 and df["x"].tolist() == [2]


def test_run_cache_rejects_unserialisable_setting(tmp_path):
    def f(*, obj, repeat, seed):
        return {"x": 1}

    with pytest.raises(TypeError, match="JSON"):
        run(f, [{"obj": object()}], cache_dir=tmp_path, progress=False)


def test_run_keeps_a_progress_record_in_the_named_file(tmp_path, monkeypatch, capsys):
    from mklcore.repro import experiments

    path = tmp_path / "progress" / "nb.json"
    run(cell, GRID[:2], n_repeats=2, seed=SEED, cache_dir=tmp_path / "cache", progress=False)
    monkeypatch.setenv(experiments.PROGRESS_FILE_ENV, str(path))
    session = dict(experiments._SESSION)
    df = run(cell, GRID, n_repeats=2, seed=SEED, cache_dir=tmp_path / "cache", progress=False,
             desc="demo")
    record = json.loads(path.read_text())
    assert {k: record[k] for k in ("desc", "done", "total", "cached", "finished")} == {
        "desc": "demo", "done": len(df), "total": len(df), "cached": 4, "finished": True}
    assert record["started"] <= record["updated"]
    assert record["session"]["cached"] - session["cached"] == 4
    assert record["session"]["computed"] - session["computed"] == len(df) - 4
    assert capsys.readouterr().err == ""  # the record is not printed by run() itself
    assert sorted(p.name for p in path.parent.iterdir()) == ["nb.json"]  # no temporary files


def test_run_progress_bar_respects_progress_flag(capsys):
    run(cell, GRID[:1], progress=False)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- summaries, tests

def test_summarize_mean_and_se():
    df = pd.DataFrame({"m": ["b", "b", "b", "a", "a", "a"],
                       "acc": [0.7, 0.8, 0.9, 0.5, 0.5, np.nan]})
    out = summarize(df, "m", ["acc"])
    assert list(out.columns) == ["m", "n", "acc_mean", "acc_se"]
    assert out["m"].tolist() == ["b", "a"]  # order of first appearance
    assert out["acc_mean"].tolist() == pytest.approx([0.8, 0.5])
    assert out["acc_se"].iloc[0] == pytest.approx(0.1 / np.sqrt(3))
    assert out["acc_se"].iloc[1] == pytest.approx(0.0)
    ci = summarize(df, ["m"], "acc", ci="ci95")
    assert ci["acc_ci95"].iloc[0] == pytest.approx(4.302652729911275 * 0.1 / np.sqrt(3))
    overall = summarize(df, None, "acc", ci="sd")
    assert overall["n"].tolist() == [6]
    with pytest.raises(ValueError, match="ci"):
        summarize(df, "m", "acc", ci="iqr")
    with pytest.raises(ValueError, match="not in the table"):
        summarize(df, "method", "acc")


def test_paired_tests_against_scipy():
    from scipy import stats

    a = np.array([0.81, 0.83, 0.79, 0.85, 0.80, 0.84])
    b = np.array([0.78, 0.80, 0.80, 0.81, 0.77, 0.82])
    t = paired_ttest(a, b)
    ref = stats.ttest_rel(a, b)
    assert t.statistic == pytest.approx(ref.statistic) and t.pvalue == pytest.approx(ref.pvalue)
    w = wilcoxon(a, b)
    ref = stats.wilcoxon(a, b)
    assert w.statistic == pytest.approx(ref.statistic) and w.pvalue == pytest.approx(ref.pvalue)
    assert wilcoxon(a, a).pvalue == 1.0
    with pytest.raises(ValueError, match="same length"):
        paired_ttest(a, b[:3])


def test_cv52_f_test_hand_computed():
    diffs = np.array([[0.02, 0.04], [0.01, -0.01], [0.03, 0.05], [0.00, 0.02],
                      [0.04, 0.02]])
    # by hand: sum of squares = 4e-4+16e-4+1e-4+1e-4+9e-4+25e-4+0+4e-4+16e-4+4e-4 = 80e-4;
    # every replication has s_i^2 = 2 * 0.01^2 = 2e-4, so the sum is 10e-4 and
    # f = 80e-4 / (2 * 10e-4) = 4.0, p = P(F(10, 5) > 4).
    res = cv52_f_test(diffs)
    assert res.statistic == pytest.approx(4.0)
    # upper tail of F(d1=10, d2=5): regularised incomplete beta I_{d2/(d2+d1 f)}(d2/2, d1/2)
    from scipy.special import betainc

    assert res.pvalue == pytest.approx(betainc(2.5, 5.0, 5 / (5 + 10 * 4.0)))
    assert res.pvalue == pytest.approx(0.069635, abs=1e-6)
    with pytest.raises(ValueError, match=r"\(5, 2\)"):
        cv52_f_test(np.zeros((5, 3)))


# --------------------------------------------------------------------------- BLAS threads

def _blas_threads(*, x, repeat, seed):
    from threadpoolctl import threadpool_info

    return {"threads": max(p["num_threads"] for p in threadpool_info()
                           if p["user_api"] in ("blas", "openmp"))}


def test_blas_thread_limit_is_cores_over_workers():
    cores = joblib.cpu_count()
    assert blas_thread_limit(1) == cores
    assert blas_thread_limit(2) == max(1, cores // 2)
    assert blas_thread_limit(10 * cores) == 1


def test_cap_blas_threads_lowers_and_never_raises():
    from threadpoolctl import threadpool_info, threadpool_limits

    def most():
        return max(p["num_threads"] for p in threadpool_info())

    with threadpool_limits(2):
        with cap_blas_threads(1):
            assert most() == 1
        assert most() == 2
        with cap_blas_threads(64):
            assert most() == 2  # already below the cap: unchanged
    with pytest.raises(ValueError, match="max_threads"):
        cap_blas_threads(0)


def test_run_workers_report_the_thread_limit(monkeypatch):
    """Inside a worker process threadpoolctl reports the cap (here 1), even when the
    environment asks for more threads per process."""
    import mklcore.repro.experiments as experiments

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "2")
    monkeypatch.setattr(experiments, "blas_thread_limit", lambda n_jobs: 1)
    df = run(_blas_threads, param_grid(x=[1, 2, 3, 4]), n_jobs=2, progress=False)
    assert df["threads"].tolist() == [1, 1, 1, 1]
