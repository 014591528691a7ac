"""Tests for mklcore.datasets: vendored loaders, checksums, downloaders (offline), generators.

No test touches the network: the downloaders are exercised with download=False, with a
cache filled from synthetic files, and with ``urlopen`` replaced by a failing stub.
"""

import shutil
import urllib.error

import numpy as np
import pytest
from sklearn.utils import Bunch

from mklcore import datasets
from mklcore.datasets import (
    add_label_noise,
    fetch_14cancer,
    fetch_servo,
    fetch_wpbc,
    gauss4_bayes_accuracy,
    gauss4_bayes_predict,
    list_datasets,
    load_dataset,
    load_heart,
    load_khan,
    load_mfeat,
    load_prostate,
    load_splice,
    load_letter,
    make_binary_strings,
    make_gauss4,
    make_ringnorm,
    make_synthetic_dna,
    make_twonorm,
)

# ---------------------------------------------------------------------------------------
# Loaders: shapes and class balance from shared/data/SOURCES.md
# ---------------------------------------------------------------------------------------

CLASSIFICATION = {
    "ionosphere": ((351, 33), {"g": 225, "b": 126}),
    "sonar": ((208, 60), {"M": 111, "R": 97}),
    "heart": ((270, 13), {1: 150, 2: 120}),
    "pima": ((768, 8), {0: 500, 1: 268}),
    "bupa": ((345, 6), {1: 145, 2: 200}),
    "wdbc": ((569, 30), {"B": 357, "M": 212}),
    "german": ((1000, 24), {1: 700, 2: 300}),
    "banana": ((5300, 2), {-1: 2924, 1: 2376}),
    "ringnorm": ((7400, 20), {0: 3664, 1: 3736}),
    "spambase": ((4597, 57), {0: 2785, 1: 1812}),
    "splice": ((3190, 60), {"EI": 767, "IE": 768, "N": 1655}),
    "mfeat": ((2000, 649), {d: 200 for d in range(10)}),
    "mnist": ((5000, 784), {d: 500 for d in range(10)}),
    "khan": ((83, 2308), {1: 11, 2: 29, 3: 18, 4: 25}),
    "nci60": ((64, 6830), None),
    "digits": ((1797, 64), None),
    "magic": ((19020, 10), {"g": 12332, "h": 6688}),
    "letter": ((20000, 16), None),
}
REGRESSION = {"auto_mpg": (392, 7), "housing": (506, 13), "cpu": (209, 6), "prostate": (97, 8)}


def _counts(y):
    values, counts = np.unique(y, return_counts=True)
    return {v.item(): int(c) for v, c in zip(values, counts)}


def test_list_datasets_covers_all_loaders():
    assert list_datasets() == sorted([*CLASSIFICATION, *REGRESSION])


@pytest.mark.parametrize("name", sorted(CLASSIFICATION))
def test_classification_loader_shape_and_balance(name):
    bunch = load_dataset(name)
    shape, balance = CLASSIFICATION[name]
    assert isinstance(bunch, Bunch)
    for key in ("data", "target", "feature_names", "DESCR", "source"):
        assert key in bunch, key
    assert bunch.data.shape == shape
    assert bunch.target.shape == (shape[0],)
    assert len(bunch.feature_names) == shape[1]
    assert isinstance(bunch.source, str) and "\n" not in bunch.source and bunch.source
    assert bunch.DESCR
    if balance is not None:
        assert _counts(bunch.target) == balance
    if name != "splice":
        assert bunch.data.dtype == float and np.isfinite(bunch.data).all()


@pytest.mark.parametrize("name", sorted(REGRESSION))
def test_regression_loader_shape(name):
    bunch = load_dataset(name)
    assert bunch.data.shape == REGRESSION[name]
    assert bunch.target.shape == (REGRESSION[name][0],)
    assert np.isfinite(bunch.data).all() and np.isfinite(bunch.target).all()
    assert "target_names" not in bunch


def test_return_X_y_matches_bunch():
    bunch = load_dataset("sonar")
    X, y = load_dataset("sonar", return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)


def test_liver_is_bupa():
    np.testing.assert_array_equal(load_dataset("liver").data, load_dataset("bupa").data)
    assert datasets.load_liver is datasets.load_bupa


