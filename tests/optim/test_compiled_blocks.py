"""The compiled blocks of steps (``optim.compiled_blocks``) give the Python loop's run."""

import sys

import numpy as np
import pytest
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.scalar_product_metric import ScalarProductMetric
from geomstats.geometry.spd_matrices import SPDLogEuclideanMetric, SPDMatrices

from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.distributions.registry import unwrap_metric
from geomstats_dp.learning import PrivateFrechetMean
from geomstats_dp.optim import (
    OUTPUTS,
    FullBatch,
    MiniBatch,
    SquaredDistanceLoss,
    VarianceReduced,
    compiled_blocks,
    minimize,
)
from tests.conftest import shifted

from .data import assert_same_run, cloud
from .data import run_both as run_both_routes
from .spies import CountingLoss, RecordingGenerator, RecordingNoise

pytest.importorskip("numba")
pytestmark = pytest.mark.backend_independent

STRATEGIES = {
    "rgd": FullBatch(1.0, 0.05),
    "rsgd": MiniBatch(8, 1.0, 0.05),  # batches by rejection (DistinctBatches)
    "rsgd_choice": MiniBatch(40, 1.0, 0.05),  # b (b - 1) > 2n: one rng.choice a step
    "rsgd_poisson": MiniBatch(8, 1.0, 0.05, sampling="poisson"),
}
N_STEPS = 150  # several blocks: MAX_BLOCK_STEPS = 64


def spd2(scale=1.0, size=2):
    space = SPDMatrices(size)
    if scale != 1.0:
        space.equip_with_metric(ScalarProductMetric(space, scale))
    return space


SPACES = {  # one space per kernel
    "spd2": spd2,
    "spd": lambda: spd2(size=3),
    "sphere": lambda: Hypersphere(20),
}


def records(space, n_samples=200, seed=0):
    """Points around a centre at distance 1 from the identity (the start)."""
    return np.asarray(cloud(space, n_samples, radius=1.5, seed=seed, offset=1.0))


def run_both(monkeypatch, space, data, strategy, seed, **options):
    """The same minimize call through the kernel and through the Python loop."""
    return run_both_routes(monkeypatch, space, data, strategy, seed,
                           options.pop("n_iter", N_STEPS), **options)


_LOADED = {}  # every kernel, loaded once for this module's tests


@pytest.fixture
def kernel_calls(monkeypatch):
    """Counts the steps run by the compiled kernels, one entry per call (proof that a
    run took the route). The kernels are loaded (runs of any length take the route) for
    the test only: the process's own ones are restored after it, so that later tests
    see the routes they see alone."""
    _LOADED.update({**compiled_blocks._KERNELS, **_LOADED})
    monkeypatch.setattr(compiled_blocks, "_KERNELS", _LOADED)
    kernels, calls = {kind: compiled_blocks.compiled_kernel(kind)
                      for kind in compiled_blocks.KINDS}, []

    def counting(kind="spd2"):
        kernel = kernels[kind]

        def counted(*args):
            calls.append(len(args[6]))
            return kernel(*args)

        return counted

    monkeypatch.setattr(compiled_blocks, "compiled_kernel", counting)
    return calls


def compiled_strategies(kind):
    """The strategies whose runs take ``kind``'s kernel (SPD(n), n >= 3: DP-RSGD only)."""
    return [name for name in sorted(STRATEGIES) if kind != "spd" or name != "rgd"]


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize(("kind", "weighted", "name"), [
    (kind, weighted, name)
    for kind, weighted in (("spd2", False), ("spd2", True), ("spd", False), ("sphere", True))
    for name in compiled_strategies(kind)])
def test_kernel_gives_the_python_loops_run(monkeypatch, kernel_calls, kind, name, output,
                                           weighted):
    space = SPACES[kind]()
    data = records(space)
    weights = np.random.default_rng(1).uniform(0.2, 1.0, len(data)) if weighted else None
    for seed in (shifted(2), shifted(3)):
        compiled, python = run_both(monkeypatch, space, data, STRATEGIES[name], seed,
                                    output=output, sample_weight=weights)
        assert_same_run(compiled, python)
    assert sum(kernel_calls) == 2 * N_STEPS and len(kernel_calls) >= 2 * 3  # blocks


@pytest.mark.parametrize("space", [spd2(scale=4.0), spd2(scale=4.0, size=4),
                                   Hypersphere(5)], ids=["spd2", "spd4", "sphere"])
