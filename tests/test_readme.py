"""The Python examples of the README's "Using the library" section run verbatim."""
import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _examples():
    text = README.read_text()
    section = text.split("## Using the library", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_shows_a_multiclass_a_regression_and_a_feature_group_example():
    code = "\n".join(_examples())
    assert "load_digits" in code and "Regressor" in code and "groups=" in code


@pytest.mark.parametrize("code", _examples(),
                         ids=[f"example{i}" for i in range(len(_examples()))])
def test_readme_example_runs(code):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # e.g. feature names lost on the way
        exec(compile(code, str(README), "exec"), {})
