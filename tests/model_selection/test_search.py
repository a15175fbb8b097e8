"""PrivateGridSearchCV / PrivateRandomizedSearchCV: selection, ledger, privacy plumbing, API."""

import inspect
import math
import pickle
import warnings

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from scipy import stats
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.model_selection import PrivateGridSearchCV, PrivateRandomizedSearchCV
from geomstats_dp.model_selection import splits as splits_module
from geomstats_dp.model_selection.scores import LaplaceScore
from geomstats_dp.optim import SquaredDistanceLoss
from geomstats_dp.privacy import (
    BudgetExceededError,
    PrivacyBudget,
    SelectionEvent,
    compose,
)
from tests.conftest import shifted
from tests.model_selection.score_grid import laplace_sensitivity
from tests.optim.data import cloud

SPACE = Hypersphere(2)
GRID = {"step_size": [0.002, 0.5], "n_iter": [20]}


def _data(n_samples=120, seed=0):
    """A cloud of radius 0.5 around a point at distance 1 from the canonical start."""
    return cloud(SPACE, n_samples, 0.5, shifted(seed), offset=1.0)


def _search(**kwargs):
    params = {"epsilon": 4.0, "delta": 1e-5, "loss_bound": 2.0, "random_state": shifted(0),
              "budget": PrivacyBudget(4.0, 1e-5)}
    params.update(kwargs)
    estimator = PrivateFrechetMean(SPACE, clip_norm=1.5)
    return PrivateGridSearchCV(estimator, GRID, **params)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_candidate_is_chosen_at_large_epsilon(seed):
    """A step of 0.002 barely leaves the start (distance 1 from the data); 0.5 reaches the
    mean. With 20 Poisson runs on average, the good candidate is missed with probability
    e^-10, and the score's noise (scale 2 / (30 epsilon_run)) is far below the gap."""
    search = _search(epsilon=50.0, budget=PrivacyBudget(50.0, 1e-5), runs="poisson",
                     mean_runs=20, random_state=shifted(seed)).fit(_data(seed=seed))
    assert search.best_params_ == {"n_iter": 20, "step_size": 0.5}
    assert search.best_score_ > -0.2
    assert search.cv_results_["selected"].tolist() == [False, True]


def test_search_is_one_selection_event_and_fits_its_share():
    budget = PrivacyBudget(4.0, 1e-5)
    search = _search(budget=budget, refit_fraction=0.4).fit(_data())
    selection = search.events_[0]
    assert isinstance(selection, SelectionEvent)
    assert budget.events[0] is selection
    share = compose([selection], 1e-5).epsilon
    assert 0.6 * 4.0 * (1 - 1e-3) <= share <= 0.6 * 4.0 * (1 + 1e-9)
    assert budget.events[1:] == search.best_estimator_.events_
    assert budget.spent_epsilon <= 4.0 * (1 + 1e-9)
    assert budget.spent_epsilon == pytest.approx(4.0, rel=1e-3)
    assert selection.mean == 4.0  # twice the number of candidates
    assert selection.shape == math.inf  # Poisson
    for run_events in selection.candidates:
        assert compose(run_events, 1e-5).epsilon == pytest.approx(search.run_epsilon_,
                                                                   rel=1e-3)


def test_without_refit_the_best_run_is_released_and_charged_as_planned():
    budget = PrivacyBudget(2.0, 1e-5)
    search = _search(budget=budget, refit=False, epsilon=2.0).fit(_data())
    assert budget.events == search.events_ == (search.events_[0],)
    assert compose(budget.events, 1e-5).epsilon == pytest.approx(2.0, rel=1e-3)
    best = search.best_estimator_
    assert best.events_ == search.events_[0].candidates[search.best_index_]
    assert best.epsilon == pytest.approx(search.run_epsilon_)
    assert best.random_state is None and best.budget is None  # the user's settings
    assert search.refit_epsilon_ is None


def recorded_score_noise(monkeypatch, mechanism_class):
    """The list of the events whose noise ``mechanism_class.noise`` draws from now on."""
    drawn = []
    original = mechanism_class.noise

    def noise(mechanism, event, *args):
        drawn.append(event)
        return original(mechanism, event, *args)

    monkeypatch.setattr(mechanism_class, "noise", noise)
    return drawn