def test_scaled_metric_bound_and_iterates(monkeypatch, kernel_calls, space):
    """ScalarProductMetric (norms sqrt(scale) times, noise 1/sqrt(scale)), the
    projection of ``direction_bound`` (active: B below the clipped gradient's norm) and
    the kept iterates."""
    data = records(space)
    for name in ("rgd", "rsgd_poisson"):
        compiled, python = run_both(
            monkeypatch, space, data, STRATEGIES[name], shifted(4),
            output="weighted_average", direction_bound=0.3, keep_iterates=True)
        assert_same_run(compiled, python)
    assert kernel_calls


@pytest.mark.parametrize("kind", sorted(SPACES))
def test_noiseless_run_draws_nothing(monkeypatch, kernel_calls, kind):
    space = SPACES[kind]()
    strategy = MiniBatch(8, 1.0, 0.0) if kind == "spd" else FullBatch(1.0, 0.0)
    compiled, python = run_both(monkeypatch, space, records(space), strategy, 0,
                                output="average", n_iter=20)
    assert_same_run(compiled, python)
    assert compiled.n_noise_draws == 0 and kernel_calls == [20]


def test_one_compiled_kernel_serves_every_run(monkeypatch, kernel_calls):
    """Integer settings and read-only data are converted: no second compilation."""
    space = spd2()
    data = records(space, 30)
    data.flags.writeable = False
    compiled, python = run_both(monkeypatch, space, data, MiniBatch(5, 1, 0.1), 6,
                                n_iter=10, direction_bound=1)
    assert_same_run(compiled, python)
    assert len(compiled_blocks._KERNELS["spd2"].signatures) == 1 and kernel_calls == [10]


@pytest.mark.parametrize("size", [2, 3])
def test_records_of_non_finite_norm_add_nothing(monkeypatch, kernel_calls, size):
    """A record that is not positive definite (passed with data_checked=True) has a
    NaN or infinite log norm: clipped to zero in both routes, counted as evaluated."""
    space = spd2(size=size)
    data = records(space, 30)
    data[3] = np.eye(size) + 2 * np.eye(size)[::-1]  # an eigenvalue -1: log NaN
    data[7] = 0.0  # whitened exactly 0: log 0 = -inf
    for name in ("rgd", "rsgd"):
        with np.errstate(all="ignore"):  # the Python loop's logs warn
            compiled, python = run_both(monkeypatch, space, data, STRATEGIES[name], 5,
                                        output="last", n_iter=40)
        assert_same_run(compiled, python)
        assert np.all(np.isfinite(compiled.point))
    assert kernel_calls


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize(("diagonal", "error"), [
    (np.exp(2.0), ValueError),  # the next point overflows: not finite
    (np.exp(-2.0), np.linalg.LinAlgError),  # the next point underflows to 0: no Cholesky
])
def test_a_point_the_sampler_rejects_raises_its_error(monkeypatch, kernel_calls, diagonal,
                                                      error, size):
    """Step 1 from I along -Log_I(X) = -log(diagonal) I (unclipped) with a step of 400
    leaves the representable cone; the sampler rejects the next point, in both routes."""
    space = spd2(size=size)
    data = np.tile(diagonal * np.eye(size), (5, 1, 1))
    strategy = FullBatch(10.0, 1e-3) if size == 2 else MiniBatch(5, 10.0, 1e-3)
    messages = []
    for enabled in (True, False):
        monkeypatch.setattr(compiled_blocks, "ENABLED", enabled)
        with pytest.raises(error) as raised, np.errstate(all="ignore"):
            minimize(SquaredDistanceLoss(space), data, strategy, 3, 400.0,
                     random_state=0)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
    assert kernel_calls == [3]


@pytest.mark.parametrize("kind", sorted(SPACES))
def test_private_frechet_mean_takes_the_kernel(monkeypatch, kernel_calls, kind):
    """The estimator's run (its TangentGaussian, no callback unless verbose) is compiled,
    with the Python loop's release."""
    space = SPACES[kind]()
    data = records(space, 300)
    estimates = []
    for enabled in (True, False):
        monkeypatch.setattr(compiled_blocks, "ENABLED", enabled)
        estimator = PrivateFrechetMean(space, epsilon=1.0, delta=1e-5, method="rsgd",
                                       clip_norm=2.0, random_state=7).fit(data)
        estimates.append(estimator.estimate_)
    np.testing.assert_allclose(estimates[0], estimates[1], rtol=1e-9, atol=1e-12)
    assert sum(kernel_calls) == estimator.n_iter_


