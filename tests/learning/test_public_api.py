"""The numpydoc Parameters section of every public estimator equals its constructor's
signature: the same names, in the same order (``learning``, ``model_selection``,
``federated``)."""

import inspect
import re

import pytest
from sklearn.base import BaseEstimator

import geomstats_dp.federated
import geomstats_dp.learning
import geomstats_dp.model_selection

pytestmark = pytest.mark.backend_independent

PACKAGES = (geomstats_dp.learning, geomstats_dp.model_selection, geomstats_dp.federated)
ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][\w, *]*?)(?: : .*)?$")


def public_estimators():
    found = {}
    for package in PACKAGES:
        for name in package.__all__:
            value = getattr(package, name)
            # the estimators a user builds (not the base class other estimators extend)
            if (isinstance(value, type) and issubclass(value, BaseEstimator)
                    and "__init__" in vars(value)):
                found[f"{package.__name__}.{name}"] = value
    return found


def documented_parameters(docstring):
    """The names of the Parameters section of a numpydoc docstring, in order (an entry
    "a, b : type" documents a and b)."""
    lines = inspect.cleandoc(docstring).splitlines()
    start = lines.index("Parameters")
    assert set(lines[start + 1]) == {"-"}, "Parameters is not a numpydoc section"
    names = []
    for line, following in zip(lines[start + 2:], [*lines[start + 3:], ""]):
        if following and set(following) == {"-"}:  # the next section's title
            break
        if not line or line[0].isspace():
            continue
        match = ENTRY.match(line)
        assert match, f"not a parameter entry: {line!r}"
        names += [name.strip() for name in match.group(1).split(",") if name.strip()]
    return names


def signature_parameters(cls):
    parameters = inspect.signature(cls.__init__).parameters
    return [name for name in parameters if name != "self"]


def test_the_parser_reads_numpydoc_entries():
    doc = """Summary.

    Parameters
    ----------
    a : int
        Described.
    b, c : float
    d

    Attributes
    ----------
    e_ : float
    """
    assert documented_parameters(doc) == ["a", "b", "c", "d"]


def test_every_public_estimator_is_found():
    names = {name.rsplit(".", 1)[1] for name in public_estimators()}
    assert {"PrivateERM", "PrivateFrechetMean", "PrivatePCA", "PrivateMatrixCompletion",
            "PrivateStructuredPrediction", "PrivateGridSearchCV", "PriRFed"} <= names


@pytest.mark.parametrize("name", sorted(public_estimators()))
def test_parameters_section_equals_the_signature(name):
    cls = public_estimators()[name]
    assert documented_parameters(cls.__doc__) == signature_parameters(cls)
