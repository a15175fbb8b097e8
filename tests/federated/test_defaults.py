"""PriRFed's public defaults against one-shot private averaging (the noisy clipped tangent
mean of each agent, released once and averaged), on a heterogeneous federation on S^2.

The one-shot release's noise law (150 fits, numpy draws) is checked once, on numpy: its
backend path is the conformance checks' PriRFed case and the release table's.
"""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from scipy import optimize, stats

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed
from geomstats_dp.federated.defaults import MAX_ROUNDS, MIN_ROUNDS, resolve_settings
from geomstats_dp.federated.engine import run_local
from geomstats_dp.learning.pca import PCALoss
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget
from geomstats_dp.privacy.federated_e2e import prirfed_end_to_end_epsilon
from tests.conftest import shifted

SPACE = Hypersphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
CLIP = math.pi  # every geodesic distance on S^2: nothing is clipped
SIZES = (150, 200, 250, 180, 220, 160)


# -- an independent sphere geometry and Gaussian-DP calibration (numpy and scipy only) --

def sphere_log(base, points):
    cos = np.clip(points @ base, -1.0, 1.0)
    angle = np.arccos(cos)[:, None]
    direction = points - cos[:, None] * base
    norm = np.linalg.norm(direction, axis=1, keepdims=True)
    return np.where(norm > 1e-15, angle * direction / np.maximum(norm, 1e-300), 0.0)


def sphere_exp(base, vector):
    norm = np.linalg.norm(vector)
    return base if norm == 0 else math.cos(norm) * base + math.sin(norm) * vector / norm


def sphere_dist(a, b):
    return float(np.arccos(np.clip(np.dot(a, b), -1.0, 1.0)))


def frechet_mean(points, n_iter=500):
    """Karcher iteration with unit steps from the first point, to a fixed point."""
    mean = points[0]
    for _ in range(n_iter):
        mean = sphere_exp(mean, sphere_log(mean, points).mean(axis=0))
    return mean


def gaussian_multiplier(epsilon, delta, n_releases=1):
    """Noise multiplier z of n Gaussian releases of sensitivity 1 at (epsilon, delta):
    Gaussian DP with mu = sqrt(n) / z, delta(eps) = Phi(-eps/mu + mu/2)
    - e^eps Phi(-eps/mu - mu/2) (Dong, Roth & Su 2022; Balle & Wang 2018)."""
    def excess(log_mu):
        mu = math.exp(log_mu)
        return (stats.norm.cdf(-epsilon / mu + mu / 2)
                - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2) - delta)

    mu = math.exp(optimize.brentq(excess, -12.0, 5.0, xtol=1e-14))
    return math.sqrt(n_releases) / mu


def federation(seed=0, spread=0.9, within=0.25):
    """Six agents around six different centres (heterogeneous), on the northern cap."""
    rng = np.random.default_rng(seed)
    agents = []
    for size in SIZES:
        centre = sphere_exp(NORTH, np.append(rng.normal(scale=spread / 1.4, size=2), 0.0))
        tangent = rng.normal(scale=within, size=(size, 3))
        tangent -= np.outer(tangent @ centre, centre)
        agents.append(np.array([sphere_exp(centre, v) for v in tangent]))
    return agents


def one_shot(epsilon, seed):
    return PriRFed(SPACE, epsilon=epsilon, local_method="tangent_mean", n_rounds=1,
                   n_sampled=len(SIZES), clip_norm=CLIP, random_state=seed)


def error(estimator, target):
    return sphere_dist(to_numpy(estimator.estimate_), target)


# -- utility --------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_defaults_beat_or_tie_one_shot_averaging_on_heterogeneous_agents(epsilon):
    data = federation()
    target = frechet_mean(np.concatenate(data))
    seeds = range(12)
    default = [error(PriRFed(SPACE, epsilon=epsilon, clip_norm=CLIP,
                             random_state=seed).fit(data), target) for seed in seeds]
    baseline = [error(one_shot(epsilon, seed).fit(data), target) for seed in seeds]
    gap = np.array(default) - np.array(baseline)  # paired by seed
    assert gap.mean() <= 2 * gap.std(ddof=1) / math.sqrt(len(gap))


