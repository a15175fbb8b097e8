"""Decisions of plain-function losses on dummy records, shared across fits
(``optim.shared_decisions``): the same release as decisions taken afresh, and a new
decision for another callable, record shape, start point, space or backend."""

import warnings

import geomstats.backend as gs
import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import PrivateERM
from geomstats_dp.optim import CallableLoss, callable_loss, shared_decisions
from geomstats_dp.privacy import PrivacyBudget
from tests.optim.test_callable_loss import (
    Counted,
    spd_trace_gradient,
    spd_trace_loss,
)

N_RECORDS = 60


def _covariances():
    rng = np.random.default_rng(5)
    factors = rng.normal(size=(N_RECORDS, 2, 2))
    return to_backend(factors @ np.transpose(factors, (0, 2, 1)) + 0.5 * np.eye(2))


def _fit(space, loss, gradient, data, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # finite differences on numpy
        estimator = PrivateERM(space, loss, epsilon=1.0, delta=1e-5, clip_norm=5.0,
                               n_iter=5, gradient=gradient, gradient_kind="euclidean",
                               random_state=seed, budget=PrivacyBudget(1.0, 1e-5))
        return to_numpy(estimator.fit(data).estimate_)


@pytest.mark.parametrize("with_gradient", [False, True])
def test_shared_decisions_give_the_release_of_fresh_ones(with_gradient):
    space, data = SPDMatrices(2), _covariances()
    loss = Counted(spd_trace_loss)
    gradient = Counted(spd_trace_gradient) if with_gradient else None
    fresh = _fit(space, loss, gradient, data, seed=3)  # decides on the dummy records
    fresh_calls = loss.calls
    shared = _fit(space, loss, gradient, data, seed=3)  # a new estimator and loss
    shared_calls = loss.calls - fresh_calls
    shared_decisions.SHARED_DECISIONS.clear()
    cleared = _fit(space, loss, gradient, data, seed=3)
    assert shared_calls < fresh_calls == loss.calls - fresh_calls - shared_calls
    np.testing.assert_array_equal(shared, fresh)
    np.testing.assert_array_equal(cleared, fresh)


def shifted_square(point, sample):
    """|x - z[:2]|^2 / 2: records of 2 or more coordinates (broadcasts)."""
    return gs.sum((point - sample[..., :2]) ** 2, axis=-1) / 2


def _calls_of_a_new_loss(space, function, start, data):
    """Calls of ``function`` by a new CallableLoss's first gradients (decisions, if not
    shared, then the data)."""
    before = function.calls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        CallableLoss(space, function).gradients(start, data)
    return function.calls - before


def _records(n_columns):
    return to_backend(np.random.default_rng(6).normal(size=(N_RECORDS, n_columns)))


@pytest.mark.parametrize("change", ["callable", "record shape", "start", "space", "backend"])
def test_decisions_are_not_shared_across_public_settings(change, monkeypatch):
    space, function = Euclidean(2), Counted(shifted_square)
    start, data = to_backend(np.array([0.5, -0.2])), _records(2)
    first = _calls_of_a_new_loss(space, function, start, data)
    shared = _calls_of_a_new_loss(space, function, start, data)
    assert shared < first  # the second loss took no decision
    if change == "callable":
        function = Counted(shifted_square)
    elif change == "record shape":
        data = _records(3)
    elif change == "start":
        start = to_backend(np.array([0.5, 0.2]))
    elif change == "space":
        space = Euclidean(2)
    else:
        monkeypatch.setattr(callable_loss, "backend_name", lambda: "another backend")
    assert _calls_of_a_new_loss(space, function, start, data) > shared


class UnhashableCounted(Counted):
    """A counted callable that defines equality and so has no hash."""

    def __eq__(self, other):
        return self is other

    __hash__ = None


def test_an_unhashable_callable_decides_for_each_loss():
    space, function = Euclidean(2), UnhashableCounted(shifted_square)
    start, data = to_backend(np.array([0.5, -0.2])), _records(2)
    first = _calls_of_a_new_loss(space, function, start, data)
    assert _calls_of_a_new_loss(space, function, start, data) == first


def test_only_the_latest_decisions_are_kept(monkeypatch):
    monkeypatch.setattr(shared_decisions, "MAX_SHARED", 2)
    space, start, data = Euclidean(2), to_backend(np.array([0.5, -0.2])), _records(2)
    oldest, newer, newest = (Counted(shifted_square) for _ in range(3))
    first = _calls_of_a_new_loss(space, oldest, start, data)
    assert _calls_of_a_new_loss(space, oldest, start, data) < first  # kept
    for function in (newer, newest):  # two newer: the oldest dropped
        _calls_of_a_new_loss(space, function, start, data)
    assert _calls_of_a_new_loss(space, newest, start, data) < first  # kept
    assert _calls_of_a_new_loss(space, oldest, start, data) == first  # dropped
