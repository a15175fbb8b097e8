"""PriRFed runs that go wrong after the agents replied: kept on the manifold, or charged."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.federated import PriRFed, flower_app
from geomstats_dp.federated.run import RunSpec
from geomstats_dp.optim.step_cap import cap_norm
from geomstats_dp.privacy import PrivacyBudget

SPHERE = Hypersphere(2)


def spd_agents(space, n_agents, size, seed):
    rng = np.random.default_rng(seed)
    dim = space.n
    return [np.stack([a @ a.T / dim + 0.1 * np.eye(dim)
                      for a in rng.normal(size=(size, dim, dim))])
            for _ in range(n_agents)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_very_noisy_local_steps_on_spd_stay_on_the_manifold(seed):
    """Five records per agent at epsilon 1, three unit local steps on SPD(8): each noisy
    gradient's noise is over five times C (sigma sqrt(36)), and without the cap every agent's
    second or third step leaves float64's SPD matrices (a failed Cholesky factor): every
    reply failed. Capped at C, every agent answers and the release is SPD."""
    space = SPDMatrices(8)
    estimator = PriRFed(space, epsilon=1.0, delta=1e-5, clip_norm=5.0, n_rounds=2,
                        local_steps=3, local_method="tangent_mean", output="last",
                        random_state=seed).fit(spd_agents(space, 4, 5, seed))
    assert all(record["failed"] == [] for record in estimator.history_)
    noise_std = estimator.noise_multipliers_[0]["full_gradient"] * 2 * 5.0 / 5  # z 2C / n
    assert noise_std * np.sqrt(space.dim) > 5 * 5.0  # the premise: noise norm >> C
    estimate = to_numpy(estimator.estimate_)
    assert np.all(np.isfinite(estimate))
    assert np.linalg.eigvalsh(estimate)[0] > 0
    assert bool(space.belongs(estimator.estimate_, atol=1e-6))


def test_only_spaces_of_infinite_injectivity_radius_are_capped():
    """On SPD the agents' gradients are capped at C; on the sphere, whose exponential map
    is bounded, a capped step would land at the antipode: no cap. Nor under
    output="shrunk" (the auto output of one round on SPD), whose factor assumes the
    replies' Gaussian noise uncapped."""
    def run(space, output):
        return PriRFed(space, clip_norm=2.0, n_rounds=1, local_steps=1,
                       local_method="tangent_mean", output=output).run_spec([5, 6])

    spd, sphere = run(SPDMatrices(3), "average"), run(SPHERE, "average")
    assert [spd.direction_bound(plan.strategy, size)
            for (plan, _), size in zip(spd.plans, spd.sizes)] == [2.0, 2.0]
    assert sphere.direction_bound(sphere.plans[0][0].strategy, 5) is None
    for shrunk in (run(SPDMatrices(3), "shrunk"), run(SPDMatrices(3), "auto")):
        assert shrunk.output == "shrunk"
        assert shrunk.direction_bound(shrunk.plans[0][0].strategy, 5) is None


def test_cap_projects_onto_the_ball_and_keeps_short_vectors():
    base = to_backend(np.array([0.0, 0.0, 1.0]))
    long_vec = to_backend(np.array([3.0, -4.0, 0.0]))
    short_vec = to_backend(np.array([0.3, 0.4, 0.0]))
    capped = to_numpy(cap_norm(SPHERE.metric, long_vec, base, 2.0))
    np.testing.assert_allclose(capped, [1.2, -1.6, 0.0], atol=1e-12)
    np.testing.assert_allclose(to_numpy(cap_norm(SPHERE.metric, short_vec, base, 2.0)),
                               to_numpy(short_vec), atol=1e-12)
    # never further from a signal inside the ball than the noisy vector
    rng = np.random.default_rng(0)
    for _ in range(20):
        signal = np.r_[rng.uniform(-1, 1, 2), 0.0]
        noisy = signal + np.r_[rng.normal(scale=3.0, size=2), 0.0]
        capped = to_numpy(cap_norm(SPHERE.metric, to_backend(noisy), base, np.sqrt(2.0)))
        assert np.linalg.norm(capped - signal) <= np.linalg.norm(noisy - signal) + 1e-12


def sphere_agents():
    rng = np.random.default_rng(0)
    north = np.array([0.0, 0.0, 1.0])
    return [to_numpy(SPHERE.projection(to_backend(north + 0.3 * rng.normal(size=(n, 3)))))
            for n in (10, 15, 20)]


def prirfed(budget, engine="local"):
    return PriRFed(SPHERE, epsilon=1.0, delta=1e-5, n_rounds=3, n_sampled=3, local_steps=2,
                   local_method="rgd", clip_norm=1.0, engine=engine, budget=budget,
                   random_state=3)


def test_a_run_that_raises_after_round_one_is_charged(monkeypatch):
    charged = prirfed(PrivacyBudget(5.0, 1e-4)).fit(sphere_agents()).events_[0]
    aggregate = RunSpec.aggregate
    calls = []

    def fails_in_round_two(run, start, agents, replies, last_round=False):
        calls.append(len(replies))
        if len(calls) == 2:
            raise np.linalg.LinAlgError("injected after the replies of round 2")
        return aggregate(run, start, agents, replies, last_round)

    monkeypatch.setattr(RunSpec, "aggregate", fails_in_round_two)
    budget = PrivacyBudget(5.0, 1e-4)
    estimator = prirfed(budget)
    with pytest.raises(np.linalg.LinAlgError):
        estimator.fit(sphere_agents())
    assert calls == [3, 3]
    assert budget.events == (charged,)
    assert not hasattr(estimator, "estimate_")
    # the held reservation was spent, not left held: the rest of the budget is usable
    budget.check(5.0 - charged.epsilon - 1e-9, 1e-4 - charged.delta)


def test_a_flower_run_that_raises_is_charged(monkeypatch):
    charged = prirfed(PrivacyBudget(5.0, 1e-4)).fit(sphere_agents()).events_[0]

    def runtime_fails(run, datasets, fail=None):
        raise RuntimeError("the Flower run ended after 1 of 3 rounds")

    monkeypatch.setattr(flower_app, "run_flower", runtime_fails)
    budget = PrivacyBudget(5.0, 1e-4)
    with pytest.raises(RuntimeError):
        prirfed(budget, engine="flower").fit(sphere_agents())
    assert budget.events == (charged,)


def test_a_fit_refused_by_its_data_check_is_not_charged():
    budget = PrivacyBudget(5.0, 1e-4)
    bad = sphere_agents()
    bad[1] = 2.0 * bad[1]  # off the sphere: refused before any agent trains
    with pytest.raises(ValueError):
        prirfed(budget).fit(bad)
    assert budget.events == ()
