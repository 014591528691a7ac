"""numpydoc validation of the public API (as skglm does)."""

import inspect

import pytest

import numpydoc.validate as numpydoc_validate  # the [test] extra installs numpydoc

import mklcore  # noqa: E402

# The checks we enforce: every public object has a docstring with a summary, every
# parameter is documented (and none that does not exist), functions document what they return.
CHECKED = {
    "GL08": "object has no docstring",
    "SS01": "no summary",
    "PR01": "parameters not documented",
    "PR02": "unknown parameters documented",
    "RT01": "no Returns section",
}


def _public_objects():
    for name in sorted(mklcore.__all__):
        obj = getattr(mklcore, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj


@pytest.mark.parametrize("name,obj", list(_public_objects()), ids=lambda v: v if isinstance(v, str) else "")
def test_public_docstring(name, obj):
    module = obj.__module__
    result = numpydoc_validate.validate(f"{module}.{obj.__qualname__}")
    errors = [(code, msg) for code, msg in result["errors"] if code in CHECKED]
    if inspect.isclass(obj):
        # classes have no Returns section; PR01 is checked against __init__'s signature
        errors = [(c, m) for c, m in errors if c != "RT01"]
    assert not errors, f"{name}: " + "; ".join(f"{c} {m}" for c, m in errors)
