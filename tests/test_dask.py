"""run() on a Dask cluster (joblib's Dask backend) gives the same table, cache and summary.csv
as a local run."""

import pytest

from mklcore.repro import experiments
from mklcore.repro.experiments import param_grid, run, summarize
from mklcore.repro.quickstart import single_kernel_cell
from mklcore.repro.reporting import write_summary

distributed = pytest.importorskip("distributed")

#: a small grid of the quickstart's experiment: three models, two splits
GRID = param_grid(model=["sum of all", "linear()", "gaussian(sigma=1.0)"], C=1.0, test_size=0.3,
                  n_repeats=2, master_seed=0)


def _summary_bytes(df, out_dir):
    table = summarize(df, by="model", metrics="accuracy", ci="sd")
    rows = [{"item": f"{m} accuracy", "ours": a, "verdict": "n/a"}
            for m, a in zip(table["model"], table["accuracy_mean"])]
    import pandas as pd

    return write_summary(pd.DataFrame(rows), out_dir).read_bytes()


def _where(*, x, repeat, seed):
    from distributed import get_worker

    return {"worker": get_worker().address}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster


def test_run_on_dask_cluster_matches_local_run(cluster, tmp_path, monkeypatch):
    local = run(single_kernel_cell, GRID, n_repeats=2, seed=0, progress=False)
    assert local.attrs["n_computed"] == 6

    # the scheduler comes from the environment variable, as in a notebook run
    monkeypatch.setenv(experiments.DASK_SCHEDULER_ENV, cluster.scheduler_address)
    cache = tmp_path / "cache"
    remote = run(single_kernel_cell, GRID, n_repeats=2, seed=0, progress=False,
                 cache_dir=cache)
    client = experiments.dask_client(cluster.scheduler_address)
    assert len(client.scheduler_info()["workers"]) == 2
    assert remote.attrs["n_computed"] == 6
    assert remote.equals(local)
    assert _summary_bytes(remote, tmp_path / "dask") == _summary_bytes(local, tmp_path / "local")

    # the cache written during the Dask run resumes a local run: nothing is recomputed
    monkeypatch.delenv(experiments.DASK_SCHEDULER_ENV)
    resumed = run(single_kernel_cell, GRID, n_repeats=2, seed=0, progress=False,
                  cache_dir=cache)
    assert resumed.attrs["n_cached"] == 6 and resumed.attrs["n_computed"] == 0
    assert resumed.equals(local)
    # scheduler= sends the cells to the cluster's workers
    where = run(_where, param_grid(x=[1, 2, 3, 4]), scheduler=cluster.scheduler_address,
                progress=False)
    assert set(where["worker"]) <= set(client.scheduler_info()["workers"])
    experiments._close_dask_clients()


def test_dask_client_rejects_bad_scheduler():
    with pytest.raises(ValueError, match="scheduler"):
        experiments.dask_client("  ")
