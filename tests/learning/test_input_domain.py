"""Input handling at the public entry points: every estimator's fit, the searches and
``private_score`` refuse the same inputs the same way, before any charge.

- strings (even numeric ones) are refused with a TypeError naming X;
- ``private_score`` on an unfitted estimator raises NotFittedError;
- records of the wrong shape give a ValueError naming X, the expected and the given shape,
  before the budget is checked;
- a search checks its whole data before any run: an invalid record gives the same error,
  naming its index in X, whatever the split, and nothing is charged;
- the searches bound their number of candidates.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from geomstats_dp.model_selection import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    private_score,
)
from geomstats_dp.model_selection import search as search_module
from geomstats_dp.model_selection import splits as splits_module
from geomstats_dp.privacy import PrivacyBudget
from tests.model_selection.test_every_estimator import CASES

NAMES = list(CASES)
# estimators whose fit refuses a non-finite record (PCA zeroes it; matrix completion reads
# NaN as a missing rating and refuses inf)
INVALID = {"pca": None, "matrix_completion": np.inf}


class UncheckedBudget(PrivacyBudget):
    """A budget that fails the test if it is checked (the error must come first)."""

    def check(self, *events):
        raise AssertionError("the budget was checked before the input error")

    reserve = spend = check


def _map_x(data, change):
    """``data`` with ``change`` applied to X (to each agent's array for PriRFed)."""
    X = data[0]
    changed = [change(np.asarray(a)) for a in X] if isinstance(X, list) else change(X)
    return (changed, *data[1:])


def _widen(X):
    return np.concatenate([X, X[:, :1]], axis=1)


@pytest.fixture(scope="module")
def fitted():
    """Each case's estimator, fitted, with its data and loss bound."""
    result = {}
    for name, case in CASES.items():
        estimator, _, data, bound = case()
        estimator = clone(estimator).set_params(epsilon=5.0, random_state=0,
                                                budget=PrivacyBudget(50.0, 1e-5))
        result[name] = (estimator.fit(*data), data, bound)
    return result


@pytest.mark.parametrize("name", NAMES)
def test_string_records_are_refused_everywhere(name, fitted):
    estimator, grid, data, bound = CASES[name]()
    strings = _map_x(data, lambda X: np.asarray(X).astype(str))
    budget = PrivacyBudget(6.0, 1e-5)
    named = r"(X|datasets).*strings"  # PriRFed's fit names its argument datasets
    with pytest.raises(TypeError, match=named):
        clone(estimator).set_params(epsilon=1.0, budget=budget).fit(*strings)
    with pytest.raises(TypeError, match=named):
        PrivateGridSearchCV(estimator, grid, epsilon=6.0, loss_bound=bound, budget=budget,
                            random_state=0).fit(*strings)
    with pytest.raises(TypeError, match=named):
        private_score(fitted[name][0], *strings, epsilon=1.0, loss_bound=bound,
                      budget=budget)
    assert budget.events == ()


@pytest.mark.parametrize("name", NAMES)
def test_score_of_an_unfitted_estimator_is_not_fitted_error(name):
    estimator, _, data, bound = CASES[name]()
    with pytest.raises(NotFittedError):
        private_score(estimator, *data, epsilon=1.0, loss_bound=bound,
                      budget=UncheckedBudget(1.0, 1e-5))


@pytest.mark.parametrize("name", NAMES)
def test_score_of_wrong_width_records_names_both_shapes(name, fitted):
    estimator, data, bound = fitted[name]
    wide = _map_x(data, _widen)
    given = (wide[0][0] if isinstance(wide[0], list) else wide[0]).shape
    expected = (given[1] - 1,)
    with pytest.raises(ValueError, match=r"X") as error:
        private_score(estimator, *wide, epsilon=1.0, loss_bound=bound,
                      budget=UncheckedBudget(1.0, 1e-5))
    assert str(expected) in str(error.value) and str(given) in str(error.value)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name in ("prirfed", "laplace_mean")
    else name for name in NAMES if name != "pca"])
def test_search_checks_the_whole_data_before_any_run(name):
    """The invalid record at row 3 of X gives one error naming index 3, for two splits
    (seeds 0 and 1 put it in different parts for some estimators), and nothing is
    charged."""
    estimator, grid, data, bound = CASES[name]()
    value = INVALID.get(name, np.nan)

    def spoil(X):
        X = np.array(X, dtype=float)
        X[3] = value
        return X

    if name == "structured_prediction":  # its records' values are the targets Y
        spoiled = (data[0], spoil(data[1]))
    elif name == "prirfed":
        spoiled = ([spoil(data[0][0]), *data[0][1:]],)
    else:
        spoiled = (spoil(data[0]),)
    messages = set()
    for seed in range(2):
        budget = PrivacyBudget(6.0, 1e-5)
        with pytest.raises(ValueError, match=r"index \(3, 0\)|indices \[3\]") as error:
            PrivateGridSearchCV(estimator, grid, epsilon=6.0, loss_bound=bound,
                                budget=budget, random_state=seed).fit(*spoiled)
        assert budget.events == ()
        messages.add(str(error.value))
    assert len(messages) == 1


def test_pca_search_treats_a_non_finite_record_as_its_fit_does():
    """PrivatePCA zeroes a non-finite record; its validation loss is then clipped to the
    bound: every split completes the search and charges it."""
    estimator, grid, (X,), bound = CASES["pca"]()
    X = X.copy()
    X[3] = np.nan
    for seed in range(4):
        budget = PrivacyBudget(6.0, 1e-5)
        PrivateGridSearchCV(estimator, grid, epsilon=6.0, loss_bound=bound, budget=budget,
                            random_state=seed).fit(X)
        assert budget.events


class Planned(Exception):
    """Raised by a spy where the candidates would be drawn or planned."""


def test_n_iter_is_bounded_before_any_candidate_is_drawn(monkeypatch):
    def sampler(*args, **kwargs):
        raise Planned

    monkeypatch.setattr(search_module, "ParameterSampler", sampler)
    estimator, grid, data, bound = CASES["erm"]()
    for n_iter, error, match in [(10**7, ValueError, "n_iter"),
                                 (0, ValueError, "n_iter"), (2.5, TypeError, "n_iter")]:
        search = PrivateRandomizedSearchCV(estimator, grid, n_iter=n_iter, loss_bound=bound,
                                           budget=PrivacyBudget(1.0, 1e-5), random_state=0)
        with pytest.raises(error, match=match):
            search.fit(*data)


def test_a_grid_is_bounded_before_any_candidate_is_planned(monkeypatch):
    def planned(*args, **kwargs):
        raise Planned

    monkeypatch.setattr(splits_module, "planned_events", planned)
    estimator, _, data, bound = CASES["erm"]()
    grid = {"step_size": np.linspace(0.01, 1.0, 1001).tolist()}
    search = PrivateGridSearchCV(estimator, grid, loss_bound=bound,
                                 budget=PrivacyBudget(1.0, 1e-5), random_state=0)
    with pytest.raises(ValueError, match="param_grid must hold at most 1000"):
        search.fit(*data)
