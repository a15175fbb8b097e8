"""NoiseDominatesWarning of the means and of structured prediction: it fires in a
noise-dominated public setting, identically on neighbouring datasets, and stays silent on
working fits of real data (scikit-learn's wine and digits) at epsilon 1.

The threshold's calibration on the baseline benchmark is on docs/benchmarks/baselines.md.
"""

import math
import warnings

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.learning.frechet_mean import FrechetMean
from sklearn.datasets import load_digits, load_wine

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.learning import (
    NoiseDominatesWarning,
    PrivateERM,
    PrivateFrechetMean,
    PrivateStructuredPrediction,
)
from geomstats_dp.optim import HuberDistanceLoss
from geomstats_dp.testing import check_public_observables
from tests.conftest import shifted

HUBER_RADIUS = 0.5


def _wine_rows():
    """The 178 wine rows (non-negative measurements) scaled to norm 1, on S^12, with the
    public centre of the positive orthant x0 and the radius C of the orthant about it."""
    X = load_wine().data
    p = X.shape[1]
    return (Hypersphere(p - 1), X / np.linalg.norm(X, axis=1, keepdims=True),
            np.ones(p) / math.sqrt(p), math.acos(1 / math.sqrt(p)))


def _huber_mean(space, points, start, n_steps=500):
    """The Huber mean by noiseless unit Riemannian gradient steps (written here)."""
    point = start
    for _ in range(n_steps):
        logs = to_numpy(space.metric.log(to_backend(points), to_backend(point)))
        norms = np.linalg.norm(logs, axis=1, keepdims=True)
        weights = np.minimum(1.0, HUBER_RADIUS / np.maximum(norms, 1e-300))
        point = to_numpy(space.metric.exp(to_backend((weights * logs).mean(axis=0)),
                                          to_backend(point)))
    return point


def _estimators(space, x0, clip, epsilon):
    """The Frechet mean's methods that warn and the Huber mean's default."""
    means = {method: PrivateFrechetMean(space, epsilon=epsilon, clip_norm=clip,
                                        method=method, init_point=x0, random_state=0)
             for method in ("extrinsic", "tangent", "two_stage", "rgd")}
    return {**means, "huber": PrivateERM(space, HuberDistanceLoss(space, HUBER_RADIUS),
                                         epsilon=epsilon, clip_norm=HUBER_RADIUS,
                                         init_point=x0, random_state=0)}


@pytest.mark.filterwarnings("ignore::geomstats_dp.learning._diagnostics.ScheduleStopsShortWarning")
@pytest.mark.parametrize("name", ["extrinsic", "tangent", "two_stage", "rgd", "huber"])
def test_warns_where_the_noise_dominates_identically_on_neighbours(name):
    """40 wine rows at epsilon 0.1: every release's public ratio exceeds 1; the warning
    (and every other public output) is the same on the worst-case neighbours."""
    space, rows, x0, clip = _wine_rows()
    estimator = _estimators(space, x0, clip, 0.1)[name]
    with pytest.warns(NoiseDominatesWarning, match="no better than the data-independent"):
        estimator.fit(rows[:40])
    assert estimator.noise_ratio_ > 1
    check_public_observables(estimator, rows[:40])


def test_no_warning_on_wine_at_epsilon_one():
    """The defaults on the 178 wine rows at epsilon 1 (public ball / start): silent, and
    far closer to the non-private answer than the public start (1.2 from it)."""
    space, rows, x0, clip = _wine_rows()
    exact = to_numpy(FrechetMean(space).fit(to_backend(rows)).estimate_)
    huber = _huber_mean(space, rows, x0)
    loss = HuberDistanceLoss(space, HUBER_RADIUS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)
        mean = PrivateFrechetMean(space, epsilon=1.0, clip_norm=clip, radius=clip,
                                  center=x0, random_state=shifted(0)).fit(rows)
        robust = PrivateERM(space, loss, epsilon=1.0, clip_norm=HUBER_RADIUS,
                            init_point=x0, random_state=shifted(0)).fit(rows)
    assert mean.noise_ratio_ < 1 and robust.noise_ratio_ < 1

    def distance(a, b):
        return float(to_numpy(space.metric.dist(to_backend(a), to_backend(b))))

    assert distance(x0, exact) > 1.0 and distance(x0, huber) > 1.0
    assert distance(mean.estimate_, exact) < 0.4
    assert distance(robust.estimate_, huber) < 0.4


def _digits_directions():
    """Digits: the pixels (public features) and the direction on S^1 of each image's
    scores on the first two principal axes (private targets); a public split."""
    X = load_digits().data / 16.0
    centred = X - X.mean(axis=0)
    axes = np.linalg.svd(centred, full_matrices=False)[2][:2]
    scores = centred @ axes.T
    Y = scores / np.linalg.norm(scores, axis=1, keepdims=True)
    order = np.random.default_rng(0).permutation(len(X))
    return X, Y, order[200:], order[:200]


def _angles(predictions, targets):
    return np.arccos(np.clip(np.sum(predictions * targets, axis=1), -1.0, 1.0))


# once, on numpy: the kernel fit on 1,597 targets is the module's cost on every backend,
# and the autograd and pytorch release tables hold numpy's structured-prediction releases
# and ratios (docs/dev/testing.md, "Suite cost")
@pytest.mark.backend_independent
def test_structured_prediction_silent_on_digits_at_epsilon_one():
    """1,597 training targets at epsilon 1: no warning, and the predictions are far
    closer to the targets than the best constant direction (the circular mean)."""
    X, Y, train, test = _digits_directions()
    mean = Y[train].mean(axis=0)
    constant = _angles(mean / np.linalg.norm(mean), Y[test]).mean()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)
        model = PrivateStructuredPrediction(Hypersphere(1), epsilon=1.0,
                                            random_state=shifted(0)).fit(X[train], Y[train])
    assert model.noise_ratio_ < 1
    assert _angles(to_numpy(model.predict(X[test])), Y[test]).mean() < 0.7 * constant


def test_structured_prediction_warns_against_the_constant_mean():
    """200 targets at epsilon 0.1: the warning names the constant private mean."""
    X, Y, train, _ = _digits_directions()
    with pytest.warns(NoiseDominatesWarning, match="constant private mean"):
        model = PrivateStructuredPrediction(Hypersphere(1), epsilon=0.1,
                                            random_state=0).fit(X[train[:200]],
                                                                Y[train[:200]])
    assert model.noise_ratio_ > 1
