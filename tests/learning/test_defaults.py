"""The data-independent defaults of the gradient methods (``learning._defaults``)."""

import math

import numpy as np
import pytest

from geomstats_dp.learning import _defaults
from geomstats_dp.optim import ConstantStep, InverseTimeStep

pytestmark = pytest.mark.backend_independent


def test_the_horizon_grows_with_n_and_epsilon_and_is_floored():
    horizon = _defaults.privacy_horizon(1000, 3, 1.0, 1e-5)
    assert horizon == pytest.approx(math.log(1000**2 / (3 * math.log(1e5))))
    assert _defaults.privacy_horizon(10_000, 3, 1.0, 1e-5) == pytest.approx(
        horizon + 2 * math.log(10))
    assert _defaults.privacy_horizon(2, 3, 0.01, 1e-5) == 1.0


def test_default_steps_batches_and_outputs():
    assert _defaults.default_n_iter("rsgd", 400, 2, 1.0, 1e-5) == 400
    assert _defaults.default_n_iter("rsvrg", 400, 2, 1e-3, 1e-5) == 2
    rgd = _defaults.default_n_iter("rgd", 400, 2, 1.0, 1e-5)
    assert rgd == math.ceil(_defaults.privacy_horizon(400, 2, 1.0, 1e-5))
    assert _defaults.default_batch_size(400) == 20
    assert _defaults.default_inner_steps(400) == 40
    assert [_defaults.default_output(m) for m in ("rgd", "rsgd", "rsvrg")] == [
        "last", "weighted_average", "last"]


def test_noise_aware_steps_shrink_as_the_noise_grows():
    quiet = _defaults.default_step_size("rgd", 10, 1.0, (1e-9,), 3)
    loud = _defaults.default_step_size("rgd", 10, 1.0, (1.0,), 3)
    assert isinstance(quiet, ConstantStep)
    assert quiet(0) == pytest.approx(_defaults.RGD_STEP_SIZE)
    assert loud(0) == pytest.approx(_defaults.RGD_STEP_SIZE / 2)  # s = 1 / sqrt(1 + 3)
    rsgd = _defaults.default_step_size("rsgd", 10, 1.0, (1.0,), 3)
    assert isinstance(rsgd, InverseTimeStep)
    assert rsgd(0) == pytest.approx(1 / 4)  # 1 / (t + 1 / s^2)
    svrg = _defaults.default_step_size("rsvrg", 10, 1.0, (1e-9,), 3, smoothness=2.0)
    assert svrg(0) == pytest.approx(_defaults.RGD_STEP_SIZE / (10 * 2.0))
    assert np.isfinite(loud(100))