def test_noise_dominated_defaults_beat_the_public_start_on_the_sphere():
    """11 agents of 90 records on S^9 around a point 1.2 rad from the start, epsilon 0.1:
    each agent's noise is about 3.2 rad, beyond pi. The default (one round of tangent
    means) lands nearer the global mean than the start itself: mean error over 12 seeds
    about 0.9 (its standard error about 0.05); with the agents' replies sent as points,
    wrapped and read back with Log, it was about 1.5."""
    dim, far = 10, 1.2
    start, rng = np.eye(dim)[0], np.random.default_rng(shifted(4))
    centre = sphere_exp(start, far * np.eye(dim)[1])
    agents = []
    for _ in range(11):
        tangent = rng.normal(scale=0.3, size=(90, dim))
        tangent -= np.outer(tangent @ centre, centre)
        agents.append(np.array([sphere_exp(centre, v) for v in tangent]))
    target = frechet_mean(np.concatenate(agents))
    errors = []
    for seed in range(12):
        est = PriRFed(Hypersphere(dim - 1), epsilon=0.1, clip_norm=math.pi / 2,
                      init_point=start, random_state=shifted(seed)).fit(agents)
        errors.append(sphere_dist(to_numpy(est.estimate_), target))
    assert est.n_rounds_ == 1
    assert np.mean(errors) < sphere_dist(start, target)


@pytest.mark.backend_independent
@pytest.mark.parametrize(("dim", "sizes", "clip", "expected"), [
    (89, [24] * 15, math.pi / 2, "shrunk"),  # noise norm about 9.8 > pi
    (9, [90] * 11, math.pi, "average"),  # about 1.9 < pi
])
def test_one_noisy_round_on_the_sphere_is_shrunk_once_its_noise_exceeds_pi(dim, sizes, clip,
                                                                          expected):
    params = {"local_method": "auto", "n_rounds": "auto", "n_sampled": "auto",
              "local_steps": "auto", "output": "auto", "epsilon": 0.1, "delta": 1e-5,
              "clip_norm": clip, "batch_size": None}
    settings = resolve_settings(params, sizes, dim, True, math.pi)
    assert (settings.n_rounds, settings.output) == (1, expected)
    noise = math.sqrt(dim) * gaussian_multiplier(0.1, 1e-5) * 2 * clip * math.sqrt(
        len(sizes)) / sum(sizes)
    assert (noise >= math.pi) == (expected == "shrunk")


def test_a_shrunk_sphere_round_is_shrunk_by_the_server_from_the_mean_tangent_reply():
    """On S^2 with output="shrunk", the last aggregation is Exp_x(s v), v the size-weighted
    mean of the tangent replies (here of norm about 5 > pi, which no Log of a point could
    read back) and s = max(0, |v|^2 - nu^2) / |v|^2 with the run's public round noise nu;
    earlier rounds are not shrunk."""
    run = PriRFed(SPACE, epsilon=0.05, clip_norm=1.0, n_rounds=1, output="shrunk",
                  init_point=NORTH).run_spec([30, 50])
    assert run.reply == "tangent" and run.shrinks_at_server
    replies = [np.array([5.2, 1.0, 0.0]), np.array([4.6, -0.4, 0.0])]
    mean = (30 * replies[0] + 50 * replies[1]) / 80
    nu = run.round_noise()
    factor = max(0.0, mean @ mean - nu**2) / (mean @ mean)
    assert 0.2 < factor < 0.9  # a real shrinkage, neither none nor all
    last = run.aggregate(NORTH, [0, 1], replies, last_round=True)
    np.testing.assert_allclose(last, sphere_exp(NORTH, factor * mean), atol=1e-12)
    earlier = run.aggregate(NORTH, [0, 1], replies)
    np.testing.assert_allclose(earlier, sphere_exp(NORTH, mean), atol=1e-12)


def test_at_huge_epsilon_the_defaults_reach_the_global_frechet_mean():
    data = federation()
    target = frechet_mean(np.concatenate(data))
    est = PriRFed(SPACE, epsilon=1e6, clip_norm=CLIP, random_state=0).fit(data)
    assert (est.n_rounds_, est.n_sampled_, est.local_method_) == (MAX_ROUNDS, 6,
                                                                  "tangent_mean")
    # the calibration caps each agent's local epsilon at 100: a round's noise is about
    # 2e-3 here, and the settled rounds average it down
    assert error(est, target) < 2e-3
    # one-shot averaging stops at the tangent mean at the start point, off the mean
    assert error(one_shot(1e6, 0).fit(data), target) > 1e-2


# -- privacy --------------------------------------------------------------------------

@pytest.mark.parametrize("n_rounds", [1, 4])
def test_tangent_mean_noise_drawn_equals_the_calibrated_noise(drawn_sigmas, n_rounds):
    sigmas = drawn_sigmas
    data = federation()
    PriRFed(SPACE, epsilon=0.8, delta=1e-6, local_method="tangent_mean",
            n_rounds=n_rounds, n_sampled=6, clip_norm=0.7, random_state=0).fit(data)
    # every record's agent releases T Gaussian tangent means of sensitivity 2C/n_i
    z = gaussian_multiplier(0.8, 1e-6, n_rounds)
    expected = np.tile([z * 2 * 0.7 / size for size in SIZES], n_rounds)
    np.testing.assert_allclose(sigmas, expected, rtol=1e-4)