def test_score_noise_is_the_calibrated_laplace(monkeypatch):
    drawn = recorded_score_noise(monkeypatch, LaplaceScore)
    search = _search().fit(_data(n_samples=120))
    n_validation = 30  # validation_fraction 0.25 of 120
    assert drawn, "no run was made"
    for event in drawn:
        adjusted = laplace_sensitivity(2.0 / n_validation, event.epsilon)  # on the grid
        assert event.sensitivity == adjusted
        assert event.noise_scale == pytest.approx(adjusted / search.run_epsilon_)
        assert event.epsilon == pytest.approx(search.run_epsilon_)


def assert_refused_unread(monkeypatch, losses_module, search, corrupted):
    """``search.fit(corrupted)`` (its budget nearly spent) raises BudgetExceededError
    without reading a data value (a loss check, value, gradient or validation loss) and
    charges nothing."""
    calls = []
    for name in ("check_data", "values", "gradients"):  # every read of the data's values
        monkeypatch.setattr(SquaredDistanceLoss, name,
                            lambda *args, name=name: calls.append(name))
    monkeypatch.setattr(losses_module, "record_losses",
                        lambda *args: calls.append("losses") or np.zeros(1))
    events = search.budget.events
    with pytest.raises(BudgetExceededError):
        search.fit(corrupted)
    assert calls == []
    assert search.budget.events == events


def test_refused_before_any_data_value_is_read(monkeypatch):
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.9)
    corrupted = to_numpy(_data())
    corrupted[3, 0] = np.nan  # a value check would raise ValueError
    assert_refused_unread(monkeypatch, splits_module, _search(epsilon=1.0, budget=budget),
                          corrupted)


def _public(search, caught):
    return {
        "cv_keys": sorted(search.cv_results_),
        "params": search.cv_results_["params"],
        "run_epsilon": search.run_epsilon_,
        "refit_epsilon": search.refit_epsilon_,
        "events": search.events_,
        "ledger": search.budget_.events,
        "warnings": [(w.category, str(w.message)) for w in caught],
        "attributes": sorted(k for k in vars(search) if k.endswith("_")),
    }


