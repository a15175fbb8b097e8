"""What the private classifiers share (PrivateMDM, PrivateToTangentSpace,
PrivateTangentSpaceClassifier): the label adjacency, scikit-learn use, pyRiemann interop.
Each module's own tests are in test_mdm, test_class_means, test_classes, test_tangent_frame,
test_tangent_space and test_tangent_logistic."""

import math
import pickle

import numpy as np
import pytest
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    PrivateMDM,
    PrivateTangentSpaceClassifier,
    PrivateToTangentSpace,
)
from geomstats_dp.testing import check_stage_sensitivity
from tests.conftest import shifted

from .classifier_data import spd_classes


def _label_neighbours(X, y, space):
    """Record 0 moved to another class: same point, a far point, the other class's point."""
    far = to_numpy(space.metric.exp(to_backend(5.0 * np.eye(3) / math.sqrt(3)),
                                    to_backend(np.eye(3))))
    for name, point in [("same point", to_numpy(X[0])), ("far", far),
                        ("other", to_numpy(X[-1]))]:
        X2, y2 = np.array(to_numpy(X)), y.copy()
        X2[0], y2[0] = point, y[-1]
        yield name, to_backend(X2), y2


@pytest.mark.parametrize("estimator", [
    PrivateMDM(SPDMatrices(3), classes=[0, 1, 2], n_iter=2),
    PrivateTangentSpaceClassifier(SPDMatrices(3), classes=[0, 1, 2], n_iter=5),
], ids=["mdm", "tangent"])
def test_a_record_changing_class_moves_each_stage_within_its_sensitivity(estimator):
    space = SPDMatrices(3)
    X, y = spd_classes(n_per_class=10)
    check_stage_sensitivity(estimator, X, y, neighbours=list(_label_neighbours(X, y, space)))


# -- scikit-learn and pyRiemann -------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda space: PrivateMDM(space, epsilon=5.0, classes=[0, 1, 2], random_state=0),
    lambda space: PrivateTangentSpaceClassifier(space, epsilon=5.0, classes=[0, 1, 2],
                                                n_iter=20, random_state=0),
    lambda space: make_pipeline(PrivateToTangentSpace(space, epsilon=5.0, random_state=0),
                                LogisticRegression()),
], ids=["mdm", "tangent", "transformer"])
def test_clone_pickle_and_cross_validation(make):
    space = SPDMatrices(3)
    X, y = spd_classes(seed=shifted(1))
    model = make(space)
    scores = cross_val_score(model, X, y, cv=StratifiedKFold(3, shuffle=True,
                                                             random_state=0))
    assert scores.mean() > 0.8  # three separated classes, epsilon 5
    fitted = clone(model).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))


def test_private_grid_search_over_the_mdm():
    from geomstats_dp.model_selection import PrivateGridSearchCV

    X, y = spd_classes()
    search = PrivateGridSearchCV(
        PrivateMDM(SPDMatrices(3), classes=[0, 1, 2]), {"clip_norm": [0.5, 1.0]},
        epsilon=4.0, loss_bound=1.0, random_state=0).fit(X, y)
    assert search.best_params_["clip_norm"] in (0.5, 1.0)
    assert search.budget_.spent_epsilon <= 4.0 * (1 + 1e-9)


def test_pyriemann_covariances_go_straight_in():
    pyriemann = pytest.importorskip("pyriemann")
    rng = np.random.default_rng(shifted(0))
    n_trials, n_channels, n_times = 60, 4, 200
    y = np.repeat([0, 1], n_trials // 2)
    scales = np.where(y[:, None] == 0, [1.0, 1.0, 2.0, 2.0], [2.0, 2.0, 1.0, 1.0])
    signals = rng.standard_normal((n_trials, n_channels, n_times)) * scales[:, :, None]
    space = SPDMatrices(n_channels)
    for model in (PrivateMDM(space, epsilon=10.0, classes=[0, 1], random_state=0),
                  PrivateTangentSpaceClassifier(space, epsilon=10.0, classes=[0, 1],
                                                random_state=0)):
        pipeline = make_pipeline(pyriemann.estimation.Covariances(), model)
        assert cross_val_score(pipeline, signals, y, cv=3).mean() > 0.9


@pytest.mark.backend_independent
@pytest.mark.parametrize("estimator", [PrivateMDM, PrivateToTangentSpace,
                                       PrivateTangentSpaceClassifier])
def test_docstring_parameters_are_the_constructor_signature(estimator):
    import inspect
    import re

    section = estimator.__doc__.split("Parameters\n    ----------\n")[1].split("\n\n")[0]
    documented = re.findall(r"^    (\w+) :", section, flags=re.MULTILINE)
    assert documented == list(inspect.signature(estimator.__init__).parameters)[1:]
