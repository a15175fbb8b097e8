"""record_fit / replay_fit: observing a fit changes nothing; a replay on a neighbour
queries the same points and releases the same output; public differences are refused."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.base import clone

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import NoiseDominatesWarning
from geomstats_dp.optim import SquaredDistanceLoss, compiled_blocks
from geomstats_dp.optim.full_batch import FullBatch
from geomstats_dp.privacy.stages import observe_stages
from geomstats_dp.testing._recording import record_fit, replay_fit, seeded_clone

from .stage_cases import (
    frechet_mean,
    label_data,
    label_neighbours,
    sphere_data,
    sphere_neighbours,
    structured_prediction,
)

METHODS = ["rgd", "rsgd", "rsvrg", "tangent", "two_stage"]


@pytest.mark.parametrize("method", METHODS)
def test_recording_changes_nothing(monkeypatch, method):
    """The recorded fit's release is the plain fit's, and its stages are the queries.
    An observed fit takes the Python loop: the plain fit is compared on it too (the
    compiled blocks, which a process that loaded the sphere's kernel takes, give it to
    rounding: tests/optim/test_compiled_blocks.py)."""
    monkeypatch.setattr(compiled_blocks, "ENABLED", False)
    X = sphere_data()
    estimator = frechet_mean(method)
    recorded = record_fit(estimator, X, random_state=3)
    plain = clone(estimator).set_params(random_state=3).fit(X)
    np.testing.assert_array_equal(to_numpy(recorded.estimator.estimate_),
                                  to_numpy(plain.estimate_))
    assert recorded.events == plain.events_
    assert len(recorded.stages) == sum(getattr(e, "n_steps", 1) for e in plain.events_)
    for stage in recorded.stages:
        assert stage.law in ("gaussian", "exponential")
        assert stage.sensitivity > 0 and stage.scale > 0


@pytest.mark.parametrize("method", METHODS)
def test_replay_on_the_same_data_repeats_every_statistic(method):
    X = sphere_data()
    estimator = frechet_mean(method)
    recorded = record_fit(estimator, X, random_state=1)
    stages = replay_fit(estimator, X, None, recorded, random_state=1)
    assert [stage.distance(other) for stage, other in zip(recorded.stages, stages)] == [
        0.0] * len(stages)


@pytest.mark.parametrize("method", METHODS)
def test_replay_on_a_neighbour_releases_the_recorded_output(method):
    """Every stage released as recorded: the neighbour's fit ends at the same estimate
    (its statistics differ), whatever its data."""
    X = sphere_data()
    estimator = frechet_mean(method)
    recorded = record_fit(estimator, X, random_state=2)
    _, X2, _ = next(sphere_neighbours(X))
    stages = replay_fit(estimator, X2, None, recorded, random_state=2)
    assert any(stage.distance(other) > 0 for stage, other in zip(recorded.stages, stages))
    # the same replay by hand, keeping its estimator: the output is the recorded one
    fitted = seeded_clone(estimator, 2)
    releases = iter(recorded.stages)
    with observe_stages(lambda stage: next(releases).release()):
        fitted.fit(X2)
    np.testing.assert_allclose(to_numpy(fitted.estimate_),
                               to_numpy(recorded.estimator.estimate_), atol=1e-12)


def test_replay_refuses_a_neighbour_with_other_public_stages():
    """A removed record changes 2C/n: the stages' public sensitivities differ."""
    X = sphere_data()
    estimator = frechet_mean("rgd")
    recorded = record_fit(estimator, X, random_state=0)
    with pytest.raises(AssertionError, match="public stages differ"):
        replay_fit(estimator, X[1:], None, recorded, random_state=0)


@pytest.mark.parametrize("kept", [2, 4])
def test_replay_refuses_another_number_of_stages(kept):
    X = sphere_data()
    estimator = frechet_mean("rgd", n_iter=3)
    recorded = record_fit(estimator, X, random_state=0)
    recorded.stages = (recorded.stages * 2)[:kept]
    with pytest.raises(AssertionError, match=("beyond the 2 recorded" if kept == 2 else
                                              "released 3 stages, the recorded fit 4")):
        replay_fit(estimator, X, None, recorded, random_state=0)


def test_recording_keeps_warnings_and_the_ledger_events():
    X = sphere_data()
    recorded = record_fit(frechet_mean("tangent", epsilon=1e-3), X, random_state=0)
    assert any(category is NoiseDominatesWarning for category, _ in recorded.warnings)
    assert [event.label for event in recorded.events] == [
        "PrivateFrechetMean tangent: step 0"]


def test_label_release_replays_at_label_level():
    x, Y = label_data()
    estimator = structured_prediction()
    recorded = record_fit(estimator, x, Y, random_state=0)
    assert [stage.adjacency for stage in recorded.stages] == ["label_level"] * 2
    for _, x2, Y2 in label_neighbours(x, Y):
        stages = replay_fit(estimator, x2, Y2, recorded, random_state=0)
        assert len(stages) == 2


def test_per_row_releases_are_recorded_at_predict_time():
    x, Y = label_data()
    recorded = record_fit(structured_prediction("rgd", n_iter=3), x, Y, random_state=0,
                          predict=np.array([[0.2], [0.7]]))
    assert len(recorded.stages) == 2 * 3
    assert {stage.label for stage in recorded.stages} == {"full_gradient"}


@pytest.mark.skipif(not compiled_blocks.numba_importable(), reason="numba not installed")
def test_an_observed_run_leaves_the_compiled_route():
    """The kernel adds its noise without stages: under an observer the loop runs."""
    space = SPDMatrices(2)
    data = np.stack([np.eye(2), 2 * np.eye(2)])
    loss = SquaredDistanceLoss(space)
    runner = compiled_blocks.compiled_block_runner
    arguments = (loss, FullBatch(1.0, 0.0), data, None, 10**6)
    if compiled_blocks.backend_name() != "numpy" or not compiled_blocks.ENABLED:
        pytest.skip("the compiled route is for the numpy backend, when enabled")
    assert runner(*arguments) is not None
    with observe_stages(lambda stage: stage.release()):
        assert runner(*arguments) is None
