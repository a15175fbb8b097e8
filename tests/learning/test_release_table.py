"""Releases equal the committed table (``tests/learning/release_table.py``).

The table was recorded before the mechanisms became public specs: a refactor must leave
every release of every estimator and method unchanged. Values are compared to 1e-9
relative: the recording machine reproduces them bit for bit, and the tolerance admits only
the rounding of another CPU's BLAS kernels.
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