def test_heart_errata_applied():
    bunch = load_heart()
    oldpeak = bunch.data[:, bunch.feature_names.index("oldpeak")]
    assert oldpeak.max() == pytest.approx(6.2)
    assert oldpeak.min() == 0.0
    # UCI values have one decimal at most
    np.testing.assert_allclose(oldpeak * 10, np.round(oldpeak * 10), atol=1e-9)
    # rows listed in ERRATA.csv keep their stored whole-number value
    listed = {9: 4.0, 49: 1.0, 76: 3.0, 80: 2.0, 264: 1.0}
    for row, value in listed.items():
        assert oldpeak[row] == value
    # a row not listed is divided by 10: stored 24.0 in row 0 -> 2.4
    assert oldpeak[0] == pytest.approx(2.4)


def test_ionosphere_drops_constant_attribute():
    bunch = load_dataset("ionosphere")
    assert "a2" not in bunch.feature_names
    assert bunch.feature_names[:2] == ["a1", "a3"]


def test_ringnorm_rescaled():
    X = load_dataset("ringnorm").data
    assert np.abs(X).max() < 20  # KEEL stores x1000 integers
    assert X[0, 0] == pytest.approx(0.849)


def test_splice_characters_and_drop_ambiguous():
    bunch = load_splice()
    assert bunch.data.dtype == np.dtype("<U1")
    assert set(np.unique(bunch.data)) == set("ACGTDNRS")
    clean = load_splice(drop_ambiguous=True)
    assert clean.data.shape == (3175, 60)
    assert set(np.unique(clean.data)) == set("ACGT")


def test_mfeat_views():
    bunch = load_mfeat()
    widths = {"fou": 76, "fac": 216, "kar": 64, "pix": 240, "zer": 47, "mor": 6}
    assert {k: v.shape for k, v in bunch.views.items()} == {k: (2000, w) for k, w in widths.items()}
    for name, view in bunch.views.items():
        np.testing.assert_array_equal(bunch.data[:, bunch.view_slices[name]], view)


def test_mnist_scaled_and_odd_even_balanced():
    bunch = load_dataset("mnist")
    assert bunch.data.min() == 0.0 and bunch.data.max() == 1.0
    assert _counts(np.where(bunch.target % 2 == 1, 1, -1)) == {-1: 2500, 1: 2500}


def test_khan_split():
    bunch = load_khan()
    assert bunch.X_train.shape == (63, 2308) and bunch.X_test.shape == (20, 2308)
    assert _counts(bunch.y_train) == {1: 8, 2: 23, 3: 12, 4: 20}
    assert _counts(bunch.y_test) == {1: 3, 2: 6, 3: 6, 4: 5}
    np.testing.assert_array_equal(bunch.data[bunch.train_mask], bunch.X_train)
    np.testing.assert_array_equal(bunch.target[~bunch.train_mask], bunch.y_test)


def test_cpu_target_and_estperf_not_a_feature():
    bunch = load_dataset("cpu")
    assert "estperf" not in bunch.feature_names and "perf" not in bunch.feature_names
    assert bunch.estperf.shape == (209,)
    assert len(np.unique(bunch.vendor)) == 30


def test_housing_drop_b():
    bunch = load_dataset("housing", drop_b=True)
    assert bunch.data.shape == (506, 12) and "B" not in bunch.feature_names
    assert "B" in load_dataset("housing").feature_names


def test_prostate_split_and_case32():
    bunch = load_prostate()
    assert bunch.train_mask.sum() == 67 and (~bunch.train_mask).sum() == 30
    test_rows = np.flatnonzero(~bunch.train_mask) + 1  # 1-based
    assert test_rows[:5].tolist() == [7, 9, 10, 15, 22] and test_rows[-1] == 97
    lweight = bunch.feature_names.index("lweight")
    assert bunch.data[31, lweight] == pytest.approx(3.804438)
    original = load_prostate(lweight_case32="original")
    assert original.data[31, lweight] == pytest.approx(6.1076)
    other = np.ones_like(bunch.data, dtype=bool)
    other[31, lweight] = False
    np.testing.assert_array_equal(original.data[other], bunch.data[other])
    # ESL's training mean of lpsa, the RLS2 intercept (Dinuzzo's prostate experiment)
    assert bunch.target[bunch.train_mask].mean() == pytest.approx(2.452, abs=1e-3)
    with pytest.raises(ValueError, match="lweight_case32"):
        load_prostate(lweight_case32="fixed")