def _public_fit(dataset):
    """The public outputs of ``_search`` fitted on ``dataset`` (its warnings included)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = _search(budget=PrivacyBudget(4.0, 1e-5)).fit(dataset)
    return _public(search, caught)


@pytest.fixture(scope="module")
def public_on_data():
    """``_public_fit(_data())``, once for every neighbour."""
    return _public_fit(to_numpy(_data()))


@pytest.mark.parametrize("index", [0, 60, 119])
def test_neighbouring_datasets_give_identical_public_outputs(public_on_data, index):
    neighbour = to_numpy(_data()).copy()
    neighbour[index] = -neighbour[index]  # the antipode: the farthest replacement
    assert _public_fit(neighbour) == public_on_data


def test_clone_and_pickle():
    search = _search()
    cloned = clone(search)
    assert cloned.get_params()["param_grid"] == GRID
    assert cloned.budget is search.budget  # the budget is a shared handle
    search.fit(_data())
    restored = pickle.loads(pickle.dumps(search))
    assert restored.best_params_ == search.best_params_
    np.testing.assert_allclose(to_numpy(restored.best_estimator_.estimate_),
                               to_numpy(search.best_estimator_.estimate_))
    assert restored.events_ == search.events_


def test_randomized_search_draws_public_candidates():
    distributions = {"step_size": stats.loguniform(1e-3, 1.0), "n_iter": [10, 20]}
    params = {"epsilon": 4.0, "loss_bound": 2.0, "n_iter": 3, "random_state": shifted(5)}
    first = PrivateRandomizedSearchCV(PrivateFrechetMean(SPACE, clip_norm=1.5),
                                      distributions, budget=PrivacyBudget(4.0, 1e-5),
                                      **params).fit(_data(seed=0))
    second = PrivateRandomizedSearchCV(PrivateFrechetMean(SPACE, clip_norm=1.5),
                                       distributions, budget=PrivacyBudget(4.0, 1e-5),
                                       **params).fit(_data(seed=1))
    assert len(first.cv_results_["params"]) == 3
    assert first.cv_results_["params"] == second.cv_results_["params"]
    assert first.best_params_ in first.cv_results_["params"]


def test_poisson_without_runs_returns_the_first_candidate_unscored():
    empty = []
    for seed in range(12):  # P[K = 0] = e^-1 with one run on average
        search = _search(runs="poisson", mean_runs=1, refit=False,
                         random_state=shifted(seed)).fit(_data())
        if math.isnan(search.best_score_):
            empty.append(search)
    assert empty
    for search in empty:
        assert search.best_index_ == 0 and search.best_estimator_ is None
        assert np.isnan(search.cv_results_["released_score"]).all()


def test_loss_bound_defaults_to_the_bound_the_sphere_gives_and_is_required_elsewhere():
    """d^2 / 2 on the sphere is at most pi^2 / 2; on SPD matrices nothing bounds it."""
    search = _search(loss_bound=None).fit(_data())
    assert search.loss_bound_ == pytest.approx(math.pi**2 / 2)
    assert search.best_loss_ == -search.best_score_
    spd = SPDMatrices(2)
    points = spd.random_point(20)
    budget = PrivacyBudget(4.0, 1e-5)
    with pytest.raises(ValueError, match="loss_bound must be a public bound"):
        PrivateGridSearchCV(PrivateFrechetMean(spd, clip_norm=1.0), GRID,
                            budget=budget).fit(points)
    assert budget.events == ()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"runs": "uniform"}, ValueError, "runs"),
    ({"mean_runs": 0.5}, ValueError, "mean_runs"),
    ({"refit": 1}, TypeError, "refit"),
    ({"validation_fraction": 1.0}, ValueError, "validation_fraction"),
    ({"epsilon": 1e-3, "budget": PrivacyBudget(1.0, 1e-5)}, ValueError, "epsilon"),
])
def test_bad_settings_raise_naming_them(kwargs, error, match):
    with pytest.raises(error, match=match):
        _search(**kwargs).fit(_data())


def test_reserved_or_unknown_candidate_parameters_raise():
    estimator = PrivateFrechetMean(SPACE, clip_norm=1.5)
    for grid, match in (({"epsilon": [1.0]}, "epsilon"), ({"colour": [1]}, "colour")):
        with pytest.raises(ValueError, match=match):
            PrivateGridSearchCV(estimator, grid, loss_bound=1.0).fit(_data())


def test_a_seeded_search_is_reproducible():
    first = _search(random_state=shifted(3)).fit(_data())
    second = _search(random_state=shifted(3), budget=PrivacyBudget(4.0, 1e-5)).fit(_data())
    assert first.best_params_ == second.best_params_
    assert first.best_score_ == second.best_score_
    np.testing.assert_array_equal(to_numpy(first.best_estimator_.estimate_),
                                  to_numpy(second.best_estimator_.estimate_))


def test_a_secure_estimator_makes_a_secure_search():
    estimator = PrivateFrechetMean(SPACE, clip_norm=1.5, secure=True)
    search = PrivateGridSearchCV(estimator, GRID, epsilon=4.0, loss_bound=2.0,
                                 budget=PrivacyBudget(4.0, 1e-5)).fit(_data())
    assert search.best_estimator_.secure and search.best_estimator_.random_state is None
    with pytest.raises(ValueError, match="random_state"):
        PrivateGridSearchCV(estimator, GRID, epsilon=4.0, loss_bound=2.0, random_state=0,
                            budget=PrivacyBudget(4.0, 1e-5)).fit(_data())


@pytest.mark.parametrize("search", [PrivateGridSearchCV, PrivateRandomizedSearchCV])
def test_every_constructor_parameter_of_a_search_has_a_constraint(search):
    names = [name for name in inspect.signature(search.__init__).parameters
             if name != "self"]
    assert sorted(search._parameter_constraints) == sorted(names)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"epsilon": -1.0}, "epsilon"), ({"delta": 0.0}, "delta"),
    ({"loss_bound": np.inf}, "loss_bound"), ({"runs": -1.0}, "runs"),
    ({"refit_fraction": 1.0}, "refit_fraction"), ({"score_method": "exponential"},
                                                   "score_method"),
    ({"max_runs": 0}, "max_runs"), ({"budget": "all"}, "budget"),
    ({"random_state": -3}, "random_state"), ({"estimator": "PrivateFrechetMean"},
                                             "estimator"),
])
def test_a_bad_search_parameter_is_refused_by_name_before_any_charge(kwargs, name):
    budget = PrivacyBudget(4.0, 1e-5)
    params = {"budget": budget, **kwargs}
    estimator = params.pop("estimator", PrivateFrechetMean(SPACE, clip_norm=1.5))
    search = PrivateGridSearchCV(estimator, GRID, loss_bound=params.pop("loss_bound", 2.0),
                                 **params)
    with pytest.raises(InvalidParameterError,
                       match=f"'{name}' parameter of PrivateGridSearchCV"):
        search.fit(_data())
    assert budget.events == ()
