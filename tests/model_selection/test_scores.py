"""The noise of the private scores: discrete on a public grid (floating-point safe) by
default, a discrete Gaussian under secure=True, charged at the grid's sensitivity, in
private_score, both searches and the federated per-agent scores."""

import math
from fractions import Fraction

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.hypersphere import Hypersphere

from geomstats_dp.federated import PriRFed
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    private_score,
    record_losses,
)
from geomstats_dp.model_selection.scores import DiscreteGaussianScore
from geomstats_dp.privacy import GaussianEvent, PrivacyBudget, PureEvent
from geomstats_dp.privacy.stages import observe_stages
from tests.conftest import shifted
from tests.model_selection.score_grid import grid
from tests.optim.data import cloud

SPACE = Euclidean(2)
BOUND, N, EPSILON = 10.0, 50, 0.5  # the setting
STEP, UNITS = grid(BOUND / N, BOUND / (N * EPSILON))  # 2^-13 and floor(1638.4) + 1


@pytest.fixture(scope="module")
def fitted():
    """A fitted mean, a validation set D whose losses d^2 / 2 spread over [0, 20] (some
    clipped at B), and D' with one record replaced by a far one."""
    rng = np.random.default_rng(0)
    estimator = PrivateFrechetMean(SPACE, epsilon=5.0, clip_norm=3.0, random_state=0,
                                   budget=PrivacyBudget(5.0, 1e-5)).fit(rng.normal(size=(100, 2)))
    validation = rng.normal(scale=2.5, size=(N, 2))
    neighbour = validation.copy()
    neighbour[0] = [100.0, -100.0]
    return estimator, validation, neighbour


def grid_units(estimator, X, step=STEP):
    """round(clipped mean loss / step), from the exact sum of the clipped losses."""
    losses = np.clip(np.nan_to_num(record_losses(estimator, X), nan=BOUND, posinf=BOUND),
                     0.0, BOUND)
    return round(sum(map(Fraction, losses.tolist())) / (len(losses) * Fraction(step)))


def on_grid(value, step):
    """Whether ``value`` is an integer multiple of ``step`` (exact: step a power of two)."""
    units = value / step
    return units == math.floor(units) and abs(units) < 2**53


def recorded(stages):
    """An observer that records every stage and releases it unchanged."""
    return lambda stage: stages.append(stage) or stage.release()


def test_every_score_from_a_dataset_is_possible_from_its_neighbour(fitted):
    """Mironov (2012), through the public private_score: a release from D is gamma j, j an
    integer, which the discrete Laplace centred at either dataset's rounded mean (m, m')
    gives positive probability, in ratio at most exp(|m - m'| epsilon / k) <= e^epsilon
    since |m - m'| <= k. And the draws j - m have the discrete Laplace law of scale
    k / epsilon: their mean |.| within 5 standard errors of 2q / (1 - q^2),
    q = exp(-epsilon / k). (The continuous Laplace of floats released scores off any grid,
    28.7% of them impossible from D'.)"""
    estimator, validation, neighbour = fitted
    centre, other = grid_units(estimator, validation), grid_units(estimator, neighbour)
    assert 0 < abs(centre - other) <= UNITS
    rng = np.random.default_rng(shifted(11))
    released = [-private_score(estimator, validation, epsilon=EPSILON, loss_bound=BOUND,
                               budget=PrivacyBudget(1.0, 1e-5), random_state=rng)
                for _ in range(2000)]
    assert all(on_grid(value, STEP) for value in released)
    draws = np.array([round(value / STEP) - centre for value in released], dtype=float)
    q = math.exp(-EPSILON / UNITS)
    mean, second = 2 * q / (1 - q**2), 2 * q / (1 - q) ** 2
    standard_error = math.sqrt((second - mean**2) / len(draws))
    assert abs(np.abs(draws).mean() - mean) < 5 * standard_error


def test_the_score_is_charged_epsilon_at_the_grid_sensitivity(fitted):
    estimator, validation, _ = fitted
    budget = PrivacyBudget(1.0, 1e-5)
    stages = []
    with observe_stages(recorded(stages)):
        score = private_score(estimator, validation, epsilon=EPSILON, loss_bound=BOUND,
                              budget=budget, random_state=shifted(3))
    (event,) = budget.events
    assert isinstance(event, PureEvent)
    assert event.epsilon == EPSILON and budget.spent_epsilon == EPSILON
    assert event.sensitivity == STEP * UNITS
    assert event.noise_scale == STEP * UNITS / EPSILON
    (stage,) = stages
    assert (stage.law, stage.scale, stage.sensitivity) == (
        "discrete_laplace", event.noise_scale, event.sensitivity)
    assert stage.statistic == STEP * grid_units(estimator, validation)
    assert on_grid(stage.noise, STEP)
    assert -score == stage.statistic + stage.noise


def test_secure_gaussian_score_is_a_discrete_gaussian_on_the_grid(fitted):
    """Under secure=True, "gaussian": the stated sensitivity is gamma (k + 1) (one unit
    beyond the rounded mean's), the noise std z gamma (k + 1), the release on the grid."""
    estimator, validation, _ = fitted
    budget = PrivacyBudget(1.0, 1e-5)
    stages = []
    with observe_stages(recorded(stages)):
        score = private_score(estimator, validation, epsilon=EPSILON, delta=1e-5,
                              loss_bound=BOUND, method="gaussian", budget=budget, secure=True)
    (event,) = budget.events
    assert isinstance(event, GaussianEvent)
    z = event.noise_multiplier
    step, units = grid(BOUND / N, z * BOUND / N)
    assert event.sensitivity == step * (units + 1)
    assert event.noise_std == pytest.approx(z * step * (units + 1), rel=1e-12)
    (stage,) = stages
    assert stage.law == "discrete_gaussian"
    assert stage.statistic == step * grid_units(estimator, validation, step)
    assert on_grid(stage.noise, step) and on_grid(score, step)