# ---------------------------------------------------------------------------------------
# Checksums
# ---------------------------------------------------------------------------------------


@pytest.fixture
def heart_copy(tmp_path, monkeypatch):
    """A copy of data/heart under a tmp data dir, with MKLCORE_DATA_DIR pointing at it."""
    root = tmp_path / "data"
    shutil.copytree(datasets.data_dir() / "heart", root / "heart")
    monkeypatch.setenv("MKLCORE_DATA_DIR", str(root))
    return root / "heart"


def test_checksum_copy_loads(heart_copy):
    assert load_heart().data.shape == (270, 13)


def test_checksum_mismatch_raises_with_both_hashes(heart_copy):
    path = heart_copy / "heart.dat"
    expected = datasets._sha256(path)
    raw = bytearray(path.read_bytes())
    raw[0] = ord("8") if raw[0] != ord("8") else ord("9")  # corrupt one byte
    path.write_bytes(bytes(raw))
    actual = datasets._sha256(path)
    with pytest.raises(ValueError) as info:
        load_heart()
    message = str(info.value)
    assert "heart/heart.dat" in message
    assert expected in message and actual in message
    assert "Restore it from git" in message


def test_missing_file_and_unlisted_file(heart_copy):
    (heart_copy / "extra.dat").write_text("1,2\n")
    with pytest.raises(ValueError, match="not listed"):
        datasets._verify(heart_copy / "extra.dat")
    (heart_copy / "heart.dat").unlink()
    with pytest.raises(FileNotFoundError, match="heart.dat"):
        load_heart()


# ---------------------------------------------------------------------------------------
# Dispatcher
# ---------------------------------------------------------------------------------------


def test_unknown_dataset_suggests_closest():
    with pytest.raises(ValueError, match="Unknown dataset 'hart'") as info:
        load_dataset("hart")
    assert "Did you mean 'heart'?" in str(info.value)
    assert "ionosphere" in str(info.value)  # lists the available names


def test_dataset_names_are_normalised():
    assert load_dataset("Auto-MPG").data.shape == (392, 7)


def test_fetch_only_name_points_to_fetcher():
    with pytest.raises(ValueError, match="fetch_wpbc"):
        load_dataset("wpbc")


# ---------------------------------------------------------------------------------------
# Downloaders (never touch the network)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fetch, standin",
    [(fetch_wpbc, "load_wdbc"), (fetch_servo, "load_diabetes"), (fetch_14cancer, "load_khan")],
)
def test_fetch_without_cache_and_download_false_names_standin(tmp_path, fetch, standin):
    with pytest.raises(OSError, match=standin):
        fetch(data_home=tmp_path, download=False)


def test_fetch_without_network_names_standin(tmp_path, monkeypatch):
    def offline(url, timeout=None):
        assert timeout == 30
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(datasets.urllib.request, "urlopen", offline)
    with pytest.raises(OSError, match="load_diabetes"):
        fetch_servo(data_home=tmp_path)
    assert not (tmp_path / "servo" / "servo.data").exists()


def _synthetic_wpbc(rng, n_n=151, n_r=47, n_missing=4):
    outcome = ["N"] * n_n + ["R"] * n_r
    lines = []
    for i, out in enumerate(outcome):
        features = [f"{v:.4f}" for v in rng.uniform(0.01, 30, size=31)]
        nodes = "?" if i < n_missing else str(rng.integers(0, 28))
        lines.append(",".join([str(1000 + i), out, str(rng.integers(1, 126)), *features, nodes]))
    return "\n".join(lines) + "\n"


