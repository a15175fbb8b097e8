"""The tangent, two-stage and automatic releases of the (robust) Frechet mean.

Convergence at a huge epsilon from a far start, with a loose clip norm and for the Huber
loss; the noise drawn against the calibrated noise; identical public outputs on
neighbouring datasets; "auto" a function of public quantities only.
"""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import (
    PrivateERM,
    PrivateFrechetMean,
    ScheduleStopsShortWarning,
)
from geomstats_dp.learning.mechanisms.choice import choose_point_method
from geomstats_dp.learning.mechanisms.tangent import LOCALISE_FACTOR, LOCALISE_GRID
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.optim import HuberDistanceLoss
from geomstats_dp.privacy import compose_epsilon
from tests.conftest import shifted
from tests.optim.spies import TangentGaussianSpy

HUGE = 1e8
FAR_SPD = np.diag([8.0, 0.2])  # distance about 2.6 from the identity, the canonical start
FAR_POLE = np.array([math.cos(1.2), math.sin(1.2), 0.0])  # 1.2 from the pole e_0


def _points_around(space, center, n_samples, seed, spread):
    """(space, Exp_center of tangent Gaussian vectors N_center(0, spread^2))."""
    rng = np.random.default_rng(seed)
    tangent = TangentGaussian(space).sample(to_backend(center), n_samples, sigma=spread,
                                            random_state=rng)
    return space, to_numpy(space.metric.exp(tangent, to_backend(center)))


def _spd_points(n_samples, seed, center=FAR_SPD, spread=0.3):
    """SPD(2) points (affine-invariant metric) around ``center``."""
    return _points_around(SPDMatrices(2), center, n_samples, seed, spread)


def _sphere_points(n_samples, seed, center=FAR_POLE, spread=0.25):
    """S^2 points around ``center``."""
    return _points_around(Hypersphere(2), center, n_samples, seed, spread)


def _max_distance(space, points, point):
    return float(np.max(to_numpy(space.metric.dist(to_backend(points), to_backend(point)))))


def _huber_mean(space, points, radius, start, n_iter=3000):
    """Independent reference: unit steps along the mean of the Log maps capped at D."""
    point = np.asarray(start, dtype=float)
    for _ in range(n_iter):
        logs = to_numpy(space.metric.log(to_backend(points), to_backend(point)))
        norms = np.linalg.norm(logs, axis=-1)  # the sphere's metric is the ambient one
        step = (logs * np.minimum(1.0, radius / np.maximum(norms, 1e-300))[:, None]).mean(0)
        if np.linalg.norm(step) < 1e-12:
            break
        point = to_numpy(space.metric.exp(to_backend(step), to_backend(point)))
    return point


def _distance(space, a, b):
    return float(to_numpy(space.metric.dist(to_backend(a), to_backend(b))))


# -- defaults that converge ----------------------------------------------------------


CONVERGENCE_TOL = 1e-3  # noise at epsilon = 1e8 (z ~ 7e-5): sqrt(d) z 2C / n <= 2e-4 here


@pytest.mark.parametrize("method", ["auto", "rgd", "two_stage"])
@pytest.mark.parametrize("looseness", [1.2, 10.0])
@pytest.mark.parametrize("data", ["spd", "sphere"])
def test_huge_epsilon_reaches_the_frechet_mean_from_a_far_start(method, looseness, data):
    space, points = _spd_points(300, seed=1) if data == "spd" else _sphere_points(300, 1)
    start = np.eye(2) if data == "spd" else np.array([1.0, 0.0, 0.0])
    clip = looseness * _max_distance(space, points, start)  # covers every iterate
    estimator = PrivateFrechetMean(space, epsilon=HUGE, clip_norm=clip, method=method,
                                   random_state=2).fit(points)
    expected = exact_frechet_mean(space, to_backend(points))
    assert _distance(space, estimator.estimate_, expected) < CONVERGENCE_TOL
    assert estimator.method_ in ("rgd", "two_stage")



