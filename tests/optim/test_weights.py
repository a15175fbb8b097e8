"""Sample weights: normalised to sum to one, uniform by default, bad ones refused naming
the index."""

import numpy as np
import pytest

from geomstats_dp.optim import normalize_sample_weight

pytestmark = pytest.mark.backend_independent


def test_weights_are_normalised_and_uniform_by_default():
    np.testing.assert_allclose(normalize_sample_weight(None, 4), np.full(4, 0.25))
    np.testing.assert_allclose(normalize_sample_weight([1.0, 3.0, 0.0, 4.0], 4),
                               [0.125, 0.375, 0.0, 0.5])


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1.0, 2.0], r"shape \(3,\)"),
        ([1.0, -2.0, 1.0], "at index 1"),
        ([1.0, np.nan, 1.0], "sample_weight"),
        ([0.0, 0.0, 0.0], "positive sum"),
    ],
)
def test_bad_weights_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        normalize_sample_weight(np.array(weights), 3)