@pytest.mark.backend_independent
def test_one_shot_release_noise_has_the_calibrated_spread():
    data = federation()
    weights = np.array(SIZES) / sum(SIZES)
    clip = 0.5  # some records are clipped: the noiseless release is the clipped mean
    means = []
    for points in data:
        logs = sphere_log(NORTH, points)
        norms = np.linalg.norm(logs, axis=1, keepdims=True)
        means.append((logs * np.minimum(1.0, clip / norms)).mean(axis=0))
    noiseless = weights @ np.array(means)
    z = gaussian_multiplier(1.0, 1e-5)
    sd = z * 2 * clip * math.sqrt(np.sum((weights / np.array(SIZES)) ** 2))
    scaled = []
    for seed in range(150):
        est = PriRFed(SPACE, epsilon=1.0, local_method="tangent_mean", n_rounds=1,
                      n_sampled=6, clip_norm=clip, init_point=NORTH,
                      random_state=seed).fit(data)
        noise = sphere_log(NORTH, to_numpy(est.estimate_)[None])[0] - noiseless
        scaled.append(noise[:2] / sd)  # the tangent plane at the north pole
    scaled = np.concatenate(scaled)
    # 300 standard normal coordinates: mean of squares 1 +- 4 * sqrt(2 / 300)
    assert abs(np.mean(scaled**2) - 1.0) < 4 * math.sqrt(2 / len(scaled))
    assert abs(np.mean(scaled)) < 4 / math.sqrt(len(scaled))