def _discrete_gaussian_delta(sigma, shift, epsilon):
    """The exact delta at epsilon of the discrete Gaussian N_Z(0, sigma^2) against its
    integer shift (Canonne, Kamath & Steinke 2020, Thm. 7), by summing the pmfs."""
    support = np.arange(-int(40 * sigma) - shift, int(40 * sigma) + shift + 1)
    log_normaliser = np.logaddexp.reduce(-support.astype(float) ** 2 / (2 * sigma**2))
    log_p = -support.astype(float) ** 2 / (2 * sigma**2) - log_normaliser
    log_q = -(support - shift).astype(float) ** 2 / (2 * sigma**2) - log_normaliser
    return float(np.sum(np.maximum(np.exp(log_p) - np.exp(epsilon + log_q), 0.0)))


@pytest.mark.backend_independent
@pytest.mark.parametrize("epsilon, delta, n", [(0.5, 1e-5, 50), (2.0, 1e-6, 7),
                                                (0.1, 1e-3, 1000), (8.0, 1e-5, 3)])
def test_the_discrete_gaussian_is_no_less_private_than_its_event(epsilon, delta, n):
    """At every grid move the rounded mean can make (k units), the discrete Gaussian's
    exact delta at the event's epsilon is at most the event's delta (the continuous
    Gaussian of the same multiplier at sensitivity k + 1 units)."""
    sensitivity = BOUND / n
    (event,) = DiscreteGaussianScore().events(epsilon, delta, sensitivity, "score")
    step, units = grid(sensitivity, event.noise_multiplier * sensitivity)
    sigma = event.noise_std / step
    assert sigma == pytest.approx(event.noise_multiplier * (units + 1), rel=1e-12)
    for shift in (units, 1):
        assert _discrete_gaussian_delta(sigma, shift, epsilon) <= delta


def _scores_of(fit):
    """(the fit's result, its score stages) with the stages observed."""
    stages = []
    with observe_stages(recorded(stages)):
        result = fit()
    return result, [stage for stage in stages if "score" in stage.label]


@pytest.mark.parametrize("search_class, grid_name", [
    (PrivateGridSearchCV, "param_grid"), (PrivateRandomizedSearchCV, "param_distributions")])
def test_searches_score_with_the_discrete_laplace_by_default(search_class, grid_name):
    sphere = Hypersphere(2)
    data = cloud(sphere, 120, 0.5, shifted(0), offset=1.0)
    search = search_class(PrivateFrechetMean(sphere, clip_norm=1.5),
                          **{grid_name: {"step_size": [0.002, 0.5], "n_iter": [20]}},
                          epsilon=4.0, loss_bound=2.0, mean_runs=4, random_state=shifted(0),
                          budget=PrivacyBudget(4.0, 1e-5))
    search, stages = _scores_of(lambda: search.fit(data))
    step, _ = grid(2.0 / 30, 2.0 / (30 * search.run_epsilon_))  # 30 validation records
    assert stages, "no run was made"
    assert {stage.law for stage in stages} == {"discrete_laplace"}
    assert all(on_grid(stage.statistic + stage.noise, step) for stage in stages)
    assert on_grid(-search.best_score_, step)


def test_secure_search_scores_with_the_discrete_gaussian():
    sphere = Hypersphere(2)
    search = PrivateGridSearchCV(PrivateFrechetMean(sphere, clip_norm=1.5, secure=True),
                                 {"step_size": [0.5], "n_iter": [10]}, epsilon=4.0,
                                 loss_bound=2.0, runs="geometric", mean_runs=2,
                                 score_method="gaussian",
                                 budget=PrivacyBudget(4.0, 1e-5))
    search, stages = _scores_of(lambda: search.fit(cloud(sphere, 60, 0.5, 0, offset=1.0)))
    assert stages and {stage.law for stage in stages} == {"discrete_gaussian"}
    (score_event,) = search.events_[0].score
    assert isinstance(score_event, GaussianEvent)


def test_federated_agents_each_release_on_the_grid():
    """Each agent adds its own discrete Laplace draw to its grid-rounded share; the sum,
    the score, is on the grid too."""
    rng = np.random.default_rng(shifted(9))
    agents = [3.0 + 0.5 * rng.standard_normal((size, 2)) for size in (10, 14, 18)]
    fitted = PriRFed(SPACE, epsilon=20.0, clip_norm=5.0, random_state=0,
                     budget=PrivacyBudget(20.0, 1e-5)).fit(agents)
    score, stages = _scores_of(lambda: private_score(
        fitted, agents, epsilon=0.7, loss_bound=2.0, budget=PrivacyBudget(1.0, 1e-5),
        random_state=shifted(1)))
    step, _ = grid(2.0 / 42, 2.0 / (42 * 0.7))
    assert [stage.law for stage in stages] == ["discrete_laplace"] * 3
    assert all(on_grid(stage.statistic, step) and on_grid(stage.noise, step)
               for stage in stages)
    assert on_grid(score, step)
    assert -score == sum(stage.statistic + stage.noise for stage in stages)

