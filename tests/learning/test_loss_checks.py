"""The checks of a loss on a public dummy record and the inferred clip norm
(``mechanisms.loss_checks``)."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp._backend import to_backend
from geomstats_dp.learning.mechanisms.loss_checks import infer_clip_norm, probe_loss
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.optim.losses import PerSampleLoss
from geomstats_dp.privacy import PrivacyLeakWarning

SPACE = Euclidean(2)
START = to_backend(np.zeros(2))
DATA = to_backend(np.array([[3.0, 4.0], [0.0, 1.0], [np.nan, 0.0]]))


class _Shaped(PerSampleLoss):
    def __init__(self, space, values=None, gradients=None, error=None):
        super().__init__(space)
        self._values, self._gradients, self._error = values, gradients, error

    def values(self, point, data):
        if self._error:
            raise self._error
        return self._values(data)

    def gradients(self, point, data):
        return self._gradients(data)


def test_a_loss_of_the_right_shapes_passes():
    probe_loss(SquaredDistanceLoss(SPACE), DATA, START)


@pytest.mark.parametrize(("loss", "message"), [
    (_Shaped(SPACE, lambda d: d.sum(), lambda d: d), "one value per sample"),
    (_Shaped(SPACE, lambda d: d.sum(axis=1), lambda d: d[:, :1]), "gradients must have"),
    (_Shaped(SPACE, error=KeyError("x")), "raised KeyError"),
])
def test_a_loss_of_the_wrong_shapes_is_refused_on_a_dummy_record(loss, message):
    with pytest.raises(ValueError, match=message):
        probe_loss(loss, DATA, START)


def test_the_inferred_clip_norm_is_the_largest_finite_norm_and_leaks():
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        assert infer_clip_norm(SquaredDistanceLoss(SPACE), DATA, START) == pytest.approx(5.0)
