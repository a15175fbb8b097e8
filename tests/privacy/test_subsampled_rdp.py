"""The numpy subsampled-Gaussian RDP curves agree with autodp, the reference.

autodp's ``AmplificationBySampling(improved_bound_flag=True)`` on an
``ExactGaussianMechanism``, order by order, against ``subsampled_rdp`` for all orders at
once: 1e-9 relative, and the calibrated noise multipliers and epsilons built on them too.
"""

import warnings

import numpy as np
import pytest

from geomstats_dp.privacy import renyi
from geomstats_dp.privacy.calibration import calibrate_gaussian
from geomstats_dp.privacy.events import GaussianEvent
from geomstats_dp.privacy.subsampled_rdp import (
    log_forward_differences,
    poisson_rdp,
    without_replacement_rdp,
)

pytestmark = pytest.mark.backend_independent

ORDERS = renyi.ORDERS[::3]  # every third grid order (2 ... 1024) keeps autodp's part short
RTOL = 1e-9


def _autodp_curve(noise_multiplier, sampling_rate, poisson, orders=ORDERS):
    from autodp import mechanism_zoo, transformer_zoo

    base = mechanism_zoo.ExactGaussianMechanism(sigma=noise_multiplier)
    base.neighboring = "add_remove" if poisson else "replace_one"
    amplify = transformer_zoo.AmplificationBySampling(PoissonSampling=poisson)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        mechanism = amplify(base, sampling_rate, improved_bound_flag=True)
        return np.array([mechanism.RenyiDP(order) for order in orders])


@pytest.mark.parametrize("poisson", [True, False], ids=["poisson", "without_replacement"])
@pytest.mark.parametrize("noise_multiplier, sampling_rate", [(0.7, 0.01), (2.0, 0.3), (25.0, 0.3)])
def test_curves_agree_with_autodp(poisson, noise_multiplier, sampling_rate):
    rdp = poisson_rdp if poisson else without_replacement_rdp
    ours = rdp(noise_multiplier, sampling_rate, ORDERS)
    np.testing.assert_allclose(
        ours, _autodp_curve(noise_multiplier, sampling_rate, poisson), rtol=RTOL
    )


@pytest.mark.parametrize("poisson", [True, False], ids=["poisson", "without_replacement"])
def test_tiny_rates_agree_to_the_precision_of_the_formula(poisson):
    """At q = 1e-5 the RDP is ~1e-10: both codes take log(1 + 1e-10) and lose digits."""
    rdp = poisson_rdp if poisson else without_replacement_rdp
    ours = rdp(1.0, 1e-5, ORDERS)
    reference = _autodp_curve(1.0, 1e-5, poisson)
    np.testing.assert_allclose(ours, reference, rtol=1e-6, atol=1e-15)


def test_forward_differences_match_exact_ones():
    """Low orders, where no cancellation happens: exact k-th differences of exp(x^2)."""
    grid = np.arange(8.0)
    values = np.exp(0.1 * grid**2)
    expected = [np.diff(values, k)[0] for k in range(1, 8)]
    np.testing.assert_allclose(
        log_forward_differences(0.1 * grid**2), np.log(np.abs(expected)), rtol=1e-9
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "sampling, adjacency", [("without_replacement", "replace_one"), ("poisson", "add_remove")]
)
def test_calibration_meets_the_target_on_autodp_curves(sampling, adjacency):
    """The calibrated z, re-accounted with autodp's own curve, gives the target epsilon."""
    n_steps, rate, delta, epsilon = 2000, 0.02, 1e-5, 1.0
    renyi.subsampled_curve.cache_clear()
    noise = calibrate_gaussian(epsilon, delta, n_steps, rate, sampling, adjacency)
    reference = n_steps * np.minimum(
        _autodp_curve(noise, rate, sampling == "poisson", renyi.ORDERS),
        renyi.gaussian_rdp(noise),
    )
    found = np.min(reference + renyi.conversion_offset(delta))
    event = GaussianEvent(noise, n_steps, rate, sampling, adjacency)
    ours = renyi.ledger_epsilon([event], delta)
    assert ours == pytest.approx(found, rel=RTOL)  # the grid's best order is found
    assert 1 - 1e-4 <= found / epsilon <= 1 + RTOL