@pytest.mark.parametrize("kind", sorted(SPACES))
def test_neighbouring_datasets_draw_identically_through_the_kernel(kernel_calls, kind):
    """Replacing one record (on SPD by one of non-finite norm, on the sphere by its
    antipode) changes neither the draws (a SecureGenerator that records them serves the
    run unchanged) nor the counts."""
    space = SPACES[kind]()
    data = records(space, 40)
    neighbour = data.copy()
    size = data.shape[-1]
    neighbour[5] = -data[5] if kind == "sphere" else np.eye(size) + 2 * np.eye(size)[::-1]
    runs = []
    for values in (data, neighbour):
        for strategy in (STRATEGIES["rgd"], STRATEGIES["rsgd"], STRATEGIES["rsgd_poisson"]):
            rng = RecordingGenerator(11)
            result = minimize(SquaredDistanceLoss(space), values, strategy, 70, 0.5,
                              random_state=rng, data_checked=True)
            runs.append((rng.calls, result.n_gradient_evaluations, result.n_noise_draws,
                         result.point))
    for first, second in zip(runs[:3], runs[3:]):
        assert first[0] == second[0] and len(first[0]) > 0
        assert first[1:3] == second[1:3]
        assert not np.allclose(first[3], second[3])  # the data did change the run
    compiled = 2 if kind == "spd" else 3  # SPD(n), n >= 3: DP-RGD runs the loop
    assert sum(kernel_calls) == 2 * compiled * 70


def noise_coordinates(space, result, eta, scale):
    """Coordinates of the steps -Log_w(w') / eta in an orthonormal basis at w, times
    sqrt(scale): iid N(0, sigma^2) if each step is the noise alone. On SPD(n)
    (M_rr, sqrt(2) M_rs) of M = L^-1 (-Log_w(w')/eta) L^-T, L the Cholesky factor of w;
    on the sphere the coordinates at the pole of the step transported back there (an
    isometry, ``distributions.sphere``)."""
    starts, ends = result.iterates[:-1], result.iterates[1:]
    steps = -np.asarray(space.metric.log(ends, starts)) / eta
    if isinstance(space, Hypersphere):
        sampler = TangentGaussian(space).sampler
        return sampler.transport_back(starts, steps[None])[0, :, 1:]
    inverses = np.linalg.inv(np.linalg.cholesky(starts))
    whitened = inverses @ steps @ np.swapaxes(inverses, -1, -2)
    rows, columns = np.tril_indices(whitened.shape[-1])
    factors = np.where(rows == columns, 1.0, np.sqrt(2))
    return whitened[:, rows, columns] * factors * np.sqrt(scale)


@pytest.mark.parametrize("space", [spd2(), spd2(4.0), spd2(4.0, size=3), Hypersphere(4)],
                         ids=["spd2", "spd2_scaled", "spd3_scaled", "sphere"])
def test_noise_drawn_in_the_kernel_has_the_calibrated_sigma(kernel_calls, space):
    """With C = 1e-12 a step moves by the noise alone (up to 1e-12): its coordinates in
    an orthonormal basis at the point have mean 0 and covariance sigma^2 I."""
    _, scale = unwrap_metric(space.metric)
    sigma, eta, n_steps = 0.4, 0.05, 3000
    result = minimize(SquaredDistanceLoss(space), records(space, 50),
                      MiniBatch(5, 1e-12, sigma), n_steps, eta,
                      random_state=shifted(8), keep_iterates=True, data_checked=True)
    coordinates = noise_coordinates(space, result, eta, scale)
    dim = int(space.dim)
    assert coordinates.shape == (n_steps, dim)
    z_score = 5.0
    mean_error = z_score * sigma / np.sqrt(n_steps)
    np.testing.assert_allclose(coordinates.mean(axis=0), 0.0, atol=mean_error)
    covariance = coordinates.T @ coordinates / n_steps
    # variance of a product of two independent N(0, s^2): s^4; of a square: 2 s^4
    tolerance = z_score * sigma**2 * np.sqrt(np.where(np.eye(dim) == 1, 2.0, 1.0) / n_steps)
    assert np.all(np.abs(covariance - sigma**2 * np.eye(dim)) < tolerance)
    assert result.n_noise_draws == n_steps and sum(kernel_calls) == n_steps


def qualifying_call(**changes):
    """Arguments of ``compiled_block_runner`` for a run that takes the route, changed."""
    space = spd2()
    arguments = {
        "loss": SquaredDistanceLoss(space), "strategy": STRATEGIES["rsgd"],
        "data": records(space, 20), "noise_sampler": TangentGaussian(space, validate=False),
        "n_steps": compiled_blocks.MIN_STEPS_TO_LOAD,
    }
    return {**arguments, **changes}


