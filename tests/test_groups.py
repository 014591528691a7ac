"""Named, possibly overlapping feature groups; columns by DataFrame name; kernel_names_."""
import numpy as np
import pandas as pd
import pytest

import mklcore
from mklcore.kernels import KernelBank, gaussian, kernel_bank, kernel_stack, linear


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(60, 4)), columns=["age", "bmi", "g1", "g2"])
    y = np.where(df["g1"] + 0.2 * rng.normal(size=60) > 0, "case", "control")
    return df, y


GROUPS = {"clinical": ["age", "bmi"], "genes": ["g1", "g2"], "bmi+genes": [1, 2, 3]}


def test_groups_make_one_kernel_per_group_and_template():
    bank = kernel_bank("rbf", sigma=[1.0, 3.0], groups=GROUPS)
    assert [k.name for k in bank] == [f"{g}: gaussian(sigma={s})" for g in GROUPS
                                      for s in (1.0, 3.0)]
    assert [k.columns for k in bank[::2]] == [("age", "bmi"), ("g1", "g2"), (1, 2, 3)]
    with pytest.raises(ValueError, match="groups or per_feature"):
        kernel_bank("simplemkl", groups=GROUPS, per_feature=True)
    with pytest.raises(ValueError, match="'groups' parameter of kernel_bank"):
        kernel_bank("linear", groups=[[0, 1]])
    with pytest.raises(ValueError, match="group 'x'"):
        kernel_bank("linear", groups={"x": "each"})


def test_named_columns_are_the_dataframe_columns(frame):
    df, _ = frame
    bank = kernel_bank("rbf", sigma=[1.0], groups=GROUPS)
    K = KernelBank(kernels=bank).fit_transform(df)
    X = df.to_numpy()
    expected = kernel_stack([gaussian(sigma=1.0, columns=c) for c in ([0, 1], [2, 3], [1, 2, 3])],
                            X)
    np.testing.assert_allclose(K, expected)
    np.testing.assert_allclose(kernel_stack([linear(columns=["g2"])], df)[0],
                               np.outer(X[:, 3], X[:, 3]))
    with pytest.raises(ValueError, match="without column names"):
        kernel_stack([linear(columns=["g2"])], X)
    with pytest.raises(ValueError, match=r"columns \['height'\] are not columns"):
        KernelBank(kernels=[linear(columns=["height"])]).fit(df)


@pytest.mark.parametrize("cls", [mklcore.LpMKLClassifier, mklcore.SimpleMKLClassifier,
                                 mklcore.SumKernelSVC])
def test_estimators_name_their_kernels_and_weights(cls, frame):
    df, y = frame
    bank = kernel_bank("rbf", sigma=[1.0, 3.0], groups=GROUPS)
    clf = cls(kernels=bank, normalize="trace").fit(df, y)
    assert clf.kernel_names_ == [k.name for k in bank]
    weights = clf.kernel_weights()
    assert isinstance(weights, pd.Series) and list(weights.index) == clf.kernel_names_
    np.testing.assert_array_equal(weights.to_numpy(), clf.weights_)
    assert clf.score(df, y) > 0.8
    # the same model on the array with integer columns
    positions = {"clinical": [0, 1], "genes": [2, 3], "bmi+genes": [1, 2, 3]}
    ref = cls(kernels=kernel_bank("rbf", sigma=[1.0, 3.0], groups=positions),
              normalize="trace").fit(df.to_numpy(), y)
    np.testing.assert_allclose(clf.weights_, ref.weights_)
    with pytest.raises(ValueError, match="without column names"):
        cls(kernels=bank).fit(df.to_numpy(), y)


def test_genes_group_gets_the_weight(frame):
    """The label depends on g1 only: l1-MKL puts its weight on the kernels that read g1."""
    df, y = frame
    clf = mklcore.SimpleMKLClassifier(
        kernels=kernel_bank("linear", groups={"clinical": ["age", "bmi"], "genes": ["g1"]}),
        normalize="trace").fit(df, y)
    assert clf.kernel_weights()["genes: linear()"] > 0.9


def test_per_class_weights_and_regressors_by_name(frame):
    df, _ = frame
    bank = kernel_bank("rbf", sigma=[1.0], groups=GROUPS)
    labels = np.array(["a", "b", "c"])[np.argmax(df[["age", "g1", "g2"]].to_numpy(), axis=1)]
    clf = mklcore.LpMKLClassifier(kernels=bank, multiclass="ovr-per-class",
                                  probability=True, random_state=0).fit(df, labels)
    table = clf.kernel_weights()
    assert table.shape == (3, 3) and list(table.index) == ["a", "b", "c"]
    assert clf.predict_proba(df).shape == (60, 3)
    reg = mklcore.LpMKLRegressor(kernels=[linear(columns=["g1"]), gaussian(sigma=1.0,
                                                                           columns=["age"])],
                                 C=10.0).fit(df, 2 * df["g1"])
    assert reg.kernel_names_ == ["linear(columns=['g1'])", "gaussian(sigma=1.0, columns=['age'])"]
    assert reg.kernel_weights().idxmax() == "linear(columns=['g1'])"
    assert reg.score(df, 2 * df["g1"]) > 0.95
