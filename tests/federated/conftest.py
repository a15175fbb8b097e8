"""Fixtures of the federated tests."""

import pytest

from geomstats_dp.federated import local as local_module


@pytest.fixture
def drawn_sigmas(monkeypatch):
    """The list of the noise stds the agents' tangent Gaussian samplers draw with."""
    sigmas = []
    inner = local_module.TangentGaussian

    class Recording(inner):
        def sample(self, base_point, n_samples=1, sigma=1.0, random_state=None):
            sigmas.append(sigma)
            return super().sample(base_point, n_samples, sigma=sigma,
                                  random_state=random_state)

    monkeypatch.setattr(local_module, "TangentGaussian", Recording)
    return sigmas
