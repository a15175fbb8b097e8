"""A reusable black-box audit of an estimator: honest, and with its noise halved.

``audit_fit`` runs ``fit(data, seed)`` on two neighbouring datasets through the library's
auditor. ``halved_gaussian_noise`` and ``halved_laplace_scale`` are context managers that
break a mechanism on purpose (the noise actually drawn is half the calibrated one), to
check that an audit has the power to refute a broken twin. Other estimators reuse
``audit_fit`` with their own fit function and worst-case neighbours.
"""

import contextlib

import numpy as np

from geomstats_dp._backend import to_numpy
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.privacy import audit


def audit_fit(fit, dataset, neighbour, delta, n_runs, statistic=None, seed=0,
              calibration_fraction=0.3):
    """Audit the release ``fit(data, seed)`` on neighbouring datasets.

    Parameters
    ----------
    fit : callable
        ``fit(data, seed) -> release`` (a scalar, or a point with ``statistic``); ``seed``
        is an int drawn by the auditor, to pass as the estimator's ``random_state``.
    dataset, neighbour : array-like
        Worst-case neighbours under the mechanism's adjacency.
    delta : float
        The delta of the claim.
    n_runs : int
        Runs per dataset.
    statistic : callable, optional
        As in ``geomstats_dp.privacy.audit``.
    seed : int
        Seed of the auditor.
    calibration_fraction : float

    Returns
    -------
    result : AuditResult
    """

    def mechanism(data, rng):
        release = fit(data, int(rng.integers(2**31 - 1)))
        return to_numpy(release).reshape(-1)[0] if statistic is None else release

    return audit(mechanism, dataset, neighbour, n_runs=n_runs, statistic=statistic,
                 delta=delta, calibration_fraction=calibration_fraction,
                 random_state=np.random.default_rng(seed))


class _HalvedTangentGaussian(TangentGaussian):
    def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None):
        return super().sample(base_point, n_samples=n_samples, sigma=sigma / 2,
                              random_state=random_state)


@contextlib.contextmanager
def halved_gaussian_noise(monkeypatch):
    """The gradient estimators draw half the calibrated Gaussian noise (a broken twin)."""
    from geomstats_dp.learning.mechanisms import gradient

    with monkeypatch.context() as patch:
        patch.setattr(gradient, "TangentGaussian", _HalvedTangentGaussian)
        yield


@contextlib.contextmanager
def halved_laplace_scale(monkeypatch):
    """The Laplace Frechet mean draws with half its calibrated scale (a broken twin)."""
    from geomstats_dp.learning.mechanisms import laplace as _laplace_release

    original = _laplace_release.laplace_scale
    with monkeypatch.context() as patch:
        patch.setattr(_laplace_release, "laplace_scale",
                      lambda *args, **kwargs: original(*args, **kwargs) / 2)
        yield