@pytest.mark.parametrize("epsilon", [2.0, 0.13])  # 10 rounds; 1 (4 fit: below MIN_ROUNDS)
def test_neighbouring_federations_give_identical_public_outputs(epsilon):
    data = federation()
    neighbour = [agent.copy() for agent in data]
    neighbour[3][17] = -NORTH  # one record of one agent replaced (the antipode)
    fits = []
    for agents in (data, neighbour):
        budget = PrivacyBudget(epsilon, 1e-5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = PriRFed(SPACE, epsilon=epsilon, clip_norm=1.0, budget=budget,
                          random_state=3).fit(agents)
        fits.append((est, [str(w.message) for w in caught], budget.spent_epsilon))
    (first, first_warnings, first_spent), (second, second_warnings, second_spent) = fits
    assert first.n_rounds_ == (MAX_ROUNDS if epsilon > 1 else 1)
    assert first_warnings == second_warnings and first_spent == second_spent
    for name in ("local_method_", "n_rounds_", "n_sampled_", "local_steps_", "output_",
                 "local_epsilon_", "local_delta_", "guarantee_", "noise_multipliers_",
                 "events_", "clip_norm_"):
        assert getattr(first, name) == getattr(second, name), name
    public = [(r["sampled"], r["failed"]) for r in first.history_]
    assert public == [(r["sampled"], r["failed"]) for r in second.history_]
    assert not np.allclose(to_numpy(first.estimate_), to_numpy(second.estimate_))


# -- the public rule and the accountant -----------------------------------------------

@pytest.mark.backend_independent
@pytest.mark.parametrize(("sizes", "epsilon", "clip_norm", "radius"), [
    ((40, 60, 50), 0.1, 1.0, math.inf), ((40, 60, 50), 1.0, 1.0, math.inf),
    ((2000, 3000), 0.5, 5.0, math.inf), ((12, 15), 0.3, 1.0, math.inf),
    ((150, 200), 0.3, math.pi, math.pi), ((150, 200), 3.0, math.pi, math.pi),
    ((300, 200), 1.0, 0.5, math.pi), ((300, 200), 1.0, None, math.pi),
    ((40, 60, 50), 0.55, 1.0, math.inf), ((40, 60, 50), 0.6, 1.0, math.inf),
])
def test_rounds_keep_every_agents_noise_below_the_clipped_signal(sizes, epsilon, clip_norm,
                                                                 radius):
    params = {"local_method": "auto", "n_rounds": "auto", "n_sampled": "auto",
              "local_steps": "auto", "output": "auto", "epsilon": epsilon, "delta": 1e-5,
              "clip_norm": clip_norm, "batch_size": None}
    settings = resolve_settings(params, list(sizes), 2, True, radius)
    rounds = settings.n_rounds
    clip = 1.0 if clip_norm is None else clip_norm  # None: the bound is C, whatever C

    def noise_norm(n_rounds):  # expected sqrt(d) z_T 2C / n_min
        return math.sqrt(2) * gaussian_multiplier(epsilon, 1e-5, n_rounds) * 2 * clip / min(
            sizes)

    bound = min(clip, radius / 2) if clip_norm is not None else clip
    assert 1 <= rounds <= MAX_ROUNDS
    if noise_norm(MIN_ROUNDS) > clip:  # fewer than MIN_ROUNDS keep the noise below C
        assert rounds == 1
    else:
        assert rounds == 1 or noise_norm(rounds) <= bound
        assert rounds == MAX_ROUNDS or noise_norm(rounds + 1) > bound
    # one round on an infinite injectivity radius: its noisy step is shrunk
    output = "shrunk" if rounds == 1 and math.isinf(radius) else "average"
    assert (settings.n_sampled, settings.local_steps, settings.local_method,
            settings.output) == (len(sizes), 1, "tangent_mean", output)


@pytest.mark.backend_independent
def test_another_loss_defaults_to_one_shot_averaging_of_local_dp_rgd():
    params = {"local_method": "auto", "n_rounds": "auto", "n_sampled": "auto",
              "local_steps": "auto", "output": "auto", "epsilon": 1.0, "delta": 1e-5,
              "clip_norm": 1.0, "batch_size": None}
    settings = resolve_settings(params, [500, 800], 5, squared_distance=False)
    horizon = math.log(500**2 / (5 * math.log(1e5)))  # PrivateERM's DP-RGD steps
    assert (settings.local_method, settings.n_rounds, settings.n_sampled,
            settings.output) == ("rgd", 1, 2, "last")
    assert settings.local_steps == math.ceil(horizon)


def test_tangent_mean_refuses_another_loss_and_another_step_before_charging():
    budget = PrivacyBudget(1.0, 1e-5)
    pca = PriRFed(SPACE, loss=PCALoss(SPACE, data_norm=1.0), local_method="tangent_mean",
                  clip_norm=1.0, budget=budget)
    with pytest.raises(TypeError, match="loss must be the squared distance"):
        pca.fit(federation())
    stepped = PriRFed(SPACE, local_method="tangent_mean", step_size=0.5, clip_norm=1.0,
                      budget=budget)
    with pytest.raises(ValueError, match="step_size must be None"):
        stepped.fit(federation())
    with pytest.raises(TypeError, match="'n_rounds' parameter of PriRFed"):
        PriRFed(SPACE, n_rounds="many", clip_norm=1.0, budget=budget).fit(federation())
    assert budget.events == ()


@pytest.mark.backend_independent
@pytest.mark.parametrize(("n_rounds", "local_steps", "z"), [(1, 1, 4.0), (20, 1, 30.0),
                                                            (5, 3, 12.0)])
def test_full_participation_end_to_end_is_the_exact_gaussian_composition(n_rounds,
                                                                        local_steps, z):
    epsilon = prirfed_end_to_end_epsilon((GaussianEvent(z, local_steps),), 7, 7, n_rounds,
                                         1e-5)
    # the record's agent releases T K Gaussians: sqrt(T K) / z-GDP, exactly
    assert gaussian_multiplier(epsilon, 1e-5, n_rounds * local_steps) == pytest.approx(
        z, rel=1e-6)


@pytest.mark.flower
@pytest.mark.backend_independent
def test_a_deployment_of_the_defaults_runs_the_fitted_run(tmp_path):
    pytest.importorskip("flwr")
    from geomstats_dp.federated.flower_deploy import estimator_from_config

    data = federation()
    sizes = [len(agent) for agent in data]
    fitted = PriRFed(SPACE, epsilon=2.0, clip_norm=1.0, random_state=4).fit(data)
    deployed = PriRFed(SPACE, epsilon=2.0, clip_norm=1.0, random_state=4)
    config = deployed.deployment_config(sizes, tmp_path / "release.npy")
    assert (config["n-rounds"], config["n-sampled"], config["local-steps"],
            config["local-method"], config["output"]) == (
        fitted.n_rounds_, fitted.n_sampled_, fitted.local_steps_, fitted.local_method_,
        fitted.output_)
    rebuilt = estimator_from_config(config)
    run = rebuilt.run_spec(sizes)
    assert run.output == config["output"]
    point = run.final_point(run_local(run, [to_backend(agent) for agent in data]))
    np.testing.assert_allclose(point, to_numpy(fitted.estimate_), rtol=0, atol=1e-12)
    assert deployed.guarantee_ == fitted.guarantee_


@pytest.mark.backend_independent
def test_one_round_where_fewer_than_min_rounds_keep_the_noise_below_the_signal():
    # 40 records per agent in d = 2 (C = 1): (n_min / (2 z_1))^2 / d is about 4.8 at
    # epsilon 0.55 (four rounds would keep every agent's noise below C) and 5.7 at 0.6
    def rounds(epsilon):
        params = {"local_method": "auto", "n_rounds": "auto", "n_sampled": "auto",
                  "local_steps": "auto", "output": "auto", "epsilon": epsilon,
                  "delta": 1e-5, "clip_norm": 1.0, "batch_size": None}
        return resolve_settings(params, [40, 60, 50], 2, True, math.pi).n_rounds

    assert MIN_ROUNDS == 5
    assert rounds(0.55) == 1
    assert rounds(0.6) == 5
