"""The compiled torch blocks of DP-RSGD steps (``optim.compiled_torch``) give the Python
loop's run on the pytorch backend; the route is decided from public quantities.

Each block is compiled once per test process, with blocks of ``BLOCKS`` steps (a
compilation's cost grows with the steps unrolled): the tests that compile are slow."""

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from geomstats_dp._backend import to_backend
from geomstats_dp.distributions import TangentGaussian
from geomstats_dp.optim import (
    FullBatch,
    MiniBatch,
    SquaredDistanceLoss,
    compiled_blocks,
    minimize,
)
from geomstats_dp.optim.onto_space import SPD_CONDITION_LIMIT
from geomstats_dp.privacy.stages import observe_stages
from tests.conftest import BACKEND, shifted

from .data import assert_same_run, cloud
from .data import run_both as run_both_routes

if BACKEND != "pytorch":  # before importing torch
    pytest.skip("the pytorch backend's route", allow_module_level=True)
torch = pytest.importorskip("torch")
compiled_torch = pytest.importorskip("geomstats_dp.optim.compiled_torch")

BLOCKS = 4  # steps a block: a run of N_STEPS has full blocks, a partial one, stops
N_STEPS = 30
SPACES = {"sphere": lambda: Hypersphere(12), "spd": lambda: SPDMatrices(3)}
BATCH = {"sphere": 1, "spd": 5}


class _CountedBlocks(dict):
    """The compiled blocks, each call from a SPD state whose bound on the condition
    number exceeds the limit (its first step surely stops) counted in
    ``calls["sure_stops"]``."""

    def __init__(self, blocks, calls):
        super().__init__(blocks)
        self.calls = calls

    def __getitem__(self, key):
        steps, block = super().__getitem__(key)

        def counted(state, *args):
            self.calls["sure_stops"] += len(state) == 4 and not bool(
                state[3] <= SPD_CONDITION_LIMIT)
            return block(state, *args)

        return steps, counted


@pytest.fixture
def blocks(monkeypatch):
    """Small blocks, any run long enough to compile; the calls to the compiled blocks
    and to the eager steps counted."""
    monkeypatch.setattr(compiled_torch, "BLOCK_STEPS", BLOCKS)
    monkeypatch.setattr(compiled_torch, "MIN_STEPS_TO_COMPILE", 1)
    calls = {"runs": 0, "eager": 0, "sure_stops": 0}
    compiled = compiled_torch._BLOCKS
    monkeypatch.setattr(compiled_torch, "_BLOCKS", _CountedBlocks(compiled, calls))
    run, eager = compiled_torch.TorchBlocks.__call__, compiled_torch.TorchBlocks._eager_step

    def counted_run(*args, **kwargs):
        calls["runs"] += 1
        return run(*args, **kwargs)

    def counted_eager(*args, **kwargs):
        calls["eager"] += 1
        return eager(*args, **kwargs)

    monkeypatch.setattr(compiled_torch.TorchBlocks, "__call__", counted_run)
    monkeypatch.setattr(compiled_torch.TorchBlocks, "_eager_step", counted_eager)
    yield calls
    compiled.update(dict(compiled_torch._BLOCKS))  # compiled once per process


def records(space, n_samples=60, seed=0):
    """Points around a centre at distance 1 from the start, backend tensors."""
    return to_backend(np.asarray(cloud(space, n_samples, radius=1.5, seed=seed, offset=1.0)))


def run_both(monkeypatch, space, data, strategy, seed, **options):
    """The same minimize call through the compiled blocks and through the loop; the
    compiled route's release a tensor."""
    results = run_both_routes(monkeypatch, space, data, strategy, seed,
                              options.pop("n_iter", N_STEPS), **options)
    assert isinstance(results[0].point, torch.Tensor)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(SPACES))
