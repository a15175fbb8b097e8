"""``method="auto"``'s public rule for means (``mechanisms.choice``)."""

import math

import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDBuresWassersteinMetric, SPDMatrices

from geomstats_dp.learning.mechanisms.choice import (
    EXTRINSIC_HIGH,
    EXTRINSIC_LOW,
    RGD_NOISE_THRESHOLD,
    choose_point_method,
    laplace_noise_ratio,
    one_shot_noise_ratio,
)
from geomstats_dp.optim import canonical_point
from geomstats_dp.privacy import calibrate_gaussian

pytestmark = pytest.mark.backend_independent


def test_the_one_shot_ratio_falls_as_one_over_n():
    ratios = [one_shot_noise_ratio(n, 4, 1.0, 1e-5) for n in (100, 1000)]
    assert ratios[1] == pytest.approx(ratios[0] / 10)
    z = calibrate_gaussian(1.0, 1e-5, 1)
    assert ratios[0] == pytest.approx(math.sqrt(4) * 2 * z / 100)


def test_the_rule_switches_at_its_threshold():
    dim, epsilon, delta = 2, 1.0, 1e-5
    z = calibrate_gaussian(epsilon, delta, 1)
    n_switch = math.sqrt(dim) * 2 * z / RGD_NOISE_THRESHOLD
    assert choose_point_method(math.floor(n_switch) - 1, dim, epsilon, delta) == "rgd"
    assert choose_point_method(math.ceil(n_switch) + 1, dim, epsilon, delta) == "two_stage"


def test_laplace_is_compared_only_where_it_has_an_exact_sampler():
    sphere = Hypersphere(2)
    ratio = laplace_noise_ratio(sphere, 1000, 1.0, 1e-5, 0.5, canonical_point(sphere))
    assert ratio is not None and ratio > 0
    # more records: both noises fall as 1 / n, the ratio stays
    assert laplace_noise_ratio(sphere, 4000, 1.0, 1e-5, 0.5, canonical_point(sphere)) == (
        pytest.approx(ratio, rel=1e-6))
    spd = SPDMatrices(2, equip=False)
    spd.equip_with_metric(SPDBuresWassersteinMetric)
    assert laplace_noise_ratio(spd, 1000, 1.0, 1e-5, 0.2, canonical_point(spd)) is None


def _n_at_ratio(ratio, dim, epsilon, delta):
    """The n at which the one-shot noise ratio equals ``ratio``."""
    return math.sqrt(dim) * 2 * calibrate_gaussian(epsilon, delta, 1) / ratio


def test_extrinsic_is_chosen_in_its_band_only_where_offered():
    dim, epsilon, delta = 53, 0.1, 1e-5
    inside = round(_n_at_ratio(math.sqrt(EXTRINSIC_LOW * EXTRINSIC_HIGH), dim, epsilon,
                               delta))
    assert choose_point_method(inside, dim, epsilon, delta, extrinsic=True) == "extrinsic"
    assert choose_point_method(inside, dim, epsilon, delta) != "extrinsic"
    above = math.floor(_n_at_ratio(EXTRINSIC_HIGH, dim, epsilon, delta)) - 1
    assert choose_point_method(above, dim, epsilon, delta, extrinsic=True) == "rgd"
    below = math.ceil(_n_at_ratio(EXTRINSIC_LOW, dim, epsilon, delta)) + 1
    assert choose_point_method(below, dim, epsilon, delta, extrinsic=True) == "two_stage"


def test_the_frechet_mean_offers_extrinsic_on_the_sphere_only():
    """The same public n, dimension 3, epsilon and delta inside the band: "extrinsic" on
    S^3, not on SPD(2) nor on the hyperboloid."""
    from geomstats.geometry.hyperboloid import Hyperboloid

    from geomstats_dp.learning import PrivateFrechetMean

    n = round(_n_at_ratio(0.1, 3, 1.0, 1e-5))
    for space in (Hypersphere(3), SPDMatrices(2), Hyperboloid(3)):
        chosen = PrivateFrechetMean(space, epsilon=1.0)._choose_method(n)
        assert (chosen == "extrinsic") is isinstance(space, Hypersphere)
