"""The public diagnostics of a release's schedule (``learning._diagnostics``)."""

import warnings

import numpy as np
import pytest

from geomstats_dp.learning._diagnostics import (
    NoiseDominatesWarning,
    ScheduleStopsShortWarning,
    noise_ratio,
    reach,
)
from tests.conftest import shifted

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize("step", [0.1, 0.5])
def test_noise_ratio_matches_a_simulation_of_the_model_problem(step):
    """On |x - z|^2 / 2 in R^d a step is e <- (1 - eta) e + eta xi, xi ~ N(0, sigma^2 I):
    the last iterate's noise over the progress (1 - (1 - eta)^T) C."""
    dim, sigma, clip_norm, n_steps, runs = 3, 0.2, 1.0, 12, 20_000
    rng = np.random.default_rng(shifted(5))
    noise = np.zeros((runs, dim))
    for _ in range(n_steps):
        noise = (1 - step) * noise + step * sigma * rng.standard_normal((runs, dim))
    simulated = np.sqrt(np.mean(np.sum(noise**2, axis=1)))
    progress = (1 - (1 - step) ** n_steps) * clip_norm
    ratio = noise_ratio(np.full(n_steps, step), (sigma,), dim, clip_norm, "last")
    assert ratio == pytest.approx(simulated / progress, rel=0.03)


def test_noise_ratio_grows_with_the_noise_and_averaging_lowers_it():
    steps = np.full(20, 0.3)
    low, high = (noise_ratio(steps, (s,), 2, 1.0, "last") for s in (0.1, 0.2))
    assert high == pytest.approx(2 * low)
    assert noise_ratio(steps, (0.1,), 2, 1.0, "average") < low


def test_warnings_at_their_thresholds():
    with pytest.warns(NoiseDominatesWarning, match="noise_ratio_"):
        NoiseDominatesWarning.warn_if(1.5)
    with pytest.warns(ScheduleStopsShortWarning, match="stop short"):
        ScheduleStopsShortWarning.warn_if(reach(np.full(3, 0.2), 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NoiseDominatesWarning.warn_if(0.5)
        ScheduleStopsShortWarning.warn_if(reach(np.full(3, 0.5), 1.0))


def test_reach_is_bounded_by_the_loss_radius():
    assert reach(np.ones(4), 2.0) == pytest.approx(4.0)
    assert reach(np.ones(4), 2.0, gradient_bound=0.5) == pytest.approx(1.0)
