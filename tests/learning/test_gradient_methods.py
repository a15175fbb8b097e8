"""The shared parameters, rules and spec builders of the gradient and tangent methods
(``learning._gradient_methods``)."""

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.learning import PrivateERM, PrivateFrechetMean
from geomstats_dp.learning._gradient_methods import (
    GRADIENT_CONSTRAINTS,
    auto_gradient_method,
    check_cross_params,
    clip_spec,
    gradient_spec,
    optimisation_epsilon,
    public_size,
)
from geomstats_dp.learning.mechanisms import AutoClip, GradientRelease
from geomstats_dp.learning.mechanisms.choice import choose_point_method
from geomstats_dp.optim import SquaredDistanceLoss, canonical_point

pytestmark = pytest.mark.backend_independent

SPHERE = Hypersphere(2)


def test_every_shared_parameter_is_a_parameter_of_both_estimators():
    for estimator in (PrivateERM(SPHERE, SquaredDistanceLoss(SPHERE)),
                      PrivateFrechetMean(SPHERE)):
        assert set(GRADIENT_CONSTRAINTS) <= set(estimator.get_params())
        assert set(estimator.get_params()) <= set(estimator._parameter_constraints)


@pytest.mark.parametrize(("params", "weights", "message"), [
    ({"secure": True, "random_state": 0}, None, "random_state must be None"),
    ({"sampling": "poisson"}, None, "pass dataset_size"),
    ({"sampling": "poisson", "dataset_size": 10, "batch_size": 11}, None,
     "batch_size must be <= dataset_size=10"),
    ({"sampling": "poisson", "dataset_size": 10}, np.full(10, 0.1),
     "sample_weight is not supported with Poisson"),
])
def test_cross_parameter_rules(params, weights, message):
    with pytest.raises(ValueError, match=message):
        check_cross_params(PrivateFrechetMean(SPHERE, **params), weights)


def test_poisson_rules_do_not_bind_other_methods():
    check_cross_params(PrivateFrechetMean(SPHERE, method="rgd", sampling="poisson"))


def test_public_size_is_the_declared_size_under_poisson_sampling():
    poisson = PrivateFrechetMean(SPHERE, sampling="poisson", dataset_size=500)
    assert public_size(poisson, 37) == 500
    assert public_size(PrivateFrechetMean(SPHERE), 37) == 37


def test_auto_rule():
    loss = SquaredDistanceLoss(SPHERE)
    assert auto_gradient_method(PrivateFrechetMean(SPHERE, sampling="poisson"), 50,
                                loss) == "rsgd"
    assert auto_gradient_method(PrivateFrechetMean(SPHERE, n_iter=3), 50, loss) == "rgd"
    flat = Euclidean(2)
    user = PrivateERM(flat, lambda point, sample: ((point - sample) ** 2).sum())
    assert auto_gradient_method(user, 50, user._make_loss()) == "rgd"
    for n in (10, 10_000):  # else the rule of mechanisms.choice, on public quantities
        assert auto_gradient_method(PrivateFrechetMean(SPHERE), n, loss) == (
            choose_point_method(n, 2, 1.0, 1e-5))


def test_auto_clip_spends_its_share_and_the_steps_the_rest():
    estimator = PrivateFrechetMean(SPHERE, epsilon=2.0, clip_norm="auto",
                                   clip_quantile=0.7, clip_budget_fraction=0.25)
    assert clip_spec(estimator) == AutoClip(0.7, 0.5)
    assert optimisation_epsilon(estimator) == pytest.approx(1.5)
    fixed = PrivateFrechetMean(SPHERE, epsilon=2.0, clip_norm=1.5)
    assert clip_spec(fixed) == 1.5
    assert optimisation_epsilon(fixed) == 2.0


def test_gradient_spec_carries_the_parameters():
    estimator = PrivateFrechetMean(SPHERE, epsilon=2.0, clip_norm=1.5, n_iter=4,
                                   output="average", noise_method="explicit_basis")
    start = canonical_point(SPHERE)
    spec = gradient_spec(estimator, "rgd", 30, None, SquaredDistanceLoss(SPHERE), start)
    assert isinstance(spec, GradientRelease)
    assert (spec.n_samples, spec.epsilon, spec.clip_norm, spec.n_iter) == (30, 2.0, 1.5, 4)
    assert (spec.output, spec.noise_method, spec.label) == (
        "average", "explicit_basis", "PrivateFrechetMean")