@pytest.mark.parametrize("epsilon, shrink", [(HUGE, 5.0), (1e3, 10.0)])
@pytest.mark.parametrize("data", ["spd", "sphere"])
def test_default_travels_when_the_clip_norm_is_far_below_the_start_distance(
        epsilon, shrink, data):
    """C = distance(start, mean) / shrink binds every step from the start, while it covers
    the tight cluster from its mean: the default must travel the whole distance in steps
    of at most C, then converge (at epsilon 1e3 the two-stage release's growing-share
    steps alone reach 7 C; at 1e8 a localisation radius drawn uniformly from the grid,
    as when every record lay beyond C, stalls it). Noise at epsilon = 1e3: z ~ 5e-3 per unit budget, the
    travel steps' noise norms ~ sqrt(d) 40 z 2C / n <= 1e-3 (the cluster's radius), the
    last step's ~ 2e-5."""
    if data == "spd":
        space, points = _spd_points(300, seed=31, spread=0.02)
        start = np.eye(2)
    else:
        space, points = _sphere_points(300, seed=31, spread=0.02)
        start = np.array([1.0, 0.0, 0.0])
    expected = exact_frechet_mean(space, to_backend(points))
    clip = _distance(space, start, expected) / shrink
    assert _max_distance(space, points, to_numpy(expected)) < clip  # C covers the data
    estimator = PrivateFrechetMean(space, epsilon=epsilon, delta=1e-6, clip_norm=clip,
                                   random_state=32).fit(points)
    assert estimator.method_ == "two_stage"
    assert _distance(space, estimator.estimate_, expected) < CONVERGENCE_TOL

def test_huge_epsilon_tangent_release_is_exact_on_a_flat_space():
    space = Euclidean(3)
    points = np.random.default_rng(3).normal(loc=[5.0, -4.0, 2.0], size=(200, 3))
    clip = 10 * _max_distance(space, points, np.zeros(3))
    estimator = PrivateFrechetMean(space, epsilon=HUGE, clip_norm=clip, method="tangent",
                                   random_state=4).fit(points)
    assert np.linalg.norm(to_numpy(estimator.estimate_) - points.mean(0)) < CONVERGENCE_TOL


def test_tangent_release_has_a_curvature_bias_far_from_its_start():
    """Documented limitation: Exp_x0(mean Log_x0 z_i) is not the Frechet mean on SPD."""
    space, points = _spd_points(300, seed=5, spread=0.8)
    clip = 1.2 * _max_distance(space, points, np.eye(2))
    estimator = PrivateFrechetMean(space, epsilon=HUGE, clip_norm=clip, method="tangent",
                                   random_state=6).fit(points)
    expected = exact_frechet_mean(space, to_backend(points))
    assert _distance(space, estimator.estimate_, expected) > 100 * CONVERGENCE_TOL


@pytest.mark.parametrize("method", ["auto", "rgd", "two_stage"])
def test_huge_epsilon_reaches_the_huber_mean(method):
    space, points = _sphere_points(300, seed=7)
    points[:30] = -points[:30]  # far outliers: the Huber mean differs from the mean
    radius = 0.4
    start = np.array([1.0, 0.0, 0.0])
    estimator = PrivateERM(space, HuberDistanceLoss(space, radius), epsilon=HUGE,
                           clip_norm=radius, method=method, random_state=8).fit(points)
    expected = _huber_mean(space, points, radius, FAR_POLE)
    assert _distance(space, estimator.estimate_, expected) < CONVERGENCE_TOL
    # the reference is the Huber mean, not the start or the Frechet mean
    assert _distance(space, expected, start) > 1.0


# -- the noise drawn is the calibrated noise -------------------------------------------


def _chi_square_ok(space, spy):
    """Squared norms of the draws over sigma^2: chi-square, d x draws degrees, 5 sd."""
    total = sum(float(to_numpy(space.metric.squared_norm(to_backend(d), to_backend(b))))
                / s**2 for d, b, s in zip(spy.draws, spy.base_points, spy.sigmas))
    dof = int(space.dim) * len(spy.draws)
    return abs(total - dof) < 5 * math.sqrt(2 * dof)


