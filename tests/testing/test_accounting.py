"""The independent composition of a fit's stages against the ledger (testing._accounting).

The checks must pass on real fits and fail on a ledger that charges less than the stages
release; the independent composition itself is tested against closed forms in
test_composition.py.
"""

import math

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean

from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import PrivateERM, PrivateFrechetMean
from geomstats_dp.model_selection import PrivateGridSearchCV
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import GaussianEvent, PureEvent
from geomstats_dp.privacy import accountant as accountant_module
from geomstats_dp.privacy import renyi as renyi_module
from geomstats_dp.privacy.stages import observe_stages
from geomstats_dp.testing._accounting import check_ledger_composition
from geomstats_dp.testing._recording import record_fit

from .ledger_fits import SPHERE, federation, prirfed, small_search, sphere_data

# -- check_ledger_composition on real fits ---------------------------------------------

@pytest.mark.parametrize("params", [
    {"method": "rgd", "n_iter": 4}, {"method": "two_stage"}, {"method": "tangent"},
    {"method": "rsgd", "n_iter": 4, "batch_size": 8},
    {"method": "rsgd", "n_iter": 4, "batch_size": 8, "sampling": "poisson",
     "dataset_size": 24}])
def test_frechet_mean_ledger_is_the_composition_of_its_stages(params):
    estimator = PrivateFrechetMean(SPHERE, epsilon=1.0, clip_norm=1.5, **params)
    check_ledger_composition(estimator, sphere_data(24), random_state=0)


@pytest.mark.parametrize("params", [{"runs": "poisson"}, {"runs": "geometric"},
                                    {"runs": "poisson", "refit": True}])
def test_search_ledger_is_the_best_of_k_runs_of_its_stages(params):
    check_ledger_composition(small_search(**params), sphere_data(12), random_state=1)


@pytest.mark.slow
def test_prirfed_search_ledger_composes_agents_in_parallel():
    """A search over PriRFed: each run's agents (training) and the agents' score draws
    (validation) hold disjoint records."""
    rng = np.random.default_rng(0)
    data = [np.array([3.0, 3.0]) + 0.5 * rng.standard_normal((size, 2)) for size in (8, 12)]
    estimator = PriRFed(Euclidean(2), n_rounds=2, local_steps=1, init_point=np.zeros(2))
    search = PrivateGridSearchCV(estimator, {"clip_norm": [0.5, 5.0]}, epsilon=4.0,
                                 loss_bound=20.0, runs="geometric", mean_runs=2,
                                 refit=False, score_method="gaussian")
    check_ledger_composition(search, data, random_state=0)


@pytest.mark.parametrize("accountant", ["end_to_end", "public_sampling",
                                        "parallel_optimal"])
def test_prirfed_ledger_covers_every_agents_local_run(accountant):
    check_ledger_composition(prirfed(accountant=accountant), federation([8, 20, 12]),
                             random_state=1)


def test_prirfed_end_to_end_charges_the_dearest_agent():
    """DP-RSGD agents of sizes 4 and 200 with batches of 4: the small agent's steps are
    full batches (exact Gaussian DP), the large one's sampled at rate 0.02. Each is
    calibrated to the same local guarantee, and over 6 rounds the full-batch agent costs
    several times more end to end: the calibration must hold for it, not for the other."""
    estimator = prirfed(local_method="rsgd", batch_size=4, local_steps=1, n_rounds=6)
    check_ledger_composition(estimator, federation([4, 200]), random_state=1)


# -- the checks fail on a mis-charged ledger ---------------------------------------------

def test_a_dropped_step_charge_fails():
    estimator = PrivateFrechetMean(SPHERE, epsilon=1.0, clip_norm=1.5, method="rgd", n_iter=4)
    recorded = record_fit(estimator, sphere_data(24), random_state=0)
    (event,) = recorded.events
    recorded.events = (GaussianEvent(event.noise_multiplier, n_steps=3),)
    with pytest.raises(AssertionError, match="no remaining ledger event charges"):
        check_ledger_composition(estimator, sphere_data(24), recorded=recorded)


def test_a_dropped_stage_charge_fails():
    """two_stage without its localisation quantile's PureEvent."""
    estimator = PrivateFrechetMean(SPHERE, epsilon=1.0, clip_norm=1.5, method="two_stage")
    recorded = record_fit(estimator, sphere_data(24), random_state=0)
    recorded.events = tuple(event for event in recorded.events
                            if not isinstance(event, PureEvent))
    with pytest.raises(AssertionError, match="exponential"):
        check_ledger_composition(estimator, sphere_data(24), recorded=recorded)


