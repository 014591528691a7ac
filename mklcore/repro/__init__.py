"""Reproducing the five papers: what the notebooks call, never imported by the solver library.

* :mod:`~mklcore.repro.experiments`: seeded splits, grids, metrics and :func:`run`, the
  cached, resumable experiment runner;
* :mod:`~mklcore.repro.reporting`: paper-vs-ours tables, claims and verdicts, ``summary.csv``
  and ``REPORT.md``;
* :mod:`~mklcore.repro.plotting`: the shared theme, method colours and deterministic figures;
* :mod:`~mklcore.repro.notebook`: parameter checks and output folders of the notebooks;
* one module per paper (``kloft2009_lpmkl``, ``hinrichs2012_qmkl``, ``dinuzzo2010_rls2``, ...)
  with the experiment functions its notebook calls.

Needs the ``repro`` dependencies (pandas, matplotlib, seaborn, joblib, tqdm).
"""
