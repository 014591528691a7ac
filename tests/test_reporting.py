"""Tests of mklcore.repro.reporting: verdicts, comparison tables, summary.csv and REPORT.md."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mklcore.repro.reporting import (
    DEFAULT_RTOL, Claim, claims_table, compare, environment_info, markdown_table, verdict,
    write_report, write_summary, summary_table, SUMMARY_COLUMNS, gain_verdict,
    equivalence_verdict, gain_text, no_gain_text, count_verdict, readable_means, INCONCLUSIVE,
)


@pytest.mark.parametrize("paper, ours, kwargs, expected", [
    (0.90, 0.905, {"atol": 0.01}, "match"),
    (0.90, 0.91, {"atol": 0.01}, "match"),       # on the boundary
    (0.90, 0.92, {"atol": 0.01}, "close"),
    (0.90, 0.93, {"atol": 0.01}, "close"),       # 3 x tol
    (0.90, 0.94, {"atol": 0.01}, "differs"),
    (0.90, 0.94, {"atol": 0.01, "close_factor": 5.0}, "close"),
    (100.0, 104.0, {"rtol": 0.05}, "match"),
    (100.0, 110.0, {"rtol": 0.05}, "close"),
    (100.0, 120.0, {"rtol": 0.05}, "differs"),
    (100.0, 100.0 * (1 + DEFAULT_RTOL), {}, "match"),  # default tolerance
    (1.0, 1.02, {"rtol": 0.01, "atol": 0.01}, "match"),  # tol = atol + rtol * |paper|
    (np.nan, 0.5, {"atol": 0.1}, "n/a"),
    (None, 0.5, {"atol": 0.1}, "n/a"),
    (0.5, np.nan, {"atol": 0.1}, "differs"),
    ("SimpleMKL", "SimpleMKL", {}, "match"),
    (True, False, {}, "differs"),
])
def test_verdict_thresholds(paper, ours, kwargs, expected):
    assert verdict(paper, ours, **kwargs) == expected


@pytest.mark.parametrize("kwargs, match", [
    ({"rtol": -0.1}, "rtol"), ({"atol": "x"}, "atol"), ({"close_factor": 0.5}, "close_factor"),
])
def test_verdict_bad_tolerances(kwargs, match):
    with pytest.raises(ValueError, match=match):
        verdict(1.0, 1.0, **kwargs)


def test_compare_columns_and_values():
    table = compare([
        {"item": "acc iono", "paper": 0.92, "ours": np.float64(0.93), "atol": 0.02,
         "source": "Table 2, p. 2510"},
        {"item": "n kernels", "paper": 10, "ours": 10, "rtol": 0.0, "atol": 0.0},
        {"item": "time", "paper": np.nan, "ours": 3.2, "note": "paper gives no number"},
    ])
    assert list(table.columns) == ["item", "paper", "ours", "diff", "verdict", "edge",
                                   "tolerance", "rule", "note", "source"]
    assert table["verdict"].tolist() == ["match", "match", "n/a"]
    assert table["tolerance"].tolist() == ["0.02", "0", "n/a"]
    assert table["rule"][0].startswith("match if abs(ours - paper) <= tol")
    assert "no number" in table["rule"][2]
    assert table["diff"].iloc[0] == pytest.approx(0.01)
    assert table["source"].tolist() == ["Table 2, p. 2510", "", ""]
    assert table["note"].iloc[2] == "paper gives no number"
    with pytest.raises(ValueError, match="unknown keys.*rtl"):
        compare([{"item": "x", "paper": 1, "ours": 1, "rtl": 0.1}])
    with pytest.raises(ValueError, match="lacks"):
        compare([{"item": "x", "paper": 1}])


def test_claims_table_verdicts():
    claims = [
        Claim("C1", "SimpleMKL is faster than SILP", holds=np.bool_(True), evidence="3.1x"),
        Claim("C2", "Sparse weights", holds=False, evidence="12 of 20 nonzero", hard=False),
        {"id": "C3", "text": "Scales to 1e6 samples", "holds": None},
    ]
    table = claims_table(claims)
    assert list(table.columns) == ["id", "claim", "hard", "holds", "verdict", "edge",
                                   "tolerance", "rule", "evidence"]
    assert table["verdict"].tolist() == ["match", "differs", "n/a"]
    assert table["hard"].tolist() == [True, False, True]


def _summary():
    return pd.DataFrame({"item": ["acc", "weights"], "paper": [0.9, 0.123456789],
                         "ours": [1 / 3, 0.2], "verdict": ["differs", "close"]})


def test_write_summary_byte_identical(tmp_path):
    path = write_summary(_summary(), tmp_path / "out")
    assert path == tmp_path / "out" / "summary.csv"
    data = path.read_bytes()
    assert data == (b"item,paper,ours,verdict,tolerance,rule,source,note,edge\n"
                    b"acc,0.9,0.333333,differs,,,,,False\n"
                    b"weights,0.123457,0.2,close,,,,,False\n")
    assert write_summary(_summary(), tmp_path / "out").read_bytes() == data


def test_summary_table_one_schema_one_vocabulary():
    claims = claims_table([Claim("C1", "Sparse", True, "3 of 10 kernels"),
                           Claim("C2", "Fast", False), Claim("C3", "Scales", None)])
    table = summary_table(claims)
    assert list(table.columns) == SUMMARY_COLUMNS
    assert table["verdict"].tolist() == ["match", "differs", "n/a"]
    assert table["ours"].tolist() == ["holds", "does not hold", ""]
    assert table.loc[0, "item"] == "C1: Sparse" and table.loc[0, "note"] == "3 of 10 kernels"
    values = summary_table(pd.DataFrame({"item": ["n"], "value": [351]}))
    assert values.loc[0, "verdict"] == "n/a" and values.loc[0, "ours"] == 351
    other = pd.DataFrame({"item": ["a", "b"], "paper": ["x", "y"], "ours": ["x", "z"],
                          "verdict": ["PASS", "NOT REPRODUCED"]})  # the old vocabulary
    with pytest.raises(ValueError, match="Unknown verdicts"):
        summary_table(other)
    with pytest.raises(ValueError, match="item, ours and verdict"):
        summary_table(pd.DataFrame({"x": [1]}))


def test_markdown_table_escapes_and_aligns():
    df = pd.DataFrame({"name": ["a|b", "line\nbreak"], "x": [0.123456, np.nan],
                       "ok": [True, None]})
    text = markdown_table(df)
    lines = text.split("\n")
    assert lines[0] == "| name | x | ok |"
    assert lines[1] == "| --- | ---: | --- |"
    assert lines[2] == "| a\\|b | 0.1235 | True |"
    assert lines[3] == "| line<br>break | nan |  |"
    grouped = markdown_table(df.set_index("name"))
    assert grouped.split("\n")[0] == "| name | x | ok |"


def test_write_report_contents(tmp_path):
    out = tmp_path / "report"
    fig = out / "fig3_weights_vs_C"  # as passed to savefig (no suffix)
    claims = [Claim("C1", "SimpleMKL converges", True, "gap 1e-4"),
              Claim("C2", "Beats uniform", False, "0.81 vs 0.82")]
    env = {"python": "3.11.7", "numpy": "2.4.0", "git_commit": "unknown"}
    kwargs = dict(title="SimpleMKL (Rakotomamonjy et al., 2008): reproduction",
                  intro="We reproduce Table 2.",
                  sections=[("Deviations", "Fewer repeats in quick mode."), "Free text."],
                  figures=[("Weights vs C", fig), out / "fig4.svg"],
                  tables=[("Table 2: paper vs ours", compare([
                      {"item": "acc", "paper": 0.9, "ours": 0.91, "atol": 0.02}])),
                      _summary()],
                  claims=claims, env=env, runtime=75.0)
    path = write_report(out, **kwargs)
    assert path == out / "REPORT.md"
    text = path.read_text()
    assert text.startswith("# SimpleMKL (Rakotomamonjy et al., 2008): reproduction\n\n"
                           "We reproduce Table 2.\n")
    assert text.count("\n# ") == 0  # the only H1 is the title
    assert "## Deviations\n\nFewer repeats in quick mode." in text
    assert "### Table 2: paper vs ours" in text and "### Table 2\n" in text
    assert ("| item | paper | ours | diff | verdict | edge | tolerance | rule | note | source |"
            in text)
    assert ("| acc | 0.9 | 0.91 | 0.01 | match | False | 0.02 | match if abs(ours - paper) <= tol"
            in text)
    assert "![Weights vs C](fig3_weights_vs_C.png)" in text
    assert "![fig4](fig4.svg)" in text
    assert "## Claims" in text and "| C2 | Beats uniform | True | False | differs | False |" in text
    assert "| match |" in text
    assert "| python | 3.11.7 |" in text
    assert text.endswith("\n") and not text.endswith("\n\n")
    # what changes on every run is kept out of REPORT.md, in runtime.json
    assert "75.0" not in text and "git_commit" not in text and "`runtime.json`" in text
    assert "](runtime.json)" not in text  # git-ignored: a link would be broken on GitHub
    assert json.loads((out / "runtime.json").read_text()) == {
        "runtime": "75.0 s (1.2 min)", "runtime_s": 75.0, "git_commit": "unknown"}
    first = path.read_bytes()
    kwargs.update(runtime="80 s", env={**env, "git_commit": "a" * 40},
                  run_info={"cells_from_cache": 3})
    assert write_report(out, **kwargs).read_bytes() == first  # rerun: same bytes
    assert json.loads((out / "runtime.json").read_text()) == {
        "runtime": "80 s", "runtime_s": None, "git_commit": "a" * 40, "cells_from_cache": 3}


def test_write_report_keeps_the_machine_out_and_names_measured_times(tmp_path):
    """What differs between two machines (platform string, cores) goes to runtime.json; the
    report names the tables and files that hold measured times."""
    env = {"python": "3.11.7", "numpy": "2.4.0", "platform": "Linux-6.1-x86_64-with-glibc2.36",
           "n_cpus": 2, "git_commit": "unknown"}
    timings = pd.DataFrame({"method": ["a", "b"], "cpu_s": [0.1, 0.2], "objective": [1.0, 2.0]})
    kwargs = dict(title="T", env=env, runtime=3.0,
                  tables=[("Timings", timings), ("Accuracy", pd.DataFrame({"acc": [0.9]})),
                          ("Figure 1: mean CPU time [s] vs n", pd.DataFrame({"a": [1.0]}))],
                  measured_times=["`timings.csv`", "Figure 1"])
    text = write_report(tmp_path / "one", **kwargs).read_text()
    assert "Linux" not in text and "n_cpus" not in text and "| python | 3.11.7 |" in text
    record = json.loads((tmp_path / "one" / "runtime.json").read_text())
    assert record["platform"] == env["platform"] and record["n_cpus"] == "2"
    paragraph = next(p for p in text.split("\n\n") if p.startswith("Measured times"))
    assert paragraph.startswith('Measured times are results of this run: `timings.csv`; '
                                'Figure 1; `cpu_s` of the table "Timings"; the table '
                                '"Figure 1: mean CPU time [s] vs n". A rerun')
    assert "acc" not in paragraph and "objective" not in paragraph
    other = {**env, "platform": "Linux-5.15-aarch64-with-glibc2.39", "n_cpus": 64,
             "git_commit": "b" * 40}
    again = write_report(tmp_path / "two", **{**kwargs, "env": other, "runtime": 9.0})
    assert again.read_text() == text  # another machine: the same report
    plain = write_report(tmp_path / "three", title="T", env=False,
                         tables=[("Accuracy", pd.DataFrame({"acc": [0.9]}))]).read_text()
    assert "Measured times" not in plain and "## Runtime" not in plain


def test_runtime_file_is_git_ignored():
    root = Path(__file__).resolve().parent.parent
    patterns = (root / ".gitignore").read_text().split()
    assert "figures/*/runtime.json" in patterns


def test_write_report_without_env(tmp_path):
    text = write_report(tmp_path, title="T", env=False).read_text()
    assert text == "# T\n"


def test_environment_info_keys():
    info = environment_info()
    for key in ("python", "numpy", "scipy", "scikit-learn", "pandas", "cvxpy", "matplotlib",
                "mklcore", "platform", "n_cpus", "git_commit"):
        assert key in info
    assert info["numpy"] == np.__version__
    assert isinstance(info["n_cpus"], int) and info["n_cpus"] >= 1
    commit = info["git_commit"]
    assert commit == "unknown" or (len(commit) == 40 and int(commit, 16) >= 0)


def test_write_report_relative_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = "build/quick/paper"  # relative, as in a notebook's QUICK_OUT_DIR
    text = write_report(out, title="T", env=False,
                        figures=[f"{out}/fig1", "fig2.png"]).read_text()
    assert "![fig1](fig1.png)" in text  # cwd-relative path into out_dir
    assert "![fig2](fig2.png)" in text  # already relative to out_dir


def test_compare_accepts_dataframe():
    rows = pd.DataFrame([{"item": "a", "paper": 1.0, "ours": 1.5, "atol": 0.1}])
    assert compare(rows)["verdict"].tolist() == ["differs"]


def test_relative_tolerance_is_spelled_out():
    row = compare([{"item": "x", "paper": 2.0, "ours": 2.05}]).iloc[0]
    assert row["verdict"] == "match" and row["tolerance"] == "0.1 (5% of paper)"
    row = compare([{"item": "x", "paper": "yes", "ours": "no"}]).iloc[0]
    assert row["verdict"] == "differs" and row["tolerance"] == "exact"


def test_rows_on_different_data_are_not_compared():
    rows = [{"item": "acc", "paper": 0.9, "ours": 0.9, "comparable": "different data: A -> B"},
            {"item": "n", "paper": 30, "ours": 31, "rule": "custom rule"}]
    table = compare(rows)
    assert table["verdict"].tolist() == ["n/a", "match"]
    assert table["rule"].tolist() == ["not compared: different data: A -> B", "custom rule"]
    with pytest.raises(ValueError, match="comparable"):
        compare([{"item": "acc", "paper": 0.9, "ours": 0.9, "comparable": False}])


def test_gain_verdict_tests_a_gain_not_non_inferiority():
    assert gain_verdict([0.02, 0.03, 0.025, 0.03]).holds is True
    # a small negative mean inside the noise: neither a gain nor a clear loss
    assert gain_verdict([0.01, -0.01, 0.004, -0.002]).holds == "inconclusive"
    # consistently worse: the claim of a gain does not hold
    test = gain_verdict([-0.02, -0.03, -0.025, -0.01])
    assert test.holds is False and test.p_value > 0.99 and test.n == 4
    assert gain_verdict(mean=0.0, se=0.0).holds is False
    # no variance: identical predictions are no gain; a constant gain needs enough pairs
    assert gain_verdict(np.zeros(10)).holds is False
    assert gain_verdict([0.01, 0.01]).holds == "inconclusive"
    assert gain_verdict(np.full(10, 0.01)).holds is True
    assert gain_verdict(np.full(3, -0.01)).holds is False
    assert "sign test" in gain_verdict([0.01, 0.01]).rule
    assert gain_verdict(mean=0.01, se=0.002).holds is True
    assert gain_verdict(mean=0.0003, se=0.002).holds == "inconclusive"
    assert "interval" in test.evidence and "t-test" in test.rule
    with pytest.raises(ValueError, match="alpha"):
        gain_verdict([0.1, 0.2], alpha=0.7)
    with pytest.raises(ValueError, match="diffs"):
        gain_verdict([0.1])


def test_inconclusive_claims_reach_the_summary():
    claims = [Claim("C1", "a gain", "inconclusive", rule="gain test", tolerance="p < 0.05"),
              Claim("C2", "b", False, rule="r")]
    table = claims_table(claims)
    assert table["verdict"].tolist() == ["inconclusive", "differs"]
    summary = summary_table(table)
    assert summary["ours"].tolist() == ["inconclusive", "does not hold"]
    assert summary["tolerance"].tolist() == ["p < 0.05", "none"]
    assert summary["rule"].tolist() == ["gain test", "r"]
    with pytest.raises(ValueError, match="holds"):
        Claim("C3", "c", "maybe")


def test_equivalence_verdict_needs_a_narrow_interval_and_a_noise_estimate():
    assert equivalence_verdict([0.01, -0.01, 0.005, 0.0], 0.02).holds is True
    assert equivalence_verdict([0.1, 0.12, 0.11], 0.02).holds is False
    assert equivalence_verdict([0.05, -0.04, 0.0], 0.02).holds == "inconclusive"
    # equal differences or one pair: no noise estimate, so no verdict either way
    test = equivalence_verdict([0.0, 0.0], 0.02)
    assert test.holds == "inconclusive" and test.lower == test.upper == 0.0
    assert equivalence_verdict([0.0], 0.02).holds == "inconclusive"
    with pytest.raises(ValueError, match="margin"):
        equivalence_verdict([0.1, 0.2], 0.0)


def test_claim_source_reaches_the_summary_only_when_given():
    plain = claims_table([Claim("C1", "a claim", True)])
    assert "source" not in plain.columns
    assert summary_table(plain)["source"].tolist() == [""]
    cited = claims_table([Claim("C1", "a claim", True, source="Sec. 5.1"),
                          Claim("C2", "another", False)])
    assert cited["source"].tolist() == ["Sec. 5.1", ""]
    assert summary_table(cited)["source"].tolist() == ["Sec. 5.1", ""]


def test_gain_texts():
    test = gain_verdict([0.02, 0.03, 0.025, 0.03])
    assert gain_text(test) == (f"{test.mean:+.3f} (se {test.se:.3f}, one-sided p = "
                               f"{test.p_value:.2g})")
    assert no_gain_text([0.0, 0.0, 0.0]) == ("the same test accuracy on all 3 folds, i.e. no "
                                             "gain; ")
    assert no_gain_text([0.0, 0.01], what="AUC", unit="splits") == ""
    assert no_gain_text([0.0, 0.0], what="AUC", unit="splits").startswith(
        "the same AUC on all 2 splits")


@pytest.mark.parametrize("results, need, expected", [
    ([True, True, False], 2, True),
    ([True, False, False], 2, False),          # two of three fail: 2 cannot be reached
    ([True, INCONCLUSIVE, False], 2, INCONCLUSIVE),
    ([INCONCLUSIVE] * 3, 3, INCONCLUSIVE),
    ([INCONCLUSIVE, False, False], 1, INCONCLUSIVE),
    ([False, False, False], 1, False),
])
def test_count_verdict(results, need, expected):
    assert count_verdict(results, need) == expected


def test_readable_means():
    summary = pd.DataFrame({"n": [20, 20], "accuracy_mean": [0.912345, 0.8],
                            "accuracy_se": [0.01, 0.02], "dirichlet_mean": [4.0, 1.0]},
                           index=["SVM", "Q-SVM"])
    table = readable_means(summary)
    assert list(table.columns) == ["method", "folds", "accuracy (mean)", "accuracy (s.e.)",
                                   "E(w) (mean)"]
    assert table["accuracy (mean)"].iloc[0] == 0.9123
    assert "splits" in readable_means(summary, "splits").columns


def test_exact_tolerance_pass_is_marked_and_a_clear_pass_is_not():
    """A verdict decided exactly at its tolerance (within round-off) or on a tie carries the
    edge mark, in compare(), claims_table() and summary.csv; a clear pass does not."""
    from mklcore.repro.reporting import at_tolerance, verdict_at_edge

    # 0.554 - 0.544 is 0.01000000000000001 in floats: at the tolerance, not beyond it
    table = compare([
        {"item": "at tol", "paper": 0.544, "ours": 0.554, "atol": 0.01},
        {"item": "at tol, below", "paper": 0.544, "ours": 0.534, "atol": 0.01},
        {"item": "clear", "paper": 0.544, "ours": 0.549, "atol": 0.01},
        {"item": "close at 3 tol", "paper": 1.0, "ours": 1.03, "atol": 0.01},
        {"item": "close inside", "paper": 1.0, "ours": 1.02, "atol": 0.01},
        {"item": "beyond", "paper": 1.0, "ours": 1.0101, "atol": 0.01},
        {"item": "equal, tol 0", "paper": 392, "ours": 392, "atol": 0},
        {"item": "relative", "paper": 2.0, "ours": 2.1, "rtol": 0.05},
        {"item": "not compared", "paper": 0.544, "ours": 0.554, "atol": 0.01,
         "comparable": "matched by construction"},
    ])
    assert table["verdict"].tolist() == ["match", "match", "match", "close", "close", "close",
                                         "match", "match", "n/a"]
    assert table["edge"].tolist() == [True, True, False, True, False, False, False, True,
                                      False]
    assert verdict_at_edge(0.9, 0.91, atol=0.01) and not verdict_at_edge(0.9, 0.95, atol=0.01)
    assert at_tolerance(abs(14 - 12), 2) and not at_tolerance(abs(13 - 12), 2)
    assert at_tolerance(0, 0) and not at_tolerance(-1, 0)  # a 0-0 tie; a strict win
    assert not at_tolerance(float("nan"), 0) and not at_tolerance(None, 1)

    claims = claims_table([Claim("C1", "at the tolerance", True, edge=True),
                           Claim("C2", "clear", True),
                           Claim("C3", "fails", False, edge=True)])
    assert claims["edge"].tolist() == [True, False, False]
    summary = summary_table(pd.concat([summary_table(table), summary_table(claims)],
                                      ignore_index=True))
    assert summary["edge"].tolist() == [True, True, False, True, False, False, False, True,
                                        False, True, False, False]
    with pytest.raises(ValueError, match="edge"):
        Claim("C4", "x", True, edge="yes")


def test_edge_mark_survives_summary_csv_and_report(tmp_path):
    claims = claims_table([Claim("C1", "tie 0-0", True, edge=True), Claim("C2", "clear", True)])
    path = write_summary(summary_table(claims), tmp_path)
    back = pd.read_csv(path, keep_default_na=False, dtype=str)
    assert list(back.columns) == SUMMARY_COLUMNS and back["edge"].tolist() == ["True", "False"]
    assert summary_table(back)["edge"].tolist() == [True, False]
    report = write_report(tmp_path, title="t", claims=claims, env=False).read_text()
    header = next(line for line in report.splitlines() if line.startswith("| id |"))
    assert "| edge |" in header
