"""Releases equal the committed table (``tests/learning/release_table.py``).

The table was recorded before the mechanisms became public specs: a refactor must leave
every release of every estimator and method unchanged. Values are compared to 1e-7
relative: the recording machine reproduces them bit for bit, and the tolerance admits only
the rounding of another build's BLAS and LAPACK kernels (amplified to about 3e-8 by the
hyperboloid's exponential map far from the origin). The three backends' tables hold the same
releases: the noise is drawn in numpy, so the law that a statistical test checks on numpy
is the law of the autograd and pytorch releases (docs/dev/testing.md, "Suite cost").
"""

import numpy as np
import pytest

from tests.conftest import BACKEND
from tests.learning.release_table import changed, releases, table_path

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded():
    with np.load(table_path(BACKEND)) as table:
        return dict(table)


@pytest.fixture(scope="module")
def current():
    return releases()


def test_same_releases_as_recorded(recorded, current):
    assert sorted(current) == sorted(recorded)


def test_every_release_equal(recorded, current):
    differing = changed(recorded, current)
    assert not differing, f"{len(differing)} releases changed: {differing[:20]}"


@pytest.mark.backend_independent
@pytest.mark.parametrize("backend", ["autograd", "pytorch"])
def test_every_backend_recorded_the_numpy_releases(backend):
    """Every key but the Dask route (numpy only) in each table, the same values to 1e-5
    relative (a callable loss is differentiated numerically on numpy only)."""
    with np.load(table_path("numpy")) as table:
        expected = {key: value for key, value in table.items() if not key.startswith("dask|")}
    with np.load(table_path(backend)) as table:
        recorded = dict(table)
    assert sorted(recorded) == sorted(expected)
    differing = [key for key, value in expected.items()
                 if value.shape != recorded[key].shape
                 or (value.dtype.kind in "fc"
                     and not np.allclose(recorded[key], value, rtol=1e-5, atol=1e-9,
                                         equal_nan=True))
                 or (value.dtype.kind not in "fc" and not np.array_equal(recorded[key], value))]
    assert not differing, f"{backend} differs from numpy at {differing[:20]}"