def test_tangent_release_is_the_clipped_tangent_mean_plus_the_calibrated_noise(monkeypatch):
    space, points = _spd_points(400, seed=9)
    spy = TangentGaussianSpy(monkeypatch)
    clip, x0 = 2.0, np.eye(2)
    estimator = PrivateFrechetMean(space, epsilon=1.0, delta=1e-6, clip_norm=clip,
                                   method="tangent", random_state=10).fit(points)
    (sigma,) = spy.sigmas
    assert sigma == pytest.approx(estimator.noise_multiplier_ * 2 * clip / 400, rel=1e-12)
    assert compose_epsilon(estimator.events_, 1e-6) == pytest.approx(1.0, rel=1e-6)
    logs = to_numpy(space.metric.log(to_backend(points), to_backend(x0)))
    norms = to_numpy(space.metric.norm(to_backend(logs), to_backend(x0)))
    clipped = logs * np.minimum(1.0, clip / norms)[:, None, None]
    # the release steps along minus the noisy gradient -mean clip(Log) + xi
    expected = space.metric.exp(to_backend(clipped.mean(0) - spy.draws[0]), to_backend(x0))
    assert np.allclose(to_numpy(estimator.estimate_), to_numpy(expected), atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_two_stage_noise_follows_its_calibration(monkeypatch, seed):
    space, points = _sphere_points(500, seed=shifted(11 + seed))
    spy = TangentGaussianSpy(monkeypatch)
    clip, n = 3.0, 500
    estimator = PrivateFrechetMean(space, epsilon=0.5, delta=1e-6, clip_norm=clip,
                                   method="two_stage", random_state=shifted(seed)).fit(points)
    schedule = list(estimator.noise_multipliers_.values())
    # the steps skipped once settled repeat the coarse step's multiplier (travel steps)
    multipliers = schedule[len(schedule) - estimator.n_iter_:]
    assert len(spy.sigmas) == len(multipliers) == estimator.n_iter_ >= 2
    assert multipliers[0] == schedule[0]
    assert spy.sigmas[0] == pytest.approx(multipliers[0] * 2 * clip / n, rel=1e-12)
    # the refinement steps share one private radius C2 <= C from the public grid
    radii = [s * n / (2 * z) for s, z in zip(spy.sigmas[1:], multipliers[1:])]
    assert np.allclose(radii, radii[0], rtol=1e-12) and radii[0] <= clip * (1 + 1e-12)
    grid = LOCALISE_FACTOR * clip * LOCALISE_GRID
    assert radii[0] == pytest.approx(clip) or np.isclose(grid, radii[0], rtol=1e-12).any()
    # Gaussian DP composition of the steps plus the pure quantile: exactly epsilon
    assert compose_epsilon(estimator.events_, 1e-6) == pytest.approx(0.5, rel=1e-6)
    assert estimator.budget_.spent_epsilon <= 0.5 * (1 + 1e-9)
    assert _chi_square_ok(space, spy)


# -- public outputs ------------------------------------------------------------------


PUBLIC = ("method_", "n_iter_", "noise_multiplier_", "noise_multipliers_",
          "n_gradient_evaluations_", "clip_norm_", "events_", "noise_ratio_")


def _public_outputs(estimator, points):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(points)
    released = estimator.__dict__.get("_released_outputs", frozenset())  # two_stage's counts
    outputs = {name: getattr(estimator, name) for name in PUBLIC
               if hasattr(estimator, name) and name not in released}
    return outputs, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("method", ["auto", "tangent", "two_stage"])
@pytest.mark.parametrize("n_samples", [40, 2000])
def test_neighbouring_datasets_give_identical_public_outputs(method, n_samples):
    space, points = _sphere_points(n_samples, seed=13)
    neighbour = points.copy()
    neighbour[3] = -points[3]  # one record replaced by its antipode
    runs = [_public_outputs(PrivateFrechetMean(space, epsilon=1.0, clip_norm=1.0,
                                               method=method, random_state=14), data)
            for data in (points, neighbour)]
    assert runs[0] == runs[1]
    assert set(runs[0][0]) >= set(PUBLIC) - {"n_iter_", "n_gradient_evaluations_"}


@pytest.mark.parametrize("n_samples", [30, 300, 3000])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_auto_choice_depends_on_public_quantities_only(n_samples, epsilon):
    space, first = _spd_points(n_samples, seed=15)
    _, second = _spd_points(n_samples, seed=16, center=np.eye(2), spread=1.5)
    methods = {PrivateFrechetMean(space, epsilon=epsilon, clip_norm=3.0,
                                  random_state=17).fit(data).method_
               for data in (first, second)}
    assert methods == {choose_point_method(n_samples, 3, epsilon, 1e-5)}


@pytest.mark.backend_independent
def test_auto_rule_regimes():
    """Noise-dominated settings take DP-RGD, the others the localised release."""
    assert choose_point_method(100, 63, 0.1, 1e-5) == "rgd"
    assert choose_point_method(10_000, 3, 0.1, 1e-5) == "two_stage"
    assert choose_point_method(300, 3, 1.0, 1e-5) == "two_stage"
    assert choose_point_method(300, 3, 0.1, 1e-5) == "rgd"


def test_auto_takes_laplace_with_a_small_public_ball_in_low_dimension():
    space, points = _spd_points(2000, seed=18)
    ball = {"radius": 1.2 * _max_distance(space, points, FAR_SPD), "center": FAR_SPD}
    estimator = PrivateFrechetMean(space, epsilon=1.0, random_state=19, **ball).fit(points)
    assert estimator.method_ == "laplace"
    weighted = PrivateFrechetMean(space, epsilon=1.0, clip_norm=3.0, random_state=19,
                                  **ball).fit(points, sample_weight=np.arange(1.0, 2001))
    assert weighted.method_ != "laplace"  # the Laplace release takes uniform weights only
    sphere = Hypersphere(40)
    directions = np.eye(41)[:1] + 0.0 * np.zeros((200, 41))
    high = PrivateFrechetMean(sphere, epsilon=1.0, clip_norm=1.0, radius=0.5,
                              center=np.eye(41)[0], random_state=19).fit(directions)
    assert high.method_ != "laplace"  # sqrt(d) more noise than the Gaussian release


def test_given_gradient_settings_keep_gradient_descent():
    space, points = _sphere_points(200, seed=20)
    estimator = PrivateFrechetMean(space, clip_norm=1.0, n_iter=5, random_state=21)
    assert estimator.fit(points).method_ == "rgd"


def test_tangent_methods_need_a_point_loss():
    space = Hypersphere(2)
    estimator = PrivateERM(space, lambda point, sample: -(point * sample).sum(),
                           method="tangent", clip_norm=1.0)
    with pytest.raises(TypeError, match="method='tangent'"):
        estimator.fit(_sphere_points(20, seed=22)[1])


@pytest.mark.parametrize("method", ["rgd", "two_stage"])
def test_a_schedule_that_cannot_reach_the_minimiser_says_so(method):
    """Huber radius D << C: steps of at most eta D cannot cover the distance C; the
    warning is public (identical for neighbours) and absent when D = C."""
    space, points = _sphere_points(200, seed=23)
    neighbour = points.copy()
    neighbour[0] = -points[0]
    caught = []
    for data in (points, neighbour):
        estimator = PrivateERM(space, HuberDistanceLoss(space, 0.01), epsilon=1.0,
                               clip_norm=2.0, method=method, random_state=24)
        caught.append(_public_outputs(estimator, data))
    assert caught[0] == caught[1]
    assert ScheduleStopsShortWarning in [category for category, _ in caught[0][1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScheduleStopsShortWarning)
        PrivateERM(space, HuberDistanceLoss(space, 2.0), epsilon=1.0, clip_norm=2.0,
                   method=method, random_state=24).fit(points)


def test_auto_with_poisson_sampling_runs_poisson_dp_rsgd():
    space, points = _sphere_points(200, seed=25)
    estimator = PrivateFrechetMean(space, clip_norm=1.0, sampling="poisson",
                                   dataset_size=250, random_state=26).fit(points)
    assert estimator.method_ == "rsgd"
    assert estimator.n_gradient_evaluations_ is None  # the batch sizes would reveal n
    assert all(event.adjacency == "add_remove" for event in estimator.events_)


def test_huber_loss_values_and_gradients():
    space, points = _sphere_points(50, seed=27, spread=0.8)
    point, radius = to_backend(FAR_POLE), 0.5
    loss = HuberDistanceLoss(space, radius)
    dist = to_numpy(space.metric.dist(to_backend(points), point))
    expected = np.where(dist > radius, radius * dist - radius**2 / 2, dist**2 / 2)
    assert np.allclose(to_numpy(loss.values(point, to_backend(points))), expected)
    grads = loss.gradients(point, to_backend(points))
    norms = to_numpy(space.metric.norm(grads, point))
    assert np.allclose(norms, np.minimum(dist, radius))
    assert (dist > radius).any() and (dist < radius).any()
    # along the geodesic towards a record, the loss falls at the rate of the gradient
    logs = to_numpy(space.metric.log(to_backend(points), point))
    step = 1e-6
    moved = space.metric.exp(to_backend(step * logs[0] / dist[0]), point)
    rate = (to_numpy(loss.values(moved, to_backend(points[:1])))[0] - expected[0]) / step
    assert rate == pytest.approx(-min(dist[0], radius), rel=1e-4)


def test_auto_skips_laplace_where_it_would_need_mcmc():
    """SPD(4) affine-invariant: the Laplace law is sampled by Metropolis-Hastings."""
    space = SPDMatrices(4)
    points = to_numpy(space.metric.exp(TangentGaussian(space).sample(
        to_backend(np.eye(4)), 500, sigma=0.1, random_state=np.random.default_rng(28)),
        to_backend(np.eye(4))))
    estimator = PrivateFrechetMean(space, epsilon=10.0, clip_norm=1.0, radius=1.0,
                                   center=np.eye(4), random_state=29).fit(points)
    assert estimator.method_ != "laplace"
