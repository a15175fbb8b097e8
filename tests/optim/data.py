"""Seeded datasets on the test spaces (numpy draws, converted to the backend)."""

import numpy as np
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend, to_numpy
from geomstats_dp.optim import canonical_point


def random_tangent(space, base_point, lengths, rng):
    """Tangent vectors at base_point, random directions, the given metric lengths."""
    ambient = to_backend(rng.standard_normal((len(lengths),) + tuple(space.shape)))
    tangent = space.to_tangent(ambient, base_point)
    norms = to_numpy(space.metric.norm(tangent, base_point))
    factors = to_backend((lengths / norms).reshape((-1,) + (1,) * len(space.shape)))
    return tangent * factors


def cloud(space, n_samples, radius, seed, offset=0.0):
    """Points Exp_c(v_i), d(c, z_i) <= radius, around c at distance ``offset`` from the
    canonical (initial) point."""
    rng = np.random.default_rng(seed)
    origin = canonical_point(space)
    center = space.metric.exp(random_tangent(space, origin, np.array([offset]), rng)[0], origin)
    lengths = radius * rng.uniform(0.2, 1.0, n_samples)
    return space.metric.exp(random_tangent(space, center, lengths, rng), center)


MEAN_SPACES = {
    "spd": lambda: SPDMatrices(3),
    "sphere": lambda: Hypersphere(2),
    "hyperboloid": lambda: Hyperboloid(2),
}

N_SAMPLES = 20  # the strategies' tests' SPD cloud


def spd_cloud():
    """The strategies' tests' data: (SPD(3), N_SAMPLES points about 1.5 from the identity)."""
    space = MEAN_SPACES["spd"]()
    return space, cloud(space, N_SAMPLES, radius=1.0, seed=30, offset=1.5)


def assert_kernel_noise_is_the_samplers(add_noise, space, points, rejected, seed=0):
    """A compiled kernel's ``add_noise(direction, point, normals, scale)`` (run as plain
    Python) adds the space's ``TangentGaussian`` draw from the same normals at each of
    ``points``, and adds nothing (False) at the point ``rejected``."""
    from geomstats_dp.distributions import TangentGaussian

    sampler = TangentGaussian(space, validate=False).sampler
    normals = np.random.default_rng(seed).standard_normal(int(space.dim))
    for point in points:
        direction = np.zeros_like(point)
        assert add_noise(direction, point, normals, 0.3)
        np.testing.assert_allclose(direction, sampler.draw_one(point, normals, 0.3),
                                   rtol=1e-12, atol=1e-14)
    assert not add_noise(np.zeros_like(rejected), rejected, normals, 0.3)


def run_both(monkeypatch, space, data, strategy, seed, n_iter, **options):
    """The same ``minimize`` call on the compiled route and on the Python loop
    (``compiled_blocks.ENABLED``), in that order."""
    from geomstats_dp.optim import (
        InverseTimeStep,
        SquaredDistanceLoss,
        compiled_blocks,
        minimize,
    )

    results = []
    for enabled in (True, False):
        monkeypatch.setattr(compiled_blocks, "ENABLED", enabled)
        results.append(minimize(
            SquaredDistanceLoss(space), data, strategy, n_iter,
            InverseTimeStep(0.5, offset=2.0), random_state=seed, data_checked=True,
            **options))
    return results


def assert_same_run(compiled, python):
    """The same release and iterates to rounding, the same counts and step sizes."""
    np.testing.assert_allclose(compiled.point, python.point, rtol=1e-9, atol=1e-12)
    for field in ("output", "n_iter", "n_steps", "n_gradient_evaluations", "n_noise_draws"):
        assert getattr(compiled, field) == getattr(python, field), field
    np.testing.assert_array_equal(compiled.step_sizes, python.step_sizes)
    if python.iterates is None:
        assert compiled.iterates is None
    else:
        np.testing.assert_allclose(compiled.iterates, python.iterates, rtol=1e-9, atol=1e-12)
