"""PrivateFrechetMean with the gradient methods: correctness, privacy plumbing, API."""

import math
import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.base import clone

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.learning.reference import exact_frechet_mean
from geomstats_dp.privacy import (
    BudgetExceededError,
    PrivacyBudget,
    PrivacyLeakWarning,
    compose_epsilon,
)
from tests.conftest import shifted


def _points_near(space, center, radius, n_samples, seed):
    """n points Exp_center(v), v uniform direction, norm uniform on [0, radius]."""
    rng = np.random.default_rng(seed)
    directions = to_numpy(TangentGaussian(space).sample(center, n_samples, random_state=rng))
    norms = to_numpy(space.metric.norm(to_backend(directions), center))
    lengths = radius * rng.random(n_samples)
    tangent = directions * (lengths / norms).reshape((-1,) + (1,) * len(space.shape))
    return space.metric.exp(to_backend(tangent), center)


SPACES = {
    "spd": lambda: (SPDMatrices(3), gs.array(np.diag([2.0, 1.0, 0.5]))),
    "sphere": lambda: (Hypersphere(2), gs.array([0.0, 0.6, 0.8])),
    "hyperboloid": lambda: (
        Hyperboloid(2), gs.array([math.cosh(1.0), math.sinh(1.0), 0.0])
    ),
}


class _Recorder:
    """Replaces TangentGaussian.sample, records each call's sigma and draw."""

    def __init__(self, monkeypatch, zero=False):
        self.sigmas, self.draws = [], []
        original = TangentGaussian.sample
        recorder = self

        def sample(sampler, base_point, n_samples=1, sigma=1.0, random_state=None, mean=None):
            draw = original(sampler, base_point, n_samples, sigma, random_state, mean)
            if zero:
                draw = draw * 0.0
            recorder.sigmas.append(sigma)
            recorder.draws.append((to_numpy(draw), to_numpy(base_point)))
            return draw

        monkeypatch.setattr(TangentGaussian, "sample", sample)


@pytest.mark.parametrize("name", sorted(SPACES))
def test_noise_off_matches_geomstats_frechet_mean(name, monkeypatch):
    space, center = SPACES[name]()
    points = _points_near(space, center, 0.8, 40, seed=1)
    _Recorder(monkeypatch, zero=True)
    estimator = PrivateFrechetMean(
        space, epsilon=1.0, clip_norm=10.0, n_iter=60, step_size=1.0, random_state=0
    ).fit(points)
    expected = exact_frechet_mean(space, points)
    assert float(space.metric.dist(estimator.estimate_, expected)) < 1e-6


@pytest.mark.parametrize("method", ["rgd", "rsgd"])
def test_noise_drawn_has_the_calibrated_sigma(method, monkeypatch):
    space, center = SPACES["spd"]()
    points = _points_near(space, center, 1.0, 400, seed=2)
    recorder = _Recorder(monkeypatch)
    clip = 1.5
    estimator = PrivateFrechetMean(
        space, epsilon=1.0, delta=1e-5, method=method, clip_norm=clip, batch_size=10,
        n_iter=100, random_state=3,
    ).fit(points)
    n = len(points)
    batch = n if method == "rgd" else 10
    calibrated = estimator.noise_multiplier_ * 2 * clip / batch
    assert np.allclose(recorder.sigmas, calibrated, rtol=1e-12)
    # Squared metric norms of all draws, over sigma^2: chi-square with d * n_draws degrees
    # of freedom; 5 standard deviations sqrt(2 k).
    squared = sum(
        float(space.metric.squared_norm(to_backend(draw), to_backend(base)))
        for draw, base in recorder.draws
    )
    dof = space.dim * len(recorder.draws)
    assert abs(squared / calibrated**2 - dof) < 5 * math.sqrt(2 * dof)


def test_neighbouring_datasets_take_identical_schedules(monkeypatch):
    space, center = SPACES["sphere"]()
    points = to_numpy(_points_near(space, center, 1.0, 30, seed=4))
    neighbour = points.copy()
    neighbour[7] = -to_numpy(center)  # one record replaced by a far point
    runs = []
    for data in (points, neighbour):
        recorder = _Recorder(monkeypatch)
        estimator = PrivateFrechetMean(
            space, method="rsgd", clip_norm=1.0, batch_size=5, n_iter=40, random_state=5
        ).fit(to_backend(data))
        runs.append((estimator.n_iter_, estimator.n_gradient_evaluations_,
                     recorder.sigmas, estimator.noise_multiplier_))
        monkeypatch.undo()
    assert runs[0] == runs[1]


def test_budget_spent_equals_the_target():
    space, center = SPACES["sphere"]()
    points = _points_near(space, center, 1.0, 50, seed=6)
    for method in ("rgd", "rsgd", "rsvrg"):
        estimator = PrivateFrechetMean(
            space, epsilon=0.7, delta=1e-6, method=method, clip_norm=1.0, random_state=0
        ).fit(points)
        budget = estimator.budget_
        assert budget.epsilon == 0.7
        assert budget.spent_epsilon == pytest.approx(0.7, rel=1e-3)
        assert compose_epsilon(estimator.events_, 1e-6) <= 0.7 * (1 + 1e-9)


def test_shared_budget_composes_and_refuses_before_reading_data():
    space, center = SPACES["sphere"]()
    points = _points_near(space, center, 1.0, 50, seed=7)
    budget = PrivacyBudget(1.0, 1e-5)
    with budget:
        first = PrivateFrechetMean(space, epsilon=0.8, clip_norm=1.0, random_state=0)
    first.fit(points)
    assert first.budget_ is budget
    assert len(budget.events) == 1
    spent = budget.spent_epsilon
    corrupted = to_numpy(points)
    corrupted[0, 0] = np.nan  # would raise ValueError if the values were read
    with pytest.raises(BudgetExceededError):
        PrivateFrechetMean(space, epsilon=0.8, clip_norm=1.0, budget=budget).fit(corrupted)
    assert budget.spent_epsilon == spent and len(budget.events) == 1


