"""PrivateFrechetMean: Poisson sampling, the Laplace center's checks, the noise warning."""

import warnings

import numpy as np
import pytest
from geomstats.datasets.utils import load_connectomes
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import NoiseDominatesWarning, PrivateFrechetMean
from geomstats_dp.privacy import PrivacyBudget


def _points(n_samples, seed):
    rng = np.random.default_rng(seed)
    raw = np.array([0.0, 0.0, 1.0]) + 0.3 * rng.standard_normal((n_samples, 3))
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def test_poisson_sampling_fits_with_a_declared_size():
    sphere = Hypersphere(2)
    estimator = PrivateFrechetMean(sphere, method="rsgd", sampling="poisson",
                                   dataset_size=100, clip_norm=1.0, random_state=0)
    estimate = estimator.fit(_points(90, seed=1)).estimate_
    assert bool(sphere.belongs(estimate))
    (event,) = estimator.events_
    assert event.adjacency == "add_remove" and event.sampling_rate == 10 / 100
    assert estimator.n_iter_ == 100  # from the declared size, not from len(X) = 90


@pytest.mark.parametrize("center, message", [
    (np.array([0.0, np.nan, 1.0]), "center holds a non-finite value"),
    (np.array([0.0, 1.0]), r"center must have shape"),
    (np.array([0.0, 0.0, 2.0]), "center is not on Hypersphere"),
])
def test_laplace_center_errors_name_center(center, message):
    budget = PrivacyBudget(1.0, 1e-5)
    estimator = PrivateFrechetMean(Hypersphere(2), method="laplace", radius=0.5,
                                   center=center, budget=budget)
    with pytest.raises(ValueError, match=message):
        estimator.fit(_points(10, seed=2))
    assert budget.events == ()


def test_noise_warning_on_connectomes_depends_on_epsilon_only():
    """Connectomes (SPD(28), n = 86): at epsilon = 1 the release is noise-dominated."""
    X = to_numpy(load_connectomes()[0])
    space = SPDMatrices(28)
    with pytest.warns(NoiseDominatesWarning):
        low = PrivateFrechetMean(space, epsilon=1.0, clip_norm=1.0, random_state=0).fit(X)
    assert low.noise_ratio_ > 1
    shuffled = X[::-1].copy()
    shuffled[0] = np.eye(28)  # a replace-one neighbour: same ratio, same warning
    with pytest.warns(NoiseDominatesWarning):
        other = PrivateFrechetMean(space, epsilon=1.0, clip_norm=1.0,
                                   random_state=0).fit(shuffled)
    assert other.noise_ratio_ == low.noise_ratio_
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)
        high = PrivateFrechetMean(space, epsilon=16.0, clip_norm=1.0,
                                  random_state=0).fit(X)
    assert high.noise_ratio_ < 1


@pytest.mark.parametrize("method", ["tangent", "two_stage", "rgd", "rsgd", "rsvrg"])
@pytest.mark.parametrize("name", ["init_point", "center"])
def test_every_method_refuses_a_start_off_the_space_before_the_budget(method, name):
    """Issue 29, finding 3: "tangent" and "two_stage" released a point of norm 1.99 on
    S^2 from init_point = 2 e_2; every method now refuses it with one message, before the
    budget (an exhausted budget is not reached: ValueError, not BudgetExceededError)."""
    budget = PrivacyBudget(1e-9, 1e-12)
    estimator = PrivateFrechetMean(Hypersphere(2), method=method, clip_norm=1.0,
                                   budget=budget, random_state=0,
                                   **{name: np.array([0.0, 0.0, 2.0])})
    with pytest.raises(ValueError, match=rf"^{name} is not on Hypersphere \(atol=1e-06\)$"):
        estimator.fit(_points(20, seed=3))
    assert budget.events == () and not hasattr(estimator, "estimate_")


def test_erm_tangent_refuses_a_start_off_the_space():
    """PrivateERM shares the check (its "tangent" release used the start unchecked)."""
    from geomstats_dp.learning import PrivateERM
    from geomstats_dp.optim import SquaredDistanceLoss

    sphere = Hypersphere(2)
    budget = PrivacyBudget(1.0, 1e-5)
    estimator = PrivateERM(sphere, SquaredDistanceLoss(sphere), method="tangent",
                           clip_norm=1.0, init_point=np.array([0.0, np.inf, 1.0]),
                           budget=budget)
    with pytest.raises(ValueError, match=r"init_point holds a non-finite value at index \(1,\)"):
        estimator.fit(_points(20, seed=4))
    assert budget.events == ()