def test_an_undercharged_event_fails(monkeypatch):
    """The ledger's event states a larger noise multiplier than the stages drew: the
    stages match no event; with matching skipped, the composition is below."""
    estimator = PrivateFrechetMean(SPHERE, epsilon=1.0, clip_norm=1.5, method="rgd", n_iter=4)
    recorded = record_fit(estimator, sphere_data(24), random_state=0)
    (event,) = recorded.events
    recorded.events = (GaussianEvent(2 * event.noise_multiplier, n_steps=event.n_steps),)
    with pytest.raises(AssertionError, match="noise multiplier"):
        check_ledger_composition(estimator, sphere_data(24), recorded=recorded)
    from geomstats_dp.testing import _accounting

    monkeypatch.setattr(_accounting, "_match_stages", lambda *args: None)
    with pytest.raises(AssertionError, match="below the independent composition"):
        check_ledger_composition(estimator, sphere_data(24), recorded=recorded)


def test_selection_ignoring_the_score_fails(monkeypatch):
    """A base run's RDP without the score's (Papernot & Steinke's Q is fit and score)."""
    monkeypatch.setattr(
        renyi_module, "base_run_rdp",
        lambda event: np.max(np.stack([renyi_module.ledger_rdp(run)
                                       for run in event.candidates]), axis=0))
    # compose remembers its guarantees on the frozen events: an earlier test in this
    # process may have composed the same ledger with the unpatched curve
    caches = (renyi_module.selection_event_rdp, accountant_module._compose)
    for cache in caches:
        cache.cache_clear()
    try:
        with pytest.raises(AssertionError, match="below the independent composition"):
            check_ledger_composition(small_search(), sphere_data(12), random_state=1)
    finally:
        for cache in caches:
            cache.cache_clear()


# -- the federated round's stated noise, and Dask's stages ------------------------------

def test_round_noise_is_the_agents_stages_noise():
    """nu = sqrt(d sum_i w_i^2 sum_k sigma_ik^2): the expected norm of a round's aggregated
    noise (unit local steps, every agent sampled), from the stages the agents released."""
    data = federation([6, 14, 10])
    estimator = prirfed(local_method="tangent_mean", n_sampled=3, local_steps=3,
                        step_size=None)
    recorded = record_fit(estimator, data, random_state=2)
    fitted = recorded.estimator
    sizes = [len(part) for part in data]
    run = fitted.run_spec(sizes, fitted.clip_norm_)
    weights = np.array(sizes) / sum(sizes)
    variances = np.zeros(len(sizes))
    for stage in recorded.stages:
        if stage.label.startswith("PriRFed round 0 agent"):
            agent = int(stage.label.split()[4].rstrip(":"))
            variances[agent] += stage.dim * stage.scale**2
    assert run.round_noise() == pytest.approx(math.sqrt(weights**2 @ variances), rel=1e-9)


def dask_stages(X, weights, **params):
    stages = []

    def keep(stage):
        stages.append(stage)
        return stage.release()

    with observe_stages(keep):
        PrivateERM(SPHERE, SquaredDistanceLoss(SPHERE), **params).fit(
            X, sample_weight=weights)
    return stages


@pytest.mark.dask
@pytest.mark.parametrize("params", [{"method": "rgd", "n_iter": 3},
                                    {"method": "rsgd", "n_iter": 4, "batch_size": 15}])
def test_dask_fit_releases_the_in_memory_stages(params):
    """Chunked clipped sums with public weights: the same statistic at every stage as the
    in-memory fit (each row with its own weight), the same stated noise."""
    da = pytest.importorskip("dask.array")
    X = sphere_data(120, seed=3)
    weights = np.random.default_rng(4).uniform(0.5, 1.5, size=120)
    params = dict(epsilon=2.0, clip_norm=1.5, random_state=3, **params)
    expected = dask_stages(X, weights, **params)
    got = dask_stages(da.from_array(X, chunks=(32, 3)), weights, **params)
    assert [stage.public() for stage in got] == [stage.public() for stage in expected]
    for index, (first, second) in enumerate(zip(expected, got)):
        np.testing.assert_allclose(np.asarray(second.statistic), np.asarray(first.statistic),
                                   rtol=1e-10, atol=1e-12,
                                   err_msg=f"stage {index} ({first.label})")


@pytest.mark.backend_independent
def test_an_approx_event_pays_a_gaussian_stage_only_when_it_covers_it():
    """An (epsilon, delta) event covers a full-batch Gaussian stage of multiplier z when
    the Gaussian mechanism's epsilon at that delta is at most the event's."""
    from geomstats_dp.privacy import ApproxDPEvent, compose_epsilon
    from geomstats_dp.testing._accounting import approx_pays

    gaussian = compose_epsilon((GaussianEvent(2.0),), 1e-5)
    assert approx_pays(2.0, ApproxDPEvent(gaussian * 1.01, 1e-5))
    assert not approx_pays(2.0, ApproxDPEvent(gaussian * 0.99, 1e-5))
    assert not approx_pays(1.0, ApproxDPEvent(gaussian, 1e-5))  # half the noise
