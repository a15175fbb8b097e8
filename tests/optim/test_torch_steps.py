"""The torch step formulas of the compiled blocks (``optim.torch_steps``) against
geomstats' own maps: the clipped gradient sums, the exponential maps, the tangent noise.
The blocks' agreement with the Python loop is ``test_compiled_torch``'s."""

import math

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from tests.conftest import BACKEND, shifted

if BACKEND != "pytorch":  # before importing torch
    pytest.skip("the pytorch backend's steps", allow_module_level=True)
torch = pytest.importorskip("torch")
torch_steps = pytest.importorskip("geomstats_dp.optim.torch_steps")

ATOL = 1e-10


def _tensor(array):
    return torch.as_tensor(np.asarray(array, dtype=float))


def test_clip_coefficients_scale_to_the_clip_norm_and_drop_non_finite_norms():
    norms = _tensor([0.5, 2.0, 8.0, math.inf, math.nan])
    coefficients, finite = torch_steps.clip_coefficients(norms, _tensor([1, 1, 0.5, 1, 1]),
                                                         _tensor(1.0))
    np.testing.assert_allclose(coefficients.numpy(), [1.0, 0.5, 0.0625, 0.0, 0.0])
    np.testing.assert_array_equal(finite.numpy(), [True, True, True, False, False])


def test_cap_bounds_the_norm_and_an_infinite_bound_leaves_the_direction():
    direction = _tensor([3.0, 4.0])
    np.testing.assert_allclose(
        torch_steps.cap(direction, _tensor(5.0), _tensor(1.0)).numpy(), [0.6, 0.8])
    np.testing.assert_allclose(
        torch_steps.cap(direction, _tensor(5.0), _tensor(math.inf)).numpy(), [3.0, 4.0])


@pytest.fixture
def sphere_data():
    rng = np.random.default_rng(shifted(0))
    space = Hypersphere(6)
    point = rng.standard_normal(7)
    rows = point + 0.8 * rng.standard_normal((9, 7))
    return (space, _tensor(point / np.linalg.norm(point)),
            _tensor(rows / np.linalg.norm(rows, axis=1, keepdims=True)), rng)


def test_the_sphere_gradient_is_the_clipped_sum_of_minus_the_logs(sphere_data):
    space, point, rows, rng = sphere_data
    prefactors = _tensor(rng.uniform(0.5, 1.5, len(rows)))
    logs = space.metric.log(rows, point)
    norms = torch.linalg.vector_norm(logs, dim=-1)
    clip = float(norms.median())  # records on both sides of the clip
    expected = -(prefactors * torch.clamp(clip / norms, max=1.0))[:, None] * logs
    got = torch_steps.SphereSteps.gradient(point, rows, prefactors, _tensor(clip))
    assert (norms > clip).any() and (norms < clip).any()  # both sides of the clip
    np.testing.assert_allclose(got.numpy(), expected.sum(0).numpy(), atol=ATOL)


@pytest.mark.parametrize("size", [1e-9, 0.3, 2.5])  # the Taylor branch and the closed form
def test_the_sphere_step_is_geomstats_exponential_map(sphere_data, size):
    space, point, _, rng = sphere_data
    vector = space.to_tangent(_tensor(rng.standard_normal(7)), point)
    vector = vector / torch.linalg.vector_norm(vector)
    got = torch_steps.SphereSteps.exp_step(point, vector, size)
    np.testing.assert_allclose(got.numpy(), space.metric.exp(size * vector, point).numpy(),
                               atol=ATOL)


def test_the_sphere_noise_is_an_isometric_map_of_the_normals_into_the_tangent_space(
        sphere_data):
    _, point, _, rng = sphere_data
    normals = _tensor(rng.standard_normal(6))
    draw, finite = torch_steps.SphereSteps.noise(point, normals, 0.3)
    assert bool(finite)
    assert abs(float(torch.dot(draw, point))) < ATOL
    assert float(torch.linalg.vector_norm(draw)) == pytest.approx(
        0.3 * float(torch.linalg.vector_norm(normals)), rel=1e-12)


