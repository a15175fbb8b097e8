"""The polar form of SPD(n) under geomstats' affine-invariant metric.

The Laplace sampler relies on the Riemannian volume in polar coordinates
x = Q diag(exp(r)) Q^T being proportional to prod_{i<j} sinh(|r_i - r_j| / 2) times Haar
measure. Checked here from geomstats' own ``inner_product``: in the coordinates
(theta, r) -> Q0 expm(S(theta)) diag(exp(r)) expm(-S(theta)) Q0^T at theta = 0 (where Haar
measure has a constant density), sqrt(det g) / prod sinh(|r_i - r_j| / 2) must not depend on
(Q0, r).
"""

import numpy as np
from scipy.linalg import expm

from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from tests.conftest import shifted

N = 3
PAIRS = [(i, j) for i in range(N) for j in range(i + 1, N)]
STEP = 1e-5


def polar(rotation, coordinates):
    angles, spectrum = coordinates[: len(PAIRS)], coordinates[len(PAIRS):]
    skew = np.zeros((N, N))
    for angle, (i, j) in zip(angles, PAIRS):
        skew[i, j], skew[j, i] = angle, -angle
    q = rotation @ expm(skew)
    return q @ np.diag(np.exp(spectrum)) @ q.T


def volume_density(space, rotation, spectrum):
    """sqrt(det g) of the affine-invariant metric in (theta, r) coordinates at theta = 0."""
    base = np.r_[np.zeros(len(PAIRS)), spectrum]
    point = polar(rotation, base)
    partials = []
    for k in range(base.size):
        shift = np.zeros(base.size)
        shift[k] = STEP
        partials.append((polar(rotation, base + shift) - polar(rotation, base - shift)) / (2 * STEP))
    partials = np.stack(partials)
    gram = to_numpy(space.metric.inner_product(
        to_backend(partials[:, None]), to_backend(partials[None, :]), to_backend(point)
    ))
    return np.sqrt(np.linalg.det(gram))


def test_volume_element_is_prod_sinh_of_half_gaps():
    space = SPDMatrices(N)
    rng = np.random.default_rng(shifted(40))
    half, full = [], []
    for _ in range(6):
        rotation, _ = np.linalg.qr(rng.standard_normal((N, N)))
        spectrum = rng.normal(scale=1.5, size=N)
        gaps = np.array([abs(spectrum[i] - spectrum[j]) for i, j in PAIRS])
        density = volume_density(space, rotation, spectrum)
        half.append(density / np.prod(np.sinh(gaps / 2)))
        full.append(density / np.prod(np.sinh(gaps)))
    # finite differences with step 1e-5 leave a relative error near 1e-9
    assert np.std(half) / np.mean(half) < 1e-6
    assert np.std(full) / np.mean(full) > 1e-2