def test_wpbc_parser_on_small_text(tmp_path):
    path = tmp_path / "wpbc.data"
    path.write_text(
        "ID_number,outcome,time," + ",".join(f"f{i}" for i in range(32)) + "\n"  # mirror header
        + _synthetic_wpbc(np.random.default_rng(0), n_n=3, n_r=2, n_missing=1)
    )
    parsed = datasets._parse_wpbc(path.read_text())
    assert parsed["X"].shape == (5, 32)
    assert parsed["outcome"].tolist() == ["N", "N", "N", "R", "R"]
    assert np.isnan(parsed["X"][0, -1]) and np.isnan(parsed["X"]).sum() == 1
    with pytest.raises(ValueError, match="198 rows"):
        datasets._check_wpbc(parsed)


def test_fetch_wpbc_from_cache(tmp_path):
    (tmp_path / "wpbc").mkdir()
    (tmp_path / "wpbc" / "wpbc.data").write_text(_synthetic_wpbc(np.random.default_rng(1)))
    bunch = fetch_wpbc(data_home=tmp_path, download=False)
    assert bunch.data.shape == (198, 32) and len(bunch.feature_names) == 32
    assert _counts(bunch.target) == {"N": 151, "R": 47}
    assert bunch.time.shape == (198,)
    X, y = fetch_wpbc(data_home=tmp_path, download=False, dropna=True, return_X_y=True)
    assert X.shape == (194, 32) and np.isfinite(X).all()


def test_fetch_wpbc_bad_cache_is_reported(tmp_path):
    (tmp_path / "wpbc").mkdir()
    (tmp_path / "wpbc" / "wpbc.data").write_text(_synthetic_wpbc(np.random.default_rng(1), n_n=158, n_r=40))
    with pytest.raises(ValueError, match="151/47"):
        fetch_wpbc(data_home=tmp_path, download=False)


def _synthetic_servo(rng, n=167):
    lines = [f"{m},{s},{p},{v}, {r:.8f}" for m, s, p, v, r in zip(
        rng.choice(list("ABCDE"), n), rng.choice(list("ABCDE"), n), rng.integers(3, 7, n),
        rng.integers(1, 6, n), rng.uniform(0.2, 7.0, n))]
    lines[0], lines[1] = "E,E,5,4, 0.13124992", "A,B,3,1, 7.1001077"
    return "\n".join(lines)  # UCI's file has no trailing newline


def test_servo_parser_and_fetch_from_cache(tmp_path, monkeypatch):
    parsed = datasets._parse_servo("E,E,5,4, 0.28125095\nB,D,6,5, 0.5062525")
    assert parsed["motor"].tolist() == ["E", "B"] and parsed["rise_time"][1] == pytest.approx(0.5062525)

    def no_network(*args, **kwargs):
        raise AssertionError("a cached fetch must not download")

    monkeypatch.setattr(datasets.urllib.request, "urlopen", no_network)
    (tmp_path / "servo").mkdir()
    (tmp_path / "servo" / "servo.data").write_text(_synthetic_servo(np.random.default_rng(2)))
    bunch = fetch_servo(data_home=tmp_path)
    assert bunch.data.shape == (167, 12)
    np.testing.assert_array_equal(bunch.data[0, :10], [0, 0, 0, 0, 1, 0, 0, 0, 0, 1])  # motor E, screw E
    X, _ = fetch_servo(data_home=tmp_path, encoding="ordinal", return_X_y=True)
    np.testing.assert_array_equal(X[0], [4, 4, 5, 4])
    with pytest.raises(ValueError, match="encoding"):
        fetch_servo(data_home=tmp_path, encoding="dummy")


def test_fetch_servo_download_is_checked_before_caching(tmp_path, monkeypatch):
    class Response:
        def __init__(self, body):
            self.body = body

        def read(self):
            return self.body.encode()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(datasets.urllib.request, "urlopen",
                        lambda url, timeout: Response("E,E,5,4, 0.28125095\n"))
    with pytest.raises(ValueError, match="167 rows"):
        fetch_servo(data_home=tmp_path)
    assert not (tmp_path / "servo" / "servo.data").exists()
    body = _synthetic_servo(np.random.default_rng(3))
    monkeypatch.setattr(datasets.urllib.request, "urlopen", lambda url, timeout: Response(body))
    assert fetch_servo(data_home=tmp_path).data.shape == (167, 12)
    assert (tmp_path / "servo" / "servo.data").read_text() == body


