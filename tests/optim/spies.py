"""Test doubles: a recording random generator, a recording noise sampler, simple losses."""

import geomstats.backend as gs
import numpy as np

from geomstats_dp._backend import SecureGenerator, to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.optim import PerSampleLoss, SquaredDistanceLoss

_GENERATOR_METHODS = (
    "random",
    "standard_normal",
    "normal",
    "uniform",
    "exponential",
    "gamma",
    "beta",
    "integers",
    "permutation",
    "choice",
)


def _recording(name):
    def method(self, *args, **kwargs):
        self.calls.append((name, repr(args), repr(sorted(kwargs.items()))))
        return getattr(self.generator, name)(*args, **kwargs)

    return method


class RecordingGenerator(SecureGenerator):
    """A seeded numpy Generator that records the name and arguments of every draw.

    It subclasses SecureGenerator only so that ``get_rng`` passes it through unchanged.
    """

    def __init__(self, seed):
        self.generator = np.random.default_rng(seed)
        self.calls = []


for _name in _GENERATOR_METHODS:
    setattr(RecordingGenerator, _name, _recording(_name))


class RecordingNoise:
    """TangentGaussian that records every base point, sigma and draw."""

    def __init__(self, space):
        self.inner = TangentGaussian(space)
        self.base_points, self.sigmas, self.draws = [], [], []

    def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None):
        draw = self.inner.sample(
            base_point, n_samples=n_samples, sigma=sigma, random_state=random_state
        )
        self.base_points.append(to_numpy(base_point))
        self.sigmas.append(sigma)
        self.draws.append(to_numpy(draw))
        return draw


class ZeroLoss(PerSampleLoss):
    """f = 0: every step moves by the noise alone."""

    def values(self, point, data):
        return gs.zeros(data.shape[0])

    def gradients(self, point, data):
        return gs.zeros((data.shape[0],) + tuple(self.space.shape))


class CountingLoss(SquaredDistanceLoss):
    """Squared-distance loss that counts the per-sample gradients it computes."""

    def __init__(self, space):
        super().__init__(space)
        self.n_gradients = 0

    def gradients(self, point, data):
        self.n_gradients += int(data.shape[0])
        return super().gradients(point, data)


class TangentGaussianSpy:
    """Patches ``TangentGaussian.sample`` on the class: records every call's sigma, base
    point and draw, whatever sampler object the estimator builds.

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
    """

    def __init__(self, monkeypatch):
        self.sigmas, self.base_points, self.draws = [], [], []
        original = TangentGaussian.sample
        spy = self

        def sample(sampler, base_point, n_samples=1, sigma=1.0, random_state=None, mean=None):
            draw = original(sampler, base_point, n_samples, sigma, random_state, mean)
            spy.sigmas.append(sigma)
            spy.base_points.append(to_numpy(base_point))
            spy.draws.append(to_numpy(draw))
            return draw

        monkeypatch.setattr(TangentGaussian, "sample", sample)