@pytest.fixture
def spd_data():
    rng = np.random.default_rng(shifted(1))
    space = SPDMatrices(3)
    factor = np.eye(3) + 0.3 * rng.standard_normal((3, 3))
    point = factor @ factor.T
    records = []
    for _ in range(6):
        noise = 0.7 * rng.standard_normal((3, 3))
        records.append(factor @ _sym_exp(noise + noise.T) @ factor.T)
    steps = torch_steps.SPDSteps(space, (np.arange(9), np.ones(9)), None)
    return space, _tensor(point), _tensor(np.array(records)), steps, rng


def _sym_exp(matrix):
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.exp(values)) @ vectors.T


def test_the_spd_gradient_is_the_clipped_sum_of_minus_the_logs(spd_data):
    space, point, records, steps, rng = spd_data
    prefactors = _tensor(rng.uniform(0.5, 1.5, len(records)))
    logs = space.metric.log(records, point)
    norms = space.metric.norm(logs, point)
    clip = float(norms.median())
    expected = -(prefactors * torch.clamp(clip / norms, max=1.0))[:, None, None] * logs
    state = steps.state(point)
    got, finite = steps.gradient(state, records, prefactors, _tensor(clip), _tensor(1.0))
    assert bool(finite) and (norms > clip).any() and (norms < clip).any()
    factor = state[1]  # the gradient in the whitened coordinates F^-1 G F^-T
    np.testing.assert_allclose((factor @ got @ factor.T).numpy(), expected.sum(0).numpy(),
                               atol=1e-9)


def test_the_spd_map_is_geomstats_exponential_map_and_keeps_its_factors(spd_data):
    space, point, _, steps, rng = spd_data
    tangent = rng.standard_normal((3, 3))
    tangent = _tensor(0.4 * (tangent + tangent.T))
    state = (*steps.state(point)[:3], _tensor(1.0))  # a known condition bound
    whitened = state[2] @ tangent @ state[2].T
    (moved, factor, inverse, _), stop = steps.whitened_map(state, whitened, None, False)
    assert not bool(stop)
    np.testing.assert_allclose(moved.numpy(), space.metric.exp(tangent, point).numpy(),
                               atol=1e-9)
    np.testing.assert_allclose((factor @ factor.T).numpy(), moved.numpy(), atol=1e-9)
    np.testing.assert_allclose((factor @ inverse).numpy(), np.eye(3), atol=1e-9)


def test_the_spd_noise_is_the_samplers_draw_whitened_and_refused_off_the_space(spd_data):
    _, point, _, steps, rng = spd_data
    normals = rng.standard_normal(9)
    _, factor, inverse, _ = steps.state(point)
    draw, drawn = steps.noise(point, inverse, _tensor(normals), 0.5)
    assert bool(drawn)
    np.testing.assert_allclose(draw.numpy(), draw.T.numpy(), atol=0)
    lower = np.linalg.cholesky(point.numpy())  # the draw L A L^T, A the normals (gather)
    expected = lower @ normals.reshape(3, 3) @ lower.T
    np.testing.assert_allclose((factor @ draw @ factor.T).numpy(),
                               0.25 * (expected + expected.T), atol=1e-12)
    _, drawn = steps.noise(-point, inverse, _tensor(normals), 0.5)  # no Cholesky factor
    assert not bool(drawn)


def test_a_spd_step_stops_exactly_where_stops_first_says_it_surely_does(spd_data):
    """``stops_first``: the bound on the condition number above the limit (or NaN, or
    the start's infinity); a step from there stops whatever its direction, a step from
    the limit itself stops only where the direction raises the bound."""
    _, point, records, steps, rng = spd_data
    limit = torch_steps.SPD_CONDITION_LIMIT
    settings = _tensor([1.0, 1.0, 0.5, math.inf])
    factors = steps.state(point)[:3]
    for bound, sure in ((math.inf, True), (math.nan, True), (limit * (1 + 1e-15), True),
                        (limit, False), (1.0, False)):
        state = (*factors, _tensor(bound))
        assert steps.stops_first(state) == sure
        for eta in (1e-300, 0.5):
            _, _, stop = steps.step(state, records, _tensor(np.ones(len(records))),
                                    _tensor(rng.standard_normal(9)), _tensor(eta),
                                    settings)
            assert bool(stop) == (sure or (bound == limit and eta > 1e-300))
