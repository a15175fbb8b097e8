"""ClassMeansRelease (learning.mechanisms.class_means), run by PrivateMDM: the ledger is
the Gaussian composition of the counts and the class sums, and the class steps divide by
the released counts."""

import math

import pytest
from geomstats.geometry.spd_matrices import SPDMatrices
from sklearn.base import clone

from geomstats_dp.learning import PrivateMDM
from geomstats_dp.privacy.stages import observe_stages

from .classifier_data import gdp_epsilon, spd_classes


def test_mdm_ledger_is_the_gaussian_composition():
    """Private labels: reference rounds (sensitivity 2C'), counts (sensitivity sqrt 2) and
    n_iter rounds of class sums (sensitivity 2C), composing to epsilon exactly, the
    reference taking its fraction of mu^2; public labels and a public start: the sums
    alone."""
    X, y = spd_classes()
    space = SPDMatrices(3)
    model = PrivateMDM(space, epsilon=1.0, clip_norm=1.5, n_iter=4, classes=[0, 1, 2],
                       reference_fraction=0.3, reference_clip_norm=2.0,
                       reference_n_iter=2, random_state=0).fit(X, y)
    reference, counts, sums = model.events_
    assert reference.sensitivity == pytest.approx(4.0) and reference.n_steps == 2
    assert counts.sensitivity == pytest.approx(math.sqrt(2))
    assert sums.sensitivity == pytest.approx(3.0) and sums.n_steps == 4
    parts = [2 / reference.noise_multiplier**2, 1 / counts.noise_multiplier**2,
             4 / sums.noise_multiplier**2]
    assert parts[0] / sum(parts) == pytest.approx(0.3)
    assert gdp_epsilon(math.sqrt(sum(parts)), 1e-5) == pytest.approx(1.0, rel=1e-4)
    assert model.budget_.spent_epsilon == pytest.approx(1.0, rel=1e-4)
    public = PrivateMDM(space, labels="public", n_iter=4, reference_fraction=0.0,
                        random_state=0).fit(X, y)
    (only,) = public.events_
    assert gdp_epsilon(math.sqrt(4) / only.noise_multiplier, 1e-5) == pytest.approx(
        1.0, rel=1e-4)


def test_mdm_divides_by_the_released_counts():
    """With private labels the class steps use the noisy counts, never the exact ones: a
    released count changed by an observer changes the centroid of its class."""
    X, y = spd_classes()
    space = SPDMatrices(3)
    model = PrivateMDM(space, classes=[0, 1, 2], n_iter=1, random_state=0)

    def fit(bump):
        def observer(stage):
            released = stage.release()
            return released + bump if stage.label.endswith("class counts") else released
        with observe_stages(observer):
            return clone(model).fit(X, y).centroids_

    assert float(space.metric.dist(fit(0.0)[0], fit(25.0)[0])) > 1e-3