def test_bad_inputs_raise_before_spending():
    space, center = SPACES["spd"]()
    points = to_numpy(_points_near(space, center, 1.0, 10, seed=8))
    budget = PrivacyBudget(10.0, 1e-5)
    off = points.copy()
    off[3] = -np.eye(3)
    nan = points.copy()
    nan[2, 1, 1] = np.inf
    cases = [
        (off, {}, r"indices \[3\]"),
        (nan, {}, r"index \(2, 1, 1\)"),
        (points[:, :2, :2], {}, "shape"),
        (points[:1], {}, "at least 2"),
        (points, {"epsilon": 0.0}, "epsilon"),
        (points, {"delta": 1.0}, "delta"),
        (points, {"method": "newton"}, "method"),
        (points, {"clip_norm": -1.0}, "clip_norm"),
    ]
    for data, params, message in cases:
        estimator = PrivateFrechetMean(space, budget=budget, **{"clip_norm": 1.0, **params})
        with pytest.raises(ValueError, match=message):
            estimator.fit(to_backend(data))
        assert not hasattr(estimator, "estimate_")
    assert budget.events == ()


def test_sklearn_conventions_and_inferred_clip_warning():
    space, center = SPACES["sphere"]()
    points = _points_near(space, center, 1.0, 30, seed=9)
    estimator = PrivateFrechetMean(space, epsilon=2.0, method="rgd", random_state=1)
    params = estimator.get_params()
    assert params["epsilon"] == 2.0 and params["clip_norm"] is None
    copy = clone(estimator)
    assert copy.get_params()["epsilon"] == 2.0
    with pytest.warns(PrivacyLeakWarning, match="clip_norm was inferred"):
        estimator.fit(points)
    assert estimator.clip_norm_ > 0 and estimator.clip_norm is None
    assert bool(space.belongs(estimator.estimate_))
    with pytest.warns(PrivacyLeakWarning):
        assert estimator.score(points) < 0


def test_the_default_on_a_small_sphere_sample_needs_no_clip_bound():
    """n = 30 on S^2 at epsilon 2 (one-shot noise ratio 0.19): "auto" picks the extrinsic
    mean, whose unit vectors bound its sensitivity; clip_norm=None reads nothing."""
    space, center = SPACES["sphere"]()
    points = _points_near(space, center, 1.0, 30, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        estimator = PrivateFrechetMean(space, epsilon=2.0, random_state=1).fit(points)
    assert estimator.method_ == "extrinsic" and estimator.clip_norm_ == 1.0


def test_random_state_reproducible_and_weights_raise_sensitivity():
    space, center = SPACES["spd"]()
    points = _points_near(space, center, 1.0, 20, seed=10)
    fits = [PrivateFrechetMean(space, clip_norm=1.0, random_state=11).fit(points)
            for _ in range(2)]
    assert np.allclose(to_numpy(fits[0].estimate_), to_numpy(fits[1].estimate_))
    weights = np.ones(20)
    weights[0] = 5.0
    weighted = PrivateFrechetMean(space, clip_norm=1.0, random_state=11).fit(
        points, sample_weight=weights)
    # same noise multiplier, sensitivity 2C max_i w_i instead of 2C/n
    event = weighted.events_[0]
    assert event.sensitivity == pytest.approx(2 * 1.0 * 5.0 / 24.0)
    assert weighted.noise_multiplier_ == pytest.approx(fits[0].noise_multiplier_)


@pytest.mark.slow
def test_excess_risk_falls_with_n():
    """Han et al. 2024 Section 6.1: SPD(2), Wishart W(I/2, 2) samples within distance 1 of I."""
    space = SPDMatrices(2)
    rng = np.random.default_rng(shifted(12))

    def wishart(n):
        kept = []
        while len(kept) < n:
            g = rng.standard_normal((4 * n, 2, 2)) / math.sqrt(2)
            w = np.einsum("nij,nkj->nik", g, g)
            d = to_numpy(space.metric.dist(to_backend(w), to_backend(np.eye(2))))
            kept.extend(w[d <= 1.0])
        return to_backend(np.array(kept[:n]))

    def loss(points, x):
        return float(gs.mean(space.metric.squared_dist(points, x))) / 2

    risks = []
    for n in (30, 120, 480):
        excess = []
        for seed in range(8):
            points = wishart(n)
            best = loss(points, exact_frechet_mean(space, points))
            fit = PrivateFrechetMean(space, epsilon=0.5, delta=1e-3, clip_norm=2.0,
                                     random_state=shifted(seed)).fit(points)
            excess.append(loss(points, fit.estimate_) - best)
        risks.append(np.mean(excess))
    assert risks[0] > risks[1] > risks[2]
    assert risks[2] < risks[0] / 4  # theory: excess risk ~ 1/n^2, up to logs


def test_secure_randomness_and_progress_bar(capsys):
    space, center = SPACES["sphere"]()
    points = _points_near(space, center, 1.0, 30, seed=13)
    estimator = PrivateFrechetMean(space, clip_norm=1.0, secure=True, verbose=True, n_iter=5)
    estimate = estimator.fit(points).estimate_
    assert bool(space.belongs(estimate))
    assert "5/5" in capsys.readouterr().err  # tqdm's bar, on stderr
    with pytest.raises(ValueError, match="secure=True"):
        PrivateFrechetMean(space, clip_norm=1.0, secure=True, random_state=0).fit(points)