def test_blocks_give_the_python_loops_run(monkeypatch, blocks, kind):
    """Outputs "last" and "random", kept iterates, the step cap (active) and weights;
    on SPD(n) the steps whose spectrum the loop floors run eagerly (the first step
    always: the start's condition number is unknown), and no block is called from a
    state whose first step surely stops."""
    space = SPACES[kind]()
    data = records(space)
    weights = np.random.default_rng(1).uniform(0.2, 1.0, data.shape[0])
    strategy = MiniBatch(BATCH[kind], 1.0, 0.3)
    for seed, options in ((shifted(2), {"output": "last", "keep_iterates": True}),
                          (shifted(3), {"output": "random", "sample_weight": weights,
                                        "direction_bound": 0.2})):
        compiled, python = run_both(monkeypatch, space, data, strategy, seed, **options)
        assert_same_run(compiled, python)
    assert blocks["runs"] == 2 and (blocks["eager"] >= 2) == (kind == "spd")
    assert blocks["sure_stops"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(SPACES))
def test_running_averages_are_the_loops(monkeypatch, blocks, kind):
    space = SPACES[kind]()
    data = records(space)
    for output in ("average", "weighted_average"):
        compiled, python = run_both(monkeypatch, space, data,
                                    MiniBatch(BATCH[kind], 1.0, 0.3), shifted(4),
                                    output=output)
        assert_same_run(compiled, python)
    assert blocks["runs"] == 2


