"""The private classifiers' releases are post-processing of their noisy stages: replayed
on a neighbour (a record and its label changed) with the same stage releases, the fitted
model is the same. Catches a private quantity that reaches the model without noise (the
exact class counts in place of the noisy ones)."""

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_numpy
from geomstats_dp.learning import PrivateMDM, PrivateTangentSpaceClassifier
from geomstats_dp.privacy.stages import observe_stages

from .classifier_data import spd_classes

SPACE = SPDMatrices(3)


def _fit_recording(model, X, y):
    releases = []

    def record(stage):
        releases.append(stage.release())
        return releases[-1]

    with observe_stages(record):
        model.fit(X, y)
    return releases


def _fit_replaying(model, X, y, releases):
    position = iter(releases)
    with observe_stages(lambda stage: next(position)):
        return model.fit(X, y)


@pytest.mark.parametrize(("model", "released"), [
    (PrivateMDM(SPACE, classes=[0, 1, 2], labels="private", random_state=0),
     ("centroids_",)),
    (PrivateMDM(SPACE, classes=[0, 1, 2], labels="public", random_state=0),
     ("centroids_",)),
    (PrivateTangentSpaceClassifier(SPACE, classes=[0, 1, 2], n_iter=20, random_state=0),
     ("base_point_", "coef_", "intercept_")),
])
def test_the_release_is_a_function_of_the_stages_only(model, released):
    X, y = spd_classes()
    first = model.__sklearn_clone__()
    releases = _fit_recording(first, X, y)
    X2, y2 = np.array(to_numpy(X)), y.copy()
    X2[0] = X2[-1]
    if model.get_params().get("labels", "private") == "private":
        y2[0] = y[-1]  # a record is (x, y); public labels are kept
    assert y2[0] != y[0] or model.get_params().get("labels") == "public"
    second = _fit_replaying(model.__sklearn_clone__(), X2, y2, releases)
    for name in released:
        np.testing.assert_array_equal(to_numpy(getattr(first, name)),
                                      to_numpy(getattr(second, name)), err_msg=name)