def test_14cancer_parser_on_small_text(tmp_path):
    texts = {
        "14cancer.xtrain": "1.5 -2 3\n4 5 6\n",  # 2 genes x 3 samples
        "14cancer.xtest": "7 8\n9 10\n",
        "14cancer.ytrain": " 1 1 2\n",
        "14cancer.ytest": " 2 14\n",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    parsed = datasets._parse_14cancer({n: (tmp_path / n).read_text() for n in texts})
    np.testing.assert_array_equal(parsed["X_train"], [[1.5, 4], [-2, 5], [3, 6]])  # samples x genes
    assert parsed["X_test"].shape == (2, 2)
    assert parsed["y_train"].tolist() == [1, 1, 2] and parsed["y_test"].tolist() == [2, 14]
    with pytest.raises(ValueError, match="16063 genes"):
        datasets._check_14cancer(parsed)


# ---------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------


def test_binary_strings_follow_dinuzzo_recipe():
    X, y = make_binary_strings(random_state=0)
    assert X.shape == (250, 100) and set(np.unique(X)) == {0.0, 1.0}
    residual = y - X[:, :3].sum(axis=1)
    assert np.abs(residual).max() < 0.05 and 0.007 < residual.std() < 0.013
    assert 0.45 < X.mean() < 0.55
    X2, y2 = make_binary_strings(random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, make_binary_strings(random_state=1)[0])
    with pytest.raises(ValueError, match="n_features"):
        make_binary_strings(n_features=2)
    with pytest.raises(ValueError, match="noise"):
        make_binary_strings(noise=-1.0)


@pytest.mark.parametrize("variant", ["recalled", "equal"])
def test_gauss4(variant):
    X, y, comp = make_gauss4(variant=variant, random_state=0, return_components=True)
    assert X.shape == (1200, 2)
    assert np.bincount(comp).tolist() == [300] * 4
    assert _counts(y) == {-1: 600, 1: 600}
    np.testing.assert_array_equal(y, np.where(comp < 2, 1, -1))
    np.testing.assert_array_equal(X, make_gauss4(variant=variant, random_state=0)[0])
    assert not np.array_equal(X, make_gauss4(variant=variant, random_state=1)[0])
    # class -1 second-coordinate variance: 4.0 (recalled) or 2.0 (equal)
    var_neg = X[comp >= 2, 1].var()
    assert var_neg == pytest.approx({"recalled": 4.0, "equal": 2.0}[variant], rel=0.15)
    # Bayes rule on fresh samples reaches the computed Bayes accuracy
    Xb, yb = make_gauss4(20000, variant=variant, random_state=2)
    bayes = gauss4_bayes_accuracy(variant)
    assert np.mean(gauss4_bayes_predict(Xb, variant) == yb) == pytest.approx(bayes, abs=0.01)


def test_gauss4_bayes_accuracy_values_and_errors():
    # ~89.9 % (Monte Carlo) and 92.1 %
    assert gauss4_bayes_accuracy("recalled") == pytest.approx(0.8974, abs=5e-4)
    assert gauss4_bayes_accuracy("equal") == pytest.approx(0.9214, abs=5e-4)
    with pytest.raises(ValueError, match="variant"):
        make_gauss4(variant="other")
    with pytest.raises(ValueError, match="shape"):
        gauss4_bayes_predict(np.zeros((3, 3)))


def test_synthetic_dna():
    X, y, signals = make_synthetic_dna(400, random_state=0, return_signals=True)
    assert X.shape == (400, 200) and X.dtype == np.dtype("<U1")
    assert set(np.unique(X)) <= set("ACGT")
    assert _counts(y) == {-1: 200, 1: 200}
    rate_pos, rate_neg = signals[y == 1].mean(), signals[y == -1].mean()
    assert 0.5 < rate_pos < 0.7 and 0.05 < rate_neg < 0.15
    seqs = ["".join(row) for row in X]
    tata = np.array(["TATAAA" in s[67:82] for s in seqs])
    assert tata[signals[:, 0]].all()
    # background GC content 0.42 away from planted regions, in sequences without signals
    plain = ~signals.any(axis=1)
    gc = np.isin(X[plain], ["C", "G"]).mean()
    assert gc == pytest.approx(0.42, abs=0.03)
    # CpG-enriched upstream: more CG dinucleotides before the TSS
    cg = np.array([s[:100].count("CG") for s in seqs])
    assert cg[signals[:, 1]].mean() > 2 * cg[~signals[:, 1]].mean()
    # AT-rich stretch [70, 90)
    at = np.isin(X[:, 76:90], ["A", "T"]).mean(axis=1)
    assert at[signals[:, 3] & ~signals[:, 0]].mean() > at[~signals[:, 3] & ~signals[:, 0]].mean() + 0.15
    X2, y2 = make_synthetic_dna(400, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, make_synthetic_dna(400, random_state=1)[0])
    with pytest.raises(ValueError, match="length"):
        make_synthetic_dna(10, length=20)


# ---------------------------------------------------------------------------------------
# Label noise
# ---------------------------------------------------------------------------------------


def test_add_label_noise_independent_flips():
    y = np.repeat([-1, 1], 5000)
    noisy, mask = add_label_noise(y, 0.2, random_state=0, return_mask=True)
    assert np.array_equal(noisy != y, mask)
    assert set(np.unique(noisy)) == {-1, 1}
    # independent flips: Binomial(10000, 0.2), sd = 40
    assert abs(mask.sum() - 2000) < 200
    np.testing.assert_array_equal(noisy, add_label_noise(y, 0.2, random_state=0))
    assert not np.array_equal(noisy, add_label_noise(y, 0.2, random_state=1))
    np.testing.assert_array_equal(add_label_noise(y, 0.0, random_state=0), y)


def test_add_label_noise_exact_count_and_string_labels():
    y = np.array(["M", "R"] * 50)
    noisy, mask = add_label_noise(y, 0.3, random_state=0, method="exact", return_mask=True)
    assert mask.sum() == 30
    assert np.all(noisy[mask] != y[mask]) and np.all(noisy[~mask] == y[~mask])
    assert set(noisy) == {"M", "R"}
    assert add_label_noise(y, 0.125, random_state=0, method="exact", return_mask=True)[1].sum() == 13


@pytest.mark.parametrize("q", [0.5, 0.7, -0.1, float("nan")])
def test_add_label_noise_rejects_bad_q(q):
    with pytest.raises(ValueError, match=r"noise_level q must be in \[0, 0.5\); got"):
        add_label_noise(np.array([0, 1, 0, 1]), q)


def test_add_label_noise_rejects_non_binary():
    with pytest.raises(ValueError, match="two distinct"):
        add_label_noise(np.array([0, 1, 2]), 0.1)
    with pytest.raises(ValueError, match="method"):
        add_label_noise(np.array([0, 1]), 0.1, method="sometimes")


def test_letter_binary_is_a_to_m_against_n_to_z():
    X, y = load_letter(return_X_y=True)
    _, yb = load_letter(binary=True, return_X_y=True)
    assert len(np.unique(y)) == 26 and _counts(yb) == {0: 9940, 1: 10060}
    assert np.array_equal(yb == 1, np.isin(y, list("NOPQRSTUVWXYZ")))


@pytest.mark.parametrize("make", [make_ringnorm, make_twonorm])
def test_breiman_generators_seeded_any_size(make):
    X, y = make(4000, random_state=3)
    assert X.shape == (4000, 20) and set(np.unique(y)) == {0, 1}
    assert np.array_equal(X, make(4000, random_state=3)[0])
    assert not np.array_equal(X, make(4000, random_state=4)[0])
    a = 2.0 / np.sqrt(20)
    if make is make_ringnorm:  # N(0, 4I) against N(a 1, I)
        assert abs(X[y == 0].var() - 4.0) < 0.1 and abs(X[y == 1].mean() - a) < 0.02
        assert abs(X[y == 1].var() - 1.0) < 0.05
    else:  # N(a 1, I) against N(-a 1, I)
        assert abs(X[y == 0].mean() - a) < 0.02 and abs(X[y == 1].mean() + a) < 0.02
    assert make(7, n_features=3, random_state=0)[0].shape == (7, 3)
    with pytest.raises(ValueError, match="n_samples"):
        make(0)