@pytest.mark.slow
def test_records_of_non_finite_norm_add_nothing_and_no_noise(monkeypatch, blocks):
    """A record that is not positive definite (data_checked=True) has a NaN or
    infinite log norm: clipped to zero on both routes, counted as evaluated; without
    noise nothing is drawn."""
    space = SPACES["spd"]()
    data = records(space, 20)
    data[3] = torch.eye(3) + 2 * torch.eye(3).flip(0)  # an eigenvalue -1: log NaN
    data[7] = 0.0  # whitened exactly 0: log 0 = -inf
    for sigma in (0.3, 0.0):
        compiled, python = run_both(monkeypatch, space, data, MiniBatch(5, 1.0, sigma), 5)
        assert_same_run(compiled, python)
        assert torch.isfinite(compiled.point).all()
        assert compiled.n_noise_draws == (N_STEPS if sigma else 0)
    assert blocks["runs"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("diagonal", [np.exp(2.0), np.exp(-2.0)])
def test_a_point_the_loop_rejects_raises_the_loops_error(monkeypatch, blocks, diagonal):
    """Step 1 from I along -Log_I(X) = -log(diagonal) I with a step of 400 leaves the
    representable cone (the point overflows, or underflows to 0): both routes raise the
    same error (on pytorch torch's, from the spectrum's floor or the sampler's Cholesky
    factor), from the loop's own code."""
    space = SPACES["spd"]()
    data = to_backend(np.tile(diagonal * np.eye(3), (5, 1, 1)))
    raised = []
    for enabled in (True, False):
        monkeypatch.setattr(compiled_blocks, "ENABLED", enabled)
        with pytest.raises(Exception) as caught, np.errstate(all="ignore"):
            minimize(SquaredDistanceLoss(space), data, MiniBatch(5, 10.0, 1e-3), 3, 400.0,
                     random_state=0)
        raised.append((type(caught.value), str(caught.value)))
    assert raised[0] == raised[1]
    assert blocks["runs"] == 1


def qualifying_call(**changes):
    """Arguments of ``compiled_block_runner`` for a run that takes the torch route."""
    space = SPACES["sphere"]()
    arguments = {
        "loss": SquaredDistanceLoss(space), "strategy": MiniBatch(1, 1.0, 0.1),
        "data": records(space, 20), "noise_sampler": TangentGaussian(space, validate=False),
        "n_steps": compiled_torch.MIN_STEPS_TO_COMPILE,
    }
    return {**arguments, **changes}


@pytest.fixture
def nothing_compiles(monkeypatch):
    """The decision without compiling: a block counts as compiled when asked."""
    monkeypatch.setattr(compiled_torch, "_BLOCKS", {})
    monkeypatch.setattr(compiled_torch, "_FAILURE", [])

    def pretend(key, space, data):
        compiled_torch._BLOCKS[key] = None
        return True

    monkeypatch.setattr(compiled_torch, "_compiles", pretend)


def test_the_route_is_taken_where_it_applies(nothing_compiles):
    runner = compiled_blocks.compiled_block_runner(**qualifying_call())
    assert isinstance(runner, compiled_torch.TorchBlocks) and runner.kind == "sphere"
    spd = SPACES["spd"]()
    runner = compiled_blocks.compiled_block_runner(**qualifying_call(
        loss=SquaredDistanceLoss(spd), data=records(spd, 10), strategy=MiniBatch(5, 1, 0.1),
        noise_sampler=None, output="average"))
    assert runner.kind == "spd" and runner.key[4]
    # compiled once: a short run of the same shapes takes it, another batch size does not
    assert compiled_blocks.compiled_block_runner(**qualifying_call(n_steps=10)) is not None
    assert compiled_blocks.compiled_block_runner(**qualifying_call(
        n_steps=10, strategy=MiniBatch(2, 1.0, 0.1))) is None


@pytest.mark.parametrize("case", ["poisson", "full_batch", "numpy_data", "float32",
                                  "short_run", "disabled", "observed", "spd2"])
def test_the_route_falls_back_where_it_does_not_apply(monkeypatch, nothing_compiles, case):
    sphere, spd2 = SPACES["sphere"](), SPDMatrices(2)
    changes = {
        "poisson": {"strategy": MiniBatch(2, 1.0, 0.1, sampling="poisson")},
        "full_batch": {"strategy": FullBatch(1.0, 0.1)},
        "numpy_data": {"data": np.asarray(records(sphere, 20))},
        "float32": {"data": records(sphere, 20).float()},
        "short_run": {"n_steps": compiled_torch.MIN_STEPS_TO_COMPILE - 1},
        "disabled": {}, "observed": {},
        "spd2": {"loss": SquaredDistanceLoss(spd2), "data": records(spd2, 10),
                 "noise_sampler": None},
    }[case]
    if case == "disabled":
        monkeypatch.setattr(compiled_blocks, "ENABLED", False)
    if case == "observed":
        with observe_stages(lambda stage: stage.release()):
            assert compiled_blocks.compiled_block_runner(**qualifying_call()) is None
        return
    assert compiled_blocks.compiled_block_runner(**qualifying_call(**changes)) is None


def test_a_failed_compilation_warns_once_and_the_loop_runs(monkeypatch):
    """torch.compile failing (no C++ compiler, ...): a RuntimeWarning, then the loop's
    release for this run and the next, without a second attempt."""
    monkeypatch.setattr(compiled_torch, "_BLOCKS", {})
    monkeypatch.setattr(compiled_torch, "_FAILURE", [])
    monkeypatch.setattr(compiled_torch, "MIN_STEPS_TO_COMPILE", 1)
    attempts = []

    def failing(function, **options):
        def call(*args):
            attempts.append(1)
            raise RuntimeError("no C++ compiler")
        return call

    monkeypatch.setattr(compiled_torch.torch, "compile", failing)
    space = SPACES["sphere"]()
    data = records(space)
    with pytest.warns(RuntimeWarning, match="torch.compile failed"):
        first, python = run_both(monkeypatch, space, data, MiniBatch(1, 1.0, 0.3), 1)
    np.testing.assert_array_equal(first.point, python.point)
    second, _ = run_both(monkeypatch, space, data, MiniBatch(1, 1.0, 0.3), 1)
    np.testing.assert_array_equal(second.point, python.point)
    assert attempts == [1]


def test_each_block_is_its_own_function_for_the_compiler():
    """Dynamo's recompilation limit counts per code object: blocks of other shapes or
    spaces must not share one (past the limit, a fullgraph compilation fails)."""
    steps = compiled_torch.SphereSteps(SPACES["sphere"]())
    first, second = (compiled_torch._block_function(steps, False) for _ in range(2))
    assert first.__code__ is not second.__code__