def test_the_route_is_taken_where_it_applies():
    space = spd2(scale=2.0)
    for strategy in STRATEGIES.values():
        assert compiled_blocks.compiled_block_runner(**qualifying_call(strategy=strategy))
    scaled = qualifying_call(loss=SquaredDistanceLoss(space), noise_sampler=None)
    assert compiled_blocks.compiled_block_runner(**scaled).scale == 2.0
    for kind, make in SPACES.items():
        other = make()
        runner = compiled_blocks.compiled_block_runner(**qualifying_call(
            loss=SquaredDistanceLoss(other), data=records(other, 5),
            noise_sampler=TangentGaussian(other, validate=False)))
        assert runner.kind == kind


@pytest.mark.parametrize("case", [
    "loss_subclass", "log_euclidean", "variance_reduced", "retraction", "callback",
    "validating_sampler", "gram_schmidt_sampler", "other_sampler", "scale_mismatch",
    "not_numpy_data", "shape_mismatch", "scaled_sphere", "hyperboloid", "spd3_full_batch",
])
def test_the_route_falls_back_where_it_does_not_apply(case):
    spd3, log_euclidean = SPDMatrices(3), SPDMatrices(2)
    log_euclidean.equip_with_metric(SPDLogEuclideanMetric)
    sphere, hyperboloid = Hypersphere(3), Hyperboloid(3)
    sphere.equip_with_metric(ScalarProductMetric(sphere, 2.0))
    changes = {
        "loss_subclass": {"loss": CountingLoss(spd2())},
        "shape_mismatch": {"loss": SquaredDistanceLoss(spd3), "data": records(spd3, 5)},
        "spd3_full_batch": {"loss": SquaredDistanceLoss(spd3), "data": records(spd3, 5),
                            "noise_sampler": TangentGaussian(spd3, validate=False),
                            "strategy": STRATEGIES["rgd"]},
        "scaled_sphere": {"loss": SquaredDistanceLoss(sphere), "data": records(sphere, 5),
                          "noise_sampler": None},
        "hyperboloid": {"loss": SquaredDistanceLoss(hyperboloid), "noise_sampler": None,
                        "data": records(hyperboloid, 5)},
        "log_euclidean": {"loss": SquaredDistanceLoss(log_euclidean)},
        "variance_reduced": {"strategy": VarianceReduced(2, 1.0, 1.0, 0.1, 0.1)},
        "retraction": {"retraction": lambda tangent_vec, base_point: base_point},
        "callback": {"callback": lambda step, point: None},
        "validating_sampler": {"noise_sampler": TangentGaussian(spd2())},
        "gram_schmidt_sampler": {
            "noise_sampler": TangentGaussian(spd2(), "gram_schmidt", validate=False)},
        "other_sampler": {"noise_sampler": RecordingNoise(spd2())},
        "scale_mismatch": {"noise_sampler": TangentGaussian(spd2(2.0), validate=False)},
        "not_numpy_data": {"data": records(spd2(), 5).tolist()},
    }[case]
    assert compiled_blocks.compiled_block_runner(**qualifying_call(**changes)) is None


def test_a_short_run_loads_no_kernel(monkeypatch):
    """Before the kernel is loaded only a run of MIN_STEPS_TO_LOAD steps takes the route."""
    short = qualifying_call(n_steps=compiled_blocks.MIN_STEPS_TO_LOAD - 1)
    compiled_blocks.compiled_kernel()
    assert compiled_blocks.compiled_block_runner(**short) is not None
    monkeypatch.setattr(compiled_blocks, "_KERNELS", {})  # not loaded
    assert compiled_blocks.compiled_block_runner(**short) is None
    assert compiled_blocks.compiled_block_runner(**qualifying_call()) is not None


def test_the_route_is_off_without_numba_on_other_backends_or_when_disabled(monkeypatch):
    assert compiled_blocks.compiled_block_runner(**qualifying_call()) is not None
    with monkeypatch.context() as patched:
        patched.setattr(compiled_blocks, "_KERNELS", {})  # not loaded
        patched.setitem(sys.modules, "numba", None)  # import numba raises ImportError
        assert not compiled_blocks.numba_importable()
        assert compiled_blocks.compiled_block_runner(**qualifying_call()) is None
    with monkeypatch.context() as patched:
        patched.setattr(compiled_blocks, "backend_name", lambda: "pytorch")
        assert compiled_blocks.compiled_block_runner(**qualifying_call()) is None
    with monkeypatch.context() as patched:
        patched.setattr(compiled_blocks, "ENABLED", False)
        assert compiled_blocks.compiled_block_runner(**qualifying_call()) is None


def test_a_dask_array_is_not_compiled():
    dask_array = pytest.importorskip("dask.array")
    data = dask_array.from_array(records(spd2(), 10), chunks=5)
    assert compiled_blocks.compiled_block_runner(**qualifying_call(data=data)) is None
